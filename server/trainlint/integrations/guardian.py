"""The rule core fed in memory with what a trainer logs: each new finding reported once.

The metrics go through the JSON-lines reader, as one object per log call, so a callback judges exactly what
``trainlint check`` judges on the JSONL file it can write beside the run (``jsonl=``), which the editor then shows
too. Nothing here reads or changes the run: it is handed numbers and returns findings.

Nothing here may raise into the training loop (issue 25): a full disk, a JSONL path that cannot be opened, a
numpy or tensor step, a metric whose ``item()`` raises — each is logged once, the JSONL file is no longer written,
and judging goes on in memory. A linter that ends a run it was asked to watch does more harm than the finding.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from typing import TYPE_CHECKING

from ..config import Config, load
from ..core.findings import Finding, Level
from ..core.model import LogFile
from ..judge import judge_log
from ..readers.jsonl import JsonlReader

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

POLICIES = ("warn", "stop")
logger = logging.getLogger("trainlint")


def numeric(metrics: Mapping[str, Any]) -> dict[str, float]:
    """The numbers of a metrics dict (Python numbers, numpy scalars, 0-d tensors), NaN and inf kept: strings,
    booleans and anything with more than one element are not measurements."""
    out: dict[str, float] = {}
    for key, v in metrics.items():
        if isinstance(v, bool | str):
            continue
        if not isinstance(v, int | float):
            numel = getattr(v, "numel", None) or getattr(v, "size", None)
            try:
                if (numel() if callable(numel) else numel) != 1:
                    continue
                v = v.item()
            except Exception:  # a tensor on a dead device, a lazy value that raises: not a measurement, not a crash
                continue
        try:
            out[str(key)] = float(v)
        except (TypeError, ValueError, OverflowError):
            continue
    return out


def _step(step: Any) -> int | float:
    """A step as a JSON number: numpy integers, 0-d arrays and 0-d tensors become Python numbers."""
    if isinstance(step, bool):
        raise TypeError(f"a step is a number, not {step!r}")
    if isinstance(step, int | float):
        return step
    item = getattr(step, "item", None)
    value = item() if callable(item) else step
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return float(value)


class Guardian:
    """Judge a run from the metrics its trainer logs.

    ``observe(step, metrics)`` returns the findings that are new since the last call (FAIL and WARN, each once per
    rule, series and level). ``planned(steps)`` tells it the run's planned length (its live-run guards use it).
    ``policy="stop"`` makes ``should_stop`` true at the first FAIL; the callback then asks the trainer to stop.
    ``jsonl`` (a path) also writes each observation as a JSON line, which ``trainlint check`` and the editor read:
    the same findings, on that file's lines. The file is appended to, never truncated: a second run into the same
    file is a resume, as with ``tee -a``.
    """

    def __init__(self, policy: str = "warn", jsonl: str | os.PathLike[str] | None = None,
                 config: Config | str | os.PathLike[str] | None = None, step_key: str = "step") -> None:
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {', '.join(POLICIES)}, not {policy!r}")
        self.policy = policy
        self.step_key = step_key
        self.path = os.fspath(jsonl) if jsonl is not None else None
        if isinstance(config, Config) or config is None:
            self.config = config or Config()
        else:  # a .trainlint.yaml or pyproject.toml: its errors are raised, not silently ignored
            self.config = load(os.fspath(config))
            if self.config.errors:
                raise ValueError("; ".join(self.config.errors))
        self.log = LogFile(path=self.path or "<trainer>", format="jsonl")
        self.reader = JsonlReader(self.log, self.config.roles)
        self.lines = 0
        self.reported: set[tuple[str, str | None, Level]] = set()  # a WARN that becomes a FAIL is new
        self.first_fail: Finding | None = None
        self._warned: set[str] = set()
        self._out = None
        if self.path:
            try:
                self._out = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - kept open
            except OSError as e:
                self._once("open", f"trainlint: cannot write {self.path} ({e.strerror or e}); the run is judged in "
                           "memory only")

    def _once(self, what: str, message: str) -> None:
        """Log ``message`` the first time ``what`` goes wrong; the training loop never sees an exception."""
        if what not in self._warned:
            self._warned.add(what)
            logger.warning(message)

    def _write(self, text: str) -> None:
        if self._out is None:
            return
        try:
            self._out.write(text + "\n")
            self._out.flush()
        except (OSError, ValueError) as e:  # a full disk, a closed or vanished file: stop writing, keep judging
            self._once("write", f"trainlint: cannot write {self.path} ({getattr(e, 'strerror', None) or e}); it is "
                       "no longer written, the run is still judged in memory")
            out, self._out = self._out, None
            with contextlib.suppress(OSError, ValueError):
                out.close()

    def planned(self, steps: float | None) -> None:
        if steps and steps > 0:
            self.log.facts["max_steps"] = steps

    @property
    def should_stop(self) -> bool:
        return self.policy == "stop" and self.first_fail is not None

    def observe(self, step: Any, metrics: Mapping[str, Any], final: bool = False) -> list[Finding]:
        try:
            values = numeric(metrics)
            if values:
                row = {self.step_key: _step(step), **{k: v for k, v in values.items() if k != self.step_key}}
                text = json.dumps(row, allow_nan=True)
                self.lines += 1
                self._write(text)
                self.reader.scan(text + "\n", self.lines)
        except Exception as e:  # never into the training loop
            self._once("observe", f"trainlint: could not record the metrics of step {step!r} ({e!r}); skipped")
        return self.judge(final)

    def judge(self, final: bool = False) -> list[Finding]:
        """Judge everything observed so far: as a live run (written just now) unless ``final``."""
        age = 3600.0 if final else 0.0
        try:
            rep = judge_log(self.log, self.config, {"age_s": age, "now": time.time()})
        except Exception as e:  # a bug of trainlint's must not end the user's run
            self._once("judge", f"trainlint: judging failed ({e!r}); the run goes on unjudged")
            return []
        new = []
        for f in rep.findings:
            key = (f.id, f.series, f.level)
            if f.level not in (Level.FAIL, Level.WARN) or key in self.reported:
                continue
            self.reported.add(key)
            new.append(f)
            if f.level == Level.FAIL and self.first_fail is None:
                self.first_fail = f
        return new

    def close(self) -> None:
        out, self._out = self._out, None
        if out is not None:
            try:
                out.close()
            except (OSError, ValueError) as e:
                self._once("write", f"trainlint: cannot write {self.path} ({getattr(e, 'strerror', None) or e})")

    @staticmethod
    def describe(f: Finding) -> str:
        return f"trainlint {f.id} [{f.level.value}] {f.evidence.text}"

    def announce(self, findings: list[Finding]) -> None:
        for f in findings:
            (logger.error if f.level == Level.FAIL else logger.warning)(self.describe(f))
        if self.should_stop and self.first_fail in findings:
            logger.error("trainlint: stopping the run at its first FAIL (policy='stop')")
