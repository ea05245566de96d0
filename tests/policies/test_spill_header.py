"""A fold spill header (``[… · full text (B bytes) stored at <locator> — …]``) is read by one parser, in time linear
in the line: the first line of a result is what the tool printed, so a crafted one must not stall the host's fold
pass, ``recall_step`` or ``expand_result``."""

from __future__ import annotations

import re
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from core.policies.spill import StoredText, fold_spill_locator

# the header's grammar as Python's re reads it: the reference the RE2 pattern must agree with
REFERENCE = re.compile(r"\[.* · full text \((\d+) bytes\) stored at (.+?) — .*\]", re.ASCII)
PIECES = st.sampled_from(["[", "]", " · full text (", " bytes) stored at ", " — ", "(", ")", " ", "·", "—", "12",
                          "٣", "x", "päth/ü.txt", "\t"])  # fmt: skip


@given(st.lists(PIECES, max_size=14).map("".join), st.sampled_from(["", "\nmore", "\n[a · full text (1 bytes) stored at b — c]"]))
def test_the_header_reads_as_the_reference_grammar_says(line: str, rest: str) -> None:
    match = REFERENCE.fullmatch(line)
    expected = StoredText(match.group(2), int(match.group(1))) if match else None
    assert fold_spill_locator(line + rest) == expected


def test_a_crafted_first_line_is_read_in_linear_time() -> None:
    """A 150 KB line of repeated header pieces that never closes, then one that does: under Python's re, its
    nested wildcards took 5 s on 37 KB and 50 s on 74 KB (growing as the cube of the length); run in a process of
    its own, as backtracking never lets go of the interpreter."""
    code = (
        "from core.policies.spill import fold_spill_locator as f\n"
        "line = '[' + ' · full text (1 bytes) stored at a — ' * 4000\n"
        "print(f(line), f(line + ']'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "None StoredText(locator='a', size=1)\n"), done.stderr
