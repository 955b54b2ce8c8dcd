"""Callbacks that judge a run from inside its training script: HF Trainer (``trainlint.integrations.hf``),
Lightning (``.lightning``) and Keras (``.keras``).

Each takes only the metrics the trainer already logs, feeds them to the same rule core the editor and
``trainlint check`` use, and reports each new finding once. They never touch data loaders, samplers, RNG state,
weights or the optimizer. The framework is imported only in its own module; ``Guardian`` needs none.
"""

from .guardian import Guardian

__all__ = ["Guardian"]
