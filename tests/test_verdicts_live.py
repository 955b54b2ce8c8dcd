"""Verdicts that hold on live and real runs: a healthy log never FAILs at any prefix while it is being
written, a broken one FAILs once its fault is in the log (not before), and the faults users ask about get a
name. Each change here names the real run that motivated it (docs/differences-from-trainproof.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import CORPUS, FIXTURES, RUNS, corpus
from rulekit import faithful, ids, judge, only
from trainlint.core.findings import Level, Skip

LIVE = FIXTURES / "live"
# Healthy runs: the gallery's, and corpus runs whose full log has no FAIL and whose notes name no fault.
HEALTHY = [
    LIVE / "hf-healthy" / "train.log", LIVE / "keras-healthy" / "train.log", LIVE / "keras-healthy" / "training.log",
    LIVE / "lightning-healthy" / "train.log",
    LIVE / "lightning-healthy" / "lightning_logs" / "version_0" / "metrics.csv",
    LIVE / "tqdm-healthy" / "train.log", RUNS / "gallery-healthy" / "trainer_state.json",
    LIVE / "fp16-healthy" / "train.log", LIVE / "fp16-lowscale" / "train.log", LIVE / "keras-dropout" / "train.log",
    LIVE / "nanogpt-healthy" / "train.log", LIVE / "trl-healthy" / "train.log",
    LIVE / "torchtune-healthy" / "train.log", *(LIVE / "torchtune-healthy" / "logs").glob("log_*.txt"),
]
HEALTHY_CORPUS = [
    "csv_logs/Goreg12345__nlp2-probing-lms__lightning_logs__version_3__metrics.csv",
    "csv_logs/0Xero7__slm_training__lightning_logs__version_0__metrics.csv",
    "csv_logs/102y__Gallstone-Detection-using-YOLO-v11__results.csv",
    "hf_trainer_state/anthonyrathe__fixed-whisperv2-flemish__trainer_state.json",
    "hf_trainer_state/aigoncharov__trainer_state_viz__trainer_state.json",
    "hf_trainer_state/CoralReefFish__whisper-tiny-nbaiLab__trainer_state.json",
    "json_logs/kv-chiu__Fruit-Classification__Ear-Keypoints-Detection__logs__mmdet_scalars.json",
    "json_logs/BUAAZhangHaonan__mgm_mask2former__output__metrics.json",
    "json_logs/Kevindic0214__detectron2_training__output__metrics.json",
    "text_logs/BUAAZhangHaonan__mgm_mask2former__output__log.txt",
    "text_logs/HectorFCardenas__llm.c__gpt2_train.11672114.log",
    "text_logs/AGNDM__build-nanogpt__log_linear_lr__log.txt",
    "llamafactory_jsonl/hsc748NLP__NSLLM__trainer_log.jsonl",
]


def prefixes(src: Path, dst: Path, parts: int = 20):
    """Write growing prefixes of ``src`` to ``dst`` (every 1/parts of its lines, as the LSP counts them)."""
    data = src.read_bytes()
    starts = [0] + [m.end() for m in re.finditer(rb"\r\n|\r|\n", data)]
    n = len(starts)
    for k in range(1, parts + 1):
        cut = len(data) if k == parts else starts[min(n - 1, max(1, n * k // parts))]
        dst.write_bytes(data[:cut])
        yield k, data[:cut].count(b"\n") + data[:cut].count(b"\r") - data[:cut].count(b"\r\n")


def replay(src: Path, tmp_path: Path) -> list[tuple[int, int, list]]:
    dst = tmp_path / src.name
    out = []
    for k, lines in prefixes(src, dst):
        rep = judge(dst, live=True)  # just written: a run still being written
        out.append((k, lines, [(f.id, f.location.line) for f in rep.findings if f.level == Level.FAIL]))
    return out


@pytest.mark.parametrize("path", HEALTHY + [CORPUS / c for c in HEALTHY_CORPUS],
                         ids=lambda p: f"{p.parent.name}/{p.name}"[-60:])
def test_a_healthy_run_never_fails_at_any_prefix(path: Path, tmp_path: Path):
    if not path.exists():
        pytest.skip(f"corpus file not available: {path} (set TRAINLINT_CORPUS to ../shared/corpus)")
    for k, _lines, fails in replay(path, tmp_path):
        assert not fails, f"{5 * k}% of the log: {fails}"
    assert judge(path).verdict != Level.FAIL


def test_a_collapsed_scale_fails_only_once_three_floor_values_are_in_the_log(tmp_path: Path):
    # fp16-collapse: the scale shows 1 on line 33, 0.5 on line 35, 0.25 on line 37 (and keeps halving)
    for _k, lines, fails in replay(LIVE / "fp16-collapse" / "train.log", tmp_path):
        scale = [f for f in fails if f[0] == "TL-LOSS-SCALE"]
        assert bool(scale) == (lines >= 37), (lines, fails)


def test_a_nan_fails_from_the_prefix_that_holds_it_on_its_line(tmp_path: Path):
    # keras-diverge: the first NaN loss is on line 28 (epoch 7)
    for _k, lines, fails in replay(LIVE / "keras-diverge" / "train.log", tmp_path):
        nan = [f for f in fails if f[0] == "TP-NAN"]
        if lines < 28:
            assert not fails, (lines, fails)
        else:
            assert ("TP-NAN", 28) in nan, (lines, fails)


def test_a_diverging_run_fails_by_divergence_once_it_has_risen(tmp_path: Path):
    seen = replay(LIVE / "hf-diverge" / "train.log", tmp_path)
    first = next((i for i, (_k, _l, fails) in enumerate(seen) if fails), None)
    assert first is not None, seen
    # the loss is at its lowest around step 45 (line ~100): nothing fails before the climb is in the log
    assert seen[first][1] > 200
    assert {f for f, _ in seen[-1][2]} >= {"TP-DIVERGE"} and ("TP-DIVERGE", 760) in seen[-1][2]


def test_fp16_overflow_with_a_finite_loss_is_a_warning(tmp_path: Path):
    f = only(judge(RUNS / "gallery-fp16_nan" / "trainer_state.json"), "TP-NAN-GRAD")
    v = f.evidence.values
    assert (f.level, f.location.line, v["count"], v["loss_finite_after"], v["loss_after"]) == (
        Level.WARN, 35, 2, 57, 57)
    faithful(f)


def test_initial_gradient_norms_are_not_spikes():
    rep = judge(corpus("text_logs/HectorFCardenas__llm.c__gpt2_train.11672114.log"))
    assert "TP-GRAD-SPIKE" not in ids(rep)
    m = next(m for m in rep.measurements if m.check == "grad-spike")
    assert m.values["from_step"] > 1 and m.values["max"] < 10 * m.values["median"]


def test_adversarial_losses_are_not_judged_for_a_trend():
    rep = judge(corpus("coqui_trainer_log/jofrems__TTS_VITS_Finetuned__trainer_0_log.txt"))
    assert "TP-DEAD-RUN" not in ids(rep) and rep.verdict != Level.FAIL
    assert rep.skipped["dead-run"].reason == Skip.NOT_APPLICABLE
    assert "`loss_0` (per-step): an adversarial loss" in rep.skipped["dead-run"].detail


def test_heldout_loss_rising_from_its_first_evaluation_is_reported_on_it():
    f = only(judge(corpus("hf_trainer_state/ByErenOzer__Whisper_Finetune__trainer_state.json")), "TL-HELDOUT-RISE")
    v = f.evidence.values
    assert (f.level, f.location.line, v["best_step"]) == (Level.WARN, 479, 250)
    assert (round(v["best"], 6), round(v["tail"], 6)) == (0.219026, 0.410203)
    assert f.related[0].location.line == 84
    faithful(f)


def test_a_converged_noisy_loss_is_not_divergence():
    rep = judge(LIVE / "hf-healthy" / "train.log")
    assert rep.verdict == Level.PASS
    m = [m for m in rep.measurements if m.check == "divergence"][-1]
    # 1.98x its lowest 5-point level, but only 2.91 level errors of its own noise (0.297 per point in log) above
    # it, where 5.73 are needed (3.5 + the chance dip of the lowest of 12 windows)
    v = m.values
    assert v["ratio"] > 1.5 and round(v["z"], 2) == 2.91 and round(v["z_need"], 2) == 5.73, m.text
    assert round(v["sigma"], 3) == 0.297 and v["windows"] == 12


def test_a_run_restarted_into_the_same_log_is_judged_from_its_seam(tmp_path: Path):
    rows = [f"step {i}, loss: {5.0 - 0.04 * i:.3f}\n" for i in range(1, 101)]
    rows += [f"step {i}, loss: {5.0 - 0.03 * i:.3f}\n" for i in range(1, 31)]  # `tee -a`: a second run appended
    p = tmp_path / "train.log"
    p.write_text("".join(rows))
    rep = judge(p)
    assert not {"TP-DIVERGE", "TP-DEAD-RUN"} & ids(rep), [(f.id, f.evidence.text) for f in rep.findings]


def test_dead_run_waits_while_a_live_run_is_young(tmp_path: Path):
    p = tmp_path / "train.log"
    p.write_text("".join(f"step {i}, loss: {3.0 - 0.001 * i:.4f}, lr: {1e-5 * i:.2e}\n" for i in range(1, 40)))
    live = judge(p, live=True)
    assert "TP-DEAD-RUN" not in ids(live) and live.coverage["dead-run"]["`loss`"].reason == Skip.TOO_EARLY
    assert "TP-DEAD-RUN" in ids(judge(p))  # the same log, stopped long ago: it did not learn


def test_dead_run_skips_a_log_that_is_the_tail_of_a_run(tmp_path: Path):
    p = tmp_path / "train.log"
    p.write_text("".join(f"step {1_000_000 + 25 * i}, loss: {2.90 + 0.001 * (i % 3):.4f}\n" for i in range(40)))
    rep = judge(p)
    assert "TP-DEAD-RUN" not in ids(rep)
    assert "tail of a longer run" in rep.coverage["dead-run"]["`loss`"].detail



def test_a_warmup_longer_than_the_run(tmp_path: Path):
    f = only(judge(LIVE / "hf-warmup" / "train.log"), "TL-LR-WARMUP")
    v = f.evidence.values
    assert (f.level, f.location.line, v["points"], v["last_step"], v["planned"]) == (Level.WARN, 760, 60, 300, 300)
    faithful(f)
    assert "TL-LR-WARMUP" not in ids(judge(LIVE / "hf-healthy" / "train.log"))
    fresh = tmp_path / "train.log"
    fresh.write_bytes((LIVE / "hf-warmup" / "train.log").read_bytes())
    live = judge(fresh, live=True)  # just written: a run still warming up, not a fault
    assert "TL-LR-WARMUP" not in ids(live) and live.coverage["lr-warmup"]["`learning_rate`"].reason == Skip.TOO_EARLY


# -- TL-EVAL-BELOW-TRAIN: held-out loss far below the train loss from the start ----------------------------
def test_heldout_far_below_train_from_the_first_evaluation_is_named():
    # law-llm (Apache-2.0): train loss 284.9 -> 5.39 while the held-out loss goes 15.4 -> 0.30.
    f = only(judge(FIXTURES / "logs" / "law-llm_trainer_state.json"), "TL-EVAL-BELOW-TRAIN")
    v = f.evidence.values
    assert (f.level, f.location.line, f.related[0].location.line) == (Level.WARN, 95, 20)
    assert (v["below"], v["evals"], v["first_step"], v["last_step"]) == (6, 6, 100, 600)
    assert (round(v["first"], 4), round(v["train_first"], 4), round(v["last"], 6), v["train_last"]) == (
        15.4387, 284.8732, 0.303802, 5.3872)
    faithful(f)


@pytest.mark.parametrize("path", [LIVE / "keras-dropout" / "train.log", LIVE / "keras-dropout" / "training.log"])
def test_dropout_and_input_noise_make_a_gap_that_is_not_a_finding(path: Path):
    rep = judge(path)
    assert "TL-EVAL-BELOW-TRAIN" not in ids(rep)
    m = next(m for m in rep.measurements if m.check == "heldout-gap")
    assert 0.2 < m.values["last_ratio"] < 0.25 and 0.35 < m.values["first_ratio"] < 0.45, m.text


@pytest.mark.skipif(CORPUS is None, reason="corpus absent (set TRAINLINT_CORPUS)")
@pytest.mark.parametrize("name", ["CoralReefFish__whisper-tiny-nbaiLab",
                                  "akhmetvaleev-ruslan__bashkir-language-audio2text"])
def test_whisper_held_out_below_train_is_not_a_finding(name: str):
    rep = judge(corpus(f"hf_trainer_state/{name}__trainer_state.json"))
    assert "TL-EVAL-BELOW-TRAIN" not in ids(rep)
    assert any(m.check == "heldout-gap" for m in rep.measurements)


@pytest.mark.skipif(CORPUS is None, reason="corpus absent (set TRAINLINT_CORPUS)")
def test_zero_held_out_losses_are_placeholders_not_evaluations():
    # ultralytics with val=False logs 0 for each epoch it did not validate; the last epoch holds the only value.
    rep = judge(corpus("csv_logs/1katana__yolo_drone__results.csv"))
    assert "TL-EVAL-BELOW-TRAIN" not in ids(rep)
    cov = rep.coverage["heldout-gap"]["`val/box_loss` (per-evaluation)"]
    assert cov.reason == Skip.TOO_FEW and "19 logged exactly 0 are placeholders" in cov.detail, cov


def test_an_epoch_numbered_held_out_loss_is_not_set_against_a_bar_stepped_one():
    rep = judge(LIVE / "tqdm-healthy" / "train.log")
    assert "TL-EVAL-BELOW-TRAIN" not in ids(rep)
    m = next(m for m in rep.measurements if m.check == "heldout-gap")
    assert m.values["train_series"] == "`train loss`", m.values


# -- TL-LOSS-SCALE / TL-SKIPPED-STEPS: the fp16 loss scaler's own report ---------------------------------------
def test_a_collapsed_grad_scaler_scale_fails_on_its_line():
    # PyTorch's GradScaler on CPU, inputs left x1000: gradients overflow fp16 unscaled, the scale halves to 0.
    rep = judge(LIVE / "fp16-collapse" / "train.log")
    f = only(rep, "TL-LOSS-SCALE")
    v = f.evidence.values
    assert (f.level, f.location.line, f.location.column, f.series) == (Level.FAIL, 350, 77, "`scale`")
    assert (v["peak"], v["peak_step"], v["last"], v["last_step"], v["tail"]) == (32770, 0, 0, 166, 3)
    faithful(f)


def test_a_low_but_steady_scale_and_a_healthy_fp16_run_are_not_findings():
    low = judge(LIVE / "fp16-lowscale" / "train.log")
    assert low.verdict == Level.PASS
    m = next(m for m in low.measurements if m.check == "loss-scale")
    assert (m.values["lowest"], m.values["last"]) == (2, 2)  # halved from 32768 to 2 and held there
    healthy = judge(LIVE / "fp16-healthy" / "train.log")  # 65536 -> 32768 -> 65536: three shown values
    assert healthy.verdict == Level.PASS
    assert healthy.skipped["loss-scale"].detail == "`scale`: 3 finite loss scales, fewer than 4"


def test_loss_scale_check_is_skipped_without_a_scale():
    rep = judge(LIVE / "hf-healthy" / "train.log")
    assert rep.skipped["loss-scale"].reason == Skip.NO_SERIES
    assert rep.skipped["skipped-steps"].reason == Skip.NO_SERIES


def _megatron(tmp_path: Path, skips: list[int], scales: list[float]) -> Path:
    # Megatron-LM's training_log line (core >= 0.5), one per log interval of 10 iterations
    rows = [f" [2024-05-01 12:00:{i:02d}] iteration {10 * (i + 1):8d}/{10 * len(skips):8d} | consumed samples: "
            f"{320 * (i + 1):12d} | elapsed time per iteration (ms): 498.1 | learning rate: 1.500000E-04 | global "
            f"batch size:    32 | lm loss: {5 - 0.05 * i:.6E} | loss scale: {sc:.1f} | grad norm: 1.100 | number of "
            f"skipped iterations: {k:3d} | number of nan iterations:   0 |\n"
            for i, (k, sc) in enumerate(zip(skips, scales, strict=True))]
    p = tmp_path / "megatron.log"
    p.write_text("".join(rows))
    return p


def test_megatron_skipped_iterations_after_calibration_warn(tmp_path: Path):
    rep = judge(_megatron(tmp_path, [8] + [0] * 19 + [4] * 20, [2048.0] * 40))
    f = only(rep, "TL-SKIPPED-STEPS")
    v = f.evidence.values
    assert (f.location.line, v["skipped"], v["span"], v["from_step"]) == (40, 80, 390, 10)
    faithful(f)
    # the calibration at the start (8 of the first 10) and one skip per 1,000 steps are a scaler's normal work
    calm = judge(_megatron(tmp_path, [8] + [0] * 38 + [1], [2048.0] * 40))
    assert "TL-SKIPPED-STEPS" not in ids(calm)
    assert next(m for m in calm.measurements if m.check == "skipped-steps").values["skipped"] == 1


def test_deepspeed_overflow_lines_count_after_the_first_step_taken(tmp_path: Path):
    rows = [f"[Rank 0] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {2 ** (32 - i)}, reducing "
            f"to {2 ** (31 - i)}\n" for i in range(5)]  # DeepSpeed's calibration from 2^32, before any step
    for step in range(10, 210, 10):
        rows.append(f"steps: {step} loss: {3 - step / 200:.4f} iter time (s): 0.5\n")
        if step >= 100:
            rows.append("[Rank 0] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1, reducing "
                        "to 1\n")
    p = tmp_path / "ds.log"
    p.write_text("".join(rows))
    f = only(judge(p), "TL-SKIPPED-STEPS")
    assert (f.evidence.values["skipped"], f.evidence.values["span"], f.location.line) == (11, 190, 36)


def test_a_scale_that_touched_the_floor_and_recovered_warns(tmp_path: Path):
    scales = [2048.0] * 10 + [256.0, 16.0, 4.0, 1.0, 1.0, 2.0, 8.0, 64.0] + [2048.0] * 22
    f = only(judge(_megatron(tmp_path, [0] * 40, scales)), "TL-LOSS-SCALE-DIP")
    v = f.evidence.values
    assert (f.level, f.location.line, v["lowest"], v["lowest_step"], v["last"]) == (Level.WARN, 14, 1, 140, 2048)
    faithful(f)


def test_a_noisy_loss_stopped_at_any_point_is_neither_dead_nor_diverging(tmp_path: Path):
    # fp16-healthy: a per-batch loss of batch 16 falls 11 -> 4.5 with one window of 5 above the start now and then
    # (after 44, 76, 108, 140 points); stopped there, its noise decides, not one window.
    dst = tmp_path / "train.log"
    moved = []
    for k, lines in prefixes(LIVE / "fp16-healthy" / "train.log", dst):
        rep = judge(dst)
        assert not {"TP-DEAD-RUN", "TP-DIVERGE"} & ids(rep), (k, lines, [f.evidence.text for f in rep.findings])
        moved += [m for m in rep.measurements if m.check == "dead-run" and m.values["improvement"] < 0.05]
    assert moved  # at least one prefix whose last window alone would have FAILed
    # ... and what kept it passing is the run's measured noise and the line through all its points
    assert all(m.values["allowed"] >= 0.05 and m.values["fit_points"] >= 10 for m in moved)


# -- TL-LR-RESUME: a schedule that started over at a resume --------------------------------------------------
def test_a_resume_whose_scheduler_was_not_restored_warns_on_the_resumed_line():
    # HF Trainer resumed from a checkpoint without scheduler.pt: a fresh warm-up at global step 100
    f = only(judge(LIVE / "hf-resume-nosched" / "train.log"), "TL-LR-RESUME")
    v = f.evidence.values
    # issue 24: the resumed dict is step 105 by its printed epoch (its lagging bar showed 101), so it is set against
    # the earlier attempt's step 105 (line 277), not its step 100
    assert (f.level, f.location.line, v["step"], v["now"], v["was"], v["was_step"]) == (
        Level.WARN, 424, 105, 0.00024, 0.002352, 105)
    assert f.related[0].location.line == 277
    faithful(f)


def test_a_real_resume_keeps_its_rate_and_a_log_without_a_seam_is_skipped():
    rep = judge(LIVE / "hf-resume" / "train.log")  # the real Trainer restores the scheduler
    assert "TL-LR-RESUME" not in ids(rep) and "TL-RESUME" in ids(rep)
    m = next(m for m in rep.measurements if m.check == "lr-resume")
    assert 0.9 < m.values["ratio"] < 1.1, m.text
    assert judge(LIVE / "hf-healthy" / "train.log").skipped["lr-resume"].reason == Skip.NOT_APPLICABLE


def test_a_resume_into_an_hf_stdout_without_a_bar_is_found_by_its_epoch():
    """HF's Trainer without tqdm prints its dicts with no step; their place is their count. Population
    hf-resume-nosched-000 and -002 crashed, then resumed from a checkpoint whose scheduler.pt was lost: the count
    of dicts kept rising, so the steps never went back and TL-LR-RESUME skipped both ("no resume in this log").
    Each dict's `epoch` (global step / steps per epoch) goes back at the resume (3.172 -> 3.062; 3.875 -> 2.25):
    the resumed dict takes the place of the earlier attempt's dict of that epoch, and its fresh warm-up rate is set
    against the rate that dict had."""
    pop = FIXTURES / "population" / "hf"
    for run, line, step, now, was, before_line in (("hf-resume-nosched-000", 36, 28, 0.0003056, 0.00326, 32),
                                                   ("hf-resume-nosched-002", 38, 18, 4.869e-05, 0.000633, 20)):
        rep = judge(pop / run / "train.log")
        f = only(rep, "TL-LR-RESUME")
        v = f.evidence.values
        assert (f.location.line, v["step"], v["now"], v["was"], v["was_step"]) == (line, step, now, was, step), run
        assert f.related[0].location.line == before_line, run
        assert "TL-RESUME" in ids(rep), run
        faithful(f)
    for healthy in sorted(pop.glob("hf-healthy-00*/train.log")):
        assert not {"TL-RESUME", "TL-LR-RESUME"} & ids(judge(healthy)), healthy


def test_a_resumed_schedule_that_climbs_past_the_earlier_rate_warns_where_it_is_farthest():
    """Population torch-resume-nosched-003 (tune half; a SummaryWriter loop, crashed at step 118, resumed from step 80
    with a fresh schedule): 5 updates into its new warm-up the rate is 0.617x the decayed rate the earlier attempt
    had at step 85, within 2x, and TL-LR-RESUME passed it; the warm-up then climbs to 3.3x the earlier attempt's
    rate at the same steps (step 110). Every step both attempts logged is compared, and the farthest pair reported."""
    ev = next((FIXTURES / "population" / "torch" / "torch-resume-nosched-003" / "runs").glob("events.out.*"))
    rep = judge(ev)
    f = only(rep, "TL-LR-RESUME")
    v = f.evidence.values
    assert f.evidence.text == ("`lr`: 0.0169 at step 110, 3.33x the 0.00507 the earlier attempt logged at step 110 "
                               "(threshold 2x either way); the resumed attempt's first rate, at step 85, was 0.617x")
    assert (v["resume_step"], v["step"], v["was_step"]) == (85, 110, 110)
    assert f.related[0].location.record == 78
    faithful(f)


def test_nanogpt_divergence_fails_only_after_the_climb(tmp_path: Path):
    # nanoGPT's train.py at AdamW lr 1.5 without clipping: 10.8 -> 3.79 (steps 65-85), then 8.4 at step 115 and
    # 28-48 from step 120 on
    rep = judge(LIVE / "nanogpt-diverge" / "train.log")
    f = only(rep, "TP-DIVERGE")
    assert (f.level, f.location.line, f.evidence.values["end"], f.evidence.values["minimum"]) == (
        Level.FAIL, 67, 45.9728, 3.789)
    for _k, lines, fails in replay(LIVE / "nanogpt-diverge" / "train.log", tmp_path):
        if lines < 58:  # up to iter 110, before the climb
            assert not fails, (lines, fails)


def test_trl_sgd_blow_up_fails_on_the_first_nan_gradient():
    # TRL SFTTrainer, SGD at 20 without clipping: loss 2.3 -> 5.6e10 by step 25, then NaN gradients, and the
    # Trainer logs the loss of each NaN step as 0
    # Trainer logs the loss of each NaN step as 0 (logging_nan_inf_filter): one finding, TL-NAN-HIDDEN, on the
    # loss at the first NaN gradient, with the NaN gradients and the zeros folded into its evidence
    rep = judge(LIVE / "trl-nan" / "train.log")
    f = only(rep, "TL-NAN-HIDDEN")
    v = f.evidence.values
    assert (f.level, f.location.line, v["grad_run"], v["grad_step"], v["loss_points"], v["loss_value"]) == (
        Level.FAIL, 87, 36, 25, 36, 5.594e10)
    assert (v["also0_last_positive"], v["also0_onset_step"], v["also1_count"], v["also1_step"]) == (
        5.594e10, 30, 36, 25)
    assert {r.location.line for r in f.related} >= {87, 96}
    assert not {"TP-NAN-GRAD", "TP-ZERO-LOSS-ONSET"} & {g.id for g in rep.findings}
    faithful(f)
    assert judge(LIVE / "trl-diverge" / "train.log").verdict != Level.PASS


def test_torchtune_nan_fails_on_the_first_nan_in_its_stdout_and_its_disk_log():
    # torchtune's recipe with SGD at 50: the loss is NaN from step 8 on
    f = only(judge(LIVE / "torchtune-nan" / "train.log"), "TP-NAN")
    assert (f.location.line, f.evidence.values["count"], f.evidence.values["points"], f.evidence.values["step"]) == (
        90, 113, 120, 8)
    [disk] = (LIVE / "torchtune-nan" / "logs").glob("log_*.txt")
    g = only(judge(disk), "TP-NAN")
    assert (g.location.line, g.evidence.values["count"]) == (8, 113)
    faithful(f), faithful(g)
