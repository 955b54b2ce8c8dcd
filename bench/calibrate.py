"""Calibrate the rules on the labelled population: bench/calibration.json and docs/calibration.md.

    make calibrate            # or: .venv/bin/python bench/calibrate.py [--jobs 2] [--live-prefixes]

Every run of fixtures/population/manifest.json is replayed at growing prefixes (5%, 10%, ... 95% of each of its
files' lines; of its records for an event file) and at its end, each prefix a copy in a temporary directory
(the fixture is never touched), judged as `trainlint check DIR` judges it: the same discovery (`runs.plan`), the
same configuration lookup and the same `judge.judge_path`. A document written whole (HF's trainer_state.json,
which the Trainer writes at a save, never line by line) is left out of the prefixes and present at the end.

Determinism: `check` judges the bytes (issue 30); a trainlint before that judged a file modified in the last 120 s
as a live run, so, for the figures before and after to compare, every copy is touched to
two hours before the start of the calibration, so every prefix and every end is judged as a stopped run,
whatever the clock (`--live-prefixes` instead judges the prefixes as runs still being written, with `now` at
the copy's mtime; the end is always a stopped run).

Figures are those of the report half (the manifest's `split`); the tune half is judged too (its runs are in
`runs`) so thresholds can be set on it. A faulty run is *detected* when, at its end, a rule that names its
fault (FAULT_RULES, the one table) has a finding on it (INFO counts: TL-RUN-INCOMPLETE, the killed run's rule,
is an INFO by design); a healthy run is a *false FAIL* / *false WARN* run when any prefix or its end has a FAIL /
WARN finding. The delay is counted in prefix points (5% of the run each) from the first prefix that holds the
onset line (or record) to the first prefix from which a rule naming the fault fires.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import os
import shutil
import statistics
import struct
import sys
import tempfile
import time
from collections import Counter
from multiprocessing import Pool

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANIFEST = os.path.join(ROOT, "fixtures", "population", "manifest.json")
POINTS = 20  # prefixes at 5%, 10%, ..., 95%, and the end

# The one table: which rules name each fault. A fault is detected when one of its rules fires.
FAULT_RULES: dict[str, tuple[str, ...]] = {
    # An RL run's divergence (the lr jump the generator injects) shows as its reward collapsing: its losses are
    # objective terms that no trend rule judges, so TL-REWARD-COLLAPSE is the rule that names it there.
    "diverge": ("TP-DIVERGE", "TL-REWARD-COLLAPSE"),
    "late-diverge": ("TP-DIVERGE", "TL-REWARD-COLLAPSE"),
    "nan": ("TP-NAN", "TP-NAN-GRAD", "TL-NAN-HIDDEN"),
    "frozen": ("TP-ZERO-GRAD", "TL-ZERO-GRAD-ONSET", "TP-FLAT", "TP-FLAT-ONSET", "TP-DEAD-RUN", "TL-HELDOUT-STILL"),
    "lr-zero": ("TP-ZERO-LR", "TP-ZERO-LR-PARTIAL", "TP-FLAT-ONSET"),
    "overfit": ("TP-OVERFIT", "TL-HELDOUT-RISE"),
    "eval-on-train": ("TL-EVAL-BELOW-TRAIN",),
    "stall": ("TP-STEP-CLIFF", "TP-LOADER-BOUND"),
    "killed": ("TL-RUN-INCOMPLETE", "TL-LOG-PREFIX"),
    "resume-nosched": ("TL-LR-RESUME",),
}
WHOLE_DOCUMENTS = ("trainer_state.json",)
ALARMS = ("FAIL", "WARN")


# ------------------------------------------------------------------------------------------- making prefixes
def _records(data: bytes) -> list[int]:
    """End offsets of the complete TFRecords of an event file (length, crc, body, crc)."""
    ends, pos = [], 0
    while pos + 12 <= len(data):
        (n,) = struct.unpack("<Q", data[pos:pos + 8])
        end = pos + 12 + n + 4
        if end > len(data):
            break
        ends.append(end)
        pos = end
    return ends


def _line_ends(data: bytes) -> list[int]:
    ends = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    if data and (not ends or ends[-1] != len(data)):
        ends.append(len(data))  # an unterminated last line is a line
    return ends


def run_files(run_dir: str) -> list[str]:
    out = []
    for dp, _d, fs in os.walk(run_dir):
        out += [os.path.relpath(os.path.join(dp, f), run_dir) for f in fs]
    return sorted(out)


def units(path: str) -> list[int]:
    """The cut points of a file: line ends, or record ends for an event file."""
    with open(path, "rb") as f:
        data = f.read()
    return _records(data) if "tfevents" in os.path.basename(path) else _line_ends(data)


def write_prefix(run_dir: str, files: dict[str, list[int]], k: int, dest: str, mtime: float) -> dict[str, int]:
    """Copy the first k/POINTS of each file's lines (records) to dest; returns the units kept per file."""
    kept = {}
    os.makedirs(dest, exist_ok=True)
    for rel, ends in files.items():
        if k < POINTS and os.path.basename(rel) in WHOLE_DOCUMENTS:
            continue
        n = len(ends) if k == POINTS else math.ceil(len(ends) * k / POINTS)
        target = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(os.path.join(run_dir, rel), "rb") as f:
            data = f.read(ends[n - 1] if n else 0)
        with open(target, "wb") as f:
            f.write(data)
        os.utime(target, (mtime, mtime))
        kept[rel] = n
    for dp, _d, _fs in os.walk(dest):
        os.utime(dp, (mtime, mtime))
    return kept


# ------------------------------------------------------------------------------------------------- judging
def judge_dir(path: str, now: float | None) -> list[dict]:
    """What `trainlint check PATH` finds: every judged log's findings (rule, level, file, line/record)."""
    from trainlint import config
    from trainlint.judge import judge_path
    from trainlint.runs import Companions, plan

    cfg = config.for_path(path)
    companions = Companions()
    out = []
    for item in plan(path, cfg).items:
        if item.format == "dataset":
            continue
        # `check` judges the bytes (issue 30): a prefix is judged live only when asked (--live-prefixes); the
        # keyword is passed only to a trainlint that has it, so the same script measures the code before it
        live = {"live": None if now is not None else False} if "live" in inspect.signature(judge_path).parameters \
            else {}
        rep = judge_path(item.path, cfg, item.format, item.facts, companions, now=now, **live)
        found = []
        for f in rep.findings:
            if f.level.value not in ("FAIL", "WARN", "INFO"):
                continue
            where = f.location.line if f.location.line is not None else f.location.record
            # a rule folded into another finding's evidence (one problem, one finding) still fired
            folded = str(f.evidence.values.get("folded_rules", "")).split(", ")
            found.extend([rid, f.level.value, where, f.series_key] for rid in [f.id, *[r for r in folded if r]])
        out.append({"file": os.path.relpath(rep.path, path), "verdict": rep.verdict.value, "findings": found})
    return out


def verdict_of(reports: list[dict]) -> str:
    vs = [r["verdict"] for r in reports]
    for v in ("FAIL", "WARN", "PASS", "NOT-CHECKED"):
        if v in vs:
            return v
    return "NOT-CHECKED"


def replay(job: tuple[dict, float, bool]) -> dict:
    """Judge one run at every prefix and at its end."""
    run, mtime, live = job
    src = os.path.join(ROOT, run["path"])
    files = {rel: units(os.path.join(src, rel)) for rel in run_files(src)}
    onset = run.get("onset") or {}
    onset_k = None
    points = []
    with tempfile.TemporaryDirectory(prefix="trainlint-calibrate-") as tmp:
        for k in range(1, POINTS + 1):
            dest = os.path.join(tmp, f"p{k:02d}", os.path.basename(src))
            kept = write_prefix(src, files, k, dest, mtime)
            where = onset.get("file")
            pos = onset.get("line") if onset.get("line") is not None else onset.get("record")
            # a line number is 1-based; a record index 0-based
            if onset_k is None and where in kept and pos is not None and \
                    kept[where] >= (pos if onset.get("line") is not None else pos + 1):
                onset_k = k
            reports = judge_dir(dest, mtime if (live and k < POINTS) else None)
            points.append({"k": k, "verdict": verdict_of(reports),
                           "findings": sorted({(f[0], f[1]) for r in reports for f in r["findings"]})})
            shutil.rmtree(os.path.dirname(dest))
    return {"path": run["path"], "id": run["id"], "framework": run["framework"], "label": run["label"],
            "split": run["split"], "onset_k": onset_k, "points": points}


# ---------------------------------------------------------------------------------------------- statistics
def binom_cdf(x: int, n: int, p: float) -> float:
    if p <= 0:
        return 1.0
    if p >= 1:
        return 1.0 if x >= n else 0.0
    lp, lq = math.log(p), math.log1p(-p)
    return min(1.0, sum(math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp
                                 + (n - i) * lq) for i in range(x + 1)))


def upper95(x: int, n: int) -> float:
    """One-sided 95% Clopper-Pearson upper bound of a rate seen x times in n (for x = 0: 1 - 0.05^(1/n))."""
    if n == 0:
        return 1.0
    if x >= n:
        return 1.0
    lo, hi = x / n, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if binom_cdf(x, n, mid) > 0.05:
            lo = mid
        else:
            hi = mid
    return hi


def fired(point: dict, rules: tuple[str, ...], levels: tuple[str, ...] = ("FAIL", "WARN", "INFO")) -> bool:
    return any(r in rules and lv in levels for r, lv in point["findings"])


def summarise(results: list[dict]) -> dict:
    report = [r for r in results if r["split"] == "report"]
    healthy = [r for r in report if r["label"] == "healthy"]
    faulty = [r for r in report if r["label"] != "healthy"]
    by_fault: dict[str, dict] = {}
    for fault in sorted({r["label"] for r in faulty}):
        runs = [r for r in faulty if r["label"] == fault]
        rules = FAULT_RULES[fault]
        det = [r for r in runs if fired(r["points"][-1], rules)]
        delays = [d for d in (delay(r) for r in det) if d is not None]
        by_fault[fault] = {"runs": len(runs), "detected": len(det),
                           "median_delay_points": statistics.median(delays) if delays else None}
    return {
        "healthy": {"runs": len(healthy), "prefixes": sum(len(r["points"]) for r in healthy),
                    "false_fail_runs": sum(any(any(lv == "FAIL" for _r, lv in p["findings"]) for p in r["points"])
                                           for r in healthy),
                    "false_warn_runs": sum(any(any(lv == "WARN" for _r, lv in p["findings"]) for p in r["points"])
                                           for r in healthy)},
        "faulty": {"runs": len(faulty), "detected": sum(v["detected"] for v in by_fault.values()),
                   "by_fault": by_fault},
        "runs": [{"path": r["path"], "label": r["label"], "verdict": r["points"][-1]["verdict"]}
                 for r in sorted(results, key=lambda r: r["path"])],
    }


def delay(r: dict) -> int | None:
    """Prefix points from the onset's prefix to the first prefix from which a rule naming the fault fires."""
    if r["onset_k"] is None:
        return None
    rules = FAULT_RULES[r["label"]]
    for p in r["points"]:
        if p["k"] >= r["onset_k"] and fired(p, rules):
            return p["k"] - r["onset_k"]
    return None


# --------------------------------------------------------------------------------------------------- the doc
def doc(results: list[dict], summary: dict, seconds: float, jobs: int, live: bool) -> str:
    report = [r for r in results if r["split"] == "report"]
    healthy = [r for r in report if r["label"] == "healthy"]
    faulty = [r for r in report if r["label"] != "healthy"]
    nh = len(healthy)
    h = summary["healthy"]
    import subprocess

    rules_at = subprocess.run(["git", "log", "-1", "--format=%h %cs", "--", "server"], cwd=ROOT, capture_output=True,
                              text=True).stdout.strip() or "unknown"
    unjudged = Counter(r["framework"] for r in healthy if r["points"][-1]["verdict"] == "NOT-CHECKED")
    lines = [
        "# Calibration on a labelled population of real runs",
        "",
        "Made by `make calibrate` (`bench/calibrate.py`) from `fixtures/population/` (made by `make population`, "
        "`bench/population/make_population.py`): tiny real CPU trainings by HF Trainer, Lightning, Keras, plain "
        "PyTorch loops, scikit-learn, LightGBM and a REINFORCE loop on gymnasium's CartPole, each healthy or with one "
        "fault injected at a random onset. The label is what the generator injected, never trainlint's verdict.",
        "",
        f"Each run is replayed at {POINTS - 1} prefixes (every 5% of each file's lines; of its records for an event "
        "file) and at its end, every copy in a temporary directory touched to two hours before the calibration "
        "started, so every judgement is that of a stopped run whatever the clock (`check` judges the bytes; "
        "the touch keeps the figures of a trainlint before that comparable)"
        + (" — except that the prefixes were judged as live runs (`--live-prefixes`)" if live else "")
        + ". HF's trainer_state.json, written whole at a save, is present at the end only. Judging is "
        "`trainlint check DIR`'s: `runs.plan`, `config.for_path`, `judge.judge_path`.",
        "",
        f"Figures are those of the **report half** ({len(report)} runs: {nh} healthy, {len(faulty)} faulty); the tune "
        f"half ({len(results) - len(report)} runs) is where thresholds may be set. {len(results)} runs, "
        f"{sum(len(r['points']) for r in results)} judgements in {seconds:.0f} s with {jobs} processes. Rules as of "
        f"the last commit to server/: {rules_at}.",
        "",
        "## Summary",
        "",
        "| | runs | at any prefix or the end | 95% upper bound of the rate |",
        "|---|---|---|---|",
        f"| healthy runs with a FAIL | {nh} | {h['false_fail_runs']} | {upper95(h['false_fail_runs'], nh):.1%} |",
        f"| healthy runs with a WARN | {nh} | {h['false_warn_runs']} | {upper95(h['false_warn_runs'], nh):.1%} |",
        "",
        "The bound is the one-sided 95% Clopper–Pearson upper limit of a binomial rate (for 0 of n it is "
        "1 − 0.05^(1/n), about 3/n: the rule of three). Healthy runs NOT-CHECKED at their end (nothing read as a "
        f"loss; counted as no alarm): {sum(unjudged.values())}"
        + (" (" + ", ".join(f"{k} {v}" for k, v in sorted(unjudged.items())) + ")" if unjudged else "") + ".",
        "",
        "## Detection per fault (report half, at the run's end)",
        "",
        "A fault is detected when a rule that names it has a finding at the end of the run (FAIL, WARN or INFO). "
        "The delay is in prefix points (each 5% of the run) from the first prefix that holds the onset line to the "
        "first prefix from which such a rule fires.",
        "",
        "| fault | rules that name it | runs | detected | median delay (points) | what fired instead "
        "(undetected runs) |",
        "|---|---|---|---|---|---|",
    ]
    for fault, v in summary["faulty"]["by_fault"].items():
        instead: Counter = Counter()
        for r in faulty:
            if r["label"] == fault and not fired(r["points"][-1], FAULT_RULES[fault]):
                fs = [f"{rule} {lv}" for rule, lv in r["points"][-1]["findings"] if lv in ALARMS]
                instead.update(fs or [f"nothing ({r['points'][-1]['verdict']})"])
        md = "-" if v["median_delay_points"] is None else f"{v['median_delay_points']:g}"
        lines.append(f"| {fault} | {', '.join(FAULT_RULES[fault])} | {v['runs']} | {v['detected']} | {md} | "
                     + (", ".join(f"{k} ×{n}" for k, n in instead.most_common(4)) or "-") + " |")
    f = summary["faulty"]
    # the prefixes before a fault shows are a healthy run's: an alarm there is a false one
    early_runs = {lv: sum(any(p["k"] < (r["onset_k"] or 0) and any(x == lv for _rule, x in p["findings"])
                              for p in r["points"]) for r in faulty) for lv in ALARMS}
    lines += ["", f"Detected: {f['detected']} of {f['runs']} faulty runs "
                  f"({f['detected'] / max(1, f['runs']):.0%}). Before their onset (prefixes that do not yet hold the "
                  f"fault), {early_runs['FAIL']} faulty runs had a FAIL and {early_runs['WARN']} a WARN at some "
                  "prefix.", "",
              "## Per rule (report half)", "",
              "Healthy columns: runs on which the rule fired at that level at any prefix or at the end, with the 95% "
              "upper bound of its false-alarm rate. Detections: faulty runs whose fault the rule names and on which "
              "it fired at the end; on other faults: faulty runs of another fault on which it fired (FAIL/WARN) at "
              "the end.", "",
              "| rule | healthy FAIL | healthy WARN | 95% upper bound (FAIL or WARN) | detections | median delay "
              "(points) | on other faults |",
              "|---|---|---|---|---|---|---|"]
    rules = sorted({rule for r in report for p in r["points"] for rule, lv in p["findings"] if lv in ALARMS}
                   | {rule for rs in FAULT_RULES.values() for rule in rs})
    for rule in rules:
        hf_ = sum(any(rl == rule and lv == "FAIL" for p in r["points"] for rl, lv in p["findings"]) for r in healthy)
        hw = sum(any(rl == rule and lv == "WARN" for p in r["points"] for rl, lv in p["findings"]) for r in healthy)
        ha = sum(any(rl == rule and lv in ALARMS for p in r["points"] for rl, lv in p["findings"]) for r in healthy)
        named = [r for r in faulty if rule in FAULT_RULES[r["label"]]]
        dets = [r for r in named if fired(r["points"][-1], (rule,))]
        ds = [d for d in (delay_rule(r, rule) for r in dets) if d is not None]
        other = sum(fired(r["points"][-1], (rule,), ALARMS) for r in faulty if rule not in FAULT_RULES[r["label"]])
        lines.append(f"| {rule} | {hf_} | {hw} | {upper95(ha, nh):.1%} | "
                     + (f"{len(dets)} of {len(named)}" if named else "-") + " | "
                     + (f"{statistics.median(ds):g}" if ds else "-") + f" | {other} |")
    lines += ["", "## Population (both halves)", "",
              "| framework | healthy | faulty | report half (healthy / faulty) |", "|---|---|---|---|"]
    for fw in sorted({r["framework"] for r in results}):
        rs = [r for r in results if r["framework"] == fw]
        hh = sum(r["label"] == "healthy" for r in rs)
        rh = sum(r["label"] == "healthy" and r["split"] == "report" for r in rs)
        rf = sum(r["label"] != "healthy" and r["split"] == "report" for r in rs)
        lines.append(f"| {fw} | {hh} | {len(rs) - hh} | {rh} / {rf} |")
    return "\n".join(lines) + "\n"


def delay_rule(r: dict, rule: str) -> int | None:
    if r["onset_k"] is None:
        return None
    for p in r["points"]:
        if p["k"] >= r["onset_k"] and fired(p, (rule,)):
            return p["k"] - r["onset_k"]
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--live-prefixes", action="store_true", help="judge the prefixes as runs still being written")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "calibration.json"))
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "calibration.md"))
    ap.add_argument("--detail", default=os.path.join(tempfile.gettempdir(), "trainlint-calibration-detail.json"),
                    help="every run's findings at every prefix (not committed)")
    ap.add_argument("--only", default=None, help="judge only runs whose id contains this")
    args = ap.parse_args()
    with open(MANIFEST) as f:
        runs = json.load(f)["runs"]
    if args.only:
        runs = [r for r in runs if args.only in r["id"]]
    t0 = time.time()
    mtime = t0 - 7200
    jobs = [(r, mtime, args.live_prefixes) for r in runs]
    if args.jobs > 1:
        with Pool(args.jobs) as pool:
            results = list(pool.imap_unordered(replay, jobs, chunksize=4))
    else:
        results = [replay(j) for j in jobs]
    seconds = time.time() - t0
    results.sort(key=lambda r: r["path"])
    summary = summarise(results)
    with open(args.out, "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    with open(args.doc, "w") as f:
        f.write(doc(results, summary, seconds, args.jobs, args.live_prefixes))
    with open(args.detail, "w") as f:
        json.dump(results, f)
    h, fa = summary["healthy"], summary["faulty"]
    print(f"{len(results)} runs, {sum(len(r['points']) for r in results)} judgements in {seconds:.0f} s "
          f"({args.jobs} processes). Report half: healthy {h['runs']} (false FAIL runs {h['false_fail_runs']}, "
          f"false WARN runs {h['false_warn_runs']}); faulty {fa['runs']}, detected {fa['detected']}.",
          file=sys.stderr)


if __name__ == "__main__":
    main()
