"""The remote inbox append (``core.remote.inbox.SEND``, run by the real OpenSSH server's shell) against another
user of the machine who swaps the inbox for a symbolic link and back while requests are sent: no request is ever
written through the link (the local append opens the inbox with O_NOFOLLOW, so it never is either)."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

import pytest

from core.control.inbox import INBOX_NAME, ControlError
from core.remote.inbox import append_remote_request
from core.remote.link import link_for
from core.remote.target import RemoteTarget
from tests.remote.sshd import MISSING, Sshd

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

SENDS = 150


def test_a_remote_request_is_never_written_through_an_inbox_swapped_for_a_link(sshd: Sshd, tmp_path: Path) -> None:
    # the script checked for a link, then opened the path: a link swapped in between was followed, and the request
    # appended to the file it named
    sshd.trust()
    session = tmp_path / "sessions" / "--w--" / "s1"
    session.mkdir(parents=True)
    (session / "session.jsonl").write_bytes(b"")
    inbox, kept, victim = session / INBOX_NAME, tmp_path / "kept", tmp_path / "victim"
    kept.write_bytes(b"")
    victim.write_bytes(b"")
    stop = threading.Event()

    def swap() -> None:  # the inbox, then a link to the victim, in its place by turns (each rename atomic)
        while not stop.is_set():
            for make in (lambda p: os.link(kept, p), lambda p: os.symlink(victim, p)):
                tmp = session / "swap"
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
                make(tmp)
                os.replace(tmp, inbox)

    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    target = RemoteTarget(None, "testbox", str(session / "session.jsonl"))
    link = link_for(target)
    written = 0
    try:
        for _ in range(SENDS):
            with contextlib.suppress(ControlError):  # refused: the inbox was a link when looked at
                append_remote_request(link, target, "pause")
                written += 1
            if victim.stat().st_size:
                break
    finally:
        stop.set()
        swapper.join()
    assert victim.read_bytes() == b"", f"written through the link after {written} requests"
    assert written and len(kept.read_bytes().splitlines()) == written  # every one sent is in the inbox
