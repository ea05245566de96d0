"""The session header: title, provider/model, status, turn/step, phase and task class, load state."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Static

from core.control.host_state import KIND_DSH, state_label
from core.rebuild.cost import cost_summary
from core.shared.text import model_label, printable
from tui.live import LiveSession

PHASE_LABELS = {
    "opening": "opening",
    "waiting": "waiting for the log to appear",
    "incomplete": "waiting for the log's first line",
    "preview": "showing the tail",
    "projecting": "reading",
    "reset": "re-reading",
    "error": "cannot read",
}


def turn_label(live: LiveSession) -> str:
    """Where the session is: ``turn 4 step 2`` while a turn is open, ``turn 3 aborted`` (how the last turn ended)
    between turns, ``no turn yet``. The host's state is the header's one state word (``host_label``)."""
    session = live.session
    if session.open_turn is not None:
        return f"turn {session.open_turn} step {live.facts.step}"
    turn = session.turns.get(session.last_ended) if session.last_ended is not None else None
    return f"turn {turn.number} {turn.status}" if turn is not None else "no turn yet"


def provider_model(live: LiveSession) -> str:
    """``provider/model`` from the latest request header, else from the host event."""
    header = live.session.request_header() or {}
    config = header.get("config") if isinstance(header.get("config"), dict) else {}
    host = live.facts.host or {}
    provider = config.get("provider") or host.get("provider")
    model = config.get("model") or host.get("model")
    return model_label(provider, model, "no model yet")


def load_state(live: LiveSession) -> str:
    """Loading progress; ``index ready · loaded`` once every event is listed and projected (benchmarks and the
    end-to-end tests wait for this text)."""
    if live.ready:
        return "index ready · loaded"
    label = PHASE_LABELS.get(live.phase, live.phase)
    return f"{label} {int(live.fraction * 100)}%" if live.phase == "projecting" else label


def cost_label(live: LiveSession) -> str:
    """``$0.42 · 81% cached`` from the logged usage (see ``core.rebuild.cost.cost_summary``; empty when nothing is known)."""
    try:
        return cost_summary(live.session)
    except RuntimeError:  # the follower added a turn while we read: the next refresh shows it
        return ""


_HOST_STYLE = {"running": "green", "idle": "green", "pausing": "bold yellow", "paused": "bold yellow"}


def host_label(live: LiveSession) -> tuple[str, str]:
    """The host-state field: ``host running``, ``host paused`` …, ``host exited``, for a DSH session through the
    bridge ``DSH paused`` … (``DSH paused (old bridge)`` while DSH runs an older plugin than the packaged one,
    ``(newer bridge)`` a newer one), ``DSH exited`` (``DSH exited, left paused`` when its next start holds), or
    ``read-only`` (a DSH session without the bridge): as the fleet table reads it; the state the operator has been
    told (``LiveSession.shown_host``)."""
    host = live.shown_host
    style = _HOST_STYLE.get(host.state, "bold red")
    if host.kind == KIND_DSH and live.facts.host is None:
        if host.state == "none":
            return "read-only (no bridge)", "yellow"
        return state_label(host.state, KIND_DSH, host.bridge), style
    if host.state != "none":  # our host's own files: the header says so before the load reaches the log's host event
        return f"host {host.state}", style
    return ("read-only", "yellow") if live.facts.host is None else ("tapedeck host", "green")  # the latter: not read yet


def remote_label(live: LiveSession) -> tuple[str, str]:
    """`` on user@host`` for a session read over SSH (`` on host: unreachable since …`` while it cannot be
    reached, in the link's words, which may quote the server: drawn by ``printable``), else empty."""
    if live.remote is None:
        return "", ""
    where = live.remote.target.where
    if live.unreachable:
        return printable(f" on {where}: {live.unreachable.partition(': ')[2] or live.unreachable}"), "bold red"
    return printable(f" on {where}"), "bold cyan"


def lineage_label(live: LiveSession) -> str:
    """`` child of <parent id>`` for a subagent child session, else empty."""
    parent = live.session.header.get("parentSession")
    return f"  child of {parent}" if isinstance(parent, str) and parent else ""


TITLE_MIN = 12  # the title is never clipped shorter than this
KEEP = 99  # the rank of a field the header never drops
Field = tuple[Text, int]  # a header field and its rank: a narrow terminal drops the lowest-ranked first


def clip_title(title: str, room: int | None) -> str:
    """``title`` cut to ``room`` cells at a word's end with ``…`` (None: as it is; a title with no space in the part
    kept is cut where the room ends)."""
    if room is None or cell_len(title) <= room:
        return title
    text = Text(title)
    text.truncate(max(1, room - 1))
    cut = text.plain
    if not (cut[-1].isspace() or title[len(cut)].isspace()) and " " in cut.strip():
        cut = cut[: cut.rfind(" ")]
    return cut.rstrip() + "…"


def fit(fields: list[Field], width: int) -> list[Field]:
    """``fields`` without the lowest-ranked ones (the rightmost first among equals) that do not fit in ``width``
    cells; a field ranked ``KEEP`` always stays."""
    kept = list(fields)
    while sum(t.cell_len for t, _ in kept) > width:
        lesser = [i for i, (_, rank) in enumerate(kept) if rank < KEEP]
        if not lesser:
            break
        del kept[min(lesser, key=lambda i: (kept[i][1], -i))]
    return kept


def join(fields: list[Field]) -> Text:
    """The fields as one line (each brings its own separator; the line starts with none)."""
    line = Text().join(t for t, _ in fields)
    return line[len(line.plain) - len(line.plain.lstrip()) :]


class SessionHeader(Static):
    """Two lines at the top of the main screen."""

    def __init__(self, live: LiveSession, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.live = live
        self._shown: Text | None = None  # what the header shows now (an unchanged header is not repainted)

    def on_mount(self) -> None:
        """Draw the initial state."""
        self.refresh_header()

    def on_resize(self) -> None:
        """Clip the title for the new width."""
        self.refresh_header()

    def refresh_header(self, shown: int = 0) -> None:
        """Redraw from the live session (cheap: reads a few fields, parses nothing); a header that would look the
        same is not repainted.

        ``shown`` is the event count the list was last built from: the header never counts fewer.
        """
        live = self.live
        facts = live.facts
        route = facts.route or {}
        width = self.size.width or 10_000
        title = printable(facts.title or live.session.id or live.path.name)
        # the title shrinks first (to TITLE_MIN, at a word's end), then the lesser fields go; the turn and the model stay
        shortest = Text(clip_title(title, TITLE_MIN), "bold reverse")
        line1 = fit(
            [
                (Text("tapedeck ", "bold"), 1),
                (shortest, KEEP),
                (Text(printable(f"  {turn_label(live)}"), "bold"), KEEP),  # how a turn ended, as the log says
                (Text(printable(f"  phase {route.get('phase') or '-'}"), "bold"), 3),
                (Text(printable(f"  class {route.get('taskClass') or '-'}")), 2),
                (Text(printable(lineage_label(live)), "bold magenta"), 4),
                (Text(printable(f"  {provider_model(live)}"), "cyan"), KEEP),
            ],
            width,
        )
        room = width - sum(t.cell_len for t, _ in line1 if t is not shortest)
        line1 = [
            (Text(clip_title(title, max(TITLE_MIN, room)), t.style) if t is shortest else t, r)
            for t, r in line1
        ]
        feed = getattr(self.app, "alert_feed", None)  # the run rate and projection the alert worker keeps
        spend = feed.spend_label(live.path) if feed is not None else ""
        cost = " · ".join(part for part in (cost_label(live), spend) if part)
        # the host's state and the cost stay; the counts and the session id give way
        line2 = fit(
            [
                (Text(f"{max(shown, live.count)} events"), 2),
                (Text.assemble("  ", host_label(live), remote_label(live)), KEEP),
                (Text(f"  {load_state(live)}", "bold green" if live.ready else "bold yellow"), 5),
                (Text(f"  {len(live.session.surface)} surface nodes"), 1),
                (Text(printable(f"  {cost}") if cost else "", "bold"), KEEP),  # an unpriced model's name
                (Text(printable(f"  session {live.session.id or '?'}"), "dim"), 0),
                (Text(printable(f"  {live.error}") if live.error else "", "bold red"), KEEP),
            ],
            width,
        )
        line1, line2 = join(line1), join(line2)
        text = Text("\n").join([line1, line2])
        if text != self._shown:
            self._shown = text
            self.update(text, layout=False)
