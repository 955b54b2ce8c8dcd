"""Server settings from ``initializationOptions`` and ``workspace/configuration`` (section ``trainlint``).

An invalid value is reported (one sentence per problem) and replaced by its default; the server
never refuses to start over a setting.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SEVERITIES = ("error", "warning", "information", "hint", "off")
DEFAULT_SEVERITY = {"FAIL": "error", "WARN": "warning", "INFO": "information", "NOT-CHECKED": "hint"}
_LEVEL_KEYS = {"fail": "FAIL", "warn": "WARN", "warning": "WARN", "info": "INFO", "notchecked": "NOT-CHECKED",
               "not-checked": "NOT-CHECKED", "not_checked": "NOT-CHECKED"}


@dataclass
class Settings:
    scope: str = "workspace"                 # "workspace" | "open-files"
    severity: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_SEVERITY))
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    debounce_ms: int = 150
    watch: bool = True
    pull_diagnostics: bool = False
    max_diagnostics_per_file: int = 200
    ignore_patterns: list[str] = field(default_factory=list)  # globs of files that get no diagnostics
    line_breaks: str = "auto"                # "auto" (from clientInfo) | "lsp" | "lf": how the client splits lines

    @classmethod
    def parse(cls, raw: Any) -> tuple[Settings, list[str]]:
        s = cls()
        errors: list[str] = []
        if raw is None:
            return s, errors
        if not isinstance(raw, dict):
            return s, [f"trainlint settings must be an object, got {type(raw).__name__}; using defaults"]
        if isinstance(raw.get("settings"), dict):  # VS Code client: {"settings": {...}, "globalSettings": ...}
            raw = {**raw, **raw["settings"]}
        raw = raw.get("trainlint", raw) if isinstance(raw.get("trainlint"), dict) else raw
        scope = raw.get("scope")
        if scope is not None:
            if scope in ("workspace", "open-files", "openFiles"):
                s.scope = "open-files" if scope != "workspace" else "workspace"
            else:
                errors.append(f"trainlint.scope must be \"workspace\" or \"open-files\", got {scope!r}")
        sev = raw.get("severity")
        if sev is not None:
            if isinstance(sev, dict):
                for k, v in sev.items():
                    level = _LEVEL_KEYS.get(str(k).lower().replace(" ", ""))
                    if level is None:
                        errors.append(f"trainlint.severity has an unknown level {k!r} (fail, warn, info, notChecked)")
                    elif str(v).lower() not in SEVERITIES:
                        errors.append(f"trainlint.severity.{k} must be one of {', '.join(SEVERITIES)}, got {v!r}")
                    else:
                        s.severity[level] = str(v).lower()
            else:
                errors.append("trainlint.severity must be an object such as {\"fail\": \"error\"}")
        for key in ("select", "ignore"):
            v = raw.get(key)
            if v is None:
                continue
            if isinstance(v, str):
                v = [x.strip() for x in v.split(",") if x.strip()]
            if isinstance(v, list) and all(isinstance(x, str) for x in v):
                setattr(s, key, list(v))
            else:
                errors.append(f"trainlint.{key} must be a list of rule IDs or prefixes")
        v = raw.get("ignorePatterns")
        if v is not None:
            if isinstance(v, list) and all(isinstance(x, str) for x in v):
                s.ignore_patterns = list(v)
            else:
                errors.append("trainlint.ignorePatterns must be a list of glob patterns such as \"**/old_runs/**\"")
        v = raw.get("lineBreaks")
        if v is not None:
            if v in ("auto", "lsp", "lf"):
                s.line_breaks = v
            else:
                errors.append(f"trainlint.lineBreaks must be \"auto\", \"lsp\" or \"lf\", got {str(v)[:40]!r}")
        # Every number has a range: debounceMs 1e12 used to stop re-judging for good, 1e30 crashed the watcher.
        for key, attr, lo, hi in (("debounceMs", "debounce_ms", 0, 60_000),
                                  ("maxDiagnosticsPerFile", "max_diagnostics_per_file", 1, 10_000)):
            v = raw.get(key)
            if v is None:
                continue
            if isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi:
                setattr(s, attr, v)
            else:
                errors.append(f"trainlint.{key} must be an integer from {lo} to {hi}, got {str(v)[:40]}; "
                              f"using {getattr(s, attr)}")
        for key, attr in (("watch", "watch"), ("pullDiagnostics", "pull_diagnostics")):
            v = raw.get(key)
            if v is None:
                continue
            if isinstance(v, bool):
                setattr(s, attr, v)
            else:
                errors.append(f"trainlint.{key} must be true or false, got {v!r}")
        return s, errors
