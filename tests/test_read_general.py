"""The general text reader (issue 24): tables, boxes, key-value runs with counters, prefixes, ranks, roles,
directions; TL-FORMAT-UNKNOWN; TL-RANK-STOPPED / TL-RANK-STRAGGLER; and the gallery's real framework runs.

Shapes below are written from the frameworks' documented output and from shapes made up for frameworks not
listed anywhere (the reader is measured on those too)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from trainlint.core.model import Role
from trainlint.core.roles import direction
from trainlint.judge import judge_path
from trainlint.readers import detect, read

ROOT = Path(__file__).resolve().parent.parent
LIVE = ROOT / "fixtures" / "live"


def _log(tmp_path: Path, text: str, name: str = "run.log"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p, read(str(p))


def _pts(s):
    return list(zip(s.steps, s.values, s.lines, strict=True))


def _findings(p: Path, level: str | None = None):
    rep = judge_path(str(p), now=p.stat().st_mtime + 3600)
    return rep, [(f.id, f.level.value, f.location.line) for f in rep.findings
                 if level is None or f.level.value == level]


# fastai: the master bar's redraws end in "\r" before each row
FASTAI = ("epoch     train_loss  valid_loss  accuracy  time    \n"
          " 50.00% [1/2 00:01<00:01]\r0         0.693147    0.690000    0.520000  00:01     \n"
          " 50.00% [1/2 00:01<00:01 0.6000]\r1         0.600000    0.650000    0.610000  00:01     \n"
          "2         0.500000    0.600000    0.700000  00:01     \n")
SKORCH = ("  epoch    train_loss    valid_acc    valid_loss     dur\n"
          "-------  ------------  -----------  ------------  ------\n"
          "      1        \x1b[36m0.6931\x1b[0m        \x1b[32m0.5000\x1b[0m        \x1b[35m0.6930\x1b[0m  0.0200\n"
          "      2        \x1b[36m0.6500\x1b[0m        0.5000        \x1b[35m0.6800\x1b[0m  0.0190\n")
SPACY = ("E    #       LOSS TOK2VEC  LOSS NER  ENTS_F  ENTS_P  ENTS_R  SCORE \n"
         "---  ------  ------------  --------  ------  ------  ------  ------\n"
         "  0       0          0.00     49.67    0.00    0.00    0.00    0.00\n"
         "  5     200        103.23   2130.11   45.10   50.00   41.00    0.45\n")


def test_tables_header_row_rule_ansi_time_column(tmp_path: Path) -> None:
    p, log = _log(tmp_path, FASTAI)
    assert detect(str(p)).format == "general"
    tl, vl, acc = log.series["train_loss\x1funspecified"], log.series["valid_loss\x1fper-evaluation"], None
    acc = next(s for s in log.series.values() if s.name == "accuracy")
    assert (tl.role, vl.role, acc.role, tl.step_basis) == (Role.TRAIN_LOSS, Role.EVAL_LOSS, Role.OTHER, "epoch")
    assert _pts(tl) == [(0, 0.693147, 3), (1, 0.6, 5), (2, 0.5, 6)]
    assert not any(s.name == "time" for s in log.series.values())  # 00:01 is not a value
    assert direction(acc.name, acc.role) == "rises" and direction(tl.name, tl.role) == "falls"
    loc = log.locate(vl, 1)
    row = p.read_bytes().decode().split("\n")[2].split("\r")[1]
    assert loc.line == 5 and row[loc.column - 1:loc.end_column - 1] == "0.650000"
    _, log = _log(tmp_path, SKORCH, "skorch.log")
    vl = next(s for s in log.series.values() if s.name == "valid_loss")
    assert _pts(vl) == [(1, 0.693, 3), (2, 0.68, 4)] and vl.role == Role.EVAL_LOSS
    _, log = _log(tmp_path, SPACY, "spacy.log")
    ner = next(s for s in log.series.values() if s.name == "LOSS NER")  # a name of two words, one column
    assert (ner.role, ner.step_basis, _pts(ner)) == (Role.TRAIN_LOSS, "step", [(0, 49.67, 3), (200, 2130.11, 4)])


def test_pipe_table_and_made_up_table_shapes(tmp_path: Path) -> None:
    _, log = _log(tmp_path, "| epoch | loss | acc |\n|-------|------|-----|\n| 1 | 0.5 | 0.7 |\n| 2 | 0.4 | 0.8 |\n")
    assert _pts(next(s for s in log.series.values() if s.name == "loss")) == [(1, 0.5, 3), (2, 0.4, 4)]
    # an invented trainer: a step column, right-aligned cells, a missing cell aligned under its header
    text = ("  step   train_loss   val_loss   lr\n"
            "   100       2.5000     2.6000   0.001\n"
            "   200       2.1000                0.001\n")
    _, log = _log(tmp_path, text, "made_up.log")
    tl = next(s for s in log.series.values() if s.name == "train_loss")
    vl = next(s for s in log.series.values() if s.name == "val_loss")
    assert _pts(tl) == [(100, 2.5, 2), (200, 2.1, 3)] and _pts(vl) == [(100, 2.6, 2)]


def test_sb3_boxes_step_from_total_timesteps_and_rl_losses_not_supervised(tmp_path: Path) -> None:
    box = ("-----------------------------\n| rollout/           |      |\n|    ep_rew_mean     | {r} |\n"
           "| time/              |      |\n|    total_timesteps | {t} |\n| train/             |      |\n"
           "|    loss            | {loss} |\n|    value_loss      | 50.1 |\n-----------------------------\n")
    text = "".join(box.format(r=20 + i, t=2048 * (i + 1), loss=6.0 + i) for i in range(12))
    p, log = _log(tmp_path, text)
    rew = log.series["rollout/ep_rew_mean\x1funspecified"]
    assert rew.steps[:2].tolist() == [2048, 4096] and direction(rew.name, rew.role) == "rises"
    loss = log.series["train/loss\x1funspecified"]
    assert loss.role == Role.OTHER and direction(loss.name, loss.role) == "-"
    rep, _ = _findings(p)
    # a rising reward and a rising PPO loss are not divergence; the reward is judged (TL-REWARD-COLLAPSE), so PASS
    assert rep.verdict.value == "PASS" and rep.coverage["reward-collapse"] == {"`rollout/ep_rew_mean`": None}


def test_key_value_with_bracket_counters_xgboost_lightgbm(tmp_path: Path) -> None:
    _, log = _log(tmp_path, "[0]\ttrain-logloss:0.61\tvalid-logloss:0.63\n"
                            "[1]\ttrain-logloss:0.55\tvalid-logloss:0.60\n")
    v = next(s for s in log.series.values() if s.name == "valid-logloss")
    assert (v.role, _pts(v)) == (Role.EVAL_LOSS, [(0, 0.63, 1), (1, 0.6, 2)])
    text = ("[LightGBM] [Info] Number of positive: 500, number of negative: 500\n"
            "[LightGBM] [Warning] No further splits with positive gain, best gain: -inf\n"
            "[1]\ttraining's binary_logloss: 0.65\tvalid_1's binary_logloss: 0.67\n"
            "[2]\ttraining's binary_logloss: 0.60\tvalid_1's binary_logloss: 0.64\n"
            "Early stopping, best iteration is:\n"
            "[2]\ttraining's binary_logloss: 0.60\tvalid_1's binary_logloss: 0.64\n")
    _, log = _log(tmp_path, text, "lgb.log")
    names = {s.name: s for s in log.series.values()}
    assert set(names) == {"training's binary_logloss", "valid_1's binary_logloss"}  # no "best gain", no repeat
    assert names["valid_1's binary_logloss"].role == Role.EVAL_LOSS
    assert _pts(names["training's binary_logloss"]) == [(1, 0.65, 3), (2, 0.6, 4)]


def test_ignite_iteration_within_epoch_is_the_step_and_results_lines_are_two_series(tmp_path: Path) -> None:
    lines = []
    for ep in (1, 2, 3):
        for it in (10, 20):
            lines.append(f"Epoch[{ep}/3] Iteration[{it}/20] Loss: {2.5 - ep * 0.3 - it / 100:.2f}")
        lines.append(f"Training Results - Epoch: {ep}  Avg accuracy: 0.{5 + ep} Avg loss: {2.0 - ep * 0.2:.2f}")
        lines.append(f"Validation Results - Epoch: {ep}  Avg accuracy: 0.{4 + ep} Avg loss: {2.1 - ep * 0.2:.2f}")
    p, log = _log(tmp_path, "\n".join(lines) + "\n")
    assert detect(str(p)).format == "general"
    loss = log.series["Loss\x1funspecified"]
    assert loss.steps.tolist() == [10, 20, 30, 40, 50, 60] and loss.step_basis == "epoch+iteration"
    val = next(s for s in log.series.values() if s.name == "Validation/Avg loss")
    tr = next(s for s in log.series.values() if s.name == "Training/Avg loss")
    assert (val.role, tr.role) == (Role.EVAL_LOSS, Role.TRAIN_LOSS)
    assert val.steps.tolist() == [20, 40, 60] and val.lines.tolist() == [4, 8, 12]
    _, f = _findings(p, "WARN")
    assert not any(r == "TL-DUPLICATE-STEPS" for r, _, _ in f)
    # a global iteration counter under the epoch stays as printed
    _, log = _log(tmp_path, "Epoch[1/2] Iteration[50/200] Loss: 1.0\nEpoch[2/2] Iteration[150/200] Loss: 0.9\n",
                  "g.log")
    assert log.series["Loss\x1funspecified"].steps.tolist() == [50, 150]


def test_prefixes_stripped_and_ranks_kept_apart(tmp_path: Path) -> None:
    text = "".join(f"[rank{r}]: step {s}/100 | train loss {4.2 - s / 100 + r / 10:.3f} | norm 1.2 | lr 6e-4\n"
                   for s in range(1, 31) for r in (0, 1))
    text = text.replace("[rank1]: step 20/100 | train loss 4.100", "[rank1]: step 20/100 | train loss nan")
    p, log = _log(tmp_path, text)
    r1 = log.series["rank1/train loss\x1funspecified"]
    assert r1.role == Role.TRAIN_LOSS and len(r1) == 30 and math.isnan(r1.values[19])
    _, f = _findings(p, "FAIL")
    assert f == [("TP-NAN", "FAIL", 40)]  # the NaN of rank 1 alone, on its line
    for prefix in ("2024-05-01 12:00:00,123 - trainer - INFO - ", "INFO:root:", "[2024-05-01 12:00:00] ",
                   "I0501 12:00:00.123456 12345 train.py:88] ", "12:00:01 | "):
        _, log = _log(tmp_path, "".join(f"{prefix}step {s} loss {2 - s / 10:.2f} acc 0.{s}\n" for s in range(1, 4)),
                      "p.log")
        loss = next(s for s in log.series.values() if s.name == "loss")
        assert loss.steps.tolist() == [1, 2, 3], prefix


def test_padded_counter_and_made_up_separators(tmp_path: Path) -> None:
    """A counter printed with %5d ("step     0/999") keeps its key across the blanks; invented trainers' shapes."""
    _, log = _log(tmp_path, "".join(f"[rank0]: step {s:5d}/999 | loss {2 - s / 100:.2f}\n" for s in range(3)))
    assert log.series["rank0/loss\x1funspecified"].steps.tolist() == [0, 1, 2]
    text = "".join(f"it={s * 50} ; loss={1 - s / 10:.2f} ; ppl={2.7 - s / 10:.2f} ; tokens/s=1e4\n"
                   for s in range(1, 4))
    _, log = _log(tmp_path, text, "b.log")
    assert log.series["loss\x1funspecified"].steps.tolist() == [50, 100, 150]
    _, log = _log(tmp_path, "".join(f"round {r}\tauc={0.7 + r / 100:.3f}\terror={0.3 - r / 100:.3f}\n"
                                    for r in range(1, 4)), "c.log")
    auc = next(s for s in log.series.values() if s.name == "auc")
    assert auc.steps.tolist() == [1, 2, 3] and direction(auc.name, auc.role) == "rises"


def test_rank_stops_early_and_straggler(tmp_path: Path) -> None:
    rows = []
    for s in range(1, 41):
        for r in (0, 1, 2):
            if r == 2 and s > 20:
                continue
            ms = 100 + (90 if r == 1 else 0) + s % 3
            rows.append(f"[rank{r}]: step {s}/40 | train loss {3 - s / 20:.3f} | step_time {ms}\n")
    p = tmp_path / "train.log"
    p.write_text("".join(rows))
    rep, f = _findings(p, "WARN")
    ids = {(r, line) for r, _, line in f}
    stopped = next(x for x in rep.findings if x.id == "TL-RANK-STOPPED")
    assert "rank 2 last logged step 20" in stopped.evidence.text and stopped.location.line == rows.index(
        "[rank2]: step 20/40 | train loss 2.000 | step_time 102\n") + 1
    straggler = next(x for x in rep.findings if x.id == "TL-RANK-STRAGGLER")
    assert "rank 1" in straggler.evidence.text and straggler.location.line == 2
    assert ("TL-RANK-STOPPED", stopped.location.line) in ids
    # ranks in step and equally fast: neither rule fires
    even = "".join(f"[rank{r}]: step {s}/40 | train loss {3 - s / 20:.3f} | step_time {100 + s % 3}\n"
                   for s in range(1, 41) for r in (0, 1))
    p.write_text(even)
    _, f = _findings(p)
    assert not any(r.startswith("TL-RANK") for r, _, _ in f)


def test_keras_verbose_2_and_uncounted_metric_lines(tmp_path: Path) -> None:
    text = "".join(f"Epoch {e}/3\n16/16 - 1s - 3ms/step - loss: {1.3 - e / 10:.4f} - val_loss: {1.4 - e / 10:.2f}\n"
                   for e in (1, 2, 3))
    _, log = _log(tmp_path, text, "keras.log")
    loss = next(s for s in log.series.values() if s.name == "loss")
    assert (loss.step_basis, loss.steps.tolist(), loss.lines.tolist()) == ("epoch", [1, 2, 3], [2, 4, 6])
    p, log = _log(tmp_path, "Starting\nloss: 0.5 acc: 0.3\nloss: 0.4 acc: 0.5\n", "train.log")
    assert detect(str(p)).format == "general"
    assert next(s for s in log.series.values() if s.name == "loss").step_basis == "index"


def test_prose_and_configs_are_not_read(tmp_path: Path) -> None:
    p = tmp_path / "notes.txt"
    p.write_text("Epoch 3 took 12.5 seconds\nSaving model to /tmp/x at step 3\nlr: 0.001\n")
    assert detect(str(p)).format is None
    p = tmp_path / "config.txt"
    p.write_text("batch_size: 32\nlr: 0.001\nepochs: 3\n")
    assert detect(str(p)).format is None


def test_format_unknown_on_the_first_metric_line(tmp_path: Path) -> None:
    p = tmp_path / "train.log"
    p.write_text("booting\nmodel ready\n>> loss 0.52 @ 3\n>> loss 0.48 @ 4\n")
    rep = judge_path(str(p))
    f = next(x for x in rep.findings if x.id == "TL-FORMAT-UNKNOWN")
    assert f.location.line == 3 and "loss 0.52 @ 3" in f.evidence.text and "formats:" in f.message
    assert rep.verdict.value == "NOT-CHECKED" and not any(x.id == "TP-NO-LOSS" for x in rep.findings)
    p.write_text("booting\n")
    rep = judge_path(str(p))
    assert [x.id for x in rep.findings] == ["TL-FORMAT-UNKNOWN"]
    # series without a loss: still TP-NO-LOSS
    p.write_text("step 1: acc 0.5\nstep 2: acc 0.6\n")
    assert [x.id for x in judge_path(str(p)).findings] == ["TP-NO-LOSS"]


def test_hf_stdout_lagging_bar_takes_the_step_from_the_epoch(tmp_path: Path) -> None:
    """HF 5.x: two dicts (epochs 0.5469 and 0.625) both follow `35/300`; before, a false TL-DUPLICATE-STEPS."""
    parts = []
    for st in range(5, 301, 5):
        bar = st if st % 40 else st - 5  # every 8th dict: the bar did not redraw
        parts.append(f"\r{bar // 3}%|##| {bar}/300 [00:01<00:02, 30.0it/s]")
        parts.append(f"\r{{'loss': '{2.0 - st / 400:.4g}', 'grad_norm': '1.0', 'learning_rate': '0.001', "
                     f"'epoch': '{st / 64:.4g}'}}\n")
    p = tmp_path / "train.log"
    p.write_text("".join(parts))
    log = read(str(p))
    assert log.series["loss\x1funspecified"].steps.tolist() == list(range(5, 301, 5))
    _, f = _findings(p, "WARN")
    assert f == []


# -- the gallery: real framework runs (fixtures/live/<framework>-<case>/, each with its LABEL.json) -----------------
T, E, OT = Role.TRAIN_LOSS, Role.EVAL_LOSS, Role.OTHER
# run -> (file, {series: role}, verdict, {(rule, line)} that must be among the FAIL/WARN findings)
GALLERY = {
    "xgboost-healthy": ("train.log", {"train-logloss": T, "valid-logloss": E}, "PASS", set()),
    "xgboost-overfit": ("train.log", {"train-logloss": T, "valid-logloss": E}, "WARN", {("TP-OVERFIT", 80)}),
    "lightgbm-healthy": ("train.log", {"training's binary_logloss": T, "valid_1's binary_logloss": E}, "PASS", set()),
    "lightgbm-overfit": ("train.log", {"training's binary_logloss": T, "valid_1's binary_logloss": E}, "WARN",
                         {("TP-OVERFIT", 147)}),
    "catboost-healthy": ("train.log", {"learn": T, "test": E}, "PASS", set()),
    "catboost-overfit": ("train.log", {"learn": T, "test": E}, "WARN", {("TP-OVERFIT", 80)}),
    "sklearn-mlp-healthy": ("train.log", {"loss": T}, "PASS", set()),
    "sklearn-mlp-diverge": ("train.log", {"loss": T}, "FAIL", {("TP-DIVERGE", 40)}),
    # Norm, NNZs, Bias: the weight vector's norm, its non-zero count and the intercept, not a gradient norm
    "sklearn-sgd-healthy": ("train.log", {"Avg. loss": T, "Norm": OT, "NNZs": OT, "Bias": OT}, "PASS", set()),
    "sklearn-sgd-diverge": ("train.log", {"Avg. loss": T, "Norm": OT}, "FAIL", {("TP-DIVERGE", 59)}),
    "river-healthy": ("train.log", {"LogLoss": T}, "PASS", set()),
    "river-diverge": ("train.log", {"LogLoss": T}, "FAIL", {("TP-DIVERGE", 20)}),
    "skorch-healthy": ("train.log", {"train_loss": T, "valid_loss": E, "valid_acc": OT}, "PASS", set()),
    "skorch-diverge": ("train.log", {"train_loss": T, "valid_loss": E}, "FAIL", {("TP-NAN", 13)}),
    "fastai-healthy": ("train.log", {"train_loss": T, "valid_loss": E, "accuracy": OT}, "PASS", set()),
    "fastai-diverge": ("train.log", {"train_loss": T, "valid_loss": E, "accuracy": OT}, "FAIL", {("TP-DIVERGE", 320)}),
    "ignite-healthy": ("train.log", {"Loss": T, "Training/Avg loss": T, "Validation/Avg loss": E}, "PASS", set()),
    "ignite-nan": ("train.log", {"Loss": T, "Validation/Avg loss": E}, "FAIL", {("TP-NAN", 19)}),
    "torchrun-healthy": ("logs/rank_1.log", {"train loss": T, "ms": Role.STEP_TIME, "data ms": Role.LOADER_TIME},
                         "PASS", set()),
    "torchrun-nan-rank1": ("logs/rank_1.log", {"train loss": T}, "FAIL", {("TP-NAN", 30)}),
    "torchrun-straggler": ("logs/rank_1.log", {"data ms": Role.LOADER_TIME}, "WARN", {("TL-RANK-STRAGGLER", 40)}),
    "add-scalars-healthy": ("runs/exp", {"loss_train/loss": T, "loss_val/loss": E}, "PASS", set()),
    "add-scalars-overfit": ("runs/exp", {"loss_train/loss": T, "loss_val/loss": E}, "WARN", set()),
    "tensorboardx-healthy": ("runs/tbx", {"train/loss": T}, "PASS", set()),
    "keras-v2-healthy": ("train.log", {"loss": T, "val_loss": E}, "PASS", set()),
    "spacy-healthy": ("train.log", {"LOSS TOK2VEC": T, "LOSS NER": T}, "PASS", set()),
    "spacy-diverge": ("train.log", {"LOSS TOK2VEC": T, "LOSS NER": T}, "FAIL", {("TP-DIVERGE", 25)}),
    "keras-v2-diverge": ("train.log", {"loss": T, "val_loss": E}, "FAIL", {("TP-NAN", 14), ("TL-HELDOUT-RISE", 12)}),
    "tensorboardx-diverge": ("runs/tbx", {"train/loss": T}, "FAIL", {("TP-NAN", 145)}),
    # rewards rise, RL losses are not losses: TL-REWARD-COLLAPSE judges the reward, so neither run is NOT-CHECKED
    "sb3-ppo-collapse": ("train.log", {"rollout/ep_rew_mean": OT, "train/loss": OT}, "WARN",
                         {("TL-REWARD-COLLAPSE", 815)}),
    "sb3-ppo-healthy": ("train.log", {"rollout/ep_rew_mean": OT, "train/loss": OT, "train/value_loss": OT},
                        "PASS", set()),
}


@pytest.mark.parametrize("run", sorted(GALLERY))
def test_gallery_run_read_and_judged(run: str) -> None:
    file, roles, verdict, must = GALLERY[run]
    path = LIVE / run / file
    if not path.exists():
        pytest.skip(f"gallery run {run} not present (make gallery)")
    log = read(str(path))
    got = {s.name: s.role for s in log.series.values() if s.name in roles}
    assert got == roles
    rep = judge_path(str(path), now=1e12)
    bad = {(f.id, f.location.line if f.location.line is not None else f.location.record) for f in rep.findings
           if f.level.value in ("FAIL", "WARN")}
    assert rep.verdict.value == verdict, sorted(bad)
    assert must <= bad, sorted(bad)


def test_short_epoch_table_judged_with_windows_sized_to_it() -> None:
    """fastai's 10-epoch table: train_loss 0.999 at epoch 0, 24.2 at epoch 2, 2.47 at epoch 9 (accuracy 0.752 ->
    0.524). Windows of 5 over 10 points made the end window half the run and the lowest level the end's own
    (ratio 1); windows of n // 4 = 2 points, a start window of one point, measure 2.88 / 0.999."""
    path = LIVE / "fastai-diverge" / "train.log"
    if not path.exists():
        pytest.skip("gallery run fastai-diverge not present")
    rep = judge_path(str(path), now=1e12)
    f = [f for f in rep.findings if f.id == "TP-DIVERGE"]
    assert len(f) == 1 and f[0].location.line == 320, [(x.id, x.evidence.text) for x in rep.findings]
    v = f[0].evidence.values
    assert (v["window"], round(v["end"], 4), v["minimum"], v["min_first"], v["end_first"]) == (
        2, 2.8769, 0.999155, 0, 8)
    assert float(v["z"]) > float(v["z_need"])


def test_nan_after_a_rise_too_short_for_a_trend_shows_where_it_rose() -> None:
    """Keras verbose=2: loss 0.1834 at epoch 3, 0.2120, 1.4764, 6.3e17 at epoch 6, NaN from epoch 7. Six finite
    points are too few for TP-DIVERGE (10); TP-NAN, the one finding of this fault, names the rise before it and
    relates its lowest point (epoch 3, line 6), not a second FAIL on the series."""
    path = LIVE / "keras-v2-diverge" / "train.log"
    if not path.exists():
        pytest.skip("gallery run keras-v2-diverge not present")
    rep = judge_path(str(path), now=1e12)
    nan = [f for f in rep.findings if f.id == "TP-NAN" and f.series == "`loss`"]
    assert len(nan) == 1 and nan[0].location.line == 14
    v = nan[0].evidence.values
    assert (v["rise_from"], v["rise_from_step"], v["rise_to"], v["rise_to_step"]) == (0.1834, 3, 6.30957771256234e17, 6)
    assert round(float(v["rise_ratio"]) / 1e18, 3) == 3.44
    assert [r.location.line for r in nan[0].related if r.role == "rise-from"] == [6]
    assert "rose 3.44e+18x from its lowest 0.1834 at step 3" in nan[0].evidence.text
    assert not [f for f in rep.findings if f.series == "`loss`" and f.id != "TP-NAN" and f.level.value == "FAIL"]


def test_zeros_at_printed_precision_are_not_exact_zeros() -> None:
    """spaCy prints every loss with 2 decimals: `0.00` after `2.00` (LOSS TOK2VEC) on a toy corpus it fits
    (ENTS_F 100) is below 0.005, not an exact zero; HF's `'loss': 0.0` beside 5.594e+10 (trl-nan) is one."""
    path = LIVE / "spacy-healthy" / "train.log"
    if not path.exists():
        pytest.skip("gallery run spacy-healthy not present")
    rep = judge_path(str(path), now=1e12)
    assert not [f for f in rep.findings if f.id.startswith("TP-ZERO-LOSS")]
    cov = rep.coverage["zero-loss"]
    assert set(cov) == {"`LOSS TOK2VEC`", "`LOSS NER`"}
    assert all(c is not None and c.reason.value == "not-applicable" and "printed precision (2 decimals)" in c.detail
               for c in cov.values()), cov
    trl = judge_path(str(LIVE / "trl-nan" / "train.log"), now=1e12)
    assert [f.id for f in trl.findings if f.series == "`loss`" and f.level.value == "FAIL"] == ["TL-NAN-HIDDEN"]
    assert "35 consecutive values of exactly zero" in only_one(trl, "TL-NAN-HIDDEN").evidence.text


def only_one(rep, rule: str):
    got = [f for f in rep.findings if f.id == rule]
    assert len(got) == 1, [f.id for f in rep.findings]
    return got[0]


def test_reward_collapse_judged_on_rl_runs() -> None:
    """SB3 PPO on CartPole: ep_rew_mean 25.6, 14, 9.45, then ~9.3 for 30 boxes (a one-action policy) WARNs
    TL-REWARD-COLLAPSE; the healthy run (rising to ~180) PASSes on its judged reward instead of TP-NO-LOSS."""
    path = LIVE / "sb3-ppo-collapse" / "train.log"
    if not path.exists():
        pytest.skip("gallery run sb3-ppo-collapse not present")
    rep = judge_path(str(path), now=1e12)
    f = only_one(rep, "TL-REWARD-COLLAPSE")
    v = f.evidence.values
    assert (f.level.value, f.series, v["window"], round(v["end"], 2), round(v["best"], 2), v["best_first"],
            v["best_last"]) == ("WARN", "`rollout/ep_rew_mean`", 5, 9.42, 19.8, 512, 1024)
    assert float(v["z"]) > 100 and "TP-NO-LOSS" not in {x.id for x in rep.findings}
    healthy = judge_path(str(LIVE / "sb3-ppo-healthy" / "train.log"), now=1e12)
    assert healthy.verdict.value == "PASS" and healthy.coverage["reward-collapse"] == {"`rollout/ep_rew_mean`": None}
    m = [m for m in healthy.measurements if m.check == "reward-collapse"]
    assert len(m) == 1 and float(m[0].values["ratio"]) == 1.0


def test_nan_in_an_rl_objective_is_a_nan() -> None:
    """A REINFORCE run of the population whose policy was poisoned at update 22: `policy_loss nan` from line 11 while
    the reward stays finite. The objective is not judged for a trend (RL), but a NaN is a NaN: TP-NAN, not the PASS
    its judged reward alone would give."""
    path = ROOT / "fixtures" / "population" / "rl" / "rl-nan-000" / "train.log"
    if not path.exists():
        pytest.skip("population run rl-nan-000 not present")
    rep = judge_path(str(path), now=1e12)
    f = only_one(rep, "TP-NAN")
    got = (rep.verdict.value, f.series, f.location.line, f.evidence.values["count"])
    assert got == ("FAIL", "`policy_loss`", 11, 7)
    healthy = judge_path(str(ROOT / "fixtures" / "population" / "rl" / "rl-healthy-000" / "train.log"), now=1e12)
    assert healthy.verdict.value == "PASS" and healthy.coverage["non-finite-loss"] == {"`policy_loss`": None}


def test_gallery_ranks_in_one_torchrun_stdout() -> None:
    """torchrun's own [rank0]: / [rank1]: prefixes in one stdout: per-rank series, the NaN named by its rank."""
    path = LIVE / "torchrun-nan-rank1" / "train.log"
    if not path.exists():
        pytest.skip("gallery run torchrun-nan-rank1 not present")
    rep = judge_path(str(path), now=1e12)
    nan = [f for f in rep.findings if f.id == "TP-NAN"]
    assert [f.series for f in nan] == ["`rank1/train loss`"] and "step 30" in nan[0].evidence.text


def test_add_scalars_folders_name_the_split(tmp_path: Path) -> None:
    """SummaryWriter.add_scalars("loss", {"train": …, "val": …}) writes loss_train/ and loss_val/ sub-writers."""
    pytest.importorskip("tensorboard")
    from tbwrite import scalar_event, write
    from trainlint.discovery import discover

    run = tmp_path / "runs" / "exp1"
    (run / "loss_train").mkdir(parents=True)
    (run / "loss_val").mkdir()
    write(str(run), [scalar_event(s, "lr", 1e-3) for s in range(0, 40)])
    write(str(run / "loss_train"), [scalar_event(s, "loss", 2.0 - s / 40) for s in range(0, 40)])
    write(str(run / "loss_val"), [scalar_event(s, "loss", 1.5 + (s - 10) ** 2 / 100) for s in range(0, 40, 2)])
    found = discover(str(tmp_path))
    assert [f.path for f in found.found] == [str(run)]
    log = read(str(run))
    roles = {s.name: s.role for s in log.series.values()}
    assert roles == {"lr": Role.LR, "loss_train/loss": Role.TRAIN_LOSS, "loss_val/loss": Role.EVAL_LOSS}
    rep = judge_path(str(run), now=1e12)
    assert {f.id for f in rep.findings if f.level.value in ("WARN", "FAIL")} & {"TP-OVERFIT", "TL-HELDOUT-RISE"}


def test_one_log_per_rank_is_one_run(tmp_path: Path) -> None:
    """logs/rank_0.log, rank_1.log, rank_2.log: a NaN on rank 1 alone is found in its file; rank 2 stopping early
    and rank 1 lagging are named in theirs (each file judged once, its peers read from their tails)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for r in (0, 1, 2):
        rows = []
        for s in range(1, 41 if r != 2 else 21):
            loss = "nan" if (r == 1 and s == 30) else f"{3 - s / 20:.3f}"
            rows.append(f"step: {s}, loss: {loss}, step_time: {100 + (80 if r == 1 else 0) + s % 3}\n")
        (logs / f"rank_{r}.log").write_text("".join(rows))
    got = {}
    for r in (0, 1, 2):
        p = logs / f"rank_{r}.log"
        _, got[r] = _findings(p)
    bad = {r: {(i, line) for i, lv, line in f if lv in ("FAIL", "WARN")} for r, f in got.items()}
    assert bad[0] == set()
    assert ("TP-NAN", 30) in bad[1] and ("TL-RANK-STRAGGLER", 1) in bad[1]
    assert bad[2] == {("TL-RANK-STOPPED", 20)}


def test_events_under_rank_prefixes(tmp_path: Path) -> None:
    text = ("[rank0]: step 1/10 | train loss 4.2\n[rank1]: step 1/10 | train loss 4.3\n"
            "[rank1]: Traceback (most recent call last):\n[rank1]: torch.OutOfMemoryError: CUDA out of memory.\n")
    _, log = _log(tmp_path, text)
    assert [(e.kind.value, e.line, e.step) for e in log.events] == [("traceback", 3, 1.0), ("interrupted", 4, 1.0)]
    assert "rank 1" in log.events[0].text


def test_hf_lagging_bar_real_run_steps_from_the_epoch() -> None:
    """transformers 5.25 with tqdm's defaults (gallery hf-trainer-lagbar-healthy): the counter printed before a dict
    lags it (0/300 before the dict of step 5, 35/300 before those of 35 and 40). Before: TL-DUPLICATE-STEPS WARN."""
    logf = LIVE / "hf-trainer-lagbar-healthy" / "train.log"
    if not logf.exists():
        pytest.skip("gallery run hf-trainer-lagbar-healthy not present")
    log = read(str(logf))
    loss = next(s for s in log.series.values() if s.name == "loss")
    assert loss.steps.tolist() == [5.0 * k for k in range(1, 61)]
    ev = next(s for s in log.series.values() if s.name == "eval_loss")
    assert ev.steps.tolist() == [50, 100, 150, 200, 250, 300]
    rep, f = _findings(logf, "WARN")
    assert f == [] and rep.verdict.value == "PASS"


@pytest.mark.parametrize("run", ["sklearn-sgd-healthy", "sklearn-sgd-diverge"])
def test_sklearn_sgd_norm_is_the_weights_norm_not_a_gradient_norm(run: str) -> None:
    """SGDRegressor(verbose=1) prints `Norm: 2.28, NNZs: 10, Bias: -0.029614, T: 2000, Avg. loss: 0.199972`: the norm
    of the weight vector (it grows with the weights as the run diverges), so no gradient check judges it; llm.c's
    bare `norm` (a gradient norm) stays one (test_read_text)."""
    path = LIVE / run / "train.log"
    if not path.exists():
        pytest.skip(f"gallery run {run} not present")
    rep = judge_path(str(path))
    assert rep.log is not None and rep.log.by_role(Role.GRAD_NORM) == []
    for check in ("zero-grad", "grad-finite", "grad-spike"):
        assert check not in rep.ran and rep.skipped[check].detail == "no gradient-norm series in the log"
