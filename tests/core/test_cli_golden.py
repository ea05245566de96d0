"""Golden outputs: every read-only CLI command, on every DSH fixture and on generated logs, byte for byte.

Each case runs ``core.cli.main`` in-process and compares exit code, stdout and stderr with
``tests/golden/cli/<log>/<case>.txt``. The goldens pin today's behaviour so that performance work (streaming
commands, lazy chunk rows, the decoder's hot path) cannot change a single byte by accident.

When a change is MEANT to alter output (new diagnostics, relabelled values, a new command), regenerate the
goldens and review the diff like code::

    TAPEDECK_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/core/test_cli_golden.py
    git diff --stat tests/golden/cli

Update mode rewrites every golden the run touches (add ``-k`` to limit it) and still fails nothing; files of
cases that no longer exist must be deleted by hand. Generated logs come from ``bench/gen_session.py`` with a
fixed seed, size and profile, so they are the same bytes on every run; their temporary directory shows up as
``<tmp>`` in the goldens, and ``status``'s workspace as ``<workspace>``.
"""

from __future__ import annotations

import os
import random
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.gen_session import generate
from bench.mutation import mutate_lines, random_mutation
from core.cli import main
from core.log.layout import log_path
from core.log.reader import read_header
from tui.cli import main as console_main

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "dsh"
GOLDEN = ROOT / "tests" / "golden" / "cli"
UPDATE = os.environ.get("TAPEDECK_UPDATE_GOLDEN") == "1"

# (name, generator profile, seed, target bytes, zstd): small logs with packed rows, many turns, long results.
GENERATED = [
    ("gen-mixed", "mixed", 4, 60_000, False),
    ("gen-short-turns", "short-turns", 3, 120_000, False),
    ("gen-mixed-zstd", "mixed", 4, 60_000, True),
]
DAMAGED = "gen-damaged"  # gen-short-turns with a corrupt line, a non-object line and a torn final line

# (case, argv after the command name with "{log}" for the log path). Every read-only command of the CLI.
CASES: list[tuple[str, list[str]]] = [
    ("inspect", ["inspect", "{log}"]),
    ("inspect-json", ["inspect", "{log}", "--json"]),
    ("surface", ["surface", "{log}"]),
    ("surface-json", ["surface", "{log}", "--json"]),
    ("events", ["events", "{log}"]),
    ("events-json", ["events", "{log}", "--json"]),
    ("events-tool-result", ["events", "{log}", "--type", "tool/result"]),
    ("events-tool-result-json", ["events", "{log}", "--type", "tool/result", "--json"]),
    ("events-prefix-turn", ["events", "{log}", "--type", "tool/", "--type", "assistant*", "--turn", "1"]),
    ("events-chunk-turn-json", ["events", "{log}", "--type", "assistant/chunk", "--turn", "1", "--json"]),
    ("events-none", ["events", "{log}", "--type", "no/such-type"]),
    ("fold", ["fold", "{log}"]),
    ("fold-json", ["fold", "{log}", "--json", "--set", "fold.pinSteps=0"]),
    ("seal", ["seal", "{log}"]),
    ("seal-json", ["seal", "{log}", "--json", "--keep-recent-turns", "0"]),
    ("status", ["status", "{log}", "--workspace", "{workspace}"]),
    ("status-json", ["status", "{log}", "--workspace", "{workspace}", "--json"]),
    ("recall-turn", ["recall", "turn", "{log}", "1"]),
    ("recall-turn-full-json", ["recall", "turn", "{log}", "1", "--view", "full", "--json"]),
    ("recall-step", ["recall", "step", "{log}", "1", "1"]),
    ("recall-search", ["recall", "search", "{log}", "error file test"]),
    ("expand", ["expand", "{log}", "--turn", "1", "--step", "1"]),
    ("expand-grep", ["expand", "{log}", "--turn", "1", "--step", "1", "--grep", "def|error"]),
    ("surface-at", ["surface", "{log}", "--at", "25"]),
    ("request-all", ["request", "{log}", "--all"]),
    ("request-all-json", ["request", "{log}", "--all", "--json"]),
    ("request-step", ["request", "{log}", "--turn", "1", "--step", "2"]),
    ("request-step-json", ["request", "{log}", "--turn", "1", "--step", "1", "--json"]),
    ("request-seq", ["request", "{log}", "--seq", "30", "--full"]),
    ("diff", ["diff", "{log}", "--turn", "1", "--step", "2"]),
    ("diff-json", ["diff", "{log}", "--turn", "2", "--step", "1", "--json"]),
    ("cost", ["cost", "{log}"]),
    ("cost-json", ["cost", "{log}", "--json"]),
]
# Whole-log JSON of a generated log would be megabytes of goldens: its text form and turn 1's chunks are pinned.
# The zstd log holds the same events as gen-mixed: only the commands that read it differently are run on it.
# Every request of a generated log as JSON would be megabytes too: their text form is pinned.
ZSTD_CASES = {"inspect", "inspect-json", "surface", "events-tool-result", "events-chunk-turn-json", "fold-json",
              "seal-json", "recall-turn-full-json", "recall-search", "expand", "request-all", "cost-json"}  # fmt: skip
WHOLE_LOG_JSON = {"events-json", "request-all-json"}


def _skipped(log: str, case: str) -> bool:
    if log == "gen-mixed-zstd":
        return case not in ZSTD_CASES
    return log.startswith("gen-") and case in WHOLE_LOG_JSON

# Commands that read no log.
ROUTE_CASES: list[tuple[str, list[str]]] = [
    ("route", ["route", "fix the failing test in parser.py and rerun the suite"]),
    ("route-json", ["route", "delete the build directory and force-push to main", "--json"]),
    ("route-class", ["route", "what does this function do?", "--class", "large"]),
    ("route-bad-class", ["route", "what does this function do?", "--class", "debug"]),
]
# The console script (TUI commands included): top-level help, every command's help, usage errors.
HELP_COMMANDS = ["inspect", "surface", "events", "sessions", "fold", "status", "route", "seal", "recall",
                 "expand", "run", "repair", "control", "request", "diff", "cost", "watch", "demo"]  # fmt: skip
HELP_CASES: list[tuple[str, list[str]]] = [
    ("help", ["--help"]),
    ("no-command", []),
    ("version", ["--version"]),
    ("unknown-command", ["frobnicate"]),
    ("missing-path", ["inspect"]),
    *((f"help-{c}", [c, "--help"]) for c in HELP_COMMANDS),
    ("help-recall-search", ["recall", "search", "--help"]),
]


@pytest.fixture(autouse=True)
def _fixed_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """argparse wraps usage and help to the terminal width, and help shows the default sessions root: pin both."""
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("TAPEDECK_HOME", "/tapedeck-home")


@dataclass(frozen=True)
class Logs:
    """Where each log lives, the temporary directory to mask, and an empty workspace for ``status``."""

    paths: dict[str, Path]
    tmp: Path
    workspace: Path


def _damage(source: Path, target: Path) -> None:
    lines = source.read_bytes().split(b"\n")
    lines.insert(len(lines) // 3, b'{"type":"tool/result","data":{"turn":1,')
    lines.insert(len(lines) // 2, b"[1, 2, 3]")
    target.write_bytes(b"\n".join(lines).rstrip(b"\n")[:-7])


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Logs:
    tmp = tmp_path_factory.mktemp("golden")
    paths = {_fixture_name(p): p for p in FIXTURES.glob("*.jsonl")}
    for name, profile, seed, size, zstd in GENERATED:
        paths[name] = tmp / (f"{name}.jsonl" + (".zstd" if zstd else ""))
        generate(paths[name], size, seed=seed, profile=profile, zstd=zstd)
    paths[DAMAGED] = tmp / f"{DAMAGED}.jsonl"
    _damage(paths["gen-short-turns"], paths[DAMAGED])
    workspace = tmp / "workspace"
    workspace.mkdir()
    return Logs(paths, tmp, workspace)


def _run(
    argv: list[str], capsys: pytest.CaptureFixture[str], logs: Logs, entry: Callable[[list[str]], int] = main
) -> str:
    capsys.readouterr()
    try:
        code = entry(argv)
    except SystemExit as exc:  # argparse errors
        code = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    text = f"exit {code}\n--- stdout\n{out}--- stderr\n{err}"
    return text.replace(str(logs.workspace), "<workspace>").replace(str(logs.tmp), "<tmp>")


def _check(name: Path, actual: str) -> None:
    if UPDATE:
        name.parent.mkdir(parents=True, exist_ok=True)
        name.write_text(actual, encoding="utf-8")
        return
    assert name.is_file(), f"no golden {name.relative_to(ROOT)}; run with TAPEDECK_UPDATE_GOLDEN=1 to create it"
    expected = name.read_text(encoding="utf-8")
    assert actual == expected, f"{name.relative_to(ROOT)} differs (TAPEDECK_UPDATE_GOLDEN=1 regenerates it)"


def _fixture_name(path: Path) -> str:
    """``multi-turn`` for ``multi-turn.session.jsonl``, ``x.1`` for ``x.session.1.jsonl``."""
    stem, _, rest = path.name.partition(".session")
    return stem + rest.removesuffix(".jsonl")


def _log_names() -> Iterator[str]:
    yield from sorted(_fixture_name(p) for p in FIXTURES.glob("*.jsonl"))
    yield from (g[0] for g in GENERATED)
    yield DAMAGED


LOG_CASES = [(log, case, argv) for log in _log_names() for case, argv in CASES if not _skipped(log, case)]


@pytest.mark.parametrize(("log", "case", "argv"), LOG_CASES, ids=[f"{c[0]}/{c[1]}" for c in LOG_CASES])
def test_cli_output_matches_golden(
    log: str, case: str, argv: list[str], logs: Logs, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    path = logs.paths[log]
    shown = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    args = [a.format(log=shown, workspace=logs.workspace) for a in argv]
    _check(GOLDEN / log / f"{case}.txt", _run(args, capsys, logs))


@pytest.mark.parametrize(("case", "argv"), ROUTE_CASES, ids=[c[0] for c in ROUTE_CASES])
def test_route_output_matches_golden(
    case: str, argv: list[str], logs: Logs, capsys: pytest.CaptureFixture[str]
) -> None:
    _check(GOLDEN / "route" / f"{case}.txt", _run(argv, capsys, logs))


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_sessions_output_matches_golden(
    as_json: bool, logs: Logs, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(time, "time", lambda: 1_700_086_400.0)  # a day after the logs' last writes: fixed ages
    root = logs.tmp / "sessions"
    for i, name in enumerate(sorted(logs.paths)):
        source = logs.paths[name]
        header = read_header(source)
        if header is None or not str(source).endswith(".jsonl") or name == DAMAGED:
            continue
        target = log_path(root, header.get("cwd"), str(header.get("id")), False)
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        os.utime(target, (1_700_000_000 + i, 1_700_000_000 + i))
    argv = ["sessions", str(root), *(["--json"] if as_json else [])]
    _check(GOLDEN / "sessions" / f"{'json' if as_json else 'text'}.txt", _run(argv, capsys, logs))


@pytest.mark.parametrize(("case", "argv"), HELP_CASES, ids=[c[0] for c in HELP_CASES])
def test_help_and_usage_match_golden(
    case: str, argv: list[str], logs: Logs, capsys: pytest.CaptureFixture[str]
) -> None:
    _check(GOLDEN / "help" / f"{case}.txt", _run(argv, capsys, logs, console_main))


# ``cost`` on logs shaped like DSH's own output (``dsh-plain``: never cut, every request the last one grown), the
# shape its one-pass rebuild is tuned for: with times, without the envelope (no seq or time: the run rate reads
# the clock of none), with 8 % of its lines mutated, and cut off in the middle of a stream (a live log).
COST_SHAPES = ["dsh-plain", "dsh-plain-no-envelope", "dsh-plain-mutated", "dsh-plain-live"]
COST_CASES = [(log, case, argv) for log in COST_SHAPES for case, argv in CASES if case in ("cost", "cost-json")]


@pytest.fixture(scope="module")
def shaped(tmp_path_factory: pytest.TempPathFactory) -> Logs:
    tmp = tmp_path_factory.mktemp("shaped")
    paths = {name: tmp / f"{name}.jsonl" for name in COST_SHAPES}
    generate(paths["dsh-plain"], 600_000, seed=5, profile="dsh-plain")
    generate(paths["dsh-plain-no-envelope"], 300_000, seed=6, profile="dsh-plain", explicit_envelope=False)
    lines = paths["dsh-plain"].read_bytes().split(b"\n")
    rng = random.Random(7)
    for _ in range(len(lines) * 8 // 100):
        if (mutation := random_mutation(lines, rng)).line:
            lines = mutate_lines(lines, mutation)
    paths["dsh-plain-mutated"].write_bytes(b"\n".join(lines))
    whole = paths["dsh-plain"].read_bytes().split(b"\n")
    paths["dsh-plain-live"].write_bytes(b"\n".join(whole[: len(whole) * 6 // 10]) + b"\n")
    return Logs(paths, tmp, tmp)


@pytest.mark.parametrize(("log", "case", "argv"), COST_CASES, ids=[f"{c[0]}/{c[1]}" for c in COST_CASES])
def test_cost_on_dsh_shaped_logs_matches_golden(
    log: str, case: str, argv: list[str], shaped: Logs, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [a.format(log=str(shaped.paths[log])) for a in argv]
    _check(GOLDEN / log / f"{case}.txt", _run(args, capsys, shaped))
