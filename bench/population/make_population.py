"""Make the labelled population of real runs: fixtures/population/<framework>/<run-id>/ and manifest.json.

    make population                       # every run of the plan not written yet, then the manifest
    python bench/population/make_population.py [--per-group K] [--frameworks hf,rl] [--manifest-only]

Several hundred tiny CPU trainings by the real frameworks (HF Trainer, Lightning, Keras, plain PyTorch loops,
scikit-learn, LightGBM, REINFORCE on gymnasium's CartPole), healthy or with one fault injected at a random onset.
The label is the generator's: what it injected, never what trainlint says. The plan is fixed by the run ids
(each run's parameters are drawn from a generator seeded by its id), so a second call makes only the runs
whose label record (fixtures/population/.labels/<id>.json, written last) is missing: the population can be built
over more than one session, a framework at a time. The manifest is rebuilt from the records that exist.

Each framework's runs go to one worker process in the population environment (POPULATION_PYTHON; `make
population` makes it under ~/.cache/trainlint-population with torch 2.13.0 CPU), which imports the framework
once and forks a child per run. At most two workers run at once (the machine has two cores).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
POP = os.path.join(ROOT, "fixtures", "population")
LABELS = os.path.join(POP, ".labels")

HEALTHY = {"hf": 50, "lightning": 50, "keras": 50, "torch": 60, "sklearn": 45, "lightgbm": 45, "rl": 40}
FAULTS = {
    "hf": ["diverge", "late-diverge", "nan", "frozen", "lr-zero", "overfit", "eval-on-train", "killed",
           "resume-nosched"],
    "lightning": ["diverge", "late-diverge", "nan", "frozen", "lr-zero", "overfit", "eval-on-train", "killed",
                  "stall"],
    "keras": ["diverge", "late-diverge", "nan", "lr-zero", "eval-on-train", "killed"],
    "torch": ["diverge", "late-diverge", "nan", "frozen", "lr-zero", "overfit", "eval-on-train", "stall",
              "killed", "resume-nosched"],
    "sklearn": ["diverge", "late-diverge", "nan", "frozen", "killed"],
    "lightgbm": ["diverge", "late-diverge", "overfit", "eval-on-train", "killed"],
    "rl": ["diverge", "nan", "frozen", "lr-zero", "killed"],
}
PER_FAULT = {"hf": 4, "lightning": 4, "keras": 5, "torch": 5, "sklearn": 5, "lightgbm": 5, "rl": 5}


def plan() -> list[dict]:
    """Every run of the population: id, framework, label (in a fixed order, the ids fix the parameters)."""
    out = []
    for fw, n in HEALTHY.items():
        out += [{"id": f"{fw}-healthy-{i:03d}", "framework": fw, "label": "healthy"} for i in range(n)]
        for fault in FAULTS[fw]:
            out += [{"id": f"{fw}-{fault}-{i:03d}", "framework": fw, "label": fault} for i in range(PER_FAULT[fw])]
    return out


def _loguniform(rng: random.Random, a: float, b: float) -> float:
    return float(f"{math.exp(rng.uniform(math.log(a), math.log(b))):.3g}")


def params(run: dict) -> dict:
    """The run's randomised parameters, drawn from a generator seeded by its id (so they never change)."""
    rng = random.Random(int(hashlib.sha256(run["id"].encode()).hexdigest()[:16], 16))
    fw, label = run["framework"], run["label"]
    p: dict = {"seed": rng.randrange(1, 10**6), "noise": round(rng.uniform(0.02, 0.8), 3),
               "bs": rng.choice([8, 16, 32, 64]), "hidden": rng.choice([16, 32, 64]),
               "act": rng.choice(["tanh", "relu", "gelu"]), "optim": rng.choice(["adamw", "adamw", "sgd"]),
               "n": rng.choice([256, 512, 1024])}
    p["lr"] = _loguniform(rng, 3e-4, 5e-3) if p["optim"] == "adamw" else _loguniform(rng, 3e-3, 5e-2)
    p["schedule"] = rng.choice(["constant", "linear", "cosine", "restarts", "step"])
    if p["schedule"] == "restarts":
        p["cycles"] = rng.choice([2, 3, 4])
    length_key, total = {
        "hf": ("steps", rng.randrange(120, 301)), "lightning": ("steps", rng.randrange(120, 301)),
        "torch": ("steps", rng.randrange(120, 321)), "keras": ("epochs", rng.randrange(15, 41)),
        "sklearn": ("epochs", rng.randrange(30, 121)), "lightgbm": ("rounds", rng.randrange(100, 401)),
        "rl": ("updates", rng.randrange(30, 61)),
    }[fw]
    p[length_key] = total
    p["warmup"] = rng.choice([0, 0, int(total * rng.uniform(0.03, 0.15))])
    p["clip"] = rng.choice([1.0, 1.0, 5.0])
    points = rng.choice([30, 45, 60, 80])  # logged train points: small files, still a noisy curve
    if fw in ("hf", "lightning", "torch"):
        p["log_every"] = max(1, total // points)
        p["eval_every"] = max(p["log_every"], total // rng.choice([8, 12, 20]))
    elif fw == "lightgbm":
        p.update(log_every=max(1, total // points), leaves=rng.choice([7, 15, 31]),
                 min_leaf=rng.choice([5, 20, 40]), bagging=rng.choice([1.0, 0.8, 0.6]))
        p["lr"] = _loguniform(rng, 0.01, 0.2)
    elif fw == "rl":
        p.update(log_every=rng.choice([1, 1, 2]), episodes=rng.choice([1, 2]),
                 gamma=rng.choice([0.95, 0.99]), lr=_loguniform(rng, 1e-3, 1e-2))
    elif fw == "sklearn":
        p["task"] = rng.choice(["regress", "classify"])
        p["lr"] = _loguniform(rng, 1e-4, 3e-3) if p["optim"] == "adamw" else _loguniform(rng, 1e-3, 2e-2)
    if fw == "lightning":
        p["logger"] = rng.choice(["csv", "csv", "tensorboard"])
    if fw == "torch":
        p["logger"] = rng.choice(["print", "jsonl", "csv", "tensorboard"])
    if label == "healthy":
        if rng.random() < 0.2 and fw in ("hf", "lightning", "torch"):
            p["spike"] = int(total * rng.uniform(0.2, 0.8))
        if rng.random() < 0.3 and fw in ("lightning", "keras", "sklearn", "lightgbm"):
            p["early_stop"] = rng.choice([3, 5, 10])
        if fw == "sklearn":
            p["partial"] = rng.random() < 0.5
        return p
    # the fault's onset: a random point of the run (late divergence: in its last 15-30%)
    p["onset"] = int(total * rng.uniform(0.2, 0.8))
    if label in ("diverge", "late-diverge"):
        # the learning rate is taken to a level this model cannot train at: Adam at 0.5-3 (boosting: 2.5-6,
        # past the step that overshoots), without clipping; late: a ramp to it from an onset in the last 15-30%
        p["optim"] = "adamw"
        target = _loguniform(rng, 2.5, 6) if fw == "lightgbm" else _loguniform(rng, 0.5, 3)
        p["clip"] = 1e9
        if label == "diverge":
            p["factor"] = round(target / p["lr"], 2)
        else:
            # late: the learning rate ramps from the onset (in the last 15-30% of the run) to the target, as a
            # multiple of the base learning rate (worker.lr_mult), whatever the schedule had decayed to
            p["onset"] = int(total * rng.uniform(0.7, 0.85))
            p["peak"] = round(target / p["lr"], 2)
            if fw == "sklearn":  # its n_iter_no_change=10 ends the fit 10 epochs after the best loss
                p["ramp"] = 6
    elif label == "frozen":
        p["onset"] = rng.choice([0, p["onset"]])
    elif label == "stall":
        p["onset"] = int(total * rng.uniform(0.5, 0.85))
        p["sleep"] = round(min(0.2, 8.0 / max(1, total - p["onset"])), 3)
        if fw == "torch":
            p["logger"] = rng.choice(["jsonl", "csv", "tensorboard"])  # the formats that carry a time per step
        else:
            p["logger"] = "tensorboard"
    elif label == "resume-nosched":
        p["warmup"] = max(5, int(total * rng.uniform(0.08, 0.2)))
        p["onset"] = max(p["warmup"] + 10, p["onset"] // 10 * 10)
        p["crash"] = min(total - 5, p["onset"] + rng.randrange(10, 61))
    elif label == "nan":
        p["nan_filter"] = rng.choice([True, False])
    elif label == "overfit":
        # from the onset the run fits a few examples with noisy labels, hard: Adam at a constant learning rate
        # high enough to memorise them in the steps left, more capacity, label noise about the targets' spread
        # (a decaying schedule at 3e-4, or SGD, left most such runs still improving on held-out data)
        p["onset"] = int(total * rng.uniform(0.2, 0.5))
        p["schedule"] = "constant"
        p["label_noise"] = 3.0
        if fw in ("hf", "lightning", "torch"):
            p["hidden"] = 128
            p["optim"] = "adamw"
            p["lr"] = _loguniform(rng, 2e-3, 1e-2)
            p["eval_every"] = max(5, min(p["eval_every"], total // 12))
        elif fw == "lightgbm":
            p["lr"] = _loguniform(rng, 0.08, 0.2)
    if fw == "sklearn" and label != "healthy":
        p["partial"] = True
    return p


def split_of(runs: list[dict]) -> dict[str, str]:
    """Half and half by the hash of the id, within each framework x label group (so each half holds both)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for r in runs:
        groups.setdefault((r["framework"], r["label"]), []).append(r["id"])
    out = {}
    for key, ids in groups.items():
        # which half takes the odd one out of a group is drawn by the group's hash too (not always the tune half)
        first = int(hashlib.sha256("/".join(key).encode()).hexdigest(), 16) % 2
        for i, rid in enumerate(sorted(ids, key=lambda s: hashlib.sha256(s.encode()).hexdigest())):
            out[rid] = "tune" if (i + first) % 2 == 0 else "report"
    return out


def write_manifest() -> dict:
    runs = []
    for fw in HEALTHY:
        d = os.path.join(LABELS, fw)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith(".json"):
                with open(os.path.join(d, name)) as f:
                    runs.append(json.load(f))
    split = split_of([{"id": r["id"], "framework": r["framework"], "label": r["label"]} for r in plan()])
    out = {"about": "Labelled population of real tiny CPU runs (bench/population/make_population.py). The label is "
                    "the fault the generator injected, never trainlint's verdict; onset is the step where it was "
                    "injected and the first log line (or event-file record) that shows it.",
           "runs": [{"path": f"fixtures/population/{r['framework']}/{r['id']}", "id": r["id"],
                     "framework": r["framework"], "label": r["label"], "onset": r["onset"], "params": r["params"],
                     "split": split[r["id"]], "exit": r["exit"]} for r in runs]}
    with open(os.path.join(POP, "manifest.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-group", type=int, default=None, help="make at most K runs of each framework x label")
    ap.add_argument("--frameworks", default=",".join(HEALTHY), help="comma-separated frameworks to make")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes at once (at most 2 on this machine)")
    ap.add_argument("--manifest-only", action="store_true")
    args = ap.parse_args()
    python = os.environ.get("POPULATION_PYTHON", sys.executable)
    if not args.manifest_only:
        wanted = set(args.frameworks.split(","))
        todo: dict[str, list[dict]] = {}
        seen: dict[tuple[str, str], int] = {}
        for r in plan():
            key = (r["framework"], r["label"])
            seen[key] = seen.get(key, 0) + 1
            if r["framework"] not in wanted or (args.per_group is not None and seen[key] > args.per_group):
                continue
            if os.path.exists(os.path.join(LABELS, r["framework"], r["id"] + ".json")):
                continue  # written already: resumable
            todo.setdefault(r["framework"], []).append(
                {"id": r["id"], "dir": os.path.join(POP, r["framework"], r["id"]), "label": r["label"],
                 "params": params(r)})
        for fw in todo:  # round-robin over the labels: a partial population is a balanced one
            todo[fw].sort(key=lambda s: (int(s["id"].rsplit("-", 1)[1]), s["label"]))
        running: list[tuple[str, subprocess.Popen, str, float]] = []
        queue = sorted(todo, key=lambda fw: -len(todo[fw]))
        print(f"{sum(len(v) for v in todo.values())} runs to make: "
              + ", ".join(f"{fw} {len(todo[fw])}" for fw in queue), flush=True)
        while queue or running:
            while queue and len(running) < min(2, args.jobs):
                fw = queue.pop(0)
                fd, specs = tempfile.mkstemp(suffix=f"-{fw}.json")
                with os.fdopen(fd, "w") as f:
                    json.dump(todo[fw], f)
                proc = subprocess.Popen([python, os.path.join(HERE, "worker.py"), fw, specs,
                                         os.path.join(LABELS, fw)], cwd=ROOT)
                running.append((fw, proc, specs, time.time()))
            time.sleep(0.5)
            for item in list(running):
                fw, proc, specs, t0 = item
                if proc.poll() is not None:
                    running.remove(item)
                    os.remove(specs)
                    print(f"{fw}: worker exit {proc.returncode} after {time.time() - t0:.0f} s", flush=True)
    m = write_manifest()
    counts: dict[str, int] = {}
    for r in m["runs"]:
        k = "healthy" if r["label"] == "healthy" else "faulty"
        counts[f"{k}/{r['split']}"] = counts.get(f"{k}/{r['split']}", 0) + 1
    print(f"manifest: {len(m['runs'])} runs; " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()
