"""The seed-rule audit (``tests/policies/seed_rules.py``): the table itself is held to what it claims, and the
rules no other test covered are checked here, each on a crafted session through tapedeck's real code."""

from __future__ import annotations

import ast
import functools
import json
import re
from contextlib import closing
from pathlib import Path

from core.control.config import validate_config
from core.host.loop import AgentHost, HostOptions
from core.host.providers.scripted import ScriptedModel
from core.policies.adaptive import plan_route
from core.policies.adaptive_config import validate as adaptive_config
from core.policies.recall import run_recall_tool
from core.policies.report import instruction_text
from core.policies.slice import entry_turns, inspect_surface
from tests.policies.seed_reach import exercises, reached
from tests.policies.seed_rules import ROOT, RULES, evidence_path
from tests.policies.test_adaptive_support import new_session, start_turn, tool_step, user
from tests.policies.test_slice_support import Host, config, entries_in, span_of, user_message

README = ROOT / "README.md"
DIFFERENCES = "## Differences from the seeds"


@functools.cache
def _test_names(path: Path) -> frozenset[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return frozenset(
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_")
    )


def _differences() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(DIFFERENCES)
    end = text.find("\n## ", start + len(DIFFERENCES))
    return text[start : end if end >= 0 else len(text)]


# ---------------------------------------------------------------------------------------------- the table
def test_rule_ids_are_unique_and_every_rule_has_evidence() -> None:
    ids = [rule.id for rule in RULES]
    assert len(ids) == len(set(ids))
    assert all(rule.evidence and rule.rule for rule in RULES)
    assert all(rule.verdict == "exact" or re.fullmatch(r"different: D\d+", rule.verdict) for rule in RULES)


def test_every_cited_test_exists() -> None:
    missing = []
    for rule in RULES:
        for ref in rule.evidence:
            path, name = evidence_path(ref)
            if not path.is_file() or name not in _test_names(path):
                missing.append(f"{rule.id}: {ref}")
    assert missing == []


def test_every_cited_test_exercises_the_rules_module() -> None:
    idle = [
        f"{rule.id}: {ref}"
        for rule in RULES
        for ref in rule.evidence
        if not exercises(*evidence_path(ref), rule.section)
    ]
    assert idle == []


def test_the_reach_check_tells_a_test_of_another_module_apart() -> None:
    config_only = evidence_path("prolong_config::test_defaults_are_the_seeds")
    assert reached(*config_only) == {"core.policies.prolong_config"}
    assert exercises(*config_only, "3.c") and not exercises(*config_only, "1.e")
    cli = evidence_path("prolong_status::test_cli_status_of_a_host_whose_log_file_is_blocked_says_writable_no")
    assert "core.cli.status" in reached(*cli)


def test_every_difference_is_documented_in_the_readme() -> None:
    section = _differences()
    documented = set(re.findall(r"\*\*(D\d+)\b", section))
    cited = {rule.verdict.removeprefix("different: ") for rule in RULES if rule.verdict != "exact"}
    assert cited <= documented
    assert documented <= cited  # no stale entry either


def test_the_readme_states_the_tables_counts() -> None:
    section = _differences()
    different = sum(rule.verdict != "exact" for rule in RULES)
    assert f"extraction ({len(RULES)}:" in section
    assert f"({len(RULES) - different} exact, {different} different)" in section


# ---------------------------------------------------------------------------------------------- host model
def test_both_replace_spellings_project_the_same_surface() -> None:
    """§0.1: ``{op: replace, startSeq, endSeq}`` (V4) and ``{op: replace, start, end}`` (V3/rc.6) are one op."""
    surfaces = []
    for op in ({"op": "replace", "startSeq": 1, "endSeq": 2}, {"op": "replace", "start": 1, "end": 2}):
        host = Host()
        host.user(user_message("one"))
        host.user(user_message("two"))
        host.user(user_message("three"))
        host.add("user/message", user_message("summary"), surfaceOp=op, sourceEventSeqs=[1, 2])
        surfaces.append(list(host.session.surface))
    assert surfaces[0] == surfaces[1] == [0, 3]


# ---------------------------------------------------------------------------------------------- 000 slice
def _host_run(tmp_path: Path, responses: list[dict[str, object]], raw_config: dict[str, object]) -> tuple[
    AgentHost, list[str]
]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"model": "m", "responses": responses}))
    (tmp_path / "ws").mkdir()
    said: list[str] = []
    options = HostOptions(workspace=tmp_path / "ws", progress=said.append)
    host = AgentHost.create(tmp_path / "root", ScriptedModel(script), validate_config(raw_config), options,
                            tasks=["Rename timeoutLabel in src/view.ts"])  # fmt: skip
    host.run()
    host.close()
    return host, said


LIST = {"toolCalls": [{"name": "list_files", "arguments": {"path": "."}}]}


def test_a_step_cap_ends_the_turn_blocked_with_the_seed_warning(tmp_path: Path) -> None:
    """§1.b step 1 and §1.i case 10: cap 2 gives 2 requests, a ``blocked`` turn and the seed's warning."""
    host, said = _host_run(tmp_path, [LIST, LIST, LIST, {"text": "done"}], {"slice": {"maxStepsPerTurn": 2}})
    turn = host.session.turns[1]
    assert turn.end_reason == {"kind": "blocked"}
    requests = [e for e in host.session.events if e.get("type") == "assistant/message"]
    assert len(requests) == 2
    assert "slice maxStepsPerTurn=2 reached" in said


def test_without_a_step_cap_a_long_tool_loop_completes(tmp_path: Path) -> None:
    """§1.i case 10: with no cap, 51 tool steps and a final text complete in 52 requests, with no cap warning.

    The adaptive policy's hard step would end a small task at step 9, so its budgets are raised here: this is
    the slice rule alone."""
    profiles = [
        {"taskClass": c, "maxTokens": 4096, "softStepBudget": 60, "hardStepBudget": 70}
        for c in ("read", "small", "frontend", "large", "batch")
    ]
    host, said = _host_run(tmp_path, [LIST] * 51 + [{"text": "done"}], {"adaptive": {"taskProfiles": profiles}})
    turn = host.session.turns[1]
    assert turn.end_reason == {"kind": "completed"}
    assert len([e for e in host.session.events if e.get("type") == "assistant/message"]) == 52
    assert not any("maxStepsPerTurn" in line for line in said)


def test_in_history_system_messages_are_never_sealed_and_ranges_follow_the_window() -> None:
    """§1.b protection and §1.i case 3: a system prompt update in history is never cited by an entry; after
    four turns with keepRecentTurns 1 the entries cover 1-1 and 2-2."""
    host = Host(config(keepRecentTurns=1))
    system_seq = -1
    for turn in range(1, 5):
        host.begin(f"task {turn}")
        if turn == 2:
            update = {"id": "s1", "role": "system", "content": [{"type": "text", "text": "updated rules"}],
                      "source": {"kind": "system"}}  # fmt: skip
            system_seq = host.add("system/message", update, surfaceOp="append")
        host.reply(f"answer {turn}")
        if turn < 4:
            host.end()
    assert [span_of(e) for e in entries_in(host.requests[-1])] == ["1-1", "2-2"]
    cited = {s for e in host.events if e.get("type") == "user/message" for s in e.get("sourceEventSeqs") or ()}
    assert system_seq not in cited


def test_own_entries_are_never_re_sealed_so_no_earlier_item_arises() -> None:
    """§1.c: the legacy "earlier checkpoint" item only arises when an entry joins a run; the frozen prefix keeps
    every entry (and all before it) protected, so entries are never re-rendered."""
    host = Host(config())
    for turn in range(1, 5):
        host.simple_turn(f"task {turn}", f"answer {turn}")
    host.begin("task 5")
    layout = inspect_surface(host.session)
    entries = [n for n in layout.nodes if host.events[n.seq].get("type") == "user/message"
               and (host.events[n.seq]["data"].get("source") or {}).get("kind") == "plugin:slice:history"]  # fmt: skip
    assert len(entries) == 4 and all(n.protected for n in entries)
    texts = [e for m in host.requests[-1] for e in entries_in([m])]
    assert not any("earlier checkpoint covered" in text for text in texts)


def _bare_host(tmp_path: Path, raw: dict[str, object], name: str = "root") -> AgentHost:
    """A host with no tasks, for what it would send (the system prompt, the tool list)."""
    (tmp_path / "ws").mkdir(exist_ok=True)
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"model": "m", "responses": [{"text": "unused"}]}))
    return AgentHost.create(tmp_path / name, ScriptedModel(script), validate_config(raw),
                            HostOptions(workspace=tmp_path / "ws"), tasks=[])  # fmt: skip


def test_system_prompt_sections_follow_the_seed_orders(tmp_path: Path) -> None:
    """§1.f, §2.d, §3.b: slice at -1200, then prolong at promptOrder (150), then rewind at 151; a promptOrder
    past 151 moves prolong after rewind."""

    def order(raw: dict[str, object], name: str) -> list[str]:
        with closing(_bare_host(tmp_path, raw, name)) as host:
            prompt = host.hooks.system_prompt()
        marks = {"slice": "<slice>", "rewind": "Checkpoints and folding:", "prolong": "log.txt"}
        return sorted(marks, key=lambda section: prompt.index(marks[section]))

    assert order({}, "a") == ["slice", "prolong", "rewind"]
    assert order({"prolong": {"promptOrder": 199}}, "b") == ["slice", "rewind", "prolong"]


def test_with_folding_off_recall_step_is_not_offered(tmp_path: Path) -> None:
    """§1.h ``fold.enabled``: false registers only ``expand_result`` of the fold's tools (no ``recall_step``)."""

    def names(raw: dict[str, object], name: str) -> set[str]:
        with closing(_bare_host(tmp_path, raw, name)) as host:
            return {schema["name"] for schema in host.hooks.tool_schemas()}

    assert {"expand_result", "recall_step", "recall_turn", "recall_search"} <= names({}, "on")
    off = names({"slice": {"fold": {"enabled": False}}}, "off")
    assert {"expand_result", "recall_turn", "recall_search"} <= off
    assert "recall_step" not in off
    with closing(_bare_host(tmp_path, {"slice": {"fold": {"enabled": False}}}, "off-prompt")) as host:
        prompt = host.hooks.system_prompt()
    assert "recall_step" not in prompt and "recall_turn" in prompt


def test_both_entry_prefixes_give_the_entry_span() -> None:
    """§1.h: ``[slice checkpoint v1 · turns `` and ``[slice tape v1 · turns `` both parse as own entries."""
    for prefix in ("[slice checkpoint v1 · turns ", "[slice tape v1 · turns "):
        host = Host()
        host.simple_turn("task", "answer")
        entry = user_message(f"{prefix}3-5 · 3 turn(s) sealed]\n[turn 3]", {"kind": "plugin:slice:history"})
        seq = host.add("user/message", entry, surfaceOp={"op": "replace", "start": 2, "end": 2},
                       sourceEventSeqs=[2])  # fmt: skip
        assert entry_turns(host.session, seq) == (3, 5)


def test_a_legacy_session_tape_replacement_is_ordinary_history() -> None:
    """§1.h: a ``# SESSION TAPE`` replacement (another plugin's source) is a foreign node: protected, kept."""
    host = Host(config())
    host.simple_turn("task 1", "answer 1")
    tape = user_message("# SESSION TAPE\nturn 1: answered", {"kind": "plugin", "plugin": "tape"})
    seq = host.add("user/message", tape, surfaceOp={"op": "replace", "start": 3, "end": 3}, sourceEventSeqs=[3])
    host.simple_turn("task 2", "answer 2")
    host.begin("task 3")
    assert seq in host.session.surface
    node = next(n for n in inspect_surface(host.session).nodes if n.seq == seq)
    assert node.protected
    assert any(m.get("content", [{}])[0].get("text", "").startswith("# SESSION TAPE") for m in host.requests[-1])


# ---------------------------------------------------------------------------------------------- 001 rewind
def test_the_report_instruction_keeps_the_seed_skeleton_in_our_words() -> None:
    """§2.c: five Markdown sections in the seed's order with ``(none)`` for an empty one, in English or Chinese;
    the headings are worded fresh (D9), each naming the seed's section."""
    seed_order = ("Findings", "Files and artifacts", "Decisions", "Open questions", "Next step")
    english = instruction_text("en")
    assert [english.index(f"## {h}\n") for h in seed_order] == sorted(english.index(f"## {h}\n") for h in seed_order)
    assert "(none)" in english
    chinese = instruction_text("zh")
    headings = [line for line in chinese.splitlines() if line.startswith("## ")]
    assert len(headings) == 5 and "(none)" in chinese


# ---------------------------------------------------------------------------------------------- 004 adaptive
def test_a_lower_requested_cap_is_kept_and_a_higher_one_is_capped() -> None:
    """§4.d ``agent/request``: a requested max-tokens within the class cap is kept; a higher one gets the cap."""
    session = new_session()
    user(session, "Rename timeoutLabel in src/view.ts")
    start_turn(session, 1)
    tool_step(session, 1, 1)
    decision = plan_route(session, adaptive_config({}), context_window=None, context_tokens=None)
    assert decision.max_tokens == 32768  # the small class
    assert decision.cap(1000) == 1000
    assert decision.cap(32768) == 32768
    assert decision.cap(100_000) == 32768
    assert decision.cap(None) == 32768


def test_recall_reads_original_events_only() -> None:
    """§1.a: the recall tools read original events; tape entries, folds and other replacements are never recalled."""
    host = Host(config(), fold=True)
    table = "\n".join(["id,name,score"] + [f"{i},row-{i:03d},{i % 7}" for i in range(400)])
    host.begin("load the table")
    host.reply("reading", [("c1", "read_file", {"path": "data/table.csv"}, table)])
    host.next_step()  # the fold lands before this request
    host.reply("the table has 400 rows")
    host.end()
    host.begin("next task")  # turn 1 is sealed into a tape entry
    replaced = {s for e in host.events if e.get("surfaceOp") not in (None, "append") for s in e["sourceEventSeqs"]}
    assert replaced, "the scenario must fold and seal something"
    texts = [json.dumps(e["data"]) for e in host.events if e.get("surfaceOp") not in (None, "append")]
    assert any("kept" in t for t in texts) and any("sealed" in t for t in texts)
    for query in ("kept", "sealed"):  # words only the replacements hold
        page = run_recall_tool(host.session, "recall_search", {"query": query}).text
        assert page.startswith(f'[recall_search "{query}" · 0 hits'), page
    turn_page = run_recall_tool(host.session, "recall_turn", {"turn": "1", "view": "full"}).text
    assert "slice tape v1" not in turn_page and " kept · " not in turn_page
    expanded = run_recall_tool(host.session, "expand_result", {"turn": 1, "step": 1, "call": 1}).text
    assert expanded == f"[full result of read_file · turn 1 step 1 call 1]\n{table}"
