"""What the server knows about the logs of a workspace: one incremental reader and one report
per log, judged by the same code as ``trainlint check``. No LSP types here.
"""

from __future__ import annotations

import fnmatch
import logging
import os
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any

from .. import config as config_mod
from ..config import Config
from ..core.findings import Level
from ..core.model import LogFile, Series
from ..core.report import Report
from ..discovery import NOT_LOGS, SKIP_DIRS, dataset_reason, is_candidate, within
from ..judge import READ_ERRORS, compare_paths, judge_log, judge_path, read_failure
from ..preflight import is_eval_file, preflight
from ..readers import Source, detect, open_source
from ..readers.stores import store_run_of
from ..readers.tfevents import SPLITS, is_event_file, split_dirs
from ..runs import Companions, collect_facts, plan, run_dir

log = logging.getLogger(__name__)


@dataclass
class Tracked:
    path: str                      # a log file, or a directory of event files
    format: str | None
    source: Source | None = None
    report: Report | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    generation: int = 0
    published: set[str] = field(default_factory=set)   # URIs this log's diagnostics went to
    # series key -> (points checked, lines non-decreasing so far): bisect is exact only on sorted lines
    _ordered: dict[str, tuple[int, bool]] = field(default_factory=dict)

    @property
    def log(self) -> LogFile | None:
        return self.source.log if self.source is not None else None

    def points_at(self, line: int) -> list[tuple[Series, int]]:
        """Every point read from a 1-based line: a binary search per series, no index (a dict of 2M lines was
        rebuilt after each append: 3 s and 557 MB per hover). Checking the order costs only the new points."""
        lg = self.log
        if lg is None:
            return []
        out: list[tuple[Series, int]] = []
        for s in lg.series.values():
            lines = s.lines
            n = len(lines)
            if not n:
                continue
            checked, ordered = self._ordered.get(s.key, (0, True))
            if checked > n:
                checked, ordered = 0, True  # taken back (a rollback or a re-read)
            if ordered and checked < n:
                ordered = all(lines[i - 1] <= lines[i] for i in range(max(1, checked), n))
            self._ordered[s.key] = (n, ordered)
            if ordered:
                j = bisect_left(lines, line)
                while j < n and lines[j] == line:
                    out.append((s, j))
                    j += 1
            else:
                out += [(s, j) for j, ln in enumerate(lines) if ln == line]
        return out


class Workspace:
    """Tracks logs under root folders; ``refresh`` re-reads only what was appended."""

    def __init__(self) -> None:
        self.roots: list[str] = []
        self.tracked: dict[str, Tracked] = {}
        self.select: list[str] = []
        self.ignore: list[str] = []
        self._configs: dict[str, Config] = {}
        self.companions = Companions()
        self._baselines: dict[str, tuple[tuple[str, int], Report]] = {}

    # -- configuration -----------------------------------------------------------------------
    def config_for(self, path: str) -> Config:
        d = path if os.path.isdir(path) else os.path.dirname(path)
        cfg = self._configs.get(d)
        if cfg is None:
            cfg = config_mod.for_path(path, self.root_of(path))
            self._configs[d] = cfg
        if self.select or self.ignore:
            cfg = Config(cfg.roles, cfg.thresholds, self.select or cfg.select, cfg.ignore + self.ignore,
                         cfg.baseline, cfg.source, cfg.errors, cfg.formats, cfg.datasets, cfg.dataset_options,
                         cfg.placed)
        return cfg

    def configs(self) -> list[Config]:
        return list(self._configs.values())

    def root_of(self, path: str) -> str | None:
        """The workspace folder holding ``path``: configurations are looked for up to it, never above."""
        p = os.path.abspath(path)
        inside = [r for r in self.roots if p == r or p.startswith(r.rstrip(os.sep) + os.sep)]
        return max(inside, key=len) if inside else None

    def inside(self, path: str) -> bool:
        """Whether ``path`` lies in a workspace folder once links are resolved (its own name may be a file
        link: discovery reads those). A folder link is never entered, by the watcher or by a scan."""
        real = os.path.realpath(os.path.dirname(os.path.abspath(path)))
        return any(within(real, r) for r in self.roots)

    def config_errors(self) -> list[str]:
        out: list[str] = []
        for cfg in self._configs.values():
            out.extend(f"{cfg.source}: {e}" for e in cfg.errors if cfg.source)
        return sorted(set(out))

    def forget_configs(self) -> None:
        self._configs.clear()

    # -- discovery ---------------------------------------------------------------------------
    def discover(self, root: str) -> list[str]:
        """Logs under root that are not tracked yet (they are added, not judged)."""
        p = plan(root, self.config_for(root))
        new = []
        for item in p.items:
            if item.path not in self.tracked:
                self.tracked[item.path] = Tracked(item.path, item.format, facts=item.facts)
                new.append(item.path)
        return new

    def tracked_under(self, folder: str) -> list[str]:
        prefix = os.path.abspath(folder).rstrip(os.sep) + os.sep
        return [p for p in self.tracked if p.startswith(prefix)]

    def logs_of_run(self, path: str) -> list[str]:
        """The tracked logs whose run directory holds ``path`` (a checkpoint, say)."""
        rd = os.path.dirname(os.path.abspath(path))
        return [p for p in self.tracked if run_dir(os.path.abspath(p)) == rd]

    def unit_for(self, path: str) -> str:
        """The tracked unit a changed path belongs to (an event file's unit is its directory)."""
        if path.endswith("-wal") and path[:-4] in self.tracked:  # an SQLite database's WAL: a WAL writer's writes
            return path[:-4]
        if is_event_file(path):
            d = os.path.dirname(path)
            parent = os.path.dirname(d)
            return parent if os.path.basename(d) in SPLITS and split_dirs(parent) else d
        run = store_run_of(path)
        return run if run is not None else path

    def is_candidate(self, path: str) -> bool:
        if store_run_of(path) is not None or (path.endswith("-wal") and path[:-4] in self.tracked):
            return True
        parts = set(path.split(os.sep))
        if parts & SKIP_DIRS or any(p.startswith(".") and p not in (".", "..") for p in path.split(os.sep)[1:-1]):
            return False
        name = os.path.basename(path)
        if is_event_file(name):
            return True
        return name not in NOT_LOGS and is_candidate(name)

    def track(self, path: str) -> Tracked | None:
        """Track one path (opened in the editor, or new on disk) if it is a training log."""
        unit = self.unit_for(path)
        t = self.tracked.get(unit)
        if t is not None:
            return t
        if dataset_reason(unit, self.config_for(unit)) is not None:
            t = self.tracked[unit] = Tracked(unit, "dataset")
            return t
        try:
            d = detect(unit)
        except OSError:
            return None
        if d.format is None:
            return None
        t = self.tracked[unit] = Tracked(unit, d.format)
        return t

    def forget(self, path: str) -> list[Tracked]:
        """Stop tracking path and everything under it; return what was dropped."""
        gone = [t for p, t in self.tracked.items() if p == path or p.startswith(path.rstrip(os.sep) + os.sep)]
        for t in gone:
            del self.tracked[t.path]
        return gone

    # -- judging -----------------------------------------------------------------------------
    def refresh(self, path: str, budget: int | None = None) -> bool:
        """Read what changed in a tracked log (at most about ``budget`` bytes: the log's ``source.behind`` then
        says what is left) and, once it is read to its end, judge it again. True when the report changed."""
        t = self.tracked[path]
        cfg = self.config_for(path)
        if t.format == "dataset":
            return self._refresh_dataset(t, cfg)
        try:
            if t.source is None:
                t.source = open_source(path, t.format, cfg.roles, cfg.format_for(path))
            changed = t.source.update(budget)
        except FileNotFoundError:
            raise
        except READ_ERRORS as e:
            if not isinstance(e, OSError):  # the reader's state is not to be trusted: open it afresh next time
                t.source = None
            t.report = read_failure(path, t.format, e)
            t.generation += 1
            return True
        if t.source.behind or (not changed and t.report is not None):
            return False  # a prefix is not the run: judged once read to the end
        facts = collect_facts(path, t.source.log, t.facts, self.companions)
        t.report = judge_log(t.source.log, cfg, facts)
        base = self.baseline_for(path, cfg)
        if base is not None and os.path.abspath(base) != os.path.abspath(path):
            t.report.findings.extend(f for f in compare_paths(self._baseline_report(base, cfg), t.report, cfg).findings
                                     if f.level != Level.PASS)
            t.report.baseline = base
        t.generation += 1
        return True

    def release(self, path: str) -> None:
        """Drop what a stopped log keeps for judging it again (its reader and every decoded point, its
        companions' readers); its report stays for diagnostics. The next change, or a request that needs the
        points (hover, a pull), reads it again: memory for the runs nobody is watching is their findings."""
        t = self.tracked.get(path)
        if t is None or t.source is None or t.format == "dataset":
            return
        t.source = None
        if t.report is not None:
            t.report.log = None
        t._ordered.clear()
        for companion in [*t.facts.get("snapshots", []), *t.facts.get("event_dirs", [])]:
            self.companions.forget(companion)

    def _refresh_dataset(self, t: Tracked, cfg: Config) -> bool:
        """Lint a dataset again when it changed (a whole streamed pass: a dataset is rewritten, not appended to).
        An evaluation file is linted with the training files of its folder, for leakage."""
        try:
            st = os.stat(t.path)
        except FileNotFoundError:
            raise
        except OSError as e:
            t.report = read_failure(t.path, t.format, e)
            t.generation += 1
            return True
        stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
        if t.report is not None and t.facts.get("stamp") == stamp:
            return False
        t.facts["stamp"] = stamp
        opts = cfg.dataset_options
        tokenizer = opts.get("tokenizer")
        if tokenizer and cfg.source and not os.path.isabs(tokenizer):
            tokenizer = os.path.join(os.path.dirname(os.path.abspath(cfg.source)), tokenizer)
        trains = []
        if is_eval_file(t.path):
            folder = os.path.dirname(t.path)
            trains = [p for p, o in self.tracked.items() if o.format == "dataset" and os.path.dirname(p) == folder
                      and not is_eval_file(p)]
        reports = preflight([*trains, t.path], tokenizer, opts.get("max_len"), opts.get("text_field"),
                            opts.get("chat_field"), thresholds=cfg.thresholds)
        t.report = reports[-1]
        t.generation += 1
        return True

    def baseline_for(self, path: str, cfg: Config) -> str | None:
        """The baseline log ``baseline:`` in .trainlint.yaml names for this run (globs relative to the file)."""
        if not cfg.baseline or not cfg.source:
            return None
        root = os.path.dirname(os.path.abspath(cfg.source))
        rel = os.path.relpath(os.path.abspath(path), root)
        for pattern, base in cfg.baseline.items():
            if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(rel, pattern.rstrip("/") + "/*"):
                return base if os.path.isabs(base) else os.path.join(root, base)
        return None

    def _baseline_report(self, base: str, cfg: Config) -> Report:
        try:
            key = (base, os.stat(base).st_mtime_ns)
        except OSError:
            key = (base, -1)
        hit = self._baselines.get(base)
        if hit is None or hit[0] != key:
            hit = self._baselines[base] = (key, judge_path(base, cfg))
        return hit[1]

    def by_file(self, path: str) -> Tracked | None:
        """The tracked log that holds this file (a member event file maps to its directory)."""
        t = self.tracked.get(path)
        if t is not None:
            return t
        return self.tracked.get(self.unit_for(path)) if is_event_file(path) else None
