"""What redaction's questions about the command a match is in cost: one long command line of key words against
the same words one command a line.

    python bench/redact.py [--kb 100] [--repeat 3] [--json]

Some judges of ``core.export.redact`` ask which command a match is in (a search tool's pattern, the program an
``ssh-keygen -N``/``mysqladmin password`` option is given to). Each such question looked up to ``COMMAND_REACH``
bytes back for the command's start and searched that command again, so a line of many key words had each of its
bytes searched some 170 times. For each text it reports the best CPU time of ``Redactor.text`` over ``--repeat``
runs (steadier than wall time on a shared machine) and, in one more run, how many bytes the redactor's searches
went over per byte of the text (every ``find``, ``rfind`` and ``count`` of the text's bytes, and every search of the
module's patterns, to the match it stops at, as ``tests/export/test_redact.py`` counts them); and the ratio of the
two texts' times, the second text (short commands) the baseline measured in the same run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pytest  # noqa: E402

from bench._common import best_of, counts, emit, markdown_table, positive  # noqa: E402
from core.export.redact import Redactor  # noqa: E402
from tests.export.test_redact import _counted_text  # noqa: E402

# a unit of key words whose judges ask for the command they are in: ``ssh-keygen``'s ``-N``, a search tool's pattern
# (``api_key: …`` unquoted after a blank) and ``mysqladmin``'s ``password``
UNIT = "ssh-keygen -N Hunter2pw -f k api_key: Sup3rSecret9 mysqladmin -u root password Abc123xyz x "


def _searched(text: str) -> int:
    """The bytes redacting ``text`` searches, counted as ``tests/export/test_redact.py`` counts them: each ``find``,
    ``rfind`` and ``count`` of its bytes and each search of the module's patterns, to the match it stops at."""
    with pytest.MonkeyPatch.context() as patch:
        counted = _counted_text(patch, text, 10**6)
        Redactor(environ={}, home="/home/ann").text(counted)
        return counted.encode().bound.count  # type: ignore[attr-defined]  # (a new count each encode: the same bound)


def measure(text: str, repeat: int) -> dict[str, Any]:
    """The best time to redact ``text``, the bytes that searched per byte of it, and the secrets it replaced."""
    redactor = Redactor(environ={}, home="/home/ann")
    seconds, out = best_of(lambda: redactor.text(text), repeat, clock=time.process_time)
    return {
        "bytes": len(text), "seconds": round(seconds, 4), "searchedPerByte": round(_searched(text) / len(text), 2),
        "redacted": out.count("[redacted key]"),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    """Measure both texts and print the JSON, then the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kb", type=positive, default=100, help="size of each text, in KB (default 100)")
    parser.add_argument("--repeat", type=counts(1), default=3, help="timed runs of each, best kept (default 3)")
    parser.add_argument("--json", action="store_true", help="print the JSON alone")
    args = parser.parse_args(argv)
    units = max(1, int(args.kb * 1000 / len(UNIT)))
    line = measure(UNIT * units, args.repeat)
    lines = measure((UNIT.rstrip() + "\n") * units, args.repeat)
    result = {
        "kb": args.kb,
        "longLine": line,
        "oneALine": lines,
        "ratio": round(line["seconds"] / lines["seconds"], 2),
    }
    rows = [[name, f"{r['bytes']:,}", f"{r['seconds']:.3f}", r["searchedPerByte"], r["redacted"]]
            for name, r in (("one long line", line), ("one command a line", lines))]  # fmt: skip
    table = markdown_table(["text", "bytes", "CPU seconds (best)", "bytes searched / byte", "replaced"], rows)
    emit(result, table + f"\n\nratio long line / one a line: {result['ratio']}", args.json)


if __name__ == "__main__":
    main()
