"""``trainlint watch``: the server's judge in a terminal, on logs while their run writes them.

The same incremental readers and rule core as ``check`` and the editor: each change re-reads only what was
appended. Each finding is printed once when it appears and once when it is resolved; a status line says the
verdict, the last step and the points read per second; a log that stops growing gets a stall notice with the
measured idle time. ``--until-fail`` exits 1 at the first FAIL; Ctrl-C exits 0, or 1 when a log FAILs.
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, TextIO

from .config import Config
from .core.findings import Finding, Level
from .core.linemap import LineMap, reports_to_lf
from .core.remote import is_url
from .core.report import Report
from .judge import READ_ERRORS, judge_log, open_log, read_failure
from .output.check_text import finding_line, rel
from .readers import Source
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
    grew: deque[float] = field(default_factory=lambda: deque(maxlen=33))  # when new points were seen

    def usual_interval(self) -> float | None:
        """The median time between two growths seen by this watcher (None before three)."""
        if len(self.grew) < 3:
            return None
        times = list(self.grew)
        return statistics.median(b - a for a, b in itertools.pairwise(times))


def _key(f: Finding) -> tuple[Any, ...]:
    return f.id, f.series or "", f.location.path, f.location.line, f.location.record


class Watcher:
    def __init__(self, paths: list[str], cfg: Config, out: TextIO = sys.stdout, as_json: bool = False,
                 stall_s: float = 120.0, notifier: Any = None, stall_factor: float = 10.0,
                 line_breaks: str = "lf") -> None:
        self.paths, self.cfg, self.out, self.as_json, self.stall_s = paths, cfg, out, as_json, stall_s
        self.notifier, self.stall_factor = notifier, stall_factor
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
                key = item.path if is_url(item.path) else os.path.abspath(item.path)
                if key not in self.units:
                    self.units[key] = Watched(item.path, item.format, dict(item.facts))

    def unit_of(self, changed: str) -> Watched | None:
        changed = os.path.abspath(changed)
        for key, u in self.units.items():
            if changed == key or changed.startswith(key.rstrip(os.sep) + os.sep):
                return u
        return None

    def _rotated_to(self, u: Watched) -> str | None:
        """Where the file ``u`` was reading went when ``u.path`` now names another file: a sibling whose name
        starts with it (``train.log.1``, ``train.log-20260101``) and that has the file's inode. logrotate and
        RotatingFileHandler rename the log and start a new one: the old one is still part of the run."""
        ident = getattr(u.source, "identity", None)
        if ident is None:
            return None
        try:
            if os.stat(u.path).st_ino == ident[0]:
                return None
        except OSError:
            pass
        folder, base = os.path.split(os.path.abspath(u.path))
        try:
            names = os.listdir(folder)
        except OSError:
            return None
        for name in sorted(names):
            if name != base and name.startswith(base):
                try:
                    st = os.stat(os.path.join(folder, name))
                except OSError:
                    continue
                if (st.st_ino, st.st_dev) == (ident[0], ident[1]):
                    return os.path.join(os.path.dirname(u.path), name)
        return None

    def _follow_rotation(self, u: Watched, rotated: str) -> None:
        """The rotated file keeps the reader (and what it showed) under its new name; ``u`` starts afresh."""
        src = u.source
        assert src is not None
        src.path = rotated  # type: ignore[attr-defined]
        src.log.path = rotated
        old = Watched(rotated, u.fmt, dict(u.facts), source=src, points=u.points, grew_at=u.grew_at)
        self.units[os.path.abspath(rotated)] = old
        if self.as_json:
            self._json({"event": "rotated", "path": rel(u.path), "to": rel(rotated)})
        else:
            print(f"[trainlint] {rel(u.path)} was rotated to {rel(rotated)}: it stays part of the run",
                  file=self.out, flush=True)
        u.source, u.report, u.shown, u.points = None, None, {}, 0
        self.judge(old)
        # What it shows was shown under the old name: the same findings, not new ones (nor resolved ones)
        old.shown = {_key(f): f for f in (old.report.findings if old.report else [])
                     if f.level in (Level.FAIL, Level.WARN, Level.NOT_CHECKED)}

    # -- judging ----------------------------------------------------------------------------
    def judge(self, u: Watched) -> bool:
        """Read what was appended and judge again; False when nothing changed (a cheap stat)."""
        rotated = self._rotated_to(u) if u.source is not None else None
        if rotated is not None:
            self._follow_rotation(u, rotated)
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
            u.grew_at = time.monotonic()
            if u.points:  # the first read is not a growth: it has no interval before it
                u.grew.append(u.grew_at)
            if u.stalled:
                u.stalled = False
                self._alert({"event": "resumed", "path": rel(u.path),
                             "evidence": f"new points again ({points - u.points} since the stall)"})
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

    def _alert(self, alert: dict[str, Any]) -> None:
        if self.notifier:
            self.notifier.alert(alert)

    def _finding(self, kind: str, f: Finding) -> None:
        if f.level in (Level.FAIL, Level.WARN):
            self._alert({"event": kind, "id": f.id, "level": f.level.value, "series": f.series,
                         "path": rel(f.location.path), "line": f.location.line, "record": f.location.record,
                         "evidence": f.evidence.text})
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
            usual = u.usual_interval()
            # stalled: idle for --stall-seconds, or for --stall-factor times the log's usual interval (measured
            # between the growths this watcher saw; at least a second, so a burst of writes is not a rhythm)
            by_rhythm = usual is not None and idle >= max(1.0, self.stall_factor * usual)
            if not u.stalled and u.points and (idle >= self.stall_s or by_rhythm):
                u.stalled = True
                said = f"no new point for {idle:.1f} s"
                if usual is not None:
                    said += f" ({idle / max(usual, 1e-9):.0f}x its usual interval of {usual:.2f} s)"
                alert = {"event": "stall", "path": rel(u.path), "idle_s": round(idle, 1),
                         "usual_interval_s": None if usual is None else round(usual, 3), "evidence": said}
                self._alert(alert)
                if self.as_json:
                    self._json(alert)
                else:
                    print(f"[trainlint] {rel(u.path)}: {said} (measured)", file=self.out, flush=True)


def run(paths: list[str], cfg: Config, until_fail: bool = False, as_json: bool = False,
        stall_s: float = 120.0, out: TextIO = sys.stdout, notify: list[str] | None = None,
        notify_commands: list[str] | None = None, notify_timeout: float = 5.0, stall_factor: float = 10.0,
        poll_s: float = 10.0, line_breaks: str = "lf") -> int:
    notifier = None
    if notify or notify_commands:
        from .notify import Notifier  # start-up: only with --notify

        try:
            notifier = Notifier(notify or [], notify_commands or [], notify_timeout)
        except ValueError as e:
            print(f"trainlint: {e}", file=sys.stderr)
            return 2
    w = Watcher(paths, cfg, out, as_json, stall_s, notifier, stall_factor, line_breaks)
    try:
        return _run(w, until_fail, poll_s)
    except KeyboardInterrupt:
        # Ctrl-C can arrive at any instant, the first judgement and status line included: the watch always ends
        # by the verdict reached so far, never as the CLI's "could not judge".
        return 1 if w.verdict() == Level.FAIL else 0
    finally:
        if notifier is not None:
            notifier.close()


def _step(w: Watcher, until_fail: bool) -> bool:
    """Ask every unit (a stat each: events are hints, the files are the truth); True to stop at a FAIL."""
    touched = [u for u in list(w.units.values()) if w.judge(u)]
    for u in touched:
        w.emit(u)
    if touched:
        w.status()
    w.stalls()
    return until_fail and w.verdict() == Level.FAIL


def _poll(w: Watcher, until_fail: bool, every_s: float) -> int:
    """Remote logs (s3://, gs://, https://…) have no change events: ask every ``every_s`` seconds; each ask is
    one metadata request per log, and a log that grew is read from where it was left (a ranged read)."""
    try:
        while True:
            time.sleep(every_s)
            w.discover()
            if _step(w, until_fail):
                return 1
    except KeyboardInterrupt:
        pass
    return 1 if w.verdict() == Level.FAIL else 0


def _run(w: Watcher, until_fail: bool, poll_s: float = 10.0) -> int:
    import watchfiles  # before the first status line: a Ctrl-C after it lands in the loop's handler

    paths = w.paths
    w.discover()
    for u in w.units.values():
        w.judge(u)
        w.emit(u)
    w.status()
    if until_fail and w.verdict() == Level.FAIL:
        return 1
    if any(is_url(p) for p in paths):
        return _poll(w, until_fail, poll_s)
    roots = [p if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)) for p in paths]
    try:
        for changes in watchfiles.watch(*roots, debounce=150, step=50, rust_timeout=1000, yield_on_timeout=True,
                                        raise_interrupt=True):
            for _change, changed in changes:
                if w.unit_of(changed) is None:
                    w.discover()  # a new log in a watched folder
                    break
            # Every unit is asked, not only those named by the events: nothing is missed between the first
            # judgement and the watcher's start.
            if _step(w, until_fail):
                return 1
    except KeyboardInterrupt:
        pass
    return 1 if w.verdict() == Level.FAIL else 0
