"""The HTML export in a real headless Chromium (the OS package ``chromium``, installed by ``.ci/run``): every DSH
fixture and a demo host's log, each with a note and planted secrets, loads with no console message and no
network request, and the DOM it dumps holds every row, the final answer, the note and none of the secrets."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from bench.readers import host_log
from core.cli import main
from tests.conftest import FIXTURES

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
LOGS = sorted(FIXTURES.glob("*.jsonl"))
KEY = "sk-proj-Zq81xVb2LmN0pQr5StUv7WxYz"
EMAIL = "operator.name@example.org"
ENV_VALUE = "tdplanted-7fj2k9q1x"
NOTE = "look here: the run went sideways"


class _Text(HTMLParser):
    """The text of a page, as a reader sees it (script and style left out)."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.skip += tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self.skip -= tag in ("script", "style")

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)


def _chromium(page: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
            f"--user-data-dir={page.parent / 'profile'}", "--host-resolver-rules=MAP * ~NOTFOUND", *args,
            page.as_uri()]  # fmt: skip
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True)  # type: ignore[arg-type]


def _probe(page: Path, probe: str, unlisted: str = "") -> None:
    """Put ``probe`` (a ``<script>`` and the ``</body>`` it ends) at the end of ``page``'s body, with ``unlisted``
    before it, and the probe's hash in the page's Content-Security-Policy, which lets only the page's own script
    run: the probe runs, ``unlisted`` is what a log's text would be if it slipped past escaping."""
    script = probe.split("<script>", 1)[1].split("</script>", 1)[0]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    text = page.read_text(encoding="utf-8").replace("script-src ", f"script-src 'sha256-{digest}' ", 1)
    page.write_text(text.replace("</body>", unlisted + probe), encoding="utf-8")


def _final_answer(doc: dict[str, object]) -> str:
    answers = [r for r in doc["events"] if r["type"] == "assistant/message" and r.get("text", {}).get("text")]  # type: ignore[union-attr, index]
    return answers[-1]["text"]["text"].split("\n")[0][:60] if answers else ""  # type: ignore[index]


def _check(log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TD_PLANTED_SECRET", ENV_VALUE)
    seq = 4
    assert main(["note", str(log), "--seq", str(seq), f"{NOTE} {KEY} {EMAIL} {ENV_VALUE}"]) == 0
    capsys.readouterr()
    assert main(["export", str(log), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    page = tmp_path / "export.html"
    assert main(["export", str(log), "-o", str(page)]) == 0
    page_text = page.read_text(encoding="utf-8")
    assert "http://" not in page_text.split("</head>")[0] and 'src="http' not in page_text
    run = _chromium(page, "--dump-dom")
    dom = run.stdout
    console = [line for line in run.stderr.splitlines() if "CONSOLE" in line or "Refused" in line or "net::" in line]
    assert console == []
    assert dom.count('<li id="e') == doc["rows"] == len(doc["events"])
    reader = _Text()
    reader.feed(dom)
    text = " ".join(" ".join(reader.parts).split())
    assert f"events {doc['session']['events']}" in text  # type: ignore[index]
    assert " ".join(_final_answer(doc).split()) in text
    assert NOTE in text
    for secret in (KEY, EMAIL, ENV_VALUE):
        assert secret not in dom
    shot = tmp_path / "shot.png"
    _chromium(page, f"--screenshot={shot}", "--window-size=1280,1600")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("log", LOGS, ids=[p.name.split(".session")[0] for p in LOGS])
def test_every_fixture_renders_in_chromium(
    log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / log.name
    copy.write_bytes(log.read_bytes())
    _check(copy, tmp_path, monkeypatch, capsys)


def test_a_demo_host_log_renders_in_chromium(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = host_log(tmp_path / "demo")
    _check(log, tmp_path, monkeypatch, capsys)
    if os.environ.get("TAPEDECK_UPDATE_SCREENSHOTS"):
        target = Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "export-html.png"
        shutil.copy(tmp_path / "shot.png", target)


def test_the_search_box_hides_the_rows_that_do_not_match(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Typing in the search box takes the rows that do not match off the page, as Chromium lays it out (a row only
    flagged ``hidden`` but still drawn is no search), and clearing it brings them back. The page's script runs
    under its Content-Security-Policy, and a script or an event handler that a log's text made, had it slipped past
    escaping, does not."""
    log = FIXTURES / "multi-turn.session.jsonl"
    page = tmp_path / "export.html"
    assert main(["export", str(log), "-o", str(page), "--no-redact"]) == 0
    capsys.readouterr()
    probe = """<script>{const q=document.getElementById("q");const rows=[...document.querySelectorAll("ol.events>li")];
const shown=()=>rows.filter(li=>li.getClientRects().length>0).length;const seen=[rows.length];
for(const t of ["tool","zz-matches-nothing",""]){q.value=t;q.dispatchEvent(new Event("input"));
seen.push(shown(),rows.filter(li=>li.textContent.toLowerCase().includes(t)).length);}
document.body.dataset.probe=seen.join(" ");}</script></body>"""
    _probe(page, probe, """<script>document.body.dataset.ran="script"</script>
<img src="data:," onerror="document.body.dataset.ran='handler'">""")
    dom = _chromium(page, "--dump-dom").stdout
    assert "data-ran" not in dom
    total, shown, matching, *rest = map(int, dom.split('data-probe="')[1].split('"')[0].split())
    assert 0 < matching < total
    assert [shown, *rest] == [matching, 0, 0, total, total]


def test_a_note_of_several_lines_shows_them_on_the_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A note's line breaks and indentation survive on the page, as Chromium lays it out (``innerText``), under its
    event and in the list of notes; its markup is text (escaped, no element made of it)."""
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    log = tmp_path / "s.jsonl"
    log.write_bytes((FIXTURES / "tool-call-turn.session.jsonl").read_bytes())
    note = "first line\n  indented <b>not bold</b>\n\nafter a blank line"
    assert main(["note", str(log), "--seq", "4", note]) == 0
    page = tmp_path / "export.html"
    assert main(["export", str(log), "-o", str(page), "--no-redact"]) == 0
    capsys.readouterr()
    probe = """<script>document.body.dataset.probe=JSON.stringify([...document.querySelectorAll(".note")]
.map(n=>[n.innerText,n.querySelectorAll("b").length]));</script></body>"""
    _probe(page, probe)
    dom = _chromium(page, "--dump-dom").stdout
    shown = json.loads(html.unescape(dom.split('data-probe="')[1].split('"')[0]))
    assert shown == [["✎ " + note, 0], [note, 0]]


def test_a_long_word_wraps_instead_of_widening_the_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A path, a token or a run of output with no space in it (a message, a tool result, a note) wraps in the
    event list and the surface table, as Chromium lays the page out: it used to widen the page past the window,
    pushing the sizes off screen behind a horizontal scroll bar."""
    from tests.export.planted import plant

    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    long = "/very/long/" + "segment_without_spaces_" * 20
    log = plant(tmp_path / "s.jsonl", long, "x" * 3000, "A" * 500)
    assert main(["note", str(log), "--seq", "4", "y" * 400]) == 0
    page = tmp_path / "export.html"
    assert main(["export", str(log), "-o", str(page), "--no-redact"]) == 0
    capsys.readouterr()
    probe = """<script>document.body.dataset.probe=[document.documentElement.scrollWidth,window.innerWidth].join(" ");
</script></body>"""
    _probe(page, probe)
    dom = _chromium(page, "--dump-dom", "--window-size=1000,800").stdout
    wide, window = map(int, dom.split('data-probe="')[1].split('"')[0].split())
    assert wide <= window


def test_the_page_s_title_names_the_session_and_the_moment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every page was titled 'tapedeck export', so a reviewer's tabs could not be told apart: the title (what
    Chromium reads as ``document.title``) is now the session's title, else its id, and the moment of ``--at``,
    redacted as the page is, its markup text. It is the page's one ``<title>``, in its head: the streaming export
    wrote it after the event list, which put it in the body (invalid HTML). The title is the session's last one,
    also when the session was renamed past the first megabytes of rows."""
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    source = (FIXTURES / "tool-call-turn.session.jsonl").read_text()
    titled, untitled, renamed = tmp_path / "titled.jsonl", tmp_path / "untitled.jsonl", tmp_path / "renamed.jsonl"
    titled.write_text(source.replace('"title":"Use the bash tool to"', f'"title":"Fix <b>it</b> & {KEY}"'))
    untitled.write_text("".join(line for line in source.splitlines(True) if '"session/title"' not in line))
    rename = json.dumps({"seq": 104, "time": 0, "type": "session/title",
                         "data": {"title": "Renamed late", "messageSeqs": [4], "source": {"kind": "user"}}})  # fmt: skip
    bulk = "".join(json.dumps({"seq": 105 + i, "time": 0, "type": "goal/change", "data": {"note": "x" * 4000}}) + "\n"
                   for i in range(600))  # fmt: skip
    renamed.write_text(source + rename + "\n" + bulk)
    probe = """<script>document.body.dataset.title=document.title+"|"+
[...document.getElementsByTagNameNS("http://www.w3.org/1999/xhtml","title")].map(t=>t.parentElement.tagName).join(",");</script></body>"""
    seen = []
    for log, argv in ((titled, ["--at", "70"]), (untitled, []), (renamed, [])):
        page = tmp_path / f"{log.stem}.html"
        assert main(["export", str(log), "-o", str(page), *argv]) == 0
        _probe(page, probe)
        dom = _chromium(page, "--dump-dom").stdout
        seen.append(html.unescape(dom.split('data-title="')[1].split('"')[0]))
    capsys.readouterr()
    assert seen[0].startswith("Fix <b>it</b> & ") and seen[0].endswith(" · at seq 70 · tapedeck export|HEAD")
    assert KEY not in seen[0] and "sk-" not in seen[0]
    assert seen[1] == "e9421ff4-baae-4807-a7ea-fd8a65f2c897 · tapedeck export|HEAD"
    assert seen[2] == "Renamed late · tapedeck export|HEAD"


def test_a_filtered_export_shows_only_the_matching_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``export --type tool/`` (the TUI's filter, as ``X`` passes it): Chromium lays out only the rows the filter
    lets through, the header names the filter, no console message, and every link on the page leads to an element
    it has (a surface node or a note on a row left out is its seq as text)."""
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    log = tmp_path / "s.jsonl"
    log.write_bytes((FIXTURES / "multi-turn.session.jsonl").read_bytes())
    assert main(["note", str(log), "--seq", "4", NOTE]) == 0
    page = tmp_path / "export.html"
    assert main(["export", str(log), "-o", str(page), "--type", "turn/,user/message", "--no-redact"]) == 0
    capsys.readouterr()
    probe = """<script>{const rows=[...document.querySelectorAll("ol.events>li")].filter(li=>li.getClientRects().length);
const dead=[...document.querySelectorAll('a[href^="#"]')].filter(a=>!document.getElementById(a.hash.slice(1)));
document.body.dataset.probe=JSON.stringify([rows.map(li=>li.dataset.type),dead.length]);}</script></body>"""
    _probe(page, probe)
    run = _chromium(page, "--dump-dom")
    assert [line for line in run.stderr.splitlines() if "CONSOLE" in line or "Refused" in line] == []
    types, dead = json.loads(html.unescape(run.stdout.split('data-probe="')[1].split('"')[0]))
    assert types and set(types) == {"turn/start", "turn/end", "user/message"}, types
    assert dead == 0
    reader = _Text()
    reader.feed(run.stdout)
    assert "filter type turn/|user/message (" in " ".join(" ".join(reader.parts).split())
