"""``core.shared.records.record`` behaves as ``dataclasses.dataclass`` does: repr, equality, hash, frozenness."""

from __future__ import annotations

import copy
import dataclasses
import math
import pickle
from dataclasses import dataclass, field

import pytest

from core.shared.records import record


@record(frozen=True, slots=True)
class FrozenRecord:
    a: int
    b: float = 0.0
    note: list[int] = field(default_factory=list, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class FrozenPlain:
    a: int
    b: float = 0.0
    note: list[int] = field(default_factory=list, repr=False, compare=False)


@record(slots=True)
class OpenRecord:
    a: object


@dataclass(slots=True)
class OpenPlain:
    a: object


@record(frozen=True)
class OwnRepr:
    a: int

    def __repr__(self) -> str:
        return "its own"


def test_a_record_prints_compares_and_hashes_as_its_dataclass() -> None:
    nan = math.nan
    for made, plain in ((FrozenRecord, FrozenPlain), (OpenRecord, OpenPlain)):
        pairs = [(made(1), plain(1)), (made(nan), plain(nan)), (made([2]), plain([2]))]
        for mine, theirs in pairs:
            assert repr(mine).replace(made.__qualname__, "X") == repr(theirs).replace(plain.__qualname__, "X")
            assert (mine == mine) == (theirs == theirs)  # the same NaN object is equal to itself in a tuple
            assert (mine == made(mine.a)) == (theirs == plain(theirs.a))
        assert made(1) != made(2) and made(1) != plain(1) and made(1).__eq__(1) is NotImplemented
    assert FrozenRecord(1, 2.0, [1]) == FrozenRecord(1, 2.0, [9])  # a field that does not compare
    assert hash(FrozenRecord(1, 2.0)) == hash(FrozenPlain(1, 2.0)) == hash((1, 2.0))
    assert OpenRecord.__hash__ is None and OpenPlain.__hash__ is None
    loop = OpenRecord([])
    loop.a.append(loop)  # type: ignore[attr-defined]
    assert repr(loop) == "OpenRecord(a=[...])"
    assert repr(OwnRepr(1)) == "its own" and {OwnRepr(1): 1}[OwnRepr(1)] == 1


def test_a_frozen_record_refuses_changes_and_is_a_dataclass() -> None:
    item = FrozenRecord(1, 2.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        item.a = 2  # type: ignore[misc]
    assert [f.name for f in dataclasses.fields(item)] == ["a", "b", "note"]
    assert dataclasses.asdict(item) == {"a": 1, "b": 2.0, "note": []}
    assert dataclasses.replace(item, a=3) == FrozenRecord(3, 2.0)
    assert copy.copy(item) == item == pickle.loads(pickle.dumps(item))
