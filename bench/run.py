"""trainlint's benchmark (a script, not tests): one table of ratios measured in the same run.

    make bench            # or: .venv/bin/python bench/run.py [--quick] [--corpus ../shared/corpus] [--skip-big]

Each row is a goal of issue 15, its measured value, and the floor or reference measured beside it:
1. cold ``trainlint check`` vs ``trainproof epoch`` (trainproof 0.22.0 in bench/.work/tpvenv) as whole
   processes, on corpus/trainproof's logs (goal <= 1.2x) and on generated 100 MB logs (goal <= 0.3x);
2. parse throughput in MB/s (goal >= 50, event files >= 30) and parse / a bare scan of the same bytes (<= 5x);
3. re-judge after one appended record at 1, 10 and 100 MB of Coqui log (goal: constant in the log's size);
4. server: append -> diagnostics latency; RSS with 200 and 2,000 stopped corpus runs (<= 120 / 500 MB);
5. server with a 1 GB Coqui log beside a small run: the small run's diagnostics while the big one is read,
   the big one's (goal <= 30 s), and the server's peak RSS (goal <= 1 GB);
6. start-up: a check of a small file (standard-library data classes; a user notices > 50 ms);
7. logs built by repeating real ones (bench/real_logs.py; ``--real-only`` runs this table alone): per format MB/s,
   x floor, x trainproof, x polars (CSV, JSONL) or x EventAccumulator (event files), re-judge at 1 / 10 / 100 MB
   right after the cold judge and again with the CPU's caches evicted first (``--quick``: 10 MB instead of 100 MB).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / ".work"
TP_VENV = WORK / "tpvenv"
TRAINLINT = [str(ROOT / ".venv" / "bin" / "trainlint"), "check", "-q"]


def ensure_trainproof() -> list[str] | None:
    exe = TP_VENV / "bin" / "trainproof"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(TP_VENV)], check=True)
        r = subprocess.run([str(TP_VENV / "bin" / "pip"), "install", "-q", "trainproof==0.22.0"])
        if r.returncode != 0:
            return None
    return [str(exe), "epoch"]


def wall(cmd: list[str], runs: int) -> float:
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, capture_output=True)
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


# -- large logs -----------------------------------------------------------------------------------
def gen_coqui(path: Path, mb: int) -> None:
    if path.exists() and path.stat().st_size >= mb << 20:
        return
    block = ("\x1b[1m   --> TIME: 2026-02-11 01:08:{s:02d} -- STEP: {a}/24940 -- GLOBAL_STEP: {g}\x1b[0m\n"
             "     | > loss_text_ce: {v1}  ({v1})\n     | > loss_mel_ce: {v2}  ({v2})\n"
             "     | > loss: {v3}  ({v3})\n     | > current_lr: 5e-06 \n"
             "     | > step_time: 0.0509  (0.05133280754089355)\n"
             "     | > loader_time: 0.0051  (0.004459586143493652)\n\n\n")
    with open(path, "w") as f:
        f.write("\x1b[4m\x1b[1m > EPOCH: 0/1000\x1b[0m\n\x1b[1m > TRAINING (2026-02-11 01:08:02) \x1b[0m\n\n")
        g = 0
        while f.tell() < mb << 20:
            v = 0.06 * math.exp(-g / 5e6) + 0.001 * math.sin(g)
            f.write(block.format(s=g % 60, a=g % 24940, g=g, v1=v / 3, v2=v * 80, v3=v))
            g += 50


def gen_jsonl(path: Path, n: int) -> None:
    if path.exists():
        return
    with open(path, "w") as f:
        for i in range(n):
            f.write(json.dumps({"step": i, "loss": 2.0 * math.exp(-i / 3e5) + 0.01 * math.sin(i),
                                "lr": 1e-4, "grad_norm": 1.0 + 0.1 * math.cos(i)}) + "\n")


def gen_events(d: Path, mb: int) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    existing = list(d.glob("events.out.tfevents.*"))
    if existing and existing[0].stat().st_size >= mb << 20:
        return existing[0]
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    for p in existing:
        p.unlink()
    w = EventFileWriter(str(d), max_queue_size=100_000, flush_secs=3600)
    step = 0
    path = None
    while True:
        vals = [summary_pb2.Summary.Value(tag=tag, simple_value=1.0 / (1 + step * 1e-5) + k)
                for k, tag in enumerate(("train/loss", "train/lr", "train/grad_norm"))]
        w.add_event(event_pb2.Event(step=step, wall_time=1.7e9 + step, summary=summary_pb2.Summary(value=vals)))
        step += 1
        if step % 50_000 == 0:
            w.flush()
            path = next(d.glob("events.out.tfevents.*"))
            if path.stat().st_size >= mb << 20:
                break
    w.close()
    return path  # type: ignore[return-value]


def gen_stdout(path: Path, mb: int) -> None:
    """Live stdout as trainers print it: HF Trainer 5.x bar redraws and quoted dicts, llm.c lines, tqdm postfixes."""
    rnd = random.Random(0)
    with open(path, "w") as f:
        step, size = 0, 0
        while size < mb << 20:
            step += 1
            parts = [f"\r{100 * step // 900000:3d}%|▏         | {step}/900000 [00:{step % 60:02d}<07:00, 36.31it/s]"]
            if step % 5 == 0:
                parts.append(f"\r{' ' * 48}\r{{'loss': '{rnd.random() * 3:.4g}', 'grad_norm': '{rnd.random():.4g}', "
                             f"'learning_rate': '{1e-4:.4g}', 'epoch': '{step / 1000:.4g}'}}\n")
            if step % 7 == 0:
                parts.append(f"step {step}/900000 | train loss {rnd.random() * 3:.6f} | norm {rnd.random():.4f} | "
                             f"lr 6.00e-04 | (12.3 ms | 41000 tok/s)\n")
            if step % 3 == 0:
                parts.append(f"Epoch 3/12:  40%|████      | {step % 32}/32 [00:01<00:02, 12.3it/s, "
                             f"loss={rnd.random():.4f}, lr=5.32e-03]\r")
            chunk = "".join(parts)
            f.write(chunk)
            size += len(chunk)


def gen_csv(path: Path, n: int) -> None:
    """Lightning CSVLogger's metrics.csv: a train row per step, a validation row every 50."""
    if path.exists():
        return
    with open(path, "w") as f:
        f.write("epoch,step,train_loss,lr,grad_norm,val_loss\n")
        for i in range(n):
            f.write(f"{i // 1000},{i},{2.0 * math.exp(-i / 3e5):.6f},0.0001,{1 + 0.1 * math.cos(i):.4f},\n")
            if i % 50 == 49:
                f.write(f"{i // 1000},{i},,,,{2.1 * math.exp(-i / 3e5):.6f}\n")


# -- floors -----------------------------------------------------------------------------------------
def floor_lines(path: Path) -> float:
    """A bare scan of the lines. Take the fastest of a few: the first read of a file may come from the disk, and a
    floor measured on it flatters every ratio (the tables took one first call until December 2026: the 10 MB floors
    were up to 4x the same scan from the page cache)."""
    t = time.perf_counter()
    with open(path, "rb") as f:
        for _ in f:
            pass
    return time.perf_counter() - t


def floor_records(path: Path) -> float:
    t = time.perf_counter()
    with open(path, "rb") as f:
        data = f.read()
    pos, hdr = 0, struct.Struct("<Q")
    while pos + 12 <= len(data):
        (n,) = hdr.unpack_from(data, pos)
        pos += 16 + n
    return time.perf_counter() - t


def parse_time(path: Path, fmt: str) -> float:
    from trainlint.readers import read

    t = time.perf_counter()
    read(str(path), fmt)
    return time.perf_counter() - t


#: Written over before a re-judge measured with the CPU's caches evicted (``append_rejudge(evict=True)``)
_EVICT: list[bytearray] = []


def evict_caches(size: int = 512 << 20) -> None:
    """Write over ``size`` bytes (more than this machine's 480 MB L3): the caches then hold none of the server's
    objects, as when a trainer ran between two of its log lines. Why: right after the cold judge of a 1 MB log every
    object a re-judge touches is still cached, after a 100 MB log's it is not, so a re-judge measured there grows
    with the log by what the cold judge evicted, not by what the re-judge does."""
    if not _EVICT or len(_EVICT[0]) != size:
        _EVICT[:] = [bytearray(size)]  # made once: zeroed pages, not a bytes copy of them
    _EVICT[0][::64] = b"\x01" * (size // 64)


def append_rejudge(path: Path, fmt: str, record: bytes | None, evict: bool = False) -> tuple[float, float]:
    """(re-judge after one appended record, cold read + judge) in-process, on a copy; ``evict``: the caches
    evicted between the two (``evict_caches``)."""
    from trainlint.judge import judge_log
    from trainlint.readers import open_source

    copy = path.with_name("appended-" + path.name)
    subprocess.run(["cp", str(path), str(copy)], check=True)
    try:
        t = time.perf_counter()
        src = open_source(str(copy), fmt)
        src.update()
        judge_log(src.log)
        cold = time.perf_counter() - t
        if record is None:  # an event record from tensorboard's own writer
            from tensorboard.compat.proto import event_pb2, summary_pb2
            from tensorboard.summary.writer.record_writer import RecordWriter

            ev = event_pb2.Event(step=10**9, wall_time=2e9, summary=summary_pb2.Summary(
                value=[summary_pb2.Summary.Value(tag="train/loss", simple_value=0.5)]))
            with open(copy, "ab") as f:
                RecordWriter(f).write(ev.SerializeToString())
        else:
            with open(copy, "ab") as f:
                f.write(record)
        if evict:
            evict_caches()
        t = time.perf_counter()
        src.update()
        judge_log(src.log)
        warm = time.perf_counter() - t
    finally:
        copy.unlink()
    return warm, cold


def big_log_in_the_server(big: Path, corpus_small: Path) -> tuple[float, float, float, int]:
    """A workspace of a large Coqui log and a small run, served: (seconds to the small run's diagnostics,
    seconds to the large log's, the server's peak RSS in MB, progress reports seen)."""
    import shutil
    import tempfile

    sys.path.insert(0, str(HERE))
    import lsp_latency

    async def go() -> tuple[float, float, float, int]:
        ws = Path(tempfile.mkdtemp())
        (ws / "big").mkdir()
        try:
            os.link(big, ws / "big" / big.name)  # the same bytes, not another gigabyte on disk
        except OSError:
            shutil.copy2(big, ws / "big" / big.name)
        (ws / "small").mkdir()
        shutil.copy2(corpus_small, ws / "small" / corpus_small.name)
        t0 = time.perf_counter()
        client = await lsp_latency.start(ws)
        small_uri, big_uri = (ws / "small" / corpus_small.name).as_uri(), (ws / "big" / big.name).as_uri()
        t_small = t_big = float("nan")
        while time.perf_counter() - t0 < 600:
            if t_small != t_small and small_uri in client.diagnostics:
                t_small = time.perf_counter() - t0
            if big_uri in client.diagnostics:
                t_big = time.perf_counter() - t0
                break
            await asyncio.sleep(0.05)
        with open(f"/proc/{lsp_latency.server_pid(client)}/status") as f:
            hwm = next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmHWM:"))
        reports = sum(len(v) for v in client.progress_reports.values())
        await lsp_latency.stop(client)
        shutil.rmtree(ws)
        return t_small, t_big, hwm, reports

    return asyncio.run(go())


def startup_ms(path: Path, n: int = 21) -> float:
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run([*TRAINLINT, str(path)], capture_output=True)
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller large logs (20 MB / 200k / 10 MB), fewer runs")
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus"))
    ap.add_argument("--skip-server", action="store_true")
    ap.add_argument("--skip-big", action="store_true", help="no 1 GB log (its generation takes a minute)")
    ap.add_argument("--real-only", action="store_true", help="only the table of logs built by repeating real ones")
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT / "server"))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "server" / "trainlint")],
                   capture_output=True)  # as a wheel install would: do not time bytecode compilation
    WORK.mkdir(exist_ok=True)
    runs = 3 if a.quick else 5
    tp = ensure_trainproof()
    corpus = Path(a.corpus)
    if a.real_only:
        real_logs_table(corpus, a.quick, tp)
        return
    rows: list[tuple[str, str, str, str]] = []

    print(f"1. cold check vs trainproof epoch (whole processes, median of {runs})")
    logs = sorted(p for p in (corpus / "trainproof").rglob("*") if p.is_file() and (
        p.name in ("trainer_state.json", "trainer_0_log.txt") or "tfevents" in p.name))
    worst = 0.0
    for p in logs:
        tl = wall([*TRAINLINT, str(p)], runs)
        tpt = wall([*tp, str(p)], runs) if tp else float("nan")
        worst = max(worst, tl / tpt)
        print(f"   {tl * 1000:7.0f} ms vs {tpt * 1000:7.0f} ms  {tl / tpt:5.2f}x  {p.relative_to(corpus)}")
    rows.append((f"cold check / trainproof, {len(logs)} corpus logs (worst)", f"{worst:.2f}x", "<= 1.2x", ""))
    coqui_mb, jsonl_n, events_mb = (20, 200_000, 10) if a.quick else (100, 1_000_000, 50)
    big_coqui = WORK / f"coqui-{coqui_mb}mb" / "trainer_0_log.txt"
    big_coqui.parent.mkdir(exist_ok=True)
    gen_coqui(big_coqui, coqui_mb)
    big_jsonl = WORK / f"jsonl-{jsonl_n}" / "metrics.jsonl"
    big_jsonl.parent.mkdir(exist_ok=True)
    gen_jsonl(big_jsonl, jsonl_n)
    big_csv = WORK / f"csv-{jsonl_n}" / "metrics.csv"
    big_csv.parent.mkdir(exist_ok=True)
    gen_csv(big_csv, 2 * jsonl_n)
    big_events = gen_events(WORK / f"events-{events_mb}mb", events_mb)
    big_stdout = WORK / f"stdout-{events_mb}mb" / "train.log"
    big_stdout.parent.mkdir(exist_ok=True)
    gen_stdout(big_stdout, events_mb // 5)
    large = [(big_coqui, "coqui", lambda: floor_lines(big_coqui),
              b"\x1b[1m   --> TIME: 2026-02-11 09:00:00 -- STEP: 1/24940 -- GLOBAL_STEP: 999999999\x1b[0m\n"
              b"     | > loss: 0.05  (0.05)\n"),
             (big_jsonl, "jsonl", lambda: floor_lines(big_jsonl), b'{"step": 99999999, "loss": 0.5}\n'),
             (big_csv, "csv", lambda: floor_lines(big_csv), b"999,99999999,0.5,0.0001,1.0,\n"),
             (big_events, "tfevents", lambda: floor_records(big_events), None),
             (big_stdout, "text", lambda: floor_lines(big_stdout),
              b"step 999999/900000 | train loss 1.000000 | norm 0.5000 | lr 6.00e-04 | (12.3 ms | 41000 tok/s)\n")]
    for p, _fmt, _, _ in large:
        tl = wall([*TRAINLINT, str(p)], 1)
        tpt = wall([*tp, str(p)], 1) if tp else float("nan")
        size = p.stat().st_size >> 20
        print(f"   {tl * 1000:7.0f} ms vs {tpt * 1000:7.0f} ms  {tl / tpt:5.2f}x  {p.name} ({size} MB)")
        rows.append((f"cold check / trainproof, {p.name} {size} MB", f"{tl / tpt:.2f}x", "<= 0.3x",
                     f"{tl:.1f} s vs {tpt:.1f} s"))
    print("2. parse throughput, and parse vs a bare scan of the same bytes (in process)")
    for p, fmt, floor, _ in large:
        fl, pt = min(floor() for _ in range(3)), min(parse_time(p, fmt) for _ in range(2))  # both from the page cache
        mbs = (p.stat().st_size / (1 << 20)) / pt
        goal = 30 if fmt == "tfevents" else 50
        print(f"   parse {pt:6.2f} s ({mbs:5.1f} MB/s), floor {fl:6.2f} s: {pt / fl:5.1f}x  {p.name}")
        rows.append((f"parse throughput, {fmt}", f"{mbs:.1f} MB/s", f">= {goal} MB/s", f"{pt:.2f} s"))
        rows.append((f"parse / floor, {fmt}", f"{pt / fl:.1f}x", "<= 5x", f"floor {fl:.2f} s (a bare scan)"))
    print("3. re-judge after one appended record (in process)")
    for p, fmt, _, rec in large:
        tries = [append_rejudge(p, fmt, rec) for _ in range(3)]  # the fastest of three: a GC pass is not the rules
        warm, cold = min(w for w, _ in tries), min(c for _, c in tries)
        print(f"   {warm * 1000:7.1f} ms vs {cold * 1000:7.0f} ms: {100 * warm / cold:5.2f}%  {p.name}")
        rows.append((f"append re-judge / cold, {fmt}", f"{100 * warm / cold:.2f}%", "< 5%",
                     f"{warm * 1000:.1f} ms vs {cold * 1000:.0f} ms"))
    sizes = (1, 10, coqui_mb)
    by_size = {}
    for mb in sizes:
        cut = WORK / f"coqui-cut-{mb}mb" / "trainer_0_log.txt"
        cut.parent.mkdir(exist_ok=True)
        if not cut.exists():
            with open(big_coqui, "rb") as src, open(cut, "wb") as dst:
                data = src.read(mb << 20)
                dst.write(data[:data.rfind(b"\n\n\n") + 3])
        by_size[mb] = min(append_rejudge(cut, "coqui", large[0][3])[0] for _ in range(3))
        print(f"   Coqui {mb:4d} MB: re-judge after one record {by_size[mb] * 1000:6.1f} ms")
    rows.append((f"re-judge after one record, Coqui {coqui_mb} MB / 1 MB", f"{by_size[coqui_mb] / by_size[1]:.2f}x",
                 "constant (~1x)", ", ".join(f"{mb} MB {by_size[mb] * 1000:.1f} ms" for mb in sizes)))
    small = ROOT / "fixtures" / "runs" / "gallery-healthy" / "trainer_state.json"
    ms = startup_ms(small)
    tpms = statistics.median([wall([*tp, str(small)], 1) for _ in range(11)]) * 1000 if tp else float("nan")
    rows.append(("start-up: check of a small trainer_state.json", f"{ms:.0f} ms", "<= 1.2x trainproof",
                 f"trainproof {tpms:.0f} ms ({ms / tpms:.2f}x)"))
    if not a.skip_server:
        sys.path.insert(0, str(HERE))
        import lsp_latency

        lat = asyncio.run(lsp_latency.latency(10 if a.quick else 20, 150))
        rows.append(("server append -> diagnostics (median, debounce 150 ms)", f"{statistics.median(lat):.0f} ms",
                     "< 300 ms", f"p90 {sorted(lat)[int(0.9 * len(lat)) - 1]:.0f} ms"))
        for n_runs, goal in ((200, 120), (2000, 500)):
            mb, took, n = asyncio.run(lsp_latency.memory(n_runs, corpus))
            rows.append((f"server RSS, {n_runs} stopped runs (corpus logs)", f"{mb:.0f} MB", f"<= {goal} MB",
                         f"{n} files judged in {took:.1f} s"))
        fd = asyncio.run(lsp_latency.first_diagnostics(corpus))
        if fd is not None:
            rows.append(("server start -> first diagnostics (corpus)", f"{fd:.2f} s", "< 3 s", ""))
        if not a.skip_big:
            gb = WORK / "coqui-1024mb" / "trainer_0_log.txt"
            gb.parent.mkdir(exist_ok=True)
            gen_coqui(gb, 200 if a.quick else 1024)
            t_small, t_big, hwm, reports = big_log_in_the_server(gb, small)
            size = gb.stat().st_size >> 20
            rows.append((f"server, {size} MB log: a small run's diagnostics", f"{t_small:.1f} s", "not held back",
                         f"the large log's came at {t_big:.1f} s"))
            rows.append((f"server, {size} MB log: its diagnostics", f"{t_big:.1f} s", "<= 30 s",
                         f"{reports} progress reports"))
            rows.append((f"server, {size} MB log: peak RSS", f"{hwm:.0f} MB", "<= 1024 MB", "VmHWM"))
    print()
    print("| measure | result | goal | detail |")
    print("|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    os.sys.stdout.flush()
    real_logs_table(corpus, a.quick, tp)


def real_logs_table(corpus: Path, quick: bool, tp: list[str] | None) -> None:
    """Item 7: the large logs built by repeating real ones (bench/real_logs.py)."""
    sys.path.insert(0, str(HERE))
    import real_logs

    print(f"\n7. logs built by repeating real ones ({10 if quick else 100} MB)")
    real_logs.table(corpus, 10 if quick else 100, tp)


if __name__ == "__main__":
    main()
