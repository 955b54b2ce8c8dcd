"""Tiny real training runs for the callback tests, one per framework, run as a subprocess (with dropout, so a
callback that drew from the RNG would change the weights):

    python runs.py FRAMEWORK {healthy|diverge} {none|warn|stop} OUT_DIR

Writes OUT_DIR/result.json: the batch indices the sampler gave out (recorded by the test's own sampler, never by
the callback), a SHA-256 of the final weights, the last global step, and the callback's first FAIL (rule, evidence).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys

import numpy as np
import torch

FRAMEWORK, KIND, POLICY, OUT = sys.argv[1:5]
os.makedirs(OUT, exist_ok=True)
os.chdir(OUT)
torch.manual_seed(0)
random.seed(0)
np.random.seed(0)
torch.set_num_threads(1)
LR = 0.05 if KIND == "healthy" else 0.6
g = torch.Generator().manual_seed(1)
X = torch.randn(256, 8, generator=g)
Y = (X @ torch.randn(8, 1, generator=torch.Generator().manual_seed(0)) + 0.1 * torch.randn(256, 1, generator=g))
SEEN: list[int] = []


class Recording(torch.utils.data.Sampler):
    """A shuffling sampler that records every index it hands out (the batch order the test compares)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.gen = torch.Generator().manual_seed(2)

    def __iter__(self):
        for i in torch.randperm(self.n, generator=self.gen).tolist():
            SEEN.append(i)
            yield i

    def __len__(self) -> int:
        return self.n


def digest(tensors) -> str:
    h = hashlib.sha256()
    for t in tensors:
        h.update(np.ascontiguousarray(t.detach().cpu().numpy()).tobytes())
    return h.hexdigest()


def callback(module: str):
    if POLICY == "none":
        return []
    mod = __import__(f"trainlint.integrations.{module}", fromlist=["TrainlintCallback"])
    return [mod.TrainlintCallback(policy=POLICY, jsonl="trainlint.jsonl")]


def first_fail(cbs) -> dict | None:
    if not cbs or cbs[0].guardian.first_fail is None:
        return None
    f = cbs[0].guardian.first_fail
    return {"id": f.id, "evidence": f.evidence.text, "series": f.series}


if FRAMEWORK == "hf":
    from torch import nn
    from transformers import Trainer, TrainingArguments

    class DS(torch.utils.data.Dataset):
        def __len__(self):
            return len(X)

        def __getitem__(self, i):
            return {"x": X[i], "labels": Y[i, 0]}

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Dropout(0.1), nn.Linear(32, 1))

        def forward(self, x, labels=None):
            out = self.net(x).squeeze(-1)
            return {"loss": nn.functional.mse_loss(out, labels), "logits": out}

    class T(Trainer):
        def _get_train_sampler(self, *a, **k):
            return Recording(len(X))

    args = TrainingArguments(output_dir="out", max_steps=160, per_device_train_batch_size=16, learning_rate=LR,
                             logging_steps=2, save_strategy="no", report_to=[], seed=0, use_cpu=True,
                             disable_tqdm=True, max_grad_norm=1e9, lr_scheduler_type="constant", optim="sgd")
    cbs = callback("hf")
    model = M()
    trainer = T(model=model, args=args, train_dataset=DS(), callbacks=cbs)
    trainer.train()
    step = trainer.state.global_step
    weights = list(model.parameters())
elif FRAMEWORK == "lightning":
    import lightning as L
    from torch import nn

    class M(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Dropout(0.1), nn.Linear(32, 1))

        def training_step(self, b, i):
            loss = nn.functional.mse_loss(self.net(b[0]), b[1])
            self.log("train_loss", loss, on_step=True, on_epoch=False)
            return loss

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=LR)

    ds = torch.utils.data.TensorDataset(X, Y)
    loader = torch.utils.data.DataLoader(ds, batch_size=16, sampler=Recording(len(X)))
    cbs = callback("lightning")
    model = M()
    trainer = L.Trainer(max_steps=160, callbacks=cbs, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False, accelerator="cpu", log_every_n_steps=1)
    trainer.fit(model, loader)
    step = trainer.global_step
    weights = list(model.parameters())
elif FRAMEWORK == "keras":
    os.environ["KERAS_BACKEND"] = "torch"
    import keras

    keras.utils.set_random_seed(0)

    class Seq(keras.utils.PyDataset):
        """Batches in the Recording sampler's order (Keras takes no sampler; the test records the order itself)."""

        def __init__(self):
            super().__init__()
            self.order = list(Recording(len(X)))

        def __len__(self):
            return len(X) // 16

        def __getitem__(self, b):
            idx = self.order[b * 16:(b + 1) * 16]
            return X[idx].numpy(), Y[idx].numpy()

        def on_epoch_end(self):
            self.order = list(Recording(len(X)))

    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(32, activation="tanh"), keras.layers.Dropout(0.1),
                              keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(LR), loss="mse")
    cbs = callback("keras")
    hist = model.fit(Seq(), epochs=16, verbose=0, shuffle=False, callbacks=cbs)
    step = len(hist.history["loss"])
    weights = [torch.as_tensor(np.asarray(w)) for w in model.get_weights()]
else:
    raise SystemExit(f"unknown framework {FRAMEWORK}")

with open("result.json", "w") as f:
    json.dump({"seen": SEEN, "weights": digest(weights), "step": step, "fail": first_fail(cbs)}, f)
