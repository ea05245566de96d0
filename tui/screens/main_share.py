"""Notes and exports from the main screen: ``a`` adds or edits the note on the selected row, ``X`` exports the view
(the whole list, or the list up to the time-travel moment with the surface then, through the list's filter) as HTML
to a file; both work in threads and say what they did in a toast."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from textual import work

from core.export.naming import export_name
from core.read.event_filter import EventFilter
from core.read.notes import find_sidecar, set_note
from core.shared.errors import TapedeckError
from core.shared.text import counted, printable, quoted_path
from tui.failures import system_failure, unexpected
from tui.keymap import key_of
from tui.screens.confirm import AskScreen
from tui.screens.toasts import sentence


def export_target(log: Path, session_id: str, at: int | None, directory: Path | None = None) -> Path:
    """Where ``X`` writes: the working directory (else the temp directory when it is not writable), named for the
    session and the moment."""
    try:
        place: Path | None = directory if directory is not None else Path.cwd()
    except OSError:  # the working directory was removed: it takes no file either
        place = None
    if place is None or not os.access(place, os.W_OK):
        place = Path(tempfile.gettempdir())
    return place / export_name(session_id, log.stem, at, "html")


class ShareActions:
    """Mixed into the main screen (which provides ``live``, ``events``, ``stop``, ``notify``, ``app``)."""

    notes: dict[int, str]
    mode: str  # the main screen's view: "full" or "surface"
    filter: EventFilter  # the main screen's
    export_dir: Path | None = None  # tests point exports somewhere of their own
    note_asked: tuple[AskScreen, int, int] | None = None  # the note dialog up: it, the log's epoch and the seq noted

    def load_notes(self) -> None:
        """Read the log's notes in a worker and show them (a remote log has none: notes live beside a local one)."""
        if self.live.remote is None:  # type: ignore[attr-defined]
            self._read_notes()

    def _local_only(self, what: str) -> bool:
        """True (and say why) when the open log is on another machine, where ``what`` cannot be done."""
        live: Any = self.live  # type: ignore[attr-defined]
        if live.remote is None:
            return False
        self.notify(f"{what} needs the log on this machine (this one is on {live.remote.target.where})",  # type: ignore[attr-defined]
                    timeout=6)  # fmt: skip
        return True

    @work(thread=True, group="notes", exclusive=True, exit_on_error=False)
    def _read_notes(self) -> None:
        live: Any = self.live  # type: ignore[attr-defined]
        notice = None
        try:
            found = find_sidecar(live.path)
            notes, problem, notice = {seq: n.text for seq, n in found.notes().items()}, None, found.notice
        except TapedeckError as exc:
            notes, problem = {}, str(exc)
        self.app.call_from_thread(self._show_notes, notes, problem, notice)  # type: ignore[attr-defined]

    def _show_notes(self, notes: dict[int, str], problem: str | None, notice: str | None) -> None:
        self.notes = notes
        events: Any = self.events  # type: ignore[attr-defined]
        events.notes = notes
        events.refresh()
        detail = self.query_one("#detail")  # type: ignore[attr-defined]
        detail.notes = notes
        if detail.seq is not None:
            detail.show(detail.seq, block=detail.block)
        if problem is not None:
            self.notify(f"Notes not shown: {problem}", severity="error", timeout=8)  # type: ignore[attr-defined]
        if notice is not None:
            self.notify(f"Notes: {notice}", severity="warning", timeout=8)  # type: ignore[attr-defined]

    def action_note(self) -> None:
        """Add or edit the note on the selected row (an empty note removes it); on a stream's row, the note it shows
        (on any of its deltas), else one on its first delta."""
        seq = self.events.current_seq  # type: ignore[attr-defined]
        if self._local_only("A note"):
            return
        if seq is None:
            self.notify("Select a row to note.", timeout=3)  # type: ignore[attr-defined]
            return
        notes: dict[int, str] = getattr(self, "notes", {})
        block = self.events.current_block  # type: ignore[attr-defined]
        if block is not None and seq not in notes:
            seq = next((s for s in sorted(notes) if block.start <= s < block.end), seq)

        live: Any = self.live  # type: ignore[attr-defined]
        epoch = live.epoch  # the file the seq belongs to

        note = notes.get(seq, "")
        shown = printable(note)  # a note's controls, as its sidecar holds them, drawn by the text box as pictures

        def asked(text: str | None) -> None:
            self.note_asked = None
            if text is None:
                return
            if text == shown:  # unchanged: the note as it is, controls and all
                text = note
            if live.epoch != epoch:  # the log changed while the note was written: seq is another event now
                self.notify(f"Note not saved: the log was {live.how_changed} while it was written, so seq {seq} "  # type: ignore[attr-defined]
                            "is no longer the event it was on.", severity="error", timeout=8)  # fmt: skip
                return
            self._write_note(seq, text)

        cancel = key_of(self.app, "policy.ask.cancel")  # type: ignore[attr-defined]
        hint = f"Kept beside the log, never in it. Enter saves (empty: removes), ctrl+j starts a new line, {cancel} cancels."
        dialog = AskScreen(f"Note on seq {seq}", hint, value=shown, lines=True)
        self.note_asked = (dialog, epoch, seq)
        self.app.push_screen(dialog, asked)  # type: ignore[attr-defined]

    def note_log_changed(self) -> None:
        """The log changed: when it was truncated, replaced or deleted under the note dialog, the dialog says so at
        once, before the operator writes the note to its end (Enter refuses it)."""
        if self.note_asked is None:
            return
        dialog, epoch, seq = self.note_asked
        live: Any = self.live  # type: ignore[attr-defined]
        if live.epoch != epoch:
            dialog.warn(f"The log was {live.how_changed} while this note was written: seq {seq} is no longer the event "
                        "it was on, so Enter saves nothing.")  # fmt: skip

    @work(thread=True, group="note-write", exit_on_error=False)
    def _write_note(self, seq: int, text: str) -> None:
        try:
            written = set_note(self.live.path, seq, text)  # type: ignore[attr-defined]
            did = "Replaced the note on" if written.replaced else "Added a note on"
            said = f"{did if text.strip() else 'Removed the note on'} seq {seq} ({quoted_path(written.sidecar)})."
            if written.kept is not None:
                said += f" The notes of the session this log replaced are kept in {quoted_path(written.kept)}."
            severity = "information"
        except TapedeckError as exc:
            said, severity = f"Note not saved: {exc}", "error"
        self.app.call_from_thread(self.notify, said, severity=severity, timeout=5)  # type: ignore[attr-defined]
        self._read_notes()

    def action_export(self) -> None:
        """Export the view as HTML to a file: live, the whole list and the surface now; at a time-travel moment, the
        list up to it and the surface then; with the list's filter on, the rows it lets through (the export applies
        the same filter). The toast names what the operator was looking at, and the filter."""
        if self._local_only("The HTML export"):
            return
        stop = self.stop  # type: ignore[attr-defined]
        at = stop.moment.seq if stop is not None else None
        flt = self.filter if self.filter.active else None
        # ``what`` is formatted with the counts: a brace of the filter's regex is doubled to stay one
        named = flt.describe().replace("{", "{{").replace("}", "}}") if flt is not None else ""
        listed = f"the list filtered by {named}" if flt is not None else "the list"
        if stop is None:
            whole = f"{listed} ({{rows}})" if flt is not None else "the whole list ({rows})"
            what = f"the surface now and {whole}" if self.mode == "surface" else f"{whole} and the surface now"
        elif self.mode == "surface":
            what = f"the surface {stop.moment.label()} ({counted(len(stop.surface), 'message')}) and {listed} up to it"
        else:
            what = f"{listed} up to {stop.moment.label().removeprefix('at ')} ({{shown}} of {{rows}}) and the surface then"
        live: Any = self.live  # type: ignore[attr-defined]
        self._export(live.path, live.session.id, at, what, flt)

    @work(thread=True, group="export", exclusive=True, exit_on_error=False)
    def _export(self, log: Path, session_id: str, at: int | None, what: str, flt: EventFilter | None) -> None:
        """Find where to write and write the export, and say in a toast how it ended, whatever failed (``what``: the
        toast's words for it, given the document's ``rows`` counted and ``shown``; ``flt``: the list's filter, when on)."""
        # imported here, in the worker: the export's modules are 3 MiB of every TUI process's memory otherwise
        from core.export.build import ExportOptions
        from core.export.redact import Redactor
        from core.export.write import export_to_file

        try:
            target = export_target(log, session_id, at, self.export_dir)
            self.app.call_from_thread(self.notify, f"Exporting to {quoted_path(target)} …", timeout=3)  # type: ignore[attr-defined]
            options = ExportOptions(at=at, cut=at is not None, redactor=Redactor(), filter=flt)
            doc = export_to_file(log, target, "html", options)
            redacted = sum(doc["redaction"].values())
            rows = counted(doc["rows"], "row")
            said = f"Exported {what.format(rows=rows, shown=doc['shown'])} to {quoted_path(target)} ({counted(redacted, 'redaction')})."
            severity = "information"
        except Exception as exc:  # noqa: BLE001 - any failure ends in a toast that names it, never in silence
            if isinstance(exc, TapedeckError):
                cause = str(exc)
            else:  # a full disk, a directory it may not write in: foreseen, and named; anything else is a bug
                cause = system_failure(exc) if isinstance(exc, OSError) else unexpected(exc)
            said, severity = sentence(f"Export failed: {' '.join(cause.split())}"), "error"
        self.app.call_from_thread(self.notify, said, severity=severity, timeout=8)  # type: ignore[attr-defined]
