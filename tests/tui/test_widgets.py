"""Pure parts of the widgets: chart math, lexer choice, the detail columns, header texts."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.read.session import Cut
from tests.tui.logs import policy_log
from tui.live import LiveSession
from tui.widgets.chart import columns, cut_marks, sparkline
from tui.widgets.detail import describe, guess_lexer, payload_sections, render_strips
from tui.widgets.header import load_state, provider_model, turn_label


def test_chart_columns_keep_peaks_and_marks_follow_cuts() -> None:
    assert columns([1, 5, 2, 8, 3, 1], 3) == [5, 8, 3]
    assert columns([4, 2], 10) == [4, 2]
    assert sparkline([0, 4, 8], 8) == " ▄█"
    assert sparkline([1, 2], 0) == "  "
    samples = [10, 20, 30, 40]
    cuts = [Cut(15, "fold", 1, 300), Cut(35, "tape", 4, -20), Cut(36, "expand", 1, -50)]
    assert cut_marks(samples, cuts, 10) == [" f s"]  # the grown expand is not a cut; a tape entry always is
    assert cut_marks(list(range(0, 100, 10)), [Cut(55, "prune", 1, 9)], 5) == ["   p "]


def test_chart_shows_a_rewind_and_a_fold_in_the_same_step() -> None:
    cuts = [Cut(15, "rewind", 3, 900), Cut(16, "fold", 1, 300), Cut(17, "prune", 1, 50)]
    assert cut_marks([10, 20, 30], cuts, 10) == [" r ", " f ", " p "]
    assert cut_marks([10, 20, 30], cuts, 10, rows=2) == [" r ", " … "]  # more marks than rows: an ellipsis
    assert cut_marks([10, 20, 30], cuts[:2], 10, rows=2) == [" r ", " f "]


@pytest.mark.parametrize(
    ("text", "hint", "lexer"),
    [
        ('{"a": 1}', None, "json"),
        ("{not json", None, "text"),
        ("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", None, "diff"),
        ("def f():\n    return 1\n", "src/app.py", "python"),
        ("plain words", "notes.unknownext", "text"),
    ],
)
def test_guess_lexer(text: str, hint: str | None, lexer: str) -> None:
    assert guess_lexer(text, hint) == lexer


def loaded(tmp_path: Path) -> LiveSession:
    live = LiveSession(policy_log().write(tmp_path / "session.jsonl"), follow=False)
    live.run()
    return live


def test_detail_columns(tmp_path: Path) -> None:
    live = loaded(tmp_path)
    left, right, hidden = describe(live, 6, 100)
    assert (
        right is not None and hidden > 0
    )  # a folded result: original cut at 100 chars, sealed version beside
    assert "result of bash" in left.plain and "press + to show more" in left.plain
    assert right.plain.startswith("model sees · sealed by seq 24")
    left, right, _ = describe(live, 12, 10_000)
    assert (
        left.plain.startswith("original seq 6")
        and right is not None
        and "model sees · fold seq 12" in right.plain
    )
    left, right, hidden = describe(live, 18, 10_000)
    assert right is None and hidden == 0 and left.plain.startswith("seq 18 · tool/result · turn 2 step 1")
    assert describe(live, 999, 100)[0].plain == "seq 999 is not loaded yet"
    sections = payload_sections(live.session, live.event(31))  # type: ignore[arg-type]
    assert sections == [("result of bash (error)", "Traceback: boom", "output")]
    lines = render_strips(left, 20)
    assert lines and all(line.cell_length <= 20 for line in lines)


def test_header_texts(tmp_path: Path, fixtures_dir: Path) -> None:
    live = loaded(tmp_path)
    assert (turn_label(live), provider_model(live), load_state(live)) == (
        "turn 3 completed",
        "scripted/demo",
        "index ready · loaded",
    )
    fresh = LiveSession(fixtures_dir / "error-finish.session.jsonl")
    assert load_state(fresh) == "opening" and turn_label(fresh) == "no turn yet"
    assert provider_model(fresh) == "no model yet"
    fresh.phase, fresh.fraction = "projecting", 0.42
    assert load_state(fresh) == "reading 42%"
