"""The compiled scanners (``trainlint.core._cscan``: CSV rows and event files; ``trainlint.core._ctext``: Coqui's
text lines; C extensions built by ``pip install`` when a compiler is there), each or None: the readers' own Python
loops, which read every log identically (tests/test_compiled_scanner.py).

Chosen once, at import: ``TRAINLINT_PURE=1`` forces the Python path (to compare the two, or to rule the extension
out when a result looks wrong); a missing or unloadable extension falls back with the reason in ``REASON``
(``CTEXT_REASON``).
"""

from __future__ import annotations

import os
from types import ModuleType

REASON = "compiled scanner in use"
CSCAN: ModuleType | None = None
CTEXT: ModuleType | None = None
CTEXT_REASON = "compiled text scanner in use"

if os.environ.get("TRAINLINT_PURE", "") not in ("", "0"):
    REASON = "TRAINLINT_PURE is set: the pure-Python readers are in use"
    CTEXT_REASON = REASON
else:
    try:
        from . import _cscan

        CSCAN = _cscan
    except ImportError as e:  # a pure wheel, an install without a compiler, or a build for another Python
        REASON = f"the compiled scanner is not built ({e}): the pure-Python readers are in use"
    try:
        from . import _ctext

        CTEXT = _ctext
    except ImportError as e:  # built apart from _cscan: either can be missing alone
        CTEXT_REASON = f"the compiled text scanner is not built ({e}): the pure-Python readers are in use"
