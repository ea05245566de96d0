"""What reads a session log, run on one log and judged for crashes: the fuzz targets of ``bench/fuzz.py`` and of
``tests/log/test_reader_fuzz.py`` / ``tests/tui/test_screen_fuzz.py``.

``READER_COMMANDS`` is every CLI command that reads a log, as argument lists with ``{log}`` (the log file) and
``{root}`` (the directory of sessions above it); ``cli_crash`` runs one in process through ``core.cli.main``.
``SCREEN_KEYS`` are the keys that open a screen of the TUI; ``tui_crash`` opens each on a log with Textual's
Pilot. A crash is an exception, an exit status the command does not document, a traceback on stderr, or (in the
TUI) a worker that died of an error.
"""

from __future__ import annotations

import contextlib
import functools
import io
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

from core.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[1]

READER_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("inspect", "{log}"), ("inspect", "{log}", "--json"), ("surface", "{log}"), ("surface", "{log}", "--json"),
    ("surface", "{log}", "--at", "5", "--json"), ("events", "{log}"), ("events", "{log}", "--json"),
    ("events", "{log}", "--type", "tool/,turn/end", "--turn", "1"), ("sessions", "{root}"),
    ("sessions", "{root}", "--json"), ("fold", "{log}"), ("fold", "{log}", "--json"), ("status", "{log}"),
    ("status", "{log}", "--json"), ("seal", "{log}"), ("seal", "{log}", "--json"), ("recall", "turn", "{log}", "1"),
    ("recall", "step", "{log}", "1", "1"), ("recall", "search", "{log}", "the"), ("recall", "turn", "{log}", "2", "--json"),
    ("expand", "{log}", "--turn", "1", "--step", "1"), ("expand", "{log}", "--seq", "5", "--format-version", "1"),
    ("request", "{log}", "--turn", "1", "--step", "1", "--json"), ("request", "{log}", "--all", "--json"),
    ("request", "{log}", "--seq", "12"), ("diff", "{log}", "--turn", "1", "--step", "2"),
    ("diff", "{log}", "--turn", "2", "--step", "1", "--json"), ("cost", "{log}"), ("cost", "{log}", "--json"),
    ("alerts", "{log}"), ("alerts", "{log}", "--json"), ("export", "{log}", "--format", "json"),
    ("export", "{log}", "--format", "md", "--at", "5"), ("export", "{log}", "--turn", "1", "--redact"),
    ("notes", "{log}", "--json"),
)  # fmt: skip
EXITS = {"alerts": (0, 1, 2)}  # exit statuses a command documents; every other command: 0 or 2 (a clear refusal)

SCREEN_KEYS = ("t", "o", "c", "r", "p", "C", "D", "A", "R", "T", "question_mark")  # the TUI's screens and views
EVENT_KEYS = ("plus", "enter", "R", "T", "L")  # on a selected event: more detail, expand, its request, travel there


def screen_crash(log: Path) -> str | None:
    """Run, without Textual, what the policy screens derive in their workers (the Tape, Folds, Checkpoints,
    Router, Prolong and Config keys) on the projection of ``log``: the first crash, or None. The request view
    and time travel run the ``request``/``diff`` code the commands above run; ``tui_crash`` drives the screens
    themselves. A ``TapedeckError`` is a screen's message (no workspace to report on, say), not a crash."""
    from core.read.load import load_session
    from core.shared.errors import LogFormatError, TapedeckError
    from tui.screens.checkpoints import derive_checkpoints
    from tui.screens.config import derive_config, derive_dsh_settings
    from tui.screens.folds import derive_view
    from tui.screens.prolong import derive_prolong
    from tui.screens.router import derive_routes
    from tui.screens.tape import derive_tape

    try:
        session = load_session(log)
    except LogFormatError:
        return None  # the app shows the reason on its error screen
    for derive in (derive_tape, derive_view, derive_checkpoints, derive_routes, derive_prolong, derive_config,
                   derive_dsh_settings):  # fmt: skip
        try:
            derive(session)
        except TapedeckError:
            pass  # the screen shows the reason (no workspace to report on, say)
        except Exception as exc:  # noqa: BLE001 - a crash is what this counts
            return f"screen {derive.__module__.rsplit('.', 1)[-1]}: {site(exc)}"
    return None


def view_crash(log: Path, seqs: tuple[int, ...] = ()) -> str | None:
    """Run, without Textual, what the main screen derives from ``log`` as the TUI loads it (the raw events it
    shows, flagged ones too): every row of the list, the detail pane of each of ``seqs`` and of every stream,
    the filter and search scans, time travel to each of ``seqs`` and every request view (its heading, diff line
    and rows). The first crash (a
    load that stopped on an internal error included), or None. ``tui_crash`` drives the widgets themselves."""
    from core.read.event_filter import EventFilter, search_predicate
    from core.read.rows import build_row
    from tui.live import INTERNAL_ERROR, LiveSession
    from tui.screens.request import diff_line, heading, message_rows
    from tui.travel import TimeTravel
    from tui.widgets.detail import describe
    from tui.widgets.matching import scan

    live = LiveSession(log, follow=False)
    live.run()
    if live.error is not None:
        return f"live: {live.error.rsplit(INTERNAL_ERROR, 1)[1].strip()}" if INTERNAL_ERROR in live.error else None
    try:
        for seq in range(live.count):
            if (event := live.event(seq)) is not None:
                build_row(event)
        for seq in seqs:
            describe(live, seq, 2_000)
        for block in live.session.streams or ():
            describe(live, block.start, 2_000, block=block)
        filters = (  # one of each field of the main screen's filter dialog
            EventFilter(errors=True), EventFilter(tools=("bash", "read_file")), EventFilter(turns=(1, None)),
            EventFilter(regex="a"), EventFilter(types=("tool/", "!assistant/chunk")),
        )  # fmt: skip
        for predicate in [search_predicate("a"), *(f.predicate(live.session) for f in filters)]:
            scan(live, predicate)
        moments = TimeTravel(live).sync()
        for seq in seqs:
            moments.stop_at(seq)
        for index in range(len(moments.points)):
            view = moments.request(index)  # and what its screen shows: heading, diff line, tools line, rows
            heading(view)
            diff_line(view)
            ", ".join(view.request.tool_names)
            message_rows(view)
    except Exception as exc:  # noqa: BLE001 - a crash is what this counts
        return f"view: {site(exc)}"
    return None


def argv_for(command: tuple[str, ...], log: Path) -> list[str]:
    """``command`` with its placeholders filled in for ``log``."""
    return [word.format(log=log, root=log.parent) for word in command]


def site(exc: BaseException) -> str:
    """Where an exception was raised: its type and the innermost frame, relative to the checkout."""
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    where = Path(frame.filename)
    short = where.relative_to(ROOT) if where.is_relative_to(ROOT) else where
    return f"{type(exc).__name__} at {short}:{frame.lineno}"


@contextlib.contextmanager
def parsers_kept() -> Iterator[None]:
    """Within it, ``cli_crash`` builds each command's argument parser once and reuses it: building the parser
    (argparse and its gettext lookups) was 40% of an in-process run of a reading command, and a sweep runs
    thousands. What a parser reads from the environment as it is built (the default sessions root) is what it
    was at its first build, so the environment must not change within."""
    import core.cli

    build = core.cli.build_parser
    core.cli.build_parser = functools.cache(build)
    try:
        yield
    finally:
        core.cli.build_parser = build


def cli_crash(argv: list[str]) -> tuple[str | None, str, str]:
    """Run one command in process: the crash (or None), its stdout and its stderr."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = cli_main(argv)
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else 2
    except Exception as exc:  # noqa: BLE001 - a crash is what this counts
        return f"{argv[0]}: {site(exc)}", out.getvalue(), err.getvalue()
    if (rc or 0) not in EXITS.get(argv[0], (0, 2)):
        return f"{argv[0]}: exit {rc}", out.getvalue(), err.getvalue()
    if "Traceback" in err.getvalue():
        return f"{argv[0]}: traceback on stderr", out.getvalue(), err.getvalue()
    return None, out.getvalue(), err.getvalue()


def host_log(workdir: Path) -> Path:
    """A log our host wrote: the bundled demo scenario run with its scripted model (every policy's events)."""
    from core.control.config import load_config
    from core.host.demo_scenario import TASKS, write_script
    from core.host.demo_workspace import create_demo_workspace
    from core.host.loop import AgentHost, HostOptions
    from core.host.providers import make_provider

    workspace = create_demo_workspace(workdir / "ws")
    script = write_script(workdir / "script.json")
    host = AgentHost.create(
        workdir / "root", make_provider(f"scripted:{script}"), load_config(None), HostOptions(workspace=workspace),
        tasks=TASKS,
    )  # fmt: skip
    try:
        host.run()
    finally:
        host.close()
    return Path(host.writer.path)


async def tui_crash(
    log: Path, keys: tuple[str, ...] = SCREEN_KEYS, timeout: float = 20.0, at: tuple[int, ...] = (),
    grow: tuple[bytes, ...] = (),
) -> str | None:
    """Open ``log`` in the TUI, select each event of ``at`` in turn (its detail pane, ``EVENT_KEYS`` on it), then
    open every screen ``keys`` opens, one after another (an item of several keys, ``"slash b o o m enter"``, is
    pressed as one step: a search, a filter typed into its dialog): the first crash, or None. With ``grow`` the
    TUI follows the log: each of its pieces is appended to the file in turn (a piece may end inside a line) and
    ``keys`` are pressed again after each."""
    from textual.worker import Worker, WorkerState

    from tui.app import TapedeckApp
    from tui.live import INTERNAL_ERROR
    from tui.screens.main import MainScreen
    from tui.widgets.detail import DetailPane

    follow = bool(grow)
    app = TapedeckApp(log, follow=follow, interval=0.02, use_watchfiles=False, keymap_file=log.parent / "none.toml")
    failed: list[str] = []
    ended: list[Worker[object]] = []  # workers that died: one started with exit_on_error=False leaves no other trace
    forget = app.workers._remove_worker  # Textual drops a finished worker from app.workers through this

    def removed(worker: Worker[object]) -> None:
        if worker.state is WorkerState.ERROR and worker.error is not None:
            ended.append(worker)
        forget(worker)

    app.workers._remove_worker = removed  # type: ignore[method-assign]

    def died() -> str | None:
        if app._exception is not None:
            return f"app: {site(app._exception)}"
        for worker in [*ended, *app.workers]:
            if worker.state is WorkerState.ERROR and worker.error is not None:
                return f"worker {worker.group}: {site(worker.error)}"
        live = app.live
        if live is not None and live.error is not None and INTERNAL_ERROR in live.error:
            return f"live: {live.error.rsplit(INTERNAL_ERROR, 1)[1].strip()}"
        return None

    async def idle(pilot: object) -> None:
        deadline = time.monotonic() + timeout
        calm = 0
        while calm < 3 and time.monotonic() < deadline and died() is None:
            await pilot.pause(0.02)  # type: ignore[attr-defined]
            live = app.live
            busy = (  # a followed log's reader (and the alert feed beside it) runs for as long as the app
                (live is not None and not (live.ready or live.phase == "error"))
                or (follow and live is not None and live.phase != "error" and live.read_to < log.stat().st_size)
                or any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) and not (follow and w.group == "live")
                       for w in app.workers)  # fmt: skip
                or any(pane.busy for pane in app.screen.query(DetailPane))
            )
            calm = 0 if busy else calm + 1

    async def press(pilot: object, pressed: tuple[str, ...], where: str = "") -> bool:
        """Press each key, back to the screen it was pressed on after each; False once something died."""
        for key in pressed:
            if (found := died()) is not None:
                failed.append(f"{found} (after {key}{where})")
                return False
            depth = len(app.screen_stack)
            await pilot.press(*key.split())  # type: ignore[attr-defined]
            await idle(pilot)
            if (found := died()) is not None:
                failed.append(f"{found} (key {key}{where})")
                return False
            for _ in range(4):  # back to the main screen (a view that is not a screen stays)
                if len(app.screen_stack) <= depth:
                    break
                await pilot.press("escape")  # type: ignore[attr-defined]
                await idle(pilot)
        return True

    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await idle(pilot)
            for seq in at:
                if not isinstance(app.screen, MainScreen):
                    break  # the log did not open (its error screen is the app's answer)
                app.screen.events.go_seq(seq)
                await idle(pilot)
                if not await press(pilot, EVENT_KEYS, f" on seq {seq}"):
                    break
                if isinstance(app.screen, MainScreen) and app.screen.mode != "full":  # time travel left the surface
                    await press(pilot, ("s",))  # the full log again: the next event is listed, flagged or not
            if not failed:
                await press(pilot, keys)
            for piece in grow:
                if failed:
                    break
                with log.open("ab") as f:
                    f.write(piece)
                await idle(pilot)
                await press(pilot, keys, f" after {len(piece)} bytes appended")
    except Exception as exc:  # noqa: BLE001 - an exception out of the app is a crash
        return failed[0] if failed else f"app: {site(exc)}"
    return failed[0] if failed else died()
