"""Redaction of an ``Authorization`` (``Proxy-Authorization``) header's credentials: one rule wherever the header is
written, an HTTP header's line, curl's ``-H`` argument, a string of JSON text, a JSON object's key, an environment
variable's line. The credential goes whatever its length (``Authorization: ab`` stayed: a value under eight
characters was never looked at); a known scheme word before it stays readable (``Bearer``, ``Basic``, ``Digest``)."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from core.export.redact import KINDS, Redactor

SCHEMES = st.sampled_from(
    ["", "Bearer ", "Basic ", "Token ", "Digest ", "bearer ", "Negotiate ", "NTLM ", "DPoP "]
)
# a credential as RFC 7235's token68 writes one, of any length: no placeholder (``$TOKEN``, ``<token>``), no
# setting word (``none``) and no scheme word alone
CREDENTIALS = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._~+/-]{0,39}={0,2}", fullmatch=True).filter(
    lambda v: v.lower() not in {"none", "null", "nil", "true", "false", "yes", "no", "on", "off", "enabled",
                                "disabled", "basic", "bearer", "token", "digest", "negotiate", "ntlm", "dpop"}
)  # fmt: skip
# where a header is written: ``{}`` its value, scheme and credential
PLACES = st.sampled_from([
    "Authorization: {}", "Proxy-Authorization: {}", "authorization: {}\nHost: h", "> Authorization: {}\r\n> Accept: */*",
    "GET / HTTP/1.1\r\nHost: h\r\nAuthorization: {}\r\n\r\n", "  Authorization: {}",
    'curl -H "Authorization: {}" https://h/x', "curl -sS -H 'Authorization: {}' https://h/x",
    'curl --header "Proxy-Authorization: {}" -x p:3128 https://h', '{{"headers": {{"Authorization": "{}"}}}}',
    "headers = {{'Authorization': '{}'}}", 'req.headers["authorization"] = "{}"', "AUTHORIZATION={}",
    'export HTTP_AUTHORIZATION="{}"', "HTTP_AUTHORIZATION={}\nPATH=/bin",
])  # fmt: skip


def _redacts(text: str, out: str) -> None:
    """``text`` redacts to ``out``, one key replaced; and so does its JSON text, and JSON text of that."""
    for form, expected in ((text, out), *((_json(text, n), _json(out, n)) for n in (1, 2))):
        r = Redactor(environ={}, home="/home/ann")
        found = r.text(form)
        assert found == expected and r.summary() == {**dict.fromkeys(KINDS, 0), "key": 1}, found


def _json(text: str, times: int) -> str:
    """``text`` as JSON text holds it in a string, ``times`` over (a tool call's arguments, a tool's JSON output)."""
    for _ in range(times):
        text = orjson.dumps({"c": text}).decode()
    return text


def _stays(text: str) -> None:
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0, r.text(text)


@settings(max_examples=200, deadline=None)
@given(place=PLACES, scheme=SCHEMES, credential=CREDENTIALS)
@example(place="Authorization: {}", scheme="", credential="ab")
@example(place="Authorization: {}", scheme="Bearer ", credential="ab")
@example(place='curl -H "Authorization: {}" https://h/x', scheme="", credential="ab")
@example(place='{{"headers": {{"Authorization": "{}"}}}}', scheme="Basic ", credential="Zm9v")
@example(place="AUTHORIZATION={}", scheme="", credential="ab")
@example(place="Authorization: {}", scheme="Negotiate ", credential="YIIabc")
@example(place="Authorization: {}", scheme="", credential="B")
def test_an_authorization_header_s_credential_goes_whatever_its_length_and_its_scheme_stays(
    place: str, scheme: str, credential: str
) -> None:
    _redacts(place.format(scheme + credential), place.format(scheme + "[redacted key]"))


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ('Authorization: Digest username="bob", realm="h", nonce="4c2e1", uri="/", response="6629fae49393a05397450978507c4ef1"',
         "Authorization: Digest [redacted key]"),
        ("Authorization: AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/iam/aws4_request, Signature=5d672d79c15b",
         "Authorization: AWS4-HMAC-SHA256 [redacted key]"),
        ("Authorization: ab cd\nHost: h", "Authorization: [redacted key]\nHost: h"),
        ('curl -H "Authorization: Digest username=\\"bob\\", response=\\"66a\\"" https://h',
         'curl -H "Authorization: Digest [redacted key]" https://h'),
        ("curl -H 'Authorization: Digest username=\"bob\", response=\"66a\"' https://h",
         "curl -H 'Authorization: Digest [redacted key]' https://h"),
        ('{"Authorization": "Digest username=\\"bob\\", response=\\"66a\\""}', '{"Authorization": "Digest [redacted key]"}'),
        ("HTTP_AUTHORIZATION=Digest username=bob, response=66a\nX=1", "HTTP_AUTHORIZATION=Digest [redacted key]\nX=1"),
    ],
)  # fmt: skip
def test_a_credential_of_several_parameters_goes_to_the_header_s_end(text: str, out: str) -> None:
    """``Digest``'s ``username="bob", …, response="…"`` came out as ``[redacted key]"bob", …, response="…"``: the
    value ended at its first quote; a scheme the rule did not know (``AWS4-HMAC-SHA256``, ``Negotiate``) was taken
    for the value, and what followed it stayed."""
    _redacts(text, out)


@pytest.mark.parametrize(
    ("value", "out"),
    [
        ({"Authorization": "ab"}, {"Authorization": "[redacted key]"}),
        ({"headers": {"Authorization": "Bearer ab"}}, {"headers": {"Authorization": "Bearer [redacted key]"}}),
        ({"Proxy-Authorization": "Basic Zm9vOmJhcg=="}, {"Proxy-Authorization": "Basic [redacted key]"}),
        ({"authorization": "Bearer abcdefghijklmnopq"}, {"authorization": "Bearer [redacted key]"}),
        ({"c": "headers['Authorization'] = 'rawTok3n1234567890'"}, {"c": "headers['Authorization'] = '[redacted key]'"}),
    ],
)  # fmt: skip
def test_a_json_object_s_authorization_key_gives_its_credential_and_keeps_its_scheme(
    value: object, out: object
) -> None:
    """A walked object's ``"Authorization"`` was no key named for a secret: its value was judged as text, where a
    short credential (``ab``) or one that reads as a word (``Bearer abcdefghijklmnopq``) stayed; and the screen let
    a string holding ``headers['Authorization'] = '…'`` through unread."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.walk(value) == out
    assert r.summary() == {**dict.fromkeys(KINDS, 0), "key": 1}


@pytest.mark.parametrize(
    "text",
    [
        "Authorization: Bearer", "Authorization: Basic\n", "Authorization: Bearer $TOKEN", "Authorization: Bearer ${TOKEN}",
        "Authorization: Bearer ${{ secrets.GH_TOKEN }}", "Authorization: Bearer <token>", "Authorization: {token}",
        "curl -H \"Authorization: Bearer $TOKEN\" https://h", "authorization: str = Header(None)",
        "    authorization: Optional[str] = None", "  authorization: str", "# Authorization: required",
        "{ Authorization: token }", "headers = {Authorization: tok}", "Authorization: none",
        'auth = {"Authorization": "Bearer " + token}', "'Authorization: Bearer ' + token", "Authorization: `Bearer ${token}`",
        'headers["Authorization"] = f"Bearer {token}"', "setHeader('Authorization', tok)", '{"Authorization": ""}',
        "the Authorization: header is missing", "headers = {\n  Authorization: token,\n}",
    ],
)  # fmt: skip
def test_an_authorization_header_s_reference_scheme_alone_or_code_stays(text: str) -> None:
    _stays(text)
    assert Redactor(environ={}, home="/home/ann").walk({"c": text}) == {"c": text}


@pytest.mark.parametrize(
    ("value", "out"),
    [
        ({"proxyAuthorization": "Bearer abcdefg"}, {"proxyAuthorization": "Bearer [redacted key]"}),
        ({"HTTP_AUTHORIZATION": "Basic Zm9vOmJhcg=="}, {"HTTP_AUTHORIZATION": "Basic [redacted key]"}),
        ({"x.authorization": "ab"}, {"x.authorization": "[redacted key]"}),
        ({"unauthorization": "denied"}, {"unauthorization": "denied"}),
        ({"preauthorization": "pending review"}, {"preauthorization": "pending review"}),
        ({"deauthorization": "Bearer of bad news"}, {"deauthorization": "Bearer of bad news"}),
    ],
)  # fmt: skip
def test_only_a_key_whose_last_word_is_authorization_names_a_credential(value: object, out: object) -> None:
    """``unauthorization`` or ``preauthorization`` ends in the header's name but is another word: its value is
    judged as any other text; ``proxyAuthorization``, ``HTTP_AUTHORIZATION`` or ``x.authorization`` are the
    header's name after a word boundary."""
    assert Redactor(environ={}, home="/home/ann").walk(value) == out


QUOTES = st.sampled_from(['"', "'"])


@settings(max_examples=200, deadline=None)
@given(place=PLACES, scheme=SCHEMES.filter(bool), credential=CREDENTIALS | st.just("ab cd"), quote=QUOTES)
@example(place="Authorization: {}", scheme="Bearer ", credential="abc", quote='"')
@example(place="Authorization: {}", scheme="Basic ", credential="dXNlcjpwYXNz", quote="'")
@example(place="curl -sS -H 'Authorization: {}' https://h/x", scheme="Bearer ", credential="ab cd", quote='"')
@example(place='{{"headers": {{"Authorization": "{}"}}}}', scheme="Token ", credential="ab", quote="'")
def test_a_quoted_credential_after_a_scheme_goes_and_the_scheme_and_quotes_stay(
    place: str, scheme: str, credential: str, quote: str
) -> None:
    """``Authorization: Bearer "abc"`` came out as ``Authorization: [redacted key]``: the value had to start with a
    character of a credential, so after ``Bearer `` a quote matched nothing and the scheme word was taken for the
    value. The scheme stays, and the credential goes to its closing quote, the quotes kept, wherever the header is
    written."""
    assume(quote not in place)
    _redacts(
        place.format(f"{scheme}{quote}{credential}{quote}"),
        place.format(f"{scheme}{quote}[redacted key]{quote}"),
    )


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ('Authorization: Bearer "abc"', 'Authorization: Bearer "[redacted key]"'),
        ("Authorization: Basic 'dXNlcjpwYXNz'\nHost: h", "Authorization: Basic '[redacted key]'\nHost: h"),
        ('Authorization: Token "ab cd" ; x', 'Authorization: Token "[redacted key]" ; x'),
        ('curl -H "Authorization: Bearer \'abc\'" https://h', 'curl -H "Authorization: Bearer \'[redacted key]\'" https://h'),
        ('{"Authorization": "Bearer \\"abc\\""}', '{"Authorization": "Bearer \\"[redacted key]\\""}'),
    ],
)  # fmt: skip
def test_the_scheme_before_a_quoted_credential_stays(text: str, out: str) -> None:
    _redacts(text, out)


def test_a_quoted_reference_after_a_scheme_stays() -> None:
    """``Bearer "$TOKEN"`` names a credential the shell gives: with the scheme read, the value is the reference."""
    _stays('Authorization: Bearer "$TOKEN"')
    _stays("curl -H 'Authorization: Bearer \"${TOKEN}\"' https://h")


# words of prose, as a note or a comment writes them after a header's name: each of three letters or more, or a
# word prose is made of (``is``, ``to``), the first maybe capitalised, the last maybe ended by a full stop
PROSE = st.tuples(
    st.lists(st.sampled_from(["see", "below", "the", "docs", "required", "for", "every", "request", "is", "sent",
                              "by", "gateway", "handled", "upstream", "not", "needed", "here", "to", "it"]),
             min_size=2, max_size=6),
    st.booleans(), st.sampled_from(["", "."]),
).map(lambda t: (t[0][0].capitalize() if t[1] else t[0][0]) + " " + " ".join(t[0][1:]) + t[2])  # fmt: skip
# where a header's line holds them: an HTTP header's, curl's ``-H`` argument, a line of JSON text
HEADER_LINES = st.sampled_from([
    "Authorization: {}", "authorization: {}\nHost: h", "  Proxy-Authorization: {}", "> Authorization: {}\r\n",
    'curl -H "Authorization: {}" https://h/x', "GET / HTTP/1.1\r\nAuthorization: {}\r\n\r\n",
])  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(place=HEADER_LINES, words=PROSE)
@example(place="Authorization: {}", words="see below")
@example(place="Authorization: {}", words="See the docs.")
@example(place='curl -H "Authorization: {}" https://h/x', words="not needed here")
def test_a_header_line_of_ordinary_words_stays(place: str, words: str) -> None:
    """``Authorization: see below`` was redacted: prose that names the header, not a credential. A header's value
    of two words or more, each of letters (the first maybe capitalised) and three or more of them or a word prose is
    made of, with no scheme word before it, is prose; as written and as JSON text holds it."""
    text = place.format(words)
    _stays(text)
    _stays(_json(text, 1))


@pytest.mark.parametrize(
    "value",
    ["ab cd", "Custom x7Kq9Lm2", "see below1", "MyScheme abcDEF", "see bel0w", "abc def=", "see b", "Bearer see below",
     "Token the docs", "ab the", "see-below now"],
)  # fmt: skip
def test_a_header_value_of_words_with_a_token_s_shape_still_goes(value: str) -> None:
    """A digit, a letter of upper case after a word's first, a token's punctuation, a word of one or two letters
    that prose is not made of, or a scheme word before the words (``Bearer see below``: the credential after it)
    make the words a credential's: they go, as before."""
    scheme, _, rest = value.partition(" ")
    out = f"{scheme} [redacted key]" if scheme in ("Bearer", "Token") else "[redacted key]"
    _redacts(f"Authorization: {value}", f"Authorization: {out}")
    _redacts(f"Authorization: {value}\nHost: h", f"Authorization: {out}\nHost: h")


# a variable's name as code writes one: words of letters, snake_case or camelCase, of six characters or more (a
# shorter value in code is as likely a short name, ``tok``, with a digit or not: it stays)
NAMES = (
    st.lists(st.from_regex(r"[a-z]{2,8}", fullmatch=True), min_size=1, max_size=3)
    .flatmap(
        lambda words: st.sampled_from(
            ["_".join(words), words[0] + "".join(w.capitalize() for w in words[1:])]
        )
    )
    .filter(lambda name: len(name) >= 6)
)
# where code gives the header's value: a keyword argument, an assignment, an index
CODE_PLACES = st.sampled_from([
    "authorization={}", "f(authorization={})", "requests.get(url, authorization={}, timeout=5)",
    "authorization = {}", "    authorization={},\n", "headers['Authorization'] = {}", 'h["authorization"]={}',
])  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(place=CODE_PLACES, name=NAMES, digit=st.integers(0, 9), at=st.integers(0, 20))
@example(place="authorization={}", name="auth_header", digit=1, at=4)
@example(place="f(authorization={})", name="authHeader", digit=7, at=0)
def test_a_variable_code_gives_the_header_stays_and_a_token_still_goes(
    place: str, name: str, digit: int, at: int
) -> None:
    """``authorization=auth_header`` was redacted: the value is a variable, no secret. Where code gives the header's
    value after ``=`` (not an environment variable's upper-case name), a name as code writes one stays; the same
    value with a digit in it reads as a token, and goes."""
    _stays(place.format(name))
    token = name[:at] + str(digit) + name[at:]
    _redacts(place.format(token), place.format("[redacted key]"))


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("authorization=abc123def456", "authorization=[redacted key]"),
        ("f(authorization=x7Kq9Lm2Np4R)", "f(authorization=[redacted key])"),
        ("authorization = Zm9vYmFy==", "authorization = [redacted key]"),
        ("AUTHORIZATION=auth_header", "AUTHORIZATION=[redacted key]"),
        ("authorization=aBcDeFgHiJ", "authorization=[redacted key]"),
    ],
)
def test_a_token_s_shape_after_authorization_in_code_goes(text: str, out: str) -> None:
    """A digit, letters of random case or a token's punctuation make a credential, and an environment variable's
    value (upper-case name) is data whatever it looks like."""
    _redacts(text, out)


@settings(max_examples=200, deadline=None)
@given(place=PLACES, scheme=SCHEMES, quote=QUOTES, times=st.integers(0, 2))
@example(place="Authorization: {}", scheme="Bearer ", quote='"', times=0)
@example(place="curl -sS -H 'Authorization: {}' https://h/x", scheme="Basic ", quote='"', times=1)
@example(place='{{"headers": {{"Authorization": "{}"}}}}', scheme="Token ", quote="'", times=2)
def test_empty_quotes_after_a_scheme_are_no_credential_and_the_header_stays(
    place: str, scheme: str, quote: str, times: int
) -> None:
    """``Authorization: Bearer ""`` came out as ``Authorization: [redacted key]``: no credential starts at an empty
    quote, so the scheme word was read as the value and, with the quotes after it, judged a credential. Empty quotes,
    after a scheme word or none, name no credential: the header stays whole wherever it is written."""
    assume(quote not in place)
    _stays(_json(place.format(f"{scheme}{quote}{quote}"), times))


@pytest.mark.parametrize("value", ['Bearer ""', "Basic ''", '""', 'bearer  "" '])
def test_empty_quotes_under_an_authorization_key_stay(value: str) -> None:
    """A JSON object's Authorization key: its value of empty quotes, after a scheme word or none, stays too."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.walk({"headers": {"Authorization": value}}) == {"headers": {"Authorization": value}}
    assert sum(r.summary().values()) == 0


@settings(max_examples=200, deadline=None)
@given(
    before=st.sampled_from(["", "a=1&", "page=2&q=x&"]),
    value=st.sampled_from(["auth_header", "abc123def456", "Zm9vYmFy", "x7Kq9Lm2Np4R"])
    | st.from_regex(r"[A-Za-z]{4,12}[0-9]{4,6}[A-Za-z0-9._~+/-]{0,20}", fullmatch=True),
    after=st.sampled_from(["&x=1", "&next=%2Fhome", "#top", "&a=1#b"]),
    place=st.sampled_from(["{}", "curl '{}'", 'open("{}")', "see <{}> now"]),
)
@example(before="", value="auth_header", after="&x=1", place="{}")
def test_a_url_query_s_authorization_value_ends_at_the_next_parameter(
    before: str, value: str, after: str, place: str
) -> None:
    """``https://h/?authorization=auth_header&x=1`` came out as ``?authorization=[redacted key]``: the value went on
    over ``&x=1``. A query's value ends at the ``&`` before the next parameter or the ``#`` of the fragment, which
    stay (as written and as JSON text once and twice over)."""
    url = f"https://h/p?{before}authorization={{}}{after}"
    _redacts(place.format(url.format(value)), place.format(url.format("[redacted key]")))


# a key compared, not assigned: ``==`` (``===``), blanks around it or none, in a condition or alone
COMPARED = st.sampled_from(
    ["{}=={}", "{} == {}", "if {}=={}:", "assert {} == {}", "{}==={}", "x = {}=={} or y"]
)


@settings(max_examples=200, deadline=None)
@given(
    place=COMPARED,
    key=st.sampled_from(["authorization", "proxyAuthorization", "password", "token", "api_key", "db_pass"]),
    value=st.sampled_from(["x", "abc123def", "'abc123def'", '"Bearer abc123"', "other.token"]),
)
@example(place="{}=={}", key="authorization", value="x")
@example(place="{}=={}", key="password", value="x")
@example(place="{} == {}", key="authorization", value="abc123def")
def test_a_key_compared_with_double_equals_stays_whatever_the_key(place: str, key: str, value: str) -> None:
    """``authorization==x`` came out as ``authorization=[redacted key]``, and so did ``password==x``: the first ``=``
    was taken for the sign and the second for the value's first character. ``==`` compares, it assigns nothing (the
    rule the module already read it by with blanks around it, ``password == x``, and in an expression): after the
    Authorization header's name as after every other key, what it compares stays, and so does the text."""
    _stays(place.format(key, value))
    _stays(_json(place.format(key, value), 1))


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("AUTHORIZATION==abc123", "AUTHORIZATION=[redacted key]"),
        ("DB_PASSWORD==abc123", "DB_PASSWORD=[redacted key]"),
        ("authorization=abc123def", "authorization=[redacted key]"),
        ("password=x7Kq9Lm2", "password=[redacted key]"),
    ],
)
def test_an_environment_variable_s_double_equals_still_assigns(text: str, out: str) -> None:
    """An environment variable's upper-case name, its ``=`` right after it, is assigned what follows, an ``=`` too
    (a shell and an env file read ``NAME==abc`` as ``=abc``): it goes, as after one ``=``."""
    _redacts(text, out)


@settings(max_examples=200, deadline=None)
@given(place=PLACES, scheme=SCHEMES.filter(bool), credential=CREDENTIALS, quote=QUOTES)
@example(place="Authorization: {}", scheme="Bearer ", credential="abc", quote='"')
@example(place='curl -H "Authorization: {}" https://h/x', scheme="Basic ", credential="dXNlcjpw", quote="'")
@example(place='{{"headers": {{"Authorization": "{}"}}}}', scheme="Bearer ", credential="ab", quote='"')
def test_a_credential_after_empty_quotes_goes_and_the_scheme_stays(
    place: str, scheme: str, credential: str, quote: str
) -> None:
    """``Authorization: Bearer ""abc`` came out as ``Authorization: [redacted key]``: no credential's first
    character follows the scheme's quote there, so the pattern took the scheme word for the credential. The scheme
    and the empty quotes stay, the credential glued after them goes, wherever the header is written."""
    assume(quote not in place)
    _redacts(
        place.format(f"{scheme}{quote}{quote}{credential}"),
        place.format(f"{scheme}{quote}{quote}[redacted key]"),
    )


@settings(max_examples=200, deadline=None)
@given(place=PLACES, scheme=SCHEMES.filter(bool), inner=st.sampled_from(['\\"', '\\"ab', 'a\\"b']))
@example(place="Authorization: {}", scheme="Bearer ", inner='\\"')
@example(place="curl -sS -H 'Authorization: {}' https://h/x", scheme="Basic ", inner='\\"')
def test_a_quoted_credential_that_starts_with_an_escaped_quote_goes_and_the_scheme_stays(
    place: str, scheme: str, inner: str
) -> None:
    """``Authorization: Bearer "\\""`` (the credential a quote a backslash escapes) came out as ``Authorization:
    [redacted key]`` too. The scheme and the quotes around the credential stay, what is between them goes."""
    assume('"' not in place)
    _redacts(place.format(f'{scheme}"{inner}"'), place.format(f'{scheme}"[redacted key]"'))
