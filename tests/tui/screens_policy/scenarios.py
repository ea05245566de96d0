"""Sessions the policy-screen tests share, built the way a tapedeck host would log them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.control.config import load_config
from core.policies.checkpoint import plan_checkpoint
from core.policies.fold import plan_fold, plan_unfold
from core.policies.slice import plan_seal
from tests.tui.screens_policy.harness import LogBuilder

CONFIG = load_config(None)
LONG_OBJECTIVE = ("find why the parser drops the trailing token on empty input, then check each caller of parse_line "
                  "for the same slip: the tokenizer, the lexer and the REPL")  # fmt: skip


def table_text(name: str, rows: int) -> str:
    """A CSV-like tool output big enough for the data digest to fold."""
    lines = ["id,name,score,status"]
    lines += [
        f"{i},{name}-{i:03d},{(i * 37) % 101 / 100:.2f},{'ok' if i % 7 else 'stale'}" for i in range(rows)
    ]
    return "\n".join(lines)


def route(turn: int, step: int, **extra: Any) -> dict[str, Any]:
    """A ``tapedeck/route`` event as the adaptive policy logs it."""
    data = {
        "turn": turn,
        "step": step,
        "taskClass": "small",
        "phase": "normal",
        "caps": {"maxTokens": 32768},
        "budgets": {"soft": 5, "hard": 9},
        "risk": {"risk": None, "score": 0, "reason": "not-routed"},
        "pruneLevel": None,
        "pressure": 0.12,
        "charsRemoved": 0,
        "prunedSeqs": [],
    }
    data.update(extra)
    return {"type": "tapedeck/route", "data": data, "ignorable": True}


def pruned(log: LogBuilder, seq: int, head: int, tail: int) -> dict[str, Any]:
    """A pruner-style replacement of the tool result at ``seq`` keeping ``head`` and ``tail`` chars."""
    data = log.events[seq]["data"]
    block = data["message"]["content"][0]
    text = block["content"][0]["text"]
    cut = f"{text[:head]}\n\n[... tool result middle pruned ...]\n\n{text[-tail:]}"
    message = {**data["message"], "content": [{**block, "content": [{"type": "text", "text": cut}]}]}
    meta = {"policy": "prune", "level": "moderate", "charsBefore": len(text), "charsAfter": len(cut)}
    return {
        "type": "tool/result",
        "data": {**data, "message": message, "meta": meta},
        "sourceEventSeqs": [seq],
        "surfaceOp": {"op": "replace", "start": seq, "end": seq},
    }


def demo(directory: Path) -> Path:
    """One open turn: a folded and an expanded result, a pruned one, a checkpoint, routes and a config change."""
    log = LogBuilder()
    log.start_turn("The parser test fails on empty input; find out why and fix it.")
    log.add(route(1, 1))
    log.calls(
        [
            ("read_file", {"path": "data/scores.csv"}, table_text("alpha", 120), False),
            (
                "bash",
                {"command": "pytest -q tests/test_parser.py"},
                "F.\nFAILED tests/test_parser.py::test_empty",
                True,
            ),
        ]
    )
    log.end_step()
    log.start_step()
    folds = log.plan(lambda s: plan_fold(s, CONFIG.slice))
    log.add(route(1, 2, pressure=0.31))
    big = "\n".join(f"[build] step {i}: compiled module_{i}.py in {i % 9}ms" for i in range(90))
    _, build = log.calls(
        [
            ("read_file", {"path": "data/archive.csv"}, table_text("beta", 150), False),
            ("bash", {"command": "make build"}, big, False),
        ],
        text="Both tables look fine.",
    )
    log.end_step()
    log.start_step()
    log.add(pruned(log, build, 400, 200))
    log.plan(lambda s: plan_fold(s, CONFIG.slice))
    log.plan(lambda s: plan_unfold(s, folds[0]))
    log.add(
        {
            "type": "tapedeck/config",
            "data": {
                "changes": {"slice.history.keepRecentTurns": {"old": 0, "new": 1}},
                "by": "operator",
                "requestId": "r-0",
            },
            "ignorable": True,
        },
        {
            "type": "tapedeck/control",
            "data": {"requestId": "r-0", "op": "config.set", "outcome": "applied"},
            "ignorable": True,
        },
    )
    log.add(
        route(
            1,
            3,
            phase="checkpoint",
            risk={"risk": "boundary", "score": 6, "reason": "selected"},
            pruneLevel="moderate",
            pressure=0.52,
            charsRemoved=2710,
            prunedSeqs=[6],
        )
    )
    log.plan(lambda s: plan_checkpoint(s, "find the empty-input bug", by="operator"))
    log.call("grep", {"pattern": "def parse", "path": "src"}, "src/parser.py:12:def parse(text):")
    log.end_step()
    log.start_step()
    log.call(
        "read_file",
        {"path": "src/parser.py"},
        "def parse(text):\n    head = text.split()[0]\n    return head\n",
    )
    log.end_step()
    log.start_step()
    log.say("The parser indexes the first token without checking for empty input.")
    return log.write(directory)


def sealed(directory: Path) -> Path:
    """Three completed turns; turns 1 and 2 were sealed at the first step of the next turn, turn 3 is due."""
    log = LogBuilder()
    prompts = [
        "List the failing tests.",
        "Explain why test_empty fails.",
        "Fix it and run the suite again.",
    ]
    for number, prompt in enumerate(prompts, 1):
        log.start_turn(prompt)
        if number > 1:
            log.plan(lambda s: plan_seal(s, CONFIG.slice).events)
        log.call("bash", {"command": f"pytest -q -k step{number}"}, f"{number} failed, {10 - number} passed")
        log.end_step()
        log.start_step()
        log.say(f"  Turn {number}: {prompt.lower()} — done.  ")
        log.end_step()
        log.end_turn()
    return log.write(directory)


def backoff(directory: Path) -> Path:
    """One open turn in which the model keeps expanding one file's folds until the fold backs off from it.

    ``data/scores.csv`` is read three times and folded twice; two full ``expand_result`` calls (plus one
    ``grep`` expansion, which does not count) back it off, so the third read stays raw. ``data/archive.csv``
    is folded once and expanded once, and a small ``bash`` result is never folded.
    """
    log = LogBuilder()
    log.start_turn("Which scores went stale?")

    def step(*calls: tuple[str, dict[str, Any], str]) -> None:
        log.calls([(name, args, text, False) for name, args, text in calls])
        log.end_step()
        log.start_step()
        log.plan(lambda s: plan_fold(s, CONFIG.slice))

    full = "[full result]\n"
    step(("read_file", {"path": "data/scores.csv"}, table_text("alpha", 120)))
    step(("read_file", {"path": "data/scores.csv"}, table_text("alpha", 130)))
    step(("expand_result", {"turn": 1, "step": 1, "call": 1}, full + table_text("alpha", 120)))
    step(("expand_result", {"turn": 1, "step": 2, "call": 1, "grep": "stale"}, "7,alpha-007,0.59,stale"))
    step(
        ("expand_result", {"turn": 1, "step": 2, "call": 1}, full + table_text("alpha", 130)),
        ("read_file", {"path": "data/archive.csv"}, table_text("beta", 150)),
    )
    step(("expand_result", {"turn": 1, "step": 5, "call": 2}, full + table_text("beta", 150)))
    step(
        ("read_file", {"path": "data/scores.csv"}, table_text("alpha", 140)),
        ("bash", {"command": "wc -l data/scores.csv"}, "141 data/scores.csv"),
    )
    return log.write(directory)


def configured(directory: Path, config: dict[str, Any]) -> Path:
    """A session whose host started with ``config`` (as ``tapedeck run --config`` logs it), then took one
    operator change (``slice.history.keepRecentTurns`` 3 → 2)."""
    log = LogBuilder()
    log.events[0]["data"] = {**log.events[0]["data"], "config": config}
    log.start_turn("Summarise the parser module.")
    log.add(
        {
            "type": "tapedeck/config",
            "data": {"changes": {"slice.history.keepRecentTurns": {"old": 3, "new": 2}}, "by": "operator"},
            "ignorable": True,
        }
    )
    log.say("The parser splits on whitespace and returns the first token.")
    return log.write(directory)


STARTED_WITH = {
    "slice": {"history": {"keepRecentTurns": 3}, "fold": {"pinSteps": 2}},
    "prolong": {"logWindow": 5, "registerCommand": False},
    "rewind": {"reportLanguage": "zh"},
}


WIDE_PATHS = (
    "报告/二〇二六年第四季度销售数据汇总表.csv",
    "data/🚀 launch metrics 📈 weekly.csv",
    "src/ファイル/パーサー.py",
)


def wide_paths(directory: Path) -> Path:
    """Tool results on files whose paths hold wide characters (CJK, emoji), two cells each on a terminal; the first
    is folded."""
    return _folded_reads(directory, WIDE_PATHS)


def _folded_reads(directory: Path, paths: Sequence[str]) -> Path:
    """A ``read_file`` of each of ``paths`` in one step, folded at the next."""
    log = LogBuilder()
    log.start_turn("Summarise the quarter's reports.")
    log.calls([("read_file", {"path": path}, table_text(f"r{i}", 120), False) for i, path in enumerate(paths)])
    log.end_step()
    log.start_step()
    log.plan(lambda s: plan_fold(s, CONFIG.slice))
    log.say("Read them.")
    return log.write(directory)


def long_region(directory: Path) -> Path:
    """A mark with ``LONG_OBJECTIVE``, then six steps of one call each: twelve nodes a rewind would fold."""
    log = LogBuilder()
    log.start_turn("Fix the parser.")
    log.plan(lambda s: plan_checkpoint(s, LONG_OBJECTIVE, by="operator"))
    for i in range(6):
        log.call("bash", {"command": f"pytest -q tests/test_{i}.py"}, f"{i} passed")
        log.end_step()
        log.start_step()
    log.say("Found it.")
    return log.write(directory)


def long_paths(directory: Path) -> Path:
    """Six folded results of files whose paths are a thousand characters long."""
    return _folded_reads(directory, ["reports/" + "deep/" * 200 + f"r{i}.csv" for i in range(6)])
