"""``cost``'s totals (``core.rebuild.cost._sum``) are the numbers the six-pass version gave: in particular the
dollar total is what the builtin ``sum`` of the priced rows gives, on every supported Python (3.12 made ``sum``
of floats compensated, so a ``+=`` loop parts from it in the last digits, and ``cost --json`` prints them all)."""

from __future__ import annotations

from core.rebuild.cost import RequestCost, _sum


def _row(seq: int, usd: float | None) -> RequestCost:
    return RequestCost(0, seq, 0, seq, "agent", "m", None, 10, 1, usd, 100, None)


def test_the_dollar_total_is_the_builtin_sum_of_the_priced_rows() -> None:
    prices = [0.1, 0.2, 0.3, None, 1e-7, 0.7]
    rows = [_row(seq, usd) for seq, usd in enumerate(prices)]
    priced = [usd for usd in prices if usd is not None]
    assert _sum(rows)["usd"] == sum(priced)  # 3.12+: 1.3000001 (the loop) != 1.3000000999999999
    assert _sum(iter(rows))["requests"] == len(rows)


def test_no_priced_row_gives_no_dollar_total() -> None:
    assert _sum([_row(0, None)])["usd"] is None
    assert _sum([])["usd"] is None
