"""File calls a crash can cut off: what the log records before one runs, and how resume settles it.

``write_file`` and ``edit_file`` change the workspace with one rename, after their ``tool/call`` is in the log.
A host killed while one runs leaves that ``tool/call`` without a result, and the file either as the call found
it or as the call left it (plus, when the kill came before the rename, the call's temporary file beside it).
Whether ``old_text`` is still there cannot tell the two apart: an edit that adds lines after an anchor keeps its
``old_text``, so running it again would apply it twice.

So the ``tool/call`` itself carries ``fileBefore``, what the file was when the call was dispatched (an extra
field DSH readers ignore): for ``edit_file`` the SHA-256 of its text (null when it could not be read as text)
and ``oldTextAt``, where ``old_text`` first occurred (character offset); for ``write_file`` whether the file
``exists``. Resume compares the file now against it: a file unchanged since dispatch gets the call run again
(the original call, run once); a file the call left gets the result the call gave, rebuilt from the text it
found (verified: the edit applied to that text gives the file now); a file neither is TOOL_OUTCOME_UNKNOWN.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from typing import Any

from core.host.toolbox import ToolBox
from core.host.tools.files import edit_text, read_text, remove_temp_files, write_outcome
from core.host.tools.outcome import ToolFailure, ToolOutcome
from core.shared.arguments import loads_arguments
from core.shared.text import sha256_hex

FILE_BEFORE = "fileBefore"
WRITE_TOOL = "write_file"
EDIT_TOOL = "edit_file"
FILE_TOOLS = frozenset({WRITE_TOOL, EDIT_TOOL})


@dataclass(frozen=True)
class Settlement:
    """How resume settles a file call a crash cut off: run it again, log the result it gave, or neither
    (its outcome is unknown). ``removed`` names the temporary files it had left, now deleted."""

    again: bool
    landed: ToolOutcome | None = None
    removed: list[str] = field(default_factory=list)


def _checked(toolbox: ToolBox, name: str, arguments: str) -> dict[str, Any] | None:
    """The call's arguments as its tool checks them; None when the tool refuses them (it then changes nothing)."""
    try:
        args = loads_arguments(arguments)
        return toolbox.tools[name].checked(args) if isinstance(args, dict) else None
    except (ValueError, ToolFailure):
        return None


def file_before(toolbox: ToolBox, name: str, arguments: str) -> dict[str, Any] | None:
    """What a ``write_file`` or ``edit_file`` call's ``tool/call`` records about its file before the call runs
    (None for other tools, and for arguments the tool refuses)."""
    args = _checked(toolbox, name, arguments) if name in FILE_TOOLS else None
    if args is None:
        return None
    place = toolbox.tools[name].workspace
    try:
        path = place.resolve(args["path"])
        if name == WRITE_TOOL:
            with place.directory(path.parent, args["path"]) as parent:
                os.stat(path.name, dir_fd=parent, follow_symlinks=False)
            return {"exists": True}
        text = read_text(place, path, args["path"], name)
    except (ToolFailure, OSError, ValueError):  # the tool fails the same way, changing nothing
        return {"exists": False} if name == WRITE_TOOL else {"sha256": None}
    before: dict[str, Any] = {"sha256": sha256_hex(text)}
    at = text.find(args["old_text"]) if args["old_text"] else -1
    if at >= 0:
        before["oldTextAt"] = at
    return before


def settle(toolbox: ToolBox, name: str, arguments: str, before: Any) -> Settlement:
    """Settle a ``write_file`` or ``edit_file`` call cut off mid-run (``before``: its ``fileBefore``, None in a
    log written before tapedeck recorded it). Its leftover temporary file is deleted first."""
    args = _checked(toolbox, name, arguments)
    if args is None:
        return Settlement(True)
    place = toolbox.tools[name].workspace
    try:
        path = place.resolve(args["path"])
    except (ToolFailure, OSError, ValueError):
        return Settlement(True)  # a path the tool refuses: it changed nothing
    removed = remove_temp_files(place, path, args["path"])
    before = before if isinstance(before, dict) else None
    try:
        text = read_text(place, path, args["path"], name)
    except (ToolFailure, OSError, ValueError):
        text = None
    if name == WRITE_TOOL:
        # Running it again writes the same bytes; only "created" needs the file as the call found it.
        created = before is not None and before.get("exists") is False and text == args["content"]
        landed = write_outcome(place.display(path), args["content"], True) if created else None
        return Settlement(landed is None, landed, removed)
    if before is None:
        # The edit leaves new_text in the file: without it there, the edit never landed.
        return Settlement(text is not None and args["new_text"] not in text, None, removed)
    if before.get("sha256") is None or (text is not None and sha256_hex(text) == before["sha256"]):
        return Settlement(True, None, removed)
    landed = _landed_edit(text, place.display(path), args, before) if text is not None else None
    return Settlement(False, landed, removed)


def _landed_edit(text: str, rel: str, args: dict[str, Any], before: dict[str, Any]) -> ToolOutcome | None:
    """The outcome the edit reported, when ``text`` is what it made of the text recorded in ``before``."""
    old, new, at = args["old_text"], args["new_text"], before.get("oldTextAt")
    candidates = []
    if isinstance(at, int) and text.startswith(new, at):
        candidates.append(text[:at] + old + text[at + len(new) :])
    if args.get("replace_all") and new:
        candidates.append(text.replace(new, old))
    for found in candidates:
        if sha256_hex(found) != before["sha256"]:
            continue
        with contextlib.suppress(ToolFailure):
            edited, outcome = edit_text(found, rel, args)
            if edited == text:
                return outcome
    return None
