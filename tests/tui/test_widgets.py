"""Pure parts of the widgets: chart math, lexer choice, the detail columns, header texts."""

from __future__ import annotations

import bisect
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.read.session import Cut
from tests.tui.logs import policy_log
from tui.live import LiveSession
from tui.widgets.chart import sparkline
from tui.widgets.chart_model import ChartModel
from tui.widgets.detail import describe, guess_lexer, payload_sections, render_strips
from tui.widgets.header import host_label, load_state, provider_model, turn_label


def chart(chars: list[int], cuts: list[Cut] = (), seqs: list[int] | None = None) -> ChartModel:  # type: ignore[assignment]
    """A chart model of requests with ``chars`` (at ``seqs``) and ``cuts``."""
    model = ChartModel()
    model.extend((seq, 1, 1, c) for seq, c in zip(seqs or range(len(chars)), chars, strict=True))
    model.add_cuts(cuts)
    return model


def test_chart_columns_keep_peaks_and_marks_follow_cuts() -> None:
    assert chart([1, 5, 2, 8, 3, 1]).columns(3) == [5, 8, 3]
    assert chart([4, 2]).columns(10) == [4, 2]
    assert sparkline([0, 4, 8], 8) == " ▄█"
    assert sparkline([1, 2], 0) == "  "
    cuts = [Cut(15, "fold", 1, 300), Cut(35, "tape", 4, -20), Cut(36, "expand", 1, -50)]
    model = chart([1, 2, 3, 4], cuts, [10, 20, 30, 40])
    assert model.cut_marks(10) == [" f s"]  # the grown expand is not a cut; a tape entry always is
    assert model.cuts == 3
    assert chart([1] * 10, [Cut(55, "prune", 1, 9)], list(range(0, 100, 10))).cut_marks(5) == ["   p "]


def test_chart_shows_a_rewind_and_a_fold_in_the_same_step() -> None:
    cuts = [Cut(15, "rewind", 3, 900), Cut(16, "fold", 1, 300), Cut(17, "prune", 1, 50)]
    assert chart([1, 2, 3], cuts, [10, 20, 30]).cut_marks(10) == [" r ", " f ", " p "]
    assert chart([1, 2, 3], cuts, [10, 20, 30]).cut_marks(10, rows=2) == [" r ", " … "]  # an ellipsis
    assert chart([1, 2, 3], cuts[:2], [10, 20, 30]).cut_marks(10, rows=2) == [" r ", " f "]


def test_a_cut_past_the_newest_request_moves_under_the_next_one() -> None:
    model = chart([5, 6], [Cut(25, "fold", 1, 10)], [10, 20])
    assert model.cut_marks(10) == [" f"]  # no request after it yet: drawn under the newest
    model.extend([(30, 1, 2, 7)])
    model.add_cuts([])
    assert model.cut_marks(10) == ["  f"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    chars=st.lists(st.integers(0, 10**6), min_size=1, max_size=300),
    cut_seqs=st.lists(st.integers(0, 700), max_size=40),
    width=st.integers(1, 120),
    grow=st.integers(0, 300),
)
def test_the_chart_model_draws_what_a_walk_over_every_request_draws(
    chars: list[int], cut_seqs: list[int], width: int, grow: int
) -> None:
    """Columns (each bucket's peak), cache shares (each bucket's lowest) and cut marks, against a brute-force
    walk, with the model fed in two parts as a growing log feeds it, and drawn after the first (a redraw reuses
    what was drawn only while nothing changed: the second part, and a share the first part's last request
    reports late, change it)."""
    seqs = [2 * i for i in range(len(chars))]
    shares = [None if c % 3 == 0 else (c % 101) / 100 for c in chars]
    cuts = [Cut(seq, "fold", 1, 5) for seq in sorted(cut_seqs)]
    model = ChartModel()
    split = min(grow, len(chars))
    for first, part in ((True, range(split)), (False, range(split, len(chars)))):
        model.extend((seqs[i], 1, 1, chars[i]) for i in part)
        for i in part:
            model.set_share(i, shares[i])
        model.add_cuts([c for c in cuts if (c.seq < 2 * split) == first])
        if first:
            for draw in (model.columns, model.column_shares, model.cut_marks):
                draw(width)
            if split:
                shares[split - 1] = 0.01 if shares[split - 1] is None else None
                model.set_share(split - 1, shares[split - 1])
    n = len(chars)
    buckets = [(i, i + 1) for i in range(n)] if n <= width else [
        (i * n // width, max((i + 1) * n // width, i * n // width + 1)) for i in range(width)
    ]  # fmt: skip
    assert model.columns(width) == [max(chars[lo:hi]) for lo, hi in buckets]
    lows = [[s for s in shares[lo:hi] if s is not None] for lo, hi in buckets]
    assert model.column_shares(width) == [min(k) if k else None for k in lows]
    assert model.peak == max(chars) and model.now == chars[-1]
    stacks: list[list[str]] = [[] for _ in range(min(n, width))]
    for cut in cuts:
        i = min(bisect.bisect_right(seqs, cut.seq), n - 1)
        stacks[i if n <= width else i * width // n].append("f")
    depth = max(1, max(map(len, stacks)))
    assert model.cut_marks(width) == ["".join(s[k] if k < len(s) else " " for s in stacks) for k in range(depth)]


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


def test_a_host_log_still_loading_is_not_called_read_only(tmp_path: Path, fixtures_dir: Path) -> None:
    """Until the load reaches the log's host event, the header goes by the host's own files: a log our host ran
    is never ``read-only``, not even for the seconds a big one takes to read."""
    opening = LiveSession(policy_log().write(tmp_path / "session.jsonl"), follow=False)
    opening.check_host()
    assert opening.facts.host is None and host_label(opening)[0] == "host running"  # the test host holds the lock
    opening.run()
    assert opening.facts.host is not None and host_label(opening)[0] == "host running"
    dsh = LiveSession(fixtures_dir / "error-finish.session.jsonl", follow=False)
    dsh.check_host()
    assert host_label(dsh)[0] == "read-only (no bridge)"


def test_the_header_says_a_dsh_that_exited_left_its_session_paused(tmp_path: Path) -> None:
    """A DSH that exited while the operator's pause held reads 'DSH exited, left paused' in the fleet table and
    'sessions' (its next start holds the session until a resume), but the header said 'DSH bridge exited' and no
    word of the pause (found in qa2's walkthrough: a real DSH stopped after an alert's pause); it reads as the
    lists read it (README: the header and the fleet table read `DSH exited`)."""
    from tests.bridge.conftest import dsh_log, write_bridge

    log = dsh_log(tmp_path / "s")
    for paused, label in ((True, "DSH exited, left paused"), (False, "DSH exited")):
        write_bridge(log.parent, None, "exited", paused=paused)
        live = LiveSession(log, follow=False)
        live.check_host()
        assert host_label(live)[0] == label


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
