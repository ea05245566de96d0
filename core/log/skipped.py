"""The notes of what a listing of sessions left out, and why, here and over SSH: every one is made by ``skip_note``,
so a reader tells them apart by their kind, never by their words."""

from __future__ import annotations

UNLISTED = "unlisted"  # a directory not listed or looked at, or a session directory whose log is no log
UNREADABLE = "unreadable"  # a log found whose header or stat cannot be read: its note goes once it is read
UNREACHED = "unreached"  # a target not listed at all (its machine cannot be reached, it is not there)


class SkipNote(str):
    """One note: its text (a ``str``, so that every list of notes stays one of the words the CLI prints, the TUI
    shows and a warning tells once), with ``kind`` (``UNLISTED``, ``UNREADABLE``, ``UNREACHED``) and ``subject``,
    the path it names as the listing gave it (``str`` of a ``Path`` or of a ``RemoteTarget``)."""

    kind: str
    subject: str

    def __new__(cls, text: str, kind: str, subject: str) -> SkipNote:
        note = super().__new__(cls, text)
        note.kind, note.subject = kind, subject
        return note

    def __reduce__(self) -> tuple[type[SkipNote], tuple[str, str, str]]:
        """Copied and pickled whole: ``str``'s own way would call ``__new__`` with the text alone."""
        return SkipNote, (str(self), self.kind, self.subject)


def skip_note(kind: str, subject: object, said: str) -> SkipNote:
    """The note that ``subject`` was left out: ``skipped`` and ``said``, the words that name it and why (an error's,
    most often); a target not listed at all in its error's words alone."""
    return SkipNote(said if kind == UNREACHED else f"skipped {said}", kind, str(subject))
