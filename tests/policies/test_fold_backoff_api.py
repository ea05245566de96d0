"""The public backoff API: ``resource_backoff`` and ``FoldRow.backoff`` report the §1.g ledger per resource.

Spec rule (seed 000 §1.g): a resource backs off once ``backoffAfterExpansions`` distinct folded results of it
were expanded in full and those expansions cover at least half of its folds; ``grep``/``lines`` expansions,
repeats of the same result and operator unfolds do not count.
"""

from __future__ import annotations

from typing import Any

from test_fold_support import BIG, BackoffRun

from core.policies.fold import (
    BACKED_OFF,
    FOLD,
    FOLDED,
    ResourceBackoff,
    backoff_scope,
    plan_unfold,
    preview_fold,
    resource_backoff,
)
from core.policies.slice_config import SliceConfig, validate

DEFAULT = SliceConfig()
A = backoff_scope("read", {"file_path": "a.md"})
B = backoff_scope("read", {"file_path": "b.md"})


class Run(BackoffRun):
    """A backoff run that also reads the public ledger."""

    def read(self, path: str, **args: Any) -> int:
        return super().read(path, offset=self.n, **args)

    def ledger(self) -> dict[str, ResourceBackoff]:
        return resource_backoff(self.log.session(), self.config)

    def rows(self) -> list[Any]:
        return preview_fold(self.log.session(), self.config)

    def counts(self, scope: str) -> tuple[int, int, bool]:
        state = self.ledger()[scope]
        return state.folds, state.expansions, state.backed_off


def test_folds_and_full_expansions_are_counted_per_resource() -> None:
    run = Run()
    run.read("a.md")
    run.read("a.md")
    run.read("b.md")
    assert run.counts(A) == (2, 0, False)
    assert run.counts(B) == (1, 0, False)
    run.expand(turn=1, step=1, call=1)
    assert run.counts(A) == (2, 1, False)
    assert run.ledger()[A].expansions_to_backoff == 1
    assert run.counts(B) == (1, 0, False)
    assert list(run.ledger()) == [A, B]  # first-fold order; the expand_result results were never folded


def test_partial_and_repeated_expansions_do_not_count() -> None:
    run = Run()
    run.read("a.md")
    second = run.read("a.md")
    run.expand(turn=1, step=1, call=1, grep="row 5")
    run.expand(turn=1, step=2, call=1, lines="1-20")
    assert run.counts(A) == (2, 0, False)
    run.expand(turn=1, step=1, call=1)
    run.expand(turn=1, step=1, call=1)  # the same result again
    run.expand(seq=second, formatVersion=3)  # not a version-4 locator
    assert run.counts(A) == (2, 1, False)


def test_backoff_after_the_threshold_of_full_expansions() -> None:
    run = Run()
    run.read("a.md")
    run.read("a.md")
    run.expand(turn=1, step=1, call=1)
    run.expand(turn=1, step=2, call=1)
    assert run.counts(A) == (2, 2, True)
    assert run.ledger()[A].expansions_to_backoff == 0
    third = run.read("a.md")
    assert run.counts(A) == (2, 2, True)  # a backed-off resource is not folded again
    row = next(r for r in run.rows() if r.original == third)
    assert row.status == BACKED_OFF
    assert row.backoff == run.ledger()[A]


def test_expansions_must_cover_half_of_the_folds() -> None:
    run = Run(validate({"fold": {"backoffAfterExpansions": 2}}))
    for _ in range(5):
        run.read("a.md")
    run.expand(turn=1, step=1, call=1)
    run.expand(turn=1, step=2, call=1)
    assert run.counts(A) == (5, 2, False)  # 2 of 5: over the threshold, under half
    assert run.ledger()[A].expansions_to_backoff == 1
    run.expand(turn=1, step=3, call=1)
    assert run.counts(A) == (5, 3, True)


def test_the_threshold_comes_from_the_config() -> None:
    run = Run(validate({"fold": {"backoffAfterExpansions": 1}}))
    run.read("a.md")
    assert run.ledger()[A].after == 1 and run.ledger()[A].expansions_to_backoff == 1
    run.expand(turn=1, step=1, call=1)
    assert run.counts(A) == (1, 1, True)
    assert Run().ledger() == {}


def test_operator_unfolds_are_not_model_expansions() -> None:
    run = Run()
    first = run.read("a.md")
    run.read("a.md")
    run.log.extend(plan_unfold(run.log.session(), first))
    assert run.counts(A) == (2, 0, False)


def test_every_row_carries_its_resource_state() -> None:
    run = Run()
    run.read("a.md")
    run.read("a.md")
    run.expand(turn=1, step=1, call=1)
    small = run.step(("bash", {"command": "true"}, "ok"))
    b_read = run.read("b.md")
    run.n += 1
    (unfolded,) = run.log.step(1, run.n, [("read", {"file_path": "c.md"}, BIG)])  # no pre-step fold yet
    rows = {r.original: r for r in run.rows()}
    ledger = run.ledger()
    for row in rows.values():
        assert row.backoff is not None
        assert row.backoff == ledger.get(
            row.backoff.scope, ResourceBackoff(row.backoff.scope, 0, 0, False, 2)
        )
    folded = [r for r in rows.values() if r.status == FOLDED]
    assert {r.backoff.scope for r in folded} == {A, B}  # type: ignore[union-attr]
    assert all(r.backoff.folds == 2 and r.backoff.expansions == 1 for r in folded if r.backoff.scope == A)  # type: ignore[union-attr]
    assert rows[small[0]].backoff == ResourceBackoff(
        backoff_scope("bash", {"command": "true"}), 0, 0, False, 2
    )
    assert rows[b_read].backoff.folds == 1  # type: ignore[union-attr]
    assert rows[unfolded].status == FOLD and rows[unfolded].backoff.folds == 0  # type: ignore[union-attr]


def test_to_dict_forms() -> None:
    state = ResourceBackoff(A, 3, 1, False, 2)
    assert state.to_dict() == {
        "scope": A,
        "folds": 3,
        "expansions": 1,
        "backedOff": False,
        "backoffAfterExpansions": 2,
    }
    assert state.expansions_to_backoff == 1
    run = Run()
    run.read("a.md")
    (row,) = [r for r in run.rows() if r.status == FOLDED]
    assert "backoff" not in row.to_dict()  # the CLI row format is unchanged
