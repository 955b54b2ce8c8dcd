"""trainlint's own run-level rules: is this log the whole run, did the run end, was it resumed,
are its checkpoints intact, and do its series agree.

They read run facts collected from the run directory (``runs.collect_facts``): checkpoint files,
snapshots, event files of the same run, and the age of the file. Checkpoints are checked as ZIP
archives with ``zipfile`` (CRC of every member) and are never loaded.
"""

from __future__ import annotations

import itertools
import math
import os
from functools import lru_cache
from typing import TYPE_CHECKING

from ..core.fsio import open_regular
from ..core.model import Event, EventKind, Location, LogFile, Role, Series
from ..core.values import fmt_step
from .base import (
    CheckResult,
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
    event_location,
    finite,
    is_live,
)
from .registry import Phase, check
from .stats import stats

TL_LOG_PREFIX = Rule("TL-LOG-PREFIX", Level.WARN, "log-coverage", "The log ends before the run does")
TL_RUN_INCOMPLETE = Rule("TL-RUN-INCOMPLETE", Level.INFO, "run-end", "The run stopped before its planned end")
TL_RESUME = Rule("TL-RESUME", Level.INFO, "resume", "The run restarted from an earlier step")
TL_DUPLICATE_STEPS = Rule("TL-DUPLICATE-STEPS", Level.WARN, "resume", "Steps logged twice with different values")
TL_EVENTS_TRUNCATED = Rule("TL-EVENTS-TRUNCATED", Level.INFO, "events-integrity",
                           "An event file ends in a partial record")
TL_SERIES_DISAGREE = Rule("TL-SERIES-DISAGREE", Level.INFO, "series-agreement",
                          "Another series of the run contradicts a divergence finding")
TL_CKPT_MISSING = Rule("TL-CKPT-MISSING", Level.WARN, "checkpoints", "A checkpoint the log saved is missing")
TL_CKPT_TRUNCATED = Rule("TL-CKPT-TRUNCATED", Level.WARN, "checkpoints", "A checkpoint the log saved is cut short")
TL_CKPT_CORRUPT = Rule("TL-CKPT-CORRUPT", Level.WARN, "checkpoints", "A checkpoint fails its archive CRC")

END_OF_LOG_RULES = {"TP-DIVERGE", "TP-DEAD-RUN", "TP-OVERFIT", "TP-ZERO-LOSS-ONSET", "TP-STEP-CLIFF"}


def _loss(ctx: Context) -> Series | None:
    train, _ = ctx.judged(Role.TRAIN_LOSS)
    return max(train, key=len) if train else None


def _last_point(ctx: Context) -> tuple[Series, int] | None:
    s = _loss(ctx)
    if s is None or not len(s):
        best = max((x for x in ctx.log.series.values() if len(x)), key=lambda x: x.steps[-1], default=None)
        return (best, len(best) - 1) if best is not None else None
    return s, len(s) - 1


def _rel_to_run(path: str, log_path: str) -> str:
    from ..runs import run_dir  # start-up: discovery is loaded only for a log that names checkpoints

    return os.path.relpath(path, run_dir(log_path))


# -- TL-LOG-PREFIX --------------------------------------------------------------------------------
@check("log-coverage", TL_LOG_PREFIX, order=180, description="does the log cover the whole run")
def check_log_prefix(ctx: Context) -> CheckResult:
    res = CheckResult()
    if "artefacts" not in ctx.facts:
        res.skipped = SkipReason(Skip.NOT_APPLICABLE, "the run directory was not examined")
        return res
    last = _last_point(ctx)
    if last is None:
        res.skipped = SkipReason(Skip.NO_SERIES, "no logged step to compare with the run's artefacts")
        return res
    s, i = last
    res.coverage[s.label] = None
    if not ctx.facts.get("log_is_prefix"):
        return res
    values = {"log_last": Step(s.steps[i]), "line": ctx.point(s, i).line or 0,
              "artefact": _rel_to_run(ctx.facts["run_last_path"], ctx.log.path), "kind": ctx.facts["run_last_kind"],
              "run_step": Step(ctx.facts["run_last_step"])}
    where = "line {line}" if values["line"] else "its last record"
    f = Finding(TL_LOG_PREFIX.id, TL_LOG_PREFIX.level,
                "The run went on after this log ends: the log is a prefix of the run (copied early, or a file "
                "left from an earlier, shorter run). Findings about the end of this log describe the end of the "
                "log, not of the run.",
                Evidence(values, "the log's last step is {log_last} (" + where + "); the run's {kind} "
                                 "{artefact} is from step {run_step}"),
                ctx.point(s, i), s.label, s.key, marks={i: "end"})
    path = ctx.facts["run_last_path"]
    f.related.append(Related("later-artefact", Location(path, None), f"{values['kind']} at step "
                             f"{fmt_step(ctx.facts['run_last_step'])}"))
    res.findings.append(f)
    return res


# -- TL-RUN-INCOMPLETE ----------------------------------------------------------------------------
@check("run-end", TL_RUN_INCOMPLETE, order=190, description="did the run reach its planned end",
       thresholds=("running_if_written_within_s",))
def check_run_end(ctx: Context) -> CheckResult:
    res = CheckResult()
    log = ctx.log
    last = _last_point(ctx)
    if last is None:
        if _lightning_unfinished(log) is not None:
            return _lightning_without_series(ctx)
        res.skipped = SkipReason(Skip.NO_SERIES, "no logged step")
        return res
    s, i = last
    res.coverage[s.label] = None
    values: dict[str, Any] = {"last_step": Step(s.steps[i])}
    parts = ["last logged step {last_step}"]
    stopped_early = False
    facts = log.facts
    if isinstance(facts.get("max_steps"), int | float) and facts["max_steps"] > 0:
        reached = float(facts.get("global_step", s.steps[i]))
        # A log written every k steps ends up to k steps before the planned end when the run finished.
        tail = s.steps[max(0, i - 5):i + 1]
        spacing = min((b - a for a, b in itertools.pairwise(tail) if b > a), default=1.0)
        if reached + spacing <= float(facts["max_steps"]):
            values.update(reached=Step(reached), planned=Step(facts["max_steps"]))
            parts.append("step {reached} of {planned} planned")
            stopped_early = True
    if "planned_epochs" in facts and "epoch" in facts:
        epoch, planned = int(facts["epoch"]), int(facts["planned_epochs"])
        if epoch < planned - 1 if log.format == "coqui" else epoch < planned:
            values.update(epoch=epoch, epochs=planned)
            parts.append("in epoch {epoch} of {epochs}")
            stopped_early = True
    unfinished = facts.get("unfinished_epoch")
    if isinstance(unfinished, int) and "planned_epochs" in facts:
        # (the line where it began is not in the text: the reader's lines are the LSP's, a CLI counts its own)
        values.update(begun=unfinished, epochs=int(facts["planned_epochs"]))
        parts.append("epoch {begun} of {epochs} began and did not end")
        stopped_early = True
    dicts = facts.get("hf_train_dicts")
    if not stopped_early and isinstance(dicts, int) and log.last_event_of(EventKind.END_OF_RUN) is None:
        values["dicts"] = dicts
        parts.append("no end-of-training summary (train_runtime) after {dicts} logged dicts")
        stopped_early = True
    start = _lightning_unfinished(log)
    if not stopped_early and start is not None:
        values["start_line"] = start
        parts.append(_LIGHTNING_PART)
        stopped_early = True
    stop_event = log.last_event_of(EventKind.INTERRUPTED, EventKind.TRACEBACK)
    if stop_event is not None:
        values.update(marker=stop_event.kind.value, marker_line=stop_event.line or 0)
        parts.append("{marker} at line {marker_line}" if stop_event.line else "{marker}")
    if not stopped_early and stop_event is None:
        return res
    age = ctx.facts.get("age_s")
    if is_live(ctx):
        res.measurements.append(Measurement("run-end", s.label, {"running": True, "age_s": age},
                                            "written to moments ago: reported as running" if age is not None
                                            else "judged as live: reported as running"))
        return res
    if age is not None and ctx.facts.get("live") is None:
        values["quiet_s"] = ctx.th.running_if_written_within_s
        parts.append("not written to for more than {quiet_s} s")
    loc = event_location(log, stop_event) if stop_event is not None else ctx.point(s, i)
    message = ("The run stopped before its planned end" if stopped_early else "The log ends with an interruption")
    message += (": an interruption, a crash or a time limit. Findings about its end describe where it stopped, "
                "not where it would have got to.")
    f = Finding(TL_RUN_INCOMPLETE.id, TL_RUN_INCOMPLETE.level, message,
                Evidence(values, "; ".join(parts)), loc, s.label, s.key, marks={i: "end"})
    if stop_event is not None:
        f.related.append(Related("last-step", ctx.point(s, i), f"last logged step {fmt_step(s.steps[i])}"))
    res.findings.append(f)
    return res


# (the start line is the finding's location, not a number in its text: the reader's lines are the LSP's, and the
# CLI counts its own)
_LIGHTNING_PART = "Lightning's Trainer started and no '`Trainer.fit` stopped' line follows it"


def _lightning_unfinished(log: LogFile) -> int | None:
    """The line where Lightning's Trainer announced itself ("GPU available: …") when no "`Trainer.fit` stopped"
    line follows it: Lightning prints that line when fit() reaches its max_steps or max_epochs, so a stdout that
    ends without it stopped short of its limit (killed, a crash, or a callback such as EarlyStopping that stops
    the fit without a word at its default verbosity). None when there is no such start or the stop line follows."""
    start = log.facts.get("lightning_start_line")
    if not isinstance(start, int):
        return None
    end = log.last_event_of(EventKind.END_OF_RUN)
    return None if end is not None and (end.line or 0) > start else start


def _lightning_without_series(ctx: Context) -> CheckResult:
    """TL-RUN-INCOMPLETE on a Lightning stdout that holds no series (the curve is in the logger's metrics.csv or
    event files, judged in their own right): the finding is on the Trainer's start line."""
    res = CheckResult()
    start = _lightning_unfinished(ctx.log)
    assert start is not None
    if is_live(ctx):
        res.measurements.append(Measurement("run-end", "", {"running": True, "age_s": ctx.facts.get("age_s")},
                                            "judged as live: reported as running"))
        return res
    res.findings.append(Finding(
        TL_RUN_INCOMPLETE.id, TL_RUN_INCOMPLETE.level,
        "The run stopped before its planned end: an interruption, a crash, a time limit, or a callback that ended "
        "the fit (EarlyStopping says nothing at its default verbosity). Its curve is in the logger's files.",
        Evidence({"start_line": start}, _LIGHTNING_PART), Location(ctx.log.path, start, 1, start, 1)))
    return res


# -- TL-RESUME / TL-DUPLICATE-STEPS ---------------------------------------------------------------
@check("resume", TL_RESUME, TL_DUPLICATE_STEPS, order=200, description="restarts and steps logged twice")
def check_resume(ctx: Context) -> CheckResult:
    res = CheckResult()
    log = ctx.log
    s = _loss(ctx)
    if s is None:
        res.skipped = SkipReason(Skip.NO_SERIES, "no train-loss series to follow the steps of")
        return res
    res.coverage[s.label] = None
    for e in log.events_of(EventKind.RESUME, EventKind.RESTART):
        values = {"step": Step(e.step if e.step is not None else math.nan)}
        res.findings.append(Finding(
            TL_RESUME.id, TL_RESUME.level,
            "The run was restarted from an earlier step." + (
                " TensorBoard drops the points the restart overwrote, and so does trainlint; the event says "
                "how many." if e.kind == EventKind.RESTART else ""),
            Evidence(values, "restart at step {step}"), event_location(log, e), s.label, s.key))
    st = stats(s)
    dups = st.dups
    if st.first_back is not None:
        i, prev = st.first_back, st.prev_of_back
        values = {"series": s.label, "from_step": Step(s.steps[prev]), "to_step": Step(s.steps[i]),
                  "line": ctx.point(s, prev).line or 0}
        template = "{series}: step {to_step} follows step {from_step}"
        if dups and all(b >= i for _, b in dups):
            # `tee -a` after a restart: the steps the new attempt logs again are the seam's doing, not a
            # separate fault. One finding names the seam and counts them.
            values["relogged"] = len(dups)
            template += "; {relogged} steps after it were logged before it too"
            dups = []
        f = Finding(TL_RESUME.id, TL_RESUME.level,
                    "The steps go back: a restarted or resumed run appended to the same log. Rules that judge a "
                    "trend (TP-DIVERGE, TP-DEAD-RUN) judge the last attempt, from this seam on.",
                    Evidence(values, template), ctx.point(s, i),
                    s.label, s.key, marks={i: "restart", prev: "before"})
        f.related.append(Related("before-restart", ctx.point(s, prev), f"step {fmt_step(s.steps[prev])}"))
        res.findings.append(f)
    res.measurements.append(Measurement("resume", s.label, {"duplicate_steps": len(dups)},
                                        f"{len(dups)} steps logged twice with different values"))
    if dups:
        j, i = dups[0]
        values = {"series": s.label, "count": len(dups), "step": Step(s.steps[i]), "first": s.values[j],
                  "second": s.values[i]}
        f = Finding(TL_DUPLICATE_STEPS.id, TL_DUPLICATE_STEPS.level,
                    "The same steps were logged more than once with different values, as a resume without a purge "
                    "leaves them. The rules judged every value in file order (the later attempt last); the "
                    "earlier values may not belong to the run you are looking at.",
                    Evidence(values, "{series}: {count} steps logged twice with different values; step {step} "
                                     "was {first}, then {second}"),
                    ctx.point(s, i), s.label, s.key, marks={i: "duplicate", j: "first"})
        f.related.append(Related("first-value", ctx.point(s, j), f"step {fmt_step(s.steps[j])} first logged here"))
        res.findings.append(f)
    return res


# -- TL-EVENTS-TRUNCATED --------------------------------------------------------------------------
@check("events-integrity", TL_EVENTS_TRUNCATED, order=210, description="partial records in event files")
def check_events_truncated(ctx: Context) -> CheckResult:
    res = CheckResult()
    log = ctx.log
    if log.format != "tfevents":
        res.skipped = SkipReason(Skip.NOT_APPLICABLE, "not an event file")
        return res
    res.coverage["event files"] = None
    for e in log.events_of(EventKind.TRUNCATED):
        values = {"file": os.path.basename(log.members[e.file]) if log.members else os.path.basename(log.path),
                  "record": e.record if e.record is not None else -1, "present": e.detail.get("bytes_present", 0)}
        declared = e.detail.get("bytes_declared")
        template = "{file} ends in a partial record {record}: {present} bytes"
        if declared:
            values["declared"] = declared
            template += " of {declared}"
        res.findings.append(Finding(
            TL_EVENTS_TRUNCATED.id, TL_EVENTS_TRUNCATED.level,
            "The last record of the event file is incomplete: the writer was stopped mid-write, or is writing "
            "it now. Everything before it was read; the partial record (at most one logging call) is lost unless "
            "the writer completes it.",
            Evidence(values, template), event_location(log, e)))
    return res


# -- TL-CKPT-* ------------------------------------------------------------------------------------
# A checkpoint's members are CRC-checked when they hold at most this much: a real 5 GB checkpoint or a
# 1 MB zip bomb would otherwise be read whole on every judgement.
CKPT_CRC_BYTES = 512 << 20


def _zip_state(path: str) -> tuple[str | None, str]:
    """(rule id, what is wrong) for a damaged archive; (None, why not) when the CRCs were not read; (None, "")
    when intact or not a ZIP at all. Each file is examined once per (size, mtime, inode). Never unpickles."""
    try:
        st = os.stat(path)
    except OSError:
        return None, ""
    return _zip_state_of(path, st.st_size, st.st_mtime_ns, st.st_ino)


@lru_cache(maxsize=256)
def _zip_state_of(path: str, size: int, mtime_ns: int, inode: int) -> tuple[str | None, str]:
    import zipfile  # only when a log names checkpoints: zipfile pulls in bz2, lzma, shutil, pathlib

    if size == 0:
        return TL_CKPT_TRUNCATED.id, "the file is empty"
    try:
        with open_regular(path) as f:
            if f.read(4) != b"PK\x03\x04":
                return None, ""  # legacy (pickle) checkpoint: cannot be checked without loading it, so it is not
            f.seek(0)
            with zipfile.ZipFile(f) as z:  # the file checked above, not the path again
                members = z.infolist()
                for m in members:
                    if m.header_offset + m.compress_size > size:
                        return TL_CKPT_TRUNCATED.id, f"member {m.filename} extends past the end of the file"
                declared = sum(m.file_size for m in members)
                if declared > CKPT_CRC_BYTES:
                    return None, (f"its members declare {declared} bytes uncompressed, over the {CKPT_CRC_BYTES >> 20}"
                                  " MB a check reads; their CRCs were not read (the archive's directory is intact)")
                bad = z.testzip()
    except zipfile.BadZipFile as e:
        return TL_CKPT_TRUNCATED.id, f"the archive is cut short ({e})"
    except (OSError, EOFError, ValueError, NotImplementedError) as e:
        return TL_CKPT_CORRUPT.id, f"the archive cannot be read ({e})"
    if bad is not None:
        return TL_CKPT_CORRUPT.id, f"member {bad} fails its CRC"
    return None, ""


@check("checkpoints", TL_CKPT_MISSING, TL_CKPT_TRUNCATED, TL_CKPT_CORRUPT, order=220,
       description="checkpoints the log names, read as ZIP archives")
def check_checkpoints(ctx: Context) -> CheckResult:
    res = CheckResult()
    log = ctx.log
    kept = log.events_of(EventKind.CHECKPOINT, EventKind.BEST_MODEL)
    if not any(e.detail.get("path") for e in kept):
        res.skipped = SkipReason(Skip.NO_SERIES, "the log names no checkpoint files")
        return res
    if "artefacts" not in ctx.facts:  # before the list of saves: judge_log re-judges a growing log without facts
        res.skipped = SkipReason(Skip.NOT_APPLICABLE, "the run directory was not examined")
        return res
    saved = [e for e in kept if e.detail.get("path")]
    rd = os.path.dirname(log.path)
    present = {os.path.basename(a.path) for a in ctx.facts["artefacts"]}
    res.coverage["checkpoints"] = None
    newest: dict[EventKind, Event] = {}
    for e in saved:
        newest[e.kind] = e
    for e in saved:
        name = os.path.basename(str(e.detail["path"]).replace("\\", "/"))
        path = os.path.join(rd, name)
        if os.path.exists(path):
            rule_id, problem = _zip_state(path) if os.path.isfile(path) else (None, "")
            if rule_id is None and problem:
                res.coverage[name] = SkipReason(Skip.TOO_LARGE, problem)
            elif rule_id is not None:
                rule = TL_CKPT_TRUNCATED if rule_id == TL_CKPT_TRUNCATED.id else TL_CKPT_CORRUPT
                values = {"file": name, "size": os.path.getsize(path), "problem": problem}
                res.findings.append(Finding(
                    rule.id, rule.level,
                    "The checkpoint the log says it saved cannot be restored as it is: it was cut short (a full "
                    "disk, a killed copy) or corrupted on disk. Resume from an earlier checkpoint.",
                    Evidence(values, "{file} ({size} bytes): {problem}"), event_location(log, e)))
        elif e is newest.get(e.kind) and present and not ctx.facts.get("log_is_prefix"):
            # Trainers delete older checkpoints on purpose; only the newest one of each kind is expected,
            # only when the directory holds the run's artefacts at all, and not when the run went on
            # past this log (its later saves explain the deletions).
            values = {"file": name, "kind": e.kind.value, "step": Step(e.step if e.step is not None else math.nan)}
            res.findings.append(Finding(
                TL_CKPT_MISSING.id, TL_CKPT_MISSING.level,
                "The newest checkpoint the log says it saved is not in the run directory: it was deleted, moved, "
                "or never finished writing.",
                Evidence(values, "{kind} {file} (step {step}) is not in the run directory"), event_location(log, e)))
    return res


# -- TL-SERIES-DISAGREE ---------------------------------------------------------------------------
@check("series-agreement", TL_SERIES_DISAGREE, order=10, phase=Phase.AFTER,
       description="other series of the run that contradict a divergence-family finding",
       thresholds=("at_minimum_ratio",))
def series_disagree(ctx: Context, findings: list[Finding], measurements: list[Measurement]) -> list[Finding]:
    """Set beside each divergence-family finding the series of the same run that contradict it."""
    out: list[Finding] = []
    logs = [ctx.log] + [lg for lg in ctx.facts.get("companion_logs", []) if lg is not None]
    for f in findings:
        if f.id not in ("TP-DIVERGE", "TP-DEAD-RUN") or f.series_key is None:
            continue
        values: dict[str, Any] = {"series": f.series, "ratio": Ratio(f.evidence.values.get("ratio", math.nan))
                                  if "ratio" in f.evidence.values else f.evidence.values.get("improvement")}
        parts: list[str] = []
        related: list[Related] = []
        k = 0
        for m in measurements:
            if m.series == f.series:
                continue
            if m.check == "divergence" and m.values["ratio"] <= ctx.th.at_minimum_ratio:
                values.update({f"o{k}": m.series, f"r{k}": Ratio(m.values["ratio"]), f"w{k}": m.values["window"]})
                parts.append(f"{{o{k}}} ends at its lowest level (end/lowest {{r{k}}} over {{w{k}}}-point medians)")
                k += 1
            elif m.check == "heldout-trend" and m.values["intervals"] >= 2 and (
                    m.values["improved"] == m.values["intervals"] or m.values["last"] <= m.values["best"]):
                values.update({f"o{k}": m.series, f"i{k}": m.values["improved"], f"n{k}": m.values["intervals"],
                               f"a{k}": m.values["first"], f"b{k}": m.values["last"]})
                parts.append(f"{{o{k}}} improved at {{i{k}}} of {{n{k}}} evaluations ({{a{k}}} to {{b{k}}})")
                k += 1
        for lg in logs[1:]:
            held, _ = Context(lg, ctx.th).judged(Role.EVAL_LOSS)
            name = os.path.basename(lg.members[0]) if lg.members else os.path.basename(lg.path)
            for s in held:
                _, vals = finite(s)
                if len(vals) >= 3 and all(b < a for a, b in itertools.pairwise(vals)):
                    values.update({f"o{k}": f"{s.label} in {name}", f"i{k}": len(vals) - 1,
                                   f"n{k}": len(vals) - 1, f"a{k}": vals[0], f"b{k}": vals[-1]})
                    parts.append(f"{{o{k}}} improved at {{i{k}}} of {{n{k}}} evaluations ({{a{k}}} to {{b{k}}})")
                    related.append(Related("other-series", lg.locate(s, len(s) - 1), f"{s.label}: last evaluation"))
                    k += 1
        if not parts:
            continue
        head = "{series}: " + ("end/lowest level {ratio}" if "ratio" in f.evidence.values else "improvement {ratio}")
        d = Finding(TL_SERIES_DISAGREE.id, TL_SERIES_DISAGREE.level,
                    f"{f.id} on {f.series} is contradicted by other series of the same run. Both measurements stand: "
                    "a per-step loss can end high on noisy batches while the averages and the held-out loss say the "
                    "model kept improving. Judge the run by the held-out loss when it exists.",
                    Evidence(values, head + "; but " + "; ".join(parts)), f.location, f.series, f.series_key,
                    related=related)
        for m in measurements:
            if m.series != f.series and m.check in ("divergence", "heldout-trend"):
                s = next((x for x in ctx.log.series.values() if x.label == m.series), None)
                if s is not None and len(s):
                    d.related.append(Related("other-series", ctx.point(s, len(s) - 1), f"{m.series}: {m.text}"))
        out.append(d)
    return out



if TYPE_CHECKING:
    from typing import Any
