"""The checkpoint risk router (seed 004 §4.c): pick at most one high-confidence, not yet covered risk.

Model-free and bounded: the request is cut to ``maxRequestChars`` and the evidence (the newest tool results,
see ``build_evidence``) to ``maxEvidenceChars`` before any pattern runs, so the cost does not grow with the
session. Each of the nine risk profiles scores the request and the evidence with its strong and support
patterns; the best score wins unless it is below ``minimumScore`` (``low-confidence``) or, with
``skipCovered``, recent output already shows a passing check for it (the next uncovered profile above the
minimum wins, else ``already-covered``).

JavaScript semantics, reproduced on purpose:

- Lengths, bounds and slices are in UTF-16 code units. Bounded texts are kept as *unit strings*: every astral
  character is split into its two surrogate halves (``js_units``), so ``len`` and slicing behave like JS and a
  cut may separate a surrogate pair exactly as it does there.
- Patterns are the seed's ``/…/i`` regexes: ``\\b`` is ASCII-only and case folding is ASCII-only
  (``re.ASCII | re.I``), ``.`` excludes ``\\r``, U+2028 and U+2029 as well as ``\\n``, and ``\\s`` is JS's
  Unicode whitespace set (``js_pattern``). Applied to unit strings, ``.{0,36}`` spans 36 code units.

Reconstructions (documented where the spec abbreviates):

- The ``boundary`` and ``batch-integrity`` strong patterns end in an optional group (``.{0,32}(…)?``), as does
  the first ``persistence`` pattern. A trailing optional group after a bounded wildcard can never decide
  whether a pattern matches, so those patterns are implemented as their leading keyword alternation alone;
  every acceptance case is unaffected by construction.
- ``boundText`` for a maximum of 3 or less (where the seed's head/tail formula degenerates and returns more
  than the maximum) returns the plain head slice, as the seed's evidence-piece bound already does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.policies.adaptive_config import RiskRouterConfig
from core.read.session import Session
from core.shared.text import tool_result_block, utf16_len

EVIDENCE_RESULTS = 8
FRAGMENT_WINDOW = 360
FRAGMENT_STRIDE = 240
ELLIPSIS = "\n…\n"

_JS_ANY = r"[^\n\r\u2028\u2029]"
_JS_SPACE = r"[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")

# Reasons a decision can carry.
SELECTED = "selected"
DISABLED = "disabled"
READ_ONLY = "read-only"
LOW_CONFIDENCE = "low-confidence"
ALREADY_COVERED = "already-covered"


def js_pattern(source: str) -> re.Pattern[str]:
    """Compile a JavaScript ``/source/i`` pattern with JS's ``\\b``, ``.``, ``\\s`` and case folding.

    Only the ``.{`` (bounded wildcard) and ``\\s`` spellings are rewritten; the task router uses this too.
    """
    return re.compile(source.replace(".{", _JS_ANY + "{").replace(r"\s", _JS_SPACE), re.I | re.ASCII)


def js_units(text: str) -> str:
    """``text`` as a string of UTF-16 code units: astral characters become their surrogate pairs."""

    def split(match: re.Match[str]) -> str:
        point = ord(match.group()) - 0x10000
        return chr(0xD800 + (point >> 10)) + chr(0xDC00 + (point & 0x3FF))

    return _ASTRAL.sub(split, text)


def bound_text(text: str, maximum: int) -> str:
    """``text`` cut to at most ``maximum`` UTF-16 units: head, ``\\n…\\n``, and a quarter-size tail.

    Returns a unit string (see ``js_units``); works on raw and unit strings alike, and only converts the
    parts it keeps, so multi-megabyte inputs cost a length count.
    """
    if utf16_len(text) <= maximum:
        return js_units(text)
    if maximum <= 3:
        return js_units(text[:maximum])[:maximum]
    tail = maximum // 4
    head = maximum - tail - len(ELLIPSIS)
    return js_units(text[:head])[:head] + ELLIPSIS + js_units(text[-tail:])[-tail:]


@dataclass(frozen=True, slots=True)
class RiskProfile:
    """One risk: its patterns, the task classes it is typical for, and its checkpoint sentence."""

    risk: str
    strong: tuple[re.Pattern[str], ...]
    support: re.Pattern[str]
    affinity: frozenset[str]
    checkpoint: str

    def mentioned_in(self, text: str) -> bool:
        """True when any strong or support pattern matches ``text``."""
        return self.support.search(text) is not None or any(p.search(text) for p in self.strong)

    def strong_count(self, text: str) -> int:
        """How many strong patterns match ``text``."""
        return sum(1 for p in self.strong if p.search(text))


def _profile(
    risk: str, strong: tuple[str, ...], support: str, affinity: tuple[str, ...], checkpoint: str
) -> RiskProfile:
    return RiskProfile(
        risk, tuple(js_pattern(p) for p in strong), js_pattern(support), frozenset(affinity), checkpoint
    )


# Priority is table order (ties in score and strong matches go to the earlier profile).
PROFILES: tuple[RiskProfile, ...] = (
    _profile(
        "security",
        (
            r"(?:注入|越权|路径穿越|密钥泄露|令牌泄露|权限绕过|认证绕过|沙箱逃逸)",
            r"(?:injection|path traversal|privilege escalation|auth(?:entication|orization)? bypass|token leak|secret leak|sandbox escape)",
            r"(?:权限|认证|授权|凭据|密钥|令牌|permission|authentication|authorization|credential|secret|token).{0,36}(?:校验|绕过|泄露|暴露|边界|validate|bypass|leak|expos|boundary)",
        ),
        r"(?:安全|权限|认证|授权|凭据|密钥|security|permission|auth|credential|secret|token)",
        ("large", "small"),
        "Run at most one existing check or small reproduction against the trust or permission boundary that "
        "matters most here. Keep real credentials out of it and skip any wider security review.",
    ),
    _profile(
        "persistence",
        (
            r"(?:持久化|迁移|事务|崩溃恢复|断电恢复|部分写入|重启恢复|重新加载)",
            r"(?:persist(?:ence|ed)?|migration|transaction|crash recovery|partial write|restart|reload).{0,36}(?:state|data|file|database|storage|cache|recover|consisten)",
            r"(?:localStorage|indexedDB|sqlite|database).{0,32}(?:reload|restart|migration|transaction|persist|recover)",
        ),
        r"(?:持久化|存储|数据库|迁移|事务|重启|persist|storage|database|migration|transaction|restart|reload)",
        ("large", "frontend"),
        "Run at most one existing check or small reproduction across the save and reload, restart, migration "
        "or partial-write edge that applies. Build no new storage tooling.",
    ),
    _profile(
        "concurrency",
        (
            r"(?:竞态|死锁|数据竞争|原子性|并发安全|锁顺序|乱序|并行写入)",
            r"(?:race condition|deadlock|data race|atomicity|thread[- ]safe|lock ordering|out[- ]of[- ]order|concurrent write)",
            r"(?:并发|并行|队列|concurren|parallel|queue).{0,32}(?:顺序|竞态|锁|原子|重复|ordering|race|lock|atomic|duplicate)",
        ),
        r"(?:并发|并行|异步|队列|锁|concurren|parallel|async|queue|lock)",
        ("large", "batch"),
        "Run at most one existing check or small reproduction for the ordering, atomicity or race edge that "
        "applies. Keep it deterministic and build no stress-testing harness.",
    ),
    _profile(
        "retry",
        (
            r"(?:重试|超时).{0,32}(?:逻辑|机制|次数|失败|副作用|重复|恢复|请求|任务)|(?:退避|幂等|去重)",
            r"(?:retry|timeout).{0,36}(?:logic|policy|attempt|failure|side effect|duplicate|recover|request|job)|(?:backoff|idempoten|deduplicat)",
            r"(?:重试|retry).{0,32}(?:重复写入|重复发送|副作用|幂等|duplicate|side effect|idempoten)",
        ),
        r"(?:重试|超时|退避|幂等|retry|timeout|backoff|idempoten)",
        ("small", "large"),
        "Run at most one existing check or small reproduction for the retry, timeout or duplicate-side-effect "
        "edge that applies. Leave unrelated failure modes alone.",
    ),
    _profile(
        "boundary",
        (
            r"(?:边界条件|边缘情况|空值|空数组|空输入|无效输入|上限|下限|溢出)",
            r"(?:boundary condition|edge case|empty input|null value|invalid input|upper limit|lower limit|overflow)",
            r"(?:解析|校验|计算|索引|parser|validation|calculation|index).{0,28}(?:空|无效|最大|最小|null|empty|invalid|max|min|overflow)",
        ),
        r"(?:边界|空值|无效|上限|下限|boundary|edge case|null|empty|invalid|overflow)",
        ("small",),
        "Run at most one existing check or small reproduction for the input or state edge that matters most, "
        "chosen from the behaviour you changed. Do not list unrelated edge cases.",
    ),
    _profile(
        "compatibility",
        (
            r"(?:向后兼容|兼容旧版|破坏性变更|协议版本|配置迁移|模式迁移|公开接口)",
            r"(?:backward compatib|breaking change|protocol version|config migration|schema migration|public API|wire format)",
            r"(?:配置|协议|模式|接口|config|protocol|schema|API).{0,32}(?:兼容|升级|迁移|旧版|compatib|upgrade|migration|legacy)",
        ),
        r"(?:兼容|协议|模式|公开接口|compatib|protocol|schema|public API|wire format)",
        ("large", "small"),
        "Run at most one existing contract or compatibility check for the public configuration, schema, "
        "protocol or API you changed. Leave unrelated consumers untested.",
    ),
    _profile(
        "resource",
        (
            r"(?:资源泄漏|内存泄漏|句柄泄漏|清理失败|未释放|孤儿进程|监听器泄漏|临时文件泄漏)",
            r"(?:resource leak|memory leak|handle leak|cleanup failure|not disposed|orphan process|listener leak|temporary file leak)",
            r"(?:中止|失败|超时|abort|failure|timeout).{0,32}(?:清理|释放|关闭|终止|cleanup|dispose|close|terminate|unsubscribe)",
        ),
        r"(?:清理|释放|关闭|中止|cleanup|dispose|close|abort|listener|stream|socket|process)",
        ("large", "small"),
        "Run at most one existing check or small reproduction showing cleanup on the completion, failure, "
        "abort or timeout path that applies. Add no leak-detection tooling.",
    ),
    _profile(
        "frontend",
        (
            r"(?:响应式|横向溢出|键盘导航|焦点管理|屏幕阅读器|无障碍|主题持久化|触摸交互)",
            r"(?:responsive|horizontal overflow|keyboard navigation|focus management|screen reader|accessibility|theme persistence|touch interaction)",
            r"(?:页面|界面|布局|表单|page|UI|layout|form).{0,32}(?:移动端|视口|溢出|键盘|焦点|无障碍|mobile|viewport|overflow|keyboard|focus|accessib)",
        ),
        r"(?:前端|页面|界面|布局|交互|frontend|page|UI|layout|interaction|responsive)",
        ("frontend",),
        "Run at most one existing preview or check for the layout, input or accessibility state that the "
        "request or the evidence points to. Set up no browser tooling.",
    ),
    _profile(
        "batch-integrity",
        (
            r"(?:批量|所有文件|全部文件|代码迁移|大规模迁移)",
            r"(?:bulk|all files|codemod|mass migration)",
            r"(?:部分失败|partial failure).{0,32}(?:批次|批量|batch|bulk)",
        ),
        r"(?:批量|所有文件|迁移|汇总|bulk|all files|codemod|migration|aggregate)",
        ("batch",),
        "Use one existing check on a representative item plus the aggregate count or invariant for the batch. "
        "Skip item-by-item inspection once both agree.",
    ),
)
RISKS: tuple[str, ...] = tuple(p.risk for p in PROFILES)

_DOCUMENTATION_TARGET = js_pattern(
    r"(?:\bREADME\b|\bdocs?\/|documentation|\bcomments?\b|文档|注释|说明文字|帮助文本|copywriting|文案)"
)
_RUNTIME_TARGET = js_pattern(
    r"(?:\bsrc\/|\btests?\/|\.[cm]?[jt]sx?\b|函数|逻辑|运行时|测试|function|runtime|test|spec)"
)
_FAILURE_CUE = js_pattern(
    r"(?:✗|❌|\bfail(?:ed|ure|ing)?\b|\berror\b|\bexception\b|\btimed out\b|失败|错误|异常|执行超时)"
)
_PASS_CUE = js_pattern(r"(?:✓|✅|\bpass(?:ed|ing)?\b|\bok\b|\bsuccess(?:ful)?\b|通过|成功)")
_CHECK_CUE = js_pattern(r"(?:test|spec|check|assert|smoke|验证|测试|检查|断言|✓|✅|\bpass)")
_ZERO_FAILURES = js_pattern(r"\b(?:0|zero)\s+(?:fail(?:ed|ures?)?|errors?)\b")
_NO_FAILURES_ZH = re.compile("(?:无|没有)失败")
_RESULT_START = re.compile(r"(?=\[tool (?:result|error)\])", re.I | re.ASCII)
_LINE_BREAK = re.compile(r"\r?\n")
_SPACE_RUN = re.compile(_JS_SPACE + "+")


@dataclass(frozen=True, slots=True)
class RiskDecision:
    """The router's auditable outcome; ``risk`` is None unless ``reason`` is ``selected``."""

    risk: str | None
    score: int
    reason: str
    request_chars_inspected: int
    evidence_chars_inspected: int

    def to_dict(self) -> dict[str, Any]:
        """The decision as logged in ``tapedeck/route`` events."""
        return {
            "risk": self.risk,
            "score": self.score,
            "reason": self.reason,
            "requestCharsInspected": self.request_chars_inspected,
            "evidenceCharsInspected": self.evidence_chars_inspected,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RiskDecision | None:
        """Read a logged decision back; None when the mapping is not one."""
        risk, score, reason = data.get("risk"), data.get("score"), data.get("reason")
        request, evidence = data.get("requestCharsInspected"), data.get("evidenceCharsInspected")
        if (
            (risk is not None and risk not in RISKS)
            or not isinstance(reason, str)
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in (score, request, evidence))
        ):
            return None
        return cls(risk, score, reason, request, evidence)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class _Fragment:
    text: str
    failing: bool
    passing_check: bool


def has_failure(text: str) -> bool:
    """A failure cue remains once "0 failed" / "zero errors" / "无失败" style counts are removed."""
    return _FAILURE_CUE.search(_NO_FAILURES_ZH.sub("", _ZERO_FAILURES.sub("", text))) is not None


def evidence_fragments(evidence: str) -> list[str]:
    """Per tool-result piece: its non-empty lines, then whitespace-collapsed windows of 360 every 240 units."""
    fragments: list[str] = []
    for piece in _RESULT_START.split(evidence):
        fragments.extend(line for line in _LINE_BREAK.split(piece) if line)
        flat = _SPACE_RUN.sub(" ", piece)
        fragments.extend(flat[i : i + FRAGMENT_WINDOW] for i in range(0, len(flat), FRAGMENT_STRIDE))
    return fragments


def risk_checkpoint(risk: str) -> str:
    """The one-check instruction for ``risk``."""
    for profile in PROFILES:
        if profile.risk == risk:
            return profile.checkpoint
    raise ValueError(f"unknown risk {risk!r} (known: {', '.join(RISKS)})")


def route_risk(
    task_class: str,
    request_text: str,
    evidence: str = "",
    config: RiskRouterConfig | None = None,
) -> RiskDecision:
    """Select at most one risk for the checkpoint of a ``task_class`` task (see the module docstring)."""
    config = config or RiskRouterConfig()
    request = bound_text(request_text, config.max_request_chars)
    bounded = bound_text(evidence, config.max_evidence_chars)

    def decide(risk: str | None, score: int, reason: str) -> RiskDecision:
        return RiskDecision(risk, score, reason, len(request), len(bounded))

    if not config.enabled:
        return decide(None, 0, DISABLED)
    if task_class == "read":
        return decide(None, 0, READ_ONLY)
    documentation_only = bool(_DOCUMENTATION_TARGET.search(request)) and not _RUNTIME_TARGET.search(request)
    fragments = [
        _Fragment(text, has_failure(text), bool(_PASS_CUE.search(text) and _CHECK_CUE.search(text)))
        for text in (evidence_fragments(bounded) if bounded else ())
    ]
    ranked: list[tuple[int, int, int, bool, str]] = []
    for priority, profile in enumerate(PROFILES):
        request_strong = 0 if documentation_only else profile.strong_count(request)
        request_support = False if documentation_only else bool(profile.support.search(request))
        in_evidence = profile.mentioned_in(bounded)
        # Fragments are judged on their own: a collapsed window can mention a risk the raw text splits.
        mentioning = [f for f in fragments if profile.mentioned_in(f.text)]
        score = 4 + min(2, request_strong - 1) if request_strong else 0
        score += int(request_support) + int(in_evidence)
        score += 2 if in_evidence and any(f.failing for f in mentioning) else 0
        score += 1 if score and task_class in profile.affinity else 0
        covered = any(f.passing_check and not f.failing for f in mentioning)
        ranked.append((score, request_strong, priority, covered, profile.risk))
    ranked.sort(key=lambda c: (-c[0], -c[1], c[2]))
    top = ranked[0][0]
    if top < config.minimum_score:
        return decide(None, top, LOW_CONFIDENCE)
    if not config.skip_covered:
        return decide(ranked[0][4], top, SELECTED)
    for score, _, _, covered, risk in ranked:
        if score >= config.minimum_score and not covered:
            return decide(risk, score, SELECTED)
    return decide(None, top, ALREADY_COVERED)


def _nested_text(blocks: Any, maximum: int) -> str:
    pieces: list[str] = []
    remaining = maximum
    for block in blocks if isinstance(blocks, list) else ():
        if remaining <= 0:
            break
        if isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str):
            piece = js_units(block["text"][:remaining])[:remaining]
            pieces.append(piece)
            remaining -= len(piece) + 1
    return "\n".join(pieces)


def build_evidence(session: Session, maximum: int) -> str:
    """Text of the newest original tool results (at most 8), newest first, bounded to ``maximum`` units.

    Each result contributes ``[tool result]`` or ``[tool error]``, a newline and its text blocks (head and
    tail kept when it does not fit); pieces are joined by newlines. Replacement events (folds, prunes) are
    skipped: the evidence is what the tools returned, not what the surface shows now. Unlike the seed, a
    piece whose label alone would not fit ends the evidence, so the result never exceeds ``maximum``.
    """
    pieces: list[str] = []
    remaining = maximum
    inspected = 0
    for seqs in reversed(list(session.results_by_step.values())):
        for seq in reversed(seqs):
            if remaining <= 0 or inspected >= EVIDENCE_RESULTS:
                return "\n".join(pieces)
            inspected += 1
            message = (session.events[seq].get("data") or {}).get("message")
            block = tool_result_block(message if isinstance(message, Mapping) else None)
            raw = _nested_text(block.get("content") if block else None, remaining)
            if not raw:
                continue
            prefix = "[tool error]\n" if block and block.get("isError") is True else "[tool result]\n"
            if remaining <= len(prefix):
                return "\n".join(pieces)
            piece = prefix + bound_text(raw, remaining - len(prefix))
            pieces.append(piece)
            remaining -= len(piece) + 1
    return "\n".join(pieces)
