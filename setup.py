"""The optional compiled scanners (trainlint.core._cscan, _ctext); everything else is declared in pyproject.toml.

``optional=True``: without a compiler (or Python headers) the build warns and goes on, and the package is the
pure-Python one, which reads every log identically. ``TRAINLINT_PURE=1`` at build time leaves the extension out
on purpose: the VS Code extension bundles that pure wheel (any platform), see the Makefile's ``extension`` target.
"""

import os

from setuptools import Extension, setup

PURE = os.environ.get("TRAINLINT_PURE", "") not in ("", "0")
CSCAN = Extension("trainlint.core._cscan", ["server/trainlint/core/_cscan.c"], optional=True)
CTEXT = Extension("trainlint.core._ctext", ["server/trainlint/core/_ctext.c"], optional=True)

setup(ext_modules=[] if PURE else [CSCAN, CTEXT])
