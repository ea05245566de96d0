"""The TUI's view of a big log keeps its per-event turn and in-turn columns as runs (``core.read.runs``): the same
answers as a full read's arrays, a fraction of their memory."""

from __future__ import annotations

import random
from array import array
from pathlib import Path

import pytest

import core.read.runs
from bench.gen_session import generate
from core.read.load import load_session
from core.read.runs import Runs
from tui.live import LiveSession


@pytest.mark.parametrize("block", [3, 64, 1 << 16])
def test_runs_answer_as_the_column_does(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    monkeypatch.setattr(core.read.runs, "BLOCK", block)
    rng = random.Random(block)
    for trial in range(200):
        turns, runs = array("i"), Runs("i")
        flags, flag_runs = bytearray(), Runs("B")
        value = 0
        for _ in range(rng.randrange(300)):
            if rng.random() < 0.1:  # turns mostly go up, sometimes back
                value += rng.choice([1, 1, 1, -2]) if trial % 2 else 1
            flag = rng.random() < 0.7
            if rng.random() < 0.3:  # a packed row: a run added in one step
                n = rng.randrange(5)
                turns += array("i", (value,)) * n
                runs += array("i", (value,)) * n
                flags += (b"\x01" if flag else b"\x00") * n
                flag_runs += (b"\x01" if flag else b"\x00") * n
            else:
                turns.append(value)
                runs.append(value)
                flags.append(flag)
                flag_runs.append(flag)
            if turns:  # read while it grows (a fold in between)
                j = rng.randrange(len(turns))
                assert runs[j] == turns[j] and flag_runs[j] == flags[j]
        n = len(turns)
        assert len(runs) == n and list(runs) == list(turns) and runs == turns
        assert [runs[i] for i in range(-n, n)] == [turns[i] for i in range(-n, n)]
        for beyond in (n, -n - 1):
            with pytest.raises(IndexError):
                runs[beyond]
        assert b"".join(map(bytes, runs.pieces())) == turns.tobytes() and runs.nbytes == len(turns.tobytes())
        assert flag_runs == flags and b"".join(map(bytes, flag_runs.pieces())) == bytes(flags)
        assert Runs.from_bytes("i", turns.tobytes()) == turns and Runs.from_bytes("B", bytes(flags)) == flags
        assert (
            Runs.of(turns) == turns
            and Runs.of(flags) == flags
            and Runs.of(bytes([0, 5, 5, 1])) == b"\x00\x05\x05\x01"
        )


@pytest.mark.parametrize("profile", ["dsh-plain", "short-turns", "mixed"])
def test_a_big_log_keeps_its_turns_as_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, profile: str
) -> None:
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(core.read.runs, "BLOCK", 97)  # folds every few rows
    path = tmp_path / "session.jsonl"
    generate(path, 400_000, seed=3, profile=profile)
    live = LiveSession(path, None, follow=False, retain_bytes=1)  # read back from the file, as a huge log is
    live.run()
    view, full = live.session, load_session(path, retain=False, readback=True)
    assert isinstance(view._turn_at, Runs) and isinstance(view._in_turn, Runs)
    assert len(view._turn_at._values) < view.next_seq // 10  # runs, not values
    seqs = range(full.next_seq)
    assert [view.turn_of(s) for s in seqs] == [full.turn_of(s) for s in seqs]
    assert [view.in_turn(s) for s in seqs] == [full.in_turn(s) for s in seqs]
