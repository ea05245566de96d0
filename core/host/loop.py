"""The reference agent host: turns and steps in DSH shapes, policies applied live, the control inbox obeyed.

One ``AgentHost`` owns one session log (it is the only writer). Each step runs, in order: the control inbox
(a safe point), the pre-step policies (seal at step 1, fold, adaptive route/prune), the model call with its
chunks logged as they stream, then every tool call and its result. Between steps is the next safe point.
Everything the host decides is an event in the log, so ``resume`` rebuilds all policy state from it.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core import __version__
from core.alerts.actions import HostGuard
from core.control.config import PolicyConfig
from core.control.inbox import INBOX_NAME, ControlError, inbox_path, locked_inbox
from core.host.file_calls import FILE_BEFORE, FILE_TOOLS, file_before, settle
from core.host.hooks import PolicyHooks, StepPlan, check_tool_names
from core.host.messages import tool_result
from core.host.operator import Operator
from core.host.resume import (
    HOST_EVENT,
    REPEATABLE_TOOLS,
    committed_rewind,
    last_step,
    prompt_logged,
    recorded_tasks,
    recorded_workspace,
    refuse_foreign_log,
    task_turns,
    tools_allowed,
    turn_steer,
)
from core.host.toolbox import CallResult, ToolBox, call_result
from core.host.tools import ToolLimits
from core.host.tools.sandbox import shell_mode
from core.log.messages import user_message
from core.log.writer import SessionWriter, make_header
from core.read.session import Session
from core.shared.chat import ChatModel, Completion, ModelRequest
from core.shared.errors import ConfigError, TapedeckError
from core.shared.text import quoted, quoted_path

ABORTED_BY_USER = {"kind": "aborted", "reason": {"kind": "user"}}
NOT_DISPATCHED = CallResult(
    "Error: the operator stopped the run before this call started.",
    True,
    {"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"},
)
MODEL_POLL_SECONDS = 0.02
CLOSE_LOCK_SECONDS = 2.0  # the longest an exiting host waits for a sender to let go of the inbox (it holds it ms)
CHUNK_FLUSH_SECONDS = 0.1
HOST_OUTPUT_CHARS = 4_000_000  # the most output one tool call keeps (head and tail) before the policies see it
CHUNK_FLUSH_COUNT = 64

Progress = Callable[[str], None]


@dataclass
class HostOptions:
    """Knobs of one host run."""

    workspace: Path | None  # None on resume: the workspace the log records
    pace: float = 0.0  # seconds to wait between steps (the demo's watchable pace); 0 = full speed
    chunk_delay: float = 0.0  # seconds between streamed chunks of a scripted model
    progress: Progress | None = None
    linger: bool = False  # after the tasks, keep answering control requests until ``stop``
    linger_poll: float = 0.2
    max_steps_per_turn: int = 200  # a last-resort guard when no policy bounds the turn


@dataclass
class TurnOutcome:
    """How a turn ended."""

    turn: int
    reason: dict[str, Any]
    steps: int
    final_text: str = ""


class _Aborted(Exception):
    """Raised into an abandoned model call when a chunk arrives after ``stop``."""


@dataclass
class _Stream:
    """Chunk events of the model call in flight, appended in small batches while it streams.

    The call runs on a worker thread; once ``abort`` closes the stream, a late chunk ends that thread instead of
    reaching the log.
    """

    host: AgentHost
    turn: int
    step: int
    pending: list[dict[str, Any]] = field(default_factory=list)
    seqs: list[int] = field(default_factory=list)
    last_flush: float = field(default_factory=time.monotonic)
    closed: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, chunk: dict[str, Any]) -> None:
        with self.lock:
            if self.closed:
                raise _Aborted
            self.pending.append(
                {"type": "assistant/chunk", "data": {"turn": self.turn, "step": self.step, "chunk": chunk}}
            )
            now = time.monotonic()
            if len(self.pending) >= CHUNK_FLUSH_COUNT or now - self.last_flush >= CHUNK_FLUSH_SECONDS:
                self._flush()
        if self.host.options.chunk_delay:
            time.sleep(self.host.options.chunk_delay)

    def flush(self) -> None:
        """Append the chunks not yet logged."""
        with self.lock:
            self._flush()

    def _flush(self) -> None:
        if self.pending:
            stored = self.host.append(self.pending)
            self.seqs.extend(e["seq"] for e in stored)
            self.pending = []
        self.last_flush = time.monotonic()

    def abort(self) -> None:
        """Log what streamed so far and the ``aborted`` finish; drop anything that still arrives."""
        with self.lock:
            if self.closed:
                return
            self.pending.append(
                {"type": "assistant/chunk", "data": {"turn": self.turn, "step": self.step,
                                                     "chunk": {"type": "finish", "reason": {"kind": "aborted"}}}}
            )  # fmt: skip
            self._flush()
            self.closed = True


class AgentHost:
    """Runs turns against a model and writes the session log."""

    def __init__(
        self,
        writer: SessionWriter,
        session: Session,
        model: ChatModel,
        config: PolicyConfig,
        options: HostOptions,
    ) -> None:
        self.writer = writer
        self.session = session
        self.model = model
        self.options = options
        if options.workspace is None:
            raise TapedeckError("the host needs a workspace")
        # The policies see a tool's whole output (the spill arm stores it beside the log, the fold digests it);
        # this cap only bounds memory.
        self.toolbox = ToolBox(
            options.workspace, lambda: self.hooks.config.host.shell, ToolLimits(output_chars=HOST_OUTPUT_CHARS)
        )
        self.toolbox.protect(writer.path.parent)  # the log and the control inbox, if under the workspace
        self.inbox_path = inbox_path(writer.path)
        self.hooks = PolicyHooks(self, config, model, self.toolbox, options.workspace)
        self.lock = threading.RLock()  # the log and its projection change under it (the inbox thread writes too)
        self._chunk_seqs: list[int] = []  # the chunk events of the last model call (its message's sources)
        self.operator = Operator(self, writer.path, self.inbox_path, self.hooks, on_stop=(self.toolbox.interrupt,))
        self.guard: HostGuard | None = None  # the alert rules this host acts on itself (core.alerts.actions)
        self._guarded: object = None  # the alerts config the guard was made for
        self._refresh_guard(session.next_seq)

    # construction ---------------------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        sessions_root: Path,
        model: ChatModel,
        config: PolicyConfig,
        options: HostOptions,
        *,
        tasks: Sequence[str],
        session_id: str | None = None,
        compressed: bool = False,
    ) -> AgentHost:
        """Start a new session under ``sessions_root`` for ``options.workspace``."""
        if options.workspace is None:
            raise TapedeckError("a new session needs a workspace")
        _check_tool_names(config)
        header = make_header(session_id or str(uuid.uuid4()), cwd=str(options.workspace.resolve()))
        started = {
            "pid": os.getpid(),
            "version": __version__,
            "provider": model.provider,
            "model": model.model,
            "inbox": INBOX_NAME,
            "workspace": str(options.workspace.resolve()),
            "tasks": list(tasks),
            "resumed": False,
            "shell": shell_mode(config.host.shell).to_dict(),
            "config": config.raw,  # the config it started with; tapedeck/config events record every change
        }
        # Published with the header: no crash can leave a log that has lost its tasks and workspace.
        first = [{"type": HOST_EVENT, "data": started}]
        writer = SessionWriter.create(sessions_root, header, compressed=compressed, first=first)
        host = cls(writer, Session(header, path=writer.path), model, config, options)
        for event in writer.published:
            host.session.apply(event)
        host.hooks.observe(writer.published)
        host.say_shell_warning(started["shell"])
        return host

    @classmethod
    def resume(
        cls,
        path: Path,
        model: ChatModel,
        config: PolicyConfig,
        options: HostOptions,
        *,
        relocate: bool = False,
    ) -> AgentHost:
        """Reopen a session's log and rebuild state from it (``run`` closes any step a crash left open).

        The host works in the workspace the log records (``options.workspace`` None); a different one is
        refused unless ``relocate``, and is then recorded in the new ``tapedeck/host`` event.
        """
        _check_tool_names(config)
        refuse_foreign_log(path)
        writer, data = SessionWriter.resume(path)
        session = Session(data.header, path=writer.path)
        for event in data.events:
            session.apply(event)
        try:
            workspace = _resume_workspace(session, options.workspace, relocate)
            recorded_tasks(session)  # refused before anything is written
        except BaseException:
            writer.close()
            raise
        host = cls(writer, session, model, config, replace(options, workspace=workspace))
        host.hooks.replay()
        host._restore_model()
        info = host.host_info()
        resumed = {**info, "pid": os.getpid(), "workspace": str(workspace), "resumed": True, "config": config.raw}
        resumed["shell"] = host.toolbox.shell_mode().to_dict()
        host.say_shell_warning(resumed["shell"])
        host.append([{"type": HOST_EVENT, "data": resumed}])
        return host

    def say_shell_warning(self, shell: dict[str, Any]) -> None:
        """Tell the operator when the shell tool runs unconfined (``shell`` as in the ``tapedeck/host`` event)."""
        if shell.get("warning"):
            self.say(f"warning: {shell['warning']}")

    def _restore_model(self) -> None:
        """Hand a resumable model the ``replayState`` of the last assistant message it produced."""
        for seq in range(self.session.next_seq - 1, -1, -1):
            event = self.session.events[seq]
            if event.get("type") == "assistant/message" and self.session.is_original(seq):
                state = ((event.get("data") or {}).get("message") or {}).get("source", {}).get("replayState")
                if isinstance(state, dict):
                    self.model.restore(state)
                return

    def host_info(self) -> dict[str, Any]:
        """The data of the first ``tapedeck/host`` event (tasks, workspace …)."""
        for event in self.session.events:
            if event.get("type") == HOST_EVENT:
                return dict(event.get("data") or {})
        return {}

    # writing ---------------------------------------------------------------------------------------------
    def append(self, events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Append planned events to the log and project them; the single write path of the host."""
        if not events:
            return []
        with self.lock:
            stored = self.writer.append(list(events))
            for event in stored:
                self.session.apply(event)
            self.hooks.observe(stored)
            self._refresh_guard(self.session.next_seq - len(stored))
            if self.guard is not None:
                self.guard.observe(stored)
        return stored

    def _refresh_guard(self, seen: int) -> None:
        """(Re)make the guard when the alerts config changed (started, resumed, ``config.set``): it takes in the
        first ``seen`` events, and acts at once on a line they are over unless the guard before it already had."""
        config = self.hooks.config
        if config.alerts is self._guarded:
            return
        self._guarded = config.alerts
        before = self.guard
        self.guard = HostGuard(config.alerts, config.model, self.inbox_path, self.session.header) if config.alerts.acts else None
        if self.guard is not None:
            self.guard.prime((self.session.events[seq] for seq in range(seen)), settled=before)

    def say(self, message: str) -> None:
        """Report progress to the operator (the demo's ``--no-tui`` output)."""
        if self.options.progress:
            self.options.progress(message)

    def check_log(self) -> None:
        """Raise LogFormatError when the log was replaced or removed under the host: no operator can reach a host
        whose log is gone (``control`` finds no owner), so a host waiting for one must end instead."""
        self.writer.check_held()

    @property
    def stop_requested(self) -> bool:
        """Whether an operator's ``stop`` arrived."""
        return self.operator.stop_requested

    @property
    def stop_record(self) -> dict[str, Any] | None:
        """Who stopped the run and why, once an operator's ``stop`` arrived."""
        return self.operator.stop_record

    def close(self) -> None:
        """Answer what is left in the inbox, flush policy writers and release the log (the host has exited).

        The inbox stays locked from that last read until the log is released: a sender checks under the same lock
        that the host is live, so its request either reaches the last read or is refused and never written."""
        self.operator.stop_watching()  # first: its thread must not be left waiting on the lock this call takes
        self.guard = None  # its requests could reach no host now, and it would wait on that lock too
        with contextlib.ExitStack() as held:
            # Closed all the same without it: a link or no directory there, or a sender stuck holding it.
            with contextlib.suppress(OSError, ControlError):
                held.enter_context(locked_inbox(self.inbox_path, wait=CLOSE_LOCK_SECONDS))
            try:
                self.operator.close()
            finally:  # the log replaced under the host cannot take the exit's events; the rest is released anyway
                self.hooks.close()
                self.writer.close()

    # the loop --------------------------------------------------------------------------------------------
    def run(self) -> list[TurnOutcome]:
        """Run every recorded task that has no turn yet (continuing an open turn first, after settling the calls
        of a step a crash left open). A host resumed on a log its operator left paused holds until ``resume``.

        With ``options.linger`` the host then stays at its safe point, answering control requests, and runs
        each steering message as a new turn, until a ``stop`` request arrives.
        """
        outcomes: list[TurnOutcome] = []
        tasks = recorded_tasks(self.session)
        left_paused = self.operator.paused  # as the host before this one left the session
        self.operator.poll()  # what was left for this host first: a queued resume lifts a pause before it is said
        paused = self.operator.paused
        self.operator.set_state(self.operator.pause_state() if paused else "running")  # "paused" once it holds
        self.operator.start()
        if paused:
            why = (
                "the operator paused this session before its last host stopped"
                if left_paused
                else "a pause request was left for this resume"
            )
            command = f"tapedeck control {shlex.quote(quoted_path(self.writer.path))} resume"  # one line, pasteable
            self.say(f"paused: {why}; nothing runs until `{command}`")
        if self.session.open_turn is not None:
            self._repair_open_step()
            outcomes.append(self._continue_turn(self.session.open_turn, tasks))
        while not self.stop_requested:
            if not self.operator.boundary(idle=True):
                break
            done = task_turns(self.session)
            steer = self.operator.next_steer()
            if steer is not None:
                outcomes.append(self.run_turn(steer.text, steer.source()))
            elif done < len(tasks):
                outcomes.append(self.run_turn(tasks[done]))
            elif self.options.linger:
                self.operator.set_state("idle")
                self.operator.wait_for_stop(self.options.linger_poll)
                self.check_log()
            else:
                break
        return outcomes

    def run_turn(self, prompt: str, source: dict[str, Any] | None = None) -> TurnOutcome:
        """Start a new turn with ``prompt`` and run it to its end."""
        turn = max(self.session.turns, default=0) + 1
        self.append([{"type": "turn/start", "data": {"turn": turn}}])
        self.operator.set_state("running")
        # the task's or the inbox's steering message's first line (a resumed host's tasks are the log's): quoted
        self.say(f"turn {turn}: {quoted(prompt.splitlines()[0][:100], None) if prompt else ''}")
        return self._run_turn(turn, prompt, source)

    def _continue_turn(self, turn: int, tasks: Sequence[str]) -> TurnOutcome:
        """Finish the turn a crash left open, as the run that died would have.

        A prompt that never reached the log is issued again (a queued steer's, else the next task's); a model
        call cut short is repeated within its own step, so the step budget is not spent twice; a step that
        ended is followed by the decision that was due after it (end the turn, remind, or take the next step).
        """
        prompt, source = None, None
        if not prompt_logged(self.session, turn):
            steer = turn_steer(self.session, turn)
            done = task_turns(self.session)
            if steer is not None:
                self.operator.drop_steer(steer.request_id)
                prompt, source = steer.text, steer.source()
            elif done < len(tasks):
                prompt = tasks[done]
            else:
                self.say(f"turn {turn}: its prompt is not in the log; ending it as interrupted")
                return self._end_turn(turn, {"kind": "interrupted"}, 0, "")
        self.say(f"turn {turn}: resumed")
        last = last_step(self.session, turn)
        if last is not None and not last.ended:
            return self._run_turn(turn, prompt, source, reopen=last.step)
        if last is not None and prompt is None and not last.continued:
            outcome = self._after_step(turn, last.step, last.finish, last.tool_calls > 0, "")
            if outcome is not None:
                return outcome
        return self._run_turn(turn, prompt, source)

    def _run_turn(
        self, turn: int, prompt: str | None, source: dict[str, Any] | None = None, reopen: int | None = None
    ) -> TurnOutcome:
        """Run steps until the turn ends; ``reopen`` is an open step whose model call is to be repeated."""
        step = len(self.session.turns[turn].steps) if reopen is None else reopen - 1
        final_text = ""
        first = True
        while True:
            step += 1
            if not (first and reopen is not None):
                self.append([{"type": "step/start", "data": {"turn": turn, "step": step}}])
            if prompt is not None and first:
                self.append([user_message(prompt, source or {"kind": "user"})])
            first = False
            if not self.operator.boundary():
                return self._end_step_and_turn(turn, step, ABORTED_BY_USER, final_text)
            plan = self.hooks.pre_step(turn, step)
            if plan.reject is not None:
                return self._end_step_and_turn(turn, step, plan.reject, final_text)
            completion = self._call_model(turn, step, plan)
            if completion.finish == "aborted" or self.stop_requested:
                return self._end_step_and_turn(turn, step, ABORTED_BY_USER, final_text)
            if completion.finish == "error":
                reason = {"kind": "error"}
                if completion.error:
                    reason["error"] = completion.error
                return self._end_step_and_turn(turn, step, reason, final_text)
            self._assistant_message(turn, step, completion)
            final_text = completion.text or final_text
            calls = completion.tool_calls
            for call in calls:
                if self.operator.tool_gate():
                    self._run_tool(turn, step, call, plan)
                else:
                    self._not_dispatched(turn, step, call)
            if self.stop_requested:
                return self._end_step_and_turn(turn, step, ABORTED_BY_USER, final_text)
            self.append([{"type": "step/end", "data": {"turn": turn, "step": step}}])
            outcome = self._after_step(turn, step, completion.finish, bool(calls), final_text)
            if outcome is not None:
                return outcome
            if self.options.pace and self.operator.wait_for_stop(self.options.pace):
                return self._end_turn(turn, ABORTED_BY_USER, step, final_text)

    def _after_step(
        self, turn: int, step: int, finish: str | None, had_calls: bool, text: str
    ) -> TurnOutcome | None:
        """The decision due after a step ended: the turn's outcome, or None to take another step."""
        if finish == "max-tokens" and not had_calls:
            return self._end_turn(turn, {"kind": "max-tokens"}, step, text)
        if self.hooks.hard_step(turn, step):
            # The adaptive hard step is the turn's last. A model that called tools anyway had them refused
            # (``tool_choice`` was ``none``); the turn then ends blocked with whatever text it gave.
            return self._end_turn(turn, {"kind": "blocked" if had_calls else "completed"}, step, text)
        if not had_calls:
            reminder = self.hooks.turn_stopping(turn)
            if reminder is None:
                return self._end_turn(turn, {"kind": "completed"}, step, text)
            self.append([reminder])
        if step >= self.options.max_steps_per_turn:
            return self._end_turn(turn, {"kind": "blocked"}, step, text)
        return None

    def _end_step_and_turn(self, turn: int, step: int, reason: dict[str, Any], text: str) -> TurnOutcome:
        # One write: a crash never leaves the step ended with its turn open and the reason lost.
        step_end = {"type": "step/end", "data": {"turn": turn, "step": step}}
        return self._end_turn(turn, reason, step, text, before=[step_end])

    def _end_turn(
        self, turn: int, reason: dict[str, Any], steps: int, text: str, before: Sequence[dict[str, Any]] = ()
    ) -> TurnOutcome:
        data: dict[str, Any] = {"turn": turn, "reason": reason}
        if reason == ABORTED_BY_USER and self.stop_record is not None:
            # DSH's reason says only "user"; the operator's own words go in a field DSH readers ignore.
            data["stop"] = self.stop_record
        self.append([*before, {"type": "turn/end", "data": data}])
        error = reason.get("error") if isinstance(reason.get("error"), dict) else {}
        # what the log's turn/end says, the model's server's words among it: quoted, so they stay on this line
        why = quoted(": ".join(str(error[k]) for k in ("code", "message") if error.get(k)), 200)
        self.say(f"turn {turn} ended: {reason.get('kind')} after {steps} step(s)" + (f": {why}" if why else ""))
        return TurnOutcome(turn, reason, steps, text)

    def _call_model(self, turn: int, step: int, plan: StepPlan) -> Completion:
        request = ModelRequest(
            messages=self.hooks.request_messages(),
            system=plan.system,
            tools=plan.tools,
            max_tokens=plan.max_tokens,
            reasoning_effort=plan.reasoning_effort,
            tool_choice=plan.tool_choice,
        )
        stream = _Stream(self, turn, step)

        def log_retry(notice: Any) -> None:
            with stream.lock:  # the failed attempt's chunks land before the retry that follows them
                if stream.closed:
                    raise _Aborted
                stream._flush()
                self.append([notice.event(turn, step)])

        self.model.on_retry = log_retry
        result: list[Completion | BaseException] = []
        done = threading.Event()

        def work() -> None:
            try:
                result.append(self.model.complete(request, stream))
            except _Aborted:
                pass
            except BaseException as exc:  # noqa: BLE001 - handed to the host thread below
                result.append(exc)
            finally:
                done.set()

        # The call runs on a worker so that a stop ends it now, not when the model's answer is complete.
        threading.Thread(target=work, name="tapedeck-model-call", daemon=True).start()
        while not done.wait(MODEL_POLL_SECONDS):
            if self.stop_requested:
                stream.abort()
                self.model.abort()
                return Completion([], "aborted")
        if isinstance(result[0], BaseException):
            raise result[0]
        stream.flush()
        self._chunk_seqs = stream.seqs
        return result[0]

    def _assistant_message(self, turn: int, step: int, completion: Completion) -> None:
        data: dict[str, Any] = {
            "turn": turn,
            "step": step,
            "message": {
                "id": str(uuid.uuid4()),
                "role": "assistant",
                "content": completion.content,
                "source": {"kind": "model", "provider": self.model.provider, "model": self.model.model},
            },
        }
        if completion.replay_state is not None:
            data["message"]["source"]["replayState"] = completion.replay_state
        if completion.usage:
            data["usage"] = completion.usage
        self.append(
            [
                {
                    "type": "assistant/message",
                    "data": data,
                    "sourceEventSeqs": self._chunk_seqs,
                    "surfaceOp": "append",
                }
            ]
        )

    def _run_tool(self, turn: int, step: int, call: dict[str, Any], plan: StepPlan) -> None:
        call_id, name, arguments = (
            str(call.get("id")),
            str(call.get("name")),
            str(call.get("arguments") or ""),
        )
        data: dict[str, Any] = {"turn": turn, "step": step, "callId": call_id, "name": name, "arguments": arguments}
        # What a file call's file was at dispatch, in the same write as the call: resume can then tell whether
        # a call cut off mid-run changed it (core.host.file_calls).
        before = file_before(self.toolbox, name, arguments) if name in plan.tool_names else None
        if before is not None:
            data[FILE_BEFORE] = before
        [call_event] = self.append([{"type": "tool/call", "data": data}])
        self._dispatch(turn, step, call_id, name, arguments, call_event["seq"], plan)

    def _dispatch(
        self,
        turn: int,
        step: int,
        call_id: str,
        name: str,
        arguments: str,
        call_seq: int,
        plan: StepPlan,
        ran: CallResult | None = None,
    ) -> None:
        """Run a logged call and append its result (after any policy events that must precede it); ``ran`` is
        the result of a workspace call that already ran (a file call that landed before a crash)."""
        if name not in plan.tool_names:
            outcome = self.toolbox.unavailable(name, plan.tool_names)
        else:
            outcome = self.hooks.run_tool(name, arguments, turn, step)
            if outcome is None:
                result = ran or self.toolbox.run(name, arguments)
                outcome = self.hooks.spill(result, name, arguments, turn, step, call_id)
        self.append([*outcome.before, tool_result(turn, step, call_id, call_seq, outcome)])

    def _not_dispatched(self, turn: int, step: int, call: dict[str, Any]) -> None:
        """A call the model asked for after ``stop``: logged with DSH's ``ABORTED_BEFORE_DISPATCH`` result."""
        [call_event] = self.append([{"type": "tool/call", "data": {
            "turn": turn, "step": step, "callId": str(call.get("id")), "name": str(call.get("name")),
            "arguments": str(call.get("arguments") or "")}}])  # fmt: skip
        self.append([tool_result(turn, step, str(call.get("id")), call_event["seq"], NOT_DISPATCHED)])

    def _repair_open_step(self) -> None:
        """After a crash: settle every call of an open step the model answered, then end the step.

        A call the model asked for but the host never dispatched is dispatched now, since running it once is
        exactly what the model asked for. A call whose ``tool/call`` was logged was running at the crash: it
        runs again when that cannot apply it twice (``REPEATABLE_TOOLS``); a ``write_file`` or ``edit_file``
        runs again when its file is as the call found it, and gets the result it gave when the file is as the
        call left it (``core.host.file_calls``); a ``rewind`` whose fold reached the log gets the result that
        fold recorded, else runs again; any other call may have changed the workspace, so its outcome is
        unknown and it gets DSH's ``TOOL_OUTCOME_UNKNOWN`` result, never a second run. A step whose model call
        was cut short stays open: ``run`` repeats that call in the same step. A call that would run waits while
        the host is paused, and gets DSH's ``ABORTED_BEFORE_DISPATCH`` result when a ``stop`` ends the pause.
        """
        turn_no = self.session.open_turn
        if turn_no is None:
            return
        last = last_step(self.session, turn_no)
        if last is None or last.ended or not last.answered:
            return
        step = last.step
        allowed = (
            {t["name"] for t in self.hooks.tool_schemas()}
            if tools_allowed(self.session, turn_no, step)
            else set()
        )
        plan = StepPlan(system="", tools=[], tool_names=allowed)
        rewind_tool = self.hooks.config.rewind.tool_name
        for call in [c for c in self.session.tool_calls.values() if c.turn == turn_no and c.step == step]:
            if call.result_seq is not None:
                continue
            if call.call_seq is None:
                block = {"id": call.call_id, "name": call.name, "arguments": call.arguments}
                if self.operator.tool_gate():
                    self._run_tool(turn_no, step, block, plan)
                else:
                    self._not_dispatched(turn_no, step, block)
                continue
            outcome = committed_rewind(self.session, call.call_seq) if call.name == rewind_tool else None
            again = call.name in REPEATABLE_TOOLS or call.name == rewind_tool
            if call.name in FILE_TOOLS:
                before = (self.session.events[call.call_seq].get("data") or {}).get(FILE_BEFORE)
                settled = settle(self.toolbox, call.name, call.arguments, before)
                for name in settled.removed:
                    self.say(f"removed {quoted_path(name)}, left by the {call.name} the crash cut off")
                if settled.landed is not None:
                    self._dispatch(turn_no, step, call.call_id, call.name, call.arguments, call.call_seq, plan,
                                   ran=call_result(settled.landed))  # fmt: skip
                    continue
                again = settled.again
            if outcome is None and again:
                if self.operator.tool_gate():
                    self._dispatch(
                        turn_no, step, call.call_id, call.name, call.arguments, call.call_seq, plan
                    )
                    continue
                outcome = NOT_DISPATCHED
            outcome = outcome or CallResult(
                f"Error: the host stopped while {call.name} was running; its outcome is unknown.",
                True,
                {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"},
            )
            self.append([tool_result(turn_no, step, call.call_id, call.call_seq, outcome)])
        self.append([{"type": "step/end", "data": {"turn": turn_no, "step": step}}])


def _check_tool_names(config: PolicyConfig) -> None:
    """``check_tool_names``, its refusal naming the config file first as every other refusal of one does."""
    try:
        check_tool_names(config)
    except ConfigError as exc:
        raise config.refused(exc) from None


def _resume_workspace(session: Session, asked: Path | None, relocate: bool) -> Path:
    recorded = recorded_workspace(session)
    log = quoted_path(session.path)
    if asked is None:
        if recorded is None:
            raise TapedeckError(f"{log}: the log records no workspace; give one with --workspace")
        if not Path(recorded).is_dir():
            raise TapedeckError(
                f"{log} was running in {quoted_path(recorded)}, which is no longer a directory; give the new place "
                "with --workspace DIR --relocate"
            )
        return Path(recorded)
    asked = asked.resolve()
    if recorded is not None and asked != Path(recorded) and not relocate:
        raise TapedeckError(
            f"{log} was running in {quoted_path(recorded)}, not {quoted_path(asked)}; resume without --workspace to "
            "continue there, or add --relocate to move the session to the new directory"
        )
    return asked
