"""The files people and other programs write that tapedeck parses, each given hostile bytes: a policy config (TOML
and JSON), ``keymap.toml``, ``tui.toml``, a scripted model's script, a DSH profile's ``cordis.patch.yml`` and the
plugin copy beside it, and a bridged session's ``bridge.standby.json``. Each reader answers with what it could use
or a message that names the file, never an exception (the log, the inbox, ``bridge.json``, the outcomes, the
notes sidecar, the index and the alert checkpoints have fuzzers of their own beside their tests).

The bytes: any, a valid file with a few bytes spliced in (a cut line, a stray quote, a byte that is not UTF-8),
text with control characters and lone surrogates, nesting past the parsers' depth, numbers past what int() takes.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import orjson
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from core.bridge.files import PLUGIN_FILE, STANDBY_FILE, packaged_plugin
from core.bridge.install import BEGIN, END, PATCH_FILE, BridgeInstallError, install, remove, status
from core.control.config import load_config
from core.control.host_state import read_host_state
from core.host.providers.errors import ProviderError
from core.host.providers.scripted import load_script
from core.shared.errors import ConfigError
from tests.bridge.conftest import dsh_log, write_bridge
from tui.keymap import load_keymap
from tui.settings import load_theme

MESSAGE = 2000  # characters a message about a file of a few hundred bytes needs at most (its path included)


def _spliced(seed: bytes, edits: list[tuple[int, bytes]]) -> bytes:
    out = bytearray(seed)
    for at, piece in edits:
        at %= len(out) + 1
        out[at : at + len(piece) % 3] = piece
    return bytes(out)


def hostile(*seeds: bytes) -> st.SearchStrategy[bytes]:
    """Bytes a damaged, forged or careless file holds, around the valid ``seeds``."""
    edits = st.lists(st.tuples(st.integers(0, 1 << 16), st.binary(max_size=6) | st.sampled_from(
        [b"\n", b'"', b"'", b"[", b"{", b"=", b"\xff", b"\xef\xbb\xbf", b"\x00", b"\r\n", b"\\u", b"9" * 5000])),
        max_size=4)  # fmt: skip
    return st.one_of(
        st.binary(max_size=200),
        st.builds(_spliced, st.sampled_from(seeds), edits),
        st.text(max_size=60).map(lambda t: t.encode("utf-8", "surrogatepass")),
        st.builds(lambda n, seed: seed[: len(seed) // 2] + b"[" * n + b"]" * n, st.integers(1, 3000), st.sampled_from(seeds)),
    )  # fmt: skip


def _said(message: str, path: Path) -> None:
    assert str(path) in message and len(message) < MESSAGE + len(str(path)), message[:400]


CONFIG = (b'[slice.history]\nkeepRecentTurns = 3\n[alerts.budget]\nusd = 1\naction = "pause"\n',
          b'{"slice": {"history": {"keepRecentTurns": 3}}, "alerts": {"loop": {"count": 4, "message": "x"}}}')  # fmt: skip


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=hostile(*CONFIG), name=st.sampled_from(["policy.toml", "policy.json"]))
def test_a_policy_config_of_any_bytes_loads_or_is_refused_naming_the_file(tmp_path: Path, raw: bytes, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(raw)
    try:
        config = load_config(path)
    except ConfigError as exc:
        _said(str(exc), path)
        assert str(exc).startswith(str(path))
        return
    assert orjson.dumps(config.to_dict())  # as the log's writer writes it


KEYMAP = (b'main.search = "ctrl+f"\nmain.export = "e,f3"\n', b'[main]\nsearch = "ctrl+f"\nexport = "e, f3"\n',
          b'theme = "textual-dark"\n')  # fmt: skip


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=hostile(*KEYMAP))
def test_a_keymap_or_settings_file_of_any_bytes_gives_keys_or_problems_naming_it(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "keymap.toml"
    path.write_bytes(raw)
    keymap, problems = load_keymap(path, ["main.search", "main.export"])
    for problem in problems:
        _said(problem, path)
    assert all(keys and keys.isprintable() for keys in keymap.values()), keymap
    theme, problem = load_theme(path)
    assert theme is None or (problem is None and isinstance(theme, str))
    if problem is not None:
        _said(problem, path)


SCRIPT = (b'{"model": "m", "responses": [{"text": "done"}]}',
          b'{"plans": [{"prompt": "p", "responses": [{"toolCalls": [{"name": "bash", "arguments": {"command": "ls"}}]},'
          b' {"text": "ok"}]}]}')  # fmt: skip


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=hostile(*SCRIPT))
def test_a_script_of_any_bytes_plays_or_is_refused_naming_the_file(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "script.json"
    path.write_bytes(raw)
    try:
        load_script(path)
    except ProviderError as exc:
        _said(str(exc), path)


PATCH = (b"# my patches\n- id: a\n  config: {x: 1}\n", b"[]\n",
         b"---\n" + BEGIN.encode() + b"\n- id: tapedeck-bridge\n" + END.encode() + b"\n", b"- id: b  # c\n\n")  # fmt: skip
VERSIONS = st.sampled_from([b"0.1.0", b"9.9.9", b"9" * 5000, b"", b"x", b"1..2", b"\xff"])


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=hostile(*PATCH), copy=st.none() | VERSIONS | hostile(b'const VERSION = "0.1.0";'))
@example(raw=b"\x0b[]", copy=None)  # a `[]` with a space before it (found by the CI): given back as `[]`
@example(raw=b"[] \n", copy=None)
def test_a_dsh_profile_of_any_bytes_is_installed_into_or_refused_and_removal_gives_it_back(
    tmp_path_factory, raw: bytes, copy: bytes | None
) -> None:
    """Install, status and remove on a profile whose patch file (and, maybe, plugin copy) holds anything: each
    works or refuses with BridgeInstallError; a file install added to, remove gives back byte for byte."""
    home = tmp_path_factory.mktemp("home")
    web = home / "profiles" / "web"
    web.mkdir(parents=True)
    (web / PATCH_FILE).write_bytes(raw)
    if copy is not None:
        source = packaged_plugin().read_bytes()
        (web / PLUGIN_FILE).write_bytes(source.replace(b'"0.1.0"', b'"' + copy + b'"', 1) if len(copy) < 50 else copy)
    status(home)
    try:
        install(home)
    except BridgeInstallError as exc:
        assert str(exc)
        return
    status(home)
    remove(home)
    if b"tapedeck-bridge" not in raw and copy is None:
        assert (web / PATCH_FILE).read_bytes() == raw
    status(home)
    shutil.rmtree(home)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=hostile(b'{"pid": 1, "procStart": "123"}', b'{"pid": 18446744073709551616, "procStart": "9"}'))
def test_a_standby_file_of_any_bytes_beside_a_live_bridge_never_breaks_the_host_state(tmp_path_factory, raw: bytes) -> None:
    log = dsh_log(tmp_path_factory.mktemp("s") / "s")
    write_bridge(log.parent, os.getpid(), "running")  # this process stands for the DSH it names: live
    (log.parent / STANDBY_FILE).write_bytes(raw)
    state = read_host_state(log)
    assert state.live and state.state == "running"
    standby = (state.bridge or {}).get("standby")
    assert standby is None or (isinstance(standby, int) and standby != os.getpid())


def test_every_seed_is_a_file_its_reader_takes_whole(tmp_path: Path) -> None:
    """The fuzzers splice their hostile bytes into these seeds: a seed its reader refuses leaves the reading past
    the refusal unfuzzed (the config seeds named a retired key, and the keymap's first declared [main] twice, so no
    spliced config reached a section's values and no spliced keymap ever gave a key)."""
    for name, raw in zip(("policy.toml", "policy.json"), CONFIG, strict=True):
        (tmp_path / name).write_bytes(raw)
        assert load_config(tmp_path / name).to_dict()
    for raw in KEYMAP[:2]:
        (tmp_path / "keymap.toml").write_bytes(raw)
        assert load_keymap(tmp_path / "keymap.toml", ["main.search", "main.export"]) == (
            {"main.search": "ctrl+f", "main.export": "e,f3"}, [])
    (tmp_path / "tui.toml").write_bytes(KEYMAP[2])
    assert load_theme(tmp_path / "tui.toml") == ("textual-dark", None)
    for raw in SCRIPT:
        (tmp_path / "script.json").write_bytes(raw)
        load_script(tmp_path / "script.json")
