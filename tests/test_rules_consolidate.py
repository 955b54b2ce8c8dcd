"""Issue 30: a NaN the trainer hid is a finding of its own (TL-NAN-HIDDEN), and one problem is one finding:
at most one FAIL/WARN per series and line over every corpus and gallery run."""

from __future__ import annotations

import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import CORPUS, FIXTURES, GALLERY, corpus
from rulekit import faithful, ids, jsonl, judge, only, shown
from trainlint.core.findings import Level
from trainlint.rules.consolidate import RUN_LEVEL

LIVE = FIXTURES / "live"


# -- TL-NAN-HIDDEN ----------------------------------------------------------------------------------
def test_hidden_nan_does_not_fire_on_a_scaler_that_skipped_two_steps():
    # trainproof's fp16_nan: `grad_norm` inf at steps 20 and 30 of 60, finite after: a loss scaler at work
    rep = judge(GALLERY / "fp16_nan" / "trainer_state.json") if GALLERY.exists() else pytest.skip("no corpus")
    assert "TL-NAN-HIDDEN" not in ids(rep)
    assert only(rep, "TP-NAN-GRAD").level == Level.WARN
    assert rep.coverage["hidden-nan"] == {"`loss` (per-step)": None}


def test_hidden_nan_is_not_checked_without_a_train_loss(tmp_path):
    rep = judge(jsonl(tmp_path / "e.jsonl", [{"step": i, "eval_loss": 1.0 / (i + 1)} for i in range(10)]))
    assert rep.skipped["hidden-nan"].detail == "no train-loss series in the log"


def test_hidden_nan_when_a_megatron_line_loses_its_loss(tmp_path):
    # Megatron-LM's iteration line (training_log): `lm loss` is left out when every iteration of the interval was
    # NaN or skipped, while its counters stay 0. No Megatron log is in the corpus: this is its line format.
    lines = []
    for it in range(10, 310, 10):
        s = (f" [2026-12-03 12:00:00] iteration {it:8d}/     300 | consumed samples: {it * 32:12d} | elapsed time per "
             f"iteration (ms): 812.3 | learning rate: {1e-4 * min(1, it / 100):.6E} | global batch size:    32 |")
        if it < 200 or it == 250:
            s += f" lm loss: {7.0 * math.exp(-it / 300):.6E} |"
        s += (" loss scale: 65536.0 | grad norm: 1.200 | number of skipped iterations:   0 | number of nan "
              "iterations:   0 |")
        lines.append(s)
    p = tmp_path / "megatron.log"
    p.write_text("\n".join(lines) + "\n")
    f = only(judge(p), "TL-NAN-HIDDEN")
    v = f.evidence.values
    assert (f.level, f.location.line, v["missing"], v["carried"], v["first_step"], v["last_step"]) == (
        Level.FAIL, 20, 10, 19, 200, 300)
    faithful(f)
    # one interval without its loss, then the loss again: a warning
    p.write_text("\n".join([*lines[:20], lines[24]]) + "\n")
    w = only(judge(p), "TL-NAN-HIDDEN")
    assert (w.level, w.location.line, w.evidence.values["missing"]) == (Level.WARN, 20, 1)


# -- one problem, one finding -----------------------------------------------------------------------
def test_divergence_and_dead_run_on_one_value_are_one_finding():
    rep = judge(LIVE / "hf-diverge" / "train.log")
    f = only(rep, "TP-DIVERGE")
    assert "TP-DEAD-RUN" in ids(rep) and "TP-DEAD-RUN" not in shown(rep)
    v = f.evidence.values
    assert (f.location.line, v["folded_rules"], v["also0_start"], v["also0_end"]) == (760, "TP-DEAD-RUN", 3.709, 91.65)
    assert "; also TP-DEAD-RUN (fail): median of the last 5 points 91.65 (from step 280)" in f.evidence.text
    faithful(f)


def test_the_same_loss_under_two_names_is_one_finding(tmp_path):
    # a hand-written loop that prints its loss twice (`loss` and `train loss`), diverging: one TP-DIVERGE
    rows = []
    for i in range(60):
        v = 2.0 * math.exp(-i / 10) + 0.3 if i < 40 else 0.5 * 1.15 ** (i - 40)
        rows.append(f"step {i}: loss {v:.4f} | train loss {v:.5f} | lr 1e-3")
    p = tmp_path / "train.log"
    p.write_text("\n".join(rows) + "\n")
    rep = judge(p)
    f = only(rep, "TP-DIVERGE")
    assert f.series == "`loss`" and f.evidence.values["same_as"] == "`train loss`"
    assert any(r.role == "same-quantity" for r in f.related)


def _verdict_docs(paths: list[Path]) -> list[dict]:
    import json

    out = []
    for p in paths:
        # the log's own lines (LSP lines): a tqdm redraw is a line of the log; in `grep -n` lines several redraws
        # share one line, and a NaN in one and the end of the series in the next are two places there too
        r = subprocess.run([sys.executable, "-m", "trainlint.cli", "check", "--format", "json", "--line-breaks", "lsp",
                            str(p)],
                           capture_output=True, text=True, cwd=FIXTURES.parent)
        out.extend(json.loads(r.stdout)["reports"])
    return out


def test_at_most_one_fail_or_warn_per_series_and_line_over_corpus_and_gallery():
    if not CORPUS.exists():
        pytest.skip(f"corpus not available: {CORPUS}")
    corpus("hf_trainer_state")
    reports = _verdict_docs([CORPUS, LIVE])
    assert len(reports) > 150
    per_place = Counter()
    for rep in reports:
        for f in rep["findings"]:
            if f["level"] in ("FAIL", "WARN") and f["id"] not in RUN_LEVEL and f.get("series"):
                loc = f.get("location") or {}
                per_place[(rep["path"], f["series"], loc.get("line"), loc.get("record"))] += 1
    assert per_place and max(per_place.values()) == 1, [k for k, n in per_place.items() if n > 1][:5]


# -- rules that measure their noise (issue 30 item 4) -------------------------------------------------
def test_a_late_lr_ramp_fails_as_divergence_judged_over_its_noise():
    # A real tiny GPT (fixtures/live/loop-lr-ramp/make.py): lr 1.2x per iteration over the last 15%; the loss
    # leaves its 2.65 floor and ends at 26.4. Before: PASS ("the window before it is at 1.01x the lowest level:
    # one window does not decide"). The rise stands 12.2 level errors of its own noise above the lowest level.
    rep = judge(LIVE / "loop-lr-ramp" / "train.log")
    f = only(rep, "TP-DIVERGE")
    v = f.evidence.values
    assert (f.level, f.location.line, v["end"], v["minimum"], v["window"]) == (Level.FAIL, 69, 4.2234, 2.6508, 5)
    assert (round(v["z"], 1), v["z_need"], round(v["sigma"], 4), v["changes"]) == (12.2, 3.5, 0.0482, 60)
    # corroborated by the held-out loss, which rose from its best 2.682 to 23.1 (so no chance-dip allowance)
    assert (v["held_series"], v["held_best"], v["held_last"]) == ("`val loss` (per-evaluation)", 2.682, 23.1065)
    assert "judged over its noise: 12.2 level errors above the lowest level, where 3.5 were needed" in f.evidence.text
    faithful(f)


def test_a_noisy_floor_is_not_divergence_and_says_over_which_noise():
    # hf-healthy: a per-batch loss at its floor ends 1.98x its luckiest window, 2.91 level errors above it
    rep = judge(LIVE / "hf-healthy" / "train.log")
    assert "TP-DIVERGE" not in ids(rep)
    m = next(m for m in rep.measurements if m.check == "divergence")
    assert "2.91 level errors above the lowest level (needs 5.73; noise 0.297 in log)" in m.text


def test_a_ppo_loss_is_an_rl_objective_not_a_dead_run():
    # A real SB3 PPO run on CartPole (fixtures/live/sb3-ppo/make.py): train/loss is PPO's total objective while
    # rollout/ep_rew_mean rises 18.7 -> 300: the trend rules do not judge it as a supervised loss
    rep = judge(LIVE / "sb3-ppo" / "progress.csv")
    assert rep.verdict == Level.PASS and not {"TP-DEAD-RUN", "TP-DIVERGE", "TP-FLAT"} & ids(rep)
    for check in ("dead-run", "divergence", "flat-loss"):
        why = rep.coverage[check]["`train/loss`"]
        assert why is not None and why.detail.startswith("an RL objective, not a supervised loss (`rollout/")
    assert "non-finite-loss" in rep.ran  # NaN is still NaN in an RL loss


# -- TL-ZERO-GRAD-ONSET ---------------------------------------------------------------------------------
POPULATION = FIXTURES / "population"


def test_zero_grad_onset_on_a_run_frozen_mid_way():
    # the population's hf-frozen-000: every parameter frozen at step 101 by the generator (onset line 41); its
    # loss had fallen 93% before, so TP-DEAD-RUN cannot see it
    path = POPULATION / "hf" / "hf-frozen-000" / "train.log"
    if not path.exists():
        pytest.skip(f"population run not available: {path}")
    f = only(judge(path), "TL-ZERO-GRAD-ONSET")
    v = f.evidence.values
    assert (f.level, f.location.line, v["last_positive"], v["zeros"]) == (Level.FAIL, 41, 2.474, 65)
    faithful(f)


def test_zero_grad_on_a_run_frozen_from_its_first_step():
    # the population's hf-frozen-001: every parameter frozen from step 0, `grad_norm` 0 at all 88 logs. The waiver
    # ("the loss improved, so the norm is a placeholder") compared the noisiest point with the first (min 7.46 <
    # 0.95 x 9.388) and waived it; measured over its noise the per-batch loss did not fall at all
    path = POPULATION / "hf" / "hf-frozen-001" / "train.log"
    if not path.exists():
        pytest.skip(f"population run not available: {path}")
    f = only(judge(path), "TP-ZERO-GRAD")
    v = f.evidence.values
    assert (f.level, f.location.line, v["points"], v["fit_points"]) == (Level.FAIL, 1, 88, 88)
    assert (round(float(v["fitted"]), 4), round(float(v["sigma"]), 4)) == (-0.011, 0.1776)
    faithful(f)


def test_zero_grad_onset_not_on_a_healthy_run_and_not_below_five_points(tmp_path):
    assert "TL-ZERO-GRAD-ONSET" not in ids(judge(LIVE / "hf-healthy" / "train.log"))
    rows = [{"step": i, "loss": 2.0 - 0.1 * i, "grad_norm": 1.0 if i < 6 else 0.0} for i in range(10)]
    rep = judge(jsonl(tmp_path / "g.jsonl", rows))
    assert "TL-ZERO-GRAD-ONSET" not in ids(rep)  # 4 zeros at the end: fewer than 5
    m = next(m for m in rep.measurements if m.check == "zero-grad")
    assert m.values["zero_tail"] == 4
