"""Alerts from ``trainlint watch``: each new FAIL/WARN, each resolution and each stall, posted once.

``--notify URL`` posts JSON a Slack-compatible incoming webhook accepts (``text``, plus ``blocks`` with the rule,
level, file, line and evidence, plus a ``trainlint`` object with the same facts for a program); ``--notify-command
CMD`` runs CMD (split like a shell would, never run by one) with the alert's JSON on its standard input.

Delivery never holds the watcher back: every destination has its own queue and worker thread, so a webhook that
hangs delays nothing but its own later alerts. Each attempt has a timeout; a failed one (a refused connection, a
timeout, a 5xx or 429 answer) is retried with a growing pause, a 4xx other than 429 is not (retrying the same body
cannot help), and what finally failed is said on stderr once per alert.
"""

from __future__ import annotations

import json
import queue
import shlex
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

ATTEMPTS = 3
BACKOFF_S = 0.5  # pause before the second attempt; doubled before each later one
LEVEL_ICONS = {"FAIL": ":red_circle:", "WARN": ":warning:", "resolved": ":white_check_mark:", "stall": ":hourglass:"}


def payload(alert: dict[str, Any]) -> dict[str, Any]:
    """The JSON body posted for one alert (an ``event`` of finding / resolved / stall / resumed)."""
    ev = alert["event"]
    where = alert.get("path", "")
    if alert.get("line") is not None:
        where += f":{alert['line']}"
    elif alert.get("record") is not None:
        where += f"#record={alert['record']}"
    if ev in ("finding", "resolved"):
        head = f"{alert['id']} [{alert['level']}]" if ev == "finding" else f"resolved: {alert['id']} [{alert['level']}]"
        text = f"trainlint: {head} {where}: {alert['evidence']}"
        icon = LEVEL_ICONS["resolved" if ev == "resolved" else alert["level"]]
        fields = [("Rule", alert["id"]), ("Level", alert["level"]), ("File", alert.get("path", "")),
                  ("Line", str(alert.get("line") if alert.get("line") is not None else "-")),
                  ("Evidence", alert["evidence"])]
    else:
        text = f"trainlint: {where}: {alert['evidence']}"
        icon = LEVEL_ICONS["stall"] if ev == "stall" else LEVEL_ICONS["resolved"]
        fields = [("Event", ev), ("File", alert.get("path", "")), ("Evidence", alert["evidence"])]
    return {
        "text": text,
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": f"{icon} {_mrkdwn(text)}"}},
            {"type": "section", "fields": [{"type": "mrkdwn", "text": f"*{k}*\n{_mrkdwn(v)}"} for k, v in fields]},
        ],
        "trainlint": alert,
    }


def _mrkdwn(s: str) -> str:
    """Slack's mrkdwn escapes exactly these three."""
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class _Destination:
    def __init__(self, name: str, send: Callable[[dict[str, Any]], None], err: Any) -> None:
        self.name, self.send, self.err = name, send, err
        self.q: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.thread = threading.Thread(target=self._work, name=f"trainlint-notify {name}", daemon=True)
        self.thread.start()

    def _work(self) -> None:
        while True:
            alert = self.q.get()
            try:
                if alert is None:
                    return
                self._deliver(alert)
            finally:
                self.q.task_done()

    def _deliver(self, alert: dict[str, Any]) -> None:
        last = ""
        for attempt in range(ATTEMPTS):
            if attempt:
                time.sleep(BACKOFF_S * 2 ** (attempt - 1))
            try:
                self.send(alert)
                return
            except _Permanent as e:
                last = str(e)
                break
            except Exception as e:  # a refused connection, a timeout, a 5xx: tried again
                last = f"{type(e).__name__}: {e}"
        print(f"trainlint: notify {self.name}: not delivered after {attempt + 1} attempt(s) ({last})",
              file=self.err, flush=True)


class _Permanent(Exception):
    """An answer that a retry of the same request cannot change (400, 403, 404…)."""


class Notifier:
    def __init__(self, urls: list[str], commands: list[str], timeout_s: float = 5.0, err: Any = None) -> None:
        self.timeout_s = timeout_s
        err = err or sys.stderr
        self.destinations = [_Destination(u, self._poster(u), err) for u in urls]
        self.destinations += [_Destination(c, self._runner(c), err) for c in commands]

    def __bool__(self) -> bool:
        return bool(self.destinations)

    def alert(self, alert: dict[str, Any]) -> None:
        """Queue ``alert`` for every destination; returns at once."""
        for d in self.destinations:
            d.q.put(alert)

    def close(self, wait_s: float = 3.0) -> None:
        """Give queued alerts up to ``wait_s`` in all to go out (a watcher that exits on a FAIL still says so);
        a destination that hangs is left behind (its thread is a daemon)."""
        deadline = time.monotonic() + wait_s
        for d in self.destinations:
            d.q.put(None)
        for d in self.destinations:
            d.thread.join(max(0.0, deadline - time.monotonic()))

    def _poster(self, url: str) -> Callable[[dict[str, Any]], None]:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"--notify {url!r}: an http:// or https:// URL is needed")

        def post(alert: dict[str, Any]) -> None:
            body = json.dumps(payload(alert), allow_nan=False, default=str).encode()
            req = urllib.request.Request(url, data=body, method="POST",
                                         headers={"Content-Type": "application/json",
                                                  "User-Agent": "trainlint-watch"})
            try:
                with urllib.request.urlopen(req, timeout=self.timeout_s) as r:
                    r.read(1 << 16)
            except urllib.error.HTTPError as e:
                if 400 <= e.code < 500 and e.code != 429:
                    raise _Permanent(f"HTTP {e.code} {e.reason}") from e
                raise

        return post

    def _runner(self, command: str) -> Callable[[dict[str, Any]], None]:
        argv = shlex.split(command)
        if not argv:
            raise ValueError("--notify-command: an empty command")

        def run(alert: dict[str, Any]) -> None:
            r = subprocess.run(argv, input=json.dumps(alert, allow_nan=False, default=str).encode(),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=max(self.timeout_s, 10.0),
                               check=False)
            if r.returncode:
                raise RuntimeError(f"exit code {r.returncode}: {r.stderr.decode('utf-8', 'replace').strip()[:200]}")

        return run
