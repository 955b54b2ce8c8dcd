"""trainproof's compare rules: a run against a baseline run of the same task.

Each finding sits on the run's line and has the baseline's line as related information, and the
report names both files. The series compared is the train-loss series with the most points in
each log (named in the evidence). A side that cannot be judged makes the pair uncomparable:
NOT-CHECKED (exit 2), never FAIL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.model import Location, LogFile, Role, Series
from .base import (
    Context,
    Evidence,
    Finding,
    Level,
    Ratio,
    Related,
    Rule,
    finite,
    upper_median,
)
from .registry import Phase, check
from .thresholds import Thresholds

if TYPE_CHECKING:
    from typing import Any

    from ..core.report import Report

TP_FLOOR_RATIO = Rule("TP-FLOOR-RATIO", Level.FAIL, "compare", "The run's loss floor is far above the baseline's")
TP_END_RATIO = Rule("TP-END-RATIO", Level.FAIL, "compare", "The run ends far above the baseline")
TP_NEG_IMPROVE = Rule("TP-NEG-IMPROVE", Level.FAIL, "compare", "The run got worse from start to end")
TP_IMPROVE_DEFICIT = Rule("TP-IMPROVE-DEFICIT", Level.FAIL, "compare", "The run improved far less than the baseline")
TP_GRADNORM_RATIO = Rule("TP-GRADNORM-RATIO", Level.WARN, "compare",
                         "The run's gradient norms are far above the baseline's")
TP_BAD_BASELINE = Rule("TP-BAD-BASELINE", Level.WARN, "compare", "The baseline itself FAILs")
TP_CMP_UNCOMPARABLE = Rule("TP-CMP-UNCOMPARABLE", Level.NOT_CHECKED, "compare", "The two runs cannot be compared")
TP_CMP_PASS = Rule("TP-CMP-PASS", Level.PASS, "compare", "The run compares well with the baseline")
RULES = (TP_FLOOR_RATIO, TP_END_RATIO, TP_NEG_IMPROVE, TP_IMPROVE_DEFICIT, TP_GRADNORM_RATIO, TP_BAD_BASELINE,
         TP_CMP_UNCOMPARABLE, TP_CMP_PASS)



@dataclass
class Metrics:
    series: Series
    idx: list[int]
    vals: list[float]
    floor: float
    floor_i: int
    start: float
    end: float
    improvement: float
    degenerate: str | None
    gn_median: float | None


def metrics(log: LogFile, th: Thresholds) -> Metrics | str:
    train, _ = Context(log, th).judged(Role.TRAIN_LOSS)
    if not train:
        return "no train-loss series"
    s = max(train, key=len)
    idx, vals = finite(s)
    if len(vals) < th.compare_min_points:
        return f"{s.label} has {len(vals)} finite points, fewer than {th.compare_min_points}"
    fi = min(range(len(vals)), key=lambda j: vals[j])
    m0, m1 = upper_median(vals[:th.compare_window]), upper_median(vals[-th.compare_window:])
    degenerate = None
    if all(v == 0 for v in vals):
        degenerate = "every loss value is 0.0"
    elif m0 <= 0:
        degenerate = "its starting loss is not positive"
    gns = [v for g in Context(log, th).judged(Role.GRAD_NORM)[0] for v in finite(g)[1]]
    gn = upper_median(gns) if len(gns) > 5 else None
    improvement = 1 - m1 / m0 if m0 > 0 else 0.0
    return Metrics(s, idx, vals, vals[fi], fi, m0, m1, improvement, degenerate, gn)


def _compared(run: Report, base: Report, run_log: LogFile, base_log: LogFile, mr: Metrics, mb: Metrics,
              th: Thresholds) -> list[Finding]:
    """The ratio rules (floor, end, improvement, gradient norm) of a comparable pair."""
    out: list[Finding] = []

    def point(lg: LogFile, m: Metrics, j: int) -> Location:
        return lg.locate(m.series, m.idx[j])

    common: dict[str, Any] = {"run_series": mr.series.label, "baseline_series": mb.series.label}
    if mr.floor > th.max_floor_ratio * mb.floor:
        v = {**common, "run_floor": mr.floor, "base_floor": mb.floor, "ratio": Ratio(mr.floor / mb.floor),
             "threshold": th.max_floor_ratio}
        f = Finding(TP_FLOOR_RATIO.id, TP_FLOOR_RATIO.level,
                    "The lowest loss this run reached is far above the baseline's: the run cannot fit the data the "
                    "way the baseline does (shuffled or wrong labels, a broken pipeline, a much weaker setting).",
                    Evidence(v, "run floor {run_floor} ({run_series}) is {ratio}x the baseline floor {base_floor} "
                                "({baseline_series}); threshold {threshold}"),
                    point(run_log, mr, mr.floor_i), mr.series.label, mr.series.key)
        f.related.append(Related("baseline-floor", point(base_log, mb, mb.floor_i), f"baseline floor in {base.path}"))
        out.append(f)
    if mb.end > 0 and mr.end > th.max_end_ratio * mb.end:
        v = {**common, "run_end": mr.end, "base_end": mb.end, "ratio": Ratio(mr.end / mb.end),
             "window": th.compare_window, "threshold": th.max_end_ratio}
        f = Finding(TP_END_RATIO.id, TP_END_RATIO.level,
                    "The run ends far above where the baseline ends.",
                    Evidence(v, "run end {run_end} (median of the last {window}) is {ratio}x the baseline end "
                                "{base_end}; threshold {threshold}"),
                    point(run_log, mr, len(mr.vals) - 1), mr.series.label, mr.series.key)
        f.related.append(Related("baseline-end", point(base_log, mb, len(mb.vals) - 1), f"baseline end in {base.path}"))
        out.append(f)
    v = {**common, "run_improvement": Ratio(mr.improvement), "base_improvement": Ratio(mb.improvement)}
    if mr.improvement < 0:
        f = Finding(TP_NEG_IMPROVE.id, TP_NEG_IMPROVE.level, "The run's loss is higher at its end than at its start.",
                    Evidence(v, "run improvement {run_improvement} vs baseline {base_improvement}"),
                    point(run_log, mr, len(mr.vals) - 1), mr.series.label, mr.series.key)
        f.related.append(Related("baseline-end", point(base_log, mb, len(mb.vals) - 1), f"baseline end in {base.path}"))
        out.append(f)
    elif mb.improvement > 0 and mr.improvement < th.min_improvement_fraction * mb.improvement:
        v.update(ratio=Ratio(mr.improvement / mb.improvement), threshold=th.min_improvement_fraction)
        f = Finding(TP_IMPROVE_DEFICIT.id, TP_IMPROVE_DEFICIT.level,
                    "The run improved far less than the baseline did between start and end.",
                    Evidence(v, "run improvement {run_improvement} vs baseline {base_improvement} (ratio {ratio}, "
                                "below {threshold})"),
                    point(run_log, mr, len(mr.vals) - 1), mr.series.label, mr.series.key)
        f.related.append(Related("baseline-end", point(base_log, mb, len(mb.vals) - 1), f"baseline end in {base.path}"))
        out.append(f)
    if mr.gn_median is not None and mb.gn_median is not None and mb.gn_median > 0 and \
            mr.gn_median > th.max_gradnorm_median_ratio * mb.gn_median:
        gv = {"run_gn": mr.gn_median, "base_gn": mb.gn_median, "ratio": Ratio(mr.gn_median / mb.gn_median),
              "threshold": th.max_gradnorm_median_ratio}
        out.append(Finding(TP_GRADNORM_RATIO.id, TP_GRADNORM_RATIO.level,
                           "The run's typical gradient norm is far above the baseline's.",
                           Evidence(gv, "run gradient-norm median {run_gn} is {ratio}x the baseline's {base_gn}; "
                                        "threshold {threshold}"), point(run_log, mr, len(mr.vals) - 1)))
    return out


@check("compare", *RULES, order=10, phase=Phase.COMPARE, description="a run against a baseline run of the same task",
       thresholds={TP_FLOOR_RATIO.id: ("max_floor_ratio", "compare_min_points"),
                   TP_END_RATIO.id: ("max_end_ratio", "compare_window"),
                   TP_NEG_IMPROVE.id: ("compare_window",),
                   TP_IMPROVE_DEFICIT.id: ("min_improvement_fraction", "compare_window"),
                   TP_GRADNORM_RATIO.id: ("max_gradnorm_median_ratio",),
                   TP_CMP_UNCOMPARABLE.id: ("compare_min_points",)})
def compare(run: Report, base: Report, th: Thresholds | None = None) -> list[Finding]:
    """Compare-rule findings for ``run`` against ``base`` (both already judged on their own)."""
    th = th or Thresholds()
    out: list[Finding] = []
    run_log, base_log = run.log, base.log

    def start_of(rep: Report) -> Location:
        return Location(rep.path, 1, 1, 1, 1) if rep.format != "tfevents" else Location(rep.path, None)

    if base.verdict == Level.FAIL:
        fails = sorted({f.id for f in base.findings if f.level == Level.FAIL})
        out.append(Finding(TP_BAD_BASELINE.id, TP_BAD_BASELINE.level,
                           f"The baseline {base.path} FAILs on its own ({', '.join(fails)}); comparisons against it "
                           "may mislead.",
                           Evidence({"verdict": base.verdict.value, "fails": len(fails)},
                                    "the baseline's own verdict is {verdict} ({fails} failing rules)"), start_of(run)))
    reasons = []
    for side, rep in (("run", run), ("baseline", base)):
        if rep.verdict == Level.NOT_CHECKED or rep.log is None:
            reasons.append(f"the {side} could not be judged ({rep.error or 'no check ran'})")
    mr = metrics(run_log, th) if run_log is not None else "not read"
    mb = metrics(base_log, th) if base_log is not None else "not read"
    for side, m in (("run", mr), ("baseline", mb)):
        if isinstance(m, str):
            reasons.append(f"the {side}: {m}")
        elif m.degenerate:
            reasons.append(f"the {side}'s {m.series.label}: {m.degenerate}")
    if reasons or isinstance(mr, str) or isinstance(mb, str):
        out.append(Finding(TP_CMP_UNCOMPARABLE.id, TP_CMP_UNCOMPARABLE.level,
                           "These two runs cannot be compared: " + "; ".join(reasons) + ".",
                           Evidence({"reasons": len(reasons)}, "{reasons} reason(s) the pair is not comparable"),
                           start_of(run)))
        return out
    assert run_log is not None and base_log is not None

    out.extend(_compared(run, base, run_log, base_log, mr, mb, th))
    if not any(f.level in (Level.FAIL, Level.WARN) for f in out):
        pv = {"run_series": mr.series.label, "baseline_series": mb.series.label,
              "floor_ratio": Ratio(mr.floor / mb.floor) if mb.floor else Ratio(float("inf")),
              "run_improvement": Ratio(mr.improvement), "base_improvement": Ratio(mb.improvement)}
        out.append(Finding(TP_CMP_PASS.id, TP_CMP_PASS.level, "The run compares well with the baseline.",
                           Evidence(pv, "floor ratio {floor_ratio}; improvement {run_improvement} vs "
                                        "{base_improvement}"), start_of(run)))
    return out
