"""The compiled scanner (``trainlint.core._cscan``, a C extension built by ``pip install`` when a compiler is
there), or None: the readers' own Python loops, which read every log identically (tests/test_compiled_scanner.py).

Chosen once, at import: ``TRAINLINT_PURE=1`` forces the Python path (to compare the two, or to rule the extension
out when a result looks wrong); a missing or unloadable extension falls back with the reason in ``REASON``.
"""

from __future__ import annotations

import os
from types import ModuleType

REASON = "compiled scanner in use"
CSCAN: ModuleType | None = None

if os.environ.get("TRAINLINT_PURE", "") not in ("", "0"):
    REASON = "TRAINLINT_PURE is set: the pure-Python readers are in use"
else:
    try:
        from . import _cscan

        CSCAN = _cscan
    except ImportError as e:  # a pure wheel, an install without a compiler, or a build for another Python
        REASON = f"the compiled scanner is not built ({e}): the pure-Python readers are in use"
