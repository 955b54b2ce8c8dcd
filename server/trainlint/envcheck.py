"""``trainlint env``: can this machine start this run? The training module imports (in a subprocess, with the
run's interpreter and working directory, within a time limit), there is RAM for it, disk for the checkpoints it
keeps, and the checkpoint it resumes from is complete. Nothing of the user's runs in this process and no
checkpoint is ever unpickled: a torch checkpoint is read as the ZIP archive it is (the same integrity check
``check`` runs on the checkpoints a log names), a safetensors file by its JSON header.

The import probe runs ``python -c PROBE MODULE`` in ``--cwd``. That is what ``python -m MODULE`` launched from
that folder sees: the folder first on ``sys.path``, ``PYTHONPATH`` and the user site honoured. So it is neither
``-I`` (isolated: no folder on the path, no ``PYTHONPATH``, no user site — a package that imports for the run
would fail the probe) nor ``-P`` (no folder on the path, the same false failure for a source checkout). The probe's
own imports (``json``, ``traceback``) are made before the folder is put on the path, so a ``json.py`` in the
user's tree cannot break the probe, only the import being probed, as it would break the run. ``PYTHONSAFEPATH``
(or ``-P`` in the environment) is honoured like the run would. ``-X faulthandler`` makes a native crash print
where it happened.

Its imports of trainlint's other modules are made where they are used (start-up: `trainlint env` of one
module loads neither the outputs it does not print nor the checkpoint reader it does not need).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from typing import Any

from .core.findings import Evidence, Finding, Level, Ratio, Rule
from .core.model import Location
from .core.report import Report
from .rules import env as R
from .rules.thresholds import Thresholds

GB = 1024 ** 3
MARK = "\x00trainlint-probe "
PROBE = r"""
import sys
_folder = sys.path.pop(0) if sys.path and sys.path[0] in ("", ".") else None
import importlib, json, os, traceback
def _say(**kw):
    sys.stderr.write("\n" + MARK + json.dumps(kw) + "\n")
    sys.stderr.flush()
if _folder is not None:
    sys.path.insert(0, os.getcwd())
try:
    importlib.import_module(sys.argv[1])
except BaseException as e:
    frames = [f for f in traceback.extract_tb(e.__traceback__) if not f.filename.startswith("<")]
    fr = frames[-1] if frames else None
    file, line, code = (fr.filename, fr.lineno, fr.line) if fr else (None, None, None)
    if isinstance(e, SyntaxError) and e.filename:
        file, line, code = e.filename, e.lineno, (e.text or "").strip()
    _say(type=type(e).__name__, message=str(e)[:400], file=file, line=line, code=code)
    os._exit(1)
_say(ok=True, file=getattr(sys.modules[sys.argv[1]], "__file__", None), version=sys.version.split()[0])
os._exit(0)
""".replace("MARK", repr(MARK))
_FAULT_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def _finding(rule: Rule, values: dict[str, Any], template: str, message: str, loc: Location) -> Finding:
    return Finding(rule.id, rule.level, message, Evidence(values, template), loc)


# -- import -----------------------------------------------------------------------------------
def default_python() -> str:
    """The interpreter ``python -m train`` would run here: the first ``python`` (then ``python3``) on PATH."""
    return shutil.which("python") or shutil.which("python3") or sys.executable


def check_import(module: str, python: str | None = None, cwd: str | None = None,
                 timeout: float = 120.0) -> list[Finding]:
    exe = python or default_python()
    where = os.path.abspath(cwd or os.getcwd())
    at = Location(where, None)
    if not os.path.isdir(where):
        return [_finding(R.TP_ENV_CWD_MISSING, {"cwd": where}, "`{cwd}` is not a directory",
                         "The import could not be probed from where the run starts; this says nothing about the "
                         "module.", at)]
    try:
        proc = subprocess.Popen([exe, "-X", "faulthandler", "-c", PROBE, module], cwd=where, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    except OSError as e:
        return [_finding(R.TP_ENV_PYTHON_UNUSABLE, {"python": exe, "error": e.strerror or str(e)},
                         "`{python}` cannot be run: {error}",
                         "The interpreter to probe with could not be started; this says nothing about the module.",
                         at)]
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # its own session: the module's children go with it
        proc.communicate()
        return [_finding(R.TP_ENV_IMPORT_TIMEOUT, {"module": module, "timeout": timeout, "python": exe},
                         "importing `{module}` with `{python}` did not finish in {timeout} s",
                         "An import that hangs (a lock, a network call, a device wait at import time) hangs the "
                         "launch of the run too.", at)]
    text = err.decode("utf-8", "replace")
    said = [ln[len(MARK):] for ln in text.splitlines() if ln.startswith(MARK)]
    info: dict[str, Any] = {}
    if said:
        try:
            info = json.loads(said[-1])
        except ValueError:
            info = {}
    if proc.returncode == 0 and info.get("ok"):
        return [_finding(R.TP_ENV_IMPORT_OK, {"module": module, "python": exe, "version": info.get("version", "?"),
                                              "file": info.get("file") or "a namespace package"},
                         "`{module}` imports with `{python}` (Python {version}) from `{file}`",
                         "The training module and what it imports at module level load in this environment.", at)]
    if info.get("type"):
        file, line = info.get("file"), info.get("line")
        loc = Location(file, line, 1, line, None) if file and isinstance(line, int) else at
        values = {"module": module, "type": info["type"], "error": info.get("message", ""), "python": exe}
        template = "`{module}`: {type}: {error}"
        if file:
            values.update({"file": file, "frame_line": line if isinstance(line, int) else 0,
                           "code": (info.get("code") or "").strip()})
            template += " — raised at `{file}` line {frame_line}" + (": `{code}`" if values["code"] else "")
        return [_finding(R.TP_ENV_IMPORT_FAIL, values, template,
                         "The run cannot start in this environment: the module (or something it imports at module "
                         "level) fails to import.", loc)]
    m = _FAULT_FRAME.search(text[text.find("Fatal Python error"):]) if "Fatal Python error" in text else None
    values = {"module": module, "code": proc.returncode, "python": exe}
    template = "importing `{module}` ended with exit code {code} and no Python exception"
    loc = at
    if m:
        values.update({"file": m.group(1), "frame_line": int(m.group(2))})
        template += " (faulthandler: in `{file}` line {frame_line})"
        loc = Location(m.group(1), int(m.group(2)), 1, int(m.group(2)), None)
    return [_finding(R.TP_ENV_IMPORT_CRASH, values, template,
                     "The interpreter died while importing (a segfault in a native extension, an abort, os._exit): the "
                     "run would die at the same place.", loc)]


# -- memory -----------------------------------------------------------------------------------
def memory_gb() -> tuple[float, float, str] | None:
    """(total, available, source) in GiB: /proc/meminfo, lowered to a cgroup v2 limit when one is set (a container
    sees the host's MemAvailable); None when neither can be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            vals = {k: int(v.split()[0]) * 1024 for k, _, v in (ln.partition(":") for ln in f) if v.split()}
    except (OSError, ValueError):
        return None
    total, avail = vals.get("MemTotal"), vals.get("MemAvailable", vals.get("MemFree"))
    if total is None or avail is None:
        return None
    source = "/proc/meminfo"
    try:
        with open("/sys/fs/cgroup/memory.max", encoding="ascii") as f:
            limit = f.read().strip()
        with open("/sys/fs/cgroup/memory.current", encoding="ascii") as f:
            current = int(f.read().strip())
        if limit != "max" and int(limit) < total:
            total, avail = int(limit), min(avail, max(0, int(limit) - current))
            source = "the cgroup memory limit"
    except (OSError, ValueError):
        pass
    return total / GB, avail / GB, source


def check_memory(required_gb: float | None, margin_gb: float,
                 measured: tuple[float, float, str] | None = None) -> list[Finding]:
    mem = measured if measured is not None else memory_gb()
    at = Location("/proc/meminfo", None)
    if mem is None:
        return [_finding(R.TP_ENV_MEM_UNKNOWN, {"platform": sys.platform},
                         "RAM could not be read on {platform}", "Memory was not checked; this says nothing about it.",
                         at)]
    total, avail, source = mem
    v = {"available": Ratio(avail), "total": Ratio(total), "source": source}
    if required_gb is None:
        return [_finding(R.TP_ENV_MEM_INFO, v, "{available} GB available of {total} GB ({source}); give "
                                              "--required-gb to judge it", "Measured, not judged.", at)]
    v.update({"required": Ratio(required_gb), "margin": Ratio(avail - required_gb), "limit": margin_gb})
    if avail < required_gb:
        return [_finding(R.TP_ENV_MEM_INSUFFICIENT, v, "{available} GB available, {required} GB required ({total} GB "
                                                      "in all; {source})",
                         "The run needs more RAM than is free: it is killed by the OOM killer or the machine pages "
                         "until it is unusable.", at)]
    if avail - required_gb < margin_gb:
        return [_finding(R.TP_ENV_MEM_TIGHT, v, "{available} GB available, {required} GB required: a margin of "
                                               "{margin} GB, under {limit} GB ({source})",
                         "It fits on paper; a machine starts paging well before it runs out, and data loader workers "
                         "and the first batch add to the estimate.", at)]
    return [_finding(R.TP_ENV_MEM_OK, v, "{available} GB available, {required} GB required: a margin of {margin} GB "
                                        "({source})", "There is RAM for the run with margin.", at)]


# -- disk -------------------------------------------------------------------------------------
def check_disk(output_dir: str, checkpoint_gb: float | None, keep: int,
               free_bytes: int | None = None) -> list[Finding]:
    probe = os.path.abspath(output_dir)
    while not os.path.exists(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)  # the folder is made by the run: its nearest existing parent's disk
    at = Location(os.path.abspath(output_dir), None)
    try:
        free = free_bytes if free_bytes is not None else shutil.disk_usage(probe).free
    except OSError as e:
        return [_finding(R.TP_ENV_DISK_UNKNOWN, {"dir": probe, "error": e.strerror or str(e)},
                         "free space at `{dir}` could not be read: {error}", "Disk was not checked.", at)]
    v = {"free": Ratio(free / GB), "dir": probe}
    if checkpoint_gb is None:
        return [_finding(R.TP_ENV_DISK_INFO, v, "{free} GB free at `{dir}`; give --checkpoint-gb (and --keep) to "
                                               "judge it", "Measured, not judged.", at)]
    keep = max(keep, 1)
    need, peak = checkpoint_gb * keep, checkpoint_gb * (keep + 1)
    v.update({"size": Ratio(checkpoint_gb), "keep": keep, "needed": Ratio(need), "peak": Ratio(peak),
              "keep1": keep + 1})
    if free / GB < need:
        return [_finding(R.TP_ENV_DISK_INSUFFICIENT, v, "{free} GB free at `{dir}`, {needed} GB needed ({size} GB x "
                                                       "{keep} kept)",
                         "The run fills the disk before it has saved the checkpoints it keeps: a save fails part "
                         "written, often hours in.", at)]
    if free / GB < peak:
        return [_finding(R.TL_ENV_DISK_TIGHT, v, "{free} GB free at `{dir}`: enough for {keep} kept checkpoints "
                                                "({needed} GB), not for {keep1} ({peak} GB)",
                         "Trainers that keep N checkpoints (HF's save_total_limit) write the new one before deleting "
                         "the oldest, so N+1 are on disk for a moment: the save that needs it fails part written.", at)]
    return [_finding(R.TP_ENV_DISK_OK, v, "{free} GB free at `{dir}`, {peak} GB needed at most ({size} GB x {keep1}"
                                         " while the oldest of {keep} is rotated out)",
                     "There is disk for the checkpoints the run keeps.", at)]


# -- checkpoint -------------------------------------------------------------------------------
WEIGHT_EXT = (".pt", ".pth", ".ckpt", ".bin", ".safetensors")


def check_checkpoint(path: str) -> list[Finding]:
    """A checkpoint file, or each weight file of a checkpoint folder (HF's checkpoint-500/)."""
    if os.path.isdir(path):
        files = sorted(os.path.join(path, n) for n in os.listdir(path) if n.endswith(WEIGHT_EXT))
        if not files:
            return [_finding(R.TP_ENV_CKPT_UNREADABLE, {"path": path, "ext": ", ".join(WEIGHT_EXT)},
                             "`{path}` is a folder without a weight file ({ext})",
                             "Nothing in it can be resumed from.", Location(path, None))]
        return [f for p in files for f in _one_checkpoint(p)]
    return _one_checkpoint(path)


def _one_checkpoint(path: str) -> list[Finding]:
    from .core.fsio import open_regular
    from .rules.run_level import TL_CKPT_TRUNCATED, _zip_state

    at = Location(path, None)
    if not os.path.exists(path):
        return [_finding(R.TP_ENV_CKPT_MISSING, {"path": path}, "`{path}` does not exist",
                         "There is nothing to resume from at that path.", at)]
    size = os.path.getsize(path)
    v: dict[str, Any] = {"path": path, "bytes": size, "gb": Ratio(size / GB)}
    if size == 0:
        return [_finding(R.TP_ENV_CKPT_EMPTY, v, "`{path}` is 0 bytes",
                         "A save interrupted before it wrote anything (a full disk, a killed job).", at)]
    try:
        with open_regular(path) as f:
            head = f.read(8)
    except OSError as e:
        v["error"] = e.strerror or str(e)
        return [_finding(R.TP_ENV_CKPT_UNREADABLE, v, "`{path}` cannot be opened: {error}",
                         "The checkpoint cannot be read as it is.", at)]
    if head[:4] == b"PK\x03\x04":
        rule_id, problem = _zip_state(path)
        if rule_id is not None:
            rule = R.TP_ENV_CKPT_TRUNCATED if rule_id == TL_CKPT_TRUNCATED.id else R.TP_ENV_CKPT_CORRUPT
            v["problem"] = problem
            return [_finding(rule, v, "`{path}` ({bytes} bytes): {problem}",
                             "The checkpoint cannot be restored as it is (cut short by a full disk or a killed copy, "
                             "or damaged on disk): resume from an earlier one.", at)]
        import zipfile

        with open_regular(path) as f, zipfile.ZipFile(f) as z:
            names = z.namelist()
        v["members"] = len(names)
        if not any(n.endswith("data.pkl") for n in names):
            return [_finding(R.TP_ENV_CKPT_UNREADABLE, v, "`{path}`: a ZIP of {members} members, none named data.pkl",
                             "A ZIP archive, but not one torch.save wrote.", at)]
        v["storages"] = sum(1 for n in names if "/data/" in n)
        if problem:
            v["problem"] = problem
            return [_finding(R.TL_ENV_CKPT_CRC_NOT_READ, v, "`{path}` ({gb} GB, {storages} tensor storages): {problem}",
                             "The archive's directory is complete; the members' CRCs were not read.", at)]
        return [_finding(R.TP_ENV_CKPT_OK, v, "`{path}`: {gb} GB, {storages} tensor storages, every member's CRC "
                                             "intact (read as a ZIP, never unpickled)",
                         "The checkpoint is a complete torch archive (its contents were not executed or loaded).", at)]
    if path.endswith(".safetensors") or (len(head) == 8 and 0 < int.from_bytes(head, "little") < min(size, 1 << 27)):
        return _safetensors(path, size, v, at)
    if head[:1] == b"\x80":
        return [_finding(R.TP_ENV_CKPT_LEGACY, v, "`{path}` ({gb} GB) is a bare pickle (torch before 1.6)",
                         "Checking it would mean unpickling it, which runs code: not checked.", at)]
    v["head"] = head[:4].hex()
    return [_finding(R.TP_ENV_CKPT_UNREADABLE, v, "`{path}` ({bytes} bytes) is neither a torch ZIP archive, a "
                                                 "safetensors file nor a pickle (first bytes {head})",
                     "This is not a checkpoint a trainer can resume from.", at)]


def _safetensors(path: str, size: int, v: dict[str, Any], at: Location) -> list[Finding]:
    from .core.fsio import open_regular

    with open_regular(path) as f:
        n = int.from_bytes(f.read(8), "little")
        raw = f.read(min(n, 1 << 27))
    try:
        header = json.loads(raw)
        ends = [int(t["data_offsets"][1]) for k, t in header.items() if k != "__metadata__"]
    except (ValueError, KeyError, TypeError, IndexError):
        return [_finding(R.TP_ENV_CKPT_UNREADABLE, v, "`{path}`: the safetensors header is not readable JSON",
                         "The file is not a checkpoint a trainer can resume from.", at)]
    v.update({"tensors": len(ends), "declared": 8 + n + max(ends, default=0)})
    if v["declared"] > size:
        return [_finding(R.TP_ENV_CKPT_TRUNCATED, v, "`{path}`: its header declares {declared} bytes, the file holds "
                                                    "{bytes}", "The save was cut short: resume from an earlier one.",
                         at)]
    return [_finding(R.TP_ENV_CKPT_OK, v, "`{path}`: {gb} GB, {tensors} tensors, every one within the file "
                                         "(safetensors header; no CRC in the format)",
                     "The checkpoint's tensors are all there (a safetensors file is never executed).", at)]


# -- the door -----------------------------------------------------------------------------------
def env_report(module: str | None = None, python: str | None = None, cwd: str | None = None,
               timeout: float | None = None, required_gb: float | None = None, output_dir: str | None = None,
               checkpoint_gb: float | None = None, keep: int = 1, checkpoint: str | None = None,
               th: Thresholds | None = None) -> Report:
    th = th or Thresholds()
    findings: list[Finding] = []
    ran: list[str] = []
    if module:
        findings += check_import(module, python, cwd, th.import_timeout_s if timeout is None else timeout)
        ran.append("env-import")
    if checkpoint:
        findings += check_checkpoint(checkpoint)
        ran.append("env-checkpoint")
    findings += check_memory(required_gb, th.min_free_ram_margin_gb)
    ran.append("env-memory")
    if output_dir:
        findings += check_disk(output_dir, checkpoint_gb, keep)
        ran.append("env-disk")
    from .dataset_report import dataset_verdict as _verdict

    judged = [f for f in findings if f.level != Level.INFO]
    verdict = _verdict(judged) if judged else Level.NOT_CHECKED  # measured only: nothing was judged
    return Report("environment", "env", verdict, findings, ran=ran)


def main(args: argparse.Namespace) -> int:
    from . import config
    from .output import check_text
    from .preflight import exit_code

    th = config.for_path(os.path.join(os.path.abspath(args.cwd or os.getcwd()), "x")).thresholds  # the run's folder
    rep = env_report(args.module, args.python, args.cwd, args.timeout, args.required_gb, args.output_dir,
                     args.checkpoint_gb, args.keep, args.checkpoint, th)
    if args.format == "json":
        from .output import check_json

        print(json.dumps(check_json.document([rep]), indent=2, allow_nan=False))
    elif args.format == "sarif":
        from .output import sarif

        print(json.dumps(sarif.document([rep]), indent=2, allow_nan=False))
    else:
        if not args.quiet:  # what passed is the answer to "can this machine start this run?": say it too
            for f in rep.findings:
                if f.level == Level.PASS:
                    print(f"{f.location.path}: {f.id} [PASS] {f.evidence.text}")
        for line in check_text.render([rep], quiet=args.quiet, verbose=False, full=args.format == "full"):
            print(line)
    return exit_code([rep]) if rep.verdict != Level.NOT_CHECKED else 2
