"""Per-rank logs as one run (issue 24): TL-RANK-STOPPED, TL-RANK-STRAGGLER; and TL-FORMAT-UNKNOWN.

A multi-process run (``torchrun``, a multi-node job) prints each rank's lines with a ``[rankN]:`` label, or writes
one log per rank. The general text reader keeps each rank's series apart (``rank1/loss``), so every rule judges
every rank and a fault on any rank is a fault of the run, named by its series. What only the ranks side by side
show is judged here: a rank whose log stops while the others go on, and a rank whose steps take longer.
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections import defaultdict

from ..model import Role, Series
from .base import Context, Evidence, Finding, Level, Ratio, Related, Rule, Step, finite, is_live

TL_RANK_STOPPED = Rule("TL-RANK-STOPPED", Level.WARN, "ranks", "A rank's log stops before the other ranks'")
TL_RANK_STRAGGLER = Rule("TL-RANK-STRAGGLER", Level.WARN, "ranks", "A rank's steps take longer than the others'")
TL_FORMAT_UNKNOWN = Rule("TL-FORMAT-UNKNOWN", Level.NOT_CHECKED, "-",
                         "A text log whose lines look like metrics, none of them read")
RULES = (TL_RANK_STOPPED, TL_RANK_STRAGGLER, TL_FORMAT_UNKNOWN)

_RANKED = re.compile(r"^rank(?P<r>\d{1,5})/(?P<name>.+)$")


def by_rank(series: list[Series]) -> dict[str, dict[int, Series]]:
    """Series name -> rank -> series, for the names logged by two ranks or more."""
    out: dict[str, dict[int, Series]] = defaultdict(dict)
    for s in series:
        m = _RANKED.match(s.name)
        if m and len(s):
            out[m.group("name")][int(m.group("r"))] = s
    return {k: v for k, v in out.items() if len(v) >= 2}


def check_ranks(ctx: Context) -> list[Finding]:
    groups = by_rank(list(ctx.log.series.values()))
    if not groups:
        return []
    out: list[Finding] = []
    out.extend(_stopped(ctx, groups))
    out.extend(_stragglers(ctx, groups))
    return out


def _stopped(ctx: Context, groups: dict[str, dict[int, Series]]) -> list[Finding]:
    if is_live(ctx):
        return []  # a live run's ranks print moments apart
    losses = [g for g in groups.values() if next(iter(g.values())).role == Role.TRAIN_LOSS]
    group = losses[0] if losses else max(groups.values(), key=lambda g: sum(len(s) for s in g.values()))
    lead_rank, lead = max(group.items(), key=lambda kv: kv[1].steps[-1])
    steps = list(lead.steps)
    gaps = [b - a for a, b in itertools.pairwise(steps) if b > a]
    if not gaps:
        return []
    interval = statistics.median(gaps)
    span = steps[-1] - steps[0]
    out = []
    for r, s in sorted(group.items()):
        if r == lead_rank:
            continue
        gap = lead.steps[-1] - s.steps[-1]
        if gap <= ctx.th.rank_stopped_intervals * interval or gap <= 0.05 * span:
            continue
        i = len(s) - 1
        values = {"series": s.label, "rank": r, "last": Step(s.steps[i]), "lead_rank": lead_rank,
                  "lead_last": Step(lead.steps[-1]), "intervals": round(gap / interval)}
        f = Finding(TL_RANK_STOPPED.id, TL_RANK_STOPPED.level,
                    f"Rank {r} stopped logging while rank {lead_rank} went on: a crashed or hung process, or a rank "
                    "killed by the host. Its last line is here; the other ranks' logs say what came next.",
                    Evidence(values, "{series}: rank {rank} last logged step {last}; rank {lead_rank} went on to "
                                     "step {lead_last} ({intervals} logging intervals later)"),
                    ctx.point(s, i), s.label, s.key, marks={i: "last"})
        f.related.append(Related("other-rank", ctx.point(lead, len(lead) - 1),
                                 f"rank {lead_rank}'s last point, step {lead.steps[-1]:g}"))
        out.append(f)
    return out


def _stragglers(ctx: Context, groups: dict[str, dict[int, Series]]) -> list[Finding]:
    th = ctx.th
    out = []
    for group in groups.values():
        if next(iter(group.values())).role != Role.STEP_TIME:
            continue
        medians: dict[int, float] = {}
        for r, s in group.items():
            _, vals = finite(s)
            if len(vals) >= th.min_points_for_straggler:
                medians[r] = statistics.median(vals)
        if len(medians) < 2:
            continue
        for r, m in sorted(medians.items()):
            others = statistics.median([v for k, v in medians.items() if k != r])
            if others <= 0 or m <= th.rank_straggler_ratio * others:
                continue
            s = group[r]
            idx, vals = finite(s)
            i = next((j for j, v in zip(idx, vals, strict=False) if v > th.rank_straggler_ratio * others), idx[-1])
            values = {"series": s.label, "rank": r, "median": m, "others": others, "ratio": Ratio(m / others),
                      "threshold": th.rank_straggler_ratio, "ranks": len(medians) - 1, "step": Step(s.steps[i])}
            out.append(Finding(
                TL_RANK_STRAGGLER.id, TL_RANK_STRAGGLER.level,
                f"Rank {r} is a straggler: its steps take longer than the other ranks', and in a synchronous job "
                "every rank waits for the slowest (a slow host or device, throttling, or extra work on that rank).",
                Evidence(values, "{series}: rank {rank} median step time {median}, {ratio}x the median {others} of "
                                 "the other {ranks} rank(s) (threshold {threshold}); first over it at step {step}"),
                ctx.point(s, i), s.label, s.key, marks={i: "straggler"}))
    return out
