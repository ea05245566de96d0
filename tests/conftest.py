"""Shared test fixtures: where the real DSH logs are, and host hygiene (a test closes every host it starts, and
every process it starts is gone when it ends)."""

from __future__ import annotations

import contextlib
import gc
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from tests.procs import proc_stat as proc_stat  # the tests import it from here as well
from tests.procs import process_gone as process_gone

# Tests assert behaviour, never time: Hypothesis's default deadline (200 ms an example) is a wall-clock check that a
# loaded machine fails at random, so no property test has one. Each run of the suite tries the same examples
# (derandomize: seeded from each test's code), so a rare example that one run happens to draw cannot fail that run
# and pass the next: a CI run is decided by the code. TAPEDECK_HYPOTHESIS=explore draws new examples every run, as
# a fuzzing session does; what it finds becomes an ``@example`` of its test.
settings.register_profile("tapedeck", deadline=None, derandomize=True)
settings.register_profile("explore", deadline=None)
settings.load_profile("explore" if os.environ.get("TAPEDECK_HYPOTHESIS") == "explore" else "tapedeck")

# Real DSH session logs, copied into the repository with their license and provenance (README.md there).
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "dsh"


@pytest.fixture
def anyio_backend() -> str:
    """Every async test runs on asyncio, as Textual and the host do: the anyio plugin would otherwise run each on
    every backend installed (trio too, where some other package brought it in), where they cannot work."""
    return "asyncio"


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The directory of real DSH session logs in ``tests/fixtures/dsh``."""
    assert FIXTURES.is_dir(), f"DSH fixtures missing from the checkout: {FIXTURES}"
    return FIXTURES


@pytest.fixture(scope="session")
def never_cut_logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two generated DSH logs that are never compacted (``dsh-plain``: every request carries about every message
    of the log), of ~1.5 MB and ~12 MB, written once for the test run: the memory tests run commands on them in
    processes of their own with an empty cache each, and none writes into their folder."""
    from bench.gen_session import generate

    root = tmp_path_factory.mktemp("never-cut")
    small, large = root / "dsh-plain-1500000.jsonl", root / "dsh-plain-12000000.jsonl"
    for path in (small, large):
        generate(path, int(path.stem.rsplit("-", 1)[1]), seed=4, profile="dsh-plain")
    return small, large


@pytest.fixture
def decoder_feeds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the bytes every log decoder of the test is fed, in order (how much of a log a command read)."""
    from core.log.decoder import LogDecoder

    fed: list[int] = []
    feed = LogDecoder.feed

    def counted(self: LogDecoder, data: bytes) -> Any:
        fed.append(len(data))
        return feed(self, data)

    monkeypatch.setattr(LogDecoder, "feed", counted)
    return fed


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The logs' index files (``core.read.index``) go to a cache of the test run's own, never to ~/.cache: set in
    the environment, so the processes tests start use it too."""
    before = os.environ.get("TAPEDECK_CACHE_DIR")
    os.environ["TAPEDECK_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if before is None:
        del os.environ["TAPEDECK_CACHE_DIR"]
    else:
        os.environ["TAPEDECK_CACHE_DIR"] = before


@pytest.fixture(autouse=True)
def _private_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test has a tapedeck home of its own (``TAPEDECK_HOME``: notes kept by session, the keymap, the default
    sessions root), never the real one: a note a test puts on a fixture's session follows that session, so it
    showed in every later test (and run) that opened the fixture, a snapshot's detail pane included."""
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path_factory.mktemp("home")))


@pytest.fixture(autouse=True)
def _nothing_left_frozen() -> Iterator[None]:
    """What a test froze goes back to the collector when it ends. The TUI's follower freezes the whole heap after
    each load (``core.log.bulk.gc_paused``), which the app's ``FollowGC`` undoes when it exits; a harness running
    the follower without the app (``PolicyHarness``, a ``LiveSession`` alone) left it frozen, so a worker kept every
    such test's app and garbage for good (20,000 objects and 3.5 MB a test), and the next thaw (a reload's
    ``FollowGC``) made one collection walk all of them."""
    yield
    if gc.get_freeze_count():
        gc.unfreeze()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """An xdist worker collects the run's garbage, then freezes the heap, before it tells the controller it is done.
    The controller then gives it 5 s to end (execnet) before it interrupts its main thread with a SIGINT, and pytest's
    own cleanup after that point runs five full collections: at load 20+ each took 1-2 s over a worker's 200,000
    objects, the SIGINT landed in Hypothesis's gc callback, and every run ended in that KeyboardInterrupt's trace.
    Collected here (as pytest collects: until nothing is left, five times at most, an unraisable exception still
    reported) and frozen, those later collections have nothing to walk."""
    if not hasattr(session.config, "workerinput"):
        return
    for _ in range(5):
        if not gc.collect():
            break
    gc.freeze()


@pytest.fixture(autouse=True)
def _simulated_hosts_exit() -> Iterator[None]:
    """Logs the TUI tests write get a live (simulated) host for the test's duration only."""
    yield
    from tests.tui.logs import release_hosts

    release_hosts()


HOST_THREADS = ("tapedeck-inbox", "prolong")  # what a host runs beside the loop until ``close``


def host_threads_left(before: set[threading.Thread], bound: float = 60.0) -> list[str]:
    """The names of the host threads started since ``before`` that still run after ``bound`` s. Each is joined
    as it stops, so this returns once the last has (at once when none runs): a closed host's threads may take
    seconds to see the close on a loaded machine, and only one that outlives the bound is left running."""
    deadline = time.monotonic() + bound
    while left := [t for t in threading.enumerate() if t not in before and t.name.startswith(HOST_THREADS)]:
        left[0].join(max(0.0, deadline - time.monotonic()))
        if time.monotonic() >= deadline:
            return sorted(t.name for t in left if t.is_alive())
    return []


@pytest.fixture(autouse=True)
def _hosts_are_closed() -> Iterator[None]:
    """Fail a test that leaves a host's inbox watcher or prolong writer running (it never closed the host)."""
    before = set(threading.enumerate())
    yield
    if left := host_threads_left(before):
        pytest.fail(f"the test left host threads running (close its hosts): {', '.join(left)}")


class Processes:
    """The processes a test starts, each in a session of its own: ``close`` kills every one still running with its
    whole process group (the shell commands a host started too) and reaps it."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen[Any]] = []

    def start(self, args: Sequence[str], **kwargs: Any) -> subprocess.Popen[Any]:
        """``subprocess.Popen(args, **kwargs)`` in a new session, killed when the test ends."""
        proc: subprocess.Popen[Any] = subprocess.Popen(args, start_new_session=True, **kwargs)
        self.started.append(proc)
        return proc

    def close(self) -> None:
        for proc in self.started:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            for pipe in (proc.stdin, proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()


def allocated_peak(call: Callable[[], object]) -> int:
    """The most memory ``call`` held at once beyond what was held before it (bytes, ``tracemalloc``)."""
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# The Python interpreters by the names they are installed under: python, python3, python3.12, pypy3, pypy3.10 …
INTERPRETER = re.compile(r"(?:python|pypy)(?:[23](?:\.[0-9]+)?)?")
# Programs that run the first word after their own options (and, for ``env``, its ``NAME=VALUE`` settings), each
# with those of its options that take the next word as their value (``env -u NAME``, or ``-uNAME``, ``--unset=NAME``);
# ``exec`` and ``command`` as a shell script runs them.
WRAPPERS = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string", "-a", "--argv0"}),
    "unshare": frozenset({"-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd", "--propagation",
                          "--setgroups", "--map-user", "--map-group", "--map-users", "--map-groups"}),
    "setsid": frozenset(),
    "nohup": frozenset(),
    "exec": frozenset({"-a"}),
    "command": frozenset(),
}  # fmt: skip
# Shells, whose ``-c SCRIPT`` runs the commands of SCRIPT; ``-o NAME`` (``+o NAME``) is their option with a value
SHELLS = frozenset({"sh", "bash", "dash", "ksh", "mksh", "zsh", "ash"})
# What separates a script's commands, and the words before a command that are no command
SEPARATORS = frozenset({";", "&", "&&", "|", "||", "|&", "(", ")", ";;", "\n"})
RESERVED = frozenset(
    {"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "time"}
)
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _valued_option(arg: str, valued: frozenset[str]) -> tuple[str | None, str | None]:
    """The option of ``valued`` that option word ``arg`` (``-iu``, ``-uNAME``, ``--unset``, ``--unset=NAME``) gives,
    None when none, and its value when the word holds it (None: the next word is the value)."""
    if arg.startswith("--"):
        name, equals, value = arg.partition("=")
        return (name, value if equals else None) if name in valued else (None, None)
    # a cluster of short options: the first that takes a value ends it
    for at, letter in enumerate(arg[1:], 1):
        if f"-{letter}" in valued:
            return f"-{letter}", arg[at + 1 :] or None
    return None, None


def _shell_commands(words: list[str]) -> tuple[list[str], int]:
    """The programs a shell started with ``words`` after its name runs when they give it ``-c SCRIPT``, and how many
    of the words its options and the script take (the words after them are ``$0`` and the script's arguments)."""
    command_mode, at = False, 0
    while at < len(words) and words[at][:1] in ("-", "+") and words[at] not in ("-", "+"):
        arg = words[at]
        at += 1
        if arg == "--":
            break
        if arg.startswith("--"):  # a long option (--login, --norc)
            continue
        command_mode = command_mode or (arg[0] == "-" and "c" in arg)
        if arg.endswith("o"):  # -o NAME, +o NAME
            at += 1
    if not command_mode or at >= len(words):
        return [], at
    return script_commands(words[at]), at + 1


def script_commands(script: str) -> list[str]:
    """The programs shell script ``script`` names as commands: the first word of each command (after its
    ``NAME=VALUE`` settings and a word such as ``then`` or ``do``), and what those run in turn (``exec python3``,
    ``env -u NAME python3``, ``sh -c …``). A script the shell lexer cannot split (an open quote) counts each word as
    a command, so nothing in it is missed."""
    lexer = shlex.shlex(script, posix=True, punctuation_chars=";&|()<>\n")
    lexer.whitespace, lexer.whitespace_split = " \t\r", True
    try:
        words = list(lexer)
    except ValueError:
        return script.split()
    commands: list[str] = []
    simple: list[str] = []
    for word in [*words, ";"]:
        if word not in SEPARATORS:
            simple.append(word)
            continue
        while simple and (simple[0] in RESERVED or ASSIGNMENT.match(simple[0])):
            simple.pop(0)
        if simple and simple[0] not in ("for", "case", "select"):  # their words are no commands
            commands += commands_run(simple)
        simple = []
    return commands


def commands_run(argv: Sequence[str]) -> list[str]:
    """The words of ``argv`` that name a program it runs: the first, the first after each ``--`` (the command a shell
    wrapper's script execs: ``sh -c SCRIPT sh … -- COMMAND``), the first after a wrapper's own options (and their
    values) and, for ``env``, its ``NAME=VALUE`` settings (``unshare --mount COMMAND``, ``env -u NAME COMMAND``), and
    the programs a shell's ``-c SCRIPT`` runs (``script_commands``)."""
    commands: list[str] = []
    words = list(argv)
    expect = True  # the next word names a program
    wrapper: str | None = None  # the wrapper whose options are being read
    at = 0
    while at < len(words):
        arg = words[at]
        at += 1
        if arg == "--":
            expect, wrapper = True, None
        elif not expect:
            continue
        elif wrapper is not None and (arg.startswith("-") or "=" in arg):
            option, value = _valued_option(arg, WRAPPERS[wrapper]) if arg.startswith("-") else (None, None)
            if option is not None and value is None and at < len(words):
                value, at = words[at], at + 1
            if wrapper == "env" and option in ("-S", "--split-string") and value is not None:
                words[at:at] = _split(value)  # its words stand in its place
        else:
            commands.append(arg)
            name = os.path.basename(arg)
            wrapper, expect = (name, True) if name in WRAPPERS else (None, False)
            if name in SHELLS:
                run, took = _shell_commands(words[at:])
                commands += run
                at += took
    return commands


def _split(line: str) -> list[str]:
    """``line`` split into words as the shell splits them; at white space when it cannot be (an open quote)."""
    try:
        return shlex.split(line)
    except ValueError:
        return line.split()


def runs_python(argv: Sequence[str]) -> bool:
    """Whether ``argv``, as a process was really started with it, runs a Python process: a program it runs
    (``commands_run``) is this interpreter, one named as Python interpreters are (``INTERPRETER``), or tapedeck's
    console script."""
    for command in commands_run(argv):
        name = os.path.basename(command)
        if command == sys.executable or INTERPRETER.fullmatch(name) or name == "tapedeck":
            return True
    return False


def refused_path() -> Path | None:
    """A path this process may not look at, even as root: another process's working directory (ptrace rules); None
    where this process may look at it."""
    target = Path("/proc/1/cwd")
    try:
        target.stat()
    except PermissionError:
        return target
    return None


def no_access_path() -> Path:
    """``refused_path``, the test skipped where this process may look at it."""
    if (target := refused_path()) is None:
        pytest.skip("this process may look at /proc/1/cwd")
    return target


def no_read_file() -> Path | None:
    """A regular file this process may stat but not open, even as root: another process's environment (ptrace
    rules); None where this process may read it."""
    target = Path("/proc/1/environ")
    try:
        target.open("rb").close()
    except PermissionError:
        return target
    return None


@pytest.fixture
def processes() -> Iterator[Processes]:
    """Start a test's processes (``processes.start(args, …)``); any still running when it ends, whether it passed or
    failed, is killed with its process group and reaped."""
    started = Processes()
    try:
        yield started
    finally:
        started.close()
