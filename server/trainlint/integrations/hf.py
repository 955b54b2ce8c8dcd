"""``TrainlintCallback`` for the HF ``Trainer`` (transformers): judges what ``on_log`` receives.

    trainer = Trainer(..., callbacks=[TrainlintCallback(policy="stop", jsonl="trainlint.jsonl")])

It reads only the ``logs`` dict and ``state.global_step``; with ``policy="stop"`` it sets
``control.should_training_stop`` at the first FAIL, which the Trainer honours after the current step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from transformers import TrainerCallback

from .guardian import Guardian

if TYPE_CHECKING:
    from typing import Any


class TrainlintCallback(TrainerCallback):  # type: ignore[misc]
    def __init__(self, policy: str = "warn", jsonl: str | None = None, config: Any = None) -> None:
        self.guardian = Guardian(policy, jsonl, config)

    def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        self.guardian.planned(state.max_steps)

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any) -> None:
        if not logs or not state.is_world_process_zero or "train_runtime" in logs:
            return  # the end-of-training summary (train_loss is the run's mean) is not a point of the curve
        g = self.guardian
        g.announce(g.observe(state.global_step, logs))
        if g.should_stop:
            control.should_training_stop = True

    def on_train_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        g = self.guardian
        g.announce(g.judge(final=True))
        g.close()
