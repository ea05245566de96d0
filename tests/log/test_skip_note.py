"""A ``SkipNote`` is a ``str`` that carries its kind and subject: it is copied, deep-copied and pickled as any text
is (a list of notes handed to another thread, process or a dataclass's ``asdict``), and keeps both."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from core.log.skipped import UNLISTED, UNREACHED, UNREADABLE, SkipNote, skip_note


@pytest.mark.parametrize(
    "again",
    [copy.copy, copy.deepcopy, *(lambda v, p=p: pickle.loads(pickle.dumps(v, protocol=p)) for p in range(6))],
    ids=["copy", "deepcopy", *(f"pickle{p}" for p in range(6))],
)
@pytest.mark.parametrize("kind", [UNLISTED, UNREADABLE, UNREACHED])
def test_a_note_copied_or_pickled_keeps_its_words_kind_and_subject(
    again: Callable[[Any], Any], kind: str
) -> None:
    note = skip_note(kind, "/logs/s1", "'/logs/s1': cannot read (Permission denied)")
    [back] = again([note])
    assert isinstance(back, SkipNote)
    assert (str(back), back.kind, back.subject) == (str(note), kind, "/logs/s1")
