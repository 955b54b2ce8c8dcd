"""Per-rank logs as one run (issue 24): TL-RANK-STOPPED, TL-RANK-STRAGGLER; and TL-FORMAT-UNKNOWN.

A multi-process run (``torchrun``, a multi-node job) prints each rank's lines with a ``[rankN]:`` label, or writes
one log per rank. The general text reader keeps each rank's series apart (``rank1/loss``), so every rule judges
every rank and a fault on any rank is a fault of the run, named by its series. What only the ranks side by side
show is judged here: a rank whose log stops while the others go on, and a rank whose steps take longer.
"""

from __future__ import annotations

import itertools
import os
import re
from collections import defaultdict

from ..core.model import Location, Role, Series
from .base import Context, Evidence, Finding, Level, Measurement, Ratio, Related, Rule, Step, finite, is_live
from .registry import Phase, check
from .stats import median

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


# One log per rank: logs/rank_0.log, rank-1.txt, node-2.log, worker3.out (the number names the rank).
_RANK_FILE = re.compile(r"^(?P<pre>.*?(?:rank|node|worker|proc)[_-]?)(?P<r>\d{1,5})(?P<post>\D[^/]*)?$", re.I)
PEER_TAIL_BYTES = 256 << 10  # the peers of a per-rank log are read from their last 256 KB: their last steps


@check("ranks", TL_RANK_STOPPED, TL_RANK_STRAGGLER, order=20, phase=Phase.AFTER,
       description="per-rank logs of one run: a rank that stops early or lags the others")
def rank_findings(ctx: Context, findings: list[Finding], measurements: list[Measurement]) -> list[Finding]:
    """Per-rank logs (issue 24): the rank rules read the run's other rank files, not the other checks."""
    return check_ranks(ctx)


def check_ranks(ctx: Context) -> list[Finding]:
    groups = by_rank(list(ctx.log.series.values()))
    if not groups:
        groups = _peer_groups(ctx)
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
    interval = median(gaps)
    span = steps[-1] - steps[0]
    out = []
    only = ctx.facts.get("_rank_self")
    for r, s in sorted(group.items()):
        if r == lead_rank or (only is not None and r != only):
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
        peer = ctx.facts.get("_rank_paths", {}).get(lead_rank)  # another rank's file: its line is not known here
        where = Location(peer, None) if peer is not None else ctx.point(lead, len(lead) - 1)
        f.related.append(Related("other-rank", where, f"rank {lead_rank}'s last point, step {lead.steps[-1]:g}"))
        out.append(f)
    return out


def _stragglers(ctx: Context, groups: dict[str, dict[int, Series]]) -> list[Finding]:
    th = ctx.th
    out = []
    step_median = _median_of_role(groups, Role.STEP_TIME)
    for group in groups.values():
        role = next(iter(group.values())).role
        if role not in (Role.STEP_TIME, Role.LOADER_TIME):
            continue
        medians: dict[int, float] = {}
        for r, s in group.items():
            _, vals = finite(s)
            if len(vals) >= th.min_points_for_straggler:
                medians[r] = median(vals)
        if len(medians) < 2:
            continue
        for r, m in sorted(medians.items()):
            if ctx.facts.get("_rank_self") is not None and r != ctx.facts["_rank_self"]:
                continue
            others = median([v for k, v in medians.items() if k != r])
            if others <= 0 or m <= th.rank_straggler_ratio * others:
                continue
            if role == Role.LOADER_TIME and (step_median is None or m - others < 0.1 * step_median):
                continue  # a rank's own data loading lags (the others wait in the step); a negligible share is noise
            s = group[r]
            idx, vals = finite(s)
            i = _lag_start(idx, vals, th.rank_straggler_ratio * others)
            what = "data loading" if role == Role.LOADER_TIME else "step time"
            values = {"series": s.label, "rank": r, "what": what, "median": m, "others": others,
                      "ratio": Ratio(m / others), "threshold": th.rank_straggler_ratio, "ranks": len(medians) - 1,
                      "step": Step(s.steps[i])}
            out.append(Finding(
                TL_RANK_STRAGGLER.id, TL_RANK_STRAGGLER.level,
                f"Rank {r} is a straggler: its {what} takes longer than the other ranks', and in a synchronous job"
                " every rank waits for the slowest (a slow host, disk or "
                "device, throttling, or extra work on that rank).",
                Evidence(values, "{series}: rank {rank} median {what} {median}, {ratio}x the median {others} of "
                                 "the other {ranks} rank(s) (threshold {threshold}); over it from step {step} on"),
                ctx.point(s, i), s.label, s.key, marks={i: "straggler"}))
    return out


def _peer_groups(ctx: Context) -> dict[str, dict[int, Series]]:
    """For a per-rank log file (``rank_1.log``), its series beside those of the other ranks' files in its folder,
    each peer read from its tail: a finding of this file names this rank only (each file is judged once)."""
    path = ctx.log.path
    if os.path.isdir(path) or ctx.log.format not in ("text", "general"):
        return {}
    folder, name = os.path.split(path)
    m = _RANK_FILE.match(name)
    if m is None:
        return {}
    me = int(m.group("r"))
    peers: dict[int, str] = {}
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return {}
    for other in names:
        om = _RANK_FILE.match(other)
        if (om is None or other == name or om.group("pre") != m.group("pre")
                or (om.group("post") or "") != (m.group("post") or "")):
            continue
        peers[int(om.group("r"))] = os.path.join(folder, other)
    if not peers:
        return {}
    from ..readers import read_tail  # rules read peers through the readers like everything else

    out: dict[str, dict[int, Series]] = defaultdict(dict)
    for s in ctx.log.series.values():
        if len(s):
            out[s.name][me] = s
    for r, p in sorted(peers.items())[:64]:
        try:
            log = read_tail(p, ctx.log.format, PEER_TAIL_BYTES)
        except (OSError, ValueError):
            continue
        for s in log.series.values():
            if len(s) and s.name in out:
                out[s.name][r] = s
    ctx.facts["_rank_self"] = me
    ctx.facts["_rank_paths"] = peers
    return {k: v for k, v in out.items() if len(v) >= 2}


def _median_of_role(groups: dict[str, dict[int, Series]], role: Role) -> float | None:
    vals = [v for g in groups.values() for s in g.values() if s.role == role for v in finite(s)[1]]
    return median(vals) if vals else None


def _lag_start(idx: list[int], vals: list[float], limit: float) -> int:
    """The first point of the longest run of points over ``limit``: where the rank started to lag (a slow first step
    is warm-up, not the straggling)."""
    best, best_len, start, run = idx[-1], 0, None, 0
    for j, v in zip(idx, vals, strict=False):
        if v > limit:
            if start is None:
                start, run = j, 0
            run += 1
            if run > best_len:
                best, best_len = start, run
        else:
            start = None
    return best
