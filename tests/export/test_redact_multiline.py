"""Redaction of a quoted value that goes on over several lines: YAML's multi-line flow scalars (``password: "ab`` then
``  cd"``). The whole value goes, as one replacement on the first line, as the module replaces every value of several
lines (a YAML block, a here-document): how many lines it had is not kept."""

from __future__ import annotations

import orjson
from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.export.redact import KINDS, Redactor

# a line of a value: words of letters and digits, no quote, backslash or ``#`` (YAML's comment), a blank between
LINE_WORDS = st.from_regex(r"[A-Za-z0-9]{1,8}( [A-Za-z0-9]{1,8}){0,2}", fullmatch=True)
# … one a value of its own would be judged a secret by (a letter and a digit: ``A`` alone is a lexer's token name)
SECRET_WORDS = st.from_regex(r"[a-z][A-Za-z0-9]{0,6}[0-9]( [A-Za-z0-9]{1,8}){0,2}", fullmatch=True)
YAML_KEYS = st.sampled_from(["password", "token", "api_key", "client_secret", "dbPassword", "SECRET"])


def _json(text: str, times: int) -> str:
    """``text`` as JSON text holds it in a string, ``times`` over (a tool call's arguments, a tool's JSON output)."""
    for _ in range(times):
        text = orjson.dumps({"c": text}).decode()
    return text


def _redacts(text: str, out: str) -> None:
    """``text`` redacts to ``out``, one key replaced; and so does its JSON text, and JSON text of that."""
    for times in (0, 1, 2):
        r = Redactor(environ={}, home="/home/ann")
        found = r.text(_json(text, times))
        assert found == _json(out, times), found
        assert r.summary() == {**dict.fromkeys(KINDS, 0), "key": 1}, (times, found)


@settings(max_examples=200, deadline=None)
@given(
    indent=st.sampled_from(["", "  ", "    ", "- ", "  - "]),
    key=YAML_KEYS,
    quote=st.sampled_from(['"', "'"]),
    first=st.sampled_from(["", "\n"]),
    lines=st.lists(LINE_WORDS, min_size=2, max_size=4),
    deeper=st.sampled_from([" ", "  ", "\t", "    "]),
    after=st.sampled_from(["", "\nuser: bob", "\nhost: db  # x", "\n\nport: 5432"]),
)
@example(
    indent="", key="password", quote='"', first="", lines=["abc", "def"], deeper="  ", after="\nother: 1"
)
@example(
    indent="", key="password", quote="'", first="", lines=["abc", "def"], deeper="  ", after="\nother: 1"
)
@example(indent="  ", key="token", quote='"', first="\n", lines=["ab cd", "ef", "gh1"], deeper=" ", after="")
def test_a_yaml_quoted_value_of_several_lines_goes_whole(
    indent: str, key: str, quote: str, first: str, lines: list[str], deeper: str, after: str
) -> None:
    """``password: "abc`` then ``  def"`` lost only ``abc``: the quote closes on no line of its own, so the value
    ended with its first line and the lines after it, deeper than the key's (YAML's continuation lines), came out
    as they were. The value goes to its closing quote, whatever line that is on; the key, the quotes, a first line
    left empty and what follows stay, as written and as JSON text holds it (once and twice over)."""
    head = " " * len(indent) + deeper if first else ""  # a value begun on the next line: its indent stays
    pad = " " * len(indent.replace("-", " ")) + deeper
    value = f"\n{pad}".join(lines)
    text = f"{indent}{key}: {quote}{first}{head}{value}{quote}{after}"
    _redacts(text, f"{indent}{key}: {quote}{first}{head}[redacted key]{quote}{after}")


def test_a_quote_that_the_lines_after_it_do_not_go_deeper_than_its_key_is_not_closed_there() -> None:
    """A line back at the key's indent (or less) is YAML's next entry: a quote there closes no value the key's line
    opened, and what the key's line holds goes as before (its line's rest), the next entry staying."""
    _redacts('password: "abc def\nuser: "bob"', 'password: "[redacted key]\nuser: "bob"')
    _redacts("  token: 'abc1234x\n  user: 'bob'", "  token: '[redacted key]\n  user: 'bob'")


@settings(max_examples=200, deadline=None)
@given(
    key=st.sampled_from(["password", "token", "api_key", "secret", "DB_PASSWORD", '"password"']),
    sign=st.sampled_from(["=", " = ", "= ", " =", ":", ": ", " : ", ":=", " := "]),
    quote=st.sampled_from(['"""', "'''"]),
    lines=st.lists(SECRET_WORDS | st.just(""), min_size=2, max_size=4).filter(lambda ls: any(ls[1:])),
    indent=st.sampled_from(["", "  ", "\t"]),
    after=st.sampled_from(["", "\nx = 1", "  # note", "\n\n[server]"]),
)
@example(key="password", sign="=", quote='"""', lines=["abc def", "ghi"], indent="", after="\nx = 1")
@example(key="password", sign=": ", quote="'''", lines=["abc", "def"], indent="", after="")
@example(key="password", sign=" = ", quote='"""', lines=["", "abc", ""], indent="    ", after="")
def test_a_triple_quoted_value_of_several_lines_goes_whole(
    key: str, sign: str, quote: str, lines: list[str], indent: str, after: str
) -> None:
    """``password='''abc`` then ``def'''`` (TOML's multi-line string, Python's) lost its first line only, but after
    `` = ``: the value ended where its line did, and the lines after it, to the closing triple quote, came out as
    they were. The value goes whole to its closing triple quote, whatever the sign, as one replacement (the module
    keeps no value's line count: a YAML block, a here-document go as one too)."""
    value = f"\n{indent}".join(lines)
    _redacts(f"{key}{sign}{quote}{value}{quote}{after}", f"{key}{sign}{quote}[redacted key]{quote}{after}")


@settings(max_examples=200, deadline=None)
@given(
    key=YAML_KEYS,
    words=st.lists(SECRET_WORDS, min_size=2, max_size=4),
    doubled=st.lists(st.booleans(), min_size=4, max_size=4),
    deeper=st.sampled_from(["  ", "    "]),
    after=st.sampled_from(["", "\nuser: bob"]),
)
@example(key="password", words=["ab1", "cd2"], doubled=[True, False, False, False], deeper="  ", after="")
@example(
    key="password",
    words=["ab1", "cd2"],
    doubled=[False, True, False, False],
    deeper="  ",
    after="\nuser: bob",
)
def test_a_yaml_single_quoted_value_s_doubled_quotes_close_nothing_on_any_line(
    key: str, words: list[str], doubled: list[bool], deeper: str, after: str
) -> None:
    """In YAML's single quotes ``''`` writes a quote: ``password: 'ab''`` then ``  cd'`` lost ``ab`` alone, the
    first quote of the pair taken for the close and the quote after it for a piece glued on that closed on no line
    of its own. A single-quoted value goes to the quote that closes it, no doubled one, whatever line it is on."""
    lines = [word + ("''" if twice else "") for word, twice in zip(words, doubled, strict=False)]
    _redacts(f"{key}: '" + f"\n{deeper}".join(lines) + f"'{after}", f"{key}: '[redacted key]'{after}")
