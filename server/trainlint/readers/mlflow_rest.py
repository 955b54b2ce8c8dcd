"""An MLflow tracking server, read over its REST API: ``mlflow:EXPERIMENT`` (every run of the experiment, by name
or id) and ``mlflow:runs/RUN_ID``, at ``MLFLOW_TRACKING_URI`` (``http(s)://…``, the variable MLflow itself reads;
``MLFLOW_TRACKING_TOKEN`` or ``MLFLOW_TRACKING_USERNAME``/``MLFLOW_TRACKING_PASSWORD`` for a server that asks).

Plain HTTP from the standard library, not the mlflow client (hundreds of MB and seconds of import for three
endpoints): ``experiments/get-by-name`` or ``experiments/get``, ``runs/search`` (paged) and
``metrics/get-history`` (paged) per metric. A run is one log, as one run of the SQLite store is: its metrics are
series whose points carry records on the same text view (one metric point per line, keys in order, points by
step then time), so findings are ``mlflow:runs/ID#record=N``. MLflow writes a NaN as ``"NaN"``: read as NaN.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import json
import math
import os
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from ..core.model import LogFile, Series
from ..core.roles import RoleMap, classify
from .base import SeriesOnly, Source

PREFIX = "mlflow:"
HISTORY_PAGE = 25_000   # points per get-history page (the server's own maximum)
SEARCH_PAGE = 1_000     # runs per runs/search page
TIMEOUT_S = 30.0
STATUS = {"RUNNING": "running", "SCHEDULED": "scheduled", "FINISHED": "finished", "FAILED": "failed",
          "KILLED": "killed"}


def is_mlflow_uri(path: str) -> bool:
    return path.startswith(PREFIX)


def tracking_uri() -> str:
    uri = os.environ.get("MLFLOW_TRACKING_URI", "")
    if not uri.startswith(("http://", "https://")):
        raise OSError(errno.EINVAL, "MLFLOW_TRACKING_URI must be the http(s):// address of an MLflow tracking server"
                      + (f" (it is {uri!r})" if uri else " (it is not set)"))
    return uri.rstrip("/")


def _number(v: Any) -> float:
    if isinstance(v, str):
        return {"nan": math.nan, "infinity": math.inf, "-infinity": -math.inf, "inf": math.inf,
                "-inf": -math.inf}.get(v.strip().lower(), math.nan) if not _is_float(v) else float(v)
    return float(v)


def _is_float(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def call(endpoint: str, params: dict[str, Any] | None = None, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """One REST call (GET with ``params``, POST with ``body``); OSError with the reason when it fails."""
    url = f"{tracking_uri()}/api/2.0/mlflow/{endpoint}"
    if params:
        url += "?" + urllib.parse.urlencode(params)
    headers = {"Accept": "application/json", "User-Agent": "trainlint"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    token = os.environ.get("MLFLOW_TRACKING_TOKEN")
    user, password = os.environ.get("MLFLOW_TRACKING_USERNAME"), os.environ.get("MLFLOW_TRACKING_PASSWORD")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    elif user and password:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    req = urllib.request.Request(url, data=data, headers=headers, method="POST" if body is not None else "GET")
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT_S) as r:
            return json.loads(r.read().decode("utf-8") or "{}")
    except urllib.error.HTTPError as e:
        detail = ""
        with contextlib.suppress(ValueError, AttributeError):
            detail = json.loads(e.read().decode("utf-8", "replace")).get("message", "")
        what = f"the tracking server answered {e.code} to {endpoint}" + (f": {detail[:200]}" if detail else "")
        if e.code == 404 or "RESOURCE_DOES_NOT_EXIST" in detail:
            raise FileNotFoundError(errno.ENOENT, what) from e
        if e.code in (401, 403):
            raise PermissionError(errno.EACCES, what) from e
        raise OSError(errno.EIO, what) from e
    except urllib.error.URLError as e:
        raise OSError(errno.EHOSTUNREACH, f"the tracking server at {tracking_uri()} cannot be reached "
                                          f"({e.reason})") from e
    except (TimeoutError, ValueError) as e:
        raise OSError(errno.EIO, f"the tracking server's answer to {endpoint} could not be read ({e})") from e


def experiment_id(name_or_id: str) -> str:
    try:
        return call("experiments/get-by-name", {"experiment_name": name_or_id})["experiment"]["experiment_id"]
    except FileNotFoundError:
        if name_or_id.isdigit():
            return call("experiments/get", {"experiment_id": name_or_id})["experiment"]["experiment_id"]
        raise FileNotFoundError(errno.ENOENT, f"no experiment named {name_or_id!r} on the tracking server") from None


def runs_of(uri: str) -> list[str]:
    """The ``mlflow:runs/ID`` of each live run ``uri`` names (an experiment's, oldest first; or the one run)."""
    what = uri[len(PREFIX):].strip("/")
    if what.startswith("runs/"):
        return [f"{PREFIX}runs/{what[5:]}"]
    exp = experiment_id(what)
    out: list[str] = []
    token = None
    while True:
        body: dict[str, Any] = {"experiment_ids": [exp], "max_results": SEARCH_PAGE, "run_view_type": "ACTIVE_ONLY",
                                "order_by": ["attributes.start_time ASC"]}
        if token:
            body["page_token"] = token
        page = call("runs/search", body=body)
        out += [f"{PREFIX}runs/{r['info']['run_id']}" for r in page.get("runs", [])]
        token = page.get("next_page_token")
        if not token:
            return out


def history(run_id: str, key: str) -> list[dict[str, Any]]:
    points: list[dict[str, Any]] = []
    token = None
    while True:
        params: dict[str, Any] = {"run_id": run_id, "metric_key": key, "max_results": HISTORY_PAGE}
        if token:
            params["page_token"] = token
        page = call("metrics/get-history", params)
        points += page.get("metrics", [])
        token = page.get("next_page_token")
        if not token:
            return points


class MlflowRestTail(Source):
    """One run on a tracking server; every update asks the server again and reads the run anew when its metrics'
    latest points changed (a metadata call otherwise)."""

    def __init__(self, path: str, roles: RoleMap | None = None) -> None:
        self.path = path
        self.run_id = path[len(PREFIX):].strip("/").removeprefix("runs/")
        self.log = LogFile(path=path, format="mlflow-rest", members=[path])
        self.roles = roles or RoleMap()
        self._stamp: Any = None

    def update(self, budget: int | None = None) -> bool:
        run = call("runs/get", {"run_id": self.run_id})["run"]
        info, data = run.get("info", {}), run.get("data", {})
        latest = sorted((m["key"], m.get("step", 0), m.get("timestamp", 0)) for m in data.get("metrics", []))
        stamp = (info.get("status"), tuple(latest))
        if stamp == self._stamp:
            return False
        fresh = LogFile(path=self.path, format="mlflow-rest", members=[self.path])
        reader = SeriesOnly(fresh, self.roles)
        rec = 0
        for key in sorted({k for k, _, _ in latest}):
            pts = sorted(history(self.run_id, key), key=lambda m: (int(m.get("step", 0)), int(m.get("timestamp", 0))))
            s: Series = reader.series(key, classify(key))
            for m in pts:
                step = float(m.get("step", 0))
                s.append(step, _number(m.get("value", "NaN")), 0, int(m.get("timestamp", 0)) / 1000.0, rec, -1, 0)
                fresh.facts["last_step"] = max(step, float(fresh.facts.get("last_step", step)))
                rec += 1
        status = STATUS.get(str(info.get("status", "")).upper())
        if status:
            fresh.facts["run_status"] = status
        if info.get("run_name"):
            fresh.facts["run_name"] = info["run_name"]
        self.log.__dict__.update(fresh.__dict__)
        self._stamp = stamp
        return True
