"""The compiled scanner (``trainlint.core._cscan``, a C extension built by ``pip install`` when a compiler is
there), or None: the readers' own Python loops, which read every log identically (tests/test_compiled_scanner.py).
``CJSONL`` is the same for JSON lines (``trainlint.core._cjsonl``, its own extension module), chosen the same way,
with its reason in ``JSONL_REASON``.

Chosen once, at import: ``TRAINLINT_PURE=1`` forces the Python path (to compare the two, or to rule the extension
out when a result looks wrong); a missing or unloadable extension falls back with the reason in ``REASON``.
"""

from __future__ import annotations

import os
from types import ModuleType

REASON = "compiled scanner in use"
CSCAN: ModuleType | None = None
CJSONL: ModuleType | None = None  # the JSONL scanner (``_cjsonl``): its own module, chosen the same way
JSONL_REASON = "compiled JSONL scanner in use"

if os.environ.get("TRAINLINT_PURE", "") not in ("", "0"):
    REASON = JSONL_REASON = "TRAINLINT_PURE is set: the pure-Python readers are in use"
else:
    try:
        from . import _cscan

        CSCAN = _cscan
    except ImportError as e:  # a pure wheel, an install without a compiler, or a build for another Python
        REASON = f"the compiled scanner is not built ({e}): the pure-Python readers are in use"
    try:
        from . import _cjsonl

        CJSONL = _cjsonl
    except ImportError as e:
        JSONL_REASON = f"the compiled JSONL scanner is not built ({e}): the pure-Python JSONL reader is in use"
