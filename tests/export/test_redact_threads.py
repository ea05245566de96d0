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


class _PausingLock:
    """A lock that, when the thread ``who`` first releases it, waits until another thread has read (``read``) what
    that release let it see: the place between two of that thread's updates, where a reader would see a torn count."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.who: int | None = None
        self.released = threading.Event()
        self.read = threading.Event()

    def __enter__(self) -> _PausingLock:
        self._lock.acquire()
        return self

    def __exit__(self, *_: object) -> None:
        self._lock.release()
        if threading.get_ident() == self.who and not self.released.is_set():
            self.released.set()
            assert self.read.wait(60), "the reader did not read in 60 s"


@pytest.mark.parametrize("found", [(1, 1, 0, 0), (2, 0, 1, 1)])
@pytest.mark.parametrize("way", ["add", "uncount"])
def test_the_summary_is_one_snapshot_of_every_kind_a_call_counts(way: str, found: tuple[int, ...]) -> None:
    """``add`` and ``uncount`` counted each kind of theirs under the lock on its own, so a ``summary`` taken between
    two kinds saw one counted and not the other (a key and no env of one secret's two kinds). The reader is let in
    at the first release of the lock by the counting thread: it sees all of the call's kinds or none."""
    r = Redactor(environ={}, home="/home/ann")
    lock = _PausingLock()
    r._lock = lock  # type: ignore[assignment]  # (the same ``with`` protocol, paused where a reader may come in)
    seen: list[dict[str, int]] = []

    def count() -> None:
        lock.who = threading.get_ident()
        getattr(r, way)(found)

    def read() -> None:
        assert lock.released.wait(60), "the counting thread released no lock in 60 s"
        seen.append(r.summary())
        lock.read.set()

    errors = _together(count, read)
    assert not errors, errors[0]
    sign = -1 if way == "uncount" else 1
    assert seen == [{kind: sign * n for kind, n in zip(KINDS, found, strict=True)}]
