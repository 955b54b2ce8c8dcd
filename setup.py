"""The optional compiled scanners (trainlint.core._cscan, _cjsonl, _ctext, _cstdout); everything else is declared in
pyproject.toml.

``optional=True``: without a compiler (or Python headers) the build warns and goes on, and the package is the
pure-Python one, which reads every log identically. ``TRAINLINT_PURE=1`` at build time leaves the extension out
on purpose: the VS Code extension bundles that pure wheel (any platform), see the Makefile's ``extension`` target.
"""

import os

from setuptools import Extension, setup

PURE = os.environ.get("TRAINLINT_PURE", "") not in ("", "0")
CORE = "server/trainlint/core/"
# each module its own extension, built apart (either can fail alone); the float() reader and the growable
# buffers are shared headers
HEADERS = [f"{CORE}_cfloat.h", f"{CORE}_cgrow.h"]
MODULES = [Extension(f"trainlint.core.{name}", [f"{CORE}{name}.c"], depends=HEADERS, optional=True)
           for name in ("_cscan", "_cjsonl", "_ctext", "_cstdout")]

setup(ext_modules=[] if PURE else MODULES)
