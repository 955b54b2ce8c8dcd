"""TensorBoard event files: tags as series, records and offsets, shards, restarts, damage."""

from __future__ import annotations

import math
import os
import shutil

import pytest

from conftest import LOGS, RUNS, XTTS_EVENTS, corpus, series
from rulekit import faithful, judge, only
from tbwrite import record_offsets, restart_event, scalar_event, write
from trainlint.core.model import Aggregation, EventKind, Role
from trainlint.readers import read


def test_xtts_event_file_tags_roles_and_records():
    if not XTTS_EVENTS.exists():
        pytest.skip(f"corpus file not available: {XTTS_EVENTS}")
    log = read(str(XTTS_EVENTS))
    loss = series(log, "TrainIterStats/loss")
    assert (loss.role, loss.aggregation, len(loss)) == (Role.TRAIN_LOSS, Aggregation.STEP, 1251)
    assert series(log, "TrainEpochStats/avg_loss").aggregation == Aggregation.EPOCH
    ev = series(log, "EvalStats/avg_loss")
    assert ev.role == Role.EVAL_LOSS and list(ev.steps) == [0, 24940, 49880, 74820, 99760, 124700]
    # the text summary (string tensor) and audio are not series
    assert not any(s.name.startswith(("model-config", "TestAudios")) for s in log.series.values())
    loc = log.locate(loss, 0)
    assert loc.line is None and loc.record is not None and loc.offset is not None and loc.record >= 1


def test_tensor_scalars_from_a_tf2_writer():
    log = read(str(corpus("tfevents/masoodafar-web__MyXTTSModel__runs__tb_debug__events.out.tfevents."
                          "1759259414.AIWorkstation.2381025.0.v2")))
    assert len(log.series) == 39 and series(log, "train_epoch/total_loss").role == Role.TRAIN_LOSS


def test_empty_event_files():
    log = read(str(LOGS / "events.out.tfevents.1730987735.hopper-h100-0.1714035.0"))
    assert log.series == {} and log.problems == []


def test_directory_merges_shards_and_reports_duplicate_steps(tmp_path):
    write(str(tmp_path), [scalar_event(s, "loss", 1.0 / (s + 1)) for s in range(5)], suffix=".a")
    write(str(tmp_path), [scalar_event(s, "loss", 9.0) for s in range(3, 6)], suffix=".b")
    log = read(str(tmp_path))
    loss = series(log, "loss")
    assert list(loss.steps) == [0, 1, 2, 3, 4, 3, 4, 5]  # kept in file order, as TensorBoard (format 2) keeps them
    assert len(log.members) == 2
    [dup] = [e for e in log.events if e.kind == EventKind.DUPLICATE_STEPS]
    assert dup.step == 3 and dup.file == 1 and "both are kept" in dup.text


def test_restart_marker_purges_later_points(tmp_path):
    evs = [restart_event(0)] + [scalar_event(s, "loss", float(s)) for s in range(6)]
    evs += [restart_event(3)] + [scalar_event(s, "loss", 10.0 + s) for s in range(3, 5)]
    write(str(tmp_path), evs)
    log = read(str(tmp_path))
    loss = series(log, "loss")
    assert list(zip(loss.steps, loss.values, strict=True)) == [(0, 0), (1, 1), (2, 2), (3, 13), (4, 14)]
    [rs] = [e for e in log.events if e.kind == EventKind.RESTART]
    assert rs.step == 3 and rs.detail["dropped"] == 3


def test_truncated_last_record_is_tolerated_and_reported(tmp_path):
    path = write(str(tmp_path), [scalar_event(s, "loss", 1.0) for s in range(4)])
    data = open(path, "rb").read()
    last = record_offsets(path)[-1]
    open(path, "wb").write(data[: last + 20])
    log = read(path)
    assert len(series(log, "loss")) == 3
    [t] = [e for e in log.events if e.kind == EventKind.TRUNCATED]
    assert t.record == 4 and t.offset == last and t.detail["bytes_present"] == 20


def test_bad_data_crc_skips_one_record(tmp_path):
    path = write(str(tmp_path), [scalar_event(s, "loss", 1.0) for s in range(4)])
    data = bytearray(open(path, "rb").read())
    off = record_offsets(path)[2]
    data[off + 14] ^= 0xFF  # a payload byte of record 2
    open(path, "wb").write(bytes(data))
    log = read(path)
    assert list(series(log, "loss").steps) == [0, 2, 3]
    assert any("record 2" in p.message and "data CRC" in p.message for p in log.problems)


def test_bad_header_crc_stops_the_file(tmp_path):
    path = write(str(tmp_path), [scalar_event(s, "loss", 1.0) for s in range(4)])
    data = bytearray(open(path, "rb").read())
    off = record_offsets(path)[3]
    data[off + 9] ^= 0xFF
    open(path, "wb").write(bytes(data))
    log = read(path)
    assert list(series(log, "loss").steps) == [0, 1]
    assert any("header CRC" in p.message for p in log.problems)


def test_nan_scalars_are_values(tmp_path):
    path = write(str(tmp_path), [scalar_event(0, "val/loss", math.nan), scalar_event(1, "val/loss", 1.0)])
    s = series(read(path), "val/loss")
    assert math.isnan(s.values[0]) and s.role == Role.EVAL_LOSS


def test_run_directory_fixture(tmp_path):
    shutil.copytree(RUNS / "modded-nanogpt-tb", tmp_path / "run")
    log = read(str(tmp_path / "run" / "tensorboard_logs"))
    assert len(series(log, "Loss/Validation")) == 101 and series(log, "Loss/Train").role == Role.TRAIN_LOSS


def test_an_oversize_record_length_is_said_as_such_not_as_a_crc(tmp_path):
    import struct

    from trainlint.readers.tfevents import MAX_RECORD, masked_crc

    header = struct.pack("<Q", MAX_RECORD + 1)
    (tmp_path / "events.out.tfevents.1.host").write_bytes(header + struct.pack("<I", masked_crc(header)) + b"x" * 64)
    log = read(str(tmp_path / "events.out.tfevents.1.host"))
    assert "declares a length of 268435457 bytes, over the 256 MB a record may have" in log.problems[0].message


def _named(path: str, started: int) -> str:
    """Name an event file as its writer would have at ``started`` (files written in one second sort by pid)."""
    new = os.path.join(os.path.dirname(path), f"events.out.tfevents.{started}.host.1.0")
    os.rename(path, new)
    return new


def test_unrelated_runs_in_one_folder_are_not_merged(tmp_path):
    """A second run written into the same folder starts again at the first run's first step: it does not
    continue it, so its points are a series of their own, named by its file (never a zig-zag of both)."""
    a = _named(write(str(tmp_path), [scalar_event(s, "loss", 3.0 - s / 30) for s in range(60)]), 1000)
    b = _named(write(str(tmp_path), [scalar_event(s, "loss", 3.0 - s / 40) for s in range(60)]), 2000)
    log = read(str(tmp_path))
    first, second = series(log, "loss"), series(log, os.path.basename(b) + "/loss")
    assert (len(first), len(second)) == (60, 60) and second.role == Role.TRAIN_LOSS
    assert list(second.steps[:2]) == [0, 1] and set(second.files) == {log.members.index(b)}
    assert set(first.files) == {log.members.index(a)}
    assert not [e for e in log.events if e.kind == EventKind.DUPLICATE_STEPS]
    assert judge(tmp_path).verdict == "PASS"


def test_a_diverging_rerun_in_the_same_folder_fails_on_its_own_series(tmp_path):
    _named(write(str(tmp_path), [scalar_event(s, "loss", 3.0 - s / 30) for s in range(60)]), 1000)
    b = _named(write(str(tmp_path), [scalar_event(s, "loss", 3.0 if s < 30 else 3.0 * 2 ** (s - 29))
                                     for s in range(60)]), 2000)
    rep = judge(tmp_path)
    f = only(rep, "TP-DIVERGE")
    assert f.series == f"`{os.path.basename(b)}/loss`"
    faithful(f)


def test_event_files_are_read_in_the_order_they_were_written_when_the_counter_passes_ten(tmp_path):
    """A process's writer counter goes 9, 10: a string sort read ...10 before ...9, so the file a run continued
    was taken for another run (this test's twin above failed whenever earlier tests had made nine writers)."""
    a = write(str(tmp_path), [scalar_event(s, "loss", 1.0 / (s + 1)) for s in range(5)])
    b = write(str(tmp_path), [scalar_event(s, "loss", 0.1) for s in range(5, 8)])
    os.rename(a, tmp_path / "events.out.tfevents.1796320721.host.29961.9")
    os.rename(b, tmp_path / "events.out.tfevents.1796320721.host.29961.10")
    loss = series(read(str(tmp_path)), "loss")
    assert list(loss.steps) == [0, 1, 2, 3, 4, 5, 6, 7]


def test_an_event_file_named_with_a_superscript_digit_does_not_stop_the_folder(tmp_path):
    """`'²'.isdigit()` is true and `int('²')` raises: the name order took every part of the name that isdigit
    calls digits for a number, so one file named `…tfevents.1²` in a cloned repository made its folder unreadable."""
    a = write(str(tmp_path), [scalar_event(s, "loss", 1.0 / (s + 1)) for s in range(5)])
    odd = tmp_path / "events.out.tfevents.1²"
    odd.write_bytes(b"")
    assert list(series(read(str(tmp_path)), "loss").steps) == [0, 1, 2, 3, 4]
    assert os.path.exists(a)
