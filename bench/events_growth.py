"""A growing event file in the language server's workspace: the cost of one appended record (re-read, re-judge,
grow the view the diagnostics sit on) against making the view from nothing (what every publish did before).

    .venv/bin/python bench/events_growth.py [SCALARS]     # default: 900000 (a 40 MB event file)
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

from tbwrite import record_offsets, scalar_event, write
from trainlint.events_view import render
from trainlint.lsp import diagnostics as dg
from trainlint.lsp.workspace import Workspace


def ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


def main(scalars: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "src")
        os.mkdir(src)
        full = write(src, (scalar_event(s, tag, 1.0 / (s + 1)) for s in range(scalars // 3)
                           for tag in ("loss", "lr", "grad_norm")))
        with open(full, "rb") as f:
            data = f.read()
        offs = record_offsets(full)
        run = os.path.join(d, "run")
        os.mkdir(run)
        live = os.path.join(run, os.path.basename(full))
        with open(live, "wb") as f:
            f.write(data[:offs[-10]])
        ws = Workspace()
        tr = ws.track(live)
        assert tr is not None
        t0 = time.perf_counter()
        ws.refresh(tr.path)
        print(f"event file {len(data) / 1e6:.0f} MB, {len(offs) - 1} scalars; cold read + judge {ms(t0):.0f} ms")
        views = dg.Views()
        t0 = time.perf_counter()
        view = views.get(tr, live)
        print(f"first view: {ms(t0):.0f} ms ({len(view)} lines)")
        for k in range(3):
            with open(live, "ab") as f:
                f.write(data[offs[-10 + k]:offs[-9 + k]])
            t0 = time.perf_counter()
            ws.refresh(tr.path)
            judged = ms(t0)
            t0 = time.perf_counter()
            grown = views.get(tr, live)
            print(f"append {k + 1}: re-read + re-judge {judged:.0f} ms, view grown in {ms(t0):.2f} ms "
                  f"(same view: {grown is view}, {len(grown)} lines)")
        t0 = time.perf_counter()
        render(tr.log, live)
        print(f"a view made from nothing (every publish before): {ms(t0):.0f} ms")
        t0 = time.perf_counter()
        tr.points_at(5)
        print(f"points on a line (hover): {ms(t0):.1f} ms the first time")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 900_000)
