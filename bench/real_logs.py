"""Large logs built by repeating real ones, and how fast trainlint reads them beside the tools users already have.

    .venv/bin/python bench/run.py --real-only [--quick]      # this table alone; 10 MB with --quick, else 100 MB

Synthetic logs (bench/run.py's gen_*) are regular in a way users' logs are not: one key set, short lines, no ANSI,
no sparse CSV cells, no tqdm redraws. Here each large file is a real log from the corpus repeated to size, its
step (and epoch, wall time, checkpoint numbers) offset in every copy so the steps keep rising and the file stays a
valid log of its format. Per format the table gives trainlint's parse MB/s, parse / a bare scan of the same bytes
(the floor), cold ``trainlint check`` / ``trainproof epoch`` as whole processes where trainproof reads the format,
parse / polars (CSV, JSONL; polars in its own venv under bench/.work) and parse / tensorboard's EventAccumulator
(event files), and the re-judge after one appended record at 1, 10 and 100 MB.
"""

from __future__ import annotations

import json
import re
import struct
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
PL_VENV = WORK / "polarsvenv"

# The real sources: one concrete file per format (corpus paths relative to --corpus, the HF one in the gallery).
SOURCES = {
    "coqui": "coqui_trainer_log/jofrems__TTS_VITS_Finetuned__trainer_0_log.txt",  # EVAL + BEST MODEL events
    "csv": "csv_logs/0Xero7__slm_training__lightning_logs__version_0__metrics.csv",  # sparse Lightning rows
    "jsonl": "llamafactory_jsonl/suzushi-tw__luojiu-7b-base__trainer_log.jsonl",  # LLaMA-Factory trainer_log
    "text": "fixtures/live/hf-diverge/train.log",  # HF Transformers 5.x stdout with \r tqdm bars (gallery)
    "tfevents": "tfevents/Abdul-AA__Text-Generation-With-LSTM__lightning_logs__version_0__events.out.tfevents"
                ".1716735746.99c8c45923de.3769.0",  # Lightning TensorBoardLogger scalars
}
NAMES = {"coqui": "trainer_0_log.txt", "csv": "metrics.csv", "jsonl": "trainer_log.jsonl", "text": "train.log",
         "tfevents": "events.out.tfevents.1716735746.bench.0"}
# One more record of each format, as its trainer would append it (step far past any copy).
APPEND = {
    "coqui": b"\x1b[1m   --> STEP: 1/36 -- GLOBAL_STEP: 999999999\x1b[0m\n     | > loss_disc: 3.01874  (3.46002)\n"
             b"     | > loss_1: 26.92974  (35.54205)\n     | > current_lr_0: 0.00020 \n\n\n",
    "csv": b"99999,,999999999,,,7.5,,1859.3,,,\n",
    "jsonl": b'{"current_steps": 999999999, "total_steps": 999999999, "loss": 1.7, "learning_rate": 1e-05, '
             b'"epoch": 99999.0, "percentage": 100.0, "elapsed_time": "0:00:01", "remaining_time": "0:00:00"}\n',
    "text": b"\r{'loss': '1.326', 'grad_norm': '2.382', 'learning_rate': '0.29', 'epoch': '99999.5'}\n",
    "tfevents": None,  # run.append_rejudge writes an event record with tensorboard's RecordWriter
}


def source(fmt: str, corpus: Path) -> Path:
    rel = SOURCES[fmt]
    return HERE.parent / rel if rel.startswith("fixtures/") else corpus / rel


def _shift(pattern: bytes, offset: Callable[[int], float], fmt: str = "{:d}") -> Callable[[bytes, int], bytes]:
    """A substitution that adds offset(copy) to the number in group 2 of pattern (groups 1 and 3 kept)."""
    rx = re.compile(pattern)

    def sub(data: bytes, k: int) -> bytes:
        if k == 0:
            return data
        return rx.sub(lambda m: m[1] + fmt.format(type(offset(k))(float(m[2])) + offset(k)).encode() + m[3], data)
    return sub


def _write_copies(out: Path, head: bytes, body: bytes, tail: bytes, mb: float,
                  subs: list[Callable[[bytes, int], bytes]]) -> None:
    with open(out, "wb") as f:
        f.write(head)
        k = 0
        while f.tell() + len(tail) < mb * (1 << 20):
            chunk = body
            for s in subs:
                chunk = s(chunk, k)
            f.write(chunk)
            k += 1
        f.write(tail)


def build_text(fmt: str, src: Path, out: Path, mb: float) -> None:
    data = src.read_bytes()
    head, tail = b"", b""
    if fmt == "coqui":  # the environment and restore header once; epochs, global steps, checkpoints shift
        i = data.index(b"\x1b[4m\x1b[1m > EPOCH:")
        head, body = data[:i], data[i:]
        ep = int(re.findall(rb"> EPOCH: (\d+)", body)[-1]) + 1
        gs = max(int(x) for x in re.findall(rb"GLOBAL_STEP: (\d+)", body)) - 1_000_000 + 1
        subs = [_shift(rb"(> EPOCH: )(\d+)(/)", lambda k: k * ep),
                _shift(rb"(GLOBAL_STEP: )(\d+)(\b)", lambda k: k * gs),
                _shift(rb"((?:best_model|checkpoint)_)(\d+)(\.pth)", lambda k: k * gs)]
    elif fmt == "csv":  # header once; epoch and step shift, the empty cells stay empty
        i = data.index(b"\n") + 1
        head, body = data[:i], data[i:]
        rows = [r.split(b",") for r in body.splitlines()]
        ep, st = max(int(r[0]) for r in rows) + 1, max(int(r[2]) for r in rows) + 1
        subs = [_shift(rb"(^|\n)(\d+)(,)", lambda k: k * ep), _shift(rb"(\n\d+,[^,\n]*,)(\d+)(,)", lambda k: k * st)]
        body = b"\n" + body[:-1]  # each row starts after a newline, so the patterns anchor on it
        head = head[:-1]
        tail = b"\n"
    elif fmt == "jsonl":  # current_steps and epoch shift; total_steps is the whole repeated run's
        body = data
        recs = [json.loads(x) for x in body.splitlines()]
        st, ep = recs[-1]["current_steps"], recs[-1]["epoch"]
        total = (int(mb * (1 << 20)) // len(body) + 1) * st
        subs = [lambda d, k: re.sub(rb'"total_steps": \d+', b'"total_steps": %d' % total, d),
                _shift(rb'("current_steps": )(\d+)(,)', lambda k: k * st),
                _shift(rb'("epoch": )([0-9.]+)(,)', lambda k: float(k * ep), "{:.4f}")]
    else:  # HF stdout: the bars' counts and the logged epochs shift; the end-of-training summary once, last
        i = data.rindex(b"{'train_runtime'")
        i = data.rindex(b"\n", 0, i) + 1
        body, tail = data[:i], data[i:]
        ep = max(float(x) for x in re.findall(rb"'epoch': '([0-9.e+-]+)'", body))
        subs = [_shift(rb"(\| )(\d+)(/300 )", lambda k: k * 300),
                _shift(rb"('epoch': ')([0-9.]+)(')", lambda k: float(k * ep), "{:.4g}")]
    _write_copies(out, head, body, tail, mb, subs)


def build_events(src: Path, out: Path, mb: float) -> None:
    """Re-frame every record (length, CRCs) with tensorboard's RecordWriter; steps and wall times shift per copy."""
    from tensorboard.compat.proto import event_pb2
    from tensorboard.summary.writer.record_writer import RecordWriter

    data, pos, events = src.read_bytes(), 0, []
    while pos + 12 <= len(data):
        (n,) = struct.unpack_from("<Q", data, pos)
        ev = event_pb2.Event()
        ev.ParseFromString(data[pos + 12:pos + 12 + n])
        events.append(ev)
        pos += 16 + n
    head = [e for e in events if e.HasField("file_version")]
    body = [e for e in events if not e.HasField("file_version")]
    steps = max(e.step for e in body) + 1
    secs = max(e.wall_time for e in body) - min(e.wall_time for e in body) + 1
    with open(out, "wb") as f:
        w = RecordWriter(f)
        for e in head:
            w.write(e.SerializeToString())
        k = 0
        while f.tell() < mb * (1 << 20):
            for e in body:
                c = event_pb2.Event()
                c.CopyFrom(e)
                c.step += k * steps
                c.wall_time += k * secs
                w.write(c.SerializeToString())
            k += 1


def build(fmt: str, corpus: Path, mb: float) -> Path:
    out = WORK / f"real-{fmt}-{mb:g}mb" / NAMES[fmt]
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_name(out.name + ".part")  # an interrupted build is not mistaken for a finished one
    if fmt == "tfevents":
        build_events(source(fmt, corpus), part, mb)
    else:
        build_text(fmt, source(fmt, corpus), part, mb)
    part.rename(out)
    return out


POLARS_TIMER = """import sys, time
import polars as pl
t = time.perf_counter()
df = (pl.read_csv if sys.argv[2] == "csv" else pl.read_ndjson)(sys.argv[1], infer_schema_length=None)
print(time.perf_counter() - t, df.height)
"""


def ensure_polars() -> Path | None:
    """polars in its own venv (never the project's); None when it cannot be installed."""
    py = PL_VENV / "bin" / "python"
    if not (PL_VENV / "ok").exists():
        subprocess.run([sys.executable, "-m", "venv", str(PL_VENV)], check=True)
        if subprocess.run([str(PL_VENV / "bin" / "pip"), "install", "-q", "polars"]).returncode != 0:
            return None
        (PL_VENV / "ok").touch()
    return py


def polars_time(py: Path | None, path: Path, fmt: str) -> str | float:
    if py is None:
        return "polars not installable"
    r = subprocess.run([str(py), "-c", POLARS_TIMER, str(path), fmt], capture_output=True, text=True)
    if r.returncode != 0:
        return "polars failed: " + (r.stderr.strip().splitlines() or ["?"])[-1][:60]
    return float(r.stdout.split()[0])


def accumulator_time(path: Path) -> float:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    t = time.perf_counter()
    EventAccumulator(str(path), size_guidance={"scalars": 0, "tensors": 0}).Reload()
    return time.perf_counter() - t


def trainproof_ratio(rb: object, tp: list[str] | None, path: Path) -> str:
    """Cold ``trainlint check`` / ``trainproof epoch``, whole processes; n/a where trainproof reads no record."""
    if tp is None:
        return "trainproof not installable"
    r = subprocess.run([*tp, str(path)], capture_output=True, text=True)
    if "no readable log records" in r.stdout + r.stderr:
        return "n/a (trainproof reads no record)"
    tl, tpt = rb.wall([*rb.TRAINLINT, str(path)], 1), rb.wall([*tp, str(path)], 1)
    return f"{tl / tpt:.2f}x ({tl:.1f} s vs {tpt:.1f} s)"


def reference(fmt: str, path: Path, pt: float, py: Path | None) -> str:
    if fmt in ("csv", "jsonl"):
        p = polars_time(py, path, fmt)
        return p if isinstance(p, str) else f"{pt / p:.1f}x polars ({p:.2f} s)"
    if fmt == "tfevents":
        ea = accumulator_time(path)
        return f"{pt / ea:.2f}x EventAccumulator ({ea:.2f} s)"
    return "-"


def floor_and_read(path: Path, fmt: str, rounds: int = 5) -> tuple[float, float]:
    """(the fastest bare scan, the fastest read) of ``path``, alternated ``rounds`` times in a process of their own.

    Alternated: three scans then two reads put a slower minute of the machine on one side only. Their own process,
    as `trainlint check` reads: by this table, `make bench`'s process holds every earlier section's objects, and each
    full collection of Python's cyclic GC walks them. The Coqui read (90k events per 100 MB make two full
    collections) measured 5.2-5.3x its floor there and 4.2-4.4x in a fresh process the same hour (2026-12-05; a
    process holding a list of 3 M items: 5.8x)."""
    code = (f"import sys; sys.path[:0] = [{str(HERE)!r}, {str(HERE.parent / 'server')!r}]\n"
            "import json, pathlib, run\n"
            f"p, fmt = pathlib.Path({str(path)!r}), {fmt!r}\n"
            "floor = run.floor_records if fmt == 'tfevents' else run.floor_lines\n"
            "fls, pts = [], []\n"
            f"for _ in range({rounds}):\n"
            "    fls.append(floor(p))\n"
            "    pts.append(run.parse_time(p, fmt))\n"
            "print(json.dumps([min(fls), min(pts)]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    fl, pt = json.loads(out.splitlines()[-1])
    return fl, pt


def table(corpus: Path, big_mb: int, tp: list[str] | None) -> list[str]:
    """Build, measure and return the markdown rows (also printed as they come)."""
    import run as rb

    py = ensure_polars()
    sizes = sorted({1, 10, big_mb})
    rows = ["| format (real source, repeated) | size | parse MB/s | x floor | x trainproof (cold check) | "
            "x polars / EventAccumulator (parse) | re-judge after one append, " + " / ".join(f"{s} MB" for s in sizes)
            + " | the same, caches evicted first |", "|---|---|---|---|---|---|---|---|"]
    print(rows[0])
    print(rows[1])
    for fmt in SOURCES:
        paths = {mb: build(fmt, corpus, mb) for mb in sizes}
        big = paths[big_mb]
        size = big.stat().st_size / (1 << 20)
        fl, pt = floor_and_read(big, fmt)
        rej = [min(rb.append_rejudge(paths[mb], fmt, APPEND[fmt])[0] for _ in range(3)) for mb in sizes]
        # Right after a 1 MB log's cold judge the caches hold what the re-judge touches, after a 100 MB log's they
        # do not; in the server a trainer runs between two lines. The same re-judge from evicted caches, beside.
        cold = [min(rb.append_rejudge(paths[mb], fmt, APPEND[fmt], evict=True)[0] for _ in range(3)) for mb in sizes]
        row = (f"| {fmt}: {Path(SOURCES[fmt]).name[:48]} | {size:.0f} MB | {size / pt:.1f} | {pt / fl:.1f}x | "
               f"{trainproof_ratio(rb, tp, big)} | {reference(fmt, big, pt, py)} | "
               + " / ".join(f"{r * 1000:.1f} ms" for r in rej) + f" ({max(rej) / min(rej):.2f}x) | "
               + " / ".join(f"{r * 1000:.1f} ms" for r in cold) + f" ({max(cold) / min(cold):.2f}x) |")
        print(row, flush=True)
        rows.append(row)
    return rows
