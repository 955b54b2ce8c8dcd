"""``trainlint watch``: the server's judge in a terminal, on logs while their run writes them.

The same incremental readers and rule core as ``check`` and the editor: each change re-reads only what was
appended. Each finding is printed once when it appears and once when it is resolved; a status line says the
verdict, the last step and the points read per second; a log that stops growing gets a stall notice with the
measured idle time. ``--until-fail`` exits 1 at the first FAIL; Ctrl-C exits 0, or 1 when a log FAILs.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, TextIO

from .config import Config
from .judge import READ_ERRORS, Report, judge_log, open_log, read_failure
from .linemap import LineMap, reports_to_lf
from .output.check_text import finding_line, rel
from .readers import Source
from .rules.base import Finding, Level
from .runs import Companions, collect_facts, plan

COLOURS = {Level.FAIL: "\x1b[31m", Level.WARN: "\x1b[33m"}
RESET = "\x1b[0m"


@dataclass
class Watched:
    path: str
    fmt: str
    facts: dict[str, Any] = field(default_factory=dict)
    source: Source | None = None
    report: Report | None = None
    shown: dict[tuple[Any, ...], Finding] = field(default_factory=dict)
    points: int = 0
    grew_at: float = field(default_factory=time.monotonic)
    stalled: bool = False


def _key(f: Finding) -> tuple[Any, ...]:
    return f.id, f.series or "", f.location.path, f.location.line, f.location.record


class Watcher:
    def __init__(self, paths: list[str], cfg: Config, out: TextIO = sys.stdout, as_json: bool = False,
                 stall_s: float = 120.0, line_breaks: str = "lf") -> None:
        self.paths, self.cfg, self.out, self.as_json, self.stall_s = paths, cfg, out, as_json, stall_s
        # lines told as grep -n counts them (a progress bar's `\r` redraws stay on one line), kept per file
        self.line_maps: dict[str, LineMap] | None = {} if line_breaks == "lf" else None
        self.units: dict[str, Watched] = {}
        self.companions = Companions()
        self.colour = out.isatty() and not as_json and not os.environ.get("NO_COLOR")
        self.started = time.monotonic()

    # -- what is watched --------------------------------------------------------------------
    def discover(self) -> None:
        for root in self.paths:
            for item in plan(root, self.cfg).items:
                key = os.path.abspath(item.path)
                if key not in self.units:
                    self.units[key] = Watched(item.path, item.format, dict(item.facts))

    def unit_of(self, changed: str) -> Watched | None:
        changed = os.path.abspath(changed)
        for key, u in self.units.items():
            if changed == key or changed.startswith(key.rstrip(os.sep) + os.sep):
                return u
        return None

    # -- judging ----------------------------------------------------------------------------
    def judge(self, u: Watched) -> bool:
        """Read what was appended and judge again; False when nothing changed (a cheap stat)."""
        try:
            if u.source is None:
                u.source = open_log(u.path, self.cfg, u.fmt)
            if not u.source.update() and u.report is not None:
                return False
        except READ_ERRORS as e:
            if not isinstance(e, OSError):  # the reader's state is not to be trusted: open it afresh next time
                u.source = None
            u.report = read_failure(u.path, u.fmt, e)
            return True
        log = u.source.log
        points = sum(len(s) for s in log.series.values())
        if points > u.points:
            u.grew_at, u.stalled = time.monotonic(), False
        u.points = points
        u.report = judge_log(log, self.cfg, collect_facts(u.path, log, u.facts, self.companions))
        if self.line_maps is not None:
            reports_to_lf([u.report], self.line_maps)
        return True

    def emit(self, u: Watched) -> None:
        """Print each finding of ``u`` that is new since the last time, and each one that went away."""
        rep = u.report
        if rep is None:
            return
        now = {_key(f): f for f in rep.findings if f.level in (Level.FAIL, Level.WARN, Level.NOT_CHECKED)}
        for k, f in now.items():
            if k not in u.shown:
                self._finding("finding", f)
        for k, f in u.shown.items():
            if k not in now:
                self._finding("resolved", f)
        u.shown = now

    def _finding(self, kind: str, f: Finding) -> None:
        if self.as_json:
            self._json({"event": kind, "id": f.id, "level": f.level.value, "path": rel(f.location.path),
                        "line": f.location.line, "record": f.location.record, "evidence": f.evidence.text})
            return
        line = finding_line(f)
        if kind == "resolved":
            line = f"resolved: {line}"
        elif self.colour and f.level in COLOURS:
            line = f"{COLOURS[f.level]}{line}{RESET}"
        print(line, file=self.out, flush=True)

    def _json(self, obj: dict[str, Any]) -> None:
        print(json.dumps(obj, allow_nan=False, default=str), file=self.out, flush=True)

    def verdict(self) -> Level:
        levels = [u.report.verdict for u in self.units.values() if u.report is not None]
        for lv in (Level.FAIL, Level.WARN, Level.PASS):
            if lv in levels:
                return lv
        return Level.NOT_CHECKED

    def status(self) -> None:
        points = sum(u.points for u in self.units.values())
        steps = [u.report.log.facts.get("last_step") for u in self.units.values()
                 if u.report is not None and u.report.log is not None]
        last = max((s for s in steps if isinstance(s, int | float)), default=None)
        rate = points / max(1e-9, time.monotonic() - self.started)
        if self.as_json:
            self._json({"event": "status", "verdict": self.verdict().value, "logs": len(self.units),
                        "last_step": last, "points": points})
            return
        step = f"last step {last:g}" if last is not None else "no step yet"
        # points read from the logs per second of watching: trainlint's reading, not the run's training speed
        print(f"[trainlint] {self.verdict().value}: {len(self.units)} log(s), {step}, {points} points read "
              f"({rate:.0f} points read/s since watching started)", file=self.out, flush=True)

    def stalls(self) -> None:
        now = time.monotonic()
        for u in self.units.values():
            idle = now - u.grew_at
            if not u.stalled and u.points and idle >= self.stall_s:
                u.stalled = True
                if self.as_json:
                    self._json({"event": "stall", "path": rel(u.path), "idle_s": round(idle, 1)})
                else:
                    print(f"[trainlint] {rel(u.path)}: no new point for {idle:.0f} s (measured)", file=self.out,
                          flush=True)


def run(paths: list[str], cfg: Config, until_fail: bool = False, as_json: bool = False,
        stall_s: float = 120.0, out: TextIO = sys.stdout, line_breaks: str = "lf") -> int:
    import watchfiles

    w = Watcher(paths, cfg, out, as_json, stall_s, line_breaks)
    w.discover()
    for u in w.units.values():
        w.judge(u)
        w.emit(u)
    w.status()
    if until_fail and w.verdict() == Level.FAIL:
        return 1
    roots = [p if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)) for p in paths]
    try:
        for changes in watchfiles.watch(*roots, debounce=150, step=50, rust_timeout=1000, yield_on_timeout=True,
                                        raise_interrupt=True):
            for _change, changed in changes:
                if w.unit_of(changed) is None:
                    w.discover()  # a new log in a watched folder
                    break
            # Every unit is asked, not only those named by the events: a stat each, and nothing is missed
            # between the first judgement and the watcher's start (events are hints, the files are the truth).
            touched = [u for u in list(w.units.values()) if w.judge(u)]
            for u in touched:
                w.emit(u)
            if touched:
                w.status()
            w.stalls()
            if until_fail and w.verdict() == Level.FAIL:
                return 1
    except KeyboardInterrupt:
        pass
    return 1 if w.verdict() == Level.FAIL else 0
