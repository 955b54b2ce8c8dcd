"""trainlint's run-level rules on real run directories built in tmp from corpus files."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from conftest import GALLERY, RUNS, XTTS_EVENTS, XTTS_FULL, XTTS_PREFIX, corpus
from rulekit import faithful, ids, jsonl, judge, only
from tbwrite import record_offsets, scalar_event, write
from trainlint.config import Config
from trainlint.core.findings import Level, Skip
from trainlint.rules.thresholds import Thresholds
from trainlint.runs import plan

OLD = time.time() - 3 * 86400


def aged(*paths: Path) -> None:
    """Runs in these tests stopped days ago: a fresh copy would read as still being written."""
    for p in paths:
        os.utime(p, (OLD, OLD))


def xtts_full_run(tmp_path: Path) -> Path:
    if not XTTS_FULL.exists():
        pytest.skip(f"corpus file not available: {XTTS_FULL}")
    run = tmp_path / "xtts"
    run.mkdir()
    shutil.copy2(XTTS_FULL, run / "trainer_0_log.txt")
    aged(run / "trainer_0_log.txt")
    return run


def test_log_prefix_from_later_checkpoints(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy2(XTTS_PREFIX, run / "trainer_0_log.txt")
    for step in (74820, 99760, 124700):
        (run / f"best_model_{step}.pth").write_bytes(b"")
    (run / "checkpoint_125039.pth").write_bytes(b"")
    aged(run / "trainer_0_log.txt")
    rep = judge(run / "trainer_0_log.txt", cfg=Config(thresholds=Thresholds(divergence_window=1)))
    f = only(rep, "TL-LOG-PREFIX")
    assert (f.level, f.location.line) == (Level.WARN, 13207)
    assert f.evidence.values["log_last"] == 72900 and f.evidence.values["run_step"] == 125039
    assert f.evidence.values["artefact"] == "checkpoint_125039.pth" and f.evidence.values["line"] == 13207
    faithful(f)
    # end-of-run findings say they describe the end of the log
    div = only(rep, "TP-DIVERGE")
    assert "this is the end of the log, not of the run (it reached step 125039)" in div.evidence.text
    faithful(div)
    # the files the log itself names do not make it a prefix, and older deleted saves are not "missing"
    assert "TL-CKPT-MISSING" not in ids(rep)


def test_complete_log_is_not_a_prefix_and_reports_the_interrupt(tmp_path):
    run = xtts_full_run(tmp_path)
    (run / "best_model_124700.pth").write_bytes(b"")
    (run / "checkpoint_125039.pth").write_bytes(b"")  # named in the log: saved at the interrupt
    rep = judge(run / "trainer_0_log.txt")
    assert "TL-LOG-PREFIX" not in ids(rep)
    f = only(rep, "TL-RUN-INCOMPLETE")
    v = f.evidence.values
    assert (f.level, f.location.line, v["last_step"], v["epoch"], v["epochs"], v["marker"], v["marker_line"]) == (
        Level.INFO, 22648, 125000, 6, 1000, "interrupted", 22648)
    faithful(f)


def test_a_log_written_moments_ago_is_running_not_stopped(tmp_path):
    run = xtts_full_run(tmp_path)
    os.utime(run / "trainer_0_log.txt", None)  # just written
    rep = judge(run / "trainer_0_log.txt", live=True)
    assert "TL-RUN-INCOMPLETE" not in ids(rep)
    assert any(m.check == "run-end" and m.values["running"] for m in rep.measurements)


def test_hf_snapshots_are_companions_and_a_shorter_root_is_a_prefix(tmp_path):
    final = corpus("hf_trainer_state/O5-7__chat_glm2_in4_LIL_prefix__trainer_state.json")
    snap = corpus("hf_trainer_state/O5-7__chat_glm2_in4_LIL_prefix__checkpoint-1000__trainer_state.json")
    good, stale = tmp_path / "good", tmp_path / "stale"
    (good / "checkpoint-1000").mkdir(parents=True)
    shutil.copy2(final, good / "trainer_state.json")
    shutil.copy2(snap, good / "checkpoint-1000" / "trainer_state.json")
    (stale / "checkpoint-3000").mkdir(parents=True)
    shutil.copy2(snap, stale / "trainer_state.json")           # a root left from an earlier, shorter run
    shutil.copy2(final, stale / "checkpoint-3000" / "trainer_state.json")
    aged(*tmp_path.rglob("trainer_state.json"))
    p = plan(str(tmp_path))
    assert sorted(Path(i.path).relative_to(tmp_path).as_posix() for i in p.items) == [
        "good/trainer_state.json", "stale/trainer_state.json"]
    assert len(p.companions) == 2
    assert not ids(judge(good / "trainer_state.json")) & {"TL-LOG-PREFIX", "TL-RUN-INCOMPLETE"}
    rep = judge(stale / "trainer_state.json", facts=p.items[1].facts)
    f = only(rep, "TL-LOG-PREFIX")
    assert f.evidence.values["artefact"] == "checkpoint-3000/trainer_state.json"
    assert (f.evidence.values["log_last"], f.evidence.values["run_step"], f.location.line) == (1000, 3000, 607)
    inc = only(rep, "TL-RUN-INCOMPLETE")
    assert (inc.evidence.values["reached"], inc.evidence.values["planned"]) == (1000, 3000)
    faithful(f)
    faithful(inc)


def test_killed_run_without_a_root_file_is_judged_on_its_newest_snapshot(tmp_path):
    snap = corpus("hf_trainer_state/syGOAT__Mistral-v0.2-Translator-bf16__checkpoint-500__trainer_state.json")
    (tmp_path / "out" / "checkpoint-500").mkdir(parents=True)
    shutil.copy2(snap, tmp_path / "out" / "checkpoint-500" / "trainer_state.json")
    aged(tmp_path / "out" / "checkpoint-500" / "trainer_state.json")
    [item] = plan(str(tmp_path)).items
    assert item.path.endswith("checkpoint-500/trainer_state.json")
    inc = only(judge(item.path), "TL-RUN-INCOMPLETE")
    assert (inc.evidence.values["reached"], inc.evidence.values["planned"]) == (500, 8660)


def test_a_restart_appended_to_a_detr_log_is_one_resume_with_its_seam():
    # epochs 0-9, then a second attempt from epoch 0 appended to the same log.txt: a resume with the seam on
    # line 11 that counts the 10 re-logged epochs (before this release also a TL-DUPLICATE-STEPS WARN)
    rep = judge(corpus("json_logs/FarjadAhmed__detr_custom_dcmha__output__log.txt"))
    res = only(rep, "TL-RESUME")
    v = res.evidence.values
    assert (res.location.line, v["from_step"], v["to_step"], v["relogged"]) == (11, 9, 0, 10)
    assert "TL-DUPLICATE-STEPS" not in ids(rep)
    faithful(res)
    assert not ids(judge(RUNS / "gallery-healthy" / "trainer_state.json")) & {"TL-RESUME", "TL-DUPLICATE-STEPS"}


def test_steps_logged_twice_without_a_seam_are_duplicates(tmp_path):
    rows = [{"step": i, "loss": 1.0 / (i + 1)} for i in range(12)]
    rows.insert(6, {"step": 5, "loss": 0.9})  # step 5 again right after itself, with another value
    rep = judge(jsonl(tmp_path / "d.jsonl", rows))
    dup = only(rep, "TL-DUPLICATE-STEPS")
    assert (dup.level, dup.evidence.values["count"], dup.location.line) == (Level.WARN, 1, 7)


def test_same_values_logged_twice_are_not_duplicates(tmp_path):
    rows = [{"step": i, "loss": 1.0 / (i + 1)} for i in range(12)]
    rep = judge(jsonl(tmp_path / "m.jsonl", rows + rows[5:7]))
    assert "TL-DUPLICATE-STEPS" not in ids(rep) and "TL-RESUME" in ids(rep)


def test_events_truncated(tmp_path):
    path = write(str(tmp_path), [scalar_event(s, "train/loss", 1.0 / (s + 1)) for s in range(12)])
    data = open(path, "rb").read()
    cut = record_offsets(path)[-1]
    open(path, "wb").write(data[: cut + 30])
    rep = judge(path)
    f = only(rep, "TL-EVENTS-TRUNCATED")
    assert (f.location.record, f.location.offset, f.evidence.values["present"]) == (12, cut, 30)
    faithful(f)
    assert "TL-EVENTS-TRUNCATED" not in ids(judge(RUNS / "modded-nanogpt-tb" / "tensorboard_logs"))


def test_series_disagree_sets_held_out_and_averages_beside_divergence(tmp_path):
    run = xtts_full_run(tmp_path)
    if XTTS_EVENTS.exists():
        shutil.copy2(XTTS_EVENTS, run / XTTS_EVENTS.name)
    p = plan(str(run))
    [item] = p.items
    rep = judge(item.path, cfg=Config(thresholds=Thresholds(divergence_window=1)), facts=item.facts)
    div = [f for f in rep.findings if f.id == "TP-DIVERGE" and f.series == "`loss` (per-step)"][0]
    dis = [f for f in rep.findings if f.id == "TL-SERIES-DISAGREE" and f.series == "`loss` (per-step)"][0]
    assert dis.location == div.location and dis.level == Level.INFO
    assert "`avg_loss` (per-evaluation) improved at 5 of 5 evaluations (4.88132 to 2.58939)" in dis.evidence.text
    faithful(dis)
    if XTTS_EVENTS.exists():  # the event file of the same run: related information, not a second finding
        assert any(r.role == "same-point" and r.location.record is not None for r in div.related)
        assert [c for c in p.companions if "event files of the run" in c[1]]


def test_series_disagree_not_without_contradiction():
    rep = judge(RUNS / "gallery-lr_hot" / "trainer_state.json")
    assert "TP-DIVERGE" in ids(rep) and "TL-SERIES-DISAGREE" not in ids(rep)


def _zip(path: Path, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as z:
        for name, data in members.items():
            z.writestr(name, data)


COQUI_SAVES = """ > EPOCH: 0/2
 > TRAINING (2026-01-01 00:00:00)
   --> TIME: 2026-01-01 00:00:01 -- STEP: 0/10 -- GLOBAL_STEP: 0
     | > loss: 1.0  (1.0)
 > CHECKPOINT : /somewhere/else/run/checkpoint_5.pth
   --> TIME: 2026-01-01 00:00:02 -- STEP: 5/10 -- GLOBAL_STEP: 5
     | > loss: 0.9  (0.95)
 > BEST MODEL : /somewhere/else/run/best_model_6.pth
 > CHECKPOINT : /somewhere/else/run/checkpoint_9.pth
 > CHECKPOINT : /somewhere/else/run/checkpoint_10.pth
"""


def test_checkpoints_missing_truncated_and_corrupt(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "trainer_0_log.txt").write_text(COQUI_SAVES)
    _zip(run / "checkpoint_5.pth", {"archive/data.pkl": b"x" * 500})
    good = (run / "checkpoint_5.pth").read_bytes()
    (run / "best_model_6.pth").write_bytes(good[:200])                     # cut short
    bad = bytearray(good)
    bad[good.index(b"x" * 10) + 3] ^= 0x01                                  # one flipped bit in a member
    (run / "checkpoint_9.pth").write_bytes(bytes(bad))
    aged(run / "trainer_0_log.txt")
    rep = judge(run / "trainer_0_log.txt")
    found = sorted((f.id, f.location.line) for f in rep.findings if f.id.startswith("TL-CKPT"))
    assert found == [("TL-CKPT-CORRUPT", 9), ("TL-CKPT-MISSING", 10), ("TL-CKPT-TRUNCATED", 8)]
    corrupt = only(rep, "TL-CKPT-CORRUPT")
    assert "fails its CRC" in corrupt.evidence.values["problem"] and corrupt.level == Level.WARN
    for f in rep.findings:
        faithful(f)
    (run / "checkpoint_10.pth").write_bytes(good)
    (run / "best_model_6.pth").write_bytes(good)
    (run / "checkpoint_9.pth").write_bytes(good)
    assert not any(f.id.startswith("TL-CKPT") for f in judge(run / "trainer_0_log.txt").findings)


def test_checkpoint_that_is_not_a_zip_is_never_loaded(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "trainer_0_log.txt").write_text(COQUI_SAVES)
    for name in ("checkpoint_5.pth", "best_model_6.pth", "checkpoint_9.pth", "checkpoint_10.pth"):
        (run / name).write_bytes(b"\x80\x02legacy pickle that must not be unpickled")
    rep = judge(run / "trainer_0_log.txt")
    assert not any(f.id.startswith("TL-CKPT") for f in rep.findings)


# -- compare ----------------------------------------------------------------------------------------
def compare(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "trainlint.cli", "compare", *args], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("seed", ["", "seed43", "seed44"])
def test_compare_bad_labels_against_healthy_fails(seed):
    base, run = GALLERY / "healthy" / seed, GALLERY / "bad_labels" / seed
    if not base.exists():
        pytest.skip(f"corpus not available: {base}")
    r = compare("--format", "json", str(base), str(run))
    assert r.returncode == 1, r.stderr
    [rep] = json.loads(r.stdout)["reports"]
    assert rep["baseline"].endswith("healthy/" + (seed + "/" if seed else "") + "trainer_state.json")
    assert {f["id"] for f in rep["findings"]} == {"TP-FLOOR-RATIO", "TP-END-RATIO"}
    floor = [f for f in rep["findings"] if f["id"] == "TP-FLOOR-RATIO"][0]
    assert floor["related"][0]["role"] == "baseline-floor" and floor["related"][0]["path"].endswith(
        "trainer_state.json")


def test_compare_pass_and_uncomparable(tmp_path):
    base = RUNS / "gallery-healthy"
    assert compare(str(base), str(RUNS / "gallery-overfit")).returncode == 0
    short = jsonl(tmp_path / "short.jsonl", [{"step": i, "loss": 1.0} for i in range(4)])
    r = compare(str(base), str(short))
    assert r.returncode == 2 and "TP-CMP-UNCOMPARABLE [NOT-CHECKED]" in r.stdout


def test_compare_findings_are_faithful():
    from trainlint.judge import compare_paths, judge_path

    base = judge_path(str(RUNS / "gallery-healthy" / "trainer_state.json"))
    for name in ("gallery-lr_hot", "gallery-fp16_nan", "gallery-lr_zero", "gallery-bad_labels", "gallery-overfit"):
        rep = compare_paths(base, judge_path(str(RUNS / name / "trainer_state.json")))
        for f in rep.findings:
            faithful(f)
            assert f.location.line is not None and not math.isnan(f.location.line)


def test_editor_baseline_from_trainlint_yaml(tmp_path):
    """`baseline:` in .trainlint.yaml: the server adds the compare findings to the run's report."""
    from trainlint.lsp.workspace import Workspace

    shutil.copytree(RUNS / "gallery-healthy", tmp_path / "base")
    shutil.copytree(RUNS / "gallery-bad_labels", tmp_path / "runs" / "bad")
    (tmp_path / ".trainlint.yaml").write_text('baseline:\n  "runs/*": base/trainer_state.json\n')
    ws = Workspace()
    ws.roots = [str(tmp_path)]  # the editor's workspace folder: configurations are read up to it
    [path] = ws.discover(str(tmp_path / "runs"))
    ws.refresh(path)
    rep = ws.tracked[path].report
    assert rep.baseline.endswith("base/trainer_state.json")
    floor = [f for f in rep.findings if f.id == "TP-FLOOR-RATIO"][0]
    assert floor.related[0].role == "baseline-floor" and floor.related[0].location.path.endswith(
        "base/trainer_state.json")
    assert "TP-END-RATIO" in {f.id for f in rep.findings}


def test_a_folder_named_runs_holding_run_directories_is_not_one_run():
    """Only event-file folders under <output>/runs/ belong to the run above them (HF's layout)."""
    p = plan(str(RUNS))
    assert len(p.items) == 13 and not p.companions


def test_hf_event_files_under_runs_are_companions(tmp_path):
    out = tmp_path / "output"
    shutil.copytree(RUNS / "gallery-healthy", out)
    shutil.copytree(RUNS / "modded-nanogpt-tb" / "tensorboard_logs", out / "runs" / "Dec01_host")
    p = plan(str(tmp_path))
    assert [Path(i.path).name for i in p.items] == ["trainer_state.json"]
    assert p.companions and "event files of the run" in p.companions[0][1]


def test_a_run_that_finished_between_two_logging_steps_is_complete(tmp_path):
    """LLaMA-Factory logs every 5 steps: a last step of 2175 of 2178 planned is a finished run."""
    log = tmp_path / "trainer_log.jsonl"
    shutil.copy2(RUNS / "llamafactory-nsllm" / "trainer_log.jsonl", log)
    aged(log)
    assert "TL-RUN-INCOMPLETE" not in ids(judge(log))
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:200]))  # the same run cut at step 1000 of 2178
    aged(log)
    f = only(judge(log), "TL-RUN-INCOMPLETE")
    assert (f.evidence.values["last_step"], f.evidence.values["planned"]) == (1000, 2178)


def test_a_keras_run_killed_before_its_planned_epochs_is_incomplete():
    """Keras prints `Epoch 18/38` before each epoch and an `N/N` bar line at its end: a log whose epoch 18 began
    and never ended stopped inside it (population keras-killed-000). The rule never fired on a Keras log. Ending
    short of the plan is not enough: EarlyStopping ends healthy runs after a closed epoch without a word (the
    population's keras-healthy-002 stops at epoch 21 of 30), and those keep no finding."""
    pop = Path(__file__).resolve().parents[1] / "fixtures" / "population" / "keras"
    f = only(judge(pop / "keras-killed-000" / "train.log"), "TL-RUN-INCOMPLETE")
    assert (f.evidence.values["begun"], f.evidence.values["epochs"]) == (18, 38)
    assert f.evidence.text == "last logged step 17; epoch 18 of 38 began and did not end"
    assert f.location.line == 34  # the last finished epoch's values
    for healthy in sorted(pop.glob("keras-healthy-*/train.log")):
        assert "TL-RUN-INCOMPLETE" not in ids(judge(healthy)), healthy


def test_an_hf_trainer_stdout_without_its_closing_summary_is_incomplete():
    """HF's Trainer logs a closing dict (`train_runtime`, `train_loss`, …) when `train()` returns, through the
    same callback that printed the other dicts. Population hf-killed-000 (killed at epoch 14 of its plan, no
    tqdm bar, no trainer_state.json) ends without it and was judged as a finished run; its healthy runs end
    with it and keep no finding."""
    pop = Path(__file__).resolve().parents[1] / "fixtures" / "population" / "hf"
    f = only(judge(pop / "hf-killed-000" / "train.log"), "TL-RUN-INCOMPLETE")
    assert f.evidence.text == "last logged step 18; no end-of-training summary (train_runtime) after 18 logged dicts"
    assert f.location.line == 24  # the last train dict
    for healthy in sorted(pop.glob("hf-healthy-00*/train.log")):
        assert "TL-RUN-INCOMPLETE" not in ids(judge(healthy)), healthy


def test_a_zip_bomb_checkpoint_is_examined_once_and_not_expanded(tmp_path):
    """testzip() on every judgement: a 1 MB zip bomb cost 90 s per judge and a real 5 GB checkpoint was read
    whole on every append. Members over the budget are not read (a coverage reason says so), and each file is
    examined once per (size, mtime, inode)."""
    from trainlint.rules import run_level

    run = tmp_path / "run"
    run.mkdir()
    (run / "trainer_0_log.txt").write_text(COQUI_SAVES)
    with zipfile.ZipFile(run / "checkpoint_9.pth", "w", zipfile.ZIP_DEFLATED) as z, \
            z.open("archive/data.pkl", "w", force_zip64=True) as member:
        zeros = bytes(1 << 20)
        for _ in range(1024):                                               # 1 GB that deflates to ~1 MB
            member.write(zeros)
    assert (run / "checkpoint_9.pth").stat().st_size < 2 << 20
    aged(run / "trainer_0_log.txt")
    run_level._zip_state_of.cache_clear()
    rep = judge(run / "trainer_0_log.txt")
    assert not [f for f in rep.findings if f.id in ("TL-CKPT-CORRUPT", "TL-CKPT-TRUNCATED")]
    why = rep.coverage["checkpoints"]["checkpoint_9.pth"]
    assert why.reason == Skip.TOO_LARGE and "1073741824 bytes uncompressed" in why.detail
    judge(run / "trainer_0_log.txt")
    info = run_level._zip_state_of.cache_info()
    assert (info.misses, info.hits) == (1, 1)


LIVE = Path(__file__).resolve().parents[1] / "fixtures" / "live"


def _check_json(path: Path) -> tuple[int, dict]:
    r = subprocess.run([sys.executable, "-m", "trainlint.cli", "check", "--format", "json", str(path)],
                       capture_output=True, text=True, timeout=300)
    return r.returncode, json.loads(r.stdout)


def _bad(doc: dict) -> dict[str, tuple[str, set]]:
    """Each report's verdict and FAIL/WARN findings as (rule, series, line or record)."""
    return {Path(r["path"]).name: (r["verdict"], {(f["id"], f["series"], f["location"]["line"]
                                                   if f["location"]["line"] is not None else f["location"]["record"])
                                                  for f in r["findings"] if f["level"] in ("FAIL", "WARN")})
            for r in doc["reports"]}


def test_event_files_beside_a_text_log_without_series_are_judged_in_their_own_right():
    """tensorboardX prints only 'NaN or Inf found in input tensor.' to stdout.log; the curve is in runs/tbx. The
    folder's verdict is the event files' (checked alone they FAIL): a text log of which nothing is read cannot
    stand in for them as the run's judged log."""
    run = LIVE / "tensorboardx-diverge"
    if not run.exists():
        pytest.skip("gallery run tensorboardx-diverge not present")
    code, doc = _check_json(run)
    _, alone = _check_json(run / "runs" / "tbx")
    got = _bad(doc)
    assert got["tbx"] == _bad(alone)["tbx"] == ("FAIL", {("TP-DIVERGE", "`train/loss`", 143),
                                                          ("TP-NAN", "`train/loss`", 145)})
    assert got["stdout.log"] == ("NOT-CHECKED", set()) and code == 1
    assert not doc["discovery"]["companions"]


def test_corpus_event_file_beside_a_stdout_log_is_judged():
    """fish-speech (Lightning): train.log holds Hydra's INFO lines, the curve is in the event file beside it."""
    run = corpus("trainproof/evidence/fish_lightning_feb2026")
    _, doc = _check_json(run)
    got = _bad(doc)
    assert got["fish_lightning_feb2026"] == ("WARN", {("TP-OVERFIT", "`val/loss` (per-evaluation)", 984)})
    assert got["train.log"] == ("NOT-CHECKED", set())


def test_event_files_beside_a_text_log_with_the_same_series_stay_companions():
    """add_scalars' stdout.log prints the values the event files hold: judged once, in the text log."""
    run = LIVE / "add-scalars-overfit"
    if not run.exists():
        pytest.skip("gallery run add-scalars-overfit not present")
    _, doc = _check_json(run)
    assert [Path(r["path"]).name for r in doc["reports"]] == ["stdout.log"]
    assert [Path(c["path"]).name for c in doc["discovery"]["companions"]] == ["exp"]


def test_a_lightning_stdout_without_its_fit_stopped_line_is_incomplete():
    """Lightning prints "GPU available: …" when the Trainer starts and "`Trainer.fit` stopped: `max_steps=N`
    reached." when fit() ends at its limit; the curve is in the logger's files (metrics.csv, event files), so the
    stdout holds no series. Population lightning-killed-002 (SIGKILLed at step 119 of 176) ends after the start
    lines and was judged with no finding; its finished healthy runs end with the line and keep none."""
    pop = Path(__file__).resolve().parents[1] / "fixtures" / "population" / "lightning"
    f = only(judge(pop / "lightning-killed-002" / "train.log"), "TL-RUN-INCOMPLETE")
    assert f.evidence.text == "Lightning's Trainer started and no '`Trainer.fit` stopped' line follows it"
    assert f.location.line == 1
    for healthy in sorted(pop.glob("lightning-healthy-00*/train.log")):
        assert "TL-RUN-INCOMPLETE" not in ids(judge(healthy)), healthy
