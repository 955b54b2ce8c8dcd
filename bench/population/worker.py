"""One framework's population runs, in one process: the framework is imported once, each run is a fork.

Started by make_population.py in the population virtual environment (torch 2.13.0 CPU, transformers,
lightning, keras, scikit-learn, lightgbm, gymnasium, tensorboard):

    python worker.py FRAMEWORK SPECS.json

SPECS.json is a list of {"id", "dir", "label", "params"}. Importing HF or Lightning takes seconds, a tiny run
less: the parent imports the framework once and forks a child per run, whose stdout and stderr go to the
run's ``train.log`` as ``python train.py 2>&1 | tee train.log`` leaves them. A fork also makes a killed run
real (the child SIGKILLs itself at its onset: no handler, no flush) and keeps one run's state from leaking
into the next. After the child, the parent drops what is not the run's record (checkpoints, caches), finds
the line (or event-file record) where the fault first shows, and writes the run's label record last, which
is what makes a run count as written.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import sys
import time

FAULTS = ("diverge", "late-diverge", "nan", "frozen", "lr-zero", "overfit", "eval-on-train", "stall", "killed",
          "resume-nosched")


# ---------------------------------------------------------------------------------------------- shared pieces
def schedule(p: dict, step: int, total: int) -> float:
    """The run's own learning-rate multiplier at ``step``: warm-up, then its decay (no fault)."""
    warm = p.get("warmup", 0)
    kind = p.get("schedule", "constant")
    if warm and step < warm:
        m = (step + 1) / warm
    else:
        t = (step - warm) / max(1, total - warm)
        if kind == "linear":
            m = max(0.02, 1.0 - t)
        elif kind == "cosine":
            m = 0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * min(1.0, t)))
        elif kind == "restarts":
            cycles = p.get("cycles", 3)
            m = 0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * ((t * cycles) % 1.0)))
        elif kind == "step":
            m = 0.3 ** int(t * 3)
        else:
            m = 1.0
    return m


def lr_mult(p: dict, step: int, label: str, total: int) -> float:
    """The learning-rate multiplier at ``step``: the run's schedule, then its fault.

    A late divergence ramps geometrically from where the schedule stood at the onset to ``peak`` times the base
    learning rate at the last step, whatever the schedule would have decayed to by then: multiplying the decayed
    schedule by a growth factor (as this did first) left a linear or cosine run at 0.02 of its ramp's target: 13 of
    28 runs ended below 10x their base learning rate, 5 below 1.2x, and 18 ended within 2x of their lowest loss (8
    at it). ``ramp`` (steps) ends
    the ramp sooner and holds the peak: scikit-learn stops a fit 10 epochs after its best loss, before a ramp over
    the whole tail has taken the learning rate anywhere."""
    m = schedule(p, step, total)
    onset = p.get("onset")
    if onset is not None and step >= onset:
        if label == "diverge":
            m *= p["factor"]
        elif label == "late-diverge":
            start = schedule(p, onset, total)
            frac = min(1.0, (step - onset + 1) / max(1, p.get("ramp") or total - onset))
            m = start * (p["peak"] / start) ** frac
        elif label == "lr-zero":
            m = 0.0
    return m


def toy(p: dict, n: int, seed: int):  # type: ignore[no-untyped-def]
    """A regression task fixed by the run's seed (W) with samples drawn by ``seed``: numpy arrays."""
    import numpy as np

    w = np.random.default_rng(p["seed"]).normal(size=(p.get("dim", 8), 1))
    rng = np.random.default_rng(p["seed"] * 1000 + seed)
    x = rng.normal(size=(n, p.get("dim", 8)))
    y = np.tanh(x @ w) + 0.5 * (x @ w) + p["noise"] * rng.normal(size=(n, 1))
    return x.astype("float32"), y.astype("float32")[:, 0]


def spike_batch(p: dict, step: int) -> bool:
    """A healthy run's one bad batch (labels x20) that the run recovers from."""
    return p.get("spike") is not None and step == p["spike"]


def die() -> None:
    """A killed run: SIGKILL, as the OOM killer or a pre-empted node does (nothing flushed, nothing said)."""
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


class Lines:
    """A log the run writes itself (plain loops, RL): counts its lines so the onset line is known exactly."""

    def __init__(self, path: str) -> None:
        self.f = open(path, "w", buffering=1)  # noqa: SIM115 (open for the run's life, as a logger's file is)
        self.n = 0
        self.first_at: dict[int, int] = {}

    def write(self, step: int, text: str) -> None:
        self.n += 1
        self.f.write(text + "\n")
        self.first_at.setdefault(step, self.n)


# ------------------------------------------------------------------------------------------------ torch models
def torch_model(p: dict):  # type: ignore[no-untyped-def]
    from torch import nn

    act = {"tanh": nn.Tanh, "relu": nn.ReLU, "gelu": nn.GELU}[p.get("act", "tanh")]
    h = p.get("hidden", 32)
    return nn.Sequential(nn.Linear(p.get("dim", 8), h), act(), nn.Linear(h, h), act(), nn.Linear(h, 1))


def poison(model) -> None:  # type: ignore[no-untyped-def]
    """NaN fault: one weight becomes NaN (an fp overflow in a real run), so every loss after it is NaN (an Inf
    weight would not do: tanh saturates it to a finite activation with a zero gradient, and the run goes on)."""
    import torch

    with torch.no_grad():
        next(iter(model.parameters())).view(-1)[0] = float("nan")


def freeze(model) -> None:  # type: ignore[no-untyped-def]
    """Frozen weights: every gradient is zeroed from here on (a `requires_grad`/unfreeze bug)."""
    for prm in model.parameters():
        prm.register_hook(lambda g: g * 0.0)


# ------------------------------------------------------------------------------------------------- HF Trainer
def run_hf(p: dict, label: str, out: str) -> None:
    import torch
    from torch import nn
    from transformers import Trainer, TrainerCallback, TrainingArguments

    torch.manual_seed(p["seed"])
    x, y = toy(p, p["n"], 0)
    xv, yv = toy(p, 128, 1)
    small = p.get("memorise", 16)

    class DS(torch.utils.data.Dataset):
        def __init__(self, x, y, train):  # type: ignore[no-untyped-def]
            self.x, self.y, self.train = torch.tensor(x), torch.tensor(y), train
            self.step = 0

        def __len__(self) -> int:
            return len(self.x)

        def __getitem__(self, i):  # type: ignore[no-untyped-def]
            yy = self.y[i]
            if self.train and label == "overfit" and self.step >= p["onset"]:
                i = i % small  # from the onset the loader serves a few examples with noisy labels
                yy = self.y[i] + p.get("label_noise", 2.0) * ((i * 7919) % 13 / 6.0 - 1.0)
            if self.train and spike_batch(p, self.step):
                yy = yy * 20
            return {"x": self.x[i], "labels": yy}

    class M(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = torch_model(p)

        def forward(self, x, labels=None):  # type: ignore[no-untyped-def]
            o = self.net(x).squeeze(-1)
            return {"loss": nn.functional.mse_loss(o, labels), "logits": o}

    train = DS(x, y, True)
    evalset = DS(x, y, False) if label == "eval-on-train" else DS(xv, yv, False)
    steps = p["steps"]

    class Fault(TrainerCallback):
        def __init__(self, model) -> None:  # type: ignore[no-untyped-def]
            self.model = model

        def on_step_begin(self, args, state, control, **kw):  # type: ignore[no-untyped-def]
            train.step = state.global_step
            if state.global_step == p.get("onset"):
                if label == "nan":
                    poison(self.model)
                elif label == "frozen":
                    freeze(self.model)
            if label == "stall" and state.global_step >= p["onset"]:
                time.sleep(p["sleep"])

        def on_step_end(self, args, state, control, **kw):  # type: ignore[no-untyped-def]
            if label == "killed" and state.global_step == p["onset"]:
                die()
            if label == "resume-nosched" and state.global_step == p["crash"] and not os.path.exists("resumed"):
                raise SystemExit(f"simulated crash at step {p['crash']}")

    def trainer(model):  # type: ignore[no-untyped-def]
        opt = (torch.optim.AdamW if p["optim"] == "adamw" else torch.optim.SGD)(model.parameters(), lr=p["lr"])
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: lr_mult(p, s, label, steps))
        save = label == "resume-nosched"
        args = TrainingArguments(
            output_dir=".", max_steps=steps, per_device_train_batch_size=p["bs"], learning_rate=p["lr"],
            logging_steps=p["log_every"], eval_strategy="steps", eval_steps=p["eval_every"],
            save_strategy="steps" if save else "no", save_steps=p.get("onset") or 100, report_to=[],
            seed=p["seed"], use_cpu=True, disable_tqdm=True, max_grad_norm=p["clip"],
            logging_nan_inf_filter=p.get("nan_filter", True), dataloader_num_workers=0)
        return Trainer(model=model, args=args, train_dataset=train, eval_dataset=evalset,
                       optimizers=(opt, sched), callbacks=[Fault(model)])

    if label == "resume-nosched":
        # a crash after the checkpoint at the onset, then a resume from it whose scheduler.pt was lost: the
        # Trainer starts a fresh schedule (its warm-up again) at the checkpoint's step, in the same stdout
        try:
            trainer(M()).train()
        except SystemExit as e:
            print(e, flush=True)
        open("resumed", "w").close()
        ck = f"checkpoint-{p['onset']}"
        os.remove(os.path.join(ck, "scheduler.pt"))
        t = trainer(M())
        t.train(resume_from_checkpoint=ck)
        os.remove("resumed")
    else:
        t = trainer(M())
        t.train()
    t.save_state()  # trainer_state.json, as the example scripts call it


# -------------------------------------------------------------------------------------------------- Lightning
def run_lightning(p: dict, label: str, out: str) -> None:
    import lightning as L
    import torch
    from torch import nn

    L.seed_everything(p["seed"], verbose=False)
    x, y = toy(p, p["n"], 0)
    xv, yv = toy(p, 128, 1)
    steps = p["steps"]

    class M(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = torch_model(p)

        def training_step(self, b, i):  # type: ignore[no-untyped-def]
            s = self.global_step
            if s == p.get("onset") and i is not None:
                if label == "nan":
                    poison(self.net)
                elif label == "frozen":
                    freeze(self.net)
            if label == "killed" and s == p.get("onset"):
                die()
            xb, yb = b
            if label == "overfit" and s >= p["onset"]:
                noisy = p.get("label_noise", 1.5) * torch.sin(torch.arange(16.0) * 3)
                xb, yb = torch.tensor(x[:16]), torch.tensor(y[:16]) + noisy
            if spike_batch(p, s):
                yb = yb * 20
            loss = nn.functional.mse_loss(self.net(xb).squeeze(-1), yb)
            self.log("train_loss", loss, prog_bar=True, on_step=True, on_epoch=p.get("on_epoch", False))
            self.log("lr", self.optimizers().param_groups[0]["lr"], on_step=True)
            return loss

        def validation_step(self, b, i):  # type: ignore[no-untyped-def]
            self.log("val_loss", nn.functional.mse_loss(self.net(b[0]).squeeze(-1), b[1]), prog_bar=True)

        def configure_optimizers(self):  # type: ignore[no-untyped-def]
            opt = (torch.optim.AdamW if p["optim"] == "adamw" else torch.optim.SGD)(self.parameters(), lr=p["lr"])
            sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: lr_mult(p, s, label, steps))
            return [opt], [{"scheduler": sched, "interval": "step"}]

    class Stall(torch.utils.data.Dataset):
        def __init__(self) -> None:
            self.x, self.y = torch.tensor(x), torch.tensor(y)
            self.calls = 0

        def __len__(self) -> int:
            return len(self.x)

        def __getitem__(self, i):  # type: ignore[no-untyped-def]
            self.calls += 1
            if label == "stall" and self.calls // p["bs"] >= p["onset"] and self.calls % p["bs"] == 0:
                time.sleep(p["sleep"])
            return self.x[i], self.y[i]

    dl = torch.utils.data.DataLoader(Stall(), batch_size=p["bs"], shuffle=True)
    vsrc = (x, y) if label == "eval-on-train" else (xv, yv)
    vl = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.tensor(vsrc[0]), torch.tensor(vsrc[1])),
                                     batch_size=64)
    if p["logger"] == "tensorboard":
        logger = L.pytorch.loggers.TensorBoardLogger(".", name="lightning_logs")
    else:
        logger = L.pytorch.loggers.CSVLogger(".", name="lightning_logs")
    cbs = []
    if p.get("early_stop"):
        cbs.append(L.pytorch.callbacks.EarlyStopping("val_loss", patience=p["early_stop"]))
    t = L.Trainer(max_steps=steps, accelerator="cpu", logger=logger, log_every_n_steps=p["log_every"],
                  val_check_interval=p["eval_every"], check_val_every_n_epoch=None, enable_checkpointing=False,
                  enable_model_summary=False, enable_progress_bar=False, callbacks=cbs, gradient_clip_val=p["clip"])
    t.fit(M(), dl, vl)


# ------------------------------------------------------------------------------------------------------ Keras
def run_keras(p: dict, label: str, out: str) -> None:
    import keras
    import numpy as np

    keras.utils.set_random_seed(p["seed"])
    x, y = toy(p, p["n"], 0)
    xv, yv = toy(p, 128, 1)
    epochs = p["epochs"]
    h = p.get("hidden", 32)
    m = keras.Sequential([keras.Input((x.shape[1],)), keras.layers.Dense(h, activation=p.get("act", "tanh")),
                          keras.layers.Dense(h, activation=p.get("act", "tanh")), keras.layers.Dense(1)])
    opt = keras.optimizers.Adam(p["lr"]) if p["optim"] == "adamw" else keras.optimizers.SGD(p["lr"])
    m.compile(optimizer=opt, loss="mse")

    class Fault(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):  # type: ignore[no-untyped-def]
            if label == "nan" and epoch == p["onset"]:
                w = m.layers[0].kernel
                v = np.array(w.numpy())
                v[0, 0] = np.nan
                w.assign(v)

        def on_epoch_end(self, epoch, logs=None):  # type: ignore[no-untyped-def]
            if label == "killed" and epoch == p["onset"]:
                die()

    cbs = [keras.callbacks.CSVLogger("training.log"),
           keras.callbacks.LearningRateScheduler(lambda e: p["lr"] * lr_mult(p, e, label, epochs)), Fault()]
    if p.get("early_stop"):
        cbs.append(keras.callbacks.EarlyStopping(patience=p["early_stop"]))
    val = (x, y) if label == "eval-on-train" else (xv, yv)
    m.fit(x, y, epochs=epochs, batch_size=p["bs"], validation_data=val, verbose=2, callbacks=cbs)


# ----------------------------------------------------------------------------------------------- plain PyTorch
def run_torch(p: dict, label: str, out: str) -> dict:
    """A hand-written loop logging as such loops do: print lines, JSONL, CSV or a TensorBoard SummaryWriter."""
    import torch
    from torch import nn

    torch.manual_seed(p["seed"])
    x, y = toy(p, p["n"], 0)
    xv, yv = toy(p, 128, 1)
    x, y, xv, yv = map(torch.tensor, (x, y, xv, yv))
    if label == "eval-on-train":
        xv, yv = x, y
    steps, bs = p["steps"], p["bs"]
    model = torch_model(p)
    opt = (torch.optim.AdamW if p["optim"] == "adamw" else torch.optim.SGD)(model.parameters(), lr=p["lr"])
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: lr_mult(p, s, label, steps))
    fmt = p["logger"]
    writer = None
    lines = None
    if fmt == "tensorboard":
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter("runs", flush_secs=1)
    elif fmt == "jsonl":
        lines = Lines("metrics.jsonl")
    elif fmt == "csv":
        lines = Lines("metrics.csv")
        lines.write(-1, "step,train_loss,val_loss,lr,grad_norm,time")
    t0 = time.time()
    clock = {"last": t0, "data": 0.0}

    def log(step: int, d: dict) -> None:
        if writer is not None:
            for k, v in d.items():
                writer.add_scalar(k.replace("_", "/", 1) if k != "lr" else "lr", v, step)
        elif fmt == "jsonl":  # mmengine's keys: seconds per iteration and loader seconds over the interval
            extra = {}
            if "train_loss" in d:
                extra = {"time": round((time.time() - clock["last"]) / p["log_every"], 5),
                         "data_time": round(clock["data"] / p["log_every"], 5)}
                clock.update(last=time.time(), data=0.0)
            lines.write(step, json.dumps({"step": step, **d, **extra}))
        elif fmt == "csv":
            lines.write(step, ",".join(["" if d.get(k) is None else repr(float(d[k])) for k in
                                        ("train_loss", "val_loss", "lr", "grad_norm")]).join([f"{step},", ""])
                        + f",{time.time() - t0:.4f}")
        else:
            body = " | ".join(f"{k} {v:.5g}" for k, v in d.items())
            print(f"step {step}/{steps} | {body}", flush=True)

    saved = None
    step = 0
    resumed = False
    g = torch.Generator().manual_seed(p["seed"])
    while step < steps:
        if label == "resume-nosched" and step == p["onset"] and saved is None:
            saved = (step, {k: v.clone() for k, v in model.state_dict().items()})
        if label == "resume-nosched" and step == p["crash"] and not resumed:
            # crash, restart from the checkpoint at the onset; the scheduler was not saved: a fresh one
            print(f"Traceback (most recent call last):\nRuntimeError: simulated crash at step {step}", flush=True)
            print(f"resuming from checkpoint at step {saved[0]}", flush=True)
            step = saved[0]
            model.load_state_dict(saved[1])
            opt = (torch.optim.AdamW if p["optim"] == "adamw" else torch.optim.SGD)(model.parameters(), lr=p["lr"])
            sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: lr_mult(p, s, "healthy", steps))
            resumed = True
        if step == p.get("onset"):
            if label == "nan":
                poison(model)
            elif label == "frozen":
                freeze(model)
            elif label == "killed":
                die()
        t_data = time.time()
        if label == "stall" and step >= p["onset"]:
            time.sleep(p["sleep"])  # the loader stalls: a slow disk, a worker gone
        idx = torch.randint(0, len(x), (bs,), generator=g)
        xb, yb = x[idx], y[idx]
        clock["data"] += time.time() - t_data
        if label == "overfit" and step >= p["onset"]:
            xb, yb = x[:16], y[:16] + p.get("label_noise", 1.5) * torch.sin(torch.arange(16.0) * 3)
        if spike_batch(p, step):
            yb = yb * 20
        loss = nn.functional.mse_loss(model(xb).squeeze(-1), yb)
        opt.zero_grad()
        loss.backward()
        gn = float(torch.nn.utils.clip_grad_norm_(model.parameters(), p["clip"]))
        opt.step()
        lr = opt.param_groups[0]["lr"]
        sched.step()
        step += 1
        if step % p["log_every"] == 0:
            log(step, {"train_loss": loss.item(), "lr": lr, "grad_norm": gn})
        if step % p["eval_every"] == 0:
            with torch.no_grad():
                log(step, {"val_loss": nn.functional.mse_loss(model(xv).squeeze(-1), yv).item()})
    if writer is not None:
        writer.close()
    return {"first_at": lines.first_at} if lines is not None else {}


# ------------------------------------------------------------------------------------------------ scikit-learn
def run_sklearn(p: dict, label: str, out: str) -> None:
    """MLP with verbose=True (its 'Iteration N, loss = X' lines), one `fit`. A fault acts at the end of an epoch
    through the solver's own `iteration_ends` hook (warm-started or partial fits print 'Iteration 1' every
    call: sklearn resets n_iter_ in each). Warnings are left as a user's script leaves them: a fit that stops
    at max_iter ends with sklearn's ConvergenceWarning on stderr (silencing it, as this did first, made a
    finished run's log and a killed run's log end alike)."""
    import numpy as np
    from sklearn.neural_network import MLPClassifier, MLPRegressor
    from sklearn.neural_network import _stochastic_optimizers as so

    x, y = toy(p, p["n"], 0)
    cls = p.get("task") == "classify"
    if cls:
        y = (y > np.median(y)).astype(int)
    est = (MLPClassifier if cls else MLPRegressor)(
        hidden_layer_sizes=(p.get("hidden", 32),), learning_rate_init=p["lr"], batch_size=p["bs"],
        solver="adam" if p["optim"] == "adamw" else "sgd", random_state=p["seed"], verbose=True,
        max_iter=p["epochs"], early_stopping=bool(p.get("early_stop")),
        n_iter_no_change=p.get("early_stop") or 10, tol=1e-6 if not p.get("early_stop") else 1e-4)
    epoch = [0]

    def iteration_ends(self, time_step):  # type: ignore[no-untyped-def]
        epoch[0] += 1
        e = epoch[0]
        if e == p.get("onset"):
            if label == "killed":
                die()
            if label == "nan":
                est.coefs_[0][0, 0] = np.nan
        m = 0.0 if label == "frozen" and e >= p["onset"] else lr_mult(p, e, label, p["epochs"])
        if isinstance(self, so.AdamOptimizer):
            self.learning_rate_init = p["lr"] * m
        else:
            self.learning_rate = p["lr"] * m

    so.AdamOptimizer.iteration_ends = iteration_ends
    so.SGDOptimizer.iteration_ends = iteration_ends
    try:
        est.fit(x, y)
    except ValueError as e:  # sklearn refuses non-finite weights: the run stops with its error
        print(f"ValueError: {e}", flush=True)


# ---------------------------------------------------------------------------------------------------- LightGBM
def run_lightgbm(p: dict, label: str, out: str) -> None:
    import lightgbm as lgb
    import numpy as np

    x, y = toy(p, p["n"], 0)
    xv, yv = toy(p, 256, 1)
    rounds = p["rounds"]
    params = {"objective": "regression", "learning_rate": p["lr"], "num_leaves": p["leaves"], "verbose": -1,
              "seed": p["seed"], "num_threads": 1, "min_data_in_leaf": p.get("min_leaf", 20),
              "bagging_fraction": p.get("bagging", 1.0), "bagging_freq": 1 if p.get("bagging", 1.0) < 1 else 0}

    def fault(env) -> None:  # type: ignore[no-untyped-def]
        if label == "killed" and env.iteration == p["onset"]:
            die()

    dtrain = lgb.Dataset(x, y, free_raw_data=False)
    dval = dtrain if label == "eval-on-train" else lgb.Dataset(xv, yv, reference=dtrain)
    cbs = [lgb.log_evaluation(p["log_every"]), fault,
           lgb.reset_parameter(learning_rate=lambda i: p["lr"] * lr_mult(p, i, label, rounds))]
    if p.get("early_stop"):
        cbs.append(lgb.early_stopping(p["early_stop"], verbose=True))
    sets, names = [dtrain, dval], ["training", "valid_1"]
    if label == "overfit":
        # from the onset the booster keeps growing on a few noisy examples (init_model continues the numbering)
        b = lgb.train(params, dtrain, p["onset"], valid_sets=sets, valid_names=names, callbacks=cbs,
                      keep_training_booster=True)
        rng = np.random.default_rng(p["seed"])
        xs, ys = x[:40], y[:40] + p.get("label_noise", 2.0) * rng.normal(size=40).astype("float32")
        d2 = lgb.Dataset(xs, ys, free_raw_data=False)
        lgb.train(dict(params, min_data_in_leaf=1, num_leaves=31), d2, rounds - p["onset"],
                  valid_sets=[d2, lgb.Dataset(xv, yv, reference=d2)], valid_names=names, init_model=b, callbacks=cbs)
        return
    lgb.train(params, dtrain, rounds, valid_sets=sets, valid_names=names, callbacks=cbs)


# -------------------------------------------------------------------------------------------------------- RL
def run_rl(p: dict, label: str, out: str) -> dict:
    """REINFORCE with a baseline on gymnasium's CartPole: per-update JSONL and a print line, as RL loops log."""
    import gymnasium as gym
    import torch
    from torch import nn

    torch.manual_seed(p["seed"])
    env = gym.make("CartPole-v1")
    pol = nn.Sequential(nn.Linear(4, p.get("hidden", 32)), nn.Tanh(), nn.Linear(p.get("hidden", 32), 2))
    opt = torch.optim.Adam(pol.parameters(), lr=p["lr"])
    updates = p["updates"]
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: lr_mult(p, s, label, updates))
    lines = Lines("metrics.jsonl")
    t0 = time.time()
    for u in range(updates):
        if u == p.get("onset"):
            if label == "killed":
                die()
            if label == "nan":
                poison(pol)
            if label == "frozen":
                freeze(pol)
        logps, rets, ents = [], [], []
        total = 0.0
        for ep in range(p["episodes"]):
            obs, _ = env.reset(seed=p["seed"] * 10007 + u * 31 + ep)
            rewards = []
            for _ in range(100):
                logits = pol(torch.tensor(obs, dtype=torch.float32))
                if not torch.isfinite(logits).all():
                    logits = torch.zeros(2)  # a NaN policy acts at random; its loss below stays NaN
                    logits = logits + next(iter(pol.parameters())).view(-1)[0] * 0
                d = torch.distributions.Categorical(logits=torch.nan_to_num(logits))
                a = d.sample()
                logps.append(d.log_prob(a) + 0 * logits.sum())
                ents.append(d.entropy())
                obs, r, term, trunc, _ = env.step(int(a))
                rewards.append(r)
                if term or trunc:
                    break
            g, disc = 0.0, []
            for r in reversed(rewards):
                g = r + p["gamma"] * g
                disc.append(g)
            rets.extend(reversed(disc))
            total += sum(rewards)
        ret = torch.tensor(rets)
        adv = (ret - ret.mean()) / (ret.std() + 1e-8)
        loss = -(torch.stack(logps) * adv).mean() - 0.01 * torch.stack(ents).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        lr = opt.param_groups[0]["lr"]
        sched.step()
        reward = total / p["episodes"]
        if (u + 1) % p["log_every"] == 0:
            rec = {"step": u + 1, "episode_reward": round(reward, 2), "policy_loss": float(loss.item()),
                   "entropy": float(torch.stack(ents).mean().item()), "lr": lr,
                   "time": round((time.time() - t0) / p["log_every"], 4)}  # seconds per update (mmengine's key)
            t0 = time.time()
            lines.write(u + 1, json.dumps(rec))
            print(f"update {u + 1}/{updates} reward {reward:.1f} policy_loss {loss.item():.4f}", flush=True)
    return {"first_at": lines.first_at}


RUNNERS = {"hf": run_hf, "lightning": run_lightning, "keras": run_keras, "torch": run_torch,
           "sklearn": run_sklearn, "lightgbm": run_lightgbm, "rl": run_rl}


# --------------------------------------------------------------------------------------- onset: where it shows
def tf_records(path: str):  # type: ignore[no-untyped-def]
    """(record index, step, tags) of a TFRecord event file, decoded with tensorboard's protobuf."""
    import struct

    from tensorboard.compat.proto import event_pb2

    with open(path, "rb") as f:
        data = f.read()
    pos = i = 0
    while pos + 12 <= len(data):
        (n,) = struct.unpack("<Q", data[pos:pos + 8])
        body = data[pos + 12:pos + 12 + n]
        if len(body) < n:
            break
        ev = event_pb2.Event.FromString(body)
        yield i, ev.step, [v.tag for v in ev.summary.value]
        pos += 12 + n + 4
        i += 1


def _lines(path: str) -> list[str]:
    with open(path, errors="replace") as f:
        return f.read().split("\n")


def onset_location(fw: str, out: str, label: str, p: dict, extra: dict) -> dict | None:
    """The first place in the run's logs where its fault shows: {step, file, line} (or record)."""
    if label == "healthy":
        return None
    step = p.get("onset")
    if label == "eval-on-train":
        step = p.get("eval_every", 1) if fw not in ("keras", "lightgbm") else 0
    if label == "killed":
        step = p["onset"]
    files = []
    for dp, _d, fs in os.walk(out):
        files += [os.path.relpath(os.path.join(dp, f), out) for f in fs]
    files.sort()
    loc: dict = {"step": step}

    def first_line(name: str, pat: str, group_to_step=int, shift: int = 0) -> None:
        rx = re.compile(pat)
        last = None
        for n, line in enumerate(_lines(os.path.join(out, name)), 1):
            m = rx.search(line)
            if m:
                last = n
                if group_to_step(m.group(1)) + shift >= step:
                    loc.update(file=name, line=n)
                    return
        if label == "killed" and last is not None:  # a killed run shows at its last line
            loc.update(file=name, line=last)

    if label == "killed" and extra.get("first_at") is None:
        # the child was killed before it could report its lines: its own log ends where it died
        for name in ("metrics.jsonl", "metrics.csv", "train.log"):
            path = os.path.join(out, name)
            if name in files and os.path.getsize(path):
                n = len(_lines(path))
                loc.update(file=name, line=n - 1 if _lines(path)[-1] == "" else n)
                return loc
    if extra.get("first_at") is not None:
        name = "metrics.jsonl" if "metrics.jsonl" in files else "metrics.csv"
        hits = sorted(s for s in extra["first_at"] if int(s) >= step)
        if hits:
            loc.update(file=name, line=extra["first_at"][hits[0]])
        elif extra["first_at"]:
            loc.update(file=name, line=max(extra["first_at"].values()))
        return loc
    if fw == "hf":
        # HF's printed dicts carry no step: the k-th train-loss dict is step k * logging_steps
        key = "'eval_loss'" if label == "eval-on-train" else "'loss'"
        every = p["eval_every"] if label == "eval-on-train" else p["log_every"]
        k = 0
        last = None
        for n, line in enumerate(_lines(os.path.join(out, "train.log")), 1):
            if line.startswith("{") and key in line:
                k += 1
                last = n
                if k * every >= step and label != "resume-nosched":
                    loc.update(file="train.log", line=n)
                    return loc
            if label == "resume-nosched" and line.startswith("simulated crash"):
                loc.update(file="train.log", line=n + 1)
                return loc
        if last is not None:
            loc.update(file="train.log", line=last)
        return loc
    if fw == "lightning":
        csvs = [f for f in files if f.endswith("metrics.csv")]
        evs = [f for f in files if "tfevents" in f]
        if csvs:
            head = _lines(os.path.join(out, csvs[0]))[0].split(",")
            col = head.index("step") if "step" in head else -1
            want = "val_loss" if label == "eval-on-train" else None
            wcol = head.index(want) if want in head else -1
            last = None
            for n, line in enumerate(_lines(os.path.join(out, csvs[0]))[1:], 2):
                cells = line.split(",")
                if len(cells) <= col or not cells[col]:
                    continue
                last = n
                if int(cells[col]) + 1 >= step and (wcol < 0 or cells[wcol]):
                    loc.update(file=csvs[0], line=n)
                    return loc
            if last is not None:
                loc.update(file=csvs[0], line=last)
        elif evs:
            last = None
            for i, s, tags in tf_records(os.path.join(out, evs[0])):
                if not tags:
                    continue
                last = i
                if s + 1 >= step and (label != "eval-on-train" or "val_loss" in tags):
                    loc.update(file=evs[0], record=i)
                    return loc
            if last is not None:
                loc.update(file=evs[0], record=last)
        return loc
    if fw == "torch" and any("tfevents" in f for f in files):
        ev = next(f for f in files if "tfevents" in f)
        last = None
        for i, s, tags in tf_records(os.path.join(out, ev)):
            if not tags:
                continue
            last = i
            if s >= step:
                loc.update(file=ev, record=i)
                return loc
        if last is not None:
            loc.update(file=ev, record=last)
        return loc
    if fw == "torch":
        first_line("train.log", r"^step (\d+)/")
    elif fw == "keras":
        if "training.log" in files:
            first_line("training.log", r"^(\d+),")
        else:
            first_line("train.log", r"^Epoch (\d+)/", shift=-1)
    elif fw == "sklearn":
        first_line("train.log", r"^Iteration (\d+),", shift=-1)
    elif fw == "lightgbm":
        first_line("train.log", r"^\[(\d+)\]", shift=-1)
    return loc


PREIMPORT = {"hf": ["transformers.trainer", "transformers.training_args"], "lightning": ["lightning.pytorch"],
             "keras": ["keras"], "sklearn": ["sklearn.neural_network"], "lightgbm": ["lightgbm"],
             "rl": ["gymnasium", "gymnasium.envs.classic_control"], "torch": ["torch.utils.tensorboard"]}


def clean(out: str) -> None:
    """Drop what is not the run's record: checkpoints, model files, HF's saved args."""
    for name in os.listdir(out):
        path = os.path.join(out, name)
        if os.path.isdir(path) and name.startswith("checkpoint-"):
            shutil.rmtree(path)
        elif name in ("training_args.bin", "resumed", "model.safetensors", "config.json"):
            os.remove(path)
    for dp, _d, fs in os.walk(out):
        for f in fs:
            if f.endswith((".ckpt", ".pt", ".safetensors", ".bin")) or f == "hparams.yaml":
                os.remove(os.path.join(dp, f))


def one(fw: str, spec: dict, labels_dir: str) -> None:
    out = spec["dir"]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    p, label = spec["params"], spec["label"]
    rfd, wfd = os.pipe()
    t0 = time.time()
    pid = os.fork()
    if pid == 0:  # the run
        os.close(rfd)
        os.chdir(out)
        fd = os.open("train.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115 (the child's own stdout)
        sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
        rc = 0
        extra: dict = {}
        try:
            extra = RUNNERS[fw](p, label, out) or {}
        except SystemExit as e:
            rc = int(e.code) if isinstance(e.code, int) else 1
        except BaseException:  # a run that crashes (a NaN refused by the library) is a run: its traceback stays
            import traceback

            traceback.print_exc()
            rc = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os.write(wfd, json.dumps(extra).encode())
        os.close(wfd)
        os._exit(rc)
    os.close(wfd)
    chunks = []
    while True:
        b = os.read(rfd, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(rfd)
    _, status = os.waitpid(pid, 0)
    extra = json.loads(b"".join(chunks) or b"{}")
    if "first_at" in extra:
        extra["first_at"] = {int(k): v for k, v in extra["first_at"].items()}
    clean(out)
    rec = {"id": spec["id"], "framework": fw, "label": label, "params": p,
           "onset": onset_location(fw, out, label, p, extra),
           "exit": os.waitstatus_to_exitcode(status), "seconds": round(time.time() - t0, 2)}
    os.makedirs(labels_dir, exist_ok=True)
    tmp = os.path.join(labels_dir, spec["id"] + ".json.tmp")
    with open(tmp, "w") as f:
        json.dump(rec, f, indent=1, sort_keys=True)
    os.replace(tmp, os.path.join(labels_dir, spec["id"] + ".json"))
    print(f"{spec['id']}: exit {rec['exit']}, {rec['seconds']} s", flush=True)


def main() -> None:
    fw, specs_path, labels_dir = sys.argv[1], sys.argv[2], sys.argv[3]
    os.environ.update(PYTHONHASHSEED="0", OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
                      TOKENIZERS_PARALLELISM="false", KERAS_BACKEND="torch", TF_CPP_MIN_LOG_LEVEL="2")
    with open(specs_path) as f:
        specs = json.load(f)
    if fw in ("hf", "lightning", "torch", "rl", "keras"):
        import torch

        torch.set_num_threads(1)
        torch.set_num_interop_threads(1)
    import importlib

    for mod in PREIMPORT[fw]:  # paid once here, not once per run
        importlib.import_module(mod)
    if fw in ("hf", "lightning", "torch", "rl"):
        # the first optimizer made imports torch._dynamo (seconds): in the parent, so no fork pays it again
        w = torch.zeros(1, requires_grad=True)
        for opt in (torch.optim.AdamW([w]), torch.optim.SGD([w], lr=0.1), torch.optim.Adam([w])):
            torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
    for spec in specs:
        one(fw, spec, labels_dir)


if __name__ == "__main__":
    main()
