"""Verdicts and findings per log over the corpus and the live gallery, for before/after tables.

    python bench/verdicts.py [PATH ...] > verdicts.json

Prints one JSON object: {path: {"verdict": V, "findings": [[rule, level, line], ...]}} for every log
`trainlint check` judges under the paths (default: ../shared/corpus and fixtures/live). Compare two
runs (two checkouts) with `python bench/verdicts.py --diff A.json B.json`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = [os.environ.get("TRAINLINT_CORPUS", os.path.join(ROOT, "..", "shared", "corpus")),
           os.path.join(ROOT, "fixtures", "live")]


def collect(paths: list[str]) -> dict:
    out: dict = {}
    for p in paths:
        r = subprocess.run([sys.executable, "-m", "trainlint.cli", "check", "--format", "json", p],
                           capture_output=True, text=True, cwd=ROOT)
        data = json.loads(r.stdout)
        for rep in data.get("reports", data if isinstance(data, list) else []):
            path = os.path.join(os.path.basename(os.path.abspath(p)),
                                os.path.relpath(os.path.join(ROOT, rep["path"]), os.path.abspath(p)))
            out[path] = {"verdict": rep["verdict"],
                         "findings": [[f["id"], f["level"], (f.get("location") or {}).get("line")]
                                      for f in rep["findings"] if f["level"] in ("FAIL", "WARN")]}
    return out


def table(d: dict) -> Counter:
    c: Counter = Counter()
    for rep in d.values():
        for rule, level, _ in rep["findings"]:
            c[(rule, level)] += 1
    return c


def diff(a_path: str, b_path: str) -> None:
    with open(a_path) as fa, open(b_path) as fb:
        a, b = json.load(fa), json.load(fb)
    ta, tb = table(a), table(b)
    print("| rule | level | before | after |\n|---|---|---|---|")
    for key in sorted(set(ta) | set(tb)):
        print(f"| {key[0]} | {key[1]} | {ta[key]} | {tb[key]} |")
    print("\n| log | before | after | what changed |\n|---|---|---|---|")
    for p in sorted(set(a) | set(b)):
        ra, rb = a.get(p, {"verdict": "-", "findings": []}), b.get(p, {"verdict": "-", "findings": []})
        fa = {(r, lv) for r, lv, _ in ra["findings"]}
        fb = {(r, lv) for r, lv, _ in rb["findings"]}
        if ra["verdict"] != rb["verdict"] or fa != fb:
            gone = ", ".join(f"-{r} {lv}" for r, lv in sorted(fa - fb))
            new = ", ".join(f"+{r} {lv}" for r, lv in sorted(fb - fa))
            print(f"| {p} | {ra['verdict']} | {rb['verdict']} | {' '.join(x for x in (gone, new) if x)} |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--diff"]:
        diff(sys.argv[2], sys.argv[3])
    else:
        json.dump(collect(sys.argv[1:] or DEFAULT), sys.stdout, indent=1, sort_keys=True)
