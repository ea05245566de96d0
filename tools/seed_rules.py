"""Count the seed-rule audit (``tests/policies/seed_rules.py``): rules per seed, exact and different.

    python tools/seed_rules.py          # JSON, then a table
    python tools/seed_rules.py --list   # also every rule that is not exact

The verdicts are held by ``tests/policies/test_seed_rules.py``; this only reports them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.policies.seed_rules import RULES  # noqa: E402 - needs the repository on the path


def counts() -> dict[str, object]:
    """Totals and per-seed counts of exact and different rules."""
    seeds: dict[str, Counter[str]] = {}
    for rule in RULES:
        kind = "exact" if rule.verdict == "exact" else "different"
        seeds.setdefault(rule.seed, Counter())[kind] += 1
    differences = sorted({r.verdict.removeprefix("different: ") for r in RULES if r.verdict != "exact"},
                         key=lambda d: int(d[1:]))  # fmt: skip
    exact = sum(c["exact"] for c in seeds.values())
    return {
        "rules": len(RULES),
        "exact": exact,
        "different": len(RULES) - exact,
        "differences": differences,
        "bySeed": {seed: {"exact": c["exact"], "different": c["different"]} for seed, c in sorted(seeds.items())},
    }


def main() -> int:
    """Print the counts as JSON and as a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="list every rule that is not exact")
    args = parser.parse_args()
    result = counts()
    print(json.dumps(result, indent=2))
    print()
    print("| seed | rules | exact | different |")
    print("|---|---|---|---|")
    for seed, c in result["bySeed"].items():  # type: ignore[union-attr]
        print(f"| {seed} | {c['exact'] + c['different']} | {c['exact']} | {c['different']} |")
    print(f"| all | {result['rules']} | {result['exact']} | {result['different']} |")
    if args.list:
        print()
        for rule in RULES:
            if rule.verdict != "exact":
                print(f"{rule.id} ({rule.verdict}): {rule.rule}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
