"""Issue 30: TL-HELDOUT-STILL, a held-out loss that stopped changing while evaluations went on (the frozen runs of
the labelled population that log no gradient norm: Lightning's `train_loss` and `val_loss` only)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from conftest import FIXTURES
from rulekit import faithful, ids, judge, only
from trainlint.core.findings import Level, Skip

POPULATION = FIXTURES / "population"
LIVE = FIXTURES / "live"


def _run(*parts: str) -> Path:
    path = POPULATION.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"population run not available: {path}")
    return path


def test_heldout_still_on_a_lightning_run_frozen_from_its_first_step():
    # lightning-frozen-002 (tune half): every parameter frozen at step 0; no gradient norm or learning-rate change
    # in its metrics.csv, and its per-step `train_loss` keeps its batch noise (no other rule fires). Its `val_loss`
    # moves by 2e-5 of its value over 12 evaluations (AdamW's weight decay, not learning).
    path = _run("lightning", "lightning-frozen-002", "lightning_logs", "version_0", "metrics.csv")
    rep = judge(path)
    f = only(rep, "TL-HELDOUT-STILL")
    v = f.evidence.values
    assert (f.level, f.location.line, v["evals"], v["first_step"], v["last_step"]) == (Level.WARN, 9, 12, 13, 167)
    assert (v["low"], v["high"]) == (4.422393798828125, 4.422481536865234)
    assert math.isclose(v["spread"], 1.9839489900837055e-05)
    assert "moved" not in v  # from the first evaluation: nothing before it to compare with
    faithful(f)
    assert {i for i in ids(rep) if i.startswith(("TP-", "TL-"))} == {"TL-HELDOUT-STILL"}


def test_heldout_still_after_it_moved_on_a_run_frozen_mid_way():
    # hf-frozen-000 (tune half): frozen at step 101 (line 41). Its `eval_loss`, printed with 4 digits, stays between
    # 0.3888 and 0.389 over its last 11 evaluations, after moving 0.263 (log) per evaluation over the 10 before
    path = _run("hf", "hf-frozen-000", "train.log")
    f = only(judge(path), "TL-HELDOUT-STILL")
    v = f.evidence.values
    assert (f.location.line, v["evals"], v["changes"], v["low"], v["high"], v["before"]) == (
        62, 11, 10, 0.3888, 0.389, 0.3902)
    assert round(float(v["moved"]), 4) == 0.2627 and round(float(v["share"]), 5) == 0.00196
    faithful(f)


def test_heldout_still_not_on_a_converged_healthy_run():
    # lightning-healthy-011 (tune half), the healthy run nearest to firing: its last 6 evaluations stay within
    # 0.0030 of their lowest (under the 0.003 band), but it moved 0.0836 per evaluation before them: a spread of
    # 0.036 of that, above 0.01. A converging plateau keeps moving by a share of its earlier steps.
    path = _run("lightning", "lightning-healthy-011", "lightning_logs", "version_0", "metrics.csv")
    rep = judge(path)
    assert "TL-HELDOUT-STILL" not in ids(rep)
    [m] = [m for m in rep.measurements if m.check == "heldout-still"]
    assert m.values["evals"] == 6 and round(float(m.values["share"]), 4) == 0.0357
    for run in ("lightning-healthy", "hf-healthy", "keras-healthy", "lightgbm-healthy"):
        assert "TL-HELDOUT-STILL" not in ids(judge(LIVE / run)), run


def test_heldout_still_not_checked_below_the_printed_precision(tmp_path):
    # the same frozen Lightning run as a logger printing `val_loss` with 1 decimal (4.4): 0.05 / 4.4 = 0.011
    # of the value, coarser than the 0.003 band: a held-out loss that moved within it would print the same
    src = _run("lightning", "lightning-frozen-002", "lightning_logs", "version_0", "metrics.csv")
    lines = src.read_text().splitlines()
    head = lines[0].split(",")
    col = head.index("val_loss")
    out = [lines[0]]
    for line in lines[1:]:
        cells = line.split(",")
        if cells[col]:
            cells[col] = f"{float(cells[col]):.1f}"
        out.append(",".join(cells))
    p = tmp_path / "metrics.csv"
    p.write_text("\n".join(out) + "\n")
    rep = judge(p)
    assert "TL-HELDOUT-STILL" not in ids(rep)
    why = rep.coverage["heldout-still"]["`val_loss` (per-evaluation)"]
    assert why.reason == Skip.NOT_APPLICABLE
    assert why.detail == ("the last 12 evaluations agree at the printed precision (0.011 of the value), coarser "
                          "than 0.003: a change can hide in it")


def test_heldout_still_not_checked_with_too_few_evaluations(tmp_path):
    # the frozen Lightning run cut after its 4th evaluation (a prefix, as the calibration replays it): 4 values that
    # agree are not yet a held-out loss that stopped
    src = _run("lightning", "lightning-frozen-002", "lightning_logs", "version_0", "metrics.csv")
    lines = src.read_text().splitlines()
    col = lines[0].split(",").index("val_loss")
    evals = [n for n, line in enumerate(lines) if n and line.split(",")[col]]
    p = tmp_path / "metrics.csv"
    p.write_text("\n".join(lines[:evals[3] + 1]) + "\n")
    rep = judge(p)
    why = rep.coverage["heldout-still"]["`val_loss` (per-evaluation)"]
    assert (why.reason, why.detail) == (Skip.TOO_FEW, "4 finite evaluations, fewer than 5")
    assert "TL-HELDOUT-STILL" not in ids(rep)
