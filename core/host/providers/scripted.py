"""A deterministic ChatModel that plays model responses from a JSON script (``scripted:FILE``).

The file is either a JSON list of responses or an object::

    {"model": "demo-script", "efforts": ["off", "high"], "responses": [ ... ]}

or, for a model that answers by situation instead of in one fixed order (``players.PlanPlayer``: an operator
acting at any point cannot derail it)::

    {"model": "demo-script", "plans": [{"prompt": "the task's text", "responses": [ ... ]}, ...]}

where each plan's last response is its final answer (text, no tool calls).

``contextWindow`` and ``maxOutputTokens`` (positive integers, optional) are the limits the scripted model
declares, as a real provider's table would.

With ``responses`` each model call takes the next response. Every key of a response is optional:

``reasoning``
    reasoning text, streamed before the answer.
``text``
    the answer text.
``toolCalls``
    ``[{"name": "read_file", "arguments": {"path": "README.md"}, "id": "call_a"}]``; ``arguments`` may also
    be a raw string (sent as is, which lets a script produce malformed JSON); ``id`` defaults to
    ``call_<call number>_<position>``.
``usage``
    a DSH ``TokenUsage`` object; by default both counts are estimated at four characters per token.
``finish``
    ``stop``, ``tool-calls``, ``max-tokens`` or ``error`` (default: ``tool-calls`` when there are tool calls,
    else ``stop``). ``error`` needs an ``"error": {"message": ..., "code": ...}`` object.
``onError``
    a response, or a list of responses, to play instead when a tool result that arrived since the model's
    last message is an error. The first one answers this call and the others the calls after it; then the
    script carries on after the response that held ``onError``. (The first alternative's own ``onError`` is
    not consulted: it is already the answer to an error.)
``expect``
    ``{"resultContains": "text"}`` and/or ``{"resultMatches": "regex"}``, checked against the text of those
    same latest tool results (the regex in RE2's syntax: no lookarounds or backreferences). When the session has
    gone somewhere the script did not foresee, the call ends with finish ``error`` and code ``SCRIPT_MISMATCH``
    instead of answering blindly.

When a ``responses`` script has no response left, the call ends with finish ``error`` and code
``SCRIPT_EXHAUSTED``; ``plans`` never run out.
Responses are streamed as small chunks (a few characters of text, short pieces of tool arguments), so the
session log looks like one written against a real model.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from core.host.providers.errors import ProviderError, failure
from core.host.providers.players import PlanPlayer, SequencePlayer
from core.host.providers.situation import latest_results, result_text
from core.host.providers.stream import BlockStream
from core.shared.chat import ChunkSink, Completion, ModelRequest
from core.shared.model_specs import Limits
from core.shared.parsers import Wording, load_document
from core.shared.regex import RegexRefused, linear_regex
from core.shared.text import js_json, quoted, shown

SCRIPT_MISMATCH = "SCRIPT_MISMATCH"
SCRIPT_EXHAUSTED = "SCRIPT_EXHAUSTED"
FINISHES = ("stop", "tool-calls", "max-tokens", "error")
RESPONSE_KEYS = ("reasoning", "text", "toolCalls", "usage", "finish", "error", "onError", "expect")
FILE_KEYS = ("model", "efforts", "contextWindow", "maxOutputTokens", "responses", "plans")
PLAN_KEYS = ("prompt", "responses")
CALL_KEYS = ("name", "arguments", "id")
EXPECT_KEYS = ("resultContains", "resultMatches")
USAGE_KEYS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens")
CHARS_PER_TOKEN = 4
MAX_SCRIPT_BYTES = 64 << 20  # a script is model answers: far less; past it the file is something else
ARGUMENT_PIECE = 16
_TEXT_PIECE = re.compile(r"\s*\S{1,8}|\s+")


class _Invalid(Exception):
    pass


def _keys(obj: Any, valid: Sequence[str], what: str) -> Mapping[str, Any]:
    if not isinstance(obj, Mapping):
        raise _Invalid(f"{what} must be a JSON object")
    unknown = [k for k in obj if k not in valid]
    if unknown:
        raise _Invalid(f"{what} has unknown key '{quoted(unknown[0])}' (valid keys: {', '.join(valid)})")
    return obj


def _string(obj: Mapping[str, Any], key: str, what: str) -> None:
    if key in obj and not isinstance(obj[key], str):
        raise _Invalid(f"{what}: {key!r} must be a string")


def _check_response(raw: Any, what: str) -> dict[str, Any]:
    response = dict(_keys(raw, RESPONSE_KEYS, what))
    for key in ("reasoning", "text"):
        _string(response, key, what)
    calls = response.get("toolCalls", [])
    if not isinstance(calls, list):
        raise _Invalid(f"{what}: 'toolCalls' must be a list")
    for n, call in enumerate(calls, 1):
        where = f"{what} tool call {n}"
        _keys(call, CALL_KEYS, where)
        if not isinstance(call.get("name"), str) or not call["name"]:
            raise _Invalid(f"{where}: 'name' must be a non-empty string")
        if not isinstance(call.get("arguments", {}), Mapping | str):
            raise _Invalid(f"{where}: 'arguments' must be an object or a string")
        _string(call, "id", where)
    if "usage" in response:
        usage = _keys(response["usage"], USAGE_KEYS, f"{what} usage")
        if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 1 << 63 for v in usage.values()):
            raise _Invalid(f"{what}: usage counts must be non-negative integers of at most 64 bits")
    finish = response.get("finish")
    if finish is not None and finish not in FINISHES:
        raise _Invalid(f"{what}: 'finish' must be one of {', '.join(FINISHES)} (got {finish!r})")
    if (finish == "error") != ("error" in response):
        raise _Invalid(f"{what}: 'error' and finish 'error' go together")
    if "error" in response:
        error = _keys(response["error"], ("message", "code"), f"{what} error")
        if not all(isinstance(error.get(k), str) and error[k] for k in ("message", "code")):
            raise _Invalid(f"{what}: error needs a non-empty 'message' and 'code'")
    if "expect" in response:
        expect = _keys(response["expect"], EXPECT_KEYS, f"{what} expect")
        for key in EXPECT_KEYS:
            _string(expect, key, f"{what} expect")
        if "resultMatches" in expect:
            try:  # matched by RE2, in linear time: a script's pattern cannot hang the run
                linear_regex(expect["resultMatches"])
            except RegexRefused as exc:
                raise _Invalid(f"{what}: expect.resultMatches is not a valid regex: {exc}") from exc
    if "onError" in response:
        alternatives = response["onError"]
        alternatives = alternatives if isinstance(alternatives, list) else [alternatives]
        if not alternatives:
            raise _Invalid(f"{what}: 'onError' must hold at least one response")
        response["onError"] = [
            _check_response(r, f"{what} onError {n}") for n, r in enumerate(alternatives, 1)
        ]
    return response


def _check_plans(raw: Any) -> list[dict[str, Any]]:
    if not isinstance(raw, list) or not raw:
        raise _Invalid("the script's 'plans' must be a non-empty list")
    plans, prompts = [], set()
    for n, plan in enumerate(raw, 1):
        what = f"plan {n}"
        _keys(plan, PLAN_KEYS, what)
        if not isinstance(plan.get("prompt"), str) or not plan["prompt"]:
            raise _Invalid(f"{what}: 'prompt' must be a non-empty string")
        if plan["prompt"] in prompts:
            raise _Invalid(f"{what}: another plan has the same prompt")
        prompts.add(plan["prompt"])
        responses = plan.get("responses")
        if not isinstance(responses, list) or not responses:
            raise _Invalid(f"{what} needs a non-empty list of responses")
        checked = [_check_response(r, f"{what} response {k}") for k, r in enumerate(responses, 1)]
        final = checked[-1]
        if not final.get("text") or final.get("toolCalls") or final.get("finish") not in (None, "stop"):
            raise _Invalid(f"{what}: its last response must be the final answer (text, no tool calls)")
        plans.append({"prompt": plan["prompt"], "responses": checked})
    return plans


_WORDING = Wording(  # how a script that cannot be read is named
    unreadable="scripted model: cannot read {path}: {why}",
    too_large=f"scripted model: {{path}} is larger than {MAX_SCRIPT_BYTES >> 20} MiB, which no script is",
    not_utf8="scripted model: {path}: {why}",
    syntax="scripted model: {path} is not valid JSON: {why}",
    depth="scripted model: {path} is nested too deeply to read",
    digits="scripted model: {path} holds a number of more than {digits} digits",
)


def load_script(path: str | Path) -> tuple[dict[str, Any], SequencePlayer | PlanPlayer]:
    """Read and validate a script file: its settings (``model``, ``efforts`` …) and the player of its
    ``responses`` or ``plans``."""
    p = Path(path)
    raw = load_document(p, "JSON", "script", _WORDING, ProviderError, MAX_SCRIPT_BYTES)
    try:
        settings = (
            dict(_keys(raw, FILE_KEYS, "the script")) if not isinstance(raw, list) else {"responses": raw}
        )
        responses, plans = settings.pop("responses", None), settings.pop("plans", None)
        if responses is not None and plans is not None:
            raise _Invalid("the script has both 'responses' and 'plans'; give one")
        if plans is None and (not isinstance(responses, list) or not responses):
            raise _Invalid("the script needs a non-empty list of responses")
        _string(settings, "model", "the script")
        efforts = settings.get("efforts", [])
        if not isinstance(efforts, list) or not all(isinstance(e, str) for e in efforts):
            raise _Invalid("the script's 'efforts' must be a list of strings")
        for key in ("contextWindow", "maxOutputTokens"):
            value = settings.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise _Invalid(f"the script's {key!r} must be a positive integer")
        if plans is not None:
            player: SequencePlayer | PlanPlayer = PlanPlayer(_check_plans(plans))
        else:
            player = SequencePlayer([_check_response(r, f"response {n}") for n, r in enumerate(responses, 1)])
    except _Invalid as exc:
        raise ProviderError(f"scripted model {p}: {exc}") from exc
    return settings, player


def _tokens(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN)


class ScriptedModel:
    """Plays a validated script from its start, or from a ``replay_state`` a resumed host restores.

    Each completion carries ``replay_state`` (where the player stands and the call count); the host stores it
    in the assistant message's ``source.replayState``, so a session that crashed mid-script resumes where the
    log says it was instead of replaying from the start.
    """

    provider = "scripted"
    writes_reports = False
    for_route = None  # it answers from its script, for every route alike

    def __init__(self, path: str | Path, model: str | None = None) -> None:
        settings, player = load_script(path)
        self.path = Path(path)
        self.model = model or settings.get("model") or self.path.stem
        self._efforts = list(settings.get("efforts", []))
        self.limits = Limits(settings.get("contextWindow"), settings.get("maxOutputTokens"))
        self._player = player
        self.calls = 0
        self.on_retry: Callable[[Any], None] | None = None  # a script's failures are answered, never retried

    def reasoning_efforts(self) -> list[str]:
        """The efforts the script declares."""
        return list(self._efforts)

    def abort(self) -> None:
        """Nothing to end: a scripted call answers at once."""

    @property
    def remaining(self) -> int:
        """Responses not played yet (alternatives spliced in by ``onError`` included)."""
        return self._player.remaining

    def replay_state(self) -> dict[str, Any]:
        """Where the script stands, as JSON (see the class docstring)."""
        return {**self._player.state(), "calls": self.calls}

    def restore(self, state: Mapping[str, Any]) -> None:
        """Continue from a ``replay_state``; ProviderError when it does not fit this script."""
        calls = state.get("calls", 0)
        if not isinstance(calls, int) or not self._player.restore(state):
            raise ProviderError(
                f"scripted model {self.path.name}: replay state {shown(dict(state))} does not fit this script"
            )
        self.calls = calls

    def complete(self, request: ModelRequest, on_chunk: ChunkSink | None = None) -> Completion:
        """Play the response the script gives for ``request`` as a stream."""
        self.calls += 1
        stream = BlockStream(on_chunk)
        response = self._player.next(request)
        if response is None:
            message = f"scripted model {self.path.name}: no response left for call {self.calls}"
            return stream.close("error", failure(message, SCRIPT_EXHAUSTED))
        mismatch = self._mismatch(response.get("expect"), latest_results(request.messages))
        if mismatch:
            return stream.close("error", failure(mismatch, SCRIPT_MISMATCH))
        return self._play(response, request, stream)

    def _mismatch(self, expect: Mapping[str, str] | None, latest: list[Mapping[str, Any]]) -> str | None:
        if not expect:
            return None
        text = "\n".join(result_text(b) for b in latest)
        where = f"scripted model {self.path.name}, call {self.calls}"
        if "resultContains" in expect and expect["resultContains"] not in text:
            return f"{where}: expected the latest tool results to contain {shown(expect['resultContains'])}"
        if "resultMatches" in expect and linear_regex(expect["resultMatches"]).search(text) is None:
            return f"{where}: expected the latest tool results to match the pattern {shown(expect['resultMatches'])}"
        return None

    def _play(self, response: Mapping[str, Any], request: ModelRequest, stream: BlockStream) -> Completion:
        for piece in _TEXT_PIECE.findall(response.get("reasoning", "")):
            stream.reasoning(piece)
        for piece in _TEXT_PIECE.findall(response.get("text", "")):
            stream.text(piece)
        produced = len(response.get("reasoning", "")) + len(response.get("text", ""))
        calls = response.get("toolCalls", [])
        for n, call in enumerate(calls, 1):
            arguments = call.get("arguments", {})
            raw = arguments if isinstance(arguments, str) else js_json(arguments)
            call_id = call.get("id") or f"call_{self.calls}_{n}"
            pieces = [raw[i : i + ARGUMENT_PIECE] for i in range(0, len(raw), ARGUMENT_PIECE)] or [""]
            for piece in pieces:
                stream.tool_call(n, call_id=call_id, name=call["name"], arguments=piece)
            produced += len(raw)
        prompt = len(request.system or "") + len(js_json(request.messages)) + len(js_json(request.tools))
        stream.usage = dict(
            response.get("usage") or {"inputTokens": _tokens(prompt), "outputTokens": _tokens(produced)}
        )
        finish = response.get("finish") or ("tool-calls" if calls else "stop")
        error = response.get("error")
        completion = stream.close(finish, failure(error["message"], error["code"]) if error else None)
        completion.replay_state = self.replay_state()
        return completion
