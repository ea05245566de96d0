"""The bridge's own files in one session directory, driven in one Node process (no DSH): how it words a problem
with the inbox, an inbox whose mode it cannot restore, the checkpoint marks and the inbox cursor it takes back from
``bridge.state.json`` and the outcomes file, and the temporary file of an atomic write that failed."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from core.shared.text import quoted_path
from tests.dsh.harness import PLUGIN, DshInstall

SCRIPT = """
import { SessionBridge, apply } from %s;
import fs from "node:fs";
import { execFileSync } from "node:child_process";
const [base] = %s;
const said = {};
const plugin = { warn: (text) => (said.warned ??= []).push(text), trouble: (what, text) => text && plugin.warn(text) };
const agent = (id) => ({ id, status: "idle", session: { events: [] } });

// a symlinked inbox in a directory whose name holds two spaces in a row
const spaced = `${base}/two  spaces`;
fs.mkdirSync(spaced);
fs.symlinkSync("/dev/null", `${spaced}/control.jsonl`);
const b1 = new SessionBridge(plugin, agent("s1"), spaced);
b1.openInbox();
said.spaced = b1.problem;

// an inbox of ours at 0644 whose mode cannot be restored (as on a read-only mount)
const ro = `${base}/ro`;
fs.mkdirSync(ro);
fs.writeFileSync(`${ro}/control.jsonl`, "", { mode: 0o644 });
fs.chmodSync(`${ro}/control.jsonl`, 0o644);
const fchmod = fs.fchmodSync;
fs.fchmodSync = () => {
  throw Object.assign(new Error("EROFS: read-only file system, fchmod"), { code: "EROFS", errno: -30, syscall: "fchmod" });
};
const b2 = new SessionBridge(plugin, agent("s2"), ro);
try {
  said.ro = { opened: b2.openInbox() !== undefined, problem: b2.problem };
} catch (err) {
  said.ro = { threw: String(err) };
}
fs.fchmodSync = fchmod;

// saved marks with fields of the wrong kind
const marked = `${base}/marked`;
fs.mkdirSync(marked);
const good = { markId: 1, seq: 4, objective: "tests pass", at: 1700000000000 };
const marks = [
  good,
  { markId: 2, seq: null, at: 1700000000001, completed: true },
  { markId: 3, seq: "4", at: 1700000000002 },
  { markId: 4, seq: 5, at: 1700000000003, objective: { text: "x" } },
  { markId: 5, seq: 6, at: 1700000000004, completed: "no" },
  { markId: 6, seq: 7, at: "now" },
  { markId: 7, seq: -1, at: 1700000000005 },
  { markId: 0, seq: 8, at: 1700000000006 },
  { markId: 8, at: 1700000000007 },
  { markId: 9, seq: 9, at: 1700000000008, extra: "x".repeat(10) },
  "mark",
  null,
];
fs.writeFileSync(`${marked}/bridge.state.json`, JSON.stringify({ cursor: { ino: 0, offset: 0 }, paused: false, marks }));
const b3 = new SessionBridge(plugin, agent("s3"), marked);
b3.attach(Date.now());
said.marks = b3.marks;

// checkpoint outcomes whose detail has fields of the wrong kind
const logged = `${base}/logged`;
fs.mkdirSync(logged);
const applied = (requestId, detail) => ({ requestId, op: "checkpoint", outcome: "applied", detail, at: 1 });
const outcomes = [
  applied("c1", { markId: 1, seq: 4, objective: "tests pass" }),
  applied("c2", { markId: 2, seq: "4" }),
  applied("c3", { markId: 3, seq: -1 }),
  applied("c4", { markId: 4, seq: 5, objective: ["x"] }),
  applied("c5", { markId: 5, seq: 6, at: "now" }),
  applied("c6", { markId: 6, seq: null, at: 1700000000000 }),
];
fs.writeFileSync(`${logged}/control.outcomes.jsonl`, outcomes.map((o) => JSON.stringify(o) + "\\n").join(""));
const b5 = new SessionBridge(plugin, agent("s5"), logged);
b5.readOutcomes();
said.logged = b5.marks.map(({ at, ...mark }) => ({ ...mark, at: typeof at }));

// a saved cursor with a negative offset into the inbox it names
const cursed = `${base}/cursor`;
fs.mkdirSync(cursed);
fs.writeFileSync(`${cursed}/control.jsonl`, "", { mode: 0o600 });
const ino = fs.statSync(`${cursed}/control.jsonl`).ino;
fs.writeFileSync(`${cursed}/bridge.state.json`, JSON.stringify({ cursor: { ino, offset: -5 }, paused: false, marks: [] }));
const b6 = new SessionBridge(plugin, agent("s6"), cursed);
try {
  b6.attach(Date.now());
  said.cursor = { cursor: b6.cursor, inbox: ino };
} catch (err) {
  said.cursor = { threw: String(err) };
}

// an inbox written again in place (truncated and written: the same inode), between two polls and while no bridge ran
const rewritten = `${base}/rewritten`;
fs.mkdirSync(rewritten);
const inboxFile = `${rewritten}/control.jsonl`;
const line = (id) => JSON.stringify({ id, op: "pause", args: {}, at: 1700000000000 }) + "\\n";
fs.writeFileSync(inboxFile, line("first-01"), { mode: 0o600 });
const rewriteInode = fs.statSync(inboxFile).ino;
const admitted = [];
const watched = (bridge) => {
  bridge.admit = (request, recovered) => admitted.push(request.id + (recovered ? " (read before)" : ""));
  bridge.outcome = (request, outcome) => admitted.push(`${request.id} ${outcome}`);
  return bridge;
};
const b7 = watched(new SessionBridge(plugin, agent("s7"), rewritten));
b7.attach(Date.now());
b7.poll();
fs.writeFileSync(inboxFile, line("again-01"));
b7.poll();
fs.writeFileSync(inboxFile, line("later-01") + line("later-02"));
const b8 = watched(new SessionBridge(plugin, agent("s7"), rewritten));
b8.attach(Date.now());
b8.poll();
fs.appendFileSync(inboxFile, line("later-03"));
b8.poll();
said.rewritten = { admitted, sameInode: fs.statSync(inboxFile).ino === rewriteInode };

// an inbox written again in place with its lines moved (a new one first), then one reusing an id
const moved = `${base}/moved`;
fs.mkdirSync(moved);
const movedFile = `${moved}/control.jsonl`;
fs.writeFileSync(movedFile, line("moved-01") + line("moved-02"), { mode: 0o600 });
const notes = [];
const b10 = new SessionBridge(plugin, agent("s10"), moved);
b10.admit = b10.outcome = () => {}; // nothing runs
b10.note = (problem) => notes.push(problem);
b10.attach(Date.now());
b10.poll();
fs.writeFileSync(movedFile, line("moved-00") + line("moved-01") + line("moved-02"));
b10.poll();
fs.appendFileSync(movedFile, line("moved-02"));
b10.poll();
said.moved = notes;

// an atomic write whose rename fails: bridge.state.json is a directory that is not empty
const blocked = `${base}/blocked`;
fs.mkdirSync(`${blocked}/bridge.state.json`, { recursive: true });
fs.writeFileSync(`${blocked}/bridge.state.json/held`, "");
const b4 = new SessionBridge(plugin, agent("s4"), blocked);
b4.attached = true;
b4.saveState();
said.blocked = { problem: b4.problem, left: fs.readdirSync(blocked).sort() };

// a real plugin instance (DSH's context stood in for) whose bridge.json write fails, works, then fails again
const warnings = [];
const ctx = { effect() {}, on() {}, get() {}, agents: { list: () => [] }, commands: { register() {} },
              logger: { warn: (text) => warnings.push(text) } };
apply(ctx);
const flaky = `${base}/flaky`;
const breakIt = () => fs.mkdirSync(`${flaky}/bridge.json/held`, { recursive: true }); // a directory: the rename fails
breakIt();
const b9 = new SessionBridge(globalThis[Symbol.for("tapedeck-bridge.instances")].at(-1), agent("s9"), flaky);
b9.attached = true;
b9.writeBridge(1, true);
b9.writeBridge(2, true); // the same failure at the next write: not logged again
fs.rmSync(`${flaky}/bridge.json`, { recursive: true });
b9.writeBridge(3, true); // put right
fs.rmSync(`${flaky}/bridge.json`);
breakIt();
b9.writeBridge(4, true); // it comes back
said.recurring = { warnings, written: b9.written };

// FIFOs where the bridge's own files go: each read of them held DSH's start until a writer came (for ever)
const piped = `${base}/piped`;
fs.mkdirSync(piped);
for (const name of ["control.outcomes.jsonl", "bridge.state.json", "bridge.json", "bridge.standby.json"])
  execFileSync("mkfifo", [`${piped}/${name}`]);
const b11 = new SessionBridge(plugin, agent("s11"), piped);
b11.attach(Date.now());
said.piped = { marks: b11.marks, final: [...b11.final], cursor: b11.cursor };

// an outcomes file too big to be read as one string (past V8's largest, ~512 MiB, readFileSync throws: stood in
// for here), with a line far longer than a piece of it, whose two-byte characters straddle pieces
const grown = `${base}/grown`;
fs.mkdirSync(grown);
const longObjective = "é".repeat(150000) + "!";
const grownLines = [];
for (let i = 0; i < 3000; i++) grownLines.push({ requestId: `r${i}`, op: "pause", outcome: "applied", at: 1 });
grownLines.push({ requestId: "cp", op: "checkpoint", outcome: "applied", detail: { markId: 1, seq: 4, objective: longObjective, at: 2 } });
grownLines.push({ requestId: "last", op: "pause", outcome: "pending", at: 3 });
fs.writeFileSync(`${grown}/control.outcomes.jsonl`, grownLines.map((o) => JSON.stringify(o)).join("\\n") + '\\n{"requestId":"cut');
const b12 = new SessionBridge(plugin, agent("s12"), grown);
const readFileSync = fs.readFileSync;
fs.readFileSync = () => {
  throw new RangeError("Cannot create a string longer than 0x1fffffe8 characters");
};
b12.readOutcomes();
fs.readFileSync = readFileSync;
said.grown = { final: b12.final.size, pending: [...b12.pending], objective: b12.marks[0]?.objective === longObjective };
process.stdout.write(JSON.stringify(said));
"""


@pytest.fixture(scope="module")
def said(dsh: DshInstall, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("bridge-files")
    script = SCRIPT % (json.dumps(PLUGIN.as_uri()), json.dumps([str(base)]))
    done = subprocess.run([str(dsh.node), "--input-type=module", "-e", script], capture_output=True, text=True,
                          timeout=60, cwd=base)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return {"base": base, **json.loads(done.stdout)}


def test_a_problem_names_a_path_with_two_spaces_in_a_row_as_it_is(said: dict[str, Any]) -> None:
    inbox = quoted_path(said["base"] / "two  spaces" / "control.jsonl")
    assert said["spaced"] == f"the control inbox {inbox} is a symbolic link; ignored"


def test_an_inbox_whose_mode_cannot_be_restored_is_reported_and_ignored(said: dict[str, Any]) -> None:
    inbox = quoted_path(said["base"] / "ro" / "control.jsonl")
    assert said["ro"] == {
        "opened": False,
        "problem": f"cannot restore mode 600 of the control inbox {inbox}: fchmod failed with EROFS (read-only file "
        "system); it has mode 644 and is ignored",
    }


def test_saved_marks_with_a_field_of_the_wrong_kind_are_left_out(said: dict[str, Any]) -> None:
    assert said["marks"] == [
        {"markId": 1, "seq": 4, "at": 1700000000000, "objective": "tests pass"},
        {"markId": 2, "seq": None, "at": 1700000000001, "completed": True},
        {"markId": 9, "seq": 9, "at": 1700000000008},
    ]


def test_marks_from_checkpoint_outcomes_with_a_field_of_the_wrong_kind_are_left_out(said: dict[str, Any]) -> None:
    assert said["logged"] == [
        {"markId": 1, "seq": 4, "objective": "tests pass", "at": "number"},
        {"markId": 6, "seq": None, "at": "number"},
    ]


def test_a_saved_cursor_with_a_negative_offset_is_not_taken(said: dict[str, Any]) -> None:
    assert "threw" not in said["cursor"], said["cursor"]  # a position below -1 made every read of the inbox throw
    assert said["cursor"]["cursor"] == {"ino": said["cursor"]["inbox"], "offset": 0}  # read from its start


def test_an_atomic_write_whose_rename_fails_leaves_no_temporary_file(said: dict[str, Any]) -> None:
    state = quoted_path(said["base"] / "blocked" / "bridge.state.json")
    assert said["blocked"]["problem"].startswith(f"cannot write {state}: rename ")
    assert said["blocked"]["left"] == ["bridge.json", "bridge.state.json"]  # bridge.json: saying the problem


def test_an_inbox_written_again_in_place_is_read_from_its_start(said: dict[str, Any]) -> None:
    """The bridge knew its inbox by inode and offset alone: one truncated and written again between two polls, or
    while no bridge ran (the cursor in bridge.state.json), as long as what was read or longer, was read on from the
    old offset, and the new file's first requests never ran. It checks the first and last bytes it read, and the
    saved cursor the digest of the first ones."""
    assert said["rewritten"] == {"admitted": ["first-01", "again-01", "later-01", "later-02", "later-03"],
                                 "sameInode": True}  # fmt: skip


def test_a_plugin_warning_is_logged_again_when_its_trouble_comes_back(said: dict[str, Any]) -> None:
    """The plugin kept every warning it had logged for the process's life: bridge.json unwritable a second time, after
    it was written again, went unsaid. A trouble that lasts is logged once while it lasts, as the host does."""
    bridge = quoted_path(said["base"] / "flaky" / "bridge.json")
    warnings = said["recurring"]["warnings"]
    assert len(warnings) == 2 and warnings[0] == warnings[1], warnings
    assert warnings[0].startswith(f"tapedeck-bridge: cannot write {bridge}: rename "), warnings


def test_fifos_at_the_bridge_s_own_files_are_never_waited_on(said: dict[str, Any]) -> None:
    """The bridge read control.outcomes.jsonl, bridge.state.json, bridge.json and bridge.standby.json as they came:
    a FIFO at any of those names held the read, and DSH's start with it, until a writer came, where the inbox was
    never opened so. Each is read only when it is a regular file (never through a symlink), else as none."""
    assert said["piped"] == {"marks": [], "final": [], "cursor": {"ino": 0, "offset": 0}}


def test_lines_moved_by_an_inbox_written_again_in_place_are_no_retry(said: dict[str, Any]) -> None:
    """Request lines were known by inode and offset: an inbox written again in place (the same inode) with its lines
    at other offsets had each one noted as reusing its own id. They are lines read again; a line reusing an id in
    the file as it is now is still a retry."""
    assert said["moved"] == ["an inbox line reuses request id moved-02, taken already: ignored as a retry (its outcome "
                             "is the first one's)"]  # fmt: skip


def test_the_outcomes_file_is_read_in_pieces_whatever_its_size(said: dict[str, Any]) -> None:
    """The outcomes file grows by a line per outcome for the whole life of a session, and the plugin read it whole
    as one string when it attached: a long session's was held in memory at once, and one past V8's largest string
    could not be read at all, every answered request and mark forgotten. It is read a piece at a time now, a line
    (multi-byte characters across pieces kept whole) at most held at once."""
    assert said["grown"] == {"final": 3001, "pending": ["last"], "objective": True}
