"""TL-NAN-HIDDEN: a non-finite loss that the trainer kept out of the logged loss.

Two trainers hide a NaN loss by design, and a log read naively then shows a finite loss:

- HF Trainer's ``logging_nan_inf_filter`` (on by default) adds the running mean of the losses logged so far
  in place of a NaN/Inf step loss, so the logged ``loss`` stays finite (or becomes exactly 0 when every step
  of the interval was NaN) while ``grad_norm`` shows ``nan``. The weights still got the update. A loss scaler
  skipping an overflowed step also logs a non-finite gradient norm beside a finite loss, but it recovers at
  the next steps; a non-finite gradient norm at every logged point from some step to the end of the log
  while the loss stays finite is the filter (or a scaler that skips every step: no update either way).
- Megatron leaves the ``lm loss`` field out of an iteration line when every iteration of the interval was
  NaN or skipped (its NaN counter can stay 0): the line is there, with its learning rate and loss scale,
  without the loss.

Both are measured in O(appended): the run of non-finite gradient norms at the end of the series and the
lines a loss vanished from are kept in the series' cache.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field

from ..core.model import Role, Series
from ..core.roles import tokens
from .base import (
    CheckResult,
    Context,
    Evidence,
    Finding,
    Level,
    Measurement,
    Related,
    Rule,
    Skip,
    SkipReason,
    Step,
)
from .registry import check
from .stats import finite_from, points_from, stats

TL_NAN_HIDDEN = Rule("TL-NAN-HIDDEN", Level.FAIL, "hidden-nan",
                     "A non-finite loss the trainer kept out of the logged loss")
#: rules whose findings describe the same fault from another side: folded into TL-NAN-HIDDEN's evidence
FOLDED = ("TP-NAN-GRAD", "TP-ZERO-LOSS-ONSET")
# Counters and axes a logger writes on every line, loss or not: a vanished loss is judged by the other
# measurements on its line, not by these.
_AXES = {"step", "steps", "epoch", "iteration", "iter", "global", "consumed", "samples", "tokens", "time", "elapsed",
         "batch", "size", "number", "skipped", "nan", "iterations", "throughput", "ms", "per"}


def _trailing_nonfinite(s: Series) -> int:
    """Index where the run of non-finite values at the end of ``s`` starts (len(s) when its last is finite)."""
    st = stats(s)
    memo = st.memo.get("hidden-nan-tail")
    n = len(s)
    seen, start = memo if isinstance(memo, tuple) else (0, 0)
    if seen > n:
        seen, start = 0, 0
    bad = st.nonfinite
    # the non-finite indices appended since ``seen``: from the end of the list back to the first below ``seen``
    k = len(bad)
    while k and bad[k - 1] >= seen:
        k -= 1
    expected = seen
    for i in bad[k:]:
        if i != expected:
            start = i  # a finite point broke the run before i
        expected = i + 1
    if expected != n:  # the last point is finite
        start = n
    st.memo["hidden-nan-tail"] = (n, start)
    return start


@dataclass
class _Vanish:
    """Lines of a co-carrier series (one that shared every line of the loss so far) that lack the loss."""

    carrier: str
    ci: int = 0                       # next carrier point to look at
    li: int = 0                       # next loss point to compare its line with
    carried: int = 0                  # carrier lines holding the loss before the first that did not
    missing: list[int] = field(default_factory=list)   # carrier indices whose line lacks the loss


MIN_CARRIED = 5    # the loss was on at least this many lines of its record before one lacked it
MIN_HIDDEN = 3     # non-finite gradient norms to the end of the log: a scaler recovers after one


def _is_axis(s: Series) -> bool:
    return bool(set(tokens(s.name)) & _AXES) or not tokens(s.name)


def _vanished(ctx: Context, loss: Series) -> _Vanish | None:
    """Follow the lines of the loss's record that lack it (Megatron's NaN iteration lines)."""
    st = stats(loss)
    memo = st.memo.get("hidden-nan-vanish")
    if isinstance(memo, _Vanish) and memo.li > len(loss):
        memo = None
    if memo is None:
        # a progress bar's postfix is read once per state, not once per redraw: its lines say nothing
        if len(loss) < MIN_CARRIED or loss.step_basis == "progress-bar":
            return None
        first = loss.lines[0]
        carriers = [c for c in ctx.log.series.values() if c is not loss and len(c) and c.lines[0] == first
                    and c.role not in (Role.TRAIN_LOSS, Role.EVAL_LOSS) and not _is_axis(c)]
        if not carriers:
            return None
        carrier = max(carriers, key=len)
        memo = st.memo["hidden-nan-vanish"] = _Vanish(carrier.key)
    elif not isinstance(memo, _Vanish):
        return None
    c = ctx.log.series.get(memo.carrier)
    if c is None:
        return None
    c_lines, l_lines = c.lines, loss.lines
    n_l = len(l_lines)
    monotone = stats(loss).first_back is None
    for ci in range(memo.ci, len(c_lines)):
        line = c_lines[ci]
        li = memo.li
        while li < n_l and l_lines[li] < line:
            li += 1
        memo.li = li
        if li < n_l and l_lines[li] == line:
            if not memo.missing:
                memo.carried += 1
        elif memo.carried >= MIN_CARRIED and monotone:
            # not a redraw of a step the loss was logged at on another line (a progress bar's postfix)
            x = c.steps[ci]
            k = bisect_left(loss.steps, x)
            if k >= len(loss.steps) or loss.steps[k] != x:
                memo.missing.append(ci)
        memo.ci = ci + 1
    return memo


@check("hidden-nan", TL_NAN_HIDDEN, order=45, description="non-finite losses the trainer kept out of the logged loss",
       level_notes={"TL-NAN-HIDDEN": "WARN when the loss vanished from one or two lines only"})
def check_hidden_nan(ctx: Context) -> CheckResult:
    res = CheckResult()
    train, _ = ctx.judged(Role.TRAIN_LOSS)
    if not train:
        res.skipped = SkipReason(Skip.NO_SERIES, "no train-loss series in the log")
        return res
    loss = max(train, key=len)
    res.coverage[loss.label] = None
    grads, _ = ctx.judged(Role.GRAD_NORM)
    for g in grads:
        start = _trailing_nonfinite(g)
        run = len(g) - start
        if run < MIN_HIDDEN:
            continue
        x0 = g.steps[start]
        later, fin = points_from(loss, x0), finite_from(loss, x0)
        res.measurements.append(Measurement("hidden-nan", loss.label, {"grad_nonfinite_tail": run,
                                                                       "loss_points": later, "loss_finite": fin},
                                            f"{run} non-finite gradient norms to the end; {fin} of {later} "
                                            "loss values from their first step finite"))
        if not later or fin != later:
            continue  # the loss shows the NaN itself: TP-NAN says so
        j = bisect_left(loss.steps, x0) if stats(loss).first_back is None else next(
            i for i, x in enumerate(loss.steps) if x >= x0)
        values = {"series": loss.label, "grad_series": g.label, "grad_run": run, "grad_step": Step(x0),
                  "grad_value": g.values[start], "loss_points": later, "loss_value": loss.values[j],
                  "loss_step": Step(loss.steps[j])}
        template = ("{series}: {loss_points} of {loss_points} values from step {loss_step} are finite ({loss_value} "
                    "there), while each of the last {grad_run} {grad_series} values, from step {grad_step}, is "
                    "non-finite ({grad_value} first)")
        f = Finding(TL_NAN_HIDDEN.id, TL_NAN_HIDDEN.level,
                    "The gradient norm is non-finite at every logged point from here to the end while the logged "
                    "loss stays finite: the loss itself was most likely NaN/Inf and the trainer logged something "
                    "else in its place (HF Trainer's logging_nan_inf_filter, on by default, logs the running "
                    "mean, or 0 when every step of the interval was NaN). A loss scaler skipping overflowed steps "
                    "recovers after a step or two; one that skips every step leaves the weights untouched too. "
                    "Treat the run as non-finite from this step.",
                    Evidence(values, template), ctx.point(loss, j), loss.label, loss.key, marks={j: "hidden"})
        f.related.append(Related("non-finite", ctx.point(g, start), f"{g.label}: {g.values[start]} at step "
                                 f"{x0:g}"))
        res.findings.append(f)
        return res
    v = _vanished(ctx, loss)
    if v is None or not v.missing:
        return res
    c = ctx.log.series[v.carrier]
    first, last = v.missing[0], v.missing[-1]
    values = {"series": loss.label, "carrier": c.label, "carried": v.carried, "missing": len(v.missing),
              "first_step": Step(c.steps[first]), "first_line": c.lines[first], "last_step": Step(c.steps[last])}
    template = ("{series} is missing from {missing} lines that carry {carrier} (the first at step {first_step}, "
                "line {first_line}; the last at step {last_step}), after it was on each of the first {carried}")
    level = TL_NAN_HIDDEN.level if len(v.missing) >= MIN_HIDDEN or last == len(c) - 1 else Level.WARN
    f = Finding(TL_NAN_HIDDEN.id, level,
                "The loss vanished from lines of the log that always carried it. Megatron leaves `lm loss` out of "
                "an iteration line when every iteration of the interval was NaN or skipped (its NaN counter can "
                "stay 0): the loss was most likely non-finite there. Check the loss scale and the skipped "
                "iterations around these steps.",
                Evidence(values, template), ctx.point(c, first), loss.label, loss.key, marks={})
    for k in v.missing[1:6]:
        f.related.append(Related("missing", ctx.point(c, k), f"no loss at step {c.steps[k]:g}"))
    res.findings.append(f)
    return res

