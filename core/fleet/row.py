"""A fleet row: what the fleet table and ``tapedeck sessions --json`` show of one session, and the rows' order."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.alerts.engine import Alert
from core.log.sessions import SessionRef
from core.shared.text import printable, quoted, short_session

LOCAL = "local"


@dataclass(slots=True)
class FleetRow:
    """One session as the fleet shows it (None where a figure is not known)."""

    ref: SessionRef
    nesting: int = 0
    where: str = LOCAL
    title: str | None = None
    host: dict[str, Any] = field(default_factory=lambda: {"state": "none", "kind": "tapedeck"})
    turn: int | None = None
    step: int | None = None
    outcome: str = "-"
    phase: str | None = None
    task_class: str | None = None
    last_write_age_s: float | None = None
    context_pct: float | None = None
    cache_pct: float | None = None
    cost_usd: float | None = None
    usd_per_hour: float | None = None
    children: list[str] = field(default_factory=list)
    attention: list[Alert] = field(default_factory=list)

    @property
    def key(self) -> str:
        """The row's identity: its log's path (unique where the session id need not be)."""
        return str(self.ref.path)

    @property
    def label(self) -> str:
        """The title, else the session id, as a terminal shows it (``printable``), on one line: a newline in it (the
        log's text; a terminal breaks its line at nothing else that ``printable`` leaves) is a space."""
        return printable((self.title or self.ref.id).replace("\n", " "))

    def to_dict(self) -> dict[str, Any]:
        """The ``sessions --json`` object: the session's discovery keys, then the fleet columns."""
        return {
            **self.ref.to_dict(),
            "nesting": self.nesting,
            "title": self.title,
            "where": self.where,
            "host": self.host,
            "turn": self.turn,
            "step": self.step,
            "outcome": self.outcome,
            "phase": self.phase,
            "class": self.task_class,
            "lastWriteAgeS": self.last_write_age_s,
            "contextPct": self.context_pct,
            "cachePct": self.cache_pct,
            "costUsd": self.cost_usd,
            "usdPerHour": self.usd_per_hour,
            "children": self.children,
            "attention": [{"cause": a.cause, "seq": a.seq, "reason": a.reason} for a in self.attention],
        }


def fleet_order(rows: list[FleetRow]) -> list[FleetRow]:
    """Rows in display order: each top-level session followed by its children (oldest first, nested), the
    families needing attention first, then the newest sessions (by creation: a write never moves a row);
    ``nesting`` and ``children`` are set."""
    by_id = {row.ref.id: row for row in rows}
    kids: dict[str, list[FleetRow]] = {}
    tops: list[FleetRow] = []
    for row in rows:
        parent = row.ref.parent
        if parent and parent in by_id and parent != row.ref.id:
            kids.setdefault(parent, []).append(row)
        else:
            tops.append(row)
    out: list[FleetRow] = []
    seen: set[str] = set()

    def family(row: FleetRow, depth: int, into: list[FleetRow]) -> None:
        if row.key in seen:
            return
        seen.add(row.key)
        row.nesting = depth
        children = sorted(kids.get(row.ref.id, []), key=lambda r: r.ref.created_at)
        row.children = [child.ref.id for child in children]
        into.append(row)
        for child in children:
            family(child, depth + 1, into)

    groups: list[list[FleetRow]] = []
    for top in tops:
        group: list[FleetRow] = []
        family(top, 0, group)
        if group:
            groups.append(group)
    groups.sort(key=lambda g: (not any(r.attention for r in g), -g[0].ref.created_at, g[0].key))
    for group in groups:
        out.extend(group)
    out.extend(row for row in rows if row.key not in seen)  # a parent cycle: listed flat at the end
    return out


COLUMNS = ("session", "host", "attention", "turn", "outcome", "phase", "class", "write", "ctx", "cache", "cost", "$/h", "where")


def twin(row: FleetRow, labels: Mapping[str, int]) -> str:
    """What follows ``row``'s label when other rows show it too (``labels``: how many rows show each label), so that
    rows titled alike can be told apart: `` (0f3e9a21)``, the head of its session id (after DSH's ``session-``
    prefix, which every DSH id shares); nothing for a label of its own."""
    return f" ({printable(short_session(row.ref.id))})" if labels.get(row.label, 0) > 1 else ""


def age_label(seconds: float | None) -> str:
    """``<1m``, ``4m``, ``3h``, ``2d`` (``-`` unknown): a row's age moves on at most once a minute, so an idle
    fleet is not redrawn every second (``lastWriteAgeS`` has the seconds)."""
    if seconds is None:
        return "-"
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return "<1m"


def cells(row: FleetRow) -> tuple[str, ...]:
    """The row's cells in ``COLUMNS`` order, as the table and ``sessions`` print them (``-`` unknown)."""
    from core.control.host_state import state_label

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{value:.0f}%"

    def usd(value: float | None) -> str:
        return "-" if value is None else f"${value:.2f}"

    turn = "-" if row.turn is None else f"{row.turn}.{row.step}" if row.step is not None else f"{row.turn}"
    return (
        ("  " * row.nesting + "└ " if row.nesting else "") + row.label,
        state_label(str(row.host.get("state")), str(row.host.get("kind")), row.host.get("bridge")),
        ", ".join(a.cause for a in row.attention) or "-",
        turn,
        quoted(row.outcome),  # these three are the log's words: one line, nothing a terminal acts on
        quoted(row.phase or "-"),
        quoted(row.task_class or "-"),
        age_label(row.last_write_age_s),
        pct(row.context_pct),
        pct(row.cache_pct),
        usd(row.cost_usd),
        usd(row.usd_per_hour),
        row.where,
    )


def matches(row: FleetRow, query: str) -> bool:
    """Whether ``row`` passes the filter ``query``: every word must match, ``state:WORD`` the host state,
    ``host:WORD`` where the session runs, ``attention`` any row needing the operator, any other word a substring
    of the title, the id or the path (case-insensitive)."""
    text = f"{row.label}\n{row.ref.id}\n{row.ref.path}".lower()
    for word in query.lower().split():
        key, _, value = word.partition(":")
        if key == "state" and value:
            ok = str(row.host.get("state", "")).lower().startswith(value)
        elif key == "host" and value:
            ok = value in row.where.lower()
        elif word == "attention":
            ok = bool(row.attention)
        else:
            ok = word in text
        if not ok:
            return False
    return True
