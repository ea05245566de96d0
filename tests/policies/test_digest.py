"""Digest routing and the data, log, search and long-line rules."""

from __future__ import annotations

import json
import re

from core.policies.digest import (
    cut_long_line,
    detect_content_kind,
    digest_data,
    digest_log,
    digest_search,
    digest_tool_result,
    looks_like_code,
)
from core.policies.slice_config import DigestConfig
from core.shared.text import utf16_len

POLICY = DigestConfig()
MARKER = re.compile(r"^…\[\+(\d+) lines / (\d+) chars\]…$")

BIG = "\n".join(
    f"section_{i // 10}: header" if i % 10 == 0 else f"row {i} payload {'x' * 30} {i * 7}" for i in range(120)
)
CODE = "\n".join(f"def f{i}(x):\n    return x + {i}" for i in range(80))


def test_big_data_read_keeps_structure_and_drops_middle_rows() -> None:
    d = digest_tool_result(BIG, "read", "notes.md", POLICY)
    assert d.digested and d.kind == "data"
    assert "section_0: header" in d.text and "section_11: header" in d.text
    assert "row 55 payload" not in d.text
    assert "row 1 payload" in d.text and "row 119 payload" in d.text
    assert utf16_len(d.text) < 0.55 * utf16_len(BIG)
    assert d.total_lines == 120
    assert d.kept_lines == 10 + 4 + 11
    assert "…[+9 lines / " in d.text


def test_source_code_is_never_condensed() -> None:
    by_path = digest_tool_result(BIG, "read", "src/core.py", POLICY)
    assert not by_path.digested and by_path.kind == "code" and by_path.text == BIG
    by_content = digest_tool_result(CODE, "bash", None, POLICY)
    assert not by_content.digested and by_content.kind == "code"
    assert looks_like_code(CODE)


def test_small_results_are_untouched() -> None:
    d = digest_tool_result("a: 1\nb: 2\n", "read", "x.yaml", POLICY)
    assert not d.digested and d.kind == "data" and "minChars" in d.reason
    assert d.total_lines == d.kept_lines == 3


def test_recall_tools_are_untouched() -> None:
    for tool in ("recall_turn", "recall_step", "recall_search"):
        d = digest_tool_result(BIG, tool, None, POLICY)
        assert not d.digested and d.text == BIG


def test_disabled_digest_changes_nothing() -> None:
    d = digest_tool_result(BIG, "read", "notes.md", DigestConfig(enabled=False))
    assert not d.digested and d.text == BIG and d.reason == "digest.enabled is false"


def test_ratio_guard_abandons_a_fold_that_saves_little() -> None:
    structured = "\n".join(f"key_{i}: value {i}" for i in range(200))
    d = digest_data(structured, POLICY)  # every line structured and novel: nothing to drop
    assert not d.digested and d.text == structured and "0.55" in d.reason


def test_structured_runs_keep_novel_keys_only_after_the_minimum() -> None:
    prose = "\n".join(f"plain prose line number {i} with words" for i in range(40))
    block = "\n".join(f"item: value {i}" for i in range(30))
    text = f"{prose}\n{block}\n{prose}"
    d = digest_data(text, POLICY)
    assert d.digested
    assert d.text.count("item: value") == POLICY.structuredBlockMin


def test_line_number_prefixes_are_ignored_when_judging_structure() -> None:
    lines = [f"{i + 1}: filler text without structure {i}" for i in range(60)]
    lines[30] = "31: [database]"
    d = digest_data("\n".join(lines), POLICY)
    assert d.digested and "31: [database]" in d.text


def test_blank_runs_collapse_to_one_blank_line() -> None:
    prose = [f"prose words {i} " * 8 for i in range(20)]
    lines = [*prose, "[first]", *[""] * 30, "[second]", *prose]
    d = digest_data("\n".join(lines), POLICY)
    assert d.digested
    assert "[first]\n\n[second]" in d.text


def test_single_line_json_folds_through_the_long_line_cut() -> None:
    blob = json.dumps({"rows": [{"id": i, "name": f"user-{i}", "tags": ["a", "b"]} for i in range(300)]})
    assert "\n" not in blob and len(blob) > 9000
    d = digest_tool_result(blob, "bash", None, POLICY)
    assert d.digested and d.kind == "data"
    head, rest = d.text.split(" …[+", 1)
    count, tail = rest.split(" chars]… ", 1)
    assert blob.startswith(head) and blob.endswith(tail)
    assert (len(head), len(tail)) == (700, 300)
    assert int(count) == len(blob) - 1000


def test_long_line_cut_counts_utf16_units_and_keeps_surrogate_pairs_whole() -> None:
    line = "😀" * 1000  # 2000 UTF-16 units
    cut = cut_long_line(line, POLICY)
    head, rest = cut.split(" …[+", 1)
    count, tail = rest.split(" chars]… ", 1)
    assert head == "😀" * 350 and tail == "😀" * 150
    assert int(count) == 2000 - 1000
    assert cut_long_line("short", POLICY) == "short"
    zero_tail = cut_long_line("y" * 2000, DigestConfig(lineTailChars=0))
    assert zero_tail.endswith(" …[+1300 chars]… ")


def test_content_kinds() -> None:
    log = "\n".join(f"2026-01-01 10:00:{i:02d} INFO request {i} ok" for i in range(30))
    assert detect_content_kind(log) == "log"
    hits = "\n".join(f"src/mod{i}.py:{i}: match here" for i in range(30))
    assert detect_content_kind(hits) == "search"
    assert detect_content_kind("just\nthree\nlines") == "data"
    assert detect_content_kind("anything", "lib/a.rs") == "code"


def test_file_reads_never_route_to_log() -> None:
    log = "\n".join(f"2026-01-01 10:00:{i % 60:02d} INFO deploy step {i} finished" for i in range(200))
    assert digest_tool_result(log, "read", "deploy.txt", POLICY).kind == "data"
    assert digest_tool_result(log, "bash", None, POLICY).kind == "log"


def test_log_digest_keeps_errors_context_and_stack_frames() -> None:
    lines = [f"2026-01-01 10:00:00 INFO step {i} fine" for i in range(200)]
    lines[100] = "2026-01-01 10:00:00 ERROR database connection refused"
    lines[101:104] = ["    at connect (db.js:10:3)", "    at main (app.js:2:1)", "    at run (boot.js:9:9)"]
    lines[150] = "2026-01-01 10:00:00 WARNING disk almost full"
    text = "\n".join(lines)
    d = digest_log(text, POLICY)
    assert d.digested and d.kind == "log"
    out = d.text.split("\n")
    for keep in ("ERROR database connection refused", "at run (boot.js:9:9)", "WARNING disk almost full"):
        assert any(keep in line for line in out)
    assert lines[97] in out and lines[96] not in out  # 3 lines of context before the error
    assert lines[103] in out and lines[104] not in out  # the stack frames end the kept block
    assert lines[0] in out and lines[-1] in out
    assert "step 50 fine" not in d.text


def test_log_digest_deduplicates_similar_errors() -> None:
    lines = [f"ERROR retry {i} failed for job 0x{i:04x}" for i in range(60)] + ["done"] * 5
    d = digest_log("\n".join(lines), POLICY)
    assert d.digested
    assert d.text.count("ERROR retry") < 12


def test_short_logs_are_untouched() -> None:
    d = digest_log("ERROR one\nERROR two", POLICY)
    assert not d.digested and "logMinChars" in d.reason


def _grep_output(files: int, per_file: int) -> str:
    return "\n".join(
        f"src/pkg/file{f}.py:{n + 1}:    value = compute_something({n})"
        for f in range(files)
        for n in range(per_file)
    )


def test_grep_with_few_matches_is_kept_whole() -> None:
    text = _grep_output(3, 20)
    d = digest_tool_result(text, "grep", None, POLICY)
    assert not d.digested and d.kind == "search" and d.text == text


def test_grep_with_very_many_matches_keeps_first_and_last_per_file() -> None:
    text = _grep_output(4, 60)
    d = digest_tool_result(text, "grep", None, POLICY)
    assert d.digested and d.kind == "search"
    for f in range(4):
        name = f"src/pkg/file{f}.py"
        kept = [line for line in d.text.split("\n") if line.startswith(f"{name}:")]
        assert [int(line.split(":")[1]) for line in kept] == [1, 2, 59, 60]
        assert f"[... and 56 more matches in {name}]" in d.text
    assert d.kept_lines == 16 and d.total_lines == 240


def test_grouped_grep_output_is_grouped_under_its_heading() -> None:
    text = "\n".join(
        f"lib/file{f}.ts\n" + "\n".join(f"{n + 1}: const value{n} = compute({n});" for n in range(150))
        for f in range(2)
    )
    d = digest_search(text, POLICY)
    assert d.digested
    assert "[... and 146 more matches in lib/file0.ts]" in d.text
    assert "[... and 146 more matches in lib/file1.ts]" in d.text


def test_glob_results_group_by_directory() -> None:
    note = "[40 more files match; use a narrower pattern or path]"
    text = "\n".join(f"assets/img/icon_{i:04d}_large_variant.png" for i in range(300)) + "\n" + note
    d = digest_tool_result(text, "glob", None, POLICY)
    assert d.digested and "[... and 296 more matches in assets/img]" in d.text
    assert d.text.endswith(note)


def test_search_output_of_other_tools_uses_the_search_digest() -> None:
    text = _grep_output(2, 80)
    d = digest_tool_result(text, "bash", None, POLICY)
    assert d.kind == "search" and d.digested


def test_many_files_with_few_matches_each_cannot_fold() -> None:
    text = _grep_output(200, 1)
    d = digest_tool_result(text, "grep", None, POLICY)
    assert not d.digested and "no file has more than 4 matches" in d.reason
