"""Every reader on mutated real logs and on random bytes: series and problems, or a clear error;
never an escaping exception, never a hang. Budget: TRAINLINT_FUZZ_EXAMPLES (default 60 per
reader); set it high for a long run (``TRAINLINT_FUZZ_EXAMPLES=5000 pytest tests/test_fuzz.py``)."""

from __future__ import annotations

import contextlib
import os
import resource
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, LOGS, RUNS
from tbwrite import scalar_event, write
from trainlint.judge import judge_log
from trainlint.readers import FORMATS, NotALog, detect, open_source

EXAMPLES = int(os.environ.get("TRAINLINT_FUZZ_EXAMPLES", "60"))
SEEDS = {
    "hf-trainer-state": RUNS / "gallery-fp16_nan" / "trainer_state.json",
    "coqui": RUNS / "xtts-prefix" / "trainer_0_log.txt",
    "csv": RUNS / "yolo-gallstone" / "results.csv",
    "jsonl": RUNS / "detectron2-maskrcnn" / "output" / "metrics.json",
    "text": LOGS / "gpt2_train.11672114.log",
    "general": FIXTURES / "live" / "skorch-diverge" / "train.log",  # a table with ANSI colours (issue 24)
    "mlflow": next((FIXTURES / "live" / "mlflow-diverge" / "mlruns" / "0").glob("*/metrics/train_loss")),
    "dvclive": FIXTURES / "live" / "dvclive-diverge" / "dvclive" / "plots" / "metrics" / "train_loss.tsv",
    "mlflow-db": FIXTURES / "live" / "mlflow-db-diverge" / "mlflow.db",
}
_TMP = Path(tempfile.mkdtemp(prefix="trainlint-fuzz-"))


def _event_seed() -> bytes:
    d = _TMP / "seed-events"
    if not d.exists():
        d.mkdir()
        write(str(d), [scalar_event(s, "train/loss", 1.0 / (s + 1)) for s in range(40)])
    return next(d.iterdir()).read_bytes()


def seed_bytes(fmt: str) -> bytes:
    if fmt == "tfevents":
        return _event_seed()
    data = SEEDS[fmt].read_bytes()
    return data[:60_000]  # keep each example fast: the head is where the structure is


@st.composite
def mutated(draw, data: bytes):  # type: ignore[no-untyped-def]
    buf = bytearray(data)
    for _ in range(draw(st.integers(1, 8))):
        op = draw(st.sampled_from(["flip", "cut", "insert", "delete", "dup"]))
        if not buf:
            break
        i = draw(st.integers(0, len(buf) - 1))
        if op == "flip":
            buf[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "cut":
            del buf[i:]
        elif op == "insert":
            buf[i:i] = draw(st.binary(min_size=1, max_size=64))
        elif op == "delete":
            del buf[i:i + draw(st.integers(1, 256))]
        else:
            j = draw(st.integers(i, min(len(buf), i + 512)))
            buf[j:j] = buf[i:j]
    return bytes(buf)


def read_any(data: bytes, fmt: str) -> None:
    d = Path(tempfile.mkdtemp(dir=_TMP))
    name = "events.out.tfevents.1.host" if fmt == "tfevents" else "log.txt"
    p = d / name
    if fmt in ("mlflow", "dvclive"):  # one metric file of a store run; the run folder is the unit
        member = d / "run" / ("metrics/train_loss" if fmt == "mlflow" else "plots/metrics/train_loss.tsv")
        member.parent.mkdir(parents=True)
        member.write_bytes(data)
        if fmt == "mlflow":
            (d / "run" / "meta.yaml").write_text("status: 1\nlifecycle_stage: active\n")
        p = d / "run"
    else:
        p.write_bytes(data)
    src = open_source(str(p), fmt)
    try:
        src.update()
    except OSError:
        return  # a clear error: the file cannot be read
    log = src.log
    for s in log.series.values():
        assert len(s.steps) == len(s.values) == len(s.lines)
        if len(s):
            log.locate(s, 0)
            log.locate(s, len(s) - 1)
    judge_log(log)
    src.update()  # a second update of an unchanged file is cheap and harmless


@pytest.mark.parametrize("fmt", FORMATS)
def test_mutated_real_logs(fmt: str):
    base = seed_bytes(fmt)

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(mutated(base))
    def run(data: bytes) -> None:
        read_any(data, fmt)

    run()


@pytest.mark.parametrize("fmt", FORMATS)
def test_random_bytes(fmt: str):
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True)
    @given(st.binary(max_size=4096))
    def run(data: bytes) -> None:
        read_any(data, fmt)

    run()


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True)
@given(st.binary(max_size=2048))
def test_detection_on_random_bytes(data: bytes):
    d = Path(tempfile.mkdtemp(dir=_TMP))
    p = d / "metrics.jsonl"
    p.write_bytes(data)
    det = detect(str(p))
    if det.format is not None:
        with contextlib.suppress(NotALog):
            open_source(str(p)).update()


def test_memory_is_bounded_by_the_file(tmp_path):
    """A 40 MB file of one repeated record holds arrays, not objects: peak RSS grows far less."""
    line = b'{"step": 1, "loss": 0.5, "lr": 0.001}\n'
    p = tmp_path / "big.jsonl"
    with open(p, "wb") as f:
        for i in range(1_000_000):
            f.write(line.replace(b'"step": 1', b'"step": %d' % i))
    size = p.stat().st_size
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    src = open_source(str(p))
    src.update()
    grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    assert len(src.log.series) == 2 and sum(len(s) for s in src.log.series.values()) == 2_000_000
    assert grew < 3 * size, (grew, size)
