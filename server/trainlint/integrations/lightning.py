"""``TrainlintCallback`` for Lightning: judges the metrics the module logged (``trainer.callback_metrics``).

    trainer = L.Trainer(callbacks=[TrainlintCallback(policy="stop")])

It reads ``trainer.callback_metrics`` and ``trainer.global_step`` after each training batch and each validation
run, never the batch, the outputs, the module's parameters or the optimizer; with ``policy="stop"`` it sets
``trainer.should_stop`` at the first FAIL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

try:
    from lightning.pytorch.callbacks import Callback
except ImportError:  # the standalone package name
    from pytorch_lightning.callbacks import Callback  # type: ignore[no-redef]

from .guardian import Guardian, numeric

if TYPE_CHECKING:
    from typing import Any


class TrainlintCallback(Callback):  # type: ignore[misc]
    def __init__(self, policy: str = "warn", jsonl: str | None = None, config: Any = None) -> None:
        self.guardian = Guardian(policy, jsonl, config)
        self._shown: dict[str, float] = {}

    def _observe(self, trainer: Any, final: bool = False) -> None:
        if not trainer.is_global_zero:
            return
        g = self.guardian
        # callback_metrics keeps the last value of every key: a value shown again unchanged at the next batch (an
        # epoch-level or validation metric) is not a new measurement
        fresh = {k: v for k, v in numeric(trainer.callback_metrics).items() if self._shown.get(k) != v}
        self._shown.update(fresh)
        if fresh or final:
            g.announce(g.observe(trainer.global_step, fresh, final))
        if g.should_stop:
            trainer.should_stop = True

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        self.guardian.planned(trainer.max_steps)  # -1 (no limit) is not a plan

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
        self._observe(trainer)

    def on_validation_end(self, trainer: Any, pl_module: Any) -> None:
        if not trainer.sanity_checking:
            self._observe(trainer)

    def on_train_end(self, trainer: Any, pl_module: Any) -> None:
        g = self.guardian
        g.announce(g.judge(final=True))
        g.close()
