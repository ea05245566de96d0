"""``recall_search`` (seed 000 §1.e): documents, kinds, scoring, tool-output slots, snippets and rendering."""

from __future__ import annotations

import math
import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_slice_support import Host, runtime_message

from core.policies import recall
from core.policies.recall import RecallError, recall_search, search, search_terms, snippet_around


@pytest.fixture
def host() -> Host:
    host = Host()
    host.begin("please find the kiwi config", runtime="runtime kiwi context")
    host.reply("searching for kiwi", [("g1", "grep", {"pattern": "kiwi"}, "src/kiwi.py:1: kiwi = 1")])
    host.next_step()
    host.reply("", [("e1", "bash", {"command": "false"}, "kiwi failed", True)])
    host.next_step()
    host.reply("", [("x1", "expand_result", {"seq": 9, "formatVersion": 4}, "kiwi recalled copy")])
    host.next_step()
    host.reply("kiwi found")
    host.end()
    host.begin("the still open turn mentions kiwi too")
    return host


def kinds_of(hits: list) -> list[tuple[str, int | None]]:
    return [(h.kind, h.step) for h in hits]


def test_every_kind_is_indexed_and_the_open_turn_and_recall_family_are_not(host: Host) -> None:
    hits = search(host.session, "kiwi", limit=20)
    assert sorted(h.kind for h in hits) == sorted(
        ["user", "context", "assistant", "assistant", "tool_input", "tool_output", "tool_error"]
    )
    assert all(h.turn == 1 for h in hits)
    assert not any("recalled copy" in h.snippet or "expand_result" in h.snippet for h in hits)


def test_locators_per_kind(host: Host) -> None:
    by_kind = {h.kind: h for h in search(host.session, "kiwi", limit=20)}
    assert by_kind["user"].locator == 'recall_turn({"turn":"1","view":"dialogue"})'
    assert by_kind["tool_input"].locator == 'recall_turn({"turn":"1","view":"full"})'
    output = by_kind["tool_output"]
    assert output.locator == f'expand_result({{"seq":{output.seq},"formatVersion":4}})'
    assert by_kind["assistant"].seq is None and by_kind["user"].step is None


def test_scope_dialogue_and_explicit_kinds(host: Host) -> None:
    assert "tool_output" not in {h.kind for h in search(host.session, "kiwi", scope="dialogue", limit=20)}
    assert {h.kind for h in search(host.session, "kiwi", kinds=["tool_error", "context"])} == {
        "tool_error",
        "context",
    }


def test_full_coverage_outranks_repetition() -> None:
    host = Host()
    host.simple_turn("alpha " * 300, "short alpha beta note")
    host.simple_turn("q", "x")
    hits = search(host.session, "alpha beta")
    assert [h.kind for h in hits] == ["assistant", "user"]
    assert hits[0].score == pytest.approx(1000 + 2 / math.log2(4 + len("short alpha beta note") / 200))
    assert hits[1].score == pytest.approx(500 + 10 / math.log2(4 + len("alpha " * 300) / 200))


def test_ties_prefer_the_later_turn() -> None:
    host = Host()
    for n in (1, 2, 3):
        host.simple_turn(f"q{n}", "same words here")
    host.simple_turn("q4", "x")
    assert [h.turn for h in search(host.session, "words")] == [3, 2, 1]


def test_tool_output_gets_at_most_three_slots_besides_the_limit() -> None:
    host = Host()
    host.begin("q")
    host.reply("", [(f"c{i}", "bash", {}, f"melon output {i}") for i in range(6)])
    host.next_step()
    for i in range(4):
        host.reply(f"melon said {i}")
        host.next_step()
    host.reply("end")
    host.end()
    host.simple_turn("next", "x")
    hits = search(host.session, "melon", limit=2)
    assert [h.kind for h in hits].count("tool_output") == 3
    assert [h.kind for h in hits].count("assistant") == 2
    assert [h.kind for h in search(host.session, "melon", kinds=["tool_output"])].count("tool_output") == 5


@pytest.mark.parametrize(
    ("limit", "count"),
    [(None, 5), (0, 5), (math.nan, 5), (1, 1), (2.5, 2), (-4, 1), (99, 20), (math.inf, 20), (-math.inf, 1)],
)
def test_limit_is_clamped(limit: float | None, count: int) -> None:
    host = Host()
    for n in range(25):
        host.simple_turn(f"q{n}", f"grape {n}")
    host.simple_turn("last", "x")
    assert len(search(host.session, "grape", scope="dialogue", limit=limit)) == count


def _seed_terms(query: str) -> list[str]:
    """The seed's term rule, character by character: runs of letters, numbers, ``_``, ``.`` and ``-`` of the
    lower-cased query, longer than one UTF-16 unit (the reference ``search_terms`` is held to)."""
    terms, current = [], ""
    for ch in query.lower() + " ":
        if ch in "_.-" or unicodedata.category(ch)[0] in "LN":
            current += ch
            continue
        if len(current.encode("utf-16-le", "surrogatepass")) > 2:
            terms.append(current)
        current = ""
    return terms


TERM_PIECES = ["a", "Z", "é", "İ", "ß", "𠀀", "٣", "Ⅻ", "½", "_", ".", "-", " ", ",", "\n", "\u0307", "\ud800", "\x00"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(TERM_PIECES), st.characters()), max_size=40).map("".join))
def test_search_terms_are_the_seed_rule_s_on_any_text(query: str) -> None:
    assert search_terms(query) == _seed_terms(query)


def test_the_term_characters_are_the_seed_s_on_every_code_point() -> None:
    """What ``search_terms`` takes for a term's character (its regex) is, on every code point, a letter or a number
    (Unicode categories L and N), ``_``, ``.`` or ``-``: the seed's rule, whatever Hypothesis draws."""
    every = "".join(map(chr, range(0x110000)))
    taken = "".join(recall._TERM.findall(every))
    assert taken == "".join(ch for ch in every if ch in "_.-" or unicodedata.category(ch)[0] in "LN")


def test_search_terms_does_not_go_through_the_query_a_character_at_a_time() -> None:
    """A 1.2 MB query took 1.4 s to split into terms (a Python step per character, in the host's loop, before the
    128-term cap could refuse it): the split is done by the regex engine, so the Python lines it runs do not grow
    with the query's length."""
    lines = 0

    def tracer(frame, event, arg):  # type: ignore[no-untyped-def]
        nonlocal lines
        lines += event == "line"
        return tracer

    query = ("kiwi-config " * 5_000) + "é" * 20_000
    sys.settrace(tracer)
    try:
        terms = search_terms(query)
    finally:
        sys.settrace(None)
    assert terms == ["kiwi-config"] * 5_000 + ["é" * 20_000]
    assert lines < 5_000 * 4, lines


def test_terms_and_snippets() -> None:
    assert search_terms("Foo-bar, x  v1.2 _y é") == ["foo-bar", "v1.2", "_y"]
    assert search_terms("𠀀 a") == ["𠀀"]  # one code point, two UTF-16 units
    long = "a " * 200 + "needle" + " b" * 200
    snippet = snippet_around(long, ["needle"])
    assert snippet.startswith("…") and snippet.endswith("…") and "needle" in snippet and len(snippet) <= 182
    assert snippet_around("short needle", ["needle"]) == "short needle"
    assert snippet_around("tab\t\tand\nnewline needle", ["needle"]) == "tab and newline needle"


def test_snippet_position_is_measured_in_utf16_units() -> None:
    text = "😀" * 200 + "needle" + "z" * 300
    # "needle" sits at code point 200 but UTF-16 index 400; the seed centres the snippet on 400.
    assert snippet_around(text, ["needle"]) == "…" + "z" * 180 + "…"


def test_rendered_page(host: Host) -> None:
    page = recall_search(host.session, {"query": "kiwi config", "limit": 1, "scope": "dialogue"})
    assert page.split("\n") == [
        '[recall_search "kiwi config" · 1 hit(s) · historical record — each hit ends with the exact call that returns '
        'its original: recall_turn({"turn": "slice-turn-N"}) (view "dialogue" is the default: the cheap text-only '
        'page) for said text, recall_turn view "full" for tool inputs, expand_result({"seq": Q,"formatVersion": 4}) '
        "for tool output]",
        '- slice-turn-1 [user] please find the kiwi config → recall_turn({"turn":"1","view":"dialogue"})',
    ]
    tool = recall_search(host.session, {"query": "failed", "kinds": ["tool_error"]})
    assert "\n- slice-turn-1 step 2 seq " in tool and " [tool_error] kiwi failed → expand_result(" in tool


def test_zero_hits_say_what_was_searched(host: Host) -> None:
    assert recall_search(host.session, {"query": "nothing-like-this"}) == (
        '[recall_search "nothing-like-this" · 0 hits over kinds user/assistant/context/tool_input/tool_error/tool_output'
        " — broaden the query, or check earlier sealed turns with recall_turn]"
    )
    assert recall_search(host.session, {"query": "nothing", "scope": "dialogue"}) == (
        '[recall_search "nothing" · 0 hits over kinds user/assistant/context/tool_input/tool_error — retry with '
        'kinds: ["tool_output"] if the fact was tool-born, or broaden the query]'
    )
    assert recall_search(host.session, {"query": "x"}).startswith('[recall_search "x" · 0 hits over kinds')


@pytest.mark.parametrize("query", [None, "", "   ", 5])
def test_a_query_is_required(host: Host, query: object) -> None:
    with pytest.raises(RecallError, match=r'^recall_search needs \{"query": "\.\.\."\}$'):
        recall_search(host.session, {"query": query})


def test_a_message_before_the_first_turn_has_no_owner() -> None:
    host = Host()
    host.user(runtime_message("orphan snapshot words"))
    host.simple_turn("q", "a")
    host.simple_turn("q2", "a2")
    assert search(host.session, "orphan") == []


def test_a_long_query_is_quoted_cut(host: Host) -> None:
    # the model's query of 100,000 characters came back whole in the page's header, into its own context
    long = "q" * 100_000
    page = recall_search(host.session, {"query": f"kiwi {long}", "scope": "dialogue"})
    assert page.startswith(f'[recall_search "kiwi {"q" * 74}…" · ') and " hit(s) · historical record" in page
    assert len(page) < 5000
    none = recall_search(host.session, {"query": "zzz" + long})
    assert none.startswith(f'[recall_search "zzz{"q" * 76}…" · 0 hits over kinds') and len(none) < 400


def test_kinds_the_model_named_are_quoted_in_the_header(host: Host) -> None:
    # the zero-hit header listed the model's kinds as it sent them: a newline and an escape sequence in one came
    # back raw, and 10,000 of them whole
    page = recall_search(host.session, {"query": "zzz", "kinds": ["user\n## Calls\x1b[2J", *["k" * 50] * 10_000]})
    assert page.startswith('[recall_search "zzz" · 0 hits over kinds user\\n## Calls\\u001b[2J/kkk')
    assert "\n" not in page and "\x1b" not in page and len(page) < 400, page[:500]


def test_repeated_terms_count_as_often_as_the_query_names_them() -> None:
    """Each distinct term is counted once per document and weighted by how often the query names it: the seed's
    score, where every term of the query is counted, to the last bit."""
    host = Host()
    host.simple_turn("disk error on disk two", "the disk is full")
    host.simple_turn("q", "error error error and more")
    for query in ("disk disk error", "error disk error error zzz", "disk " * 50 + "full"):
        terms = search_terms(query)
        expected = {}
        for hit in search(host.session, query, limit=20):
            text = next(d for d in ("disk error on disk two", "the disk is full", "error error error and more")
                        if snippet_around(d, terms) == hit.snippet)  # fmt: skip
            counts = [text.lower().count(t) for t in terms]  # every term, as the seed counts them
            matched = sum(1 for c in counts if c)
            expected[hit.snippet] = matched / len(terms) * 1000 + min(sum(counts), 10) / math.log2(4 + len(text) / 200)
            assert hit.score == expected[hit.snippet], (query, hit)
        assert expected, query


def test_a_query_of_too_many_distinct_terms_is_refused_before_any_document_is_read(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each distinct term is counted in every document: a 68 KB query of 17,000 distinct terms took 14.5 s on a
    30-turn session and held up the host. Past MAX_SEARCH_TERMS distinct terms the query is refused before a
    document is read; a query naming its few terms many times over is answered."""
    import core.policies.recall as recall

    read: list[str] = []
    docs = recall._search_docs
    monkeypatch.setattr(recall, "_search_docs", lambda *a: read.append("docs") or docs(*a))
    many = " ".join(f"w{i}" for i in range(17_000))
    with pytest.raises(RecallError) as caught:
        recall_search(host.session, {"query": many})
    assert str(caught.value) == (
        f"recall_search: the query has 17000 distinct terms; at most {recall.MAX_SEARCH_TERMS} are searched, so "
        "ask again with the few words the fact you want would contain"
    )
    assert read == []
    at_cap = " ".join(f"w{i}" for i in range(recall.MAX_SEARCH_TERMS - 1))
    assert recall_search(host.session, {"query": f"{at_cap} kiwi " * 100}).startswith('[recall_search "w0 w1')
    assert read == ["docs"]


def test_recall_search_help_says_which_words_are_searched(capsys: pytest.CaptureFixture[str]) -> None:
    """``recall search --help`` said only 'words to look for': a one-letter query got '0 hits … broaden the query'
    and a long one a refusal, neither foretold (found walking the CLI's --help)."""
    from core.cli import main

    with pytest.raises(SystemExit):
        main(["recall", "search", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "words of two or more characters to look for, at most 128 distinct ones" in text
