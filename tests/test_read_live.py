"""Stdout as live runs print it, from runs written by the real frameworks (fixtures/live, made by
``make gallery``): series, roles, counts, steps and where each step came from, and the exact text
at the location of chosen points."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FIXTURES, series
from trainlint.core.lines import split_lines
from trainlint.core.model import EventKind, Role
from trainlint.readers import detect, read

LIVE = FIXTURES / "live"


def at(log, s, i) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    """(line, the text at the point's column span) as an editor shows it."""
    loc = log.locate(s, i)
    lines = split_lines(open(log.path, encoding="utf-8", errors="replace").read())
    return loc.line, lines[loc.line - 1][loc.column - 1:loc.end_column - 1]


def test_hf_trainer_5_quoted_values_take_the_progress_bar_step():
    log = read(str(LIVE / "hf-healthy" / "train.log"))
    assert log.format == "text"
    loss, ev = series(log, "loss"), series(log, "eval_loss")
    assert (loss.role, ev.role) == (Role.TRAIN_LOSS, Role.EVAL_LOSS)
    assert (len(loss), loss.step_basis, loss.steps[0], loss.steps[-1]) == (60, "progress-bar", 5, 300)
    assert list(ev.steps) == [50, 100, 150, 200, 250, 300]
    assert at(log, loss, 0) == (9, "14.22") and at(log, loss, 59) == (760, "0.147")
    assert at(log, ev, 0) == (130, "4.462")  # the eval dict after a cursor-up escape
    assert series(log, "grad_norm").role == Role.GRAD_NORM and series(log, "learning_rate").role == Role.LR
    # the end-of-run dict is an event, and the summary block is not a point
    assert [e.kind for e in log.events] == [EventKind.END_OF_RUN]
    assert not any(s.name == "train_loss" for s in log.series.values())


def test_hf_dicts_without_bar_redraws_are_numbered_in_order_and_say_so(tmp_path):
    p = tmp_path / "train.log"
    p.write_text("  0%|          | 0/50 [00:00<?, ?it/s]\n"
                 " 10%|█         | 5/50 [00:10<01:30, 2.0s/it]\n"
                 "{'loss': 2.5, 'learning_rate': 1e-4, 'epoch': 0.1}\n"
                 "{'loss': 2.4, 'learning_rate': 1e-4, 'epoch': 0.2}\n"
                 "{'loss': 2.3, 'learning_rate': 1e-4, 'epoch': 0.3}\n")
    loss = series(read(str(p)), "loss")
    assert (list(loss.steps), loss.step_basis) == ([1, 2, 3], "index")


def test_keras_fit_reads_the_last_bar_line_of_each_epoch():
    log = read(str(LIVE / "keras-healthy" / "train.log"))
    loss, val = series(log, "loss"), series(log, "val_loss")
    assert (len(loss), loss.step_basis, list(loss.steps[:3])) == (12, "epoch", [1, 2, 3])
    assert val.role == Role.EVAL_LOSS and log.facts["planned_epochs"] == 12
    assert at(log, loss, 0) == (4, "2.3670") and at(log, val, 11) == (48, "0.1156")


def test_lightning_progress_bar_postfix():
    log = read(str(LIVE / "lightning-healthy" / "train.log"))
    step, epoch, val = (series(log, "train_loss_step"), series(log, "train_loss_epoch"), series(log, "val_loss"))
    assert (len(step), step.steps[0], step.steps[-1], step.step_basis) == (96, 4, 384, "progress-bar")
    # the postfix repeats val_loss on every redraw: one point per new value
    assert len(val) == 12 and val.steps[0] == 32 and val.role == Role.EVAL_LOSS
    assert epoch.aggregation.value == "epoch-average"
    assert at(log, val, 11) == (372, "0.100")
    diverge = read(str(LIVE / "lightning-diverge" / "train.log"))
    assert any(v != v for v in series(diverge, "train_loss_epoch").values)  # "nan.0" is NaN


def test_tqdm_loop_postfix_and_epoch_prints():
    log = read(str(LIVE / "tqdm-healthy" / "train.log"))
    loss, tr, va = series(log, "loss"), series(log, "train loss"), series(log, "val loss")
    assert (len(loss), loss.steps[-1], loss.step_basis) == (384, 383, "progress-bar")
    assert (len(tr), tr.step_basis, va.role) == (12, "epoch", Role.EVAL_LOSS)
    assert at(log, loss, 383) == (813, "0.0402") and at(log, tr, 11) == (816, "0.0889")
    assert log.facts["planned_epochs"] == 12


@pytest.mark.parametrize("line,key,value,step", [
    ("iter 100: loss 2.3451, time 12.31ms, mfu 3.20%", "loss", 2.3451, 100),
    ("step 500: train loss 2.1000, val loss 2.2000", "val loss", 2.2, 500),
    ("step 12/400 | train loss 4.238921 | norm 1.2 | lr 6.00e-04 | (12.3 ms | 41000 tok/s)", "train loss",
     4.238921, 12),
    (" iteration      100/    1000 | consumed samples:         3200 | elapsed time per iteration (ms): 512.3 | "
     "learning rate: 1.500E-04 | global batch size:    32 | lm loss: 2.310000E+00 | loss scale: 65536.0 | "
     "grad norm: 1.200 | number of skipped iterations:   0 | number of nan iterations:   0 |", "lm loss", 2.31, 100),
    # Megatron-LM core >= 0.5 starts the line with a timestamp
    (" [2024-05-01 12:00:00] iteration      200/    1000 | consumed samples:         6400 | elapsed time per "
     "iteration (ms): 498.1 | learning rate: 1.500000E-04 | global batch size:    32 | lm loss: 2.100000E+00 | "
     "loss scale: 32768.0 | grad norm: 1.100 | number of skipped iterations:   1 | number of nan iterations:   0 |",
     "lm loss", 2.1, 200),
    ("2024-01-01 | INFO | train_inner | epoch 001:    100 / 487 loss=4.655, nll_loss=3.1, ppl=8.6, wps=1000, "
     "num_updates=100, lr=0.0005, gnorm=1.23, loss_scale=128", "loss", 4.655, 100),
    ("steps:  10%|█         | 100/1000 [00:30<04:30, 3.3it/s, avr_loss=0.123]", "avr_loss", 0.123, 100),
    # torchtune's recipes: the bar's description is "epoch|global step|Loss: value"
    ("3|84|Loss: 0.6489648818969727:  10%|█         | 4/40 [00:00<00:00, 178.16it/s]", "loss", 0.6489648818969727,
     84),
    # torchtune's DiskLogger file
    ("Step 15 | loss:2.3 lr:2e-05 tokens_per_second_per_gpu:100.0", "loss", 2.3, 15),
    # hand-written loops: the step, then "key value" pairs without a colon
    ("step 12: loss 1.5", "loss", 1.5, 12),
    ("step 12, loss 1.5, lr 3e-4", "loss", 1.5, 12),
    ("Iter 300 | train loss 2.25 | val loss 2.5 | lr 1.0e-04", "val loss", 2.5, 300),
])
def test_trainer_line_shapes(tmp_path, line, key, value, step):
    p = tmp_path / "train.log"
    p.write_text(line + "\n")
    assert detect(str(p)).format == "text"
    log = read(str(p))
    s = series(log, key)
    assert (s.values[0], s.steps[0]) == (pytest.approx(value), step)
    assert s.role in (Role.TRAIN_LOSS, Role.EVAL_LOSS)
    assert at(log, s, 0)[1] != ""
    # a loss scale and a percent are never a loss or a step
    assert all(x.role != Role.TRAIN_LOSS for x in log.series.values() if "scale" in x.name)


def test_deepspeed_overflow_is_a_skipped_step_event(tmp_path):
    p = tmp_path / "train.log"
    p.write_text("steps: 10 loss: 2.3000 iter time (s): 0.5\n[Rank 0] [deepspeed] OVERFLOW! Rank 0 Skipping step. "
                 "Attempted loss scale: 65536, reducing to 32768\nsteps: 20 loss: 2.2000 iter time (s): 0.5\n")
    log = read(str(p))
    assert [(e.kind, e.line) for e in log.events] == [(EventKind.SKIPPED_STEP, 2)]
    assert list(series(log, "loss").steps) == [10, 20] and log.facts["skipped_steps"] == 1


def _one(path: Path) -> Path:
    found = [p for p in path.rglob("*") if p.is_dir() and (p / "meta.yaml").exists() and (p / "metrics").is_dir()]
    assert len(found) == 1, found
    return found[0]


def test_mlflow_file_store_points_on_the_metric_file_lines():
    run = _one(LIVE / "mlflow-healthy" / "mlruns")
    assert detect(str(run)).format == "mlflow"
    log = read(str(run))
    loss, val = series(log, "train_loss"), series(log, "val_loss")
    assert (loss.role, val.role, series(log, "lr").role) == (Role.TRAIN_LOSS, Role.EVAL_LOSS, Role.LR)
    assert (len(loss), loss.steps[0], loss.steps[-1], len(val)) == (96, 4, 384, 12)
    assert log.facts["run_status"] == "finished"
    loc = log.locate(loss, 0)
    assert (Path(loc.path).name, loc.line) == ("train_loss", 1)
    text = Path(loc.path).read_text().splitlines()[0]
    assert text.split(" ")[1] == text[loc.column - 1:loc.end_column - 1] == "4.732658863067627"
    broken = read(str(_one(LIVE / "mlflow-diverge" / "mlruns")))
    assert any(v != v for v in series(broken, "train_loss").values)  # mlflow writes NaN as "nan"


def test_dvclive_tsv_points_on_their_lines():
    folder = LIVE / "dvclive-healthy" / "dvclive"
    assert detect(str(folder)).format == "dvclive"
    log = read(str(folder))
    loss = series(log, "train_loss")
    assert (len(loss), loss.steps[0], series(log, "val_loss").role) == (96, 4, Role.EVAL_LOSS)
    loc = log.locate(loss, 0)
    assert (Path(loc.path).name, loc.line, loc.column) == ("train_loss.tsv", 2, 3)  # line 1 is the header


def test_wandb_offline_run_folder_judges_its_stdout_and_skips_the_client_logs():
    from trainlint.discovery import discover

    d = discover(str(LIVE / "wandb-healthy"))
    found = sorted(Path(f.path).name for f in d.found)
    assert found == ["output.log", "train.log"], found  # not debug.log / debug-internal.log (nor their links)
    wandb_bin = [why for p, why in d.skipped if p.endswith(".wandb")]
    assert wandb_bin and "not read yet" in wandb_bin[0]


def test_stores_in_the_cli_verdicts_and_exit_codes():
    import subprocess
    import sys

    def check(name: str) -> int:
        return subprocess.run([sys.executable, "-m", "trainlint.cli", "check", "-q", str(LIVE / name)],
                              capture_output=True, text=True).returncode

    assert [check(n) for n in ("mlflow-healthy", "mlflow-db-healthy", "dvclive-healthy", "wandb-healthy")] == [0] * 4
    assert [check(n) for n in ("mlflow-diverge", "mlflow-db-diverge", "dvclive-diverge", "wandb-diverge")] == [1] * 4


def test_keras_tensorboard_split_folders_are_one_run_with_held_out_validation():
    """Keras' TensorBoard callback (TensorFlow backend) writes logs/train and logs/validation: one unit, and
    validation/epoch_loss is held-out loss, not a second train loss."""
    from trainlint.discovery import discover

    logs = LIVE / "keras-tb-healthy" / "logs"
    assert detect(str(logs)).format == "tfevents"
    found = sorted((Path(f.path).name, f.format) for f in discover(str(LIVE / "keras-tb-healthy")).found)
    assert found == [("logs", "tfevents"), ("train.log", "text")]  # not logs/train and logs/validation apart
    log = read(str(logs))
    train, val = series(log, "train/epoch_loss"), series(log, "validation/epoch_loss")
    assert (train.role, val.role, len(train), len(val)) == (Role.TRAIN_LOSS, Role.EVAL_LOSS, 12, 12)
    assert len(log.members) == 2 and {Path(m).parent.name for m in log.members} == {"train", "validation"}
    broken = read(str(LIVE / "keras-tb-diverge" / "logs"))
    assert any(v != v for v in series(broken, "validation/epoch_loss").values)


def test_mlflow_sqlite_store_reads_nan_from_is_nan_and_never_touches_the_file(tmp_path):
    import hashlib
    import shutil

    db = tmp_path / "mlflow.db"
    shutil.copy(LIVE / "mlflow-db-diverge" / "mlflow.db", db)
    before = (hashlib.sha256(db.read_bytes()).hexdigest(), sorted(p.name for p in tmp_path.iterdir()))
    assert detect(str(db)).format == "mlflow-db"
    log = read(str(db))
    loss = series(log, "train_loss")
    assert (len(loss), loss.steps[0], series(log, "val_loss").role) == (96, 4, Role.EVAL_LOSS)
    nan_at = [loss.steps[i] for i, v in enumerate(loss.values) if v != v]
    assert nan_at[0] == 204 and len(nan_at) == 46  # stored as 0.0 with is_nan = 1: NaN, not a zero loss
    assert 0.0 not in list(loss.values)
    loc = log.locate(loss, 0)
    assert loc.record == 96 and loc.line is None  # the findings go on the text view (one row per line)
    assert log.facts["run_status"] == "finished"
    after = (hashlib.sha256(db.read_bytes()).hexdigest(), sorted(p.name for p in tmp_path.iterdir()))
    assert before == after  # no journal, no lock file, no write
    healthy = read(str(LIVE / "mlflow-db-healthy" / "mlflow.db"))
    assert all(v == v for v in series(healthy, "train_loss").values)


def test_a_resumed_hf_run_in_the_same_stdout_keeps_its_global_steps():
    # crash at step 160 (before its log call), resume from checkpoint-100: the new bar counts 0/300 then 101/300,
    # the global step (its first redraw lags the dict of step 105, as bars do)
    log = read(str(LIVE / "hf-resume" / "train.log"))
    loss = series(log, "loss")
    steps = list(loss.steps)
    back = next(i for i in range(1, len(steps)) if steps[i] < steps[i - 1])
    # issue 24: a bar is never put over what the log prints: each dict's epoch x 32 steps per epoch is its step, so
    # the first dict after the resume is step 105 (its bar showed 101) and the last 300 (its bar showed 295)
    assert (steps[back - 1], steps[back], steps[-1], log.facts["max_steps"]) == (155, 105, 300, 300)


def test_nanogpt_train_py_stdout():
    # karpathy/nanoGPT's own train.py on CPU (make gallery): "iter N: loss X, time …" every 5 iterations and
    # "step N: train loss X, val loss Y" every 50; the planned iterations from its "Overriding: max_iters" line
    log = read(str(LIVE / "nanogpt-healthy" / "train.log"))
    loss, val = series(log, "loss"), series(log, "val loss")
    assert (len(loss), loss.steps[1], loss.steps[-1], loss.step_basis) == (61, 5, 300, "step")
    assert (len(val), val.role, list(val.steps)[:2]) == (7, Role.EVAL_LOSS, [0, 50])
    assert at(log, loss, 60) == (102, "2.9227") and log.facts["max_steps"] == 300


def test_trl_sft_trainer_stdout():
    """TRL's SFTTrainer prints HF Trainer's dicts with its own keys (entropy, num_tokens, mean_token_accuracy)."""
    log = read(str(LIVE / "trl-healthy" / "train.log"))
    loss, ev = series(log, "loss"), series(log, "eval_loss")
    assert (len(loss), loss.step_basis, loss.steps[0], loss.steps[-1]) == (40, "progress-bar", 5, 200)
    assert at(log, loss, 0) == (51, "2.827") and at(log, loss, 39) == (486, "0.6129")
    assert list(ev.steps) == [50, 100, 150, 200] and at(log, ev, 0) == (156, "0.7214")
    assert {series(log, k).role for k in ("entropy", "num_tokens", "mean_token_accuracy")} == {Role.OTHER}
    assert [e.kind for e in log.events] == [EventKind.END_OF_RUN]


def test_torchtune_recipe_stdout_and_its_disk_logger():
    """torchtune's full_finetune_single_device on CPU: its bar's description names the global step and the
    loss at each redraw; its DiskLogger file has the same 120 points, one line each."""
    log = read(str(LIVE / "torchtune-healthy" / "train.log"))
    loss = series(log, "loss")
    assert (len(loss), loss.role, loss.step_basis, loss.steps[0], loss.steps[-1]) == (120, Role.TRAIN_LOSS, "step", 1,
                                                                                      120)
    assert at(log, loss, 0) == (76, "3.0590052604675293") and at(log, loss, 119) == (405, "0.6314952969551086")
    [disk] = (LIVE / "torchtune-healthy" / "logs").glob("log_*.txt")
    dl = read(str(disk))
    dloss = series(dl, "loss")
    assert list(dloss.values) == list(loss.values) and at(dl, dloss, 119) == (120, "0.6314952969551086")
    assert series(dl, "lr").role == Role.LR
