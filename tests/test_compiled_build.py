"""Every compiled extension is built, and built from the sources in the checkout, wherever a C compiler is there.

Why: setup.py builds each extension with ``optional=True`` (a machine without a compiler gets the pure package, which
reads and judges identically), so a C change that fails to compile only warns, and an editable install keeps the
previous ``.so`` beside the changed source: the identical-output tests then compare the pure path with an old build,
and CI would pass on the pure path alone. This test makes both loud where a compiler is present.
"""

from __future__ import annotations

import os
import re
import shutil
import sysconfig
from pathlib import Path

import pytest

from trainlint.core import accel

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "server" / "trainlint" / "core"
# each extension setup.py builds, and the names accel gives it and its reason
MODULES = {"_cscan": ("CSCAN", "REASON"), "_cjsonl": ("CJSONL", "JSONL_REASON"), "_ctext": ("CTEXT", "CTEXT_REASON"),
           "_cstdout": ("CSTDOUT", "STDOUT_REASON"), "_clines": ("CLINES", "CLINES_REASON"),
           "_cstats": ("CSTATS", "CSTATS_REASON"), "_carray": ("CARRAY", "CARRAY_REASON")}


def _compiler() -> str | None:
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    return shutil.which(cc)


def test_this_list_is_setup_pys_list() -> None:
    setup = (ROOT / "setup.py").read_text()
    built = set(re.findall(r'\b(_c[a-z]+)\b(?!\.h)', setup))
    assert built == set(MODULES), "setup.py builds other extensions than this test checks"


@pytest.mark.skipif(accel.PURE, reason="TRAINLINT_PURE is set: the pure path is asked for")
@pytest.mark.parametrize("name", sorted(MODULES))
def test_each_extension_is_built_and_fresh(name: str) -> None:
    attr, reason = MODULES[name]
    module = getattr(accel, attr)
    if module is None:
        if _compiler() is None:
            pytest.skip(f"no C compiler here: {getattr(accel, reason)}")
        pytest.fail(f"{name} is not built although a C compiler is here ({getattr(accel, reason)}): its C does not "
                    "compile, see the warnings of `pip install -e .`")
    source = CORE / f"{name}.c"
    if not source.exists():  # an installed wheel: no source to compare with
        return
    headers = re.findall(r'#include "(_c\w+\.h)"', source.read_text())
    newest = max(os.stat(p).st_mtime for p in [source, *(CORE / h for h in headers)])
    built = os.stat(module.__file__).st_mtime
    assert built >= newest, (f"{module.__file__} is older than its C sources: the build failed or was not rerun "
                             "(`make test` reinstalls when a source changes; or `pip install -e .`)")
