"""Every threshold a rule uses, in one place, each with the reason for its default.

Defaults carried over from trainproof 0.22.0 keep its names and values, so a trainproof user
gets the same verdicts where we do not differ on purpose. ``.trainlint.yaml`` can override any
of them under ``thresholds:`` by the lower-case name (``max_loss_divergence_ratio: 2.0``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Thresholds:
    # -- loss level ----------------------------------------------------------------------------
    #: trainproof: the end of the loss may sit at most 1.5x above its minimum.
    max_loss_divergence_ratio: float = 1.5
    #: The end level and the lowest level are medians over windows of at most this many points;
    #: 1 compares the last point with the global minimum, exactly as trainproof does.
    divergence_window: int = 25
    #: ... and at least this many, so a single noisy batch cannot set either level ...
    divergence_window_min: int = 5
    #: ... scaling with the series as n // 20 between the two: a 60-point gallery log uses 5 points,
    #: a 2,500-point Coqui log 25. Windows at the start may be half as long, so a minimum held only
    #: at the beginning of a run (the loss of the pretrained model) still counts.
    divergence_window_divisor: int = 20
    #: ... and at most n // 4, so a short series (an epoch table of 10-19 rows: fastai, skorch, Keras, XGBoost)
    #: holds at least this many windows. With windows of 5 over 10 epochs the end window is half the run and the
    #: lowest level cannot lie apart from it: fastai's 0.999 -> 24.2 -> 2.47 measured end/lowest 1. Such a
    #: window is shorter than 4 points, and then a window at the start may be one point (an epoch row is an
    #: average over the epoch's batches, not one batch); the rise must still stand out of the measured noise.
    divergence_min_windows: int = 4
    #: ... and the rise must stand out of the loss's own measured noise (rules/noise.py): the end level must sit
    #: this many level errors above the lowest level (Iglewicz-Hoaglin's 3.5 for a robust z-score), plus the
    #: chance dip of the lowest of its windows (sqrt(2 ln windows)) unless a held-out loss rose too. This replaced
    #: three guards (end and lowest windows' quartiles overlap; one window above the threshold; less than a quarter
    #: of the descent given back), each added for one noisy run.
    divergence_noise_z: float = 3.5
    #: ... and, judged over its noise (windows of 2 points or more), the end level must be at least this many times
    #: the lowest level: the size of the rise, as overfit_ratio is the held-out loss's. trainproof's 1.5x
    #: (max_loss_divergence_ratio, kept for a window of 1 and for TP-NAN's few points) was a guard against noise
    #: before the noise was measured; it let an epoch loss rise 1.23x, 76 level errors, at the end of a run whose lr
    #: was ramped 241x (population sklearn-late-diverge-000). A rise out of a smooth loss can be tiny: with no size
    #: at all a healthy run's warm restart (sklearn-healthy-043, 1.02x at 8.2 level errors) FAILed in the tune half.
    #: A rise under 1.5x must also stand out of the noise at its upper bound (rules/noise.py: noise_upper), since
    #: nine changes can measure a noisy per-batch loss low (hf-healthy-041's first ten points: 1.44x, 5.35 level
    #: errors over a noise of 0.0547, 3.01 over its upper bound 0.0972), and counts only from a level the loss
    #: descended to (an mmdet detector starts low while its warm-up matches few proposals: 1.26x its start).
    divergence_min_ratio: float = 1.2
    #: Below this many finite points there is no trend to measure (two points are not "diverging").
    min_points_for_trend: int = 10
    #: trainproof: all-zero and flat-loss checks need at least 5 finite points.
    min_points_for_degenerate_check: int = 5
    #: trainproof: a tail of at least 5 exact zeros after a positive loss is a zero-loss onset.
    min_zero_tail_for_onset: int = 5
    #: A zero printed with a fixed number of decimals, every value of the series printed with the same 2 to this
    #: many decimals (spaCy's `0.00`, Keras's `0.0000`), is a value below half the last digit, not an exact zero:
    #: the zero-loss rules do not judge it (NOT-CHECKED with that reason). spaCy's healthy toy run fits its data
    #: (ENTS_F 100) and prints LOSS TOK2VEC `0.00` for 11 rows. One decimal is how Python prints an exact float
    #: zero (HF's `'loss': 0.0`), so it is never taken for a precision; at more than 4 decimals (below 5e-5) the
    #: zero is judged as before.
    printed_zero_max_decimals: int = 4
    #: A loss that *becomes* constant (TP-FLAT-ONSET): its last 5 or more finite values equal within
    #: ``constant_tail_rel_tol`` of the last one after it varied. A model whose weights stopped changing repeats its
    #: epoch loss to the last printed digit (population sklearn-frozen-001: 0.24430938 for 12 epochs, +-1e-8 from
    #: the summation order; sklearn-frozen-003: 0.50307299 for 12), while no healthy run of the population (both
    #: halves) ends in even 3 train-loss values within 1e-6 of each other: 8 have one pair of equal consecutive
    #: values, all printed with 4 decimals (Keras's `0.0308`, HF's `0.1745`). The longer constant tails of the gallery
    #: and the corpus are zeros (spacy-healthy's `0.00`, trl-nan's 0.0), a 4-decimal print (a corpus run's `Train
    #: Loss: 0.0025` for its last 15 epochs) or a config constant read as a loss (mask2former's LOSS_WEIGHT 1.0
    #: throughout); the longest full-precision one is torchtune-nan's 3. 5 values is the zero-onset rule's tail.
    min_constant_tail: int = 5
    #: ... equal within this relative spread ((max - min) / last): a few float32 ulps (1.2e-7 each) of summation
    #: jitter, far below any point-to-point change a training loss shows. A value printed with fewer digits than
    #: this resolves (a half unit of its last printed digit above 1e-6 of it: `0.23`, Keras's `0.3557`) can repeat
    #: on a plateau: such a tail is NOT-CHECKED.
    constant_tail_rel_tol: float = 1e-6
    #: ... and the series varied before the tail by at least this many times the tolerance per point (its log
    #: noise, rules/noise.py, over the values before the tail; the mean absolute log change when fewer than 4
    #: changes precede it): a constant tail out of a loss that was moving, not the end of a loss converging
    #: smoothly to its last digit. sklearn-frozen-002 creeps to 0.78953320 by about 1e-6 an epoch (its last 9
    #: values within 1e-6) after a noise of 6.5e-5 over 24 changes, 65 times the tolerance: not an onset (TP-DEAD-RUN
    #: names it);
    #: sklearn-frozen-001 varied by 0.0431 per point (43,000 times), sklearn-frozen-003 by 0.278 (one change).
    constant_tail_noise_ratio: float = 100.0
    #: trainproof: a coefficient of variation below 0.001 is a flat loss.
    min_loss_variation: float = 0.001
    #: trainproof: the dead-run check compares medians of the first and last 5 points ...
    loss_improvement_window: int = 5
    #: ... needs 10 points ...
    min_points_for_improvement_check: int = 10
    #: ... and calls a run dead when the end median is not at least 5% below the start median ...
    min_loss_improvement: float = 0.05
    #: ... and even the improvement its own noise allows (the measured one plus this many level errors of the two
    #: windows, rules/noise.py) falls short: a noisy per-batch loss is not called dead on one unlucky window. This
    #: replaced two guards: the windows of 5 before the last must not show the improvement either
    #: (``dead_run_windows``), and a live run whose loss is falling right now is not dead.
    dead_run_noise_z: float = 2.0
    #: TL-REWARD-COLLAPSE: a reward (or return) of an RL run whose end level is more than this many times below the
    #: highest level it held (both medians over TP-DIVERGE's windows): TP-DIVERGE's 1.5 mirrored, the same change of
    #: log level. The ratio alone does not decide: rewards of healthy runs swing by tens of percent between rollouts
    #: (the population's REINFORCE on CartPole: 16, 28.5, 48, 24.5 within ten updates; best/end up to 3.6 on healthy
    #: runs), and the fall must also exceed the reward's own noise (``divergence_noise_z`` level errors plus the
    #: chance rise of the highest of its windows; healthy runs reach at most 3.5 of the 5.2-5.7 needed).
    reward_collapse_ratio: float = 1.5
    #: A live run (its log written within ``running_if_written_within_s``) is too early to judge for "no
    #: progress" (TP-DEAD-RUN, TP-FLAT) below this many points ...
    live_min_points: int = 50
    #: ... or below this share of its planned steps, or while its logged learning rate is still warming up:
    #: a from-scratch run falls slowly at first, and FAILing it in its first minutes is crying wolf.
    live_min_progress: float = 0.10
    # -- gradients -----------------------------------------------------------------------------
    #: trainproof: a gradient norm above 10x the median is a spike.
    max_grad_norm_spike_ratio: float = 10.0
    #: The first 2% of gradient norms (at least the first one) are the initial transient of training: not
    #: judged, and not in the median (trainproof judges step 0 too and FAILs llm.c's normal start).
    grad_spike_initial_fraction: float = 0.02
    #: trainproof: the spike check needs more than 5 finite gradient norms.
    min_grad_points_for_spike: int = 6
    #: trainproof: the all-zero gradient check needs 5 finite gradient norms.
    min_grad_points_for_zero: int = 5
    # -- fp16 loss scaling -----------------------------------------------------------------------
    #: A dynamic loss scale at or below this has collapsed: DeepSpeed's and Megatron's default minimum scale is 1,
    #: and at 1 the gradients overflow fp16 unscaled (PyTorch's GradScaler has no minimum and keeps halving).
    loss_scale_floor: float = 1.0
    #: ... TL-LOSS-SCALE FAILs only when each of the last this many logged scales is at the floor (no single point).
    loss_scale_tail: int = 3
    #: More than this share of optimizer steps skipped after the scaler's initial calibration is worth a warning:
    #: a healthy scaler skips about one step per loss-scale window (1,000 steps by default: 0.1%).
    max_skipped_step_fraction: float = 0.05
    # -- learning rate -------------------------------------------------------------------------
    #: trainproof: 99% of logged learning rates <= 0 means the run did not train.
    zero_lr_fail_fraction: float = 0.99
    #: trainproof: more than 10% of logged learning rates <= 0 is worth a warning.
    max_zero_lr_fraction: float = 0.10
    #: A run resumed into the same log with a learning rate more than 2x away (either way) from the one its earlier
    #: attempt logged at that step restarted its schedule; a restored scheduler gives the same rate (ratio 1).
    lr_resume_jump: float = 2.0
    # -- held-out loss -------------------------------------------------------------------------
    #: trainproof: overfitting needs at least 4 finite evaluations ...
    overfit_min_evals: int = 4
    #: ... at least 3 of them after the best one ...
    overfit_tail: int = 3
    #: ... whose median is more than 1.2x the best.
    overfit_ratio: float = 1.2
    #: Held-out loss below this share of the train loss (the median of the last train points up to the
    #: evaluation) is far below it. Measured: Whisper fine-tunes in the corpus sit at 0.27-0.62, YOLO11 at
    #: 0.33-0.63, the gallery's Keras run with input noise and 50% dropout at 0.22-0.41 (all healthy); the
    #: law-llm run (train loss 5.39 against held-out 0.30) at 0.054-0.056. 0.1 leaves 2x on both sides.
    eval_below_train_ratio: float = 0.1
    #: ... at this share of the evaluations (the gap is there from the start, not one lucky evaluation) ...
    eval_below_train_share: float = 0.8
    #: ... of at least this many evaluations that have train loss before them.
    eval_below_train_min_evals: int = 3
    #: The train level at an evaluation is the median of at most this many train points up to its step.
    eval_below_train_window: int = 5
    #: TL-HELDOUT-STILL (issue 30): a held-out loss is still when its last evaluations stay within this share of
    #: their lowest value. Measured on the population's tune half: the four Lightning runs frozen from the first
    #: step (no gradient norm logged, AdamW's decay moving `val_loss` by 1e-6 to 4e-5 a evaluation) span 3.4e-6 to
    #: 8.1e-4 of their value over all their evaluations; no healthy run's first 5 evaluations span less than 0.0137
    #: (report half; 0.0245 on the tune half). 3e-3 leaves 3.7x above the frozen and 4.5x below the healthy.
    heldout_still_rel_range: float = 3e-3
    #: ... over at least this many evaluations (four intervals: one repeated value is not a stopped model) ...
    heldout_still_min_evals: int = 5
    #: ... and, when evaluations came before the stretch, its spread is at most this share of the median absolute
    #: log change per evaluation before it (at least 4 changes): a converging plateau keeps moving by a share of its
    #: earlier steps. Tune half: the frozen hf-frozen-000 and torch-frozen-000 measure 0.002 and 0; the lowest
    #: healthy run at any prefix 0.036 (lightning-healthy-011; report half 0.042): 0.01 leaves 3.6x.
    heldout_still_movement_ratio: float = 0.01
    # -- timing --------------------------------------------------------------------------------
    #: trainproof: recent step time more than 3x the early step time is a cliff.
    step_time_cliff_ratio: float = 3.0
    #: trainproof: the step-time check needs 10 points.
    min_points_for_step_cliff: int = 10
    #: trainproof: loader time above half of step time (median) means input-bound.
    loader_fraction_max: float = 0.5
    #: Per-rank logs (issue 24): a rank whose median step time is more than 1.5x the median of the other ranks'
    #: medians is a straggler. Ranks of one synchronous job wait for each other, so their step times agree to a
    #: few percent; half again as long is a slow host, a throttled device or a rank doing extra work.
    rank_straggler_ratio: float = 1.5
    #: ... measured over at least this many step times of each rank.
    min_points_for_straggler: int = 5
    #: A rank whose log ends more than this many of the leading rank's logging intervals before the others (and
    #: over 5% of the run's steps) stopped early: ranks of one job log in step.
    rank_stopped_intervals: int = 3

    # -- speech corpora (trainlint preflight) ---------------------------------------------------
    #: trainproof: audio longer than 25 s is an outlier (its RULES.md says 30 s; its code uses 25 s). Long clips
    #: dominate a batch's padding and memory and are where TTS attention fails to align.
    speech_max_duration_s: float = 25.0
    #: trainproof: audio shorter than 0.5 s is an outlier (a click, a cut word, a header without speech).
    speech_min_duration_s: float = 0.5
    #: trainproof: a decoded sample at or above 0.99 of full scale is clipping.
    speech_clip_level: float = 0.99
    #: trainproof: a sample at or below 0.005 of full scale is silent ...
    speech_silence_level: float = 0.005
    #: ... and a run of silent samples longer than 2 s is a long silence.
    speech_max_silence_s: float = 2.0
    #: trainproof: characters per second of audio more than 3x above or below the corpus median is a likely
    #: transcript/audio mismatch ...
    speech_char_rate_ratio: float = 3.0
    #: ... judged only when at least 10 records have both a transcript and a duration (trainproof's minimum).
    speech_char_rate_min_records: int = 10
    #: At most this many seconds of each file are decoded (clipping, silence): a header that declares hours is
    #: measured from its header and its first minute. 60 s is over twice the longest clip judged normal.
    speech_max_decode_s: float = 60.0
    #: trainproof: more than 50 tokens per second of audio is a sequence-length blow-up for a TTS/ASR model.
    tokens_per_second_max: float = 50.0
    #: trainproof's TP-TOK-LOW-COVERAGE level (99.9%), applied here to characters: at least this share of the
    #: transcripts' characters must be representable without the unknown token.
    min_char_coverage: float = 0.999
    #: More than this share of the transcripts' words of 4 or more letters encoded one piece per letter means a
    #: tokenizer that was not trained on this text (language, script, casing): our own threshold, trainproof's
    #: TP-TOK-SUSPICIOUS-SPLIT looks at numbers only.
    max_char_split_words: float = 0.10
    # -- environment (trainlint env) ------------------------------------------------------------
    #: trainproof: less than 4 GB of RAM left over after the run's declared need is tight (a machine starts
    #: paging long before it runs out).
    min_free_ram_margin_gb: float = 4.0
    #: trainproof: an import probe that has not finished after 120 s has hung.
    import_timeout_s: float = 120.0

    # -- run coverage --------------------------------------------------------------------------
    #: A log written to within this many seconds is reported as running, not as stopped.
    running_if_written_within_s: float = 120.0
    #: A series that ends within this factor of its lowest level "ends at its minimum" when it is
    #: set beside a divergence finding on another series (TL-SERIES-DISAGREE).
    at_minimum_ratio: float = 1.05

    # -- compare (trainproof's compare rules, their defaults) ------------------------------------
    #: trainproof: fewer than 10 finite losses cannot be compared.
    compare_min_points: int = 10
    #: trainproof: the start and the end of a compared loss are medians of 5 points.
    compare_window: int = 5
    #: trainproof: the run's loss floor may be at most 2x the baseline's (TP-FLOOR-RATIO).
    max_floor_ratio: float = 2.0
    #: trainproof: the run may end at most 2x above the baseline's end (TP-END-RATIO).
    max_end_ratio: float = 2.0
    #: trainproof: the run must improve by at least a quarter of the baseline's improvement (TP-IMPROVE-DEFICIT).
    min_improvement_fraction: float = 0.25
    #: trainproof: the run's median gradient norm may be at most 5x the baseline's (TP-GRADNORM-RATIO).
    max_gradnorm_median_ratio: float = 5.0

    # -- datasets (trainlint preflight) ----------------------------------------------------------
    #: trainproof's TP-TOK-HIGH-OOV: more than 0.1% of all tokens being the unknown token.
    max_oov_rate: float = 0.001

    def window_for(self, n: int) -> int:
        if self.divergence_window <= 1:
            return 1
        w = n // max(1, self.divergence_window_divisor)
        w = max(1, min(self.divergence_window, max(self.divergence_window_min, w), n))
        return max(1, min(w, n // max(1, self.divergence_min_windows)))

    @classmethod
    def with_overrides(cls, overrides: dict[str, object]) -> tuple[Thresholds, list[str]]:
        """Apply overrides by name; return the thresholds and a message per rejected entry."""
        known = {f.name for f in fields(cls)}
        values: dict[str, object] = {}
        errors: list[str] = []
        for key, raw in overrides.items():
            name = str(key).lower().replace("-", "_")
            if name not in known:
                errors.append(f"unknown threshold {key!r}")
                continue
            default = getattr(cls, name)
            try:
                value = type(default)(raw)  # int or float, as the default is
                if isinstance(raw, bool) or value < 0 or value != value or value in (float("inf"),):
                    raise ValueError
            except (TypeError, ValueError, OverflowError):  # int(.inf) overflows: a threshold must be finite
                errors.append(f"threshold {key!r} must be a finite non-negative {type(default).__name__}, got "
                              f"{str(raw)[:40]!r}")
                continue
            values[name] = value
        return cls(**values), errors  # type: ignore[arg-type]

