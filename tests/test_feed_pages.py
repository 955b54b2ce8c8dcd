"""The feed decodes a log's chunks without taking new pages from the system at each one (readers/base.py `_heap`).

A 2-byte chunk's string was mapped anew at every chunk under glibc's dynamic mmap threshold: 1.8k minor faults a
4 MB chunk, a sixth of the compiled read of a 100 MB HF stdout, and the reason one process read it in 0.245 s and
the next in 0.29 s. Page faults are counted, not timed: the count is the same from one run to the next.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="minor page faults as Linux counts them, under glibc's allocator")


def _second_read_faults(path: Path) -> int:
    """Minor faults of a second read of ``path`` in a fresh process (the first one's arrays and modules made)."""
    code = textwrap.dedent(f"""
        import resource
        from trainlint.readers import read
        read({str(path)!r}, "text")
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        read({str(path)!r}, "text")
        print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)""")
    env = {k: v for k, v in os.environ.items() if k != "TRAINLINT_PURE"}  # the path users run
    return int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env=env).stdout)


def test_a_stdout_of_tqdm_bars_is_decoded_in_pages_already_taken(tmp_path: Path) -> None:
    """48 MB of HF-style bar redraws (U+258C: 2-byte text) and dicts: twelve chunks. Mapped anew at each chunk
    (before `_heap`, a 4 MB chunk's 8 MB string), 24 MB took 12k faults on the second read; 39 after. The count
    also holds the heap's one-time growth, which depends on where earlier allocations landed: with a series'
    arrays grown by doubling (`_croom.h`) it was 0 to 975 over the log's path lengths, up to a quarter of 24 MB's
    bound, so the log is 48 MB and the bound is a fault per 8 pages read, as a per-chunk mapping takes 1.8k a
    chunk (0 to 725 faults measured at 48 MB)."""
    path = tmp_path / "train.log"
    bar = "\r  5%|\u258c         | {0}/300 [00:00<00:00, 1048.84it/s]"
    with open(path, "w", encoding="utf-8", newline="") as f:
        i = 0
        while f.tell() < 48 << 20:
            redraws = "".join(bar.format(i + k) for k in range(5))
            f.write(redraws + "\r" + " " * 50 + "\r{'loss': '1.5', 'epoch': '0.1'}\n")
            i += 5
    from trainlint.core.accel import CSTDOUT
    if CSTDOUT is None:  # the pure path's own strings (a line's each) take pages of their own: 14k here, 26k before
        pytest.skip("the compiled scanner is not built: the pure path's line strings take pages of their own")
    pages = path.stat().st_size // 4096
    assert _second_read_faults(path) < pages // 8
