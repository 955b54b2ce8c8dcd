"""Hover: the measurement first, then what it may mean, then the curve.

On a finding's line: the rule and level, the evidence sentence, the series and its point count, **Measured**
(the evidence values, with steps and lines), **Interpretation**, a sparkline with the decisive points marked,
and the rule's page. One finding at a time (the worst; the others on the line are named, reached with the
editor's next-problem key). On any other value line: what trainlint read there.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..core.docs_links import rule_url
from ..core.findings import Finding, Ratio, Step
from ..core.model import LogFile, Series
from ..core.values import fmt_step, fmt_value
from ..rules import RULES

BLOCKS = "▁▂▃▄▅▆▇█"
MARKS = {"end": "◆", "minimum": "◇", "best": "◇", "spike": "▲", "first-non-finite": "×", "non-finite": "×",
         "first-zero": "○", "first-constant": "○", "window-start": "┊", "start": "┊", "last-positive": "•",
         "first": "┊", "last": "◆"}
WIDTH = 48


def sparkline(s: Series, marks: dict[int, str] | None = None, width: int = WIDTH) -> str:
    n = len(s)
    if n == 0:
        return ""
    buckets = min(width, n)
    finite = [v for v in s.values if math.isfinite(v)]
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 0.0)
    out = []
    owner: dict[int, str] = {}
    for i, role in (marks or {}).items():
        if 0 <= i < n:
            b = i * buckets // n
            if role in ("end", "minimum", "best", "first-non-finite") or b not in owner:
                owner[b] = role
    for b in range(buckets):
        a, z = b * n // buckets, max(b * n // buckets + 1, (b + 1) * n // buckets)
        chunk = [v for v in s.values[a:z] if math.isfinite(v)]
        if b in owner:
            out.append(MARKS.get(owner[b], "•"))
        elif not chunk:
            out.append("×")
        elif hi == lo:
            out.append(BLOCKS[0])
        else:
            level = (sum(chunk) / len(chunk) - lo) / (hi - lo)
            out.append(BLOCKS[min(len(BLOCKS) - 1, int(level * len(BLOCKS)))])
    return "".join(out)


# Where a series' steps come from, as a user finds them in the log.
BASIS = {"step": "step", "progress-bar": "progress-bar step", "epoch": "epoch", "index": "log entry"}
# Evidence keys as words; pairs of <name>_first/<name>_last become one window.
LABELS = {"raw_ratio": "last point / minimum", "giveback": "share of the descent given back",
          "start": "start level", "end": "end level", "minimum": "lowest level", "window": "window (points)",
          "loss_after": "loss values from that step", "loss_finite_after": "finite loss values from that step",
          "from_step": "judged from", "points": "points judged", "count": "count"}
# A key whose meaning depends on the rule ("count" is non-finite values for TP-NAN, repeated steps elsewhere).
RULE_LABELS = {"TP-NAN": {"count": "non-finite values"}, "TP-NAN-GRAD": {"count": "non-finite gradient norms"},
               "TL-DUPLICATE-STEPS": {"count": "repeated steps"}, "TP-ZERO-LR": {"count": "rates <= 0"},
               "TP-ZERO-LR-PARTIAL": {"count": "rates <= 0"}}
WINDOWS = {"end": "end window", "min": "lowest window", "start": "start window"}


def _fmt(v: object, basis: str = "step") -> str:
    if isinstance(v, Step):
        return f"{BASIS.get(basis, 'step')} {fmt_step(float(v))}"
    if isinstance(v, Ratio):
        return f"{float(v):.3g}"
    if isinstance(v, float):
        return fmt_value(v)
    return str(v)


def finding_markdown(f: Finding, log: LogFile | None, tell: Callable[[str, int], int] | None = None) -> str:
    """``tell`` turns a line into the client's line (a Neovim client counts ``\\n`` only)."""
    tell = tell or (lambda _path, line: line)
    rule = RULES.get(f.id)
    title = rule.title if rule else f.id
    parts = [f"**{f.id}** · {f.level.value} — {title}"]
    series = None
    if log is not None and f.series_key:
        series = log.series.get(f.series_key)
    if f.series:
        count = f" · {len(series)} points" if series is not None else ""
        parts.append(f"Series: {f.series}{count}")
    basis = series.step_basis if series is not None else "step"
    measured = _measured(f.evidence.values, basis, RULE_LABELS.get(f.id, {}))
    if basis != "step":
        measured.append(f"- steps: {BASIS.get(basis, basis)}s (the log prints no step numbers for this series)")
    where = f"line {tell(f.location.path, f.location.line)}" if f.location.line else (
        f"record {f.location.record}" if f.location.record is not None else "the file")
    measured.append(f"- at: {where}")
    for r in f.related:
        rw = f"line {tell(r.location.path, r.location.line)}" if r.location.line else f"record {r.location.record}"
        measured.append(f"- {r.role}: {rw} ({r.message})")
    parts.insert(1, f"> {f.evidence.text}")  # the measurement first: what a user reads before scrolling
    parts.append("**Measured**\n\n" + "\n".join(measured))
    parts.append("**Interpretation** (what it may mean; the log cannot prove it)\n\n" + f.message)
    if series is not None and len(series) > 1:
        legend = ", ".join(sorted({f"{MARKS.get(role, '•')} {role}" for role in f.marks.values()}))
        parts.append(f"`{sparkline(series, f.marks)}`" + (f"  {legend}" if legend else ""))
    parts.append(f"[{f.id} documentation]({rule_url(f.id)})")
    return "\n\n".join(parts)


def _measured(values: dict[str, object], basis: str, labels: dict[str, str] | None = None) -> list[str]:
    out: list[str] = []
    labels = {**LABELS, **(labels or {})}
    for k, v in values.items():
        if k == "series":
            continue
        head, _, tail = k.rpartition("_")
        if tail == "first" and f"{head}_last" in values:
            a, b = values[k], values[f"{head}_last"]
            word = WINDOWS.get(head, head.replace("_", " "))
            if isinstance(a, Step) and isinstance(b, Step):
                span = f"{BASIS.get(basis, 'step')}s {fmt_step(float(a))}–{fmt_step(float(b))}"
                out.append(f"- {word}: {span}" if a != b else f"- {word}: {_fmt(a, basis)}")
                continue
        if tail == "last" and f"{head}_first" in values:
            continue
        if isinstance(v, Step) and k not in labels and (k == "step" or tail == "step"):
            # "step: step 261" said the unit twice: "- step 261", "- best: step 50"
            out.append(f"- {_fmt(v, basis)}" if k == "step" else f"- {head.replace('_', ' ')} at: {_fmt(v, basis)}")
            continue
        times = "x" if isinstance(v, Ratio) and (k == "ratio" or k.endswith("_ratio") or k == "giveback") else ""
        out.append(f"- {labels.get(k, k.replace('_', ' '))}: {_fmt(v, basis)}{times}")
    return out


def point_markdown(points: list[tuple[Series, int]]) -> str:
    lines = ["**trainlint read here**"]
    for s, i in points:
        lines.append(f"- {s.label}: role {s.role.value}, {BASIS.get(s.step_basis, s.step_basis)} "
                     f"{fmt_step(s.steps[i])}, value "
                     f"{fmt_value(s.values[i])} (point {i + 1} of {len(s)})")
    return "\n".join(lines)


def findings_markdown(here: list[Finding], log: LogFile | None,
                      tell: Callable[[str, int], int] | None = None) -> str:
    """The worst finding of a line in full, the others by name (a hover of two findings was 750x250 px)."""
    rank = {"FAIL": 0, "WARN": 1, "INFO": 2, "NOT-CHECKED": 3}
    ordered = sorted(here, key=lambda f: rank.get(f.level.value, 9))
    md = finding_markdown(ordered[0], log, tell)
    if len(ordered) > 1:
        others = ", ".join(f"{f.id} ({f.level.value})" for f in ordered[1:])
        md += f"\n\nAlso on this line: {others} (next problem: F8 in VS Code, ]d in Neovim)"
    return md
