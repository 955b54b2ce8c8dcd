"""Experiment stores that keep one metric per file, one point per line: MLflow's file store and DVCLive.

A run is a directory (``mlruns/<experiment>/<run>/`` with ``meta.yaml`` and ``metrics/``; a DVCLive folder with
``plots/metrics/``); each metric file is a member read from where it was left, and each point keeps its file
and line, so a finding lands on the line of the metric file that holds the value.

- MLflow: ``metrics/<key>`` (no suffix; ``/`` in a key is a folder), lines ``<timestamp ms> <value> <step>``;
  ``meta.yaml`` gives the run's status (1 running, 3 finished, 4 failed, 5 killed) and its lifecycle stage.
- DVCLive: ``plots/metrics/**/<name>.tsv`` with a header (``step<TAB><name>[<TAB>timestamp]``).
"""

from __future__ import annotations

import os

from ..core import fsio
from ..core.fsio import open_regular
from ..core.model import NUMBER_RE, Locator, LogFile, parse_number
from ..core.roles import RoleMap
from .base import MAX_LINE, SeriesOnly, Source
from .registry import Detection, FormatSpec

MLFLOW_STATUS = {1: "running", 2: "scheduled", 3: "finished", 4: "failed", 5: "killed"}
_MLFLOW_LINE = Locator.compile(r"^\S+ (?P<v>" + NUMBER_RE + r") ")
MAX_META = 1 << 16


def store_kind(path: str) -> str | None:
    """'mlflow' or 'dvclive' for a run directory of that store, else None."""
    if os.path.isfile(os.path.join(path, "meta.yaml")) and os.path.isdir(os.path.join(path, "metrics")):
        return "mlflow"
    if os.path.isdir(os.path.join(path, "plots", "metrics")):
        return "dvclive"
    return None


def store_run_of(path: str) -> str | None:
    """The store run a metric file belongs to (``…/<run>/metrics/loss`` -> ``…/<run>``), or None."""
    parts = path.split(os.sep)
    for depth in range(2, min(len(parts), 8)):
        head, tail = os.sep.join(parts[:-depth]), parts[-depth:]
        if tail[0] == "metrics" and (os.path.isfile(os.path.join(head, "meta.yaml"))
                                     or (len(parts) > depth + 1 and parts[-depth - 1] == "plots")):
            return head if tail[0] == "metrics" and os.path.isfile(os.path.join(head, "meta.yaml")) else \
                os.path.dirname(head)
    return None


def mlflow_meta(path: str) -> dict:
    """The run's meta.yaml (safe_load, bounded); {} when unreadable."""
    import yaml

    try:
        with open_regular(os.path.join(path, "meta.yaml")) as f:
            data = yaml.safe_load(f.read(MAX_META))
    except (OSError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


class StoreTail(Source):
    """Reads every metric file of one store run from where it was left."""

    def __init__(self, path: str, kind: str, roles: RoleMap | None = None) -> None:
        self.path, self.kind = path, kind
        self.log = LogFile(path=path, format=kind)
        self.reader = SeriesOnly(self.log, roles)
        self.offsets: dict[str, tuple[int, int, int]] = {}   # member -> (byte offset, next line, inode)
        self.columns: dict[str, tuple[int, int]] = {}         # dvclive member -> (step column, value column)

    def _members(self) -> list[tuple[str, str]]:
        base = os.path.join(self.path, "metrics" if self.kind == "mlflow" else os.path.join("plots", "metrics"))
        out = []
        for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
            dirnames.sort()
            for name in sorted(filenames):
                if self.kind == "dvclive" and not name.endswith(".tsv"):
                    continue
                full = os.path.join(dirpath, name)
                key = os.path.relpath(full, base).replace(os.sep, "/")
                out.append((full, key[:-4] if self.kind == "dvclive" else key))
        return out

    def update(self, budget: int | None = None) -> bool:
        if not os.path.isdir(self.path):
            raise FileNotFoundError(self.path)
        changed = False
        if self.kind == "mlflow":
            meta = mlflow_meta(self.path)
            status = MLFLOW_STATUS.get(meta.get("status"))  # type: ignore[arg-type]
            if status and self.log.facts.get("run_status") != status:
                self.log.facts["run_status"] = status
                changed = True
        for full, key in self._members():
            changed |= self._read(full, key)
        self.log.members = [m for m in self.offsets]
        return changed

    def _read(self, full: str, key: str) -> bool:
        try:
            st = os.stat(full)
        except OSError:
            return False
        offset, next_line, ino = self.offsets.get(full, (0, 1, st.st_ino))
        if ino != st.st_ino or st.st_size < offset:  # replaced or rewritten: read it again from the top
            self.log.series.pop(self.reader.key_for(key), None)
            self.reader.forget_series()
            offset, next_line = 0, 1
        if st.st_size == offset:
            self.offsets[full] = (offset, next_line, st.st_ino)
            return False
        with open_regular(full) as f:
            f.seek(offset)
            data = f.read(min(st.st_size - offset, 64 << 20))
        cut = data.rfind(b"\n") + 1  # complete lines only: a half-written one is read next time
        text = data[:cut].decode("utf-8", "replace")
        for line in text.split("\n")[:-1]:
            if len(line) <= MAX_LINE:
                self._point(full, key, line.rstrip("\r"), next_line)
            next_line += 1
        self.offsets[full] = (offset + cut, next_line, st.st_ino)
        return cut > 0

    def _point(self, full: str, key: str, line: str, n: int) -> None:
        parts = line.split("\t") if self.kind == "dvclive" else line.split(" ")
        if self.kind == "dvclive":
            if n == 1:
                names = [p.strip() for p in parts]
                step_col = names.index("step") if "step" in names else -1
                value_col = next((i for i, p in enumerate(names) if p not in ("step", "timestamp")), -1)
                self.columns[full] = (step_col, value_col)
                return
            step_col, value_col = self.columns.get(full, (0, 1))
            if step_col < 0 or value_col < 0 or len(parts) <= max(step_col, value_col):
                return
            raw_step, raw_value = parts[step_col], parts[value_col]
            locator = Locator.compile(r"^" + r"[^\t]*\t" * value_col + r"(?P<v>" + NUMBER_RE + r")")
        else:
            if len(parts) < 3:
                return
            raw_value, raw_step = parts[1], parts[2]
            locator = _MLFLOW_LINE
        try:
            value, step = parse_number(raw_value), float(raw_step)
        except ValueError:
            return
        s = self.reader.series(key, locator=locator, member=full)
        s.append(step, value, n)
        self.log.facts["last_step"] = max(step, float(self.log.facts.get("last_step", step)))


def _sniff_mlflow(path: str) -> Detection | None:
    if fsio._remote(path) or store_kind(path) != "mlflow":
        return None
    if mlflow_meta(path).get("lifecycle_stage") == "deleted":
        return Detection(None, "a deleted MLflow run")
    return Detection("mlflow", "an MLflow run folder (meta.yaml and metrics/)")


def _sniff_dvclive(path: str) -> Detection | None:
    if fsio._remote(path) or store_kind(path) != "dvclive":
        return None
    return Detection("dvclive", "a DVCLive folder (plots/metrics/*.tsv)")


FORMATS = (
    FormatSpec("mlflow", "an MLflow file-store run folder (mlruns/<experiment>/<run>/metrics/)",
               open=lambda path, roles=None: StoreTail(path, "mlflow", roles), priority=60, sniff_dir=_sniff_mlflow,
               activation=("**/mlruns/**/meta.yaml",), document=False,
               fuzz_seed="fixtures/live/mlflow-diverge/mlruns/0/*/metrics/train_loss"),
    FormatSpec("dvclive", "a DVCLive folder (dvclive/plots/metrics/*.tsv)",
               open=lambda path, roles=None: StoreTail(path, "dvclive", roles), priority=61, sniff_dir=_sniff_dvclive,
               document=False,
               fuzz_seed="fixtures/live/dvclive-diverge/dvclive/plots/metrics/train_loss.tsv"),
)
