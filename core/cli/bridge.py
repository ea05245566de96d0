"""``tapedeck bridge``: install the DSH bridge plugin into a DSH home, remove it, and say what is installed."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import Any

from core.bridge.files import packaged_fingerprint, packaged_version
from core.bridge.install import (
    DEFAULT_PROFILE,
    PATCH_FILE,
    BridgeInstallError,
    Change,
    install,
    packaged_plugin,
    print_patch,
    remove,
    status,
)
from core.cli import COMMANDS
from core.cli.args import add_json, path_argument
from core.cli.common import emit, guarded
from core.shared.text import quoted, quoted_path

_DONE = {
    "copied": "copied the plugin to",
    "updated": "updated the plugin in",
    "unchanged": "the plugin is current in",
    "removed": "removed the plugin from",
    "absent": "no plugin in",
}
_ROW = {
    "added": "added the tapedeck-bridge row to",
    "updated": "brought the tapedeck-bridge row up to date in",
    "unchanged": "the tapedeck-bridge row is already in",
    "removed": "took the tapedeck-bridge row out of",
    "absent": "no tapedeck-bridge row in",
}


def _home(args: argparse.Namespace) -> str:
    home = args.home or os.environ.get("DSH_HOME")
    if not home:
        raise BridgeInstallError("name the DSH home (the directory DSH_HOME points at), or set DSH_HOME")
    return str(home)


def _render_change(change: Change, verb: str) -> str:
    where = change.profile_dir
    lines = [f"{_DONE[change.plugin]} {quoted_path(where)}", f"{_ROW[change.patch]} {quoted_path(where / PATCH_FILE)}"]
    if verb == "install" and change.patch != "unchanged":
        lines.append(
            "a running DSH with this profile loads it within seconds (its patch watcher); others at start"
        )
    if change.others_ran:  # a new profile beside those DSH uses: a typo would leave every DSH without the bridge
        profile, ran = quoted_path(where.name), ", ".join(map(quoted_path, change.others_ran))  # directories' names
        lines.append(f"note: DSH has never run with profile {profile} in this home (it ran {ran}): "
                     f"only a DSH started with --profile {profile} loads the bridge")  # fmt: skip
    return "\n".join(lines)


def _install(args: argparse.Namespace) -> int:
    if args.print_patch:
        if args.home:
            raise BridgeInstallError("--print-patch writes nothing into a DSH home; leave DSH_HOME out")
        sys.stdout.write(print_patch())
        return 0
    change = install(_home(args), args.profile, force=args.force)
    emit(change.to_dict(), args.json, lambda _: _render_change(change, "install"))
    return 0


def _remove(args: argparse.Namespace) -> int:
    change = remove(_home(args), args.profile)
    emit(change.to_dict(), args.json, lambda _: _render_change(change, "remove"))
    return 0


def _render_status(report: dict[str, Any]) -> str:
    packaged = report["packaged"]
    lines = [f"packaged plugin {packaged['version']} ({packaged['fingerprint']}) at {quoted_path(packaged['path'])}"]
    if not report["profiles"]:
        home = quoted_path(report["home"])
        lines.append(f"{home}: no profile holds the bridge (`tapedeck bridge install {shlex.quote(home)}`)")
    for p in report["profiles"]:
        if p["problem"]:
            lines.append(f"profile {p['profile']}: {p['problem']}")
            continue
        than = (
            "same as packaged" if p["current"] else "newer than the packaged one" if p["newer"] else "not the packaged one"
        )
        plugin = "no plugin file" if p["plugin"] is None else f"plugin {quoted(p['plugin'])} ({p['fingerprint']}, {than})"
        row = {"managed": "row installed", "foreign": "a tapedeck-bridge row tapedeck did not add",
               "none": "no row (DSH does not load it)"}[p["row"]]  # fmt: skip
        lines.append(f"profile {p['profile']}: {plugin}; {row}")
        if p["stale"]:
            lines.append(f"  {'NEWER' if p['newer'] else 'STALE'}: {p['stale']}")
    return "\n".join(lines)


def _status(args: argparse.Namespace) -> int:
    home = _home(args)
    report = {
        "home": home,
        "packaged": {
            "version": packaged_version(),
            "fingerprint": packaged_fingerprint(),
            "path": str(packaged_plugin()),
        },
        "profiles": [s.to_dict() for s in status(home)],
    }
    emit(report, args.json, _render_status)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``bridge`` with ``install``, ``remove`` and ``status``."""
    p = subparsers.add_parser(
        "bridge",
        help=COMMANDS["bridge"].help,
        description=(
            "The bridge is a DSH plugin that lets tapedeck control sessions the real DeepSeek Harness runs: it "
            "reads the control inbox beside each session log and writes its state (bridge.json) and outcomes "
            "(control.outcomes.jsonl) beside it. install adds it to a profile of a DSH home, remove takes it out "
            "again, status says what is installed where."
        ),
    )
    sub = p.add_subparsers(dest="bridge_command", metavar="ACTION", required=True)
    inst = sub.add_parser(
        "install",
        help="copy the plugin into a DSH profile and add its row to the profile's patch file",
        description="Copy the packaged bridge plugin into profiles/NAME/ of a DSH home and add the row that loads "
        "it to that profile's cordis.patch.yml; a DSH running with the profile loads it within seconds. An older "
        "copy is upgraded in place; a copy of a newer version (a newer tapedeck installed it) is left as it is "
        "unless --force. Running it again changes nothing; a home DSH never booted is fine.",
    )
    inst.add_argument("home", metavar="DSH_HOME", nargs="?", type=path_argument, help="the DSH home (default: $DSH_HOME)")
    inst.add_argument(
        "--print-patch",
        action="store_true",
        help="print a --patch overlay that loads the packaged plugin (headless runs); writes nothing",
    )
    inst.add_argument(
        "--force",
        action="store_true",
        help="replace a copy of a newer plugin version (which a newer tapedeck installed) with the packaged one",
    )
    rem = sub.add_parser(
        "remove",
        help="take out what install added (the row, and the plugin copy)",
        description="Take out of a DSH profile exactly what install added: its row in cordis.patch.yml, the plugin "
        "copy, and the file or directories install created. A DSH running with the profile unloads the plugin; "
        "its sessions go on, read-only to tapedeck.",
    )
    rem.add_argument("home", metavar="DSH_HOME", nargs="?", type=path_argument, help="the DSH home (default: $DSH_HOME)")
    for q in (inst, rem):
        q.add_argument(
            "--profile",
            default=DEFAULT_PROFILE,
            metavar="NAME",
            help=f"the DSH profile (default {DEFAULT_PROFILE})",
        )
    st = sub.add_parser(
        "status",
        help="which profiles hold the plugin, its version against the packaged one",
        description="Say which profiles of a DSH home hold the plugin and its row, each copy's version and "
        "fingerprint against the packaged plugin's, and whether a DSH with that profile runs another plugin than "
        "the packaged one (STALE, with the command that upgrades it, or NEWER when a newer tapedeck installed it). "
        "Writes nothing.",
    )
    st.add_argument("home", metavar="DSH_HOME", nargs="?", type=path_argument, help="the DSH home (default: $DSH_HOME)")
    for q, handler in ((inst, _install), (rem, _remove), (st, _status)):
        add_json(q, "print the result as JSON")
        q.set_defaults(handler=guarded(handler))
