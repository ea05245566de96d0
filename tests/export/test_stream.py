"""The big sections (the surface's rows, the request's messages) are written one at a time, and the bytes are
those of the whole document: the JSON is ``orjson``'s indented dump of the document, the HTML of two fixtures is
pinned byte for byte (``TAPEDECK_UPDATE_GOLDEN=1`` rewrites it; review the diff), and every format's redaction
summary counts what redacting the request replaced, though the HTML and Markdown write it first."""

from __future__ import annotations

import io
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest

from bench.gen_session import generate
from core.cli import main
from core.export import build, spool
from core.export.build import ExportOptions
from core.export.redact import Redactor
from core.export.write import export
from core.log.linestore import LineStore
from core.read.load import load_session
from tests.conftest import FIXTURES
from tests.export.planted import plant

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "export"
LOGS = sorted(FIXTURES.glob("*.jsonl"))
MOMENTS = {"end": {}, "at": {"at": 60}, "turn": {"turn": 1, "step": 1}, "start": {"at": 1}}


@pytest.fixture(autouse=True)
def _no_outside_notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))


def _export(log: Path, fmt: str, redactor: Redactor | None = None, **moment: Any) -> bytes:
    out = io.BytesIO()
    export(log, out, fmt, ExportOptions(redactor=redactor, **moment))
    return out.getvalue()


def _whole(doc: dict[str, Any]) -> bytes:
    """The export as one dump of the whole document writes it: the rows one a line, then the sections indented."""
    rows = b",\n".join(orjson.dumps(row) for row in doc.pop("events"))
    return b'{"events": [' + (b"\n" + rows if rows else b"") + b"\n],\n" + orjson.dumps(doc, option=orjson.OPT_INDENT_2)[1:].lstrip() + b"\n"


@pytest.mark.parametrize("moment", MOMENTS)
@pytest.mark.parametrize("log", LOGS, ids=[p.name.split(".session")[0] for p in LOGS])
def test_json_is_the_whole_document_as_orjson_indents_it(log: Path, moment: str) -> None:
    for redactor in (None, Redactor(environ={}, home="/home/nobody")):
        try:
            data = _export(log, "json", redactor, **MOMENTS[moment])
        except Exception as exc:  # a moment this log does not have
            assert "not in this log" in str(exc) or "made no model request" in str(exc)
            return
        doc = orjson.loads(data)
        assert data == _whole(doc)
        assert list(doc)[-1] == "redaction"


@pytest.mark.parametrize(("name", "moment"), [("tool-call-turn", "end"), ("code-mode-turn", "at")])
def test_html_is_pinned(name: str, moment: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    page = _export(Path(f"tests/fixtures/dsh/{name}.session.jsonl"), "html", **MOMENTS[moment])
    golden = GOLDEN / f"{name}.{moment}.html"
    if os.environ.get("TAPEDECK_UPDATE_GOLDEN"):
        golden.write_bytes(page)
    assert page == golden.read_bytes()


def test_every_format_counts_the_redactions_of_the_surface_and_the_request(tmp_path: Path) -> None:
    """The planted key is in the user message: its event-list row, its surface row and the request's copy of it
    are each redacted, so the HTML and JSON summaries count three keys; the Markdown, which shows the row alone
    (the request's messages never, the surface only at a moment), counts one."""
    log = plant(tmp_path / "planted.jsonl", user="sk-" + "a1B2" * 8, result="nothing here", answer="done")
    summaries = {}
    for fmt in ("json", "html", "md"):
        text = _export(log, fmt, Redactor(environ={}, home="/home/nobody")).decode()
        assert "sk-a1B2" not in text
        if fmt == "json":
            summaries[fmt] = orjson.loads(text)["redaction"]
        else:
            said = re.search(r"redacted: ((?:\d+ \w+(?:, )?)+)", text)
            assert said is not None
            summaries[fmt] = {kind: int(n) for n, kind in (part.split() for part in said.group(1).split(", "))}
    assert summaries["json"] == {"key": 3, "env": 0, "email": 0, "home": 0}
    assert summaries["html"] == summaries["json"]
    assert summaries["md"] == {"key": 1, "env": 0, "email": 0, "home": 0}


@pytest.mark.parametrize("fmt", ["html", "json", "md"])
def test_a_log_never_cut_is_read_once(fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While no cut came, every node applied is still on the surface at the end: the pass keeps what the surface
    and request sections write of each node, so they read no event back from the log (the same bytes as when
    they do: the JSON equals the whole document's dump, and a kept node and one read back make the same row).
    Nor is the first delta of a model stream read back, which heads its row: the decoder projects runs of deltas
    without building them, and the store makes a run's first event from the line the decoder parsed."""
    log = tmp_path / "never-cut.jsonl"
    generate(log, 400_000, seed=2, profile="dsh-plain")
    reads = []
    raw = LineStore.raw
    monkeypatch.setattr(LineStore, "raw", lambda store, seq: reads.append(seq) or raw(store, seq))
    heads = []
    run_head = LineStore.run_head
    monkeypatch.setattr(LineStore, "run_head", lambda store, seq: heads.append(seq) or run_head(store, seq))
    data = _export(log, fmt, Redactor(environ={}, home="/home/nobody"))
    assert reads == [] and len(heads) > 10
    if fmt == "json":
        assert data == _whole(orjson.loads(data))
        assert len(orjson.loads(data)["request"]["messages"]) > 20


@pytest.mark.parametrize("fmt", ["html", "json"])
def test_a_spool_file_that_cannot_be_written_is_a_clear_error(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    monkeypatch.setattr(spool, "SPOOL_MEMORY", 1)  # every spool goes to a file at its first write
    assert main(["export", str(FIXTURES / "tool-call-turn.session.jsonl"), "--format", fmt]) == 2
    assert f"cannot write the export's spool file in {tmp_path / 'missing'} (No such file or directory)" in capsys.readouterr().err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
@pytest.mark.parametrize("fmt", ["html", "json", "md"])
@pytest.mark.parametrize("to", ["stdout", "-o"])
def test_a_full_output_is_not_called_a_spool_file_error(fmt: str, to: str) -> None:
    """``export LOG > /dev/full`` (or ``-o /dev/full``) said 'cannot write the export's spool file in /tmp (No space
    left on device)': the spool's guard took every OSError raised while a spool was open, the output's included."""
    import subprocess
    import sys

    where = ["-o", "/dev/full"] if to == "-o" else []
    with open("/dev/full", "wb") as full:
        done = subprocess.run([sys.executable, "-m", "core.cli", "export", str(FIXTURES / "tool-call-turn.session.jsonl"),
                               "--format", fmt, *where], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)  # fmt: skip
    said = "/dev/full: cannot write" if to == "-o" else "could not write its output"
    assert (done.returncode, done.stderr) == (2, f"tapedeck: {said} ({os.strerror(28)})\n")


@pytest.mark.parametrize("fmt", ["html", "json", "md"])
def test_runs_of_deltas_export_as_the_deltas_one_by_one(fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pass takes runs of stream deltas whole (the decoder builds none of their events); the export is the
    same bytes as when the pass is told of each delta, also at a moment inside a stream and around a packed row."""
    log = tmp_path / "streams.jsonl"
    generate(log, 300_000, seed=5, profile="dsh-plain")
    events = load_session(log).events
    inside = next(seq for seq in range(1, len(events)) if events[seq]["type"] == events[seq - 1]["type"] == "assistant/chunk")
    moments: list[dict[str, Any]] = [{}, {"at": inside}]
    runs = [_export(log, fmt, Redactor(environ={}, home="/home/nobody"), **moment) for moment in moments]
    monkeypatch.setattr(build, "load_session", lambda *a, **kw: load_session(*a, **{**kw, "deltas": None}))
    ones = [_export(log, fmt, Redactor(environ={}, home="/home/nobody"), **moment) for moment in moments]
    assert runs == ones


def test_a_streams_first_delta_is_not_counted_as_redacted(tmp_path: Path) -> None:
    """A model stream's row shows none of its first delta's text (its size and delta count alone), so a key in
    that delta is in no export and the summary counts nothing for it, as for the stream's other deltas."""
    key = "sk-" + "a1B2" * 8
    lines = [orjson.loads(line) for line in (FIXTURES / "tool-call-turn.session.jsonl").read_bytes().splitlines()]
    head = next(item for item in lines if item.get("type") == "assistant/chunk")
    head["data"]["chunk"] = {"type": "text-delta", "index": 0, "text": f"the key is {key}"}
    log = tmp_path / "streamed.jsonl"
    log.write_bytes(b"\n".join(orjson.dumps(item) for item in lines) + b"\n")
    for fmt in ("json", "html", "md"):
        text = _export(log, fmt, Redactor(environ={}, home="/home/nobody")).decode()
        assert key not in text
        if fmt == "json":
            assert orjson.loads(text)["redaction"]["key"] == 0
        else:
            assert re.search(r"redacted: 0 key\b", text) or "redacted:" not in text, fmt
