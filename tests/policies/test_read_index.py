"""The read index line of sealed turns (seed 000 §1.d): successful reads, windows, channels and fingerprints."""

from __future__ import annotations

import hashlib

from test_slice_support import Host, config, entries_in

from core.policies.read_index import ReadIndex, label, read_index

SEAL = config()


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def index_lines(host: Host) -> list[str]:
    return [
        line
        for entry in entries_in(host.session.messages())
        for line in entry.split("\n")
        if line.startswith("[files read this turn:")
    ]


def read(host: Host, path: str, text: str, error: bool = False, **window: object) -> int:
    """One step with one read call; returns the result seq."""
    call = (f"read-{host.turn}-{host.step}", "read", {"file_path": path, **window}, text, error)
    host.reply("", [call])
    result = host.session.next_seq - 1
    host.next_step()
    return result


def finish(host: Host) -> None:
    host.reply("done")
    host.end()
    host.begin(f"after turn {host.turn}")


def test_readme_format() -> None:
    host = Host(SEAL)
    host.begin("go")
    body = "\n".join(f"line {i}" for i in range(544))
    seq = read(host, "src/context.ts", body)
    finish(host)
    assert index_lines(host) == [
        f"[files read this turn: src/context.ts (544 lines, {digest(body)}, step 1, seq {seq} block 1, "
        "read window default, logged result)]"
    ]


def test_errors_never_enter_and_a_later_failure_keeps_the_success() -> None:
    host = Host(SEAL)
    host.begin("one")
    read(host, "a.ts", "ENOENT", error=True)
    finish(host)
    assert index_lines(host) == []
    read(host, "a.ts", "ENOENT", error=True)
    success = read(host, "a.ts", "FILE_BODY")
    read(host, "a.ts", "EACCES", error=True)
    finish(host)
    [line] = index_lines(host)
    assert f"{digest('FILE_BODY')}, step 2, seq {success} block 1" in line
    assert digest("ENOENT") not in line and digest("EACCES") not in line
    assert "= turn" not in line and "≠ turn" not in line


def test_the_latest_success_of_a_turn_is_shown_and_compared_later() -> None:
    host = Host(SEAL)
    host.begin("one")
    read(host, "a.ts", "OLD")
    latest = read(host, "a.ts", "NEW")
    finish(host)
    [first] = index_lines(host)
    assert f"{digest('NEW')}, step 2, seq {latest} block 1" in first and digest("OLD") not in first
    read(host, "a.ts", "OLD")
    finish(host)
    assert index_lines(host)[0] == first
    second = index_lines(host)[1]
    assert f"{digest('OLD')}, step 1" in second
    assert f"≠ turn 1 step 2, seq {latest} block 1" in second


def test_windows_are_distinct_and_compared_only_with_the_same_window() -> None:
    host = Host(SEAL)
    host.begin("one")
    first = read(host, "a.ts", "FIRST", offset=1, limit=10)
    second = read(host, "a.ts", "SECOND", offset=11, limit=10)
    finish(host)
    line = index_lines(host)[0]
    assert f'seq {first} block 1, read window {{"limit":10,"offset":1}}' in line
    assert f'seq {second} block 1, read window {{"limit":10,"offset":11}}' in line
    read(host, "a.ts", "FIRST", limit=10, offset=1)
    read(host, "a.ts", "THIRD", offset=21, limit=10)
    finish(host)
    later = index_lines(host)[1]
    assert f"= turn 1 step 1, seq {first} block 1" in later
    assert "turn 1 step 2" not in later and "≠ turn" not in later


def test_parallel_reads_fingerprint_separately() -> None:
    host = Host(SEAL)
    host.begin("one")
    host.reply(
        "", [("ra", "read", {"file_path": "0.ts"}, "A_BODY"), ("rb", "read", {"file_path": "1.ts"}, "B_BODY")]
    )
    a, b = host.session.next_seq - 3, host.session.next_seq - 1
    host.next_step()
    finish(host)
    [line] = index_lines(host)
    assert f"0.ts (1 lines, {digest('A_BODY')}, step 1, seq {a} block 1" in line
    assert f"1.ts (1 lines, {digest('B_BODY')}, step 1, seq {b} block 1" in line
    assert digest("A_BODYB_BODY") not in line


def code_read(host: Host, body: str, outer_text: str = "PROCESSED", outer_error: bool = False) -> int:
    """A run_code call whose program reads nested.ts privately; returns the dispatch seq."""
    root = f"outer-{host.turn}"
    call = (root, "run_code", {"code": "read privately"}, outer_text, outer_error)
    host.reply("", [call], results=False)
    sub = {"rootCallId": root, "parentCallId": root, "subCallId": f"{root}:code:1", "name": "read",
           "arguments": {"file_path": "nested.ts", "offset": 3, "limit": 2}}  # fmt: skip
    host.add("tool/code-dispatch-start", sub)
    dispatch = host.add(
        "tool/code-dispatch", {**sub, "isError": False, "content": [{"type": "text", "text": body}]}
    )
    host.result(call)
    host.next_step()
    return dispatch


def test_code_dispatch_reads_name_their_dispatch_and_claim_no_model_visibility() -> None:
    host = Host(config(keepRecentTurns=1))
    host.begin("read once")
    dispatch = code_read(host, "INNER_READ_ONLY")
    host.reply("done")
    host.end()
    host.begin("read again")
    code_read(host, "LATER_INNER_READ")
    host.reply("done again")
    host.end()
    host.begin("continue")
    [line] = index_lines(host)
    assert f"{digest('INNER_READ_ONLY')}, step 1, dispatch seq {dispatch}" in line
    assert 'read window {"limit":2,"offset":3}' in line
    assert 'code log; model visibility not implied; recall_turn({"turn":"1","view":"full"})' in line
    assert digest("LATER_INNER_READ") not in line
    assert "INNER_READ_ONLY" not in "".join(str(m) for m in host.requests[-1])


def test_a_failed_dispatch_is_not_indexed_but_an_outer_error_keeps_a_good_one() -> None:
    host = Host(SEAL)
    host.begin("go")
    root = "outer"
    host.reply("", [(root, "run_code", {}, "boom", True)], results=False)
    for n, (text, error) in enumerate([("GOOD", False), ("BAD", True)], 1):
        sub = {
            "rootCallId": root,
            "subCallId": f"{root}:code:{n}",
            "name": "read",
            "arguments": {"path": f"{text}.ts"},
        }
        host.add("tool/code-dispatch-start", sub)
        host.add("tool/code-dispatch", {**sub, "isError": error, "content": [{"type": "text", "text": text}]})
    result = host.result((root, "run_code", {}, "boom", True))
    index = read_index(host.session)
    assert [r.target for r in index.reads_for_result(result)] == ["GOOD.ts"]


def test_what_is_not_a_text_read() -> None:
    host = Host(SEAL)
    host.begin("go")
    calls = [
        ("c1", "bash", {"path": "a.ts"}, "not a read tool"),
        ("c2", "read", {"path": "", "file_path": "b.ts"}, "blank path wins over file_path"),
        ("c3", "read", {"offset": 1}, "no target"),
        ("c4", "read_section", {"filePath": "c.md", "section": "Intro"}, "SECTION"),
    ]
    image = ("c5", "read_file", {"path": "img.png"}, "")
    host.reply("", [*calls, image], results=False)
    section = [host.result(call) for call in calls][-1]
    host.result(image, [{"type": "image", "attachment": {}}])
    host.next_step()
    finish(host)
    [line] = index_lines(host)
    assert line == (
        f"[files read this turn: c.md (1 lines, {digest('SECTION')}, step 1, seq {section} block 1, "
        'read_section window {"section":"Intro"}, logged result)]'
    )


def test_labels_are_escaped_and_shortened() -> None:
    assert label("a\tb", 180) == '"a\\tb"'
    assert label("x" * 180, 180) == "x" * 180
    assert label("x" * 181, 180) == "x" * 156 + "…[label shortened]"
    assert label("😀" * 100, 150) == "😀" * 100  # 200 UTF-16 units, but only 100 code points


def test_at_most_ten_items_then_a_count() -> None:
    host = Host(SEAL)
    host.begin("go")
    for n in range(12):
        read(host, f"f{n:02d}.txt", f"body {n}")
    finish(host)
    [line] = index_lines(host)
    assert line.count(" lines, ") == 10
    assert line.endswith(', +2 more; recall_turn({"turn":"1","view":"full"})]')


def test_items_are_added_while_the_line_fits_and_nothing_when_even_the_frame_does_not() -> None:
    host = Host()
    host.begin("go")
    reads = [read(host, f"{'d' * 100}/{n}.txt", "x") for n in range(3)]
    index = ReadIndex().update(host.session)
    refs = [r for seq in reads for r in index.reads_for_result(seq)]
    full = index.index_line(refs, 1)
    assert full is not None and full.count(" lines, ") == 3
    two = index.index_line(refs, 1, len(full) - 1)
    assert two is not None and two.count(" lines, ") == 2 and ", +1 more; " in two
    none_shown = index.index_line(refs, 1, 80)
    assert none_shown == '[files read this turn: +3 more; recall_turn({"turn":"1","view":"full"})]'
    assert index.index_line(refs, 1, 40) is None


def test_window_keys_sort_like_locale_compare() -> None:
    host = Host(SEAL)
    host.begin("go")
    read(host, "a.ts", "X", b=1, A=2, a=3, _z=4, **{"10": 5, "9": 6, "09": 7})
    finish(host)
    # Integer-like keys come first in JSON (JavaScript object order), the rest in localeCompare order.
    assert 'read window {"9":6,"10":5,"_z":4,"09":7,"a":3,"A":2,"b":1}' in index_lines(host)[0]


def test_a_window_key_of_more_digits_than_python_converts_is_no_array_index() -> None:
    """A model may name any argument: a key of 5,000 digits sorts as a string, as JavaScript keeps it (it is no
    array index), where int() raised past 4,300 digits and the turn could not be sealed."""
    host = Host(SEAL)
    host.begin("go")
    long_key = "9" * 5000
    read(host, "a.ts", "X", **{long_key: 1, "4294967295": 2, "4294967294": 3, "b": 4})
    finish(host)
    [line] = index_lines(host)
    assert 'read window {"4294967294":3,"4294967295":2,"9999' in line  # the window is shortened past that
