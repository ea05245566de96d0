"""The spill arm: which fresh results it digests, the logged header, and the hint splice at the next fold."""

from __future__ import annotations

import math
from typing import Any

from test_fold_support import BIG, CODE, Log, view_text

from core.policies.digest import Digest
from core.policies.fold import plan_fold, render_spill_view, spill_digest
from core.policies.slice_config import SliceConfig, validate
from core.policies.spill import StoredText, fold_spill_locator

DEFAULT = SliceConfig()
HUGE = "\n".join([BIG] * 10)  # about 54 KB


def empty() -> Log:
    log = Log()
    log.turn(1)
    return log


def spill(log: Log, config: SliceConfig = DEFAULT, **kw: Any) -> Digest | None:
    args = {"tool": "bash", "arguments": '{"command": "cat big.csv"}', "text": HUGE, "step": 1, **kw}
    return spill_digest(log.session(), config, **args)


def test_a_huge_command_result_is_digested_for_the_spill_arm() -> None:
    digest = spill(empty())
    assert digest is not None and digest.digested and digest.kind == "data"


def test_the_arm_skips_what_it_must() -> None:
    log = empty()
    assert spill(log, tool="read") is None and spill(log, tool="read_file") is None
    assert spill(log, tool="expand_result") is None
    assert spill(log, nested=True) is None
    assert spill(log, is_error=True) is None
    assert spill(log, text=BIG) is None  # under 50 000 bytes
    assert spill(log, text="\n".join([CODE] * 30)) is None  # code never digests
    assert spill(log, validate({"fold": {"spillPreviewMinBytes": 0}})) is None
    assert spill(log, validate({"fold": {"enabled": False}})) is None
    assert spill(log, validate({"fold": {"pinSteps": 1, "pinMaxChars": math.inf}})) is None
    assert spill(log, validate({"fold": {"pinSteps": 1, "pinMaxChars": math.inf}}), step=2) is not None


def test_the_threshold_counts_utf8_bytes() -> None:
    text = "\n".join(f"row {i} {'é' * 20}" for i in range(1200))
    assert len(text) < 50000 <= len(text.encode())
    assert spill(empty(), text=text) is not None


def test_a_backed_off_resource_is_not_spilled() -> None:
    log = empty()
    bash = ("bash", {"command": "cat big.csv"}, BIG)
    for step in (1, 2):
        log.step(1, step, [bash])
        log.fold()
    for step, target in ((3, 1), (4, 2)):
        log.step(
            1, step, [("expand_result", {"turn": 1, "step": target, "call": 1}, "[full result]\n" + BIG)]
        )
    assert spill(log, arguments={"command": "cat big.csv"}) is None
    assert spill(log, arguments={"command": "cat other.csv"}) is not None


def test_spill_header_format_and_parse_back() -> None:
    digest = spill(empty())
    assert digest is not None
    text = render_spill_view(
        "bash", None, digest, 54321, "/tmp/spill/ab12-bash.txt", "read it with offset/limit"
    )
    assert text is not None
    header, _, body = text.partition("\n")
    assert header == (
        f"[bash · data · {digest.total_lines} lines, {digest.kept_lines} kept · "
        "full text (54321 bytes) stored at /tmp/spill/ab12-bash.txt — read it with offset/limit]"
    )
    assert body == digest.text
    with_path = render_spill_view("grep", "src", digest, 1, "/x", "hint")
    assert with_path is not None and with_path.startswith("[grep src · data ·")
    assert render_spill_view("bash", None, digest, 1, "/odd — name", "hint") is None
    # a path that breaks the line (the model's) is escaped, so the header stays one line and parses back
    broken = render_spill_view("read_log", "a\nb\u2029c", digest, 7, "/x", "hint")
    assert broken is not None and broken.startswith("[read_log a\\nb\\u2029c · data ·"), broken
    assert fold_spill_locator(broken) == StoredText("/x", 7)


def test_the_next_fold_splices_the_expand_hint_into_a_spilled_view() -> None:
    log = empty()
    digest = spill(log)
    assert digest is not None
    text = render_spill_view("bash", None, digest, 54321, "/tmp/s/1-bash.txt", "grep it")
    assert text is not None
    (seq,) = log.step(1, 1, [("bash", {"command": "cat big.csv"}, text)])
    (event,) = log.fold()
    header, _, body = view_text(event).partition("\n")
    assert header == (
        f"[bash · data · {digest.total_lines} lines, {digest.kept_lines} kept · "
        "full text (54321 bytes) stored at /tmp/s/1-bash.txt — grep it · "
        f'expand_result({{"turn": 1, "step": 1, "call": 1}}) or expand_result({{"seq": {seq}, "formatVersion": 4}}) '
        "returns the full text]"
    )
    assert body == digest.text
    assert event["data"]["meta"]["digest"] == "spill"
    assert plan_fold(log.session(), DEFAULT) == []
