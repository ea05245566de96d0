"""Rewind report writers: turn a folded region's messages into the report that takes its place.

Two implementations share one interface (``ReportWriter.write(request) -> str``):

* ``ModelReportWriter`` asks a ``core.shared.chat.ChatModel``. The request reuses the session's system prompt and tool
  schemas (so the provider's prefix cache stays warm), sends the region's messages, then our report instruction
  as a final user message. Reasoning is switched off when the route offers an ``off`` effort, and an empty
  completion is retried up to ``maxSummarizationRetries`` times.
* ``ExtractiveReportWriter`` needs no model. It fills the same skeleton from facts found in the region (paths
  read or written, commands and their exit status, first lines of errors, identifiers and numbers, the last
  assistant conclusions) and always stays below the region's size.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from core.log.messages import user_text
from core.policies.rewind_config import RewindConfig
from core.shared.arguments import loads_arguments
from core.shared.chat import ChatModel, Completion, ModelRequest
from core.shared.errors import TapedeckError
from core.shared.text import clip, quoted, text_of_blocks, utf16_len

REPORT_SOURCE = {"kind": "plugin", "plugin": "rewind"}
NO_ROUTE = (
    "no provider/model available for rewind summarization: set both RewindConfig summarization fields, "
    "route one request, or set both AgentOptions fields"
)

ModelFactory = Callable[[str, str], ChatModel]


class ReportError(TapedeckError):
    """The report could not be written (no route, stream failure, empty completions)."""


@dataclass(frozen=True)
class ReportRequest:
    """Everything a writer may use: the region's model-visible messages and the session's request context."""

    messages: Sequence[Mapping[str, Any]]
    folded_chars: int
    language: str = "en"
    objective: str | None = None
    system: str | None = None
    tools: Sequence[Mapping[str, Any]] = ()
    route: tuple[str, str] | None = None  # provider/model of the session's latest request/header


class ReportWriter(Protocol):
    """Writes the report for one fold. ``kind`` is recorded in the ``tapedeck/rewind`` event."""

    kind: str

    def write(self, request: ReportRequest) -> str:
        """Return the report text, or raise ReportError."""
        ...


# the report skeleton ---------------------------------------------------------------------------------------

SECTIONS = ("findings", "files", "decisions", "questions", "next")
HEADINGS = {
    "en": {
        "findings": "Findings",
        "files": "Files and artifacts",
        "decisions": "Decisions",
        "questions": "Open questions",
        "next": "Next step",
    },
    "zh": {
        "findings": "结论",
        "files": "涉及的文件与产物",
        "decisions": "已做的决定",
        "questions": "尚待解决的问题",
        "next": "下一步",
    },
}
NONE_MARK = "(none)"

INSTRUCTION = {
    "en": """\
Write a compact report of the exploration in the messages above. The report will stand in for those messages \
from now on, so whoever reads it next must be able to carry on without them.

Use exactly this Markdown layout, and write {none} under any heading with nothing to report:

{skeleton}

Guidelines:
- Copy concrete details exactly: file paths, commands, exit codes, error text, identifiers and numbers.
- Say what was established, not the order in which things were tried.
- Answer with the report alone: no tool calls, no preface, and no remarks about how it was produced.""",
    "zh": """\
请为上面消息中的探索过程写一份精炼的报告。此后这份报告将代替那些消息，读到它的人必须能够在没有原始消息的情况下继续工作。

请严格使用下面的 Markdown 结构；某个标题下没有内容时写 {none}：

{skeleton}

要求：
- 具体细节原样保留：文件路径、命令、退出码、报错文本、标识符和数字。
- 写清楚得出了什么结论，而不是尝试的先后经过。
- 只输出报告本身：不要调用工具，不要开场白，也不要说明报告是如何产生的。""",
}
OBJECTIVE_LINE = {
    "en": "The stated goal of this exploration: {objective}",
    "zh": "本次探索的既定目标：{objective}",
}


def skeleton(language: str) -> str:
    """The bare report layout: one ``##`` heading per section."""
    return "\n".join(f"## {HEADINGS[language][name]}" for name in SECTIONS)


def instruction_text(language: str, objective: str | None = None) -> str:
    """The final user message of a model-written report request."""
    text = INSTRUCTION[language].format(none=NONE_MARK, skeleton=skeleton(language))
    if objective:
        text += "\n\n" + OBJECTIVE_LINE[language].format(objective=objective)
    return text


def render_report(language: str, items: Mapping[str, Sequence[str]]) -> str:
    """Render section items under the skeleton's headings (``(none)`` for empty sections)."""
    blocks = []
    for name in SECTIONS:
        entries = items.get(name) or ()
        body = "\n".join(f"- {entry}" for entry in entries) if entries else NONE_MARK
        blocks.append(f"## {HEADINGS[language][name]}\n{body}")
    return "\n\n".join(blocks)


# model-written --------------------------------------------------------------------------------------------


def _route_of(value: tuple[Any, Any]) -> tuple[str, str] | None:
    provider, model = value
    if isinstance(provider, str) and provider and isinstance(model, str) and model:
        return provider, model
    return None


def resolve_route(
    config: RewindConfig, header_route: tuple[str, str] | None, model: ChatModel
) -> tuple[str, str]:
    """Provider/model for the report: config overrides, then the latest request/header, then the agent's model."""
    route = config.summarization_route() or header_route
    if route:
        return route
    own = _route_of((model.provider, model.model))
    if own:
        return own
    raise ReportError(NO_ROUTE)


def header_route(header: Mapping[str, Any] | None) -> tuple[str, str] | None:
    """``(provider, model)`` from a request header's config when both are non-empty strings."""
    config = header.get("config") if isinstance(header, Mapping) else None
    if not isinstance(config, Mapping):
        return None
    return _route_of((config.get("provider"), config.get("model")))


def _empty_report_error(retries: int, finish: str, usage: Mapping[str, Any] | None) -> ReportError:
    details = [f"finish: {finish}"]
    for key in ("outputTokens", "reasoningTokens"):
        value = (usage or {}).get(key)
        if isinstance(value, int):
            details.append(f"{key}: {value}")
    return ReportError(
        f"rewind summarization produced no text report content after {retries} retries ({', '.join(details)})"
    )


@dataclass
class ModelReportWriter:
    """Asks a chat model for the report.

    ``model`` is the agent's own model; it serves the report whenever the resolved route is its own. A route
    that names another provider/model (a config override, or a session header from another model) needs
    ``factory(provider, model)`` to build that model.
    """

    model: ChatModel
    config: RewindConfig = field(default_factory=RewindConfig)
    factory: ModelFactory | None = None
    kind: str = "model"

    def model_for(self, route: tuple[str, str]) -> ChatModel:
        """The ChatModel serving ``route``; ReportError when it is not the agent's model and no factory exists."""
        own_endpoint = self.config.summarization_endpoint() is None
        if own_endpoint and route == (self.model.provider, self.model.model):
            return self.model
        if self.factory is None:
            raise ReportError(
                f"rewind summarization route {route[0]}/{route[1]} is not available: only "
                f"{self.model.provider}/{self.model.model} is configured and no model factory was given"
            )
        return self.factory(*route)

    def write(self, request: ReportRequest) -> str:
        """Run the request, retrying empty completions; raises ReportError with the seed's messages."""
        model = self.model_for(resolve_route(self.config, request.route, self.model))
        try:
            efforts = model.reasoning_efforts()
        except Exception:  # probing the route is best effort; a failure just keeps the default reasoning
            efforts = []
        instruction = user_text(
            instruction_text(request.language, request.objective), dict(REPORT_SOURCE), "rewind-report-instruction"
        )
        model_request = ModelRequest(
            messages=[dict(m) for m in request.messages] + [instruction],
            system=request.system,
            tools=[dict(t) for t in request.tools],
            max_tokens=self.config.max_tokens,
            reasoning_effort="off" if "off" in efforts else None,
        )
        retries = self.config.max_summarization_retries
        attempt = 0
        while True:
            completion = _complete(model, model_request)
            if completion.finish in ("error", "aborted"):
                raise ReportError(f"rewind summarization stream ended with {completion.finish}")
            report = completion.text
            if report.strip():
                return report
            if attempt >= retries:
                raise _empty_report_error(retries, completion.finish, completion.usage)
            attempt += 1


def _complete(model: ChatModel, request: ModelRequest) -> Completion:
    try:
        return model.complete(request)
    except TapedeckError:
        raise
    except Exception as exc:  # a provider failure becomes a clean, retryable rewind error, worded as a tool's
        raise ReportError(f"rewind summarization request failed: {type(exc).__name__}: {quoted(exc, 200)}") from exc


# extractive ----------------------------------------------------------------------------------------------

ITEM_CHARS = 200
MAX_PER_KIND = 8
MAX_COLLECTED = 24
PATH_KEYS = (
    "path",
    "file_path",
    "filePath",
    "file",
    "filename",
    "paths",
    "files",
    "target",
    "destination",
    "dest",
)
COMMAND_KEYS = ("command", "cmd", "script")
WRITE_TOOL = re.compile(r"write|edit|create|patch|apply|replace|move|rename|delete|remove|mkdir", re.I)
EXIT_CODE = re.compile(r"\bexit(?:ed)?(?:[ _]?(?:code|status))?\s*[:=]?\s*(-?\d+)\b", re.I)
REDIRECT = re.compile(r"(?<![0-9&])>{1,2}\s*([^\s;&|<>]+)")
BACKTICKED = re.compile(r"`([^`\n]{1,80})`")
IDENTIFIER = re.compile(
    r"\b(?:[A-Za-z_]\w*(?:[.:/]\w+)+|[a-z]+(?:[A-Z][a-z0-9]+)+|[A-Za-z]+_\w+|[A-Z][A-Z0-9_]{3,})\b", re.ASCII
)
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:%|ms|s|KB|MB|GB|x)?(?![\w.])", re.ASCII)
DECISION = re.compile(
    r"\b(?:decid\w*|chose|choose|going with|will use|switch(?:ed)? to|instead)\b|决定|改用|采用|选择", re.I
)
NEXT = re.compile(r"\b(?:next|then|remaining|todo|still need)\b|接下来|下一步|然后|还需要", re.I)
SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n")


def first_line(text: str) -> str:
    """The first non-blank line of ``text``, stripped."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _add(bucket: list[str], value: str) -> None:
    value = clip(" ".join(value.split()), ITEM_CHARS)
    if value and value not in bucket and len(bucket) < MAX_COLLECTED:
        bucket.append(value)


@dataclass
class RegionFacts:
    """Facts pulled from a region's messages, in first-seen order."""

    writes: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)
    conclusions: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)


def tool_arguments(raw: Any) -> dict[str, Any]:
    """A tool call's arguments as a dict (raw JSON string or already parsed); ``{}`` when not an object."""
    if isinstance(raw, dict):
        return raw
    try:
        parsed = loads_arguments(raw) if isinstance(raw, str) else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _paths(args: Mapping[str, Any]) -> list[str]:
    found = []
    for key in PATH_KEYS:
        value = args.get(key)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and item.strip() and "\n" not in item:
                found.append(item.strip())
    return found


def command_of(args: Mapping[str, Any]) -> str | None:
    """The shell command a tool call runs (``command``/``cmd``/``script`` argument), if any."""
    for key in COMMAND_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _status(text: str, is_error: bool) -> str:
    match = EXIT_CODE.search(text)
    if match:
        return f"exit {match.group(1)}"
    return "failed" if is_error else "ok"


def _scan_identifiers(facts: RegionFacts, text: str) -> None:
    for match in BACKTICKED.finditer(text):
        _add(facts.identifiers, f"`{match.group(1)}`")
    for pattern in (IDENTIFIER, NUMBER):
        for match in pattern.finditer(text):
            token = match.group(0)
            if len(token) >= 2 and f"`{token}`" not in facts.identifiers:
                _add(facts.identifiers, token)


def collect_facts(messages: Sequence[Mapping[str, Any]]) -> RegionFacts:
    """Walk the region's messages and gather the facts the extractive report is made of."""
    facts = RegionFacts()
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    last_text = ""
    for message in messages:
        for block in message.get("content") or ():
            if not isinstance(block, Mapping):
                continue
            btype = block.get("type")
            if btype == "tool-call":
                name, args = str(block.get("name") or "tool"), tool_arguments(block.get("arguments"))
                calls[str(block.get("id"))] = (name, args)
                for path in _paths(args):
                    _add(facts.writes if WRITE_TOOL.search(name) else facts.reads, f"`{path}` ({name})")
                command = command_of(args)
                for target in REDIRECT.findall(command or ""):
                    _add(facts.writes, f"`{target}` (shell redirect)")
            elif btype == "tool-result":
                _collect_result(facts, block, calls)
            elif btype == "text" and message.get("role") == "assistant" and (block.get("text") or "").strip():
                last_text = block["text"]
                _collect_prose(facts, last_text)
    classified = {*facts.questions, *facts.decisions, *facts.next_steps}
    for sentence in SENTENCE_BREAK.split(last_text):
        sentence = sentence.strip().lstrip("-*# ").strip()
        if sentence and sentence not in classified:
            _add(facts.conclusions, sentence)
    return facts


def _collect_result(
    facts: RegionFacts, block: Mapping[str, Any], calls: Mapping[str, tuple[str, dict[str, Any]]]
) -> None:
    text = text_of_blocks(block.get("content"), "\n")
    is_error = block.get("isError") is True
    name, args = calls.get(str(block.get("toolCallId")), ("tool", {}))
    command = command_of(args)
    if command:
        _add(facts.commands, f"`{clip(first_line(command), 120)}` → {_status(text, is_error)}")
    if is_error:
        first = first_line(text) or "(no error text)"
        _add(facts.errors, f"{name}: {first}")
        _scan_identifiers(facts, first)


def _collect_prose(facts: RegionFacts, text: str) -> None:
    _scan_identifiers(facts, text)
    for sentence in SENTENCE_BREAK.split(text):
        sentence = sentence.strip().lstrip("-*# ").strip()
        if not sentence:
            continue
        if sentence.endswith(("?", "？")):
            _add(facts.questions, sentence)
        elif DECISION.search(sentence):
            _add(facts.decisions, sentence)
        elif NEXT.search(sentence):
            _add(facts.next_steps, sentence)


def _candidates(facts: RegionFacts, objective: str | None, language: str) -> list[tuple[str, str]]:
    """Section items in the order they are worth keeping when the budget is tight."""
    ranked: list[tuple[str, list[str]]] = [
        ("findings", facts.conclusions[:2]),
        ("findings", facts.errors[:2]),
        ("files", facts.writes[:MAX_PER_KIND]),
        ("findings", facts.commands[:MAX_PER_KIND]),
        ("next", facts.next_steps[-1:]),
        ("files", facts.reads[:MAX_PER_KIND]),
        ("decisions", facts.decisions[:MAX_PER_KIND]),
        ("questions", facts.questions[:MAX_PER_KIND]),
        ("findings", facts.conclusions[2:MAX_PER_KIND]),
        ("findings", facts.errors[2:MAX_PER_KIND]),
    ]
    if objective:
        label = "目标" if language == "zh" else "objective"
        ranked.insert(0, ("findings", [clip(f"{label}: {objective}", ITEM_CHARS)]))
    said = " ".join(item for _, items in ranked for item in items)
    fresh = [token for token in facts.identifiers if token.strip("`") not in said]
    if fresh:
        label = "标识符与数字" if language == "zh" else "identifiers and numbers"
        ranked.append(("findings", [clip(f"{label}: " + ", ".join(fresh[: MAX_PER_KIND * 2]), ITEM_CHARS)]))
    return [(section, item) for section, items in ranked for item in items]


def fit_report(language: str, candidates: Sequence[tuple[str, str]], budget: int | None) -> str:
    """The fullest report within ``budget`` UTF-16 units (None = no limit), compacted to one line if needed."""
    items: dict[str, list[str]] = {name: [] for name in SECTIONS}
    report = render_report(language, items)
    if budget is not None and utf16_len(report) > budget:
        joined = "; ".join(item for _, item in candidates) or NONE_MARK
        return clip(joined, budget)
    for section, item in candidates:
        items[section].append(item)
        attempt = render_report(language, items)
        if budget is not None and utf16_len(attempt) > budget:
            items[section].pop()
        else:
            report = attempt
    return report


@dataclass
class ExtractiveReportWriter:
    """Builds the report from the region's facts, without a model; always shorter than the region."""

    kind: str = "extractive"

    def write(self, request: ReportRequest) -> str:
        """Fill the skeleton from the region, staying below ``request.folded_chars`` when that is positive."""
        facts = collect_facts(request.messages)
        budget = request.folded_chars - 1 if request.folded_chars > 0 else None
        return fit_report(request.language, _candidates(facts, request.objective, request.language), budget)


def default_writer(
    config: RewindConfig, model: ChatModel | None = None, factory: ModelFactory | None = None
) -> ReportWriter:
    """The model writer when a model is configured, else the extractive writer."""
    if model is None:
        return ExtractiveReportWriter()
    return ModelReportWriter(model, config, factory)
