"""Print the TP-DIVERGE calibration table (docs/differences-from-trainproof.md) from the real logs.

For every train-loss series trainlint judges in the gallery and the corpus: points, window,
last-point/minimum ratio (trainproof's test), windowed ratio (trainlint's), and both verdicts.
Run: .venv/bin/python bench/calibrate_divergence.py [CORPUS]
"""

from __future__ import annotations

import sys
from pathlib import Path

from trainlint.judge import judge_log
from trainlint.readers import NotALog, detect, read
from trainlint.rules.thresholds import Thresholds


def rows(corpus: Path):  # type: ignore[no-untyped-def]
    th = Thresholds()
    gallery = sorted((corpus / "trainproof" / "examples" / "gallery").rglob("trainer_state.json"))
    trainproof_logs = [corpus / "trainproof/examples/real_world/xtts_diverged/trainer_0_log.txt",
                       corpus / "trainproof/evidence/xtts_coqui_feb2026/trainer_0_log.txt",
                       *sorted((corpus / "trainproof/evidence").rglob("events.out.tfevents.*"))]
    others = sorted(p for p in corpus.rglob("*") if p.is_file() and "trainproof" not in p.parts)
    for group, paths in (("gallery", gallery), ("trainproof", trainproof_logs), ("corpus", others)):
        for p in paths:
            try:
                if detect(str(p)).format is None:
                    continue
                log = read(str(p))
            except (OSError, NotALog):
                continue
            rep = judge_log(log)
            for m in rep.measurements:
                if m.check != "divergence":
                    continue
                v = m.values
                tp = "FAIL" if v["raw_ratio"] > th.max_loss_divergence_ratio else "pass"
                tl = "FAIL" if v["ratio"] > th.max_loss_divergence_ratio else "pass"
                name = str(p.relative_to(corpus))
                yield group, name, m.series, v, tp, tl


def main() -> None:
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared" / "corpus"
    print("| group | log | series | points | window | last/min (trainproof) | windowed | trainproof | trainlint |")
    print("|---|---|---|---|---|---|---|---|---|")
    n = diff = 0
    for group, name, series, v, tp, tl in rows(corpus):
        n += 1
        diff += tp != tl
        mark = " ◀" if tp != tl else ""
        short = name if len(name) < 70 else name[:67] + "…"
        print(f"| {group} | `{short}` | {series} | {v.get('points', '')} | {v['window']} | {v['raw_ratio']:.3f} | "
              f"{v['ratio']:.3f} | {tp} | {tl}{mark} |")
    print(f"\n{n} series; the two tests disagree on {diff}.")


if __name__ == "__main__":
    main()
