"""Reads a log, runs every check, and returns one report: the single door for CLI and server.

Verdict: FAIL if any FAIL finding; else WARN if any WARN; else NOT-CHECKED when there was no
loss series or no check could run; else PASS. INFO findings never change the verdict, and a file
that could not be read is NOT-CHECKED with the reason, never FAIL.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .config import Config
from .model import Location, LogFile, Role
from .output.values import fmt_step
from .readers import NotALog, Source, open_source
from .rules import CHECKS, TP_NO_LOSS, TP_NOT_CHECKED, TP_PASS, run_level
from .rules.base import (
    Context,
    Evidence,
    Finding,
    Level,
    Measurement,
    Ratio,
    Related,
    Rule,
    Skip,
    SkipReason,
    Step,
    is_live,
)
from .rules.consolidate import consolidate
from .runs import Companions, collect_facts

if TYPE_CHECKING:
    from typing import Any

ORDER = {Level.FAIL: 0, Level.WARN: 1, Level.NOT_CHECKED: 2, Level.PASS: 3, Level.INFO: 4}


@dataclass
class Report:
    path: str
    format: str | None
    verdict: Level
    findings: list[Finding] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    skipped: dict[str, SkipReason] = field(default_factory=dict)
    coverage: dict[str, dict[str, SkipReason | None]] = field(default_factory=dict)
    measurements: list[Measurement] = field(default_factory=list)
    log: LogFile | None = None
    error: str | None = None
    baseline: str | None = None     # compare reports: the baseline's path
    live: bool = False              # judged as a run still being written (rules that need progress waited)


def worst(levels: list[Level]) -> Level | None:
    return min(levels, key=lambda lv: ORDER[lv]) if levels else None


def judge_log(log: LogFile, cfg: Config | None = None, facts: dict[str, Any] | None = None) -> Report:
    cfg = cfg or Config()
    ctx = Context(log, cfg.thresholds, dict(facts or {}))
    rep = Report(log.path, log.format, Level.PASS, log=log, live=is_live(ctx))
    for check in CHECKS:
        enabled = [r for r in check.rules if cfg.enabled(r.id)]
        if not enabled:
            rep.skipped[check.name] = SkipReason(Skip.DISABLED, "its rules are not selected by the configuration")
            continue
        result = check.run(ctx)
        rep.coverage[check.name] = result.coverage
        rep.measurements.extend(result.measurements)
        if result.skipped is not None:
            rep.skipped[check.name] = result.skipped
        else:
            rep.ran.append(check.name)
        ids = {r.id for r in enabled}
        rep.findings.extend(f for f in result.findings if f.id in ids)
    if cfg.enabled(run_level.TL_SERIES_DISAGREE.id):
        rep.findings.extend(run_level.series_disagree(ctx, rep.findings, rep.measurements))
    rep.findings = consolidate(rep.findings, log)  # one problem, one finding
    _same_points(rep.findings, log, ctx.facts.get("companion_logs") or [])
    if ctx.facts.get("log_is_prefix"):
        for f in rep.findings:
            if f.id in run_level.END_OF_LOG_RULES:
                f.evidence.values["run_last_step"] = Step(ctx.facts["run_last_step"])
                f.evidence.template += "; this is the end of the log, not of the run (it reached step {run_last_step})"
    _conclude(rep, cfg)
    return rep


def _same_points(findings: list[Finding], log: LogFile, others: list[LogFile | None]) -> None:
    """The same point in another file of the run (an event file beside the text log) is related
    information on the finding, not a second finding."""
    others = [o for o in others if o is not None]
    if not others:
        return
    for f in findings:
        s = log.series.get(f.series_key or "")
        if s is None or f.location.line is None:
            continue
        idx = next((i for i in range(len(s) - 1, -1, -1) if s.lines[i] == f.location.line), None)
        if idx is None:
            continue
        step, value = s.steps[idx], s.values[idx]
        for other in others:
            for cs in other.by_role(s.role):
                for j in range(len(cs) - 1, -1, -1):
                    if cs.steps[j] == step and (cs.values[j] == value or (
                            math.isfinite(value) and math.isclose(cs.values[j], value, rel_tol=1e-6))):
                        loc = other.locate(cs, j)
                        name = os.path.basename(loc.path)
                        f.related.append(Related("same-point", loc, f"the same point in {name}: {cs.name} at step "
                                                 f"{fmt_step(step)}"))
                        break


def _file_start(log: LogFile) -> Location:
    if log.format == "tfevents":
        member = log.members[0] if log.members else log.path
        return Location(member, None, record=0, offset=0)
    return Location(log.path, 1, 1, 1, 1)


def _conclude(rep: Report, cfg: Config) -> None:
    log = rep.log
    assert log is not None
    levels = [f.level for f in rep.findings]
    has_loss = bool(log.by_role(Role.TRAIN_LOSS) or log.by_role(Role.EVAL_LOSS))
    if not has_loss and cfg.enabled(TP_NO_LOSS.id):
        names = [s.name for s in log.series.values() if len(s)][:8]
        values: dict[str, Any] = {"series": len([s for s in log.series.values() if len(s)])}
        template = "{series} series read, none of them a loss"
        rep.findings.append(Finding(
            TP_NO_LOSS.id, TP_NO_LOSS.level,
            "There is no train or held-out loss to judge"
            + (f" (series read: {', '.join(names)})" if names else "")
            + ". If one of these is a loss under another name, map it under `roles:` in .trainlint.yaml.",
            Evidence(values, template), _file_start(log)))
    if Level.FAIL in levels:
        rep.verdict = Level.FAIL
    elif Level.WARN in levels:
        rep.verdict = Level.WARN
    elif not has_loss or not rep.ran:
        rep.verdict = Level.NOT_CHECKED
        if has_loss and cfg.enabled(TP_NOT_CHECKED.id):
            rep.findings.append(_summary(TP_NOT_CHECKED, rep, log, "No check could run on this log."))
    else:
        rep.verdict = Level.PASS
        if cfg.enabled(TP_PASS.id):
            rep.findings.append(_summary(TP_PASS, rep, log, "No check found a problem."))


def _summary(rule: Rule, rep: Report, log: LogFile, head: str) -> Finding:
    """TP-PASS / TP-NOT-CHECKED: what ran, what was skipped and why, and what each loss series shows."""
    values: dict[str, Any] = {"ran": len(rep.ran), "skipped": len(rep.skipped)}
    parts: list[str] = ["{ran} checks ran, {skipped} skipped"]
    for i, m in enumerate(m for m in rep.measurements if m.check in ("divergence", "heldout-trend")):
        if m.check == "divergence":
            values.update({f"s{i}": m.series, f"r{i}": Ratio(m.values["ratio"]), f"w{i}": m.values["window"]})
            parts.append(f"{{s{i}}} end/lowest level {{r{i}}} ({{w{i}}}-point medians)")
        else:
            v = m.values
            values.update({f"s{i}": m.series, f"k{i}": v["improved"], f"m{i}": v["intervals"], f"a{i}": v["first"],
                           f"b{i}": v["last"]})
            parts.append(f"{{s{i}}} improved at {{k{i}}} of {{m{i}}} evaluations ({{a{i}}} to {{b{i}}})")
    ran = ", ".join(rep.ran) or "none"
    skipped = "; ".join(f"{k} ({v.reason.value}: {v.detail})" for k, v in rep.skipped.items()) or "none"
    message = f"{head} Ran: {ran}. Skipped: {skipped}."
    return Finding(rule.id, rule.level, message, Evidence(values, "; ".join(parts)), _file_start(log))


def compare_paths(baseline: Report, run: Report, cfg: Config | None = None) -> Report:
    """A compare report: the run's compare findings against the baseline, naming both files."""
    from .rules.compare import compare

    cfg = cfg or Config()
    findings = [f for f in compare(run, baseline, cfg.thresholds) if cfg.enabled(f.id)]
    levels = {f.level for f in findings}
    verdict = (Level.FAIL if Level.FAIL in levels else Level.WARN if Level.WARN in levels
               else Level.NOT_CHECKED if Level.NOT_CHECKED in levels else Level.PASS)
    return Report(run.path, run.format, verdict, findings, log=run.log, baseline=baseline.path, error=run.error)


def not_checked(path: str, fmt: str | None, reason: str, code: Skip = Skip.UNREADABLE) -> Report:
    """A report for a path that could not be read or is not a training log."""
    rep = Report(path, fmt, Level.NOT_CHECKED, error=reason)
    loc = Location(path, None)
    rep.findings.append(Finding(TP_NOT_CHECKED.id, Level.NOT_CHECKED, f"Could not judge this file: {reason}.",
                                Evidence({"reason": code.value}, "nothing judged ({reason})"), loc))
    rep.skipped = {c.name: SkipReason(Skip.UNREADABLE, reason) for c in CHECKS}
    return rep


# What reading one file can raise: each is that file's NOT-CHECKED, never the end of a scan.
READ_ERRORS = (NotALog, OSError, ImportError, RecursionError, MemoryError, ValueError, UnicodeError)


def read_failure(path: str, fmt: str | None, e: BaseException) -> Report:
    """The NOT-CHECKED report of a file whose reading raised ``e`` (one of READ_ERRORS)."""
    if isinstance(e, NotALog):
        return not_checked(path, None, f"not a training log ({e})", Skip.NOT_APPLICABLE)
    if isinstance(e, FileNotFoundError):
        return not_checked(path, fmt, "it does not exist (or vanished while being read)")
    if isinstance(e, PermissionError):
        return not_checked(path, fmt, "permission denied")
    if isinstance(e, IsADirectoryError):
        return not_checked(path, fmt, "it is a directory without event files")
    if isinstance(e, OSError):
        return not_checked(path, fmt, f"cannot be read ({e.strerror or e})")
    if isinstance(e, ImportError):
        return not_checked(path, fmt, f"a reader dependency is missing ({e.name}); install trainlint's dependencies")
    # one hostile file (JSON nested 1,000 deep) is that file's problem: the others are still judged
    return not_checked(path, fmt, f"its structure could not be read ({type(e).__name__}: {str(e)[:120]})")


def open_log(path: str, cfg: Config, fmt: str | None = None) -> Source:
    return open_source(path, fmt, cfg.roles, cfg.format_for(path))


def judge_path(path: str, cfg: Config | None = None, fmt: str | None = None,
               facts: dict[str, Any] | None = None, companions: Companions | None = None,
               now: float | None = None, live: bool | None = False) -> Report:
    """Read and judge one path with the facts of its run directory; never raises for a bad file.

    By default the bytes alone are judged (``live=False``: the file's age never changes a verdict); ``live=True``
    judges the run as still being written; ``live=None`` measures that from the file's age at ``now`` (a live run
    is one written moments before it)."""
    cfg = cfg or Config()
    try:
        src = open_log(path, cfg, fmt)
        src.update()
    except READ_ERRORS as e:
        return read_failure(path, fmt, e)
    run_facts = collect_facts(path, src.log, facts or {}, companions or Companions(), now, live)
    return judge_log(src.log, cfg, run_facts)

