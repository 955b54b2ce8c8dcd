"""HF Trainer trainer_state.json: entries told apart, summary kept apart, exact lines."""

from __future__ import annotations

import math

from conftest import LOGS, RUNS, corpus, series
from trainlint.core.model import Aggregation, EventKind, Role
from trainlint.readers import detect, read


def test_gallery_series_roles_counts_and_last_loss_line():
    log = read(str(RUNS / "gallery-healthy" / "trainer_state.json"))
    loss = series(log, "loss")
    assert (loss.role, loss.aggregation, len(loss)) == (Role.TRAIN_LOSS, Aggregation.STEP, 60)
    assert series(log, "grad_norm").role == Role.GRAD_NORM
    assert series(log, "learning_rate").role == Role.LR
    # The last train entry's loss sits on line 429; the summary's train_loss (line 436) is not a point.
    loc = log.locate(loss, len(loss) - 1)
    assert (loc.line, loc.column) == (429, 15)
    assert loss.values[-1] == 1.0645489692687988 and loss.steps[-1] == 300
    assert not any(s.name == "train_loss" for s in log.series.values())
    [end] = [e for e in log.events if e.kind == EventKind.END_OF_RUN]
    assert end.line == 429 + 3 and log.facts["summary"]["train_loss"] == 1.1394167772928874
    assert log.facts["max_steps"] == 300 and log.facts["global_step"] == 300


def test_eval_entries_are_held_out_series_and_events():
    log = read(str(RUNS / "gallery-overfit" / "trainer_state.json"))
    ev = series(log, "eval_loss")
    assert (ev.role, ev.aggregation, len(ev)) == (Role.EVAL_LOSS, Aggregation.EVAL, 20)
    assert len([e for e in log.events if e.kind == EventKind.EVALUATION]) == 20
    assert series(log, "loss").role == Role.TRAIN_LOSS and len(series(log, "loss")) == 60


def test_named_eval_losses_are_held_out():
    log = read(str(corpus("hf_trainer_state/aigoncharov__trainer_state_viz__trainer_state.json")))
    named = [s for s in log.series.values() if s.name.startswith("eval_g") and s.name.endswith("_loss")]
    assert named and all(s.role == Role.EVAL_LOSS and not s.component for s in named)


def test_infinity_tokens_are_kept_as_values():
    log = read(str(RUNS / "gallery-fp16_nan" / "trainer_state.json"))
    gn = series(log, "grad_norm")
    bad = [(gn.steps[i], gn.values[i]) for i in range(len(gn)) if not math.isfinite(gn.values[i])]
    assert bad == [(20.0, math.inf), (30.0, math.inf)]
    assert log.locate(gn, 3).line == 35


def test_empty_log_history_and_negative_sample():
    log = read(str(corpus("hf_trainer_state/FlamingSpeed__FinanceAdvice__trainer_state.json")))
    assert log.series == {} and log.facts["global_step"] == 87
    neg = corpus("negatives/KosKis1__LogShort__trainer_state.json")
    assert detect(str(neg)).format is None


def test_truncated_document_keeps_complete_entries(tmp_path):
    text = (RUNS / "gallery-healthy" / "trainer_state.json").read_text()
    cut = text[: text.index('"step": 150') + 5]
    p = tmp_path / "trainer_state.json"
    p.write_text(cut)
    log = read(str(p))
    assert len(series(log, "loss")) == 29  # entries at steps 5..145 are complete
    assert any("incomplete or invalid" in pr.message for pr in log.problems)


def test_string_loss_is_a_problem_not_a_value(tmp_path):
    p = tmp_path / "trainer_state.json"
    p.write_text('{"log_history": [{"loss": "1.5", "step": 1}, {"loss": 1.2, "step": 2}], "max_steps": 2}')
    log = read(str(p))
    assert len(series(log, "loss")) == 1
    assert [pr.message for pr in log.problems] == ["`loss` is str '1.5', not a number; such values are ignored"]


def test_checkpoint_snapshot_reads_as_prefix():
    log = read(str(LOGS / "mistral_checkpoint-500_trainer_state.json"))
    assert len(series(log, "loss")) == 50 and log.facts["global_step"] == 500
