"""What a check returns: findings whose evidence is apart from their interpretation, and coverage.

``Evidence.text`` is rendered from ``Evidence.values`` and nothing else, so every number a user reads in it
is a measured value (a test checks this for every rule). ``Finding.message`` is the interpretation, worded
as what the measurement may mean. These types sit in the core because every layer above the rules (the
judge, the outputs, the language server, the callbacks) reads them, and none of those may import a rule.
"""

from __future__ import annotations

import math
import string
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from .model import Location
from .values import fmt_step, fmt_value

if TYPE_CHECKING:
    from typing import Any


class Level(StrEnum):
    FAIL = "FAIL"
    WARN = "WARN"
    INFO = "INFO"
    NOT_CHECKED = "NOT-CHECKED"
    PASS = "PASS"


class Skip(StrEnum):
    NO_SERIES = "no-series"
    TOO_FEW = "too-few-points"
    DEGENERATE = "degenerate"
    NOT_APPLICABLE = "not-applicable"
    WAIVED = "waived"
    DISABLED = "disabled"
    UNREADABLE = "unreadable"
    TOO_EARLY = "too-early"
    TOO_LARGE = "too-large"


class Step(float):
    """A step number in evidence values: rendered as a step (``1200``), not as a measurement."""


class Ratio(float):
    """A ratio in evidence values: rendered with 3 significant digits (``1.17``)."""


def _fmt(v: Any) -> str:
    if isinstance(v, Step):
        return fmt_step(float(v))
    if isinstance(v, Ratio):
        if not math.isfinite(v):
            return fmt_value(float(v))
        if abs(v) >= 1e6:
            return f"{float(v):.3g}"
        return f"{float(v):.0f}" if abs(v) >= 1000 else f"{float(v):.3g}"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return fmt_value(v)
    return str(v)


@dataclass
class Evidence:
    """The measurement. ``text`` is ``template`` filled from ``values`` only."""

    values: dict[str, Any]
    template: str

    @property
    def text(self) -> str:
        fields_ = {name for _, name, _, _ in string.Formatter().parse(self.template) if name}
        return self.template.format(**{k: _fmt(self.values[k]) for k in fields_})


@dataclass
class Related:
    role: str
    location: Location
    message: str


@dataclass
class Finding:
    id: str
    level: Level
    message: str
    evidence: Evidence
    location: Location
    series: str | None = None          # the label of the series judged
    series_key: str | None = None
    related: list[Related] = field(default_factory=list)
    marks: dict[int, str] = field(default_factory=dict)  # point index -> role, for sparklines


@dataclass
class SkipReason:
    reason: Skip
    detail: str


@dataclass
class Measurement:
    """What a check measured on one series, fired or not (shown for every judged series)."""

    check: str
    series: str
    values: dict[str, Any]
    text: str


@dataclass
class CheckResult:
    findings: list[Finding] = field(default_factory=list)
    # series label -> None when it ran, or the reason it was skipped on that series
    coverage: dict[str, SkipReason | None] = field(default_factory=dict)
    measurements: list[Measurement] = field(default_factory=list)
    skipped: SkipReason | None = None  # the whole check, when there was nothing to judge


@dataclass(frozen=True)
class Rule:
    id: str
    level: Level
    check: str
    title: str
