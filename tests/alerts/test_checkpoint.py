"""The alert engine's checkpoint: a first read of an unchanged log restores what a full read of it gives (the
fleet's rows, the alerts raised and the clock rules' answers at any later time), and any change, damage or other
setting means a full read again; a follower reads the log from its start once it changes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.gen_session import generate
from core.alerts import checkpoint
from core.alerts.engine import Alert
from core.alerts.follow import AlertFollower, AlertWatch
from core.alerts.rules import CacheBreak, Signals
from core.cli import main
from core.control.config import PolicyConfig, validate_config
from core.fleet.follow import Fleet
from core.read.index import checkpoint_paths
from tests.alerts.test_replay import DEMO_PRICES, EAGER
from tests.conftest import FIXTURES

NOW = 1_900_000_000_000  # the polls' time: long after every log, so the clock rules have something to say
LATER = NOW + 3_600_000


@pytest.fixture(autouse=True)
def _every_log_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TAPEDECK_INDEX_MIN_BYTES", "0")


def _eager(**more: Any) -> PolicyConfig:
    return validate_config({"alerts": {**EAGER, **more}, "model": DEMO_PRICES})


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A sessions root of every DSH fixture, a generated log of two profiles and one cut mid-line."""
    where = tmp_path / "sessions" / "--w--"
    logs = sorted(FIXTURES.glob("*.session.jsonl"))
    for k, log in enumerate(logs):
        (where / f"s{k}").mkdir(parents=True)
        shutil.copy(log, where / f"s{k}" / "session.jsonl")
    for profile in ("mixed", "dsh-plain"):
        (where / profile).mkdir()
        generate(where / profile / "session.jsonl", 200_000, seed=3, profile=profile)
    (where / "cut").mkdir()
    data = (where / "mixed" / "session.jsonl").read_bytes()
    (where / "cut" / "session.jsonl").write_bytes(data[: len(data) // 2])
    return tmp_path / "sessions"


def _fleet(root: Path, config: PolicyConfig, now: int = NOW) -> tuple[list[dict[str, Any]], Fleet]:
    fleet = Fleet([root], config)
    raised: list[Alert] = []
    fleet.poll(now, final=True, raised=raised)
    rows = [row.to_dict() for row in fleet.rows(now)]
    return [*rows, [a.to_dict() for a in raised]], fleet  # type: ignore[list-item]


def _alerts(paths: list[Path], config: PolicyConfig, now: int = NOW) -> tuple[list[dict[str, Any]], list[str]]:
    problems: list[str] = []
    found = AlertFollower(paths, config, warn=problems.append).poll(now, final=True)
    return [a.to_dict() for a in found], problems


def _restored(fleet: Fleet) -> set[str]:
    return {key for key, watch in fleet.watches.items() if watch._restored is not None}


def test_an_unchanged_log_is_not_read_again_and_gives_what_a_full_read_gives(root: Path, tmp_path: Path) -> None:
    config = _eager()
    cold, fleet = _fleet(root, config)
    assert not _restored(fleet)
    kept = sorted((tmp_path / "cache" / "alerts").glob("*" + checkpoint.SUFFIX))
    assert len(kept) == len(fleet.watches) - 1  # the cut log gets none: an append may complete its torn last line
    assert any(row["attention"] for row in cold[:-1]) and cold[-1], "the eager rules fire on these logs"
    warm, fleet = _fleet(root, config)
    assert _restored(fleet) == {key for key in fleet.watches if not key.endswith("cut/session.jsonl")}
    assert warm == cold
    assert fleet.bytes_read == sum(os.path.getsize(key) for key in fleet.watches)
    for now in (NOW - 10_000_000_000, LATER):  # the clock rules, judged at other times, agree too
        shutil.rmtree(tmp_path / "cache")
        cold = _fleet(root, config, now)[0]
        warm, fleet = _fleet(root, config, now)
        assert _restored(fleet) and warm == cold  # a restore, not a second full read


def test_alerts_of_a_kept_log_are_those_of_a_full_read(root: Path) -> None:
    paths = sorted(root.glob("*/*/session.jsonl"))
    config = _eager()
    cold = _alerts(paths, config)
    assert cold[0]
    assert _alerts(paths, config) == cold
    for path in paths:
        kept = checkpoint.read(path, "alerts", config, {})
        assert (kept is None) == (path.parent.name == "cut")


def test_a_log_that_changed_is_read_in_full(root: Path) -> None:
    config = _eager()
    _fleet(root, config)
    log = root / "--w--" / "mixed" / "session.jsonl"
    line = orjson.dumps({"type": "session/title", "data": {"title": "renamed"}})
    with open(log, "ab") as f:
        f.write(line + b"\n")
    grown, fleet = _fleet(root, config)
    assert str(log) not in _restored(fleet)
    assert next(row for row in grown[:-1] if row["path"] == str(log))["title"] == "renamed"
    data = log.read_bytes()
    log.write_bytes(data[:100] + b"X" + data[101:])  # rewritten in place, same size
    assert str(log) not in _restored(_fleet(root, config)[1])


def test_a_follower_restores_then_reads_the_log_once_it_changes(root: Path) -> None:
    config = _eager()
    cold, _ = _fleet(root, config)
    fleet = Fleet([root], config)
    raised: list[Alert] = []
    fleet.poll(NOW, raised=raised)
    fleet.poll(NOW + 1000, raised=raised)  # unchanged: the clock rules only
    assert _restored(fleet) and fleet.watches.keys() - _restored(fleet) == {str(root / "--w--" / "cut" / "session.jsonl")}
    log = root / "--w--" / "dsh-plain" / "session.jsonl"
    with open(log, "ab") as f:
        f.write(orjson.dumps({"type": "session/title", "data": {"title": "renamed"}}) + b"\n")
    fleet.poll(NOW + 2000, raised=raised)
    assert str(log) not in _restored(fleet)
    rows = {row.key: row.to_dict() for row in fleet.rows(NOW + 2000)}
    shutil.rmtree(root.parent / "cache")
    cold_now = {row["path"]: row for row in _fleet(root, config, NOW + 2000)[0][:-1]}
    assert rows == cold_now
    # every alert once: what the restore raised, then nothing again when the changed log was read from its start
    keys = [(a.path, a.session, a.cause, a.seq) for a in raised]
    assert len(keys) == len(set(keys))


def test_other_settings_read_the_log_in_full(root: Path) -> None:
    _fleet(root, _eager())
    other = _eager(budget={"usd": 1000})
    warm, fleet = _fleet(root, other)
    assert not _restored(fleet)
    shutil.rmtree(root.parent / "cache")
    assert warm == _fleet(root, other)[0]


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[:-10],
        lambda data: data[:20] + bytes([data[20] ^ 1]) + data[21:],
        lambda data: b"junk",
        lambda data: b"",
    ],
)
def test_a_damaged_checkpoint_is_ignored(root: Path, damage: Any) -> None:
    config = _eager()
    cold, _ = _fleet(root, config)
    for path in (root.parent / "cache" / "alerts").glob("*" + checkpoint.SUFFIX):
        path.write_bytes(damage(path.read_bytes()))
    warm, fleet = _fleet(root, config)
    assert not _restored(fleet) and warm == cold


def _resealed(data: bytes, body: bytes) -> bytes:
    """A checkpoint file holding ``body`` with a digest that matches it (what someone who can write the cache can
    make)."""
    import hashlib

    return checkpoint.MAGIC + hashlib.blake2b(body, digest_size=32).digest() + body


def _checkpointed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, test: Any) -> tuple[Path, Path, bytes]:
    """A Hypothesis test's log (made at its first example, in a cache of its own) and its alert checkpoint's path,
    with the checkpoint's bytes as the first example found them (kept on ``test``, as each example forges it)."""
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache"))
    log = tmp_path / "log" / "session.jsonl"
    if not log.exists():
        log.parent.mkdir(parents=True)
        shutil.copy(FIXTURES / "multi-turn.session.jsonl", log)
        _alerts([log], _eager())
    path = checkpoint.checkpoint_path(log, "alerts")
    if not hasattr(test, "original"):
        test.original = path.read_bytes()
    return log, path, test.original


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_a_forged_checkpoint_never_crashes_a_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: st.DataObject
) -> None:
    """A checkpoint whose digest matches but whose values are anything at all: restored only when every value has
    its field's type, never a crash (the rows and rules then run on what was restored)."""
    log, path, original = _checkpointed(tmp_path, monkeypatch, test_a_forged_checkpoint_never_crashes_a_read)
    meta, state = orjson.loads(original[len(checkpoint.MAGIC) + 32 :])
    scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text()
    tagged = st.recursive(
        scalars,
        lambda inner: st.builds(lambda tag, items: [tag, *items], st.sampled_from("ltqfsdo"), st.lists(inner, max_size=4))
        | st.builds(lambda name, items: ["o", name, *items], st.sampled_from(["Signals", "CacheBreak", "Alert", "X"]),
                    st.lists(inner, max_size=8)),  # fmt: skip
        max_leaves=20,
    )
    nodes = _nodes(state)
    at = data.draw(st.integers(0, len(nodes) - 1))
    forged = _replace(state, nodes[at], data.draw(tagged))
    path.write_bytes(_resealed(original, orjson.dumps([meta, forged])))
    config = _eager()
    found = checkpoint.read(log, "alerts", config, {})
    watch = AlertWatch(log, config)
    alerts = watch.poll(NOW, final=True)  # restored or read: either way an answer
    assert all(isinstance(a, Alert) for a in alerts)
    watch.engine.tick(LATER)
    if found is not None:
        assert type(found[0].signals) is Signals


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_a_forged_checkpoint_envelope_is_listed_by_cache_info(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, data: st.DataObject
) -> None:
    """A body with a matching digest that is no [identity, state] pair (a number: TypeError out of 'cache info'),
    or an identity whose values are anything: listed as unreadable or stale, never a crash; a negative size is no
    size."""
    log, path, original = _checkpointed(tmp_path, monkeypatch, test_a_forged_checkpoint_envelope_is_listed_by_cache_info)
    meta, state = orjson.loads(original[len(checkpoint.MAGIC) + 32 :])
    key = data.draw(st.sampled_from(sorted(meta)))
    forged = data.draw(_JSON | st.builds(lambda value: [{**meta, key: value}, state], _JSON | st.integers(-(2**40), -1)))
    path.write_bytes(_resealed(original, orjson.dumps(forged)))
    capsys.readouterr()
    assert main(["cache", "info", "--json"]) == 0
    [row] = orjson.loads(capsys.readouterr().out)["files"]
    assert row["state"] in ("unreadable", "stale", "valid")
    assert row["indexedBytes"] is None or row["indexedBytes"] >= 0


def _nodes(value: Any, at: tuple[int, ...] = ()) -> list[tuple[int, ...]]:
    """The paths of every value inside a tagged tree (a list's items after its tag)."""
    found = [at]
    if type(value) is list:
        for k, item in enumerate(value[1:], start=1):
            found += _nodes(item, (*at, k))
    return found


def _replace(value: Any, at: tuple[int, ...], new: Any) -> Any:
    if not at:
        return new
    copy = list(value)
    copy[at[0]] = _replace(value[at[0]], at[1:], new)
    return copy


@given(
    st.builds(
        Signals,
        seq=st.integers(-1, 10**9),
        last_time=st.none() | st.integers(0, 2**62),
        pressure=st.none() | st.tuples(st.floats(allow_nan=False, allow_infinity=False), st.integers(0, 10**9)),
        approvals=st.dictionaries(st.text(), st.integers(0, 10**9)),
        turn_usd=st.dictionaries(st.integers(0, 99), st.dictionaries(st.integers(0, 99), st.floats(0, 1e6))),
        calls=st.dictionaries(st.tuples(st.text(), st.text()), st.integers(0, 99)),
        cache_break=st.none() | st.builds(CacheBreak, st.integers(0, 99), st.none() | st.text(), st.floats(0, 1e9),
                                          st.none() | st.floats(0, 1e9)),  # fmt: skip
        cost_usd=st.floats(0, 1e9),
    )
)
def test_the_tagged_form_gives_back_what_it_was_given(signals: Signals) -> None:
    from collections import deque

    signals.spend = deque([(1, 0.5, 2), (3, 1.25, 4)])
    again = checkpoint._decode(orjson.loads(orjson.dumps(checkpoint._encode(signals))))
    assert again == signals and type(again.spend) is deque
    assert checkpoint._typed(again, Signals)


def test_cache_info_lists_and_clear_removes_checkpoints(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = root / "--w--" / "mixed" / "session.jsonl"
    assert main(["alerts", "--json", str(log)]) in (0, 1)
    capsys.readouterr()
    assert main(["cache", "info", "--json"]) == 0
    (row,) = orjson.loads(capsys.readouterr().out)["files"]
    assert row["kind"] == "alerts" and row["log"] == os.path.realpath(log) and row["state"] == "valid"
    with open(log, "ab") as f:
        f.write(b"\n")
    assert main(["cache", "info"]) == 0
    assert "stale (the log changed)" in capsys.readouterr().out
    assert main(["cache", "clear", str(log)]) == 0
    assert capsys.readouterr().out.startswith("removed 1 file(s)")
    assert not checkpoint_paths(log)
