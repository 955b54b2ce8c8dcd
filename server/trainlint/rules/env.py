"""The rules of ``trainlint env`` ("can this machine start this run?"): trainproof 0.22.0's ``env`` IDs where the
meaning is the same, ``TL-*`` where it is not. The checks are in :mod:`trainlint.envcheck`."""

from __future__ import annotations

from .base import Level, Rule
from .registry import describe


def _r(rid: str, level: Level, check: str, title: str) -> Rule:
    return Rule(rid, level, check, title)


TP_ENV_IMPORT_OK = _r("TP-ENV-IMPORT-OK", Level.PASS, "env-import", "The training module imports")
TP_ENV_IMPORT_FAIL = _r("TP-ENV-IMPORT-FAIL", Level.FAIL, "env-import", "The training module does not import")
TP_ENV_IMPORT_TIMEOUT = _r("TP-ENV-IMPORT-TIMEOUT", Level.FAIL, "env-import",
                           "Importing the training module did not finish in time")
TP_ENV_IMPORT_CRASH = _r("TP-ENV-IMPORT-CRASH", Level.FAIL, "env-import",
                         "Importing the training module crashed the interpreter")
TP_ENV_PYTHON_UNUSABLE = _r("TP-ENV-PYTHON-UNUSABLE", Level.NOT_CHECKED, "env-import",
                            "The interpreter to probe with cannot be run")
TP_ENV_CWD_MISSING = _r("TP-ENV-CWD-MISSING", Level.NOT_CHECKED, "env-import",
                        "The working directory to probe from does not exist")
TP_ENV_MEM_OK = _r("TP-ENV-MEM-OK", Level.PASS, "env-memory", "Enough RAM for the run, with margin")
TP_ENV_MEM_TIGHT = _r("TP-ENV-MEM-TIGHT", Level.WARN, "env-memory", "RAM for the run, with little margin")
TP_ENV_MEM_INSUFFICIENT = _r("TP-ENV-MEM-INSUFFICIENT", Level.FAIL, "env-memory", "Less RAM than the run needs")
TP_ENV_MEM_INFO = _r("TP-ENV-MEM-INFO", Level.INFO, "env-memory", "RAM measured (no requirement given)")
TP_ENV_MEM_UNKNOWN = _r("TP-ENV-MEM-UNKNOWN", Level.NOT_CHECKED, "env-memory", "RAM could not be measured")
TP_ENV_DISK_OK = _r("TP-ENV-DISK-OK", Level.PASS, "env-disk", "Enough disk for the checkpoints kept")
TL_ENV_DISK_TIGHT = _r("TL-ENV-DISK-TIGHT", Level.WARN, "env-disk",
                       "Disk for the checkpoints kept, but not for one more while the oldest is rotated out")
TP_ENV_DISK_INSUFFICIENT = _r("TP-ENV-DISK-INSUFFICIENT", Level.FAIL, "env-disk",
                              "Not enough disk for the checkpoints kept")
TP_ENV_DISK_INFO = _r("TP-ENV-DISK-INFO", Level.INFO, "env-disk", "Free disk measured (no checkpoint size given)")
TP_ENV_DISK_UNKNOWN = _r("TP-ENV-DISK-UNKNOWN", Level.NOT_CHECKED, "env-disk", "Free disk could not be measured")
TP_ENV_CKPT_OK = _r("TP-ENV-CKPT-OK", Level.PASS, "env-checkpoint", "The checkpoint is a complete torch archive")
TP_ENV_CKPT_MISSING = _r("TP-ENV-CKPT-MISSING", Level.FAIL, "env-checkpoint", "The checkpoint does not exist")
TP_ENV_CKPT_EMPTY = _r("TP-ENV-CKPT-EMPTY", Level.FAIL, "env-checkpoint", "The checkpoint is empty")
TP_ENV_CKPT_TRUNCATED = _r("TP-ENV-CKPT-TRUNCATED", Level.FAIL, "env-checkpoint", "The checkpoint is cut short")
TP_ENV_CKPT_CORRUPT = _r("TP-ENV-CKPT-CORRUPT", Level.FAIL, "env-checkpoint", "The checkpoint fails its CRC")
TP_ENV_CKPT_UNREADABLE = _r("TP-ENV-CKPT-UNREADABLE", Level.FAIL, "env-checkpoint",
                            "The file is not a torch checkpoint")
TP_ENV_CKPT_LEGACY = _r("TP-ENV-CKPT-LEGACY", Level.NOT_CHECKED, "env-checkpoint",
                        "A legacy pickle checkpoint: not checked without unpickling")
TL_ENV_CKPT_CRC_NOT_READ = _r("TL-ENV-CKPT-CRC-NOT-READ", Level.NOT_CHECKED, "env-checkpoint",
                              "The checkpoint's archive is intact, its member CRCs were not read (too large)")

RULES = (TP_ENV_IMPORT_OK, TP_ENV_IMPORT_FAIL, TP_ENV_IMPORT_TIMEOUT, TP_ENV_IMPORT_CRASH, TP_ENV_PYTHON_UNUSABLE,
         TP_ENV_CWD_MISSING, TP_ENV_MEM_OK, TP_ENV_MEM_TIGHT, TP_ENV_MEM_INSUFFICIENT, TP_ENV_MEM_INFO,
         TP_ENV_MEM_UNKNOWN, TP_ENV_DISK_OK, TL_ENV_DISK_TIGHT, TP_ENV_DISK_INSUFFICIENT, TP_ENV_DISK_INFO,
         TP_ENV_DISK_UNKNOWN, TP_ENV_CKPT_OK, TP_ENV_CKPT_MISSING, TP_ENV_CKPT_EMPTY, TP_ENV_CKPT_TRUNCATED,
         TP_ENV_CKPT_CORRUPT, TP_ENV_CKPT_UNREADABLE, TP_ENV_CKPT_LEGACY, TL_ENV_CKPT_CRC_NOT_READ)

describe(*RULES, command="trainlint env")
