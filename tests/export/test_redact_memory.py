"""Redaction keeps no secret once a call ends: nothing the module holds on to between calls (the answers its judges
keep for the next question about the same text, the names it remembers) reaches a text or a key it redacted."""

from __future__ import annotations

import gc
import threading
import types
from typing import Any

from core.export import redact
from core.export.redact import Redactor

MARK = "Zq7xWv9Kp"  # in every secret below, and nowhere in the module's own text
# a text whose redaction asks every kept question: the command a match is in (``ssh-keygen -N``, a search tool's
# pattern, ``mysqladmin … password``), a line's rest and its closing single quote, a token of many values, a
# bracket's close, a group piped into a reader, a password line of prose
TEXT = (
    f"ssh-keygen -N {MARK}1 -f k api_key: {MARK}2 mysqladmin -u root password {MARK}3 x\n"
    f"grep -rn password: config/ && echo 'password: Eat the {MARK}4 apple' done\n"
    f'x = "password: ab{{cd{MARK}5"\nDB_PASSWORD={MARK}6,1DB_PASSWORD=a,b\n'
    f"(echo {MARK}7; echo {MARK}8) | passwd\npassword required\n"
)


def _reachable(root: Any) -> list[Any]:
    """Every string and bytes object reachable from ``root`` through containers and objects, not through a
    function, a class or a module (another module's state is not this module's)."""
    found, seen, stack = [], set(), [root]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, (str, bytes, bytearray)):
            found.append(item)
        elif isinstance(item, threading.local):  # this thread's attributes are not among its referents
            stack.extend(vars(item).values())
        elif not isinstance(item, (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType)):
            stack.extend(gc.get_referents(item))
    return found


def _holding_a_secret() -> list[Any]:
    values = [v for k, v in vars(redact).items() if not k.startswith("__")]
    return [
        s for s in _reachable(values) if MARK in (s if isinstance(s, str) else s.decode(errors="replace"))
    ]


def test_no_text_or_key_redacted_is_held_by_the_module_after_the_call() -> None:
    """The module kept the last text each judge asked about (``_last_quotes``, ``_last_in_command`` …: the whole
    text, a secret, alive until the next redaction) and a key it redacted among the names it remembers."""
    r = Redactor(environ={}, home="/home/ann")
    out = r.text(TEXT)
    assert MARK not in out
    walked = r.walk({f"ghp_{MARK}abcdefghijklmnop0123": 12345, "password": f"{MARK}0", "c": TEXT})
    assert MARK not in str(walked)
    found, _ = r.aside([{f"ghp_{MARK}abcdefghijklmnop0123": 1}, TEXT])
    assert MARK not in str(found)
    del out, walked, found
    gc.collect()
    assert _holding_a_secret() == []


def test_no_environment_secret_is_held_by_the_module_once_its_redactors_are_gone() -> None:
    """The compiled pattern set was remembered for the next redactor of the same environment (``_search_set``), keyed
    by the patterns themselves: every environment secret, written into the env pattern, stayed alive in the module
    after the last redactor that needed it was gone."""
    r = Redactor(environ={"DB_PASSWORD": f"{MARK}envpw"}, home="/home/ann")
    assert r.text(f"connect with {MARK}envpw now") == "connect with [redacted env] now"
    del r
    gc.collect()
    assert _holding_a_secret() == []


class _Counted:
    """A compiled pattern whose ``search`` calls are counted: how often the judges of names judged a name anew."""

    def __init__(self, pattern: Any) -> None:
        self.pattern, self.calls = pattern, 0

    def search(self, *args: Any) -> Any:
        self.calls += 1
        return self.pattern.search(*args)


def test_a_redaction_that_replaces_something_forgets_only_the_names_that_held_it(monkeypatch: Any) -> None:
    """After any call that replaced something, the names the judges remembered for every thread were all thrown
    away (``_forget_names``), so on a log where most events hold a secret each event judged its keys anew. Only a
    name that held something replaced is forgotten now: the keys of a clean object stay remembered after an event
    that held a secret, and a key that was a secret is not among them (``_holding_a_secret``)."""
    counted = _Counted(redact._SECRET_KEY)
    monkeypatch.setattr(redact, "_SECRET_KEY", counted)
    r = Redactor(environ={}, home="/home/ann")
    clean = {"type": "note", "status_code": 12345, "max_tokens": 4096, "content": "password: none at all"}
    r.walk(clean)
    asked = counted.calls
    assert asked > 0
    held = {f"ghp_{MARK}abcdefghijklmnop0123": 1, "status_code": 12345, "content": f"password: {MARK}x"}
    assert MARK not in str(r.walk(held))
    counted.calls = 0
    r.walk(clean)
    assert counted.calls == 0, "the clean object's keys were judged again"
    gc.collect()
    assert _holding_a_secret() == []


class _PausedAt:
    """A compiled pattern whose ``findall`` of ``name`` lets another thread look (``reached``), then waits for it
    (``go``): a place inside a redaction, after the judges of names answered about the key before it."""

    def __init__(self, pattern: Any, name: str) -> None:
        self.pattern, self.name = pattern, name
        self.reached, self.go = threading.Event(), threading.Event()

    def findall(self, text: Any) -> Any:
        if text == self.name:
            self.reached.set()
            assert self.go.wait(60), "the other thread did not look in 60 s"
        return self.pattern.findall(text)


def test_a_name_that_holds_a_secret_is_seen_by_no_other_thread_while_it_is_judged(monkeypatch: Any) -> None:
    """A key that holds a secret was remembered for every thread as soon as it was judged, so another thread could
    find it in the module while the redaction that read it went on. It stays its own thread's until the call ends
    (and is then forgotten): the other thread looks while the walk is inside the key's value."""
    paused = _PausedAt(redact._NAME_WORDS, "qz_password")
    monkeypatch.setattr(redact, "_NAME_WORDS", paused)
    r = Redactor(environ={}, home="/home/ann")
    out: list[Any] = []
    seen: list[list[Any]] = []
    walker = threading.Thread(
        target=lambda: out.append(r.walk({f"ghp_{MARK}abcdefghijklmnop0123": "qz_password: Sup3rSecret9"}))
    )
    walker.start()
    try:
        assert paused.reached.wait(60), "the walk did not reach the key's value in 60 s"
        seen.append(_holding_a_secret())
    finally:
        paused.go.set()
        walker.join(60)
    assert not walker.is_alive() and MARK not in str(out)
    assert seen == [[]]
