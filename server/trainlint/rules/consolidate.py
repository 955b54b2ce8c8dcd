"""One problem, one finding: findings that describe the same fault of the same quantity are folded into the
one that names it best, their evidence appended to its own ("also TP-DEAD-RUN: ...").

Three cases, in this order:

1. A rule that explains others names them (``FOLDS``): TL-NAN-HIDDEN explains the non-finite gradient norms
   (TP-NAN-GRAD) and the zeros HF logs in place of a NaN loss (TP-ZERO-LOSS-ONSET) of the same run.
2. The same quantity printed under two names (``loss`` and ``train loss`` on one line, with the same values
   at the same steps): one finding per rule, on the series with the plainer name; the other is a related
   location.
3. Several rules on one series and one line (TP-DIVERGE and TP-DEAD-RUN both at the end of a loss that rose):
   the worst level, then the rule earlier in ``PREFERENCE``, keeps the line; the others are its evidence.

So no series and line carries two FAIL/WARN findings (a test over the corpus and gallery asserts it).
"""

from __future__ import annotations

import math
import string
from typing import TYPE_CHECKING

from ..core.model import LogFile, Series
from ..core.roles import is_plain_loss
from .base import Finding, Level, Related

if TYPE_CHECKING:
    from typing import Any

#: the rule that names a fault best comes first: a cause before its symptoms, a specific shape before a generic one
PREFERENCE = ("TL-NAN-HIDDEN", "TP-NAN", "TP-NAN-GRAD", "TP-ZERO-LOSS", "TP-ZERO-LOSS-ONSET", "TP-ZERO-GRAD",
              "TL-ZERO-GRAD-ONSET", "TP-ZERO-LR", "TP-FLAT", "TP-DIVERGE", "TP-OVERFIT", "TL-HELDOUT-RISE",
              "TP-DEAD-RUN",
              "TP-GRAD-SPIKE")
#: findings about the log or the run, not about the values of the series they are placed on
RUN_LEVEL = ("TL-LOG-PREFIX", "TL-RUN-INCOMPLETE", "TL-RESUME", "TL-DUPLICATE-STEPS", "TL-EVENTS-TRUNCATED",
             "TL-CKPT-MISSING", "TL-CKPT-CORRUPT", "TL-CKPT-TRUNCATED", "TL-SERIES-DISAGREE")
#: rule -> rules whose findings on the same run it explains
FOLDS = {"TL-NAN-HIDDEN": ("TP-NAN-GRAD", "TP-ZERO-LOSS-ONSET")}
_SEVERE = (Level.FAIL, Level.WARN)
_ORDER = {Level.FAIL: 0, Level.WARN: 1}


def _rank(f: Finding) -> tuple[int, int]:
    pref = PREFERENCE.index(f.id) if f.id in PREFERENCE else len(PREFERENCE)
    return _ORDER.get(f.level, 2), pref


def fold(into: Finding, other: Finding) -> None:
    """Append ``other``'s evidence to ``into``'s (its fields renamed, so every number stays a measured value)."""
    ev = into.evidence
    n = int(ev.values.get("folded", 0)) if isinstance(ev.values.get("folded"), int) else 0
    prefix = f"also{n}_"
    parts: list[str] = []
    template = other.evidence.template
    if other.series == into.series and template.startswith("{series}: "):
        template = template[len("{series}: "):]
    for literal, name, spec, conv in string.Formatter().parse(template):
        parts.append(literal.replace("{", "{{").replace("}", "}}"))
        if name is not None:
            parts.append("{" + prefix + name + (f"!{conv}" if conv else "") + (f":{spec}" if spec else "") + "}")
            ev.values[prefix + name] = other.evidence.values[name]
    ev.template += f"; also {other.id} ({other.level.value.lower()}): " + "".join(parts)
    ev.values["folded"] = n + 1
    rules = ev.values.get("folded_rules")
    ev.values["folded_rules"] = f"{rules}, {other.id}" if isinstance(rules, str) else other.id
    if other.location != into.location:
        into.related.append(Related(f"folded-{other.id}", other.location, f"{other.id}: {other.evidence.text}"))
    into.related.extend(r for r in other.related if r not in into.related)
    for k, v in other.marks.items():
        into.marks.setdefault(k, v)


def _same_values(a: Series, b: Series) -> bool:
    """``a`` and ``b`` hold the same quantity: the same values (to printing precision) at nearly every step both
    logged, over most of the shorter one."""
    if a.role != b.role or not len(a) or not len(b):
        return False
    at = {x: v for x, v in zip(b.steps, b.values, strict=True)}
    common = same = 0
    for x, v in zip(a.steps, a.values, strict=True):
        w = at.get(x)
        if w is None:
            continue
        common += 1
        if v == w or (math.isfinite(v) and math.isfinite(w) and math.isclose(v, w, rel_tol=1e-3)) or (
                v != v and w != w):
            same += 1
    return common >= 5 and common >= 0.8 * min(len(a), len(b)) and same >= 0.95 * common


def _name_rank(s: Series) -> tuple[int, int, int]:
    return (0 if is_plain_loss(s.name) else 1, len(s.name), -len(s))


def consolidate(findings: list[Finding], log: LogFile) -> list[Finding]:
    """The findings with each problem reported once (FAIL/WARN findings only are folded)."""
    out = list(findings)
    # 1. a rule that explains others
    for f in [f for f in out if f.id in FOLDS and f.level in _SEVERE]:
        series = {f.series_key} | {str(v) for k, v in f.evidence.values.items() if k == "grad_series_key"}
        for g in [g for g in out if g is not f and g.id in FOLDS[f.id] and g.level in _SEVERE]:
            if g.series_key in series or g.series_key == f.series_key or _explained(f, g, log):
                fold(f, g)
                out.remove(g)
    # 2. the same quantity under two names: per rule, findings on series holding the same values
    by_rule: dict[str, list[Finding]] = {}
    for f in out:
        if f.level in _SEVERE and f.series_key:
            by_rule.setdefault(f.id, []).append(f)
    for group in by_rule.values():
        if len(group) < 2:
            continue
        series = {f.series_key: log.series.get(f.series_key or "") for f in group}
        group.sort(key=lambda f: _name_rank(series[f.series_key]) if series[f.series_key] is not None else (9, 0, 0))
        kept: list[Finding] = []
        for f in group:
            s = series[f.series_key]
            twin = next((k for k in kept if s is not None and series[k.series_key] is not None
                         and _same_values(series[k.series_key], s)), None)  # type: ignore[arg-type]
            if twin is None:
                kept.append(f)
                continue
            twin.evidence.values.setdefault("same_as", f.series or "")
            twin.related.append(Related("same-quantity", f.location, f"the same values under the name "
                                        f"{f.series}: {f.evidence.text}"))
            out.remove(f)
    # 3. one series, one line (findings about the series' values: run-level findings such as TL-LOG-PREFIX sit on
    # the last line of the loss they followed, but describe the log, not the loss)
    by_place: dict[tuple[Any, ...], list[Finding]] = {}
    for f in out:
        if f.level in _SEVERE and f.series_key is not None and f.id not in RUN_LEVEL:
            loc = f.location
            by_place.setdefault((f.series_key, loc.path, loc.line, loc.record), []).append(f)
    for group in by_place.values():
        if len(group) < 2:
            continue
        group.sort(key=_rank)
        for g in group[1:]:
            fold(group[0], g)
            out.remove(g)
    return out


def _explained(f: Finding, g: Finding, log: LogFile) -> bool:
    """``g`` is about the gradient-norm series ``f`` names, or about the loss ``f`` is on."""
    grad = f.evidence.values.get("grad_series")
    return grad is not None and g.series == grad
