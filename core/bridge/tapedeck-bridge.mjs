// tapedeck-bridge: a DSH (Cordis) plugin that obeys tapedeck's control inbox for every live agent.
//
// For each agent it finds the session directory through the session-persistence backend in force, polls
// `control.jsonl` there and runs every request through DSH's command registry as the slash command `/td`, so DSH
// itself logs `command/run` / `command/done` for it. Beside the log it keeps:
//   bridge.json              liveness: pid, process start time, state, heartbeat (atomic replace, every second),
//                            and the requests whose run began and whose outcome is not written yet
//   control.outcomes.jsonl   one line per outcome: {requestId, op, outcome, origin?, error?, detail?, at}
//   bridge.state.json        what survives a reload or restart: inbox cursor, paused, checkpoint marks
//   bridge.standby.json      the DSH process whose bridge waits while another one answers the inbox
// It never appends an event type of its own to the session log. The request format and outcome semantics are
// tapedeck's (core/control.py); the interface with tapedeck is docs/contracts.md, "DSH bridge".
//
// For tests only, DSH's environment can set, read when the plugin loads:
//   TAPEDECK_BRIDGE_ATTACH_WAIT_MS   how long a td command waits for the answering instance to attach its session
//                                    before it gives up (milliseconds, a positive integer; 30000 otherwise)
//   TAPEDECK_BRIDGE_HOLD, TAPEDECK_BRIDGE_HOLD_RUN, TAPEDECK_BRIDGE_HOLD_OUTCOME, TAPEDECK_BRIDGE_HOLD_ATTACH
//                                    files whose presence holds a request before it runs, a request in its td
//                                    command's handler before its op is applied, an outcome before it is written,
//                                    an instance before it attaches a session (see their constants)

import fs from "node:fs";
import path from "node:path";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";

export const name = "tapedeck-bridge";
export const inject = ["agents", "commands", "sessions"];

const VERSION = "0.1.0";
// The first 12 hex digits of the sha256 of this file's bytes, as tapedeck computes them of its packaged copy
// (core.bridge.files.plugin_fingerprint): bridge.json carries it, so a copy an older tapedeck installed is told
// apart whatever VERSION it names.
const FINGERPRINT = ownFingerprint();
const COMMAND = "td";
const POLL_MS = 150;
const HEARTBEAT_MS = 1000;
const RELOAD_GRACE_MS = 3000; // a gap this short between two bridges is a reload, not an absence
const HEARTBEAT_FRESH_MS = 5000; // a heartbeat younger than this means a bridge writes the file (core/bridge/files.py)
const HANDOVER_MS = 5000; // how long a replaced bridge keeps held steps for its successor
// how long a td command waits for the answering instance to attach its session (TAPEDECK_BRIDGE_ATTACH_WAIT_MS)
const ATTACH_WAIT_MS = positiveInteger(process.env.TAPEDECK_BRIDGE_ATTACH_WAIT_MS) ?? 30000;
// The form of the state a SessionBridge keeps (its fields and methods, the process-wide maps below): an instance of
// another module version takes over what this one runs only when it is the same. Raise it with any change to them.
const STATE_FORMAT = 1;
const INBOX = "control.jsonl";
const OUTCOMES = "control.outcomes.jsonl";
const BRIDGE = "bridge.json";
const STATE = "bridge.state.json";
const STANDBY = "bridge.standby.json";
const MAX_LINE_BYTES = 1 << 20;
const PIECE_BYTES = 1 << 16; // how much of the outcomes file is read at a time (it grows for a session's whole life)
const CHECK_BYTES = 256; // what the bridge checks is still there, at the inbox's start and before where it read to
const MAX_DEPTH = 32;
const MAX_ID_CHARS = 200;
const MAX_ORIGIN_CHARS = 100;
const ORIGIN = /^[A-Za-z0-9][A-Za-z0-9._:/-]*$/; // what sent a request, when not the operator by hand: alert:budget
const LEADING_ID = new RegExp(`^\\s*\\{\\s*"id"\\s*:\\s*"([A-Za-z0-9._:-]{1,${MAX_ID_CHARS}})"`);
const FINAL = new Set(["applied", "rejected", "cancelled", "expired", "unknown"]);
const SESSION_KEYS = ["model", "reasoningEffort"]; // config.set keys that apply to this session's requests
const GATES = Symbol.for("tapedeck-bridge.held-steps"); // held pre-steps handed from one instance to the next
// The live instances of the plugin in this process, oldest first. Only the newest one answers: a reload normally
// disposes the old instance, but DSH's patch reload can also leave two alive for a while, and two bridges reading
// one inbox would run its ops twice.
const LIVE = Symbol.for("tapedeck-bridge.instances");
const OVERRIDES = Symbol.for("tapedeck-bridge.overrides"); // session id -> config.set values, across reloads
const BEGUN = Symbol.for("tapedeck-bridge.begun"); // session id -> ids whose run any instance began, across reloads
// session id -> ids whose td command an instance's op queue gave DSH and whose handler has not been entered yet: the
// one run `begun` lets through (any other td command of such an id, given by hand or replayed, is refused)
const DISPATCHED = Symbol.for("tapedeck-bridge.dispatched");
// session id -> id -> {id, op, origin?} of a request whose run began and has no final outcome yet: a successor
// lists what an instance it replaced still runs, so a DSH killed after the reload leaves it on record
const IN_FLIGHT = Symbol.for("tapedeck-bridge.in-flight");
// session id -> commandId -> request id of a td command whose handler waits for the answering instance to attach the
// session (a reload's new instance before its first poll): that command runs the request, not its inbox line, and
// its command/run in the log is no run yet
const AWAITING = Symbol.for("tapedeck-bridge.awaiting");
// session id -> the SessionBridge of an instance disposed while no other one was live: a reload, most likely, whose
// new instance takes the session over in a few milliseconds; its exit is written only when none does (`settleExits`)
const LEAVING = Symbol.for("tapedeck-bridge.leaving");
const EXIT_HOOK = Symbol.for("tapedeck-bridge.exit-hook"); // whether this process writes the leaving ones' exit at its end
// For tests only: while the file this names exists, requests read from the inbox wait there before they run, so
// that a test can kill DSH or reload the plugin in the window between reading a request and running it.
const HOLD_FILE = process.env.TAPEDECK_BRIDGE_HOLD;
// For tests only: while the file this names exists, a td command's handler waits there once its run is on record and
// before it applies the op, so that a test can reload the plugin while the op runs.
const HOLD_RUN_FILE = process.env.TAPEDECK_BRIDGE_HOLD_RUN;
// For tests only: while the file this names exists, a request that ran waits there before its outcome is written
// (and before DSH is asked to write its command pair), so that a test can kill DSH in that window.
const HOLD_OUTCOME_FILE = process.env.TAPEDECK_BRIDGE_HOLD_OUTCOME;
// For tests only: while the file this names exists, no instance attaches a session it has not attached yet (each one
// held adds a line `waiting` to the file), so that a test can read the session between a reload's dispose of the old
// instance and the new one's first write.
const HOLD_ATTACH_FILE = process.env.TAPEDECK_BRIDGE_HOLD_ATTACH;

// The positive integer `text` writes in decimal digits alone, else undefined.
function positiveInteger(text) {
  const n = /^\d+$/.test(text ?? "") ? Number(text) : NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

// Whether the test hook holds `bridge` from attaching (the file HOLD_ATTACH_FILE names exists); the first time, it
// says so in the file.
function attachHeld(bridge) {
  let fd;
  try {
    if (!HOLD_ATTACH_FILE) return false;
    fd = fs.openSync(HOLD_ATTACH_FILE, fs.constants.O_WRONLY | fs.constants.O_APPEND); // never made again once gone
  } catch {
    return false;
  }
  try {
    if (!bridge.held) fs.writeSync(fd, "waiting\n");
    bridge.held = true;
  } finally {
    fs.closeSync(fd);
  }
  return true;
}

// What this process keeps for session `id` under `key` across reloads (every instance's), made by `make` at first.
function perSession(key, id, make) {
  const all = (globalThis[key] ??= new Map());
  if (!all.has(id)) all.set(id, make());
  return all.get(id);
}

function current() {
  return globalThis[LIVE]?.at(-1);
}

// Writes the exit of every session an instance left that no live instance follows (`all`: every one, the process
// ends): no new instance came within a reload's grace, the plugin was unloaded.
function settleExits(all = false) {
  const leaving = globalThis[LEAVING];
  const successor = current();
  for (const [id, bridge] of leaving ?? [])
    if (all || !successor?.sessions.has(id)) {
      leaving.delete(id);
      bridge.exit();
    }
}

// Whether the application around the plugin's context is being disposed (DSH exits): no instance follows this one.
// An ancestor fiber disposed (no uid) or unloading (state 5, Cordis's FiberState.UNLOADING) says so; a plugin's
// own reload restarts its fiber alone.
function appEnding(ctx) {
  try {
    for (let fiber = ctx.fiber, parent = fiber?.parent?.fiber; parent && parent !== fiber; ) {
      if (parent.uid === null || parent.state === 5) return true;
      fiber = parent;
      parent = fiber.parent?.fiber;
    }
  } catch {
    // another Cordis: the exit is written once no instance follows within the grace, or at the process's end
  }
  return false;
}

// op -> argument specs: [name, kind, required, choices, description] (core/control/inbox.py, DSH_OPS)
const OPS = {
  checkpoint: [["objective", "string", false]],
  rewind: [
    ["markId", "integer", false],
    ["preview", "any", false],
  ],
  expand: [["seq", "integer", true, null, "seq of the tool result (or of its fold)"]],
  "config.set": [
    ["key", "string", true, null, "DSH: model, reasoningEffort (this session) or <namespace>.<key> of a live DSH setting, e.g. shell.timeoutMs"],
    ["value", "any", true, null, "the new value (JSON); null restores the default"],
  ],
  pause: [],
  resume: [],
  message: [
    ["text", "string", true, null, "the message"],
    ["kind", "string", false, ["steer", "note"]],
    ["mode", "string", false, ["steer", "queue"]],
  ],
  stop: [["reason", "string", false]],
};
const AT_IDLE = new Set(["rewind", "expand"]); // ops that rewrite the surface: only between turns
// Where to look for whether a request DSH died running took effect, by op (core/control/outcome.py, UNKNOWN_HINTS)
const UNKNOWN_HINTS = {
  pause: "the session's state says whether it is paused (tapedeck inspect, the TUI's header)",
  resume: "the session's state says whether it is paused (tapedeck inspect, the TUI's header)",
  "config.set":
    "a model or reasoningEffort change lasts only as long as the DSH process that took it, so send it " +
    "again; a <namespace>.<key> setting shows in DSH's own settings if it was changed",
  checkpoint: "the TUI's Checkpoints screen lists the mark if it was placed",
  stop: "the turn it was sent to ended aborted by the operator if it did (tapedeck events, the TUI)",
  message: "the session's events after it was sent hold the message if DSH took it (tapedeck events, the TUI)",
  rewind:
    "the session's events hold the rewind's note in place of the history after the mark if it ran " +
    "(tapedeck events, the TUI)",
  expand: "the session's events hold the tool result in full again if it ran (tapedeck events, the TUI)",
};
const UNKNOWN_HINT = "the session's events after it was sent tell whether it did (tapedeck events, the TUI)";

/** Where to look for whether a request of `op` that DSH died running took effect. */
export function unknownHint(op) {
  return typeof op === "string" && Object.hasOwn(UNKNOWN_HINTS, op) ? UNKNOWN_HINTS[op] : UNKNOWN_HINT;
}

// --- requests: decoding and validation (the rules of core/control.py) ----------------------------------------

// A JSON number written with a fraction or an exponent is a float to tapedeck (1.0 is no integer there):
// the parser keeps such numbers boxed so that the checks below can tell them from integers.
function isFloat(value) {
  return value instanceof Number;
}

const QUOTED = 80; // characters of a refused value a message quotes at most (core/shared/text.py's QUOTED)

// `text` cut to at most `limit` UTF-16 units, never splitting a surrogate pair, marked with … (text.py's clip).
function clip(text, limit) {
  if (text.length <= limit) return text;
  let out = "";
  for (const ch of text) {
    if (out.length + ch.length > limit - 1) break;
    out += ch;
  }
  return out + "…";
}

// What JSON leaves as it is but a terminal acts on or draws out of order: DEL, the C1 controls, the line and
// paragraph separators, the BiDi controls; written as their escapes, still the same JSON (text.py's _terminal_safe).
const ACTIVE_IN_JSON = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

function terminalSafe(json) {
  return json.replace(ACTIVE_IN_JSON, (ch) => "\\u" + ch.charCodeAt(0).toString(16).padStart(4, "0"));
}

// What a message never writes as it is (text.py's _UNQUOTABLE): the C0 controls (tab and newline too: a message is
// one line), DEL, the C1 controls, the line and paragraph separators, the BiDi controls and a lone surrogate.
const UNQUOTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]/gu;

// Text from outside (a request id, a key) as a message names it, as it is, in the words of text.py's quoted: cut
// to `limit` characters with …, each character a terminal acts on or draws out of order as its JSON escape.
export function quoted(text, limit = QUOTED) {
  return clip(String(text), limit).replace(UNQUOTABLE, (ch) => terminalSafe(JSON.stringify(ch)).slice(1, -1));
}

function codePoints(text) {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

function grouped(n) {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

// A value from outside as a message shows it, in the words of text.py's shown: as JSON, each character a terminal
// acts on escaped, cut to QUOTED characters with … (a string before it is quoted, so the quotes stay) and then
// followed by its whole length. A refused value of 100,000 characters is not written back whole.
function shown(value, limit = QUOTED) {
  if (typeof value === "string") {
    const cut = clip(value, limit);
    const text = terminalSafe(JSON.stringify(cut));
    return cut === value ? text : `${text} (${grouped(codePoints(value))} characters)`;
  }
  const json = terminalSafe(JSON.stringify(value));
  const cut = clip(json, limit);
  return cut === json ? json : `${cut} (${grouped(codePoints(json))} characters of JSON)`;
}

// inbox.py's _number_given: a float beyond 64 bits by its size (its digits are not the ones sent), rounded to one
// digit half to even as Python's format does; any other value as shown.
function numberGiven(value) {
  const v = Number(value);
  if (!isFloat(value) || !Number.isInteger(v)) return shown(value);
  if (Math.abs(v) < 2 ** 63) return `${shown(value)}, written with a fraction or an exponent`; // 2.0 reads as 2
  const digits = BigInt(Math.abs(v)).toString();
  let lead = Number(digits[0]);
  let exponent = digits.length - 1;
  const [next, rest] = [digits[1], digits.slice(2)];
  if (next > "5" || (next === "5" && (/[1-9]/.test(rest) || lead % 2 === 1))) lead += 1;
  if (lead === 10) [lead, exponent] = [1, exponent + 1];
  return `a number beyond what 64 bits hold, about ${v < 0 ? "-" : ""}${lead}e+${String(exponent).padStart(2, "0")}`;
}

function argError(op, name, [, kind, required, choices], value) {
  if (kind === "string") {
    if (typeof value !== "string") return `${op}: '${name}' must be a string (got ${shown(value)})`;
    if (required && !value.trim()) return `${op}: '${name}' must not be empty`;
    if (choices && !choices.includes(value))
      return `${op}: '${name}' must be one of ${choices.join(", ")} (got ${shown(value)})`;
  } else if (kind === "integer" && !(Number.isSafeInteger(value) && value >= 0)) {
    return `${op}: '${name}' must be a non-negative integer (got ${numberGiven(value)})`;
  }
  return null;
}

// Orders two strings by code point, as Python compares them (JavaScript's < compares UTF-16 units).
function byCodePoint(a, b) {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++)
    if (x[i] !== y[i]) return x[i].codePointAt(0) - y[i].codePointAt(0);
  return x.length - y.length;
}

// Levenshtein distance over code points (text.py's edit_distance).
function editDistance(a, b) {
  let [x, y] = [Array.from(a), Array.from(b)];
  if (x.length < y.length) [x, y] = [y, x];
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++)
      current.push(Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x[i - 1] !== y[j - 1] ? 1 : 0)));
    previous = current;
  }
  return previous[y.length];
}

// The option of `options` fewest edits from `word`, at most `within`, letter case aside (the first of those as
// near), as text.py's nearest offers it for a "did you mean"; undefined when none is that near. A word longer than
// every option by more is not measured.
function nearest(word, options, within = 2) {
  const lengths = options.map((o) => codePoints(o.toLowerCase()));
  if (codePoints(word) > Math.max(0, ...lengths) + within) return undefined;
  const folded = word.toLowerCase();
  let [best, fewest] = [undefined, within + 1];
  options.forEach((o, i) => {
    if (Math.abs(codePoints(folded) - lengths[i]) >= fewest) return;
    const edits = editDistance(folded, o.toLowerCase());
    if (edits < fewest) [best, fewest] = [o, edits];
  });
  return best;
}

/** The checked arguments of a request, or throws an Error naming what is wrong. */
function validate(op, args) {
  if (typeof op !== "string" || !Object.hasOwn(OPS, op)) {
    const near = typeof op === "string" ? nearest(op, Object.keys(OPS)) : undefined;
    throw new Error(`unknown control op ${shown(op)}${near ? ` (did you mean ${near}?)` : ""}; valid ops: ${Object.keys(OPS).join(", ")}`);
  }
  const specs = OPS[op];
  if (args === null || args === undefined) args = {};
  if (typeof args !== "object" || Array.isArray(args) || isFloat(args))
    throw new Error(`${op}: args must be a JSON object (got ${shown(args)})`);
  const names = specs.map((s) => s[0]);
  // the first by code point (as tapedeck names it): JavaScript lists keys like "0" before the others
  const unknown = Object.keys(args)
    .filter((k) => !names.includes(k))
    .reduce((a, b) => (a === undefined || byCodePoint(b, a) < 0 ? b : a), undefined);
  if (unknown !== undefined) {
    const takes = names.length ? `it takes ${names.join(", ")}` : "it takes no arguments";
    throw new Error(`${op}: unknown argument ${shown(unknown)} (${takes})`);
  }
  for (const spec of specs) {
    if (!Object.hasOwn(args, spec[0])) {
      if (spec[2]) throw new Error(`${op} needs the argument '${spec[0]}' (${spec[4]})`);
      continue;
    }
    const problem = argError(op, spec[0], spec, args[spec[0]]);
    if (problem) throw new Error(problem);
  }
  const preview = op === "rewind" ? args.preview : undefined;
  if (
    preview !== undefined &&
    preview !== null &&
    (typeof preview !== "object" ||
      Array.isArray(preview) ||
      Object.keys(preview).sort().join() !== "chars,nodes,seq" ||
      !Object.values(preview).every((v) => Number.isSafeInteger(v) && v >= 0))
  )
    throw new Error("rewind: 'preview' must be an object {seq, nodes, chars} of non-negative integers");
  return { ...args };
}

// What an entry of bridge.json's `inFlight` written by another DSH process (so, hostile) says, read as
// core/bridge/files.py reads it: {id, op?, origin?}, the op only when it is one of DSH's, the origin only when it
// names a sender; undefined when it names no request id.
function inFlightEntry(item) {
  if (typeof item?.id !== "string" || !item.id || item.id.length > MAX_ID_CHARS) return undefined;
  const entry = { id: item.id };
  if (typeof item.op === "string" && Object.hasOwn(OPS, item.op)) entry.op = item.op;
  if (item.origin !== undefined && originError(item.origin) === null) entry.origin = item.origin;
  return entry;
}

function originError(origin) {
  if (typeof origin !== "string") return `'origin' must be a string (got ${shown(origin)})`;
  if (origin.length > 0 && origin.length <= MAX_ORIGIN_CHARS && ORIGIN.test(origin)) return null;
  const got = shown(origin, MAX_ORIGIN_CHARS); // whole up to the most it may have, so what is wrong is in sight
  return `'origin' must be 1 to ${MAX_ORIGIN_CHARS} letters, digits and . _ : / - starting with a letter or digit (got ${got})`;
}

function tooDeep(value, limit) {
  const stack = [[value, 1]];
  while (stack.length) {
    const [item, depth] = stack.pop();
    if (item !== null && typeof item === "object" && !isFloat(item)) {
      if (depth > limit) return true;
      for (const child of Object.values(item)) stack.push([child, depth + 1]);
    }
  }
  return false;
}

function hasLoneSurrogate(value) {
  const stack = [value];
  while (stack.length) {
    const item = stack.pop();
    if (typeof item === "string") {
      if (!item.isWellFormed()) return true;
    } else if (item !== null && typeof item === "object") {
      for (const [k, v] of Object.entries(item)) stack.push(k, v);
    }
  }
  return false;
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }); // a BOM stays, and is no JSON

function parseJson(text) {
  return JSON.parse(text, (key, value, context) =>
    typeof value === "number" && /[.eE]/.test(context?.source ?? "") ? Object(value) : value,
  );
}

/** Where the first sequence that is no UTF-8 starts in `raw` (as Python's UnicodeDecodeError.start counts it:
 * the lead byte of a sequence cut short or continued wrongly, or the stray byte itself), or -1 where all is UTF-8. */
function firstNonUtf8(raw) {
  for (let i = 0; i < raw.length; ) {
    const b = raw[i];
    if (b < 0x80) {
      i += 1;
      continue;
    }
    // the sequence's length and the range its second byte may take (others are 0x80-0xbf), by its lead byte
    const [size, low, high] =
      b >= 0xc2 && b <= 0xdf ? [2, 0x80, 0xbf]
      : b === 0xe0 ? [3, 0xa0, 0xbf]
      : b === 0xed ? [3, 0x80, 0x9f]
      : b >= 0xe1 && b <= 0xef ? [3, 0x80, 0xbf]
      : b === 0xf0 ? [4, 0x90, 0xbf]
      : b === 0xf4 ? [4, 0x80, 0x8f]
      : b >= 0xf1 && b <= 0xf3 ? [4, 0x80, 0xbf]
      : [0, 0, 0];
    if (size === 0 || i + size > raw.length || raw[i + 1] < low || raw[i + 1] > high) return i;
    for (let k = 2; k < size; k++) if ((raw[i + k] & 0xc0) !== 0x80) return i;
    i += size;
  }
  return -1;
}

const hexByte = (b) => b.toString(16).padStart(2, "0");

/** An unreadable line: rejected by id when its id can be read, otherwise only reported. */
function unreadable(lineNo, raw, problem) {
  const head = Buffer.from(raw.subarray(0, MAX_ID_CHARS + 64)).toString("latin1");
  const match = LEADING_ID.exec(head);
  const where = `control inbox line ${lineNo}`;
  if (!match) return { error: `${where} ${problem}; skipped` };
  return { request: { id: match[1], op: null, args: {}, at: null }, error: `${where} ${problem}` };
}

/** One inbox line -> {request?, error?, withdraw?} (never throws). */
export function decodeLine(lineNo, raw) {
  const where = `control inbox line ${lineNo}`;
  if (raw.length > MAX_LINE_BYTES) return unreadable(lineNo, raw, `is longer than ${MAX_LINE_BYTES} bytes`);
  const bad = firstNonUtf8(raw);
  if (bad >= 0)
    return unreadable(lineNo, raw, `is not UTF-8: its byte ${bad} (0x${hexByte(raw[bad])}) cannot be decoded`);
  let obj;
  try {
    obj = parseJson(utf8.decode(raw));
  } catch (err) {
    // JSON.parse's message cites the line ('Unexpected token …, "…" is not valid JSON'): quoted, as an exception's
    return unreadable(lineNo, raw, `is not valid JSON (${quoted(err instanceof Error ? err.message : err, 200)})`);
  }
  if (hasLoneSurrogate(obj)) return unreadable(lineNo, raw, "is not valid JSON (a lone surrogate in a string)");
  if (obj === null || typeof obj !== "object" || Array.isArray(obj) || isFloat(obj))
    return { error: `${where} is not a JSON object; skipped` };
  const id = obj.id;
  const withdrawn = obj.withdraw;
  if (id === undefined && typeof withdrawn === "string" && withdrawn.length > 0 && withdrawn.length <= MAX_ID_CHARS)
    return { withdraw: withdrawn };
  if (typeof id !== "string" || !id || id.length > MAX_ID_CHARS)
    return { error: `${where} has no request id (a string of 1 to ${MAX_ID_CHARS} chars); skipped` };
  const request = {
    id,
    op: typeof obj.op === "string" ? obj.op : null,
    args: {},
    at: Number.isSafeInteger(obj.at) ? obj.at : null,
  };
  if (obj.queued === true) request.queued = true;
  if (typeof obj.to === "string" && obj.to.length <= MAX_ID_CHARS) request.to = obj.to;
  // when it was sent decides whether it came before the host: a line whose time is none cannot say
  if (Object.hasOwn(obj, "at") && !(request.at !== null && request.at >= 1))
    return { request, error: `${where}: its 'at' is no time (epoch milliseconds after 1970)` };
  // no deadline that passed (nor a date, below -8.64e15): a line no sender of ours could write
  if (typeof obj.expires === "number" && obj.expires < 1)
    return { request, error: `${where}: its 'expires' is no time (epoch milliseconds after 1970)` };
  if (Number.isSafeInteger(obj.expires)) request.expires = obj.expires;
  if (Object.hasOwn(obj, "origin")) {
    const problem = originError(obj.origin);
    if (problem) return { request, error: `${where}: ${problem}` };
    request.origin = obj.origin;
  }
  if (tooDeep(obj, MAX_DEPTH)) return { request, error: `${where} is nested deeper than ${MAX_DEPTH} levels` };
  try {
    request.args = JSON.parse(JSON.stringify(validate(obj.op, obj.args))); // plain numbers again
  } catch (err) {
    return { request, error: err.message };
  }
  return { request };
}

function expiryError(request) {
  const when = new Date(request.expires).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
  return `it expired at ${when} before a host could apply it`;
}

// --- small file helpers --------------------------------------------------------------------------------------

// Replaces `file` by one holding `data`, written under a temporary name and renamed into place, so that a reader
// or a killed DSH never meets half a file; when that fails, the temporary file is removed and the error thrown.
// The temporary file is made new (O_EXCL, O_NOFOLLOW): whatever already has its name (a symbolic link or a file
// someone planted in the session directory, a temporary file of a DSH in another pid namespace with the same pid)
// is never followed, written or removed, and the write goes on under a name of its own, `.<file>.<pid>.<random>.tmp`.
// `durable`: also synced to the disk before the rename (and the directory after, where the platform allows it), so
// that a crash of the machine leaves the old file or the new one, never an empty one. A sync waits on DSH's one
// thread and, on some file systems, on every other write the machine has pending: it is kept for what changes a
// session's state, never paid by a heartbeat.
function writeAtomic(file, data, durable = true) {
  const { tmp, fd } = openTemporary(file);
  try {
    try {
      fs.writeFileSync(fd, data);
      if (durable) fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  } catch (err) {
    try {
      fs.unlinkSync(tmp);
    } catch {}
    throw err;
  }
  if (durable) syncDir(path.dirname(file));
}

const EXCLUSIVE = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW;
const TEMPORARY_TRIES = 8; // names taken in a row before the write gives up (each random one after the first)

// A new temporary file beside `file`, open for writing, made by this call: `.<file>.<pid>.tmp` first, then, while
// the name is taken, `.<file>.<pid>.<random>.tmp`; the error of the last try is thrown.
function openTemporary(file) {
  const base = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}`);
  for (let tries = 1; ; tries++) {
    const tmp = tries === 1 ? `${base}.tmp` : `${base}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      return { tmp, fd: fs.openSync(tmp, EXCLUSIVE, 0o600) };
    } catch (err) {
      if (err?.code !== "EEXIST" || tries >= TEMPORARY_TRIES) throw err;
    }
  }
}

// Syncs the directory `dir` (a rename in it reaches the disk); where a directory cannot be opened or synced (some
// platforms and file systems refuse), the rename stands as the file system keeps it.
function syncDir(dir) {
  let fd;
  try {
    fd = fs.openSync(dir, fs.constants.O_RDONLY | (fs.constants.O_DIRECTORY ?? 0));
    fs.fsyncSync(fd);
  } catch {
    // not where the platform allows it
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

// The temporary files of writeAtomic that this plugin names in a session directory, `.<file>.<pid>[.<random>].tmp`.
const TEMPORARY = new RegExp(`^\\.(?:${[BRIDGE, STATE, STANDBY].map((f) => f.replaceAll(".", "\\.")).join("|")})\\.(\\d+)(?:\\.[0-9a-f]{12})?\\.tmp$`);

// Removes from `dir` the temporary files writeAtomic left when its process was killed between the write and the
// rename: each one whose pid no live process has here, and older than a heartbeat's freshness (a DSH whose pids are
// not this one's, in a sibling container sharing the directory, may be writing it this very moment). A live
// process's file stays, as does anything that is not a regular file; one under this process's own pid does not (a
// DSH before it with the same pid left it, as a container's DSH restarts with the pid it had): this process's writes
// make their files new and never take it over, and none of them is under way while it sweeps.
function sweepTemporaries(dir, now) {
  let names;
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(TEMPORARY.exec(name)?.[1]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || (pid !== process.pid && pidAlive(pid))) continue;
    const file = path.join(dir, name);
    try {
      const st = fs.lstatSync(file);
      if (st.isFile() && now - st.mtimeMs > HEARTBEAT_FRESH_MS) fs.unlinkSync(file);
    } catch {
      // gone already, or not ours to remove
    }
  }
}

// Whether a process of pid `pid` is alive here (one this process may not signal is alive too).
function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err?.code !== "ESRCH";
  }
}

// Writes every byte of `bytes` to `fd`, write after write: a write may take fewer than it was given (a file size
// limit reached, a signal), and what it left is written next, or the error that stops it thrown.
function writeAll(fd, bytes) {
  for (let done = 0; done < bytes.length; ) {
    const n = fs.writeSync(fd, bytes, done, bytes.length - done);
    if (n <= 0) throw new Error(`a write took none of the ${bytes.length - done} bytes left to write`);
    done += n;
  }
}

// A JSON object file's value; undefined when it is not there, not JSON, or JSON of another shape (null, a list),
// which says nothing of what the file is for.
// Up to `length` bytes of the file open as `fd` from `position`.
function readAt(fd, position, length) {
  const buf = Buffer.alloc(length);
  return buf.subarray(0, length ? fs.readSync(fd, buf, 0, length, position) : 0);
}

// The digest of an inbox's first bytes (at most CHECK_BYTES) by which a saved cursor names its file.
function headDigest(buf) {
  return createHash("sha256").update(buf.subarray(0, CHECK_BYTES)).digest("hex").slice(0, 16);
}

// The text of `file` when it is a regular file, else (or when it cannot be read) undefined: never through a symlink,
// never a FIFO or a device, whose read would hold DSH's start until a writer came (as the inbox is never opened).
function readRegular(file) {
  let fd;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    return fs.fstatSync(fd).isFile() ? fs.readFileSync(fd, "utf8") : undefined;
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

// The lines of `file` when it is a regular file (opened as readRegular opens it), read PIECE_BYTES at a time: a file
// that grows for a session's whole life is never held whole, nor made one string (one past V8's largest could not
// be read at all); a line at most is, up to MAX_LINE_BYTES (as the inbox's): a longer one is dropped as it is read
// and skipped, and `tooLong(lineNo)` is told of it (the caller words it: it knows what the file holds). None when it
// cannot be opened; the lines before a read that fails.
export function* regularLines(file, tooLong = () => {}) {
  let fd;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return;
  }
  try {
    if (!fs.fstatSync(fd).isFile()) return;
    const piece = Buffer.alloc(PIECE_BYTES);
    let held = []; // the pieces of the line not ended yet (its bytes, so a character across pieces stays whole)
    let size = 0; // their bytes; -1 once past MAX_LINE_BYTES: the rest of the line is passed over
    let lineNo = 1;
    const ended = function* (last) {
      if (size < 0) tooLong(lineNo);
      else yield Buffer.concat([...held, last]).toString("utf8");
      held = [];
      size = 0;
      lineNo += 1;
    };
    for (;;) {
      let got;
      try {
        got = fs.readSync(fd, piece, 0, PIECE_BYTES, null);
      } catch {
        return;
      }
      if (got === 0) break;
      const read = piece.subarray(0, got);
      let start = 0;
      for (let end; (end = read.indexOf(10, start)) !== -1; start = end + 1) {
        if (size >= 0 && size + end - start > MAX_LINE_BYTES) size = -1;
        yield* ended(read.subarray(start, size < 0 ? start : end));
      }
      if (start === got || size < 0) continue;
      if (size + got - start > MAX_LINE_BYTES) {
        held = [];
        size = -1;
      } else {
        held.push(Buffer.from(read.subarray(start)));
        size += got - start;
      }
    }
    if (held.length > 0 || size < 0) yield* ended(Buffer.alloc(0));
  } finally {
    fs.closeSync(fd);
  }
}

function readJson(file) {
  try {
    const value = JSON.parse(readRegular(file) ?? "");
    return value !== null && typeof value === "object" && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

// A process's start time (field 22 of its /proc stat), undefined when none runs (a zombie has exited already).
function procStart(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ["Z", "X", "x"].includes(fields[0]) ? undefined : fields[19];
  } catch {
    return undefined;
  }
}

// This machine's boot id: beside the pid, it tells tapedeck that the pid can be checked where it reads the file.
function bootId() {
  try {
    return fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}

// This process's pid namespace (the inode of /proc/self/ns/pid): a pid names this process only where /proc shows
// that namespace. Sibling containers share the kernel's boot id, and one image may give them one machine id, but
// each has pids of its own.
function pidNamespace() {
  try {
    return fs.statSync("/proc/self/ns/pid").ino || undefined;
  } catch {
    return undefined;
  }
}

// This machine's id (systemd's machine-id, which a reboot keeps): with a directory's device and inode it names the
// session directory a request was sent to, wherever a copy of that directory is resumed.
function machineId() {
  for (const file of ["/etc/machine-id", "/var/lib/dbus/machine-id"]) {
    try {
      const id = fs.readFileSync(file, "utf8").trim().toLowerCase();
      if (/^[0-9a-f]{32}$/.test(id)) return id;
    } catch {
      // the next place, or none
    }
  }
  return undefined;
}

function ownFingerprint() {
  try {
    return createHash("sha256").update(fs.readFileSync(fileURLToPath(import.meta.url))).digest("hex").slice(0, 12);
  } catch {
    return undefined;
  }
}

function dshVersion() {
  try {
    const pkg = path.join(path.dirname(fs.realpathSync(process.argv[1])), "..", "package.json");
    const meta = JSON.parse(fs.readFileSync(pkg, "utf8"));
    return meta.name === "@deepseek-ai/dsh" ? meta.version : undefined;
  } catch {
    return undefined;
  }
}

// What an error DSH threw says, as a message quotes it: quoted at 200 characters as the host quotes an exception's
// text (DSH's reasons cite the value they refuse as it came, escape sequences and all).
function reasonOf(err) {
  return quoted(err?.message ?? err, 200);
}

// A path as a message names it, in the words of text.py's quoted_path: whole, so that it can be copied back, each
// character a terminal acts on or that breaks the line escaped.
function quotedPath(file) {
  return quoted(file, Infinity);
}

// What failed when a file-system call threw `err`, as a message says it after what the bridge was doing on `file`:
// the call, the path it was given where that is not `file` (the temporary file of an atomic replace, both paths of
// a rename), the errno code and its words (`rename /d/.bridge.json.7.tmp to /d/bridge.json failed with EISDIR
// (illegal operation on a directory)`). Node's own message cites the paths as they are, so only its words are
// taken from it; an error that is no system call's is quoted as reasonOf quotes one.
function fsFailure(err, file) {
  if (typeof err?.code !== "string" || typeof err.syscall !== "string") return reasonOf(err);
  const paths = [err.path, err.dest].filter((p) => typeof p === "string");
  const on = paths.length && !(paths.length === 1 && paths[0] === file) ? ` ${paths.map(quotedPath).join(" to ")}` : "";
  const message = String(err.message ?? "");
  const head = `${err.code}: `;
  const end = message.indexOf(`, ${err.syscall}`);
  const words = message.startsWith(head) && end > head.length ? ` (${quoted(message.slice(head.length, end), 200)})` : "";
  return `${quoted(err.syscall)}${on} failed with ${quoted(err.code)}${words}`;
}

// A failed file-system operation as a problem or a warning names it: `cannot DOING FILE: <fsFailure>`.
export function fsProblem(doing, file, err) {
  return `cannot ${doing} ${quotedPath(file)}: ${fsFailure(err, file)}`;
}

// --- one bridged session ---------------------------------------------------------------------------------------

export class SessionBridge {
  constructor(plugin, agent, dir) {
    this.plugin = plugin;
    this.agent = agent;
    this.dir = dir;
    this.attached = false; // files read and written once the session directory exists
    this.paused = false;
    this.marks = [];
    this.cursor = { ino: 0, offset: 0 };
    this.identity = undefined; // `<machine id>:<device>:<inode>` of the session directory, once attached
    this.line = 0;
    this.partial = null; // {length, chunks, overlong, head} of the line still waiting for its newline
    this.seen = null; // {head, tail}: the first and last CHECK_BYTES this instance read of the inbox
    this.final = new Set(); // ids with a final outcome
    this.pending = new Set(); // ids acknowledged pending, not final yet
    this.started = new Set(); // ids whose td command ran (from the log or from this instance)
    this.admitted = new Set(); // ids this instance admitted to run (queued, or waiting for idle), run or not since
    this.done = new Map(); // id -> the outcome data of its td command's command/done in the log
    this.withdrawn = new Set();
    this.lines = new Map(); // id -> {cursor, offset} of the first line with it since the inbox was read from its start
    this.settling = new Map(); // id -> the promise that writes its outcome once the log has its command pair
    this.holds = []; // resolvers of pre-steps held by a pause
    this.inStep = false;
    this.queue = Promise.resolve();
    this.problem = undefined;
    this.standby = false; // whether this process wrote bridge.standby.json (another one serves the session)
    this.since = Date.now();
    this.carried = undefined; // {state, since} of bridge.json as this process left it, when it was not exited
    this.written = undefined; // the last state written to bridge.json
    this.settledIdle = false; // the log holds what the agent wrote before it went idle (see settleIdle)
    this.idleFlush = undefined; // the flush settleIdle waits for
    this.leftAt = undefined; // when its instance was disposed, leaving the session to the next one (see leave)
    this.format = STATE_FORMAT; // what a td command an older instance runs reads, before it drives this bridge
  }

  file(name) {
    return path.join(this.dir, name);
  }

  // The plugin's `trouble` for what is wrong with `what` in this session (undefined: it is right again).
  trouble(what, text) {
    this.plugin.trouble(`${this.agent.id}\n${what}`, text);
  }

  // the ids of this session's requests whose run an instance of the plugin began in this process
  get begun() {
    return perSession(BEGUN, this.agent.id, () => new Set());
  }

  // the ids of this session's requests whose td command the op queue gave DSH, its handler not entered yet
  get dispatched() {
    return perSession(DISPATCHED, this.agent.id, () => new Set());
  }

  // the requests of this session whose run began and whose outcome is not written yet (kept per process)
  get inFlight() {
    return perSession(IN_FLIGHT, this.agent.id, () => new Map());
  }

  // the td commands of this session waiting for an instance to attach it: commandId -> request id (kept per process)
  get awaiting() {
    return perSession(AWAITING, this.agent.id, () => new Map());
  }

  // config.set values for this session's requests (kept per process, so a reload keeps them)
  get overrides() {
    return ((globalThis[OVERRIDES] ??= new Map()).get(this.agent.id)) ?? {};
  }

  set overrides(value) {
    (globalThis[OVERRIDES] ??= new Map()).set(this.agent.id, value);
  }

  // Called from the poll loop until the session directory exists.
  attach(now) {
    if (!fs.existsSync(this.dir)) return false;
    if (!this.swept) sweepTemporaries(this.dir, now);
    this.swept = true;
    const previous = readJson(this.file(BRIDGE));
    // Another DSH process that runs this session too (a second `dsh` resuming it) answers its inbox already: two
    // bridges would run each request twice, and take turns writing bridge.json. This one waits until that one
    // exits (the poll loop calls attach again).
    const other = previous && servedByOther(previous, this.dir, this.plugin);
    if (other) {
      if (this.standby) return false;
      this.trouble(
        "standby",
        `session ${this.agent.id}: the tapedeck bridge of DSH process ${other} already answers its control inbox; ` +
          "this process answers it once that one exits",
      );
      // what bridge.json says is the other process's state: tapedeck tells that this one runs the session too
      const body = { pid: process.pid, procStart: this.plugin.procStart, bootId: this.plugin.bootId, since: now };
      if (this.plugin.pidNs !== undefined) body.pidNs = this.plugin.pidNs;
      try {
        writeAtomic(this.file(STANDBY), JSON.stringify(body) + "\n");
        this.standby = true;
        this.trouble(STANDBY, undefined);
      } catch (err) {
        this.trouble(STANDBY, fsProblem("write", this.file(STANDBY), err));
      }
      return false;
    }
    this.leaveStandby();
    // an instance disposed before this one came (a reload) handed the session over: it never went away
    const handed = globalThis[LEAVING]?.get(this.agent.id);
    globalThis[LEAVING]?.delete(this.agent.id);
    this.line = 0;
    this.written = undefined; // an older instance answering again writes its state afresh
    // ... and a state that goes on from the instance before it in this process (a reload) keeps its since
    const goesOn = previous && writtenByThis(previous, this.plugin) && previous.state !== "exited";
    this.carried = goesOn && Number.isSafeInteger(previous.since) && previous.since <= now ? { state: previous.state, since: previous.since } : undefined;
    // an idle the instance before it said goes on too: that one saw the turn's last events into the log (settleIdle),
    // and this one says idle at once, since then, rather than running until a flush of its own and idle since that
    this.settledIdle = this.carried?.state === "idle" && this.agent.status !== "running";
    this.partial = null;
    this.seen = null;
    const saved = readJson(this.file(STATE));
    this.readOutcomes();
    this.readLog();
    if (saved && typeof saved === "object") {
      const { ino, offset, head } = saved.cursor ?? {};
      if ([ino, offset].every((n) => Number.isSafeInteger(n) && n >= 0))
        this.cursor = { ino, offset, ...(typeof head === "string" && /^[0-9a-f]{16}$/.test(head) && { head }) };
      if (typeof saved.paused === "boolean") this.paused = saved.paused;
      for (const mark of (Array.isArray(saved.marks) ? saved.marks : []).map(markOf))
        if (mark) {
          const known = this.marks.find((m) => m.markId === mark.markId);
          if (!known) this.marks.push(mark);
          else if (mark.completed) known.completed = true;
        }
      this.marks.sort((a, b) => a.markId - b.markId);
    }
    // When the bridge was away (never ran here, or stopped longer ago than a reload takes), requests that came
    // in meanwhile are answered cancelled instead of firing late; a reload's short gap loses nothing.
    const lastAlive = handed ? now : previous && aliveAt(previous, now);
    this.absentSince = lastAlive === undefined ? -Infinity : lastAlive;
    this.absent = lastAlive === undefined || now - lastAlive > RELOAD_GRACE_MS;
    // Another DSH process wrote the file before: what it read and had not run, it never will (however soon DSH
    // came back, this is no reload).
    const restarted = previous !== undefined && !writtenByThis(previous, this.plugin);
    this.startedAt = now;
    this.restarted = restarted;
    this.attached = true;
    this.adoptHolds();
    this.identity = dirIdentity(this.dir, this.plugin.machine);
    // A copy of another session's directory (cp -r, here or brought from another machine): what its inbox holds
    // was sent to that session, whose bridge answers it there; none of it runs here, and what that bridge ran is no
    // run of this one.
    const original = previous && copyOf(previous, this.dir, this.identity, this.plugin);
    if (original) this.leaveToOriginal(original, previous, Math.floor(fs.statSync(this.file(BRIDGE)).ctimeMs));
    // What the DSH before this one began to run and never answered stays listed until it is answered here. What
    // an instance this one replaced still runs stays listed too, and that instance answers it.
    const interrupted = [];
    if (restarted && !original)
      for (const item of Array.isArray(previous.inFlight) ? previous.inFlight : []) {
        const request = inFlightEntry(item);
        if (request && !this.final.has(request.id)) {
          this.inFlight.set(request.id, request);
          interrupted.push(request);
        }
      }
    this.writeBridge(now, true);
    for (const request of interrupted) this.interrupted(request);
    if (this.absent || restarted)
      this.recoverRead(restarted ? "DSH exited before applying it" : "the tapedeck bridge was unloaded before applying it");
    else this.recoverRead();
    this.poll();
    return true;
  }

  // Answers every request sent to the original that the inbox of this copy of it (`original` says where it is) holds
  // with no outcome yet: one the log copied here began to run as `interrupted` says, one the bridge there was
  // running unknown (it may have taken effect before the copy was made), any other cancelled. A request names the
  // directory it was sent to (`to`, the identity the bridge there wrote in bridge.json); one from a sender that
  // names none was sent there when it is no younger than the copy (`copiedAt`, the millisecond its bridge.json was
  // made: one of that millisecond may be either, and does not run). Those sent to the copy are read as the ones of
  // any session (a queued one runs).
  leaveToOriginal(original, previous, copiedAt) {
    const opened = this.openInbox();
    if (!opened) return;
    let text;
    try {
      text = fs.readFileSync(opened.fd);
    } finally {
      fs.closeSync(opened.fd);
    }
    const lines = splitLines(text);
    const running = new Set((Array.isArray(previous.inFlight) ? previous.inFlight : []).map((r) => r?.id));
    for (const [i, raw] of lines.entries()) {
      const { request } = decodeLine(i + 1, raw);
      if (!request || this.final.has(request.id)) continue;
      if (request.to !== undefined ? request.to === this.identity : request.at !== null && request.at > copiedAt) continue;
      if (this.started.has(request.id)) this.interrupted(request);
      else if (running.has(request.id))
        this.outcome(
          request,
          "unknown",
          `this session directory is a copy of ${original}, made while DSH ran this ${request.op ?? "request"} there: ` +
            `it may or may not have taken effect in the history copied here: ${unknownHint(request.op)}`,
        );
      else
        this.outcome(
          request,
          "cancelled",
          `this session directory is a copy of ${original}, and the request was sent to that session before the ` +
            "copy was made: it does not run here (send it again to run it in the copy)",
        );
    }
    this.cursor = { ino: 0, offset: 0 }; // the copy's inbox is read from its start (its answered lines skipped)
    this.seen = null;
  }

  readOutcomes() {
    const file = this.file(OUTCOMES);
    const skipped = [];
    for (const line of regularLines(file, (lineNo) => skipped.push(lineNo))) {
      let data;
      try {
        data = JSON.parse(line);
      } catch {
        continue;
      }
      if (typeof data?.requestId !== "string") continue;
      if (FINAL.has(data.outcome)) this.final.add(data.requestId);
      else if (data.outcome === "pending") this.pending.add(data.requestId);
      if (data.op === "checkpoint" && data.outcome === "applied") this.addMark(data.detail);
      if (data.op === "rewind" && data.outcome === "applied") this.complete(data.detail?.markId);
    }
    const many = skipped.length > 1;
    const which = skipped.length > 3 ? `${skipped.slice(0, 3).join(", ")} and ${skipped.length - 3} more` : skipped.join(", ");
    this.trouble(
      "outcomes",
      skipped.length
        ? `${quotedPath(file)}: ${many ? "lines" : "line"} ${which} ${many ? "are" : "is"} longer than ` +
            `${MAX_LINE_BYTES} bytes, which no outcome is; skipped`
        : undefined,
    );
  }

  // The log is the durable record: td runs (never run an id twice), marks, and the last pause/resume.
  // Whether a td command ran is told by how DSH settled it, never by the words of its text: its command/done of kind
  // `error` applied nothing (the handler's refusals and rejections, DSH's own refusals and cancellations), so it is no
  // run, unless it answers its request (a rejected op: its outcome is logged). One with no command/done yet may have
  // applied its op, and is a run; one waiting for this attach (`awaiting`) has not run yet. A command DSH cancelled
  // while its op went on running is on record elsewhere: `begun` in this process, bridge.json's inFlight after it.
  readLog() {
    const runs = new Map();
    const failed = new Set();
    let paused;
    for (const event of this.agent.session.events) {
      if (event.type === "command/run" && event.data?.name === COMMAND) {
        const id = requestIdOf(event.data.args);
        if (id !== undefined && !this.awaiting.has(event.data.commandId)) runs.set(event.data.commandId, id);
      } else if (event.type === "command/done" && runs.has(event.data?.commandId)) {
        if (event.data.kind !== "success") failed.add(event.data.commandId);
        let data;
        try {
          data = JSON.parse(event.data.text ?? "");
        } catch {
          continue;
        }
        if (FINAL.has(data?.outcome) && data.requestId === runs.get(event.data.commandId)) this.done.set(data.requestId, data);
        if (data?.outcome !== "applied") continue;
        if (data.op === "checkpoint") this.addMark(data.detail);
        if (data.op === "rewind") this.complete(data.detail?.markId);
        if (data.op === "pause") paused = true;
        if (data.op === "resume") paused = false;
      } else if (event.type === "step/start") this.inStep = true;
      else if (event.type === "step/end" || event.type === "turn/end") this.inStep = false;
    }
    for (const [commandId, id] of runs) if (!failed.has(commandId) || this.done.has(id)) this.started.add(id);
    if (paused !== undefined) this.paused = paused;
  }

  // The mark a checkpoint's applied outcome (in the outcomes file or a td command's output in the log) made.
  addMark(detail) {
    const { markId, seq = null, objective, at = Date.now() } = detail ?? {};
    const mark = markOf({ markId, seq, objective, at });
    if (!mark || this.marks.some((m) => m.markId === mark.markId)) return;
    this.marks.push(mark);
    this.marks.sort((a, b) => a.markId - b.markId);
  }

  // A rewind to mark K completes K and every later mark (they stay listed, so mark ids never repeat).
  complete(markId) {
    if (!Number.isSafeInteger(markId)) return;
    for (const mark of this.marks) if (mark.markId >= markId) mark.completed = true;
  }

  // A state file that cannot be written is noted, and what was done stands: the log holds it too (each td command
  // with its outcome: the marks, the pause, what ran), and a reload or restart reads it back from there. An op
  // whose effect is kept must not be answered rejected.
  saveState() {
    if (!this.attached) return;
    const file = this.file(STATE);
    try {
      writeAtomic(file, JSON.stringify({ cursor: this.cursor, paused: this.paused, marks: this.marks }) + "\n");
    } catch (err) {
      this.note(fsProblem("write", file, err));
    }
  }

  state() {
    if (this.paused) return this.inStep && this.holds.length === 0 ? "pausing" : "paused";
    return this.agent.status === "running" || !this.settledIdle ? "running" : "idle";
  }

  // DSH writes a finished turn's last events at its next checkpoint, after the agent already reads idle. The
  // bridge says idle only once it has asked for that write and it is done, so a reader that sees idle finds the
  // whole turn in the log (a rewind preview made then covers what the rewind will fold).
  settleIdle() {
    if (this.agent.status === "running") {
      this.settledIdle = false;
      return;
    }
    if (this.settledIdle || this.idleFlush) return;
    this.idleFlush = this.flush().finally(() => {
      this.idleFlush = undefined;
      this.settledIdle = this.agent.status !== "running";
      this.writeBridge(Date.now(), true);
    });
  }

  // Its instance is disposed and no other one is live: bridge.json says the state the session has, its heartbeat
  // fresh, for the instance a reload makes next to take over, as it does within milliseconds. A reload is no exit
  // (every reader would take the session for one no bridge runs); the exit is written when none takes it over.
  leave(now) {
    if (!this.attached || this.written === "exited") return;
    this.writeBridge(now, true);
    this.leftAt = now;
    (globalThis[LEAVING] ??= new Map()).set(this.agent.id, this);
  }

  // No instance took over the session this one left: it exited when it left.
  exit() {
    this.writeBridge(this.leftAt, true, true);
  }

  // The standby file this process wrote goes once it serves the session or exits (another's stays).
  leaveStandby() {
    this.trouble("standby", undefined);
    if (!this.standby) return;
    this.standby = false;
    if (readJson(this.file(STANDBY))?.pid !== process.pid) return;
    try {
      fs.unlinkSync(this.file(STANDBY));
    } catch {}
  }

  writeBridge(now, force = false, exited = false) {
    // once it said it exited (the session disposed, the plugin unloaded), what it still finishes (an outcome, a
    // flush) must not make the file say a bridge runs the session again; once it left the session to a successor,
    // the file is that one's, and what this one may still write is its exit
    if (!this.attached || ((this.written === "exited" || this.leftAt !== undefined) && !exited)) return;
    const state = exited ? "exited" : this.state();
    const changed = state !== this.written; // a beat only says the same again: it is not synced to the disk
    if (changed) {
      this.since = this.carried?.state === state ? this.carried.since : now;
      this.carried = undefined;
    }
    if (!force && state === this.written && now - (this.beat ?? 0) < HEARTBEAT_MS) return;
    const body = {
      kind: "dsh",
      pid: process.pid,
      procStart: this.plugin.procStart,
      bootId: this.plugin.bootId,
      ...(this.plugin.pidNs !== undefined && { pidNs: this.plugin.pidNs }), // where that pid names this process
      state,
      since: this.since,
      heartbeat: now,
      sessionId: this.agent.id,
      dir: this.dir, // a copy of the session directory keeps this file: tapedeck tells it by this field
      ...(this.identity && { dirId: this.identity }), // ... and by this one, which requests sent here carry as `to`
      plugin: `tapedeck-bridge/${VERSION}`,
    };
    if (FINGERPRINT) body.fingerprint = FINGERPRINT;
    if (this.plugin.dsh) body.dsh = this.plugin.dsh;
    if (this.problem) body.problem = this.problem;
    if (this.inFlight.size) body.inFlight = [...this.inFlight.values()];
    if (this.paused) body.paused = true; // kept once it exited: the next start holds the session until a resume
    try {
      writeAtomic(this.file(BRIDGE), JSON.stringify(body) + "\n", changed || force);
      this.written = state;
      this.beat = now;
      this.trouble(BRIDGE, undefined);
    } catch (err) {
      this.trouble(BRIDGE, fsProblem("write", this.file(BRIDGE), err));
    }
  }

  // A problem with the inbox file itself lasts until the file is usable again; one with a line stays shown
  // until a later problem replaces it.
  note(problem, inbox = false) {
    const text = quoted(problem, Infinity); // on one line, each path in it still whole and exact
    if (inbox) this.inboxProblem = text;
    else this.lineProblem = text;
    this.refreshProblem();
  }

  refreshProblem() {
    const problem = this.inboxProblem ?? this.lineProblem;
    if (problem === this.problem) return;
    this.problem = problem;
    this.writeBridge(Date.now(), true);
  }

  // The outcome data answering a request, or undefined when the request already has that outcome (one pending
  // and one final outcome per id at most).
  claim(request, outcome, error, detail) {
    const data = { requestId: request.id, op: request.op ?? null, outcome };
    if (request.origin !== undefined) data.origin = request.origin;
    if (error !== undefined) data.error = error;
    if (detail !== undefined) data.detail = detail;
    data.at = Date.now();
    const given = FINAL.has(outcome) ? this.final : this.pending;
    if (given.has(request.id)) return undefined;
    given.add(request.id);
    return data;
  }

  append(data) {
    try {
      const flags = fs.constants.O_RDWR | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW;
      const fd = fs.openSync(this.file(OUTCOMES), flags, 0o600);
      try {
        // A line a write cut short (DSH killed, a full disk) is ended first, left as it is: run on into it, this
        // outcome would be part of a line no reader parses.
        const st = fs.fstatSync(fd);
        const cut = st.isFile() && st.size > 0 && readAt(fd, st.size - 1, 1)[0] !== 0x0a;
        writeAll(fd, Buffer.from((cut ? "\n" : "") + JSON.stringify(data) + "\n", "utf8"));
      } finally {
        fs.closeSync(fd);
      }
    } catch (err) {
      const problem = fsProblem("append to the outcomes file", this.file(OUTCOMES), err);
      this.trouble("append", problem); // in DSH's log too: the outcome is lost, the line it began cut
      this.note(problem);
      return;
    }
    this.trouble("append", undefined);
    if (FINAL.has(data.outcome) && this.inFlight.delete(data.requestId))
      this.writeBridge(Date.now(), true, this.written === "exited"); // a file that says exited goes on saying it
  }

  // Answers a request whose run the DSH before this one began and never answered. The log says how it ended when
  // DSH wrote its command pair there; otherwise it may or may not have taken effect (a pause or a mark is kept
  // in this bridge's files before the outcome is written, a stop or a message reaches the agent at once), so
  // the outcome says exactly that, never applied nor cancelled.
  interrupted(request) {
    const logged = this.done.get(request.id);
    if (logged) this.outcome(request, logged.outcome, logged.error, logged.detail);
    else
      this.outcome(
        request,
        "unknown",
        `DSH exited while it ran this ${request.op ?? "request"}, before its outcome was written: it may or may not ` +
          `have taken effect: ${unknownHint(request.op)}`,
      );
  }

  outcome(request, outcome, error, detail) {
    const data = this.claim(request, outcome, error, detail);
    if (data) this.append(data);
    return data;
  }

  // --- reading the inbox ---

  // Opens the inbox for reading: never through a symlink, only a regular file kept at 0600.
  openInbox() {
    const file = this.file(INBOX);
    let fd;
    try {
      fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    } catch (err) {
      if (err.code === "ENOENT") {
        this.inboxProblem = undefined;
        this.refreshProblem();
        this.forgetInbox();
        return undefined;
      }
      if (err.code === "ELOOP") this.note(`the control inbox ${quotedPath(file)} is a symbolic link; ignored`, true);
      else this.note(fsProblem("open the control inbox", file, err), true);
      return undefined;
    }
    const st = fs.fstatSync(fd);
    if (!st.isFile()) {
      fs.closeSync(fd);
      this.note(`the control inbox ${quotedPath(file)} is not a regular file; ignored`, true);
      return undefined;
    }
    if ((st.mode & 0o777) !== 0o600) {
      if (typeof process.getuid === "function" && st.uid === process.getuid()) {
        // one it cannot restore (a read-only mount) is ignored as a stranger's is: the mode says who may write it
        try {
          fs.fchmodSync(fd, 0o600);
        } catch (err) {
          fs.closeSync(fd);
          const mode = (st.mode & 0o777).toString(8);
          this.note(`${fsProblem("restore mode 600 of the control inbox", file, err)}; it has mode ${mode} and is ignored`, true);
          return undefined;
        }
      } else {
        fs.closeSync(fd);
        this.note(`the control inbox ${quotedPath(file)} has mode ${(st.mode & 0o777).toString(8)}, not 600, and another owner; ignored`, true);
        return undefined;
      }
    }
    this.inboxProblem = undefined;
    this.refreshProblem();
    return { fd, st };
  }

  // The inbox is gone: the file that takes its name next is read from its start, also when it gets the inode number
  // of the one read before (a file system hands a freed one out again at once), which the cursor alone would take
  // for the old file grown, and read from past its first lines. What it repeats is skipped by id, as in an inbox
  // read again.
  forgetInbox() {
    if (this.cursor.ino === 0 && this.cursor.offset === 0) return;
    this.cursor = { ino: 0, offset: 0 };
    this.line = 0;
    this.partial = null;
    this.seen = null;
    this.saveState();
  }

  poll() {
    if (!this.attached) return;
    const opened = this.openInbox();
    if (!opened) return;
    const { fd, st } = opened;
    let data;
    try {
      if (st.ino !== this.cursor.ino || st.size < this.cursor.offset || !this.stillRead(fd)) {
        // a new or truncated inbox, or one written again in place (on the same inode): read it from its start
        this.cursor = { ino: st.ino, offset: 0 };
        this.line = 0;
        this.partial = null;
        this.seen = null;
      }
      const start = this.cursor.offset + (this.partial ? this.partial.length : 0);
      if (st.size <= start) return;
      data = Buffer.alloc(st.size - start);
      fs.readSync(fd, data, 0, data.length, start);
      this.remember(fd, start, data);
    } finally {
      fs.closeSync(fd);
    }
    this.split(data);
  }

  // Whether the inbox open as `fd` still holds what was read of it: the first and last CHECK_BYTES this instance
  // read (an append changes neither), or, for a cursor taken back from bridge.state.json, the first bytes its
  // digest names (one an older plugin saved names none).
  stillRead(fd) {
    const end = this.cursor.offset + (this.partial ? this.partial.length : 0);
    if (end === 0) return true;
    if (this.seen) {
      const { head, tail } = this.seen;
      return readAt(fd, 0, head.length).equals(head) && readAt(fd, end - tail.length, tail.length).equals(tail);
    }
    const { head, offset } = this.cursor;
    return head === undefined || headDigest(readAt(fd, 0, Math.min(offset, CHECK_BYTES))) === head;
  }

  // Keep the first and last CHECK_BYTES read of the inbox, `data` being its bytes from `start`.
  remember(fd, start, data) {
    if (!this.seen) {
      const kept = Math.min(start, CHECK_BYTES);
      this.seen = { head: readAt(fd, 0, kept), tail: readAt(fd, start - kept, kept) };
    }
    const { head, tail } = this.seen;
    if (head.length < CHECK_BYTES) this.seen.head = Buffer.concat([head, data.subarray(0, CHECK_BYTES - head.length)]);
    this.seen.tail = Buffer.concat([tail, data.subarray(-CHECK_BYTES)]).subarray(-CHECK_BYTES);
  }

  split(data) {
    let pos = 0;
    const entries = [];
    while (pos < data.length) {
      const nl = data.indexOf(0x0a, pos);
      const piece = data.subarray(pos, nl === -1 ? data.length : nl);
      const partial = this.partial ?? { length: 0, chunks: [], overlong: false, head: null };
      partial.length += piece.length;
      if (!partial.overlong) {
        partial.chunks.push(Buffer.from(piece));
        if (partial.length > MAX_LINE_BYTES) {
          partial.overlong = true;
          partial.head = Buffer.concat(partial.chunks).subarray(0, MAX_ID_CHARS + 64);
          partial.chunks = [];
        }
      }
      if (nl === -1) {
        this.partial = partial;
        break;
      }
      this.partial = null;
      this.line += 1;
      const lineNo = this.line;
      const offset = this.cursor.offset;
      this.cursor.offset += partial.length + 1;
      pos = nl + 1;
      if (partial.overlong) {
        entries.push({ ...unreadable(lineNo, partial.head, `is longer than ${MAX_LINE_BYTES} bytes`), offset });
        continue;
      }
      const raw = Buffer.concat(partial.chunks);
      if (trimBytes(raw).length === 0) continue;
      entries.push({ ...decodeLine(lineNo, trimBytes(raw)), offset });
    }
    if (this.cursor.offset) this.cursor.head = headDigest(this.seen.head.subarray(0, this.cursor.offset));
    // The cursor is saved before any of these lines is answered: a DSH killed in between leaves them read and
    // unanswered, which the next start's recoverRead answers as read; saved after, a `pending` already written
    // would stand for a request the next start reads again as one sent while no bridge ran.
    if (entries.length) this.saveState();
    for (const entry of entries) this.take(entry);
  }

  // Re-reads the inbox up to the cursor for the requests read before this bridge attached that have no final
  // outcome and whose run no instance in this process began: one whose td command the log holds, a DSH that is gone
  // ran, and it is answered as `interrupted` says. The others, after a reload (no `gone`), run now, or wait for
  // idle again. When
  // the bridge that read them is gone (DSH stopped or killed, the plugin unloaded), each is cancelled with `gone` as
  // the reason, as our host cancels what the host before it had not applied: a rewind must not fire minutes later,
  // in a turn its sender never saw; one whose time ran out is expired, as on our host. A queued one still runs now,
  // unless its sender withdrew it.
  recoverRead(gone) {
    if (this.cursor.offset === 0) return;
    const opened = this.openInbox();
    if (!opened) return;
    let text;
    try {
      if (opened.st.ino !== this.cursor.ino || !this.stillRead(opened.fd)) return; // another inbox: poll reads it from its start
      text = fs.readFileSync(opened.fd);
    } finally {
      fs.closeSync(opened.fd);
    }
    const all = splitLines(text).map((raw, i) => decodeLine(i + 1, raw));
    const entries = all.slice(0, text.subarray(0, this.cursor.offset).filter((byte) => byte === 0x0a).length);
    // a sender may withdraw a request after the bridge that read it went: its line lies past the cursor
    for (const { withdraw } of all) if (withdraw !== undefined && !this.final.has(withdraw)) this.withdrawn.add(withdraw);
    const begun = this.begun;
    const seen = new Set();
    for (const entry of entries) {
      const id = entry.request?.id;
      if (!id || seen.has(id) || this.final.has(id) || begun.has(id)) continue;
      if (this.started.has(id) && !gone) continue; // it ran in this process: the instance that ran it answers
      seen.add(id);
      const { request } = entry;
      if (entry.error) {
        this.outcome(request, "rejected", entry.error); // read, and its answer never written
        continue;
      }
      if (this.started.has(id)) this.interrupted(request);
      else if (gone && this.withdrawn.has(id)) this.outcome(request, "cancelled", "withdrawn by its sender");
      else if (gone && !request.queued && !(request.expires <= Date.now())) this.outcome(request, "cancelled", gone);
      else this.admit(request, true); // it runs now or at idle; one whose time ran out is answered expired
    }
  }

  take(entry) {
    if (entry.withdraw !== undefined) {
      const id = entry.withdraw;
      if (!this.final.has(id)) this.withdrawn.add(id);
      return;
    }
    const request = entry.request;
    if (!request) {
      this.note(entry.error);
      return;
    }
    if (this.reused(entry, request)) {
      // a second outcome would stand for the first request's, and a second run would apply it twice
      this.note(`an inbox line reuses request id ${quoted(request.id)}, taken already: ignored as a retry (its outcome is the first one's)`);
      return;
    }
    // A line read again (the inbox replaced, truncated or written again in place) never runs its request twice:
    // here, and nowhere later, is where it is refused, whether the request was answered, ran, or still waits
    if (this.final.has(request.id) || this.started.has(request.id) || this.admitted.has(request.id)) return;
    if (entry.error) {
      this.outcome(request, "rejected", entry.error);
      return;
    }
    this.admit(request, false);
  }

  // Whether entry's line is a new one reusing the id of a request taken already: one read on another line of the
  // inbox since it was last read from its start (a new cursor), or one answered or run before this bridge attached
  // and sent since. A line read again (the inbox replaced, truncated or written again in place, its lines maybe
  // moved) is none. The rule of tapedeck's host (core/host/operator.py).
  reused(entry, request) {
    const first = this.lines.get(request.id);
    if (first?.cursor !== this.cursor) this.lines.set(request.id, { cursor: this.cursor, offset: entry.offset });
    if (first !== undefined) return first.cursor === this.cursor && first.offset !== entry.offset;
    const taken = [this.final, this.started, this.pending, this.admitted].some((ids) => ids.has(request.id));
    return taken && request.at !== null && request.at >= this.startedAt;
  }

  admit(request, recovered) {
    const now = Date.now();
    if (request.expires !== undefined && now >= request.expires) {
      this.outcome(request, "expired", expiryError(request));
      return;
    }
    // Sent before this bridge started, while none ran here or to one that is gone and never read it: it must not
    // fire late, unless it was queued for the next start (as our host cancels what was sent to the host before it).
    const sent = request.at ?? 0;
    if (!recovered && (this.absent || this.restarted) && !request.queued && sent < this.startedAt) {
      const gone = this.restarted ? "DSH exited before reading it" : "the tapedeck bridge was unloaded before reading it";
      this.outcome(request, "cancelled", sent >= this.absentSince ? "it arrived while no bridge was running" : gone);
      return;
    }
    this.admitted.add(request.id);
    if (AT_IDLE.has(request.op) && this.agent.status !== "idle") {
      this.deferToIdle(request);
      return;
    }
    this.enqueue(request);
  }

  // Acknowledges the request pending and queues it once the agent is idle: it waits outside the op queue, so the
  // ops sent after it (a stop) are not held until the turn ends.
  deferToIdle(request) {
    this.outcome(request, "pending", undefined, { waitingFor: "idle" });
    this.whenIdle(request).then((ready) => ready && this.enqueue(request));
  }

  // Resolves true once the agent is idle, false (after answering the request) when it expired or was withdrawn.
  async whenIdle(request) {
    for (;;) {
      if (this.withdrawn.has(request.id)) {
        this.outcome(request, "cancelled", "withdrawn by its sender");
        return false;
      }
      if (request.expires !== undefined && Date.now() >= request.expires) {
        this.outcome(request, "rejected", `${request.op} runs only while the agent is idle, and it stayed busy until the request expired`);
        return false;
      }
      if (!this.plugin.answers() || this.gone) return false;
      if (this.agent.status === "idle") return true;
      await Promise.race([this.agent.whenIdle(), sleep(POLL_MS)]);
    }
  }

  enqueue(request) {
    this.queue = this.queue
      .then(() => this.execute(request))
      .catch((err) => this.plugin.warn(`op ${request.id} failed: ${err?.stack ?? err}`));
  }

  async execute(request) {
    while (HOLD_FILE && fs.existsSync(HOLD_FILE)) await sleep(POLL_MS);
    if (!this.plugin.answers() || this.gone) return; // a successor runs it (or DSH is done with the session)
    // run meanwhile by a td command given by hand (DSH's command line or API) rather than from its inbox line, which
    // then does not run it again (a line read again never gets here: take refuses it)
    if (this.final.has(request.id) || this.started.has(request.id) || this.begun.has(request.id)) return;
    if ([...this.awaiting.values()].includes(request.id)) return; // a td command of it waits for the attach: it runs it
    if (this.withdrawn.has(request.id)) {
      this.outcome(request, "cancelled", "withdrawn by its sender");
      return;
    }
    if (request.expires !== undefined && Date.now() >= request.expires) {
      this.outcome(request, "expired", expiryError(request));
      return;
    }
    if (AT_IDLE.has(request.op) && this.agent.status !== "idle") {
      this.deferToIdle(request); // an op ahead of it in the queue started a turn (a queued message)
      return;
    }
    this.record(request); // a successor that takes over from here on never runs it again
    this.dispatched.add(request.id); // ... and the td command given here is the one run lets through
    const line = `/${COMMAND} ${JSON.stringify(request)}`;
    let result;
    try {
      // A signal nothing aborts, not this instance's: a reload disposes it while the handler runs on, and DSH would
      // settle the command as an error while the new instance writes the op's outcome; DSH logs what the handler did.
      result = await this.plugin.ctx.commands.execute(this.agent, line, [], new AbortController().signal);
    } finally {
      this.dispatched.delete(request.id); // its handler ran, or never will
    }
    if (result === undefined) this.outcome(request, "rejected", `DSH has no /${COMMAND} command registered`);
    await this.settling.get(request.id);
  }

  // Puts a request whose run begins on record before it runs: in `begun`, and in bridge.json's inFlight, synced, so
  // that should DSH die before its outcome is written, the next start (and tapedeck) know it may have taken effect.
  record(request) {
    this.begun.add(request.id);
    this.inFlight.set(request.id, { id: request.id, op: request.op, ...(request.origin && { origin: request.origin }) });
    this.writeBridge(Date.now(), true);
  }

  // Writes a td command's outcome line once DSH has logged its command/done and the log is flushed, so a reader
  // that sees the outcome finds the command pair in the log too.
  settle(data) {
    const written = sleep(0)
      .then(async () => {
        while (HOLD_OUTCOME_FILE && fs.existsSync(HOLD_OUTCOME_FILE)) await sleep(POLL_MS);
      })
      .then(() => this.flush())
      .then(() => this.append(data))
      .finally(() => this.settling.delete(data.requestId));
    this.settling.set(data.requestId, written);
  }

  // command/run and command/done are log-only: DSH writes them at its next checkpoint, which a paused or idle
  // agent may not reach for a long time, so the bridge asks for one.
  async flush() {
    try {
      await this.plugin.ctx.sessions.flush(this.agent.session);
      this.trouble("flush", undefined);
    } catch (err) {
      this.trouble("flush", `cannot flush session ${quoted(this.agent.id)}: ${fsFailure(err)}`);
    }
  }

  // --- pause gate ---

  hold(signal) {
    return new Promise((resolve) => {
      const release = () => {
        signal?.removeEventListener("abort", release);
        const i = this.holds.indexOf(release);
        if (i !== -1) this.holds.splice(i, 1);
        resolve();
        this.writeBridge(Date.now(), true);
      };
      this.holds.push(release);
      signal?.addEventListener("abort", release, { once: true });
      // a reload that landed while the gate awaited its flush handed this instance's held steps over already
      if (!this.plugin.answers()) this.handOver();
      this.writeBridge(Date.now(), true);
    });
  }

  release() {
    for (const release of [...this.holds]) release();
  }

  adoptHolds() {
    const handed = globalThis[GATES]?.get(this.agent.id);
    if (!handed) return;
    globalThis[GATES].delete(this.agent.id);
    clearTimeout(handed.timer);
    if (this.paused) this.holds.push(...handed.holds);
    else for (const release of handed.holds) release();
  }

  handOver() {
    if (this.holds.length === 0) return;
    const holds = [...this.holds];
    this.holds = [];
    const map = (globalThis[GATES] ??= new Map());
    const timer = setTimeout(() => {
      if (map.get(this.agent.id)?.holds === holds) map.delete(this.agent.id);
      for (const release of holds) release();
    }, HANDOVER_MS);
    timer.unref?.();
    map.set(this.agent.id, { holds, timer });
    // a successor that attached the session already takes them now (it adopts at its attach otherwise)
    const successor = current()?.sessions.get(this.agent.id);
    if (successor !== undefined && successor !== this && successor.attached) successor.adoptHolds();
  }
}

// Whether bridge.json (`previous`) was written where this process's pids are (`plugin`: this machine, its dirId's,
// this boot and this pid namespace, or a file that does not say, from a plugin before it did): there its pid names a
// process this one can look for, and its paths are this one's. tapedeck's `this_boot` in core/bridge/files.py.
function seenHere(previous, plugin) {
  const ownMachine = typeof previous.dirId !== "string" || previous.dirId.split(":")[0] === plugin.machine;
  return ownMachine && [undefined, plugin.bootId].includes(previous.bootId) && [undefined, plugin.pidNs].includes(previous.pidNs);
}

// Whether bridge.json (`previous`) was written by this very process (`plugin`, of pid `pid`): a plugin reload, not
// another DSH. A pid and its start time name this process only where they were written (`seenHere`): a sibling
// container's DSH may have this pid, and start in the same clock tick of the one kernel.
function writtenByThis(previous, plugin, pid = process.pid) {
  return seenHere(previous, plugin) && previous.pid === pid && previous.procStart === plugin.procStart;
}

// Another live DSH process whose bridge serves the directory `dir` (what its bridge.json, `previous`, says), named
// for a warning, or undefined. The file of a copy or of a moved directory names another directory. The process is
// looked for here when the file was written in this boot of this machine and in this pid namespace; a process this
// one cannot look for (another machine sharing the directory, a sibling container, or a container resumed on its
// volume moments after it was killed) runs while its heartbeat is fresh, the rule tapedeck reads it by
// (`bridge_live` in core/bridge/files.py): this one waits until that heartbeat stops.
function servedByOther(previous, dir, plugin) {
  const pid = previous.pid;
  if (!Number.isSafeInteger(pid) || previous.state === "exited") return undefined;
  const here = seenHere(previous, plugin);
  if (!servesDir(previous, dir, here, plugin)) return undefined;
  if (here && pid === process.pid) return undefined; // this process wrote it (a reload)
  if (here && previous.procStart !== undefined && procStart(pid) === previous.procStart) return `${pid}`;
  const checked = here && plugin.bootId !== undefined && previous.bootId === plugin.bootId;
  return !checked && beating(previous) ? `${pid} (not seen from here: live by its heartbeat)` : undefined;
}

// Whether bridge.json (`previous`) was written for the directory `dir`, by what identifies the directory rather than
// the path string: where its writer's paths are this process's (`here`), the path it names leads to `dir` (a
// symbolic link on the way too; a moved directory's old path leads elsewhere or nowhere); where they may not be (a
// sibling container mounting the volume at a path of its own, in this kernel's boot), its dirId has this directory's
// device and inode; elsewhere (another machine sharing the directory) the path is the same.
function servesDir(previous, dir, here, plugin) {
  if (previous.dir === dir) return true;
  if (typeof previous.dir !== "string") return false;
  if (here) return sameDir(previous.dir, dir);
  const id = typeof previous.dirId === "string" ? previous.dirId.split(":").slice(1).join(":") : undefined;
  return plugin.bootId !== undefined && previous.bootId === plugin.bootId && id !== undefined && id === devIno(dir);
}

// When the bridge that wrote bridge.json (`previous`) was last alive: its `since` once it exited, else its
// heartbeat; undefined when that is no time the file could hold (not a safe integer of ms, or later than `now` by more
// than a reload's gap: a forged or damaged file), as when there is no file. The gap since then is unknown, so
// whatever the inbox holds from before this start is taken as sent while no bridge ran.
function aliveAt(previous, now) {
  const at = previous.state === "exited" ? previous.since : previous.heartbeat;
  return Number.isSafeInteger(at) && at >= 0 && at - now <= RELOAD_GRACE_MS ? at : undefined;
}

// Whether bridge.json (`previous`) says a bridge writes it now: not exited, its heartbeat fresh.
function beating(previous) {
  const beat = Number.isSafeInteger(previous.heartbeat) ? previous.heartbeat : undefined;
  return previous.state !== "exited" && beat !== undefined && Math.abs(Date.now() - beat) < HEARTBEAT_FRESH_MS;
}

// Where the directory `here` (of identity `mine`, on machine `machine`) was copied from, as bridge.json there
// (`previous`) names it: another machine's directory (whatever its path here names), or another directory of this
// machine that is still the one it names; undefined when `here` is that directory, or it was moved here (the old
// path is gone, or names another directory now: what its inbox holds was sent to this session). A file of another
// machine id that names this directory's device, inode and path, and that no bridge writes now (exited, or its
// heartbeat old), is this directory's own: the machine's id changed (a container rebuilt on its volume), the rule
// tapedeck reads it by (`placed` in core/bridge/files.py); so is one written in this kernel's boot with this
// directory's device and inode, whatever its path names here (the container mounts the volume elsewhere). A file
// from a plugin that wrote no identity is judged by its path alone.
function copyOf(previous, here, mine, plugin) {
  const machine = plugin.machine;
  const recorded = typeof previous.dir === "string" && previous.dir ? previous.dir : undefined;
  const id = typeof previous.dirId === "string" ? previous.dirId : undefined;
  if (id && mine) {
    if (id === mine) return undefined;
    const [idMachine, ...place] = id.split(":");
    if (idMachine !== machine) {
      const own = place.join(":") === mine.split(":").slice(1).join(":") && recorded !== undefined;
      const thisBoot = plugin.bootId !== undefined && previous.bootId === plugin.bootId;
      if (own && !beating(previous) && (thisBoot || sameDir(recorded, here))) return undefined;
      return `${recorded ?? "a session directory"} on another machine`;
    }
    return recorded && dirIdentity(recorded, machine) === id ? recorded : undefined;
  }
  if (!recorded) return undefined;
  try {
    fs.statSync(recorded);
  } catch {
    return undefined;
  }
  return sameDir(recorded, here) ? undefined : recorded;
}

// Whether the paths `a` and `b` name one directory (its device and inode); false when either cannot be asked.
function sameDir(a, b) {
  try {
    const there = fs.statSync(a);
    const st = fs.statSync(b);
    return there.dev === st.dev && there.ino === st.ino;
  } catch {
    return false;
  }
}

// A directory's `<device>:<inode>` (undefined when it cannot be told).
function devIno(dir) {
  try {
    const st = fs.statSync(dir);
    return `${st.dev}:${st.ino}`;
  } catch {
    return undefined;
  }
}

// A checkpoint mark read back (from bridge.state.json, the outcomes file or the log), with the fields the plugin uses,
// as it writes them; undefined when one is of another kind (those files are anybody's).
function markOf(value) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const { markId, seq, objective, at, completed } = value;
  if (!Number.isSafeInteger(markId) || markId < 1) return undefined;
  if (seq !== null && !(Number.isSafeInteger(seq) && seq >= 0)) return undefined;
  if (!Number.isSafeInteger(at) || at < 0) return undefined;
  if ((objective !== undefined && typeof objective !== "string") || (completed !== undefined && completed !== true))
    return undefined;
  const mark = { markId, seq, at };
  if (objective !== undefined) mark.objective = objective;
  if (completed) mark.completed = true;
  return mark;
}

// A directory's identity, `<machine id>:<device>:<inode>` (undefined when it cannot be told).
function dirIdentity(dir, machine) {
  const place = machine ? devIno(dir) : undefined;
  return place ? `${machine}:${place}` : undefined;
}

function trimBytes(buf) {
  let a = 0;
  let b = buf.length;
  const space = (c) => c === 0x20 || (c >= 0x09 && c <= 0x0d); // what Python's bytes.strip() removes
  while (a < b && space(buf[a])) a++;
  while (b > a && space(buf[b - 1])) b--;
  return buf.subarray(a, b);
}

function splitLines(buf) {
  const out = [];
  let pos = 0;
  while (pos < buf.length) {
    const nl = buf.indexOf(0x0a, pos);
    if (nl === -1) break;
    out.push(trimBytes(buf.subarray(pos, nl)));
    pos = nl + 1;
  }
  return out;
}

function requestIdOf(args) {
  if (typeof args !== "string") return undefined;
  try {
    const id = JSON.parse(args)?.id;
    return typeof id === "string" ? id : undefined;
  } catch {
    return LEADING_ID.exec(args)?.[1];
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// --- the ops ----------------------------------------------------------------------------------------------------

class Rejected extends Error {}

function eventAt(session, seq) {
  const events = session.events;
  const direct = events[seq];
  return direct?.seq === seq ? direct : events.find((e) => e.seq === seq);
}

function callsTools(event) {
  const content = event?.type === "assistant/message" ? event.data?.message?.content : undefined;
  return Array.isArray(content) && content.some((block) => block?.type === "tool-call");
}

function isReplacement(event) {
  return typeof event?.surfaceOp === "object" && event.surfaceOp?.op === "replace";
}

// The append-origin tool/result a surface node stands for (following replacement sources back).
function originalOf(session, event) {
  let current = event;
  const seen = new Set();
  while (isReplacement(current) && !seen.has(current.seq)) {
    seen.add(current.seq);
    const sources = (current.sourceEventSeqs ?? []).filter((s) => s < current.seq);
    const earlier = sources.map((s) => eventAt(session, s)).filter((e) => e?.type === "tool/result");
    if (earlier.length === 0) break;
    current = earlier.reduce((a, b) => (a.seq < b.seq ? a : b));
  }
  return current;
}

function chainOf(session, event) {
  const seqs = new Set([event.seq]);
  let current = event;
  while (isReplacement(current)) {
    const next = (current.sourceEventSeqs ?? []).map((s) => eventAt(session, s)).find((e) => e?.type === "tool/result" && !seqs.has(e.seq));
    if (!next) break;
    seqs.add(next.seq);
    current = next;
  }
  return seqs;
}

// The session's bridge to apply `request`'s op with once the agent is idle, the op's td command running in this
// handler: `bridge`, or, when a reload or an in-place upgrade of the plugin replaced its instance while it waited,
// the new instance's (its marks and files are the session's now), which goes on waiting and applies it. Nothing else
// would answer the request: every instance knows its run began. Throws Rejected when it was answered meanwhile
// (withdrawn or expired), the session went, the plugin was removed (`removed`), no new instance attached the session
// within ATTACH_WAIT_MS, or the new
// instance is of a plugin that keeps its state in another form (STATE_FORMAT), which this one cannot drive.
async function idleBridge(bridge, request) {
  const gaveUp = `${request.op}: gave up waiting for the agent to be idle`;
  for (;;) {
    if (bridge.plugin.answers() && !bridge.gone) {
      if (await bridge.whenIdle(request)) return bridge;
      if (bridge.plugin.answers() || bridge.gone) throw new Rejected(gaveUp); // answered, or the session went
    }
    if (bridge.gone) throw new Rejected(gaveUp);
    const deadline = Date.now() + ATTACH_WAIT_MS;
    let next;
    while (!(next = current()?.sessions.get(bridge.agent.id))?.attached) {
      if (removed(bridge.plugin))
        throw new Rejected(
          `${gaveUp}: the tapedeck bridge plugin was removed from DSH while this ${request.op} waited, and no new ` +
            `instance of it will take the ${request.op} over; it applied nothing`,
        );
      if (Date.now() >= deadline) throw new Rejected(`${gaveUp}: no new instance of the tapedeck bridge took it over`);
      await sleep(POLL_MS);
    }
    if (next.format !== STATE_FORMAT)
      throw new Rejected(
        `${request.op}: the tapedeck bridge was upgraded while this ${request.op} waited for the agent to be idle, ` +
          `and the new version keeps its state in another form (format ${next.format ?? "unknown"}, this one ` +
          `${STATE_FORMAT}): it cannot take the ${request.op} over; send it again once the agent is idle`,
      );
    bridge = next;
  }
}

// Whether `plugin`, disposed, was removed from DSH rather than reloaded or upgraded: no instance of the plugin is live
// in this process a reload's grace after its dispose (a reload's or an upgrade's new instance comes within
// milliseconds; `settleExits` writes the exits by the same rule).
function removed(plugin) {
  return plugin.disposedAt !== undefined && !current() && Date.now() - plugin.disposedAt >= RELOAD_GRACE_MS;
}

// The bridge that writes the outcome of an op `bridge` ran: the instance that answers now, once it attached the
// session and keeps its state in this one's form (a reload or an upgrade replaced `bridge`'s while the op ran), else
// `bridge` itself.
function settledBy(bridge) {
  if (bridge.plugin.answers()) return bridge;
  const next = current()?.sessions.get(bridge.agent.id);
  return next?.attached && next.format === STATE_FORMAT ? next : bridge;
}

async function maintain(plugin, bridge, task) {
  const agent = bridge.agent;
  try {
    return await agent.runMaintenance(async () => {
      const out = task();
      await plugin.ctx.sessions.flush(agent.session);
      return out;
    });
  } catch (err) {
    if (err instanceof Rejected) throw err;
    throw new Rejected(`the agent is busy (${reasonOf(err)}); try again once it is idle`);
  }
}

const HANDLERS = {
  async message(plugin, bridge, args) {
    const text = args.text;
    if (args.kind === "note") return { kind: "note" };
    const message = Object.freeze({
      id: randomUUID(),
      role: "user",
      content: Object.freeze([Object.freeze({ type: "text", text })]),
      source: Object.freeze({ kind: "plugin", plugin: "tapedeck-bridge" }),
    });
    const mode = args.mode ?? "steer";
    if (mode === "queue") bridge.agent.followup(message);
    else bridge.agent.steer(message);
    return { mode };
  },

  async stop(plugin, bridge, args) {
    if (bridge.agent.status !== "running") throw new Rejected("stop: the agent is idle; there is no turn to stop");
    const reason = args.reason ?? "tapedeck stop";
    // DSH's cancel causes are the user's (no reason), a parent's, a hook's (with a reason) or a disposal; it logs
    // the cause as given, so `by` tells tapedeck's readers that the operator stopped the turn, not a hook.
    bridge.agent.cancel({ kind: "hook", reason, by: "operator" }, { keepInbox: true });
    return { reason };
  },

  async pause(plugin, bridge) {
    bridge.paused = true;
    bridge.saveState();
    const state = bridge.state();
    bridge.writeBridge(Date.now(), true);
    return { state };
  },

  async resume(plugin, bridge) {
    const was = bridge.paused;
    bridge.paused = false;
    bridge.saveState();
    bridge.release();
    bridge.writeBridge(Date.now(), true);
    return { wasPaused: was };
  },

  async checkpoint(plugin, bridge, args) {
    const session = bridge.agent.session;
    const nodes = session.surface.nodes;
    let i = nodes.length - 1;
    if (bridge.inStep) {
      // Mid-step the last call may still be waiting for results: anchor before that call, so that the history
      // after the mark never starts with a tool result whose call lies before it.
      while (i >= 0 && eventAt(session, nodes[i])?.type === "tool/result") i--;
      if (i >= 0 && callsTools(eventAt(session, nodes[i]))) i--;
    }
    const markId = bridge.marks.reduce((m, k) => Math.max(m, k.markId), 0) + 1;
    const mark = { markId, seq: i >= 0 ? nodes[i] : null, at: Date.now() };
    if (args.objective !== undefined) mark.objective = args.objective;
    bridge.marks.push(mark);
    bridge.saveState();
    const detail = { markId, seq: mark.seq };
    if (mark.objective !== undefined) detail.objective = mark.objective;
    return detail;
  },

  async rewind(plugin, bridge, args, request) {
    const session = bridge.agent.session;
    const active = (mark) => !mark.completed && (mark.seq === null || session.surface.nodes.includes(mark.seq));
    let mark;
    if (args.markId !== undefined) {
      mark = bridge.marks.find((m) => m.markId === args.markId);
      const known = bridge.marks.map((m) => m.markId).join(", ") || "none";
      if (!mark) throw new Rejected(`rewind: there is no checkpoint mark ${args.markId} (marks: ${known})`);
      if (!active(mark))
        throw new Rejected(
          `rewind: checkpoint mark ${args.markId} is no longer active (a rewind completed it, or its history was replaced)`,
        );
    } else {
      mark = [...bridge.marks].reverse().find(active);
      if (!mark) throw new Rejected("rewind: there is no active checkpoint mark; place one with checkpoint first");
    }
    bridge = await idleBridge(bridge, request);
    return maintain(bridge.plugin, bridge, () => {
      const nodes = session.surface.nodes;
      let startIdx = mark.seq === null ? 0 : nodes.indexOf(mark.seq) + 1;
      // Never split a tool call from its results: a range starting at a result takes its call along.
      while (startIdx > 0 && startIdx < nodes.length && eventAt(session, nodes[startIdx])?.type === "tool/result") startIdx--;
      if (startIdx >= nodes.length) throw new Rejected(`rewind: nothing follows checkpoint mark ${mark.markId}`);
      const hidden = nodes.slice(startIdx);
      const label = mark.objective ? ` (${quoted(mark.objective)})` : ""; // the inbox's text, cut and escaped
      const text =
        `[tapedeck] The operator rewound this session to checkpoint ${mark.markId}${label}. ` +
        `${hidden.length} later messages were set aside; continue from the checkpoint.`;
      const message = {
        id: randomUUID(),
        role: "user",
        content: [{ type: "text", text }],
        source: { kind: "plugin", plugin: "rewind" },
      };
      const start = hidden[0];
      const end = hidden[hidden.length - 1];
      const event = session.append("user/message", message, {
        surfaceOp: { op: "replace", start, end },
        sourceEventSeqs: [...hidden].sort((a, b) => a - b),
      });
      bridge.complete(mark.markId);
      bridge.saveState();
      const detail = { markId: mark.markId, start, end, foldedNodes: hidden.length, seq: event.seq };
      if (args.preview) detail.preview = args.preview;
      return detail;
    });
  },

  async expand(plugin, bridge, args, request) {
    const session = bridge.agent.session;
    const find = () => {
      for (const seq of session.surface.nodes) {
        const event = eventAt(session, seq);
        if (event?.type === "tool/result" && chainOf(session, event).has(args.seq)) return event;
      }
      return undefined;
    };
    let node = find();
    if (!node) throw new Rejected(`expand: seq ${args.seq} is not a tool result on the current surface`);
    if (!isReplacement(node)) throw new Rejected(`expand: the tool result at seq ${args.seq} is not folded or pruned`);
    bridge = await idleBridge(bridge, request);
    return maintain(bridge.plugin, bridge, () => {
      node = find();
      const original = node && originalOf(session, node);
      if (!node || !original || original.seq === node.seq)
        throw new Rejected(`expand: the tool result at seq ${args.seq} changed before it could be expanded`);
      const full = original.data.message.content[0].content;
      const current = node.data.message.content[0];
      if (JSON.stringify(current.content) === JSON.stringify(full))
        throw new Rejected(`expand: the tool result at seq ${args.seq} is already shown in full`);
      const message = { ...node.data.message, content: [{ ...current, content: full }] };
      const event = session.append(
        "tool/result",
        { ...node.data, message },
        { surfaceOp: { op: "replace", start: node.seq, end: node.seq }, sourceEventSeqs: [original.seq, node.seq].sort((a, b) => a - b) },
      );
      return { seq: event.seq, original: original.seq, replaced: node.seq };
    });
  },

  async "config.set"(plugin, bridge, args) {
    const { key, value } = args;
    const settings = plugin.ctx.get("settings");
    const live = (settings?.describe?.() ?? []).filter((d) => d.applies === "live");
    const supported = () =>
      `${SESSION_KEYS.join(", ")} (this session), or <namespace>.<key> of DSH's live settings` +
      (live.length ? ` (namespaces: ${live.map((d) => d.ns).join(", ")})` : "");
    if (SESSION_KEYS.includes(key)) {
      if (value !== null && typeof value !== "string")
        throw new Rejected(`config.set: ${key} must be a string or null (got ${shown(value)})`);
      const proposed = { ...bridge.overrides, [key]: value };
      const llm = plugin.ctx.get("llm");
      const header = bridge.agent.session.requestHeader?.()?.config;
      if (llm && header) {
        if (key === "model" && value !== null) {
          // DSH routes any model id; the bridge takes only those the provider lists, so a typo fails here.
          const listed = (await llm.listModels(header.provider).catch(() => [])).map((m) => m.id);
          if (listed.length && !listed.includes(value))
            throw new Rejected(
              `config.set model: DSH refused ${shown(value)}: provider ${header.provider} lists ${listed.join(", ")}`,
            );
        }
        const config = { provider: header.provider, model: proposed.model ?? header.model };
        const effort = proposed.reasoningEffort === undefined ? header.reasoningEffort : proposed.reasoningEffort;
        if (effort !== null && effort !== undefined) config.reasoningEffort = effort;
        try {
          await llm.resolveCallConfig(config);
        } catch (err) {
          throw new Rejected(`config.set ${key}: DSH refused ${shown(value)}: ${reasonOf(err)}`);
        }
      }
      bridge.overrides = proposed;
      return { key, value, applies: "next request of this session" };
    }
    const dot = key.indexOf(".");
    const ns = dot > 0 ? key.slice(0, dot) : undefined;
    const descriptor = live.find((d) => d.ns === ns);
    if (!descriptor) throw new Rejected(`config.set: DSH has no live setting ${shown(key)}; supported keys: ${supported()}`);
    const fieldPath = key.slice(dot + 1).split(".");
    const keys = descriptor.value && typeof descriptor.value === "object" ? Object.keys(descriptor.value) : [];
    if (fieldPath.some((p) => !p) || !keys.includes(fieldPath[0]))
      throw new Rejected(`config.set: the DSH setting namespace ${ns} has no key ${shown(fieldPath[0])}; its keys: ${keys.join(", ")}`);
    const op = value === null ? { op: "unset", path: fieldPath } : { op: "set", path: fieldPath, value };
    try {
      await settings.mutate(ns, [op]);
    } catch (err) {
      throw new Rejected(`config.set ${key}: DSH refused ${shown(value)}: ${reasonOf(err)}`);
    }
    return { key, value, applies: "DSH setting (live)" };
  },
};

// --- the plugin ---------------------------------------------------------------------------------------------------

class Bridge {
  constructor(ctx) {
    this.ctx = ctx;
    this.sessions = new Map();
    this.troubles = new Map(); // what is wrong now (a file, a session's poll): the warning logged for it
    this.disposed = false;
    this.disposedAt = undefined; // when DSH disposed it (`removed`)
    this.procStart = procStart(process.pid);
    this.bootId = bootId();
    this.pidNs = pidNamespace();
    this.machine = machineId();
    this.dsh = dshVersion();
  }

  // Logs `text`, what is wrong with `what`, once while it stays so (not at every poll); `text` undefined: it is
  // right again, and the next time it goes wrong is logged again (as tapedeck's host says its warnings).
  trouble(what, text) {
    if (text === undefined) this.troubles.delete(what);
    else if (this.troubles.get(what) !== text) {
      this.troubles.set(what, text);
      this.warn(text);
    }
  }

  warn(text) {
    try {
      this.ctx.logger?.warn?.(`tapedeck-bridge: ${text}`);
    } catch {
      // logging must never break the bridge
    }
  }

  sessionDir(agent) {
    const persistence = this.ctx.get("sessionPersistence");
    const located = persistence?.locate?.(agent.session.header);
    return located?.path ? path.dirname(located.path) : undefined;
  }

  track(agent) {
    if (this.disposed || this.sessions.has(agent.id)) return;
    let dir;
    try {
      dir = this.sessionDir(agent);
      this.trouble(`locate ${agent.id}`, undefined);
    } catch (err) {
      this.trouble(`locate ${agent.id}`, `cannot locate the session directory of ${quoted(agent.id)}: ${fsFailure(err)}`);
    }
    if (!dir) return;
    const session = new SessionBridge(this, agent, dir);
    this.sessions.set(agent.id, session);
    this.attach(session); // a resumed session's state (paused!) must hold before its first step
  }

  // Whether this instance is the one that answers (the newest live one in the process).
  answers() {
    return !this.disposed && current() === this;
  }

  attach(session) {
    if (!this.answers()) return false;
    if (!session.attached && attachHeld(this)) return false;
    try {
      return session.attached || session.attach(Date.now());
    } catch (err) {
      session.trouble("poll", `session ${session.agent.id}: ${err?.stack ?? err}`);
      return false;
    }
  }

  untrack(agent) {
    const bridge = this.sessions.get(agent.id);
    if (!bridge) return;
    bridge.gone = true;
    bridge.release();
    bridge.leaveStandby();
    if (this.answers()) bridge.writeBridge(Date.now(), true, true);
    this.sessions.delete(agent.id);
    const left = globalThis[LEAVING]?.get(agent.id); // this one never attached it: the session ends with its agent
    if (left && globalThis[LEAVING].delete(agent.id)) left.exit();
    globalThis[OVERRIDES]?.delete(agent.id);
    globalThis[BEGUN]?.delete(agent.id);
    globalThis[DISPATCHED]?.delete(agent.id);
    globalThis[IN_FLIGHT]?.delete(agent.id);
    globalThis[AWAITING]?.delete(agent.id);
  }

  // A newer instance took over: its held steps go to it, and this one stops answering.
  supersede() {
    for (const bridge of this.sessions.values()) {
      bridge.handOver();
      bridge.attached = false; // should it answer again, it reads the session's files afresh
    }
  }

  tick() {
    if (!this.answers()) return;
    const now = Date.now();
    for (const bridge of this.sessions.values()) {
      try {
        if (!this.attach(bridge)) continue;
        bridge.poll();
        bridge.settleIdle();
        bridge.writeBridge(now);
        bridge.trouble("poll", undefined);
      } catch (err) {
        bridge.trouble("poll", `session ${bridge.agent.id}: ${err?.stack ?? err}`);
      }
    }
  }

  // The /td handler: every op runs here, whether it came from the inbox or from a client's command line.
  async run(invocation) {
    const raw = Buffer.from(invocation.rawInput.trim(), "utf8");
    const entry = decodeLine(0, raw);
    const request = entry.request;
    const bridge = request ? await this.attachedFor(invocation, request.id) : this.sessions.get(invocation.agent.id);
    if (request && !bridge?.attached) {
      const waited = invocation.signal?.aborted
        ? "it was cancelled while it waited for the tapedeck bridge to attach this session"
        : `no instance of the tapedeck bridge attached this session within ${ATTACH_WAIT_MS / 1000} s`;
      const left = "the control inbox's line of this request, if it has one, runs once one attaches; give it again to run it here";
      return { kind: "error", text: JSON.stringify({ requestId: request.id, error: `${waited}, so this command applied nothing: ${left}` }) };
    }
    if (!bridge?.attached)
      return { kind: "error", text: JSON.stringify({ error: "this session has no bridge (its session directory is not known yet)" }) };
    if (!request) return { kind: "error", text: JSON.stringify({ error: entry.error ?? "not a control request" }) };
    // Refused before anything is applied: an id answered, whose td command the log holds (a DSH before this one
    // ran it), or whose run began in any instance of this process (a reload's new one knows neither the old one's
    // run nor, until it is written, its outcome), unless this is the run its op queue gave DSH. One run per request
    // id, whatever DSH or a client replays.
    const queued = bridge.begun.has(request.id) && bridge.dispatched.delete(request.id);
    if (bridge.final.has(request.id) || bridge.started.has(request.id) || (bridge.begun.has(request.id) && !queued))
      return { kind: "error", text: JSON.stringify({ requestId: request.id, error: "this request id already ran" }) };
    bridge.started.add(request.id);
    if (!queued && !entry.error) bridge.record(request); // given by hand: on record as the op queue's are
    else bridge.begun.add(request.id);
    let outcome;
    let detail;
    let error;
    try {
      if (entry.error) throw new Rejected(entry.error);
      while (HOLD_RUN_FILE && fs.existsSync(HOLD_RUN_FILE)) await sleep(POLL_MS);
      detail = await HANDLERS[request.op](bridge.plugin, bridge, request.args, request);
      outcome = "applied";
    } catch (err) {
      error = err instanceof Rejected ? err.message : `${request.op} failed: ${reasonOf(err)}`;
      outcome = "rejected";
    }
    const owner = settledBy(bridge); // a reload or an upgrade while the op waited for idle: the new instance answers
    const data = owner.claim(request, outcome, error, detail);
    // answered while it ran: a rewind or an expand that waited for idle, withdrawn meanwhile
    if (data === undefined) return { kind: "error", text: JSON.stringify({ requestId: request.id, error: "this request id was already answered" }) };
    owner.settle(data);
    return { kind: data.outcome === "applied" ? "success" : "error", text: JSON.stringify(data) };
  }

  // The session's bridge in the instance that answers, once that one has attached the session: a td command can reach
  // a reload's new instance before its poll attached it, and waits for the attach (up to ATTACH_WAIT_MS, or until
  // the command is cancelled) rather than being refused while its request is in the inbox, which would then never
  // run. Undefined when none attached it in that time.
  async attachedFor(invocation, id) {
    const agentId = invocation.agent.id;
    const awaiting = perSession(AWAITING, agentId, () => new Map());
    awaiting.set(invocation.commandId, id);
    try {
      const deadline = Date.now() + ATTACH_WAIT_MS;
      for (;;) {
        const bridge = current()?.sessions.get(agentId);
        if (bridge?.attached) return bridge;
        if (invocation.signal?.aborted || Date.now() >= deadline) return undefined;
        await sleep(POLL_MS);
      }
    } finally {
      awaiting.delete(invocation.commandId);
    }
  }

  dispose() {
    const answered = this.answers();
    this.disposed = true;
    this.disposedAt = Date.now();
    const live = globalThis[LIVE] ?? [];
    live.splice(live.indexOf(this), 1);
    // with a successor live, that one writes bridge.json; without, DSH exits, or a reload makes one next
    const ending = live.length === 0 && appEnding(this.ctx);
    const now = Date.now();
    for (const bridge of this.sessions.values()) {
      if (ending) bridge.writeBridge(now, true, true);
      else if (live.length === 0) bridge.leave(now); // before its held steps go: the state it writes is still theirs
      bridge.handOver();
    }
    this.sessions.clear();
    if (live.length === 0 && !ending) {
      setTimeout(settleExits, RELOAD_GRACE_MS).unref?.();
      if (!globalThis[EXIT_HOOK]) {
        globalThis[EXIT_HOOK] = true;
        process.once("exit", () => settleExits(true));
      }
    }
    if (answered) current()?.tick(); // an older instance still alive answers again (it re-reads the files)
  }
}

export function apply(ctx) {
  const bridge = new Bridge(ctx);
  const live = (globalThis[LIVE] ??= []);
  const previous = live.at(-1);
  live.push(bridge);
  previous?.supersede();
  ctx.effect(function* () {
    yield ctx.commands.register({
      name: COMMAND,
      description: "Run one tapedeck control request (JSON) on this session",
      input: { hint: '{"id":"…","op":"pause","args":{}}' },
      handler: (invocation) => (current() ?? bridge).run(invocation),
    });
    const timer = setInterval(() => bridge.tick(), POLL_MS);
    yield () => clearInterval(timer);
    yield () => bridge.dispose();
  }, "tapedeck-bridge lifecycle");

  ctx.on("agent/created", ({ agent }) => bridge.track(agent));
  ctx.on("agent/disposed", ({ agent }) => bridge.untrack(agent));
  ctx.on("agent/status", ({ agent }) => {
    const b = bridge.answers() ? bridge.sessions.get(agent.id) : undefined;
    b?.settleIdle();
    b?.writeBridge(Date.now(), true);
  });
  ctx.on("session/event", (session, event) => {
    const b = bridge.sessions.get(session.id); // every instance follows steps, so a successor knows the state
    if (!b) return;
    if (event.type === "step/start") b.inStep = true;
    else if (event.type === "step/end" || event.type === "turn/end") b.inStep = false;
  });
  ctx.on(
    "agent/pre-step",
    async (payload, next) => {
      const gate = async () => {
        if (!bridge.answers()) return;
        const b = bridge.sessions.get(payload.agent.id);
        if (b) bridge.attach(b);
        if (!b?.paused || payload.signal?.aborted) return;
        await b.flush(); // what the step before the pause wrote reaches the log while the gate holds
        await b.hold(payload.signal);
      };
      await gate();
      const decision = await next();
      await gate(); // a pause that arrived while the inner listeners ran (they await I/O) still holds this step
      return decision;
    },
    true,
  );
  ctx.on(
    "agent/request",
    async (payload, next) => {
      const config = await next();
      const overrides = bridge.answers() ? bridge.sessions.get(payload.agent.id)?.overrides : undefined;
      if (!overrides || Object.keys(overrides).length === 0) return config;
      const out = { ...config };
      for (const [key, value] of Object.entries(overrides)) {
        if (value === null) delete out[key];
        else out[key] = value;
      }
      return out;
    },
    true,
  );
  for (const agent of ctx.agents.list()) bridge.track(agent);
}
