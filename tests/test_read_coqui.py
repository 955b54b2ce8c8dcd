"""Coqui trainer logs: two series per key, EVAL blocks at the step of the evaluation, events."""

from __future__ import annotations

import math

import pytest

from conftest import XTTS_EVENTS, XTTS_FULL, XTTS_PREFIX, corpus, series
from trainlint.core.model import Aggregation, EventKind, Role
from trainlint.readers import read


@pytest.fixture(scope="module")
def xtts():
    if not XTTS_FULL.exists():
        pytest.skip(f"corpus file not available: {XTTS_FULL}")
    return read(str(XTTS_FULL))


def test_step_and_running_average_are_two_series(xtts):
    cur, avg = series(xtts, "loss", "per-step"), series(xtts, "loss", "running-average")
    assert cur.role == avg.role == Role.TRAIN_LOSS
    assert len(cur) == len(avg) == 2501
    assert cur.steps[0] == 0 and cur.steps[-1] == 125000
    # Line 22643: "     | > loss: 0.03243428096175194  (0.03065671378746629)"
    last = xtts.locate(cur, len(cur) - 1)
    assert (last.line, last.column, last.end_column) == (22643, 16, 35)
    last_avg = xtts.locate(avg, len(avg) - 1)
    assert (last_avg.line, last_avg.column) == (22643, 38) and avg.values[-1] == 0.03065671378746629


def test_minimum_of_the_per_step_loss(xtts):
    cur = series(xtts, "loss", "per-step")
    i = min(range(len(cur)), key=lambda j: cur.values[j])
    assert (cur.steps[i], cur.values[i], cur.lines[i]) == (102600.0, 0.017263976857066154, 18591)


def test_six_evaluations_at_their_steps_and_lines(xtts):
    ev = series(xtts, "avg_loss", "per-evaluation")
    assert ev.role == Role.EVAL_LOSS
    assert list(ev.steps) == [0, 24940, 49880, 74820, 99760, 124700]
    assert list(ev.lines) == [28, 4538, 9049, 13562, 18073, 22577]
    assert list(ev.values) == [4.8813194660913375, 2.75422106896128, 2.6797493355614797, 2.646485313063576,
                               2.6126314245519184, 2.5893918531281592]
    # "     | > avg_loss:\x1b[92m 2.75422106896128 \x1b[0m(-2.12…)": the span is the number only,
    # after the 5-character colour code (columns count characters of the raw line).
    loc = xtts.locate(ev, 1)
    assert (loc.column, loc.end_column) == (25, 25 + len("2.75422106896128"))


def test_events(xtts):
    kinds = [e.kind for e in xtts.events]
    assert kinds.count(EventKind.EVALUATION) == 6
    best = [e for e in xtts.events if e.kind == EventKind.BEST_MODEL]
    assert [e.step for e in best] == [24940, 49880, 74820, 99760, 124700]
    [kbd] = [e for e in xtts.events if e.kind == EventKind.INTERRUPTED]
    assert (kbd.line, kbd.step) == (22648, 125000)
    assert [e.step for e in xtts.events if e.kind == EventKind.CHECKPOINT][-1] == 125039
    assert xtts.facts["planned_epochs"] == 1000 and xtts.facts["epoch"] == 6


def test_prefix_fixture_ends_at_72900():
    log = read(str(XTTS_PREFIX))
    cur = series(log, "loss", "per-step")
    assert len(cur) == 1459 and cur.steps[-1] == 72900
    assert len(series(log, "avg_loss", "per-evaluation")) == 3


def test_text_and_event_file_hold_the_same_numbers(xtts):
    """Where the text log and the event file of the XTTS run hold the same point, they agree."""
    if not XTTS_EVENTS.exists():
        pytest.skip(f"corpus file not available: {XTTS_EVENTS}")
    tb = read(str(XTTS_EVENTS))
    pairs = [(("loss", "per-step"), "TrainIterStats/loss"), (("avg_loss", "per-evaluation"), "EvalStats/avg_loss"),
             (("step_time", "per-step"), "TrainIterStats/step_time")]
    for (name, agg), tag in pairs:
        text_s = series(xtts, name, agg)
        tb_s = series(tb, tag)
        text_by_step = dict(zip(text_s.steps, text_s.values, strict=True))
        shared = [(x, v) for x, v in zip(tb_s.steps, tb_s.values, strict=True) if x in text_by_step]
        assert len(shared) == len(tb_s)  # every event-file point is also in the text log
        for x, v in shared:  # the event file stores float32
            assert math.isclose(v, text_by_step[x], rel_tol=1e-6), (tag, x)
    assert len(series(tb, "TrainIterStats/loss")) == 1251 and len(series(xtts, "loss", "per-step")) == 2501


def test_running_average_nan_while_values_finite():
    log = read(str(corpus("coqui_trainer_log/Wubpooz__Malta-TTS__FineTuning__NewLanguage__Logs__full_logs_0.txt")))
    cur, avg = series(log, "loss", "per-step"), series(log, "loss", "running-average")
    assert math.isfinite(cur.values[1]) and math.isnan(avg.values[1])


def test_traceback_event_and_vits_step_lines():
    crashed = read(str(corpus("coqui_trainer_log/Wubpooz__Malta-TTS__FineTuning__NewLanguage__Logs__full_logs_1.txt")))
    [tb] = [e for e in crashed.events if e.kind == EventKind.TRACEBACK]
    assert tb.line == 4991
    vits = read(str(corpus("coqui_trainer_log/jofrems__TTS_VITS_Finetuned__trainer_0_log.txt")))
    assert len(series(vits, "loss_0", "per-step")) == 246  # "--> STEP: a/b -- GLOBAL_STEP: g" without TIME
    assert vits.facts["planned_epochs"] == 1000 and Aggregation.RUNNING
