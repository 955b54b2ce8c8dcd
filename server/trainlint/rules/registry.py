"""The rule registry: every check registers itself with the decorator ``@check``, and every rule object a rule
module defines is found there.

Why a registry: a check used to be a positional entry in a hand-ordered tuple (each entry commented with what
its index held) and its name was typed three times; adding one broke an unrelated test. Now a check is one
decorated function: its name, the rules it can emit, where it runs in the order (``order``: smaller first;
findings and measurements appear in that order) and its phase (``LOG``: a pure function of the log; ``AFTER``:
it reads the findings and measurements the ``LOG`` checks made, so it runs after all of them). The order
numbers are spaced by 10 so that a new check goes between two without renumbering.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from ..core.findings import CheckResult, Finding, Measurement, Rule
from .thresholds import Thresholds

if TYPE_CHECKING:
    from .base import Context


class Phase(StrEnum):
    LOG = "log"        # reads the log (and the run's facts): run(ctx) -> CheckResult
    AFTER = "after"    # reads the other checks' results: run(ctx, findings, measurements) -> list[Finding]
    COMPARE = "compare"  # a run against a baseline: run(run_report, baseline_report, thresholds) -> list[Finding]


@dataclass(frozen=True)
class Check:
    name: str
    rules: tuple[Rule, ...]
    run: Callable[..., CheckResult | list[Finding]]
    description: str
    order: int = 0
    phase: Phase = Phase.LOG
    #: the thresholds (rules/thresholds.py field names) each rule reads, for its docs page and for reviewers
    thresholds: dict[str, tuple[str, ...]] | None = None
    #: where a rule's finding can take another level than its own (its docs page says so)
    level_notes: dict[str, str] | None = None

    def thresholds_of(self, rule_id: str) -> tuple[str, ...]:
        return (self.thresholds or {}).get(rule_id, ())


_CHECKS: dict[str, Check] = {}


def check(name: str, *rules: Rule, order: int, description: str, phase: Phase = Phase.LOG,
          thresholds: tuple[str, ...] | dict[str, tuple[str, ...]] = (), level_notes: dict[str, str] | None = None
          ) -> Callable[[Callable[..., object]], Callable[..., object]]:
    """Register the decorated function as the check ``name``, which emits ``rules``; ``thresholds`` are the
    fields of ``Thresholds`` it reads (for every rule, or per rule ID)."""
    per_rule = thresholds if isinstance(thresholds, dict) else {r.id: tuple(thresholds) for r in rules}
    named = [t for ts in thresholds.values() for t in ts] if isinstance(thresholds, dict) else list(thresholds)
    unknown = set(named) - set(Thresholds.__dataclass_fields__)
    if unknown:
        raise ValueError(f"check {name!r} names unknown thresholds {sorted(unknown)}")
    def register(fn: Callable[..., object]) -> Callable[..., object]:
        if name in _CHECKS:
            raise ValueError(f"check {name!r} is registered twice ({_CHECKS[name].run.__module__} and "
                             f"{fn.__module__})")
        for r in rules:
            if r.check != name:
                raise ValueError(f"rule {r.id} names check {r.check!r}, registered under {name!r}")
        _CHECKS[name] = Check(name, tuple(rules), fn, description, order, phase,  # type: ignore[arg-type]
                              per_rule, level_notes)
        return fn
    return register


_DESCRIBED: dict[str, dict[str, object]] = {}


def describe(*rules: Rule, command: str, thresholds: dict[str, tuple[str, ...]] | None = None) -> None:
    """Rules that no registered check emits (those of another command, such as ``preflight``): what their docs
    pages say about where they run and what they read."""
    for r in rules:
        _DESCRIBED[r.id] = {"command": command, "thresholds": (thresholds or {}).get(r.id, ())}


def described() -> dict[str, dict[str, object]]:
    return dict(_DESCRIBED)


def checks(phase: Phase = Phase.LOG) -> tuple[Check, ...]:
    """The registered checks of ``phase`` in the order they run."""
    return tuple(sorted((c for c in _CHECKS.values() if c.phase == phase), key=lambda c: (c.order, c.name)))


def after_findings(c: Check, ctx: Context, findings: list[Finding],
                   measurements: list[Measurement]) -> list[Finding]:
    """Run an ``AFTER`` check."""
    out = c.run(ctx, findings, measurements)
    assert isinstance(out, list)
    return out
