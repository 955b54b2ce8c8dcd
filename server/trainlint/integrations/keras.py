"""``TrainlintCallback`` for Keras 3 (any backend): judges the ``logs`` of each epoch.

    model.fit(..., callbacks=[TrainlintCallback(policy="stop")])

Keras's per-batch ``logs`` are running means over the epoch so far, so the epoch's logs (``loss``, ``val_loss``,
and what ``compile`` added) are the measurements, stepped by epoch as Keras numbers them (from 1). It reads only
``logs``; with ``policy="stop"`` it sets ``model.stop_training`` at the first FAIL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import keras

from .guardian import Guardian

if TYPE_CHECKING:
    from typing import Any


class TrainlintCallback(keras.callbacks.Callback):  # type: ignore[misc]
    def __init__(self, policy: str = "warn", jsonl: str | None = None, config: Any = None) -> None:
        super().__init__()
        self.guardian = Guardian(policy, jsonl, config, step_key="epoch")

    def on_train_begin(self, logs: dict[str, Any] | None = None) -> None:
        self.guardian.planned((self.params or {}).get("epochs"))

    def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
        g = self.guardian
        g.announce(g.observe(epoch + 1, logs or {}))
        if g.should_stop:
            self.model.stop_training = True

    def on_train_end(self, logs: dict[str, Any] | None = None) -> None:
        g = self.guardian
        g.announce(g.judge(final=True))
        g.close()
