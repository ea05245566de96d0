"""``record``: a dataclass whose ``__repr__``, ``__eq__`` and ``__hash__`` are written once, here, for every class.

CPython 3.11's ``dataclasses`` writes each of those methods as source text and compiles it, for each class, every
time the module defining the class is imported: a reading command pays that at each start (the classes on the
path of ``cost --json`` cost it about 40 M instructions, a tenth of its start-up on a small log). A ``record``
class is made by ``dataclasses.dataclass`` with ``repr`` and ``eq`` off (so only ``__init__``, and for a
frozen class its ``__setattr__`` and ``__delattr__``, are compiled) and then given the methods below, which do
what the generated ones do: the same repr, equality between instances of the very same class over the fields
that compare (as tuples), a frozen class's hash of that tuple, and no hash for a class that is not frozen.
``dataclasses.fields``, ``replace``, ``asdict`` and ``is_dataclass`` work on it as on any dataclass.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from operator import attrgetter
from reprlib import recursive_repr
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T")


def _getter(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """What reads ``names`` off an instance as a tuple (``attrgetter`` gives a lone value for one name)."""
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return attrgetter(*names) if names else lambda obj: ()


@recursive_repr()
def _repr(self: Any) -> str:
    cls = self.__class__
    return f"{cls.__qualname__}({', '.join(f'{name}={getattr(self, name)!r}' for name in cls._record_shown)})"


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        key = self.__class__._record_compared  # read off the class: a function there would bind to ``self``
        return key(self) == key(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(self.__class__._record_hashed(self))


@dataclass_transform()
def record(*, frozen: bool = False, slots: bool = False) -> Callable[[type[T]], type[T]]:
    """``dataclasses.dataclass(frozen=frozen, slots=slots)`` with ``repr`` and ``eq`` (and the hash they imply)
    written once for every class (see the module docstring); a method the class defines itself is kept."""

    def wrap(cls: type[T]) -> type[T]:
        own = cls.__dict__
        keep_repr, keep_eq = "__repr__" in own, "__eq__" in own
        # as ``dataclass`` tells: a class that defines ``__eq__`` alone was given ``__hash__ = None`` by Python
        explicit_hash = "__hash__" in own and not (own["__hash__"] is None and keep_eq)
        made: Any = dataclass(cls, repr=False, eq=False, frozen=frozen, slots=slots)
        found = fields(made)
        made._record_shown = tuple(f.name for f in found if f.repr)
        made._record_compared = _getter([f.name for f in found if f.compare])
        made._record_hashed = _getter([f.name for f in found if (f.compare if f.hash is None else f.hash)])
        if not keep_repr:
            made.__repr__ = _repr
        if not keep_eq:
            made.__eq__ = _eq
        if not explicit_hash:  # as ``dataclass`` with ``eq``: a frozen class hashes its fields, another has none
            made.__hash__ = _hash if frozen else None
        return made  # type: ignore[no-any-return]

    return wrap
