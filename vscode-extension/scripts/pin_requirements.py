"""Pin the bundled wheels' dependencies: ``bundled/requirements.txt`` for the extension's private environment.

The pure wheel and the compiled one declare the same dependencies (pyproject.toml): the pure wheel is resolved.

    python scripts/pin_requirements.py bundled/trainlint-*-py3-none-any.whl > bundled/requirements.txt

pip resolves the wheel's dependency closure (``pip install --dry-run --report``, nothing installed); each
dependency is written ``name==version`` with the sha256 of every file the package index lists for that version
(its PEP 691 JSON page, what pip itself reads), so ``pip install --require-hashes`` accepts the wheel of any
platform and nothing else. The resolution is this interpreter's (CPython and OS markers); a platform that needs
another package makes pip stop with its name rather than install something unpinned.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request

from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename

INDEX = "https://pypi.org/simple"


def closure(wheel: str) -> list[tuple[str, str]]:
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--ignore-installed",
                        "--report", "-", wheel], capture_output=True, text=True, check=True)
    out = []
    for item in json.loads(r.stdout)["install"]:
        meta = item["metadata"]
        if canonicalize_name(meta["name"]) != "trainlint":
            out.append((canonicalize_name(meta["name"]), meta["version"]))
    return sorted(out)


def hashes(name: str, version: str) -> list[str]:
    req = urllib.request.Request(f"{INDEX}/{name}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        files = json.load(resp)["files"]
    found = []
    for f in files:
        fn = f["filename"]
        try:
            ver = parse_wheel_filename(fn)[1] if fn.endswith(".whl") else parse_sdist_filename(fn)[1]
        except ValueError:
            continue
        if str(ver) == version and "sha256" in f.get("hashes", {}) and not f.get("yanked"):
            found.append(f["hashes"]["sha256"])
    if not found:
        raise SystemExit(f"{name}=={version}: the index lists no file with a sha256")
    return sorted(found)


def main() -> None:
    lines = ["# The bundled wheel's dependencies, pinned with the sha256 of each file of that version on the index.",
             "# Made by scripts/pin_requirements.py; installed with pip install --require-hashes."]
    for name, version in closure(sys.argv[1]):
        found = hashes(name, version)
        lines.append(f"{name}=={version} \\")
        lines.extend(f"    --hash=sha256:{h} \\" for h in found[:-1])
        lines.append(f"    --hash=sha256:{found[-1]}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
