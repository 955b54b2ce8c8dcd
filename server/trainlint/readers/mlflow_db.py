"""MLflow's SQLite store (``mlflow.db``, the default since MLflow 3.7): the ``metrics`` table of each run.

The database is never opened in place: its bytes are read (no lock, no journal, nothing written beside it) and
deserialized into an in-memory database. A NaN is stored as 0.0 with ``is_nan`` set; it is read as NaN, or a
diverged run would look like a zero loss. Points carry their row as a record, so findings go on a text view
(one metric row per line), as event files' do.
"""

from __future__ import annotations

import math
import os
import sqlite3

from ..core.fsio import open_regular
from ..core.model import LogFile, Series
from ..core.roles import RoleMap, classify
from .base import SeriesOnly, Source
from .registry import Detection, FormatSpec, Probe

MAX_DB_BYTES = 512 << 20
_QUERY = """
SELECT m.key, m.value, m.timestamp, m.step, m.is_nan, r.name, r.status, r.run_uuid
FROM metrics m JOIN runs r ON m.run_uuid = r.run_uuid
WHERE r.lifecycle_stage IS NULL OR r.lifecycle_stage != 'deleted'
ORDER BY r.start_time, r.run_uuid, m.key, m.step, m.timestamp
"""


def looks_like(head: bytes) -> bool:
    return head.startswith(b"SQLite format 3\x00")


def is_mlflow_db(path: str) -> bool:
    try:
        con = _load(path)
    except (OSError, sqlite3.Error):
        return False
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        return {"metrics", "runs"} <= tables
    except sqlite3.Error:  # SQLite's header on a damaged body
        return False
    finally:
        con.close()


def _load(path: str) -> sqlite3.Connection:
    with open_regular(path) as f:
        data = f.read(MAX_DB_BYTES + 1)
    if len(data) > MAX_DB_BYTES:
        raise OSError(f"larger than {MAX_DB_BYTES >> 20} MB; not read")
    if len(data) < 512 or not looks_like(data):  # (deserializing nothing raises MemoryError)
        raise sqlite3.DatabaseError("not an SQLite database (no SQLite header)")
    con = sqlite3.connect(":memory:")
    try:
        con.deserialize(data)
    except (MemoryError, OverflowError) as e:
        con.close()
        raise sqlite3.DatabaseError(f"not a readable SQLite image ({type(e).__name__})") from e
    return con


class MlflowDbTail(Source):
    """Reads the whole database again when it changes (small: metrics rows only)."""

    def __init__(self, path: str, roles: RoleMap | None = None) -> None:
        self.path = path
        self.log = LogFile(path=path, format="mlflow-db", members=[path])
        self.roles = roles or RoleMap()
        self._stamp: tuple[int, int] | None = None

    def update(self, budget: int | None = None) -> bool:
        st = os.stat(self.path)
        stamp = (st.st_size, st.st_mtime_ns)
        if stamp == self._stamp:
            return False
        try:
            con = _load(self.path)
            rows = con.execute(_QUERY).fetchall()
            con.close()
        except sqlite3.Error as e:  # caught mid-write: keep what was read, try again at the next change
            self.log.problem(f"the database could not be read as a whole ({e}); it is read again when it changes")
            return True
        self._stamp = stamp
        fresh = LogFile(path=self.path, format="mlflow-db", members=[self.path])
        reader = SeriesOnly(fresh, self.roles)
        runs = {r[7] for r in rows}
        for rec, (key, value, ts, step, is_nan, name, status, run_id) in enumerate(rows):
            label = key if len(runs) == 1 else f"{name or run_id[:8]}:{key}"
            s: Series = reader.series(label, classify(key))
            s.append(float(step), math.nan if is_nan else float(value), 0, ts / 1000.0, rec, -1, 0)
            fresh.facts["last_step"] = max(float(step), float(fresh.facts.get("last_step", step)))
            if len(runs) == 1 and status:
                fresh.facts["run_status"] = str(status).lower()
        self.log.__dict__.update(fresh.__dict__)
        return True


def _sniff(p: Probe) -> Detection | None:
    if not p.raw.startswith(b"SQLite format 3\x00"):
        return None
    if is_mlflow_db(p.path):
        return Detection("mlflow-db", "an MLflow SQLite store (metrics and runs tables)")
    return Detection(None, "an SQLite database without MLflow's metrics and runs tables")


FORMAT = FormatSpec(
    "mlflow-db", "an MLflow SQLite store (mlflow.db)", open=MlflowDbTail, priority=10, sniff=_sniff,
    suffixes=(".db",), activation=("**/mlflow.db",), binary=True, document=False,
    fuzz_seed="fixtures/live/mlflow-db-diverge/mlflow.db")
