"""CSV and JSON-lines logs: sparse cells, step columns, flavours, exact cells."""

from __future__ import annotations

import math

from conftest import LOGS, RUNS, corpus, series
from trainlint.core.model import Role
from trainlint.readers import detect, read


def test_keras_csvlogger_epochs_and_cell_columns():
    log = read(str(RUNS / "keras-brats" / "training.log"))
    loss, val = series(log, "loss"), series(log, "val_loss")
    assert (loss.role, val.role, len(loss), loss.step_basis) == (Role.TRAIN_LOSS, Role.EVAL_LOSS, 24, "epoch")
    assert log.facts["flavour"] == "keras"
    loc = log.locate(loss, 0)  # row 2, the 4th cell "0.05603187158703804"
    line = (RUNS / "keras-brats" / "training.log").read_text().splitlines()[1]
    assert loc.line == 2 and line[loc.column - 1:loc.end_column - 1] == "0.05603187158703804"


def test_lightning_sparse_rows_blank_is_absent_not_nan():
    log = read(str(corpus("csv_logs/0Xero7__slm_training__lightning_logs__version_0__metrics.csv")))
    step, val = series(log, "train_loss_step"), series(log, "val_loss")
    assert len(step) == 2814 and len(val) == 10
    assert all(math.isfinite(v) for v in val.values)
    assert log.facts["flavour"] == "lightning" and step.steps[0] == 49


def test_ultralytics_results_components_and_padded_header():
    log = read(str(RUNS / "yolo-gallstone" / "results.csv"))
    assert log.facts["flavour"] == "ultralytics"
    assert [s.name for s in log.by_role(Role.TRAIN_LOSS)] == ["train/box_loss", "train/seg_loss", "train/cls_loss",
                                                             "train/dfl_loss"]
    padded = read(str(corpus("csv_logs/176yunxuan__PCBDetection__results.csv")))
    assert len(series(padded, "train/box_loss")) == 70 and series(padded, "x/lr0").role == Role.LR


def test_detectron2_metrics_json():
    log = read(str(RUNS / "detectron2-maskrcnn" / "output" / "metrics.json"))
    assert log.facts["flavour"] == "detectron2"
    total = series(log, "total_loss")
    assert (total.role, total.component, len(total), total.steps[0]) == (Role.TRAIN_LOSS, False, 16, 19)
    assert series(log, "loss_cls").component
    assert series(log, "time").role == Role.STEP_TIME and series(log, "data_time").role == Role.LOADER_TIME
    loc = log.locate(total, 15)
    line = (RUNS / "detectron2-maskrcnn" / "output" / "metrics.json").read_text().splitlines()[15]
    assert loc.line == 16 and line[loc.column - 1:loc.end_column - 1] == repr(total.values[15])


def test_detectron2_nan_tokens_in_eval_lines():
    log = read(str(corpus("json_logs/Ghailen-Ben-Achour__detectron2_detection__output__metrics.json")))
    aps = series(log, "bbox/APs")
    assert all(math.isnan(v) for v in aps.values) and aps.role == Role.OTHER


def test_llamafactory_steps_and_total():
    log = read(str(RUNS / "llamafactory-nsllm" / "trainer_log.jsonl"))
    loss = series(log, "loss")
    assert (len(loss), loss.steps[0], loss.steps[-1], log.facts["max_steps"]) == (435, 5, 2175, 2178)
    nulls = read(str(LOGS / "qwen_medical_trainer_log.jsonl"))
    assert len(series(nulls, "eval_loss")) == 13 and series(nulls, "eval_loss").role == Role.EVAL_LOSS


def test_progress_only_llamafactory_has_no_series():
    log = read(str(corpus("llamafactory_jsonl/AnthonyTang7__LLM-Assisted-RL__trainer_log.jsonl")))
    assert log.series == {} and log.facts["max_steps"] == 512


def test_mmengine_and_wandb_history():
    mm = read(str(corpus("json_logs/kv-chiu__Watermelon-Segmentation__scalars.json")))
    assert mm.facts["flavour"] == "mmengine" and series(mm, "decode.loss_ce").component
    wb = read(str(corpus("wandb/mfts__spaceinvaders-wandb-challenge__wandb-history.jsonl")))
    assert wb.facts["flavour"] == "wandb" and series(wb, "episodic_reward").role == Role.OTHER


def test_jsonl_bad_lines_are_problems(tmp_path):
    p = tmp_path / "metrics.jsonl"
    p.write_text('{"step": 1, "loss": 2.0}\n[1, 2]\nnot json\n{"step": 2, "loss": "x"}\n{"step": 3, "loss": 1.5}\n')
    log = read(str(p))
    assert list(series(log, "loss").steps) == [1, 3]
    msgs = [(pr.line, pr.message.split(";")[0]) for pr in log.problems]
    assert msgs[0] == (2, "line 2 is valid JSON but not an object (list)")
    assert msgs[1][0] == 3 and msgs[2] == (4, "`loss` is str 'x', not a number")


def test_detect_by_name_and_content():
    assert detect(str(RUNS / "keras-brats" / "training.log")).format == "csv"
    assert detect(str(RUNS / "detectron2-maskrcnn" / "output" / "metrics.json")).format == "jsonl"
    assert detect(str(corpus("wandb/MrCogito__Deep_learning_2023__wandb__run-20231124_225317-yeuu9915__"
                             "run-yeuu9915.wandb"))).format is None
    wrong_name = corpus("hf_trainer_state/yuanhuanghuang__quality__baselines__lrqa____init__.py")
    assert detect(str(wrong_name)).format == "hf-trainer-state"
