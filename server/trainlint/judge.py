"""Reads a log, runs every check, and returns one report: the single door for CLI and server.

Verdict: FAIL if any FAIL finding; else WARN if any WARN; else NOT-CHECKED when there was no
loss series or no check could run; else PASS. INFO findings never change the verdict, and a file
that could not be read is NOT-CHECKED with the reason, never FAIL.
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING

from .config import Config
from .core.findings import Evidence, Finding, Level, Ratio, Related, Rule, Skip, SkipReason, Step
from .core.model import Location, LogFile, Role
from .core.report import Report, verdict_of
from .core.values import fmt_step
from .readers import READ_ERRORS, NotALog, Source, open_source
from .rules import (
    AFTER_CHECKS,
    CHECKS,
    COMPARE_CHECKS,
    OUTCOME_CHECKS,
    TP_NO_LOSS,
    TP_NOT_CHECKED,
    TP_PASS,
    ranks,
    run_level,
)
from .rules.base import Context, is_live
from .rules.consolidate import consolidate
from .rules.registry import after_findings
from .runs import Companions, collect_facts

if TYPE_CHECKING:
    from typing import Any

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
    for check in AFTER_CHECKS:  # checks that read the others' findings
        ids = {r.id for r in check.rules if cfg.enabled(r.id)}
        if ids:
            rep.findings.extend(f for f in after_findings(check, ctx, rep.findings, rep.measurements) if f.id in ids)
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
    # a reward judged (TL-REWARD-COLLAPSE ran on it) judges an RL run whose losses are objectives, not losses
    has_loss = bool(log.by_role(Role.TRAIN_LOSS) or log.by_role(Role.EVAL_LOSS)) or any(
        v is None for c in OUTCOME_CHECKS for v in rep.coverage.get(c, {}).values())
    if not has_loss and _format_unknown(rep, log, cfg):
        pass
    elif not has_loss and cfg.enabled(TP_NO_LOSS.id):
        names = [s.name for s in log.series.values() if len(s)][:8]
        values: dict[str, Any] = {"series": len([s for s in log.series.values() if len(s)])}
        template = "{series} series read, none of them a loss"
        rep.findings.append(Finding(
            TP_NO_LOSS.id, TP_NO_LOSS.level,
            "There is no train or held-out loss to judge"
            + (f" (series read: {', '.join(names)})" if names else "")
            + ". If one of these is a loss under another name, map it under `roles:` in .trainlint.yaml.",
            Evidence(values, template), _file_start(log)))
    rep.verdict = verdict_of(levels, judged=has_loss and bool(rep.ran))
    if rep.verdict == Level.NOT_CHECKED:
        if has_loss and cfg.enabled(TP_NOT_CHECKED.id):
            rep.findings.append(_summary(TP_NOT_CHECKED, rep, log, "No check could run on this log."))
    elif rep.verdict == Level.PASS and cfg.enabled(TP_PASS.id):
        rep.findings.append(_summary(TP_PASS, rep, log, "No check found a problem."))


TEXT_FORMATS = ("text", "general")


def _format_unknown(rep: Report, log: LogFile, cfg: Config) -> bool:
    """TL-FORMAT-UNKNOWN instead of a bare "0 series read": a text log of which nothing was read, on the first
    line that looks like a metric line, quoting it and naming what was tried (issue 24)."""
    if log.format not in TEXT_FORMATS or any(len(s) for s in log.series.values()):
        return False
    if not cfg.enabled(ranks.TL_FORMAT_UNKNOWN.id):
        return False
    from .readers.general_text import first_metric_line  # start-up: only for a text log nothing was read from

    found = first_metric_line(log.path)
    tried = "the trainer-stdout reader and the general text reader (tables, key-value runs with a counter)"
    if found is None:
        values: dict[str, Any] = {"series": 0}
        template = "0 series read; no line looks like a metric line (a name and a number)"
        loc = _file_start(log)
    else:
        line, text = found
        values = {"series": 0, "line": line, "text": text.strip()[:160]}
        template = "0 series read; line {line} looks like a metric line and was not read: {text}"
        loc = Location(log.path, line, 1, line, len(text) + 1)
    rep.findings.append(Finding(
        ranks.TL_FORMAT_UNKNOWN.id, ranks.TL_FORMAT_UNKNOWN.level,
        f"Nothing in this text log was read as a series. Tried: {tried}; a line needs a step or epoch counter "
        "(`step 12`, `[12]`, `Epoch 3/10`) or a header row above it. Declare the line's shape under `formats:` in "
        ".trainlint.yaml (a regex with a `step` group and one group per metric) to read it.",
        Evidence(values, template), loc))
    return True


def _summary(rule: Rule, rep: Report, log: LogFile, head: str) -> Finding:
    """TP-PASS / TP-NOT-CHECKED: what ran, what was skipped and why, and what each loss series shows."""
    values: dict[str, Any] = {"ran": len(rep.ran), "skipped": len(rep.skipped)}
    parts: list[str] = ["{ran} checks ran, {skipped} skipped"]
    for i, m in enumerate(m for m in rep.measurements if m.check in ("divergence", "heldout-trend", "reward-collapse")):
        if m.check == "reward-collapse":
            values.update({f"s{i}": m.series, f"r{i}": m.values["ratio"], f"w{i}": m.values["window"]})
            parts.append(f"{{s{i}}} best/end level {{r{i}}} ({{w{i}}}-point medians)")
        elif m.check == "divergence":
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
    cfg = cfg or Config()
    findings = [f for c in COMPARE_CHECKS for f in c.run(run, baseline, cfg.thresholds) if cfg.enabled(f.id)]
    levels = {f.level for f in findings}
    verdict = verdict_of(levels, judged=Level.NOT_CHECKED not in levels)
    return Report(run.path, run.format, verdict, findings, log=run.log, baseline=baseline.path, error=run.error)


def not_checked(path: str, fmt: str | None, reason: str, code: Skip = Skip.UNREADABLE) -> Report:
    """A report for a path that could not be read or is not a training log."""
    rep = Report(path, fmt, Level.NOT_CHECKED, error=reason)
    loc = Location(path, None)
    rep.findings.append(Finding(TP_NOT_CHECKED.id, Level.NOT_CHECKED, f"Could not judge this file: {reason}.",
                                Evidence({"reason": code.value}, "nothing judged ({reason})"), loc))
    rep.skipped = {c.name: SkipReason(Skip.UNREADABLE, reason) for c in CHECKS}
    return rep


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

