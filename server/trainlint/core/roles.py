"""What a series measures, decided by the tokens of its name rather than an exact-name table.

``train_loss_step``, ``train/loss``, ``TrainIterStats/loss`` and ``loss`` are all train loss;
``val_loss``, ``eval/loss``, ``EvalStats/avg_loss`` and ``eval_squad_loss`` are held-out loss.
A configured role map replaces the default for the roles it names (it never competes with it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from .model import Aggregation, Role, Series

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[^a-z0-9]+")

EVAL_TOKENS = {"eval", "evaluation", "val", "valid", "validation", "test", "heldout", "dev", "tel"}
TRAIN_TOKENS = {"train", "training", "trn", "tr", "fit", "trl"}
# Reinforcement-learning objective terms: they grow with the returns by design, so they are not
# judged as a training loss (SAC's critic_loss, PPO's value_loss, DQN's episode MSE).
RL_TOKENS = {"critic", "actor", "alpha", "policy", "value", "q", "td", "entropy", "reward", "episode"}
# Words that qualify a loss without making it a different loss.
NEUTRAL = {
    "avg", "average", "mean", "total", "step", "steps", "epoch", "iter", "iters", "stats", "running",
    "smoothed", "smooth", "ema", "on", "per", "batch", "overall", "global", "value", "all", "reduced",
    "objective", "main", "s", "ep", "lm",
}
LR_NAMES = {("lr",), ("learning", "rate"), ("current", "lr"), ("base", "lr"), ("lr", "scheduler")}
GRAD_NORM_NAMES = {("grad", "norm"), ("gnorm",), ("gradient", "norm"), ("grad", "l2"), ("norm",),
                   ("grad", "l2", "norm"), ("total", "norm"), ("gradnorm",)}
STEP_TIME_NAMES = {("step", "time"), ("seconds", "per", "step"), ("iter", "time"), ("batch", "time"),
                   ("time", "per", "step"), ("step", "time", "s"), ("iteration", "time")}
LOADER_TIME_NAMES = {("loader", "time"), ("data", "time"), ("dataloader", "time"), ("data", "loading", "time"),
                     ("load", "time")}
GPU_UTIL_NAMES = {("gpu", "util"), ("gpu", "utilization"), ("gpu", "util", "percent"), ("gpu",)}


# An event file that started a second run in one folder names that run's series: ``events.out.tfevents.…/loss``.
_RUN_FILE = re.compile(r"(?:^|/)[^/]*tfevents[^/]*/")


def run_of(name: str) -> str:
    """The file that started the series' run when a folder holds several unrelated runs; else ``""``."""
    m = _RUN_FILE.search(name) if "tfevents" in name else None
    return m.group(0).strip("/") if m else ""


def same_run(series: list[Series], name: str) -> list[Series]:
    """The series of ``name``'s run, when the log holds several; all of them otherwise."""
    run = run_of(name)
    return [s for s in series if run_of(s.name) == run] or series


def tokens(name: str) -> list[str]:
    if "tfevents" in name:
        name = _RUN_FILE.sub("/", name)
    return [t for t in _SPLIT.split(_CAMEL.sub("_", name).lower()) if t]


def _strip(tok: list[str], drop: set[str]) -> tuple[str, ...]:
    """Tokens left after dropping ``drop`` and bare indices (loss_0, grad_norm_1, pg0 stay apart)."""
    return tuple(t for t in tok if t not in drop and not t.isdigit())


ADVERSARIAL_TOKENS = {"disc", "discriminator", "gen", "generator", "adv", "adversarial", "gan", "d", "g"}
_INDEXED_LOSS = re.compile(r"^loss[_./-]?\d+$", re.I)


def is_adversarial(name: str) -> bool:
    """A GAN term (``loss_disc``, ``loss_gen``, ``d_loss``) or an optimizer-indexed loss (Coqui's ``loss_0``,
    ``loss_1``: discriminator and generator): it does not fall steadily by design, so trend rules skip it."""
    tok = tokens(name)
    return ("loss" in tok and bool(ADVERSARIAL_TOKENS & set(tok))) or bool(_INDEXED_LOSS.match(name.strip()))


def is_plain_loss(name: str) -> bool:
    """``loss``, ``train/loss``, ``val_loss_epoch``: a loss with no qualifier naming a part of it."""
    tok = tokens(name)
    return ("loss" in tok or tok in (["trl"], ["tel"])) and not _strip(
        tok, EVAL_TOKENS | TRAIN_TOKENS | NEUTRAL | {"loss", "nll"})


def quantity(name: str) -> tuple[str, ...]:
    """What a loss measures, without its split and aggregation words: ``val/box_loss`` and ``train/box_loss``
    are one quantity, ``val/cls_loss`` another; ``loss``, ``eval_loss``, ``trl`` and ``tel`` are all ``loss``."""
    tok = ["loss" if t in ("trl", "tel") else t for t in tokens(name)]
    return tuple(t for t in tok if t not in EVAL_TOKENS | TRAIN_TOKENS | NEUTRAL) or ("loss",)


@dataclass(frozen=True, slots=True)
class Classified:
    role: Role
    aggregation: Aggregation
    component: bool = False


def aggregation_of(tok: list[str], is_eval: bool) -> Aggregation:
    if "epoch" in tok or "ep" in tok:
        return Aggregation.EPOCH
    if is_eval:
        return Aggregation.EVAL
    if "step" in tok or "iter" in tok:
        return Aggregation.STEP
    if {"avg", "running", "smoothed", "ema", "mean"} & set(tok):
        return Aggregation.RUNNING
    return Aggregation.UNSPECIFIED


@lru_cache(maxsize=8192)
def classify(name: str) -> Classified:
    """Default role of a series name."""
    tok = tokens(name)
    if not tok:
        return Classified(Role.OTHER, Aggregation.UNSPECIFIED)
    is_eval = bool(EVAL_TOKENS & set(tok))
    core = _strip(tok, EVAL_TOKENS | TRAIN_TOKENS | {"stats", "avg", "average", "mean", "epoch", "step", "iter"})
    if ("scale" in tok and ("loss" in tok or "grad" in tok or "amp" in tok)) or tok in (["scaler"], ["scale"]):
        # the fp16 loss scale: Megatron's "loss scale", fairseq's loss_scale, a GradScaler's get_scale()
        return Classified(Role.LOSS_SCALE, Aggregation.UNSPECIFIED)
    if "skipped" in tok or ("nan" in tok and {"iterations", "iters", "steps"} & set(tok)):
        # Megatron: "number of skipped iterations", "number of nan iterations" (counts per log interval)
        return Classified(Role.SKIPPED, Aggregation.UNSPECIFIED)
    if ("loss" in tok or "nll" in tok) and RL_TOKENS & set(tok):
        # RL objectives grow with the returns by design
        return Classified(Role.OTHER, Aggregation.UNSPECIFIED)
    if "loss" in tok or tok in (["trl"], ["tel"]) or "nll" in tok:
        rest = _strip(tok, EVAL_TOKENS | TRAIN_TOKENS | NEUTRAL | {"loss", "nll"})
        # eval_squad_loss, train/box_loss: a split word, one qualifier, then "loss" names a loss of its
        # own; loss_cls, d0.loss_cls, avg_loss_text_ce are terms of a total logged beside them.
        qualified = (tok[0] in EVAL_TOKENS | TRAIN_TOKENS) and tok[-1] == "loss" and len(rest) == 1
        role = Role.EVAL_LOSS if is_eval else Role.TRAIN_LOSS
        return Classified(role, aggregation_of(tok, is_eval), bool(rest) and not qualified)
    variants = {
        tuple(tok),
        core,
        _strip(tok, NEUTRAL | TRAIN_TOKENS | {"system", "rank"}),
        _strip(tok, (NEUTRAL - {"step", "iter"}) | TRAIN_TOKENS | {"system", "rank"}),
        _strip(tok, (NEUTRAL - {"step"}) | TRAIN_TOKENS | {"system", "rank"}),
    }
    # lr-AdamW/pg1, lr/pg0, x/lr0: learning rates of parameter groups.
    if tok[0] == "lr" or variants & LR_NAMES or re.fullmatch(r"lr\d*", tok[-1]):
        return Classified(Role.LR, Aggregation.UNSPECIFIED)
    if variants & GRAD_NORM_NAMES:
        return Classified(Role.GRAD_NORM, aggregation_of(tok, False))
    if variants & STEP_TIME_NAMES:
        return Classified(Role.STEP_TIME, aggregation_of([t for t in tok if t not in ("step", "iter")], False))
    if variants & LOADER_TIME_NAMES:
        return Classified(Role.LOADER_TIME, aggregation_of(tok, False))
    if variants & GPU_UTIL_NAMES:
        return Classified(Role.GPU_UTIL, Aggregation.UNSPECIFIED)
    return Classified(Role.OTHER, Aggregation.UNSPECIFIED)


@dataclass
class RoleMap:
    """Default classification plus configured overrides (``roles:`` in .trainlint.yaml).

    ``overrides`` maps a series name (exact, or a glob) to a role. Once any name is mapped to a
    role, that role holds only the mapped names: the defaults for it step aside, visibly.
    """

    overrides: dict[str, Role] = field(default_factory=dict)

    def classify(self, name: str, default: Classified | None = None) -> tuple[Classified, str]:
        base = default or classify(name)
        for pattern, role in self.overrides.items():
            if _match(pattern, name):
                agg = base.aggregation if base.role == role else aggregation_of(tokens(name), role == Role.EVAL_LOSS)
                return Classified(role, agg, False), "config"
        if base.role in set(self.overrides.values()):
            return Classified(Role.OTHER, base.aggregation, base.component), "config-replaced"
        return base, "default"


def _match(pattern: str, name: str) -> bool:
    if any(c in pattern for c in "*?["):
        from fnmatch import fnmatchcase

        return fnmatchcase(name, pattern)
    return pattern == name


ROLE_NAMES = {r.value: r for r in Role} | {
    "train_loss": Role.TRAIN_LOSS, "loss": Role.TRAIN_LOSS, "eval_loss": Role.EVAL_LOSS,
    "val_loss": Role.EVAL_LOSS, "heldout": Role.EVAL_LOSS, "lr": Role.LR, "grad_norm": Role.GRAD_NORM,
    "step_time": Role.STEP_TIME, "loader_time": Role.LOADER_TIME, "gpu_util": Role.GPU_UTIL,
    "loss_scale": Role.LOSS_SCALE,
}


# -- names the general text reader meets (issue 24) ------------------------------------------------------------
# Losses under the names libraries print: XGBoost's train-logloss / valid-rmse, LightGBM's binary_logloss and l2,
# scikit-learn's log_loss. Only the general reader uses these (the other readers' names are judged as before).
LOSS_ALIASES = {"logloss", "mlogloss", "rmse", "mse", "mae", "nll", "l1", "l2", "huber", "xent", "crossentropy",
                "rmsle", "mape", "poisson", "gamma"}
RISING = {"acc", "accuracy", "f1", "f", "fscore", "auc", "aucpr", "score", "reward", "rewards", "rew", "return",
          "returns", "precision", "recall", "map", "bleu", "rouge", "iou", "miou", "dice", "r2", "top1", "top5",
          "ents", "uas", "las", "ndcg", "mrr", "hit", "hits", "success", "win", "correct", "exact", "em", "ap"}
FALLING = {"loss", "error", "err", "nll", "ppl", "perplexity", "wer", "cer", "bpc", "logloss", "mlogloss", "rmse",
           "mse", "mae", "l1", "l2", "huber", "xent", "rmsle", "mape", "merror", "ce", "kl", "distance"}
_EVAL_OWNERS = re.compile(r"^(?:valid|validation|val|eval|test|dev)(?:[_-]?\d+)?(?:'s)?\b", re.I)


def direction(name: str, role: Role | None = None) -> str:
    """Which way a series improves: ``falls`` (losses, errors, perplexity), ``rises`` (accuracy, F-score, AUC,
    rewards, returns), or ``-`` when the name does not say. RL objectives say nothing: they follow the returns."""
    tok = set(tokens(name))
    if role in (Role.TRAIN_LOSS, Role.EVAL_LOSS):
        return "falls"
    if tok & RISING:
        return "rises"
    if "loss" in tok and role == Role.OTHER:
        return "-"  # a loss not judged as one: an RL objective term (PPO's loss follows its value loss)
    if tok & FALLING and not (tok & RL_TOKENS):
        return "falls"
    return "-"


@lru_cache(maxsize=8192)
def classify_metric(name: str, rl: bool = False, weights: bool = False) -> Classified:
    """``classify`` for the names the general text reader meets: ``valid_1's binary_logloss`` and
    ``valid-logloss`` are held-out losses, ``training's l2`` a train loss; in a reinforcement-learning log
    (``rl``: rewards, timesteps or rollouts were logged) a ``loss`` is an objective term (PPO's total loss follows
    the value loss), not a supervised loss. A bare ``norm`` is a gradient norm (llm.c and the nanoGPTs print
    ``norm 1.23``) except in a log that prints the weights' statistics (``weights``: scikit-learn's SGD models,
    ``Norm: 2.28, NNZs: 10, Bias: -0.03``), where it is the norm of the weight vector."""
    base = classify(name)
    tok = tokens(name)
    if weights and tok == ["norm"]:
        return Classified(Role.OTHER, Aggregation.UNSPECIFIED)
    if tok in (["learn"], ["test"], ["train"], ["training"], ["valid"], ["validation"], ["eval"], ["val"]) and not rl:
        # a split's name alone is its loss: CatBoost's "learn: 0.31  test: 0.42", build-nanogpt's "train 3.05"
        return Classified(Role.EVAL_LOSS if tok[0] in EVAL_TOKENS else Role.TRAIN_LOSS,
                          Aggregation.EVAL if tok[0] in EVAL_TOKENS else Aggregation.UNSPECIFIED)
    if tok in (["ms"], ["s"], ["sec"], ["secs"], ["us"], ["time", "ms"], ["step", "ms"], ["iter", "ms"], ["dt", "ms"]):
        return Classified(Role.STEP_TIME, Aggregation.UNSPECIFIED)  # llm.c-style "(48.14 ms | data 0.82 ms)"
    if len(tok) == 2 and tok[0] in ("data", "dataloader", "loader", "load") and tok[1] in ("ms", "s", "time"):
        return Classified(Role.LOADER_TIME, Aggregation.UNSPECIFIED)
    if base.role in (Role.TRAIN_LOSS, Role.EVAL_LOSS):
        if rl:
            return Classified(Role.OTHER, Aggregation.UNSPECIFIED)
        return base
    if base.role != Role.OTHER or not tok:
        return base
    if set(tok) & LOSS_ALIASES and not set(tok) & RL_TOKENS and not set(tok) & RISING and not rl:
        is_eval = bool(EVAL_TOKENS & set(tok)) or bool(_EVAL_OWNERS.match(name.strip()))
        role = Role.EVAL_LOSS if is_eval else Role.TRAIN_LOSS
        rest = [t for t in tok if t not in EVAL_TOKENS | TRAIN_TOKENS | NEUTRAL | LOSS_ALIASES
                and t not in {"binary", "multi", "s"} and not t.isdigit()]
        return Classified(role, aggregation_of(tok, is_eval), bool(rest))
    return base
