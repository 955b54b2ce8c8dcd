"""The compiled scanners, each a C extension built by ``pip install`` when a compiler is there, or None: the
readers' own Python loops, which read every log identically (tests/test_compiled_scanner.py,
tests/test_compiled_text.py). ``CSCAN`` (``trainlint.core._cscan``): CSV rows and event files; ``CJSONL``
(``_cjsonl``): JSON lines; ``CTEXT`` (``_ctext``): Coqui's text lines; ``CSTDOUT`` (``_cstdout``): the general
stdout reader's lines, split, cleaned and without the bar redraws it would only store; ``CLINES`` (``_clines``):
the line breaks every line-based reader's chunk is counted for; ``CSTATS`` (``_cstats``): the judge's per-point
loops over a series (rules/stats.py, noise.py, timing.py); ``CARRAY`` (``_carray``): room ahead in a series' arrays
(core/model.py), so they grow by doubling and not by a sixteenth. Each is its own module, built apart, so any can be
missing alone; each has its reason (``REASON``, ``JSONL_REASON``, ``CTEXT_REASON``, ``STDOUT_REASON``,
``CLINES_REASON``, ``CSTATS_REASON``, ``CARRAY_REASON``).

Chosen once, at import: ``TRAINLINT_PURE=1`` forces the Python path (to compare the two, or to rule the extension
out when a result looks wrong); a missing or unloadable extension falls back with the reason.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

PURE = os.environ.get("TRAINLINT_PURE", "") not in ("", "0")


def _load(module: str, what: str, fallback: str) -> tuple[ModuleType | None, str]:
    """(the extension, why it is or is not in use)."""
    if PURE:
        return None, "TRAINLINT_PURE is set: the pure-Python readers are in use"
    try:
        return importlib.import_module(f"{__package__}.{module}"), f"{what} in use"
    except ImportError as e:  # a pure wheel, an install without a compiler, or a build for another Python
        return None, f"the {what} is not built ({e}): {fallback}"


CSCAN, REASON = _load("_cscan", "compiled scanner", "the pure-Python readers are in use")
CJSONL, JSONL_REASON = _load("_cjsonl", "compiled JSONL scanner", "the pure-Python JSONL reader is in use")
CTEXT, CTEXT_REASON = _load("_ctext", "compiled text scanner", "the pure-Python readers are in use")
CSTDOUT, STDOUT_REASON = _load("_cstdout", "compiled stdout line pass", "the pure-Python stdout reader is in use")
CLINES, CLINES_REASON = _load("_clines", "compiled line counter", "core/lines.py counts with bytes.count")
CSTATS, CSTATS_REASON = _load("_cstats", "compiled series measurements", "the rules' Python loops are in use")
CARRAY, CARRAY_REASON = _load("_carray", "compiled array room", "series' arrays grow as array.array grows them")
if CARRAY is not None and CARRAY.REFUSED:  # this CPython's array is not the layout _croom.h checks for
    CARRAY, CARRAY_REASON = None, f"the compiled array room is refused ({CARRAY.REFUSED}): arrays grow as they do"
