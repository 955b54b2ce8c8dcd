"""The optional compiled scanners (trainlint.core._cscan, _cjsonl, _ctext, _cstdout), line counter (_clines),
series measurements (_cstats) and series arrays' room (_carray); everything else is declared in pyproject.toml.

``optional=True``: without a compiler (or Python headers) the build warns and goes on, and the package is the
pure-Python one, which reads every log identically. ``TRAINLINT_PURE=1`` at build time leaves the extension out
on purpose: the VS Code extension bundles that pure wheel (any platform) beside the build machine's compiled one,
which pip prefers where it fits (vscode-extension/scripts/bundle_wheels.py, the Makefile's ``extension`` target).
"""

import os
import sys

from setuptools import Extension, setup

PURE = os.environ.get("TRAINLINT_PURE", "") not in ("", "0")
CORE = "server/trainlint/core/"
# each module its own extension, built apart (either can fail alone); the float() reader, the growable
# buffers and the arrays' room are shared headers
HEADERS = [f"{CORE}_cfloat.h", f"{CORE}_cpow10.h", f"{CORE}_cgrow.h", f"{CORE}_croom.h"]
# the judge's measurements and the stdout reader's HF steps (`_hf_lag`) must be the Python's bit for bit: no fused
# multiply-add where a compiler would contract one (gcc's default for C, on every platform with an FMA instruction)
EXACT = [] if sys.platform == "win32" else ["-ffp-contract=off"]
MODULES = [Extension(f"trainlint.core.{name}", [f"{CORE}{name}.c"], depends=HEADERS, optional=True,
                     extra_compile_args=EXACT if name == "_cstdout" else [])
           for name in ("_cscan", "_cjsonl", "_ctext", "_cstdout", "_clines", "_carray")]
MODULES.append(Extension("trainlint.core._cstats", [f"{CORE}_cstats.c"], depends=HEADERS, extra_compile_args=EXACT,
                         optional=True))

setup(ext_modules=[] if PURE else MODULES)
