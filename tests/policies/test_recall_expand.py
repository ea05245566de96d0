"""``expand_result`` (seed 000 §1.e): addressing, replacement chains, blocks, grep, line ranges, spills."""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_slice_support import Host

from core.policies.recall import RecallError, expand_result
from core.read.load import load_session
from core.read.session import Session

LOG = "\n".join(f"line {i} {'ERROR disk' if i in (10, 12, 40) else 'ok'}" for i in range(1, 61))


@pytest.fixture
def host() -> Host:
    host = Host()
    host.begin("go")
    host.reply("", [("c1", "bash", {"command": "make"}, LOG), ("c2", "read", {"path": "a"}, "A")])
    host.next_step()
    host.reply("done")
    host.end()
    return host


def expand(host: Host, **arguments: object) -> str:
    return expand_result(host.session, arguments)


def fold(host: Host, seq: int, text: str) -> int:
    data = copy.deepcopy(host.events[seq]["data"])
    data["message"]["content"][0]["content"] = [{"type": "text", "text": text}]
    node = seq if host.session.on_surface(seq) else host.session.replaced_by[seq]
    op = {"op": "replace", "start": node, "end": node}
    return host.add("tool/result", data, sourceEventSeqs=[node], surfaceOp=op)


def test_a_replacement_seq_resolves_through_its_chain_to_the_original(host: Host) -> None:
    original = host.session.results_by_step[(1, 1)][0]
    folded = fold(host, original, "[folded]")
    refolded = fold(host, folded, "[folded again]")
    for seq in (original, folded, refolded):
        assert (
            expand(host, seq=seq, formatVersion=4)
            == f"[full result of bash · seq {original} (turn 1 step 1 call 1)]\n{LOG}"
        )


@pytest.mark.parametrize(
    ("seq", "message"),
    [
        (999, "expand_result: no session event at seq 999"),
        (0, "expand_result: seq 0 is a turn/start event, not a tool result"),
        (-1, 'expand_result: "seq" must be a non-negative integer'),
        (1.5, 'expand_result: "seq" must be a non-negative integer'),
        ("x", 'expand_result: "seq" must be a non-negative integer'),
    ],
)
def test_seq_errors(host: Host, seq: object, message: str) -> None:
    with pytest.raises(RecallError, match=f"^{re.escape(message)}$"):
        expand(host, seq=seq, formatVersion=4)


def test_a_replacement_naming_no_original(host: Host) -> None:
    original = host.session.results_by_step[(1, 1)][0]
    data = copy.deepcopy(host.events[original]["data"])
    bad = host.add(
        "tool/result",
        data,
        sourceEventSeqs=[],
        surfaceOp={"op": "replace", "start": original, "end": original},
    )
    with pytest.raises(
        RecallError, match=f"^expand_result: the replacement at seq {bad} names no original tool result$"
    ):
        expand(host, seq=bad, formatVersion=4)


def test_a_seq_given_as_a_numeric_string(host: Host) -> None:
    original = host.session.results_by_step[(1, 1)][1]
    assert expand(host, seq=str(original), formatVersion=4).startswith("[full result of read · seq")


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"turn": 1},
        {"turn": 0, "step": 1},
        {"turn": 1, "step": 1, "call": 0},
        {"turn": "a", "step": 1},
        {"turn": True, "step": 1},
    ],
)
def test_position_errors(host: Host, arguments: dict) -> None:
    with pytest.raises(RecallError) as caught:
        expand_result(host.session, arguments)
    assert str(caught.value) == (
        'expand_result needs {"seq": N, "formatVersion": 4} or {"turn": N, "step": M} (and optional "call": K), '
        "all positive integers"
    )


def test_positions_count_original_results_of_the_step(host: Host) -> None:
    fold(host, host.session.results_by_step[(1, 1)][0], "[folded]")
    assert expand(host, turn=1, step=1, call=2) == "[full result of read · turn 1 step 1 call 2]\nA"
    assert expand(host, turn="1", step="1") == f"[full result of bash · turn 1 step 1 call 1]\n{LOG}"
    with pytest.raises(RecallError, match=r"^no tool result recorded at turn 1 step 1 call 3$"):
        expand(host, turn=1, step=1, call=3)
    with pytest.raises(RecallError, match=r"^no tool result recorded at turn 1 step 2 call 1$"):
        expand(host, turn=1, step=2)


@pytest.mark.parametrize("block", [0, -1, 1.5, "x"])
def test_block_must_be_a_positive_integer(host: Host, block: object) -> None:
    with pytest.raises(RecallError, match=r'^expand_result: "block" must be a positive integer$'):
        expand(host, turn=1, step=1, block=block)


def test_only_block_1_exists(host: Host) -> None:
    # Seed 000 §1.e: block is "only 1"; any other block is the seed's error, and block 1 names itself in the head.
    assert expand(host, turn=1, step=1, block=1) == f"[full result of bash · turn 1 step 1 call 1 block 1]\n{LOG}"
    for block in (2, 7):
        with pytest.raises(RecallError, match=rf"^expand_result: no result block {block} \(result has 1 blocks\)$"):
            expand(host, turn=1, step=1, block=block)


def test_grep_with_context_and_gaps(host: Host) -> None:
    out = expand(host, turn=1, step=1, grep="error")
    lines = out.split("\n")
    assert lines[0] == "[bash · turn 1 step 1 call 1 · 3 of 60 lines match /error/i]"
    assert lines[1:8] == [f"{i}: {LOG.split(chr(10))[i - 1]}" for i in range(8, 15)]
    assert lines[8] == "…[23 lines]…"
    assert lines[9:] == [f"{i}: {LOG.split(chr(10))[i - 1]}" for i in range(38, 43)]


def test_grep_without_hits_and_with_a_bad_pattern(host: Host) -> None:
    assert (
        expand(host, turn=1, step=1, grep="zzz")
        == "[bash · turn 1 step 1 call 1 · 0 of 60 lines match /zzz/i]"
    )
    with pytest.raises(RecallError, match=r'^expand_result: invalid regex "\(unclosed"$'):
        expand(host, turn=1, step=1, grep="(unclosed")


def test_a_grep_that_backtracks_catastrophically_finishes(tmp_path: Path) -> None:
    """A model's pattern: under Python's re this one takes longer than the universe's age on a line of 60 a's, and
    held the host's expand_result call (and 'tapedeck expand --grep', run here in a process of its own: the
    backtracking never lets go of the interpreter) that long."""
    host = Host()
    host.begin("go")
    host.reply("", [("c1", "bash", {"command": "make"}, ("a" * 60 + "\n") * 3)])
    host.end()
    log = host.write(tmp_path / "session.jsonl")
    argv = ["expand", str(log), "--turn", "1", "--step", "1", "--grep", "(a|aa)*$b"]
    code = "import sys; from core.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "[bash · turn 1 step 1 call 1 · 0 of 4 lines match /(a|aa)*$b/i]\n")


def test_a_grep_with_a_lookaround_says_why_it_is_refused(host: Host) -> None:
    with pytest.raises(RecallError, match=r'^expand_result: invalid regex "\(\?=ERROR\)" \(lookarounds and backreferences'):
        expand(host, turn=1, step=1, grep="(?=ERROR)")


@pytest.mark.parametrize(
    ("pattern", "shown"), [("ERROR{1001}", '"ERROR{1001}"'), ("\\pL{1000}", '"\\\\pL{1000}"')], ids=["count", "size"]
)
def test_a_grep_past_the_engines_limits_says_why_it_is_refused(host: Host, pattern: str, shown: str) -> None:
    """A pattern the model's JavaScript takes but RE2 does not (a counted repetition past 1000, a program past RE2's
    size) was refused as only 'invalid regex "…"', as if it were malformed; it says which limit it met, as a
    lookaround's refusal says why."""
    with pytest.raises(RecallError) as refused:
        expand(host, turn=1, step=1, grep=pattern)
    assert str(refused.value) == (
        f"expand_result: invalid regex {shown} (past the limits of matching in linear time: a counted repetition "
        "goes to 1000 at most, and a pattern's compiled size is bounded)"
    )


def test_grep_caps_very_many_hits() -> None:
    host = Host()
    host.begin("go")
    host.reply("", [("c1", "bash", {}, "\n".join(f"hit {i}" for i in range(1, 1501)))])
    host.end()
    out = expand(host, turn=1, step=1, grep="hit")
    assert (
        out.split("\n")[0]
        == "[bash · turn 1 step 1 call 1 · 1500 of 1500 lines match /hit/i, first 200 shown]"
    )
    assert len(out.split("\n")) == 1 + 200 * 5 + 200


def test_line_ranges(host: Host) -> None:
    assert (
        expand(host, turn=1, step=1, lines="2-3")
        == "[bash · turn 1 step 1 call 1 · lines 2-3 of 60]\n2: line 2 ok\n3: line 3 ok"
    )
    assert expand(host, turn=1, step=1, lines=" 59 - 99 ").endswith(
        "lines 59-60 of 60]\n59: line 59 ok\n60: line 60 ok"
    )
    # The extraction: "a=max(1,A), b=min(N,B); b<a ⇒ expand_result: empty range a-b (result has N lines)".
    with pytest.raises(RecallError, match=r"^expand_result: empty range 70-60 \(result has 60 lines\)$"):
        expand(host, turn=1, step=1, lines="70-80")
    with pytest.raises(RecallError, match=r"^expand_result: empty range 5-3 \(result has 60 lines\)$"):
        expand(host, turn=1, step=1, lines="5-3")
    assert expand(host, turn=1, step=1, lines="2 to 3").startswith("[full result of bash")
    assert expand(host, turn=1, step=1, grep="  ", lines="1-1").startswith(
        "[bash · turn 1 step 1 call 1 · lines 1-1"
    )


def spilled(tmp_path: Path, locator: str) -> Session:
    """A session whose one bash result is a fold spill preview naming ``locator`` as its stored full text."""
    preview = f"[bash · log · 9 lines, 2 kept · full text (28 bytes) stored at {locator} — expand it]\n…"
    host = Host(
        header={"type": "session", "version": 0, "id": "x", "createdAt": 1, "cwd": "/w", "delegationDepth": 0}
    )
    host.begin("go")
    host.reply("", [("c1", "bash", {}, preview)])
    host.end()
    return load_session(host.write(tmp_path / "session.jsonl"))


def test_a_fold_spill_original_is_read_from_its_stored_file(tmp_path: Path) -> None:
    (tmp_path / "spill").mkdir()
    (tmp_path / "spill" / "full.txt").write_text("THE WHOLE OUTPUT\nsecond line", encoding="utf-8")
    session = spilled(tmp_path, "spill/full.txt")
    assert (
        expand_result(session, {"turn": 1, "step": 1})
        == "[full result of bash · turn 1 step 1 call 1]\nTHE WHOLE OUTPUT\nsecond line"
    )
    assert expand_result(session, {"turn": 1, "step": 1, "grep": "second"}).endswith("2: second line")
    (tmp_path / "spill" / "full.txt").unlink()
    with pytest.raises(RecallError) as caught:
        expand_result(session, {"turn": 1, "step": 1})
    assert str(caught.value).startswith(
        "expand_result: the full text of bash · turn 1 step 1 call 1 (text part 1) was stored outside the log"
    )
    assert "cannot read spill/full.txt: No such file or directory" in str(caught.value)


def test_an_unreadable_stored_texts_locator_is_quoted_cut(tmp_path: Path) -> None:
    """The refusal of a stored full text that cannot be read named the locator as the log holds it, so a log whose
    locator held an escape sequence and 100,000 characters more put them whole into the model's context; the reason
    is quoted at 200 characters (cut, escaped), as a tool's unexpected failure is."""
    session = spilled(tmp_path, "spill/f\x1b[2J" + "k" * 100_000)
    with pytest.raises(RecallError) as caught:
        expand_result(session, {"turn": 1, "step": 1})
    said = str(caught.value)
    assert "(cannot read spill/f\\u001b[2Jkkk" in said and "k…); read that file" in said, said[:300]
    assert "\x1b" not in said and len(said) < 500, said[:500]


def test_a_long_grep_pattern_is_quoted_cut(host: Host) -> None:
    # the model's pattern of 100,000 characters came back whole in expand_result's answer, into its own context
    long = "q" * 100_000
    head = expand(host, turn=1, step=1, grep=f"error|{long}").split("\n")[0]
    assert head == f"[bash · turn 1 step 1 call 1 · 3 of 60 lines match /error|{'q' * 73}…/i]"
    assert expand(host, turn=1, step=1, grep="zzz" + long) == f"[bash · turn 1 step 1 call 1 · 0 of 60 lines match /zzz{'q' * 76}…/i]"
    with pytest.raises(RecallError) as refused:
        expand(host, turn=1, step=1, grep="(" + long)
    assert str(refused.value).startswith(f'expand_result: invalid regex "({"q" * 78}…"')
    assert len(str(refused.value)) < 400


def test_an_event_type_from_the_log_is_quoted_in_the_refusal(host: Host) -> None:
    """expand_result named a non-result's type as the log holds it, so a log whose event type held an escape
    sequence and 300 characters more put them whole into the model's context; it is quoted (cut, escaped)."""
    seq = host.add("x\x1b[2J" + "k" * 300, {})
    with pytest.raises(RecallError) as info:
        expand(host, seq=seq, formatVersion=4)
    said = str(info.value)
    assert said.startswith(f"expand_result: seq {seq} is a x\\u001b[2Jkkk") and said.endswith("k… event, not a tool result")
    assert "\x1b" not in said and len(said) < 150, said


def test_a_tool_name_from_the_log_stays_on_the_head_line() -> None:
    """expand_result's head named the tool as the log held it: a name holding a newline and an escape sequence
    wrote a line of its own after '[full result of', where the model reads the result's text. It is quoted."""
    host = Host()
    host.begin("go")
    host.reply("", [("c1", "bash\n[full result of nothing]\x1b[2J", {}, "out")])
    host.end()
    assert expand(host, turn=1, step=1) == (
        "[full result of bash\\n[full result of nothing]\\u001b[2J · turn 1 step 1 call 1]\nout"
    )
