"""MLflow's SQLite store (``mlflow.db``, the default since MLflow 3.7): the ``metrics`` table of each run.

The database is never opened in place: its bytes are read (no lock, no journal, nothing written beside it) and
deserialized into an in-memory database. A NaN is stored as 0.0 with ``is_nan`` set; it is read as NaN, or a
diverged run would look like a zero loss. Points carry their row as a record, so findings go on a text view
(one metric row per line), as event files' do.

A database in WAL mode (what a live writer uses) keeps its recent pages in ``mlflow.db-wal``, perhaps all of them
until a checkpoint: those bytes are read too and the committed frames applied to the image in memory, as SQLite's
own recovery would (salts and cumulative checksums checked, the last commit frame's size kept). SQLite is never
asked to open the files: it would create ``-shm``, take locks, and might checkpoint.
"""

from __future__ import annotations

import math
import os
import struct
from typing import TYPE_CHECKING

from ..core.fsio import open_regular
from ..core.model import LogFile, Series
from ..core.roles import RoleMap, classify
from .base import SeriesOnly, Source
from .registry import Detection, FormatSpec, Probe

if TYPE_CHECKING:
    import sqlite3

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
    import sqlite3  # start-up: only an MLflow database needs it

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
    import sqlite3  # start-up: only an MLflow database needs it

    with open_regular(path) as f:
        data = f.read(MAX_DB_BYTES + 1)
    if len(data) > MAX_DB_BYTES:
        raise OSError(f"larger than {MAX_DB_BYTES >> 20} MB; not read")
    if len(data) < 512 or not looks_like(data):  # (deserializing nothing raises MemoryError)
        raise sqlite3.DatabaseError("not an SQLite database (no SQLite header)")
    if data[18:20] == b"\x02\x02":  # WAL mode: apply the -wal file's committed frames, then read as rollback mode
        data = _with_wal(data, path + "-wal")
    con = sqlite3.connect(":memory:")
    try:
        con.deserialize(data)
    except (MemoryError, OverflowError) as e:
        con.close()
        raise sqlite3.DatabaseError(f"not a readable SQLite image ({type(e).__name__})") from e
    return con


_WAL_MAGIC = {0x377F0682: "<", 0x377F0683: ">"}  # the checksum's byte order: little- or big-endian words


def _wal_checksum(data: bytes, order: str, s0: int, s1: int) -> tuple[int, int]:
    """SQLite's WAL checksum (cumulative over 32-bit word pairs; https://www.sqlite.org/fileformat.html)."""
    words = struct.unpack(f"{order}{len(data) // 4}I", data)
    it = iter(words)
    for a, b in zip(it, it, strict=True):
        s0 = (s0 + a + s1) & 0xFFFFFFFF
        s1 = (s1 + b + s0) & 0xFFFFFFFF
    return s0, s1


def _with_wal(image: bytes, wal_path: str) -> bytes:
    """The database image with the committed frames of its WAL file applied (the image itself when there is no
    WAL or it holds no valid commit). Only whole transactions: frames after the last valid commit frame are a
    transaction still being written and are left out, as SQLite leaves them out."""
    try:
        with open_regular(wal_path) as f:
            wal = f.read(MAX_DB_BYTES + 1)
    except OSError:  # no -wal file: everything was checkpointed
        return image[:18] + b"\x01\x01" + image[20:]
    if len(wal) > MAX_DB_BYTES:
        raise OSError(f"its WAL file is larger than {MAX_DB_BYTES >> 20} MB; not read")
    out = bytearray(image[:18] + b"\x01\x01" + image[20:])  # file format 1: a rollback-journal image in memory
    if len(wal) < 32:
        return bytes(out)
    magic, _version, page_size, _seq, salt1, salt2, c0, c1 = struct.unpack(">8I", wal[:32])
    order = _WAL_MAGIC.get(magic)
    if order is None or page_size < 512 or page_size & (page_size - 1) or _wal_checksum(wal[:24], order, 0, 0) != (
            c0, c1):
        return bytes(out)
    s0, s1 = c0, c1
    pages: dict[int, bytes] = {}
    committed: dict[int, bytes] = {}
    size_pages = 0
    pos = 32
    while pos + 24 + page_size <= len(wal):
        number, db_size, fs1, fs2, fc0, fc1 = struct.unpack(">6I", wal[pos:pos + 24])
        page = wal[pos + 24:pos + 24 + page_size]
        if (fs1, fs2) != (salt1, salt2) or number == 0:
            break
        s0, s1 = _wal_checksum(wal[pos:pos + 8], order, s0, s1)
        s0, s1 = _wal_checksum(page, order, s0, s1)
        if (s0, s1) != (fc0, fc1):
            break
        pages[number] = page
        if db_size:  # a commit frame: its transaction is whole
            committed.update(pages)
            pages.clear()
            size_pages = db_size
        pos += 24 + page_size
    if not size_pages:
        return bytes(out)
    if len(out) < size_pages * page_size:
        out.extend(bytes(size_pages * page_size - len(out)))
    del out[size_pages * page_size:]
    for number, page in committed.items():
        if number <= size_pages:
            out[(number - 1) * page_size:number * page_size] = page
    out[18:20] = b"\x01\x01"  # page 1 may have come from the WAL, still saying WAL mode
    return bytes(out)


def _stamp(path: str) -> tuple[int, ...]:
    """The database's (size, mtime), and its WAL's: a WAL-mode writer changes only the -wal file."""
    st = os.stat(path)
    try:
        wal = os.stat(path + "-wal")
        return st.st_size, st.st_mtime_ns, wal.st_size, wal.st_mtime_ns
    except OSError:
        return st.st_size, st.st_mtime_ns


class MlflowDbTail(Source):
    """Reads the whole database again when it changes (small: metrics rows only)."""

    def __init__(self, path: str, roles: RoleMap | None = None) -> None:
        self.path = path
        self.log = LogFile(path=path, format="mlflow-db", members=[path])
        self.roles = roles or RoleMap()
        self._stamp: tuple[int, ...] | None = None

    def update(self, budget: int | None = None) -> bool:
        import sqlite3  # start-up: only an MLflow database needs it

        stamp = _stamp(self.path)
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
