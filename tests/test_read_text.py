"""Plain-text trainer stdout: the patterns users commit, each value at its line."""

from __future__ import annotations

from conftest import LOGS, corpus, series
from trainlint.core.model import EventKind, Role
from trainlint.readers import detect, read


def test_llmc_slurm_log_values_and_kill():
    log = read(str(LOGS / "gpt2_train.11672114.log"))
    loss, norm = series(log, "loss"), series(log, "norm")
    assert (len(loss), loss.steps[-1], loss.values[-1]) == (750, 750, 4.763922)
    assert norm.role == Role.GRAD_NORM and series(log, "val loss").role == Role.EVAL_LOSS
    loc = log.locate(loss, 749)
    text = (LOGS / "gpt2_train.11672114.log").read_text().splitlines()[loc.line - 1]
    assert text[loc.column - 1:loc.end_column - 1] == "4.763922"
    assert log.facts["max_steps"] == 19560
    assert any(e.kind == EventKind.INTERRUPTED and "TIME LIMIT" in e.text for e in log.events)


def test_oom_at_startup_has_no_series():
    p = LOGS / "gpt2_train.11672087.log"
    d = detect(str(p))
    assert d.format is None or read(str(p)).by_role(Role.TRAIN_LOSS) == []


def test_llmc_short_form_and_modded_nanogpt():
    log = read(str(corpus("text_logs/SiddanthEmani__GPT-2-124M-CUDA__log124M__main.log")))
    assert series(log, "trl").role == Role.TRAIN_LOSS and series(log, "tel").role == Role.EVAL_LOSS
    assert len(series(log, "trl")) == 19552
    modded = read(str(corpus("text_logs/KellerJordan__modded-nanogpt__records__track_1_short__2024-10-10_Muon__"
                             "eb5659d0-fb6a-49e5-a311-f1f89412f726.txt")))
    tl = series(modded, "train_loss")
    assert len(tl) == 6200 and series(modded, "val_loss").role == Role.EVAL_LOSS
    # step_avg:nanms is a timing field: NaN there is not a loss value
    assert all(s.role == Role.OTHER for s in modded.series.values() if s.name == "step_avg")


def test_build_nanogpt_and_hf_dicts():
    log = read(str(corpus("text_logs/AGNDM__build-nanogpt__log_bigger__log.txt")))
    assert len(series(log, "train")) == 19073 and series(log, "val").role == Role.EVAL_LOSS
    hf = read(str(corpus("text_logs/NguyenThaoVi0702__whisper_app_test__finetune-whisper-grok__error.py@ee5f675")))
    loss = series(hf, "loss")
    assert len(loss) == 39 and loss.step_basis == "index" and list(loss.steps[:3]) == [1, 2, 3]


def test_epoch_prints_and_mmengine():
    log = read(str(LOGS / "cafa_out.log"))
    assert series(log, "Train Loss").steps[0] == 80 and series(log, "Validation Loss").role == Role.EVAL_LOSS
    mm = read(str(corpus("text_logs/tranquanglam123__MLAI_Final__20230523_070719.log")))
    loss = series(mm, "loss")
    assert len(loss) == 80 and loss.steps[0] == 50 and series(mm, "grad_norm").role == Role.GRAD_NORM


def test_lines_before_the_first_step_are_not_measurements(tmp_path):
    p = tmp_path / "train.log"
    p.write_text("config: lr=0.1 loss: 3.0\nstep 1, loss: 2.5\nlr: 0.01\nstep 2, loss: 2.4\n")
    log = read(str(p))
    assert list(series(log, "loss").steps) == [1, 2] and list(series(log, "lr").steps) == [1]
