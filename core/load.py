"""Loading a session log into a projection in one streaming pass.

The decoder hands over events and packed chunk rows (kept packed) as it reads 1 MB slices; each goes straight
into ``Session.apply``/``apply_row`` with the cyclic GC paused. A retaining load keeps every event in an
``EventStore``; a streaming load keeps none and lets ``observe`` see each one right after it is projected (and
``before`` right before), so a command can keep only what it prints. With ``readback`` a streaming load also
notes where each line is (``core.log.linestore``), so ``session.events[seq]`` still reads any event back.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from core.diagnostics import Diagnostic
from core.errors import LogFormatError
from core.log.bulk import gc_paused
from core.log.decoder import DecodeBatch, LogDecoder
from core.log.layout import is_compressed, resolve_log_path
from core.log.linestore import LineStore
from core.log.records import PackedRow
from core.log.store import EventStore
from core.session import Session

READ_CHUNK = 1 << 20
Observer = Callable[[Session, "dict | PackedRow"], None]


def load_session(
    path: str | os.PathLike[str],
    *,
    retain: bool = True,
    observe: Observer | None = None,
    before: Observer | None = None,
    readback: bool = False,
) -> Session:
    """Project a whole log file or session directory (raw or zstd).

    ``retain=False`` keeps no event: ``session.events`` stays empty, or with ``readback`` is a ``LineStore``
    that reads events back from the file by seq (also while the pass runs, for every line decoded so far).
    ``before(session, item)`` and ``observe(session, item)`` are called right before and right after each
    event dict or ``PackedRow`` is applied. Diagnostics come out as a full read gives them: the decoder's
    first, then the projection's. Raises LogFormatError only when no header is usable.
    """
    p = resolve_log_path(path)
    compressed = is_compressed(p)
    decoder = LogDecoder(str(p), compressed, lazy_rows=True)
    store = EventStore() if retain else LineStore(p, decoder) if readback else None
    hooks = (before, observe)
    found: list[Diagnostic] = []
    session: Session | None = None
    with gc_paused():
        try:
            with open(p, "rb") as f:
                while chunk := f.read(READ_CHUNK):
                    session = _project(decoder.feed(chunk), decoder, session, p, store, hooks, found)
        except OSError as exc:
            raise LogFormatError(f"{p}: cannot read ({exc.strerror or exc})") from exc
        session = _project(decoder.finish(), decoder, session, p, store, hooks, found)
    if decoder.fatal:
        raise LogFormatError(decoder.fatal)
    if session is None:
        raise LogFormatError(f"{p}: empty log (no session header)")
    session.diagnostics[:0] = found
    session.compressed = compressed
    return session


def _project(
    batch: DecodeBatch,
    decoder: LogDecoder,
    session: Session | None,
    path: Path,
    store: EventStore | LineStore | None,
    hooks: tuple[Observer | None, Observer | None],
    found: list[Diagnostic],
) -> Session | None:
    found.extend(batch.diagnostics)
    if decoder.fatal:
        raise LogFormatError(decoder.fatal)
    if session is None:
        if decoder.header is None:
            return None
        session = Session(decoder.header, store, path=path, retain=isinstance(store, EventStore))
    apply, apply_row = session.apply, session.apply_row
    before, observe = hooks
    for item in batch.events:
        if before is not None:
            before(session, item)
        if type(item) is PackedRow:
            apply_row(item)
        else:
            apply(item)
        if observe is not None:
            observe(session, item)
    return session
