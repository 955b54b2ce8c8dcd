"""``trainlint env``: each check passes, warns, fails and is NOT-CHECKED on a real case made here (a module in a
folder, a real interpreter, archives written with ``zipfile``, a safetensors file written by hand); RAM and disk
are judged on given numbers so the verdicts do not depend on this machine."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from trainlint import envcheck
from trainlint.core.findings import Level
from trainlint.envcheck import check_checkpoint, check_disk, check_import, check_memory, env_report

PY = sys.executable
GB = 1024 ** 3


def one(findings):  # type: ignore[no-untyped-def]
    assert len(findings) == 1, [(f.id, f.evidence.text) for f in findings]
    f = findings[0]
    return f.id, f.evidence.text


def test_a_local_package_imports_from_its_folder_as_python_dash_m_would(tmp_path):
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "__init__.py").write_text("import json\nVALUE = json.dumps(1)\n")
    (tmp_path / "json.py").write_text("raise RuntimeError('a json.py in the tree')\n")  # cannot break the probe
    rid, text = one(check_import("train", PY, str(tmp_path)))
    assert rid == "TP-ENV-IMPORT-OK"
    assert text.startswith(f"`train` imports with `{PY}` (Python ") and text.endswith(
        f"from `{tmp_path / 'train' / '__init__.py'}`")
    rid, text = one(check_import("train", PY, "/"))  # from another folder it is not there
    assert rid == "TP-ENV-IMPORT-FAIL" and text.startswith("`train`: ModuleNotFoundError: No module named 'train'")


def test_the_failure_is_on_the_last_frame_of_the_users_code(tmp_path):
    (tmp_path / "trainer.py").write_text("import os\n\nfrom helpers import build\n")
    (tmp_path / "helpers.py").write_text("X = 1\n\n\ndef build():\n    pass\n\nimport missing_dependency_xyz\n")
    f, = check_import("trainer", PY, str(tmp_path))
    assert (f.id, f.level) == ("TP-ENV-IMPORT-FAIL", Level.FAIL)
    assert f.evidence.text == (f"`trainer`: ModuleNotFoundError: No module named 'missing_dependency_xyz' — raised at "
                               f"`{tmp_path / 'helpers.py'}` line 7: `import missing_dependency_xyz`")
    assert (f.location.path, f.location.line) == (str(tmp_path / "helpers.py"), 7)
    (tmp_path / "broken.py").write_text("def f(:\n    pass\n")
    f, = check_import("broken", PY, str(tmp_path))
    assert f.evidence.values["type"] == "SyntaxError" and (f.location.path, f.location.line) == (
        str(tmp_path / "broken.py"), 1)


def test_a_hang_is_cut_at_the_time_limit_and_a_crash_is_named(tmp_path):
    (tmp_path / "slow.py").write_text("import time\ntime.sleep(60)\n")
    assert one(check_import("slow", PY, str(tmp_path), timeout=1.0)) == (
        "TP-ENV-IMPORT-TIMEOUT", f"importing `slow` with `{PY}` did not finish in 1 s")
    (tmp_path / "native.py").write_text("import os\n\nos.abort()\n")
    f, = check_import("native", PY, str(tmp_path))
    assert f.id == "TP-ENV-IMPORT-CRASH"
    assert f.evidence.text == (f"importing `native` ended with exit code -6 and no Python exception (faulthandler: in "
                               f"`{tmp_path / 'native.py'}` line 3)")
    assert f.location.line == 3


def test_the_probe_itself_cannot_run(tmp_path):
    assert one(check_import("json", str(tmp_path / "nopython"), str(tmp_path)))[0] == "TP-ENV-PYTHON-UNUSABLE"
    assert one(check_import("json", PY, str(tmp_path / "nowhere"))) == (
        "TP-ENV-CWD-MISSING", f"`{tmp_path / 'nowhere'}` is not a directory")


def test_memory_verdicts_on_given_numbers(monkeypatch):
    m = (31.0, 20.0, "/proc/meminfo")
    assert one(check_memory(None, 4.0, m)) == ("TP-ENV-MEM-INFO", "20 GB available of 31 GB (/proc/meminfo); give "
                                                                  "--required-gb to judge it")
    assert one(check_memory(19.0, 4.0, m)) == ("TP-ENV-MEM-TIGHT", "20 GB available, 19 GB required: a margin of 1 GB,"
                                                                   " under 4 GB (/proc/meminfo)")
    assert one(check_memory(24.0, 4.0, m)) == ("TP-ENV-MEM-INSUFFICIENT", "20 GB available, 24 GB required (31 GB in "
                                                                          "all; /proc/meminfo)")
    assert one(check_memory(8.0, 4.0, m)) == ("TP-ENV-MEM-OK", "20 GB available, 8 GB required: a margin of 12 GB "
                                                               "(/proc/meminfo)")
    monkeypatch.setattr(envcheck, "memory_gb", lambda: None)
    assert one(check_memory(8.0, 4.0))[0] == "TP-ENV-MEM-UNKNOWN"
    assert envcheck.memory_gb.__module__  # the real reader is exercised by env_report below


def test_disk_counts_one_more_checkpoint_than_kept(tmp_path):
    out = str(tmp_path / "run" / "ckpt")  # not made yet: its nearest existing parent's disk
    assert one(check_disk(out, 2.0, 3, free_bytes=5 * GB)) == (
        "TP-ENV-DISK-INSUFFICIENT", f"5 GB free at `{tmp_path}`, 6 GB needed (2 GB x 3 kept)")
    assert one(check_disk(out, 2.0, 3, free_bytes=7 * GB)) == (
        "TL-ENV-DISK-TIGHT", f"7 GB free at `{tmp_path}`: enough for 3 kept checkpoints (6 GB), not for 4 (8 GB)")
    assert one(check_disk(out, 2.0, 3, free_bytes=9 * GB))[0] == "TP-ENV-DISK-OK"
    assert one(check_disk(out, None, 3, free_bytes=9 * GB)) == (
        "TP-ENV-DISK-INFO", f"9 GB free at `{tmp_path}`; give --checkpoint-gb (and --keep) to judge it")


def torch_like(path: Path, payload: bytes = b"\x01" * 4096) -> Path:
    """The layout torch.save writes (archive/data.pkl + archive/data/N), stored uncompressed."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", b"\x80\x02}q\x00.")  # a pickle that is never loaded
        z.writestr("archive/data/0", payload)
        z.writestr("archive/version", b"3\n")
    return path


def test_checkpoints_are_read_as_archives_never_unpickled(tmp_path):
    ok = torch_like(tmp_path / "ok.pt")
    rid, text = one(check_checkpoint(str(ok)))
    assert rid == "TP-ENV-CKPT-OK" and "1 tensor storages, every member's CRC intact" in text
    raw = ok.read_bytes()
    (tmp_path / "cut.pt").write_bytes(raw[: len(raw) // 2])
    assert one(check_checkpoint(str(tmp_path / "cut.pt")))[0] == "TP-ENV-CKPT-TRUNCATED"
    bad = bytearray(raw)
    at = raw.index(b"\x01" * 4096)
    bad[at + 100] = 0x02
    (tmp_path / "bad.pt").write_bytes(bytes(bad))
    assert one(check_checkpoint(str(tmp_path / "bad.pt"))) == (
        "TP-ENV-CKPT-CORRUPT", f"`{tmp_path / 'bad.pt'}` ({len(raw)} bytes): member archive/data/0 fails its CRC")
    (tmp_path / "empty.pt").write_bytes(b"")
    assert one(check_checkpoint(str(tmp_path / "empty.pt"))) == ("TP-ENV-CKPT-EMPTY", f"`{tmp_path / 'empty.pt'}` is 0 "
                                                                                     "bytes")
    assert one(check_checkpoint(str(tmp_path / "gone.pt")))[0] == "TP-ENV-CKPT-MISSING"
    (tmp_path / "old.pt").write_bytes(b"\x80\x02\x8a\nl\xfc\x9cF\xf9 j\xa8P\x19.")  # a legacy pickle: never loaded
    assert one(check_checkpoint(str(tmp_path / "old.pt")))[0] == "TP-ENV-CKPT-LEGACY"
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as z:
        z.writestr("readme.txt", "hello")
    assert one(check_checkpoint(str(tmp_path / "other.zip"))) == (
        "TP-ENV-CKPT-UNREADABLE", f"`{tmp_path / 'other.zip'}`: a ZIP of 1 members, none named data.pkl")


def safetensors(path: Path, nbytes: int, cut: int = 0) -> Path:
    header = json.dumps({"w": {"dtype": "F32", "shape": [nbytes // 4], "data_offsets": [0, nbytes]}}).encode()
    data = struct.pack("<Q", len(header)) + header + b"\x00" * nbytes
    path.write_bytes(data[: len(data) - cut])
    return path


def test_safetensors_and_a_checkpoint_folder(tmp_path):
    d = tmp_path / "checkpoint-500"
    d.mkdir()
    safetensors(d / "model.safetensors", 4096)
    torch_like(d / "optimizer.pt")
    (d / "trainer_state.json").write_text("{}")
    got = [f.id for f in check_checkpoint(str(d))]
    assert got == ["TP-ENV-CKPT-OK", "TP-ENV-CKPT-OK"]
    cut = safetensors(tmp_path / "cut.safetensors", 4096, cut=100)
    rid, text = one(check_checkpoint(str(cut)))
    assert rid == "TP-ENV-CKPT-TRUNCATED" and text.endswith("bytes, the file holds " + str(cut.stat().st_size))


def test_the_report_verdict_and_nothing_judged(tmp_path):
    assert env_report().verdict == Level.NOT_CHECKED  # memory measured, nothing asked: nothing judged
    rep = env_report(checkpoint=str(torch_like(tmp_path / "ok.pt")))
    assert rep.verdict == Level.PASS and rep.ran == ["env-checkpoint", "env-memory"]


def test_cli_json_sarif_and_exit_codes(tmp_path):
    (tmp_path / "trainer.py").write_text("x = 1\nraise ValueError('bad config')\n")
    cli = [PY, "-m", "trainlint.cli", "env", "--python", PY, "--cwd", str(tmp_path)]
    out = subprocess.run([*cli, "--module", "trainer", "--format", "sarif"], capture_output=True, text=True,
                         cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    res = json.loads(out.stdout)["runs"][0]["results"]
    fail = next(r for r in res if r["ruleId"] == "TP-ENV-IMPORT-FAIL")
    assert fail["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "trainer.py"
    assert fail["locations"][0]["physicalLocation"]["region"]["startLine"] == 2
    out = subprocess.run([*cli, "--module", "json", "--format", "json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout
    doc = json.loads(out.stdout)
    assert [f["id"] for r in doc["reports"] for f in r["findings"]] == ["TP-ENV-IMPORT-OK", "TP-ENV-MEM-INFO"]
    out = subprocess.run([PY, "-m", "trainlint.cli", "env"], capture_output=True, text=True)
    assert out.returncode == 2 and "TP-ENV-MEM-INFO" in out.stdout


@pytest.mark.skipif(not os.path.exists("/proc/meminfo"), reason="no /proc/meminfo here")
def test_memory_is_read_from_this_machine():
    total, avail, source = envcheck.memory_gb()  # type: ignore[misc]
    assert 0 < avail <= total and source in ("/proc/meminfo", "the cgroup memory limit")


def test_the_time_limit_and_margin_come_from_the_runs_configuration(tmp_path):
    (tmp_path / "slow.py").write_text("import time\ntime.sleep(60)\n")
    (tmp_path / ".trainlint.yaml").write_text("thresholds:\n  import_timeout_s: 1\n")
    out = subprocess.run([PY, "-m", "trainlint.cli", "env", "--module", "slow", "--python", PY, "--cwd", str(tmp_path),
                          "--format", "json"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1, out.stderr
    [f] = [f for r in json.loads(out.stdout)["reports"] for f in r["findings"] if f["id"].startswith("TP-ENV-IMPORT")]
    assert f["id"] == "TP-ENV-IMPORT-TIMEOUT" and f["evidence"]["values"]["timeout"] == 1.0
