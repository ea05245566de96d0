"""Redaction from several threads at once: one ``Redactor`` shared by them counts every replacement each makes,
and tells each what its own calls replaced."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator

import pytest

from core.export.redact import KINDS, Redactor

TEXT = "password: Sup3rSecret9"
OUT = "password: [redacted key]"
ONE_KEY = (1,) + (0,) * (len(KINDS) - 1)
ROUNDS = 300


@pytest.fixture
def switching() -> Iterator[None]:
    """Threads switched as often as the interpreter can: a race that a thread's time slice would hide shows."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


def _together(*work: Callable[[], None]) -> list[BaseException]:
    """Run each of ``work`` in a thread of its own, all started at once; the errors they raised."""
    errors: list[BaseException] = []
    start = threading.Barrier(len(work))

    def run(job: Callable[[], None]) -> None:
        try:
            start.wait(60)
            job()
        except BaseException as error:  # noqa: BLE001  # (handed to the test's thread)
            errors.append(error)

    threads = [threading.Thread(target=run, args=(job,)) for job in work]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
        assert not thread.is_alive(), "a redaction thread did not end in 60 s"
    return errors


def test_replacements_counted_in_several_threads_are_all_counted(switching: None) -> None:
    """Two threads redacting while a third redacts aside (``aside``, ``again``: counted nowhere) lost replacements:
    ``aside`` and ``again`` swapped ``counts`` for a count of their own and put the old one back, dropping what the
    other threads counted meanwhile."""
    r = Redactor(environ={}, home="/home/ann")

    def redact() -> None:
        for _ in range(ROUNDS):
            r.text(TEXT)

    def aside() -> None:
        for _ in range(ROUNDS):
            r.aside([TEXT])
            r.again(TEXT)

    errors = _together(redact, redact, aside)
    assert not errors, errors[0]
    assert r.summary() == {**dict.fromkeys(KINDS, 0), "key": 2 * ROUNDS}


def test_each_thread_is_told_what_its_own_calls_replaced(switching: None) -> None:
    """``walk_found`` and ``aside`` answered with what every thread replaced since they began (a tally of the shared
    counts before and after), not with what their own walk did, while another thread redacted."""
    r = Redactor(environ={}, home="/home/ann")

    def redact() -> None:
        for _ in range(ROUNDS):
            assert r.text(TEXT) == OUT

    def found() -> None:
        for _ in range(ROUNDS):
            assert r.walk_found({"c": TEXT}) == ({"c": OUT}, ONE_KEY)
            assert r.aside([TEXT]) == ([OUT], ONE_KEY)

    errors = _together(redact, found)
    assert not errors, errors[0]
    assert r.summary() == {**dict.fromkeys(KINDS, 0), "key": 2 * ROUNDS}
