"""Every ``trainlint.*`` setting, declared once: name, type, default, range, description, scope.

The server's parser is derived from ``SCHEMA``, and so are the VS Code extension's ``contributes.configuration``
(package.json) and its client-side defaults (``src/settings.generated.ts``), through ``trainlint settings
--json`` at the extension's build; ``tests/test_registries.py`` fails when they drift. Why: each default used to
be written three times (here, settings.ts, package.json) and four settings were missing from package.json.

Settings come from ``initializationOptions`` and ``workspace/configuration`` (section ``trainlint``). An invalid
value is reported (one sentence per problem) and replaced by its default; the server never refuses to start
over a setting.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SEVERITIES = ("error", "warning", "information", "hint", "off")
DEFAULT_SEVERITY = {"FAIL": "error", "WARN": "warning", "INFO": "information", "NOT-CHECKED": "hint"}
_LEVEL_KEYS = {"fail": "FAIL", "warn": "WARN", "warning": "WARN", "info": "INFO", "notchecked": "NOT-CHECKED",
               "not-checked": "NOT-CHECKED", "not_checked": "NOT-CHECKED"}
_SEVERITY_KEY = {"FAIL": "fail", "WARN": "warn", "INFO": "info", "NOT-CHECKED": "notChecked"}


@dataclass(frozen=True)
class Setting:
    """One setting. ``attr`` is the ``Settings`` field the server fills; ``None``: the client's own (how it starts
    the server, its notifications), which the server never reads."""

    key: str
    kind: str                     # "enum" | "bool" | "int" | "strings" | "severity"
    default: Any
    description: str
    attr: str | None = None
    enum: tuple[str, ...] = ()
    enum_descriptions: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    scope: str | None = None      # VS Code's configuration scope ("machine" for what runs a program)
    aliases: tuple[tuple[str, str], ...] = ()  # (another spelling the server accepts, the enum value it means)


SCHEMA: tuple[Setting, ...] = (
    # -- the client's: which program runs the server. What names a program to run has VS Code's "machine" scope:
    # a cloned repository's .vscode/settings.json cannot set it (issue 25 item 7).
    Setting("interpreter", "strings", [], "Path to a Python interpreter with trainlint installed, as an array "
            "([\"/path/to/python\"]). Empty: the Python extension's selected environment, else python3.",
            scope="machine"),
    Setting("path", "strings", [], "A trainlint executable to run (as an array: [\"/path/to/trainlint\"]). Set, it "
            "wins over the interpreter and the bundled copy.", scope="machine"),
    Setting("importStrategy", "enum", "useBundled", "Which trainlint runs the server.", scope="resource",
            enum=("useBundled", "fromEnvironment"), enum_descriptions=(
                "The trainlint shipped with this extension, installed on request into a private environment in the "
                "extension's storage (its dependencies come from the package index): the compiled wheel where it fits "
                "(the Python and platform the .vsix was built with), else the pure-Python one; the interpreter's own "
                "trainlint until then.", "Only the trainlint installed in the selected interpreter.")),
    Setting("args", "strings", [], "Extra arguments for `trainlint serve` (for example [\"--log-level\", "
            "\"INFO\"]).", scope="machine"),
    Setting("showNotifications", "enum", "onError", "When the extension shows notifications (the output channel "
            "always has everything).", enum=("off", "onError", "onWarning", "always")),
    # -- the server's -------------------------------------------------------------------------------------------
    Setting("ignorePatterns", "strings", [], "Glob patterns of files that get no diagnostics (e.g. "
            "[\"**/old_runs/**\"]).", attr="ignore_patterns", scope="resource"),
    Setting("scope", "enum", "workspace", "Judge every training log in the workspace, or only the logs open in an "
            "editor.", attr="scope", enum=("workspace", "open-files"), aliases=(("openFiles", "open-files"),)),
    Setting("severity.fail", "severity", "error", "How a FAIL finding is shown.", attr="severity", enum=SEVERITIES),
    Setting("severity.warn", "severity", "warning", "How a WARN finding is shown.", attr="severity",
            enum=SEVERITIES),
    Setting("severity.info", "severity", "information", "How an INFO finding is shown.", attr="severity",
            enum=SEVERITIES),
    Setting("severity.notChecked", "severity", "hint", "How a NOT-CHECKED finding is shown.", attr="severity",
            enum=SEVERITIES),
    Setting("select", "strings", [], "Rule IDs or prefixes to run (empty: all).", attr="select"),
    Setting("ignore", "strings", [], "Rule IDs or prefixes to skip.", attr="ignore"),
    # Every number has a range: debounceMs 1e12 used to stop re-judging for good, 1e30 crashed the watcher.
    Setting("debounceMs", "int", 150, "Milliseconds to wait after a file changes before judging it again.",
            attr="debounce_ms", minimum=0, maximum=60_000),
    Setting("maxDiagnosticsPerFile", "int", 200, "At most this many diagnostics on one file.",
            attr="max_diagnostics_per_file", minimum=1, maximum=10_000),
    Setting("watch", "bool", True, "Watch the workspace's run folders for changes on disk (needed where the "
            "client does not watch files, as in Neovim).", attr="watch"),
    Setting("pullDiagnostics", "bool", False, "Answer textDocument/diagnostic requests instead of publishing "
            "(for clients that pull).", attr="pull_diagnostics"),
    Setting("lineBreaks", "enum", "auto", "How the client splits a log's lines: auto (Neovim, Vim, Emacs and "
            "Kakoune split at \\n only, as grep -n counts; others as the LSP says, a lone \\r too), lsp, or lf.",
            attr="line_breaks", enum=("auto", "lsp", "lf")),
    Setting("trace.server", "enum", "off", "Traces the messages between VS Code and the server.",
            enum=("off", "messages", "verbose")),
)


def _default(attr: str) -> Any:
    return next(s.default for s in SCHEMA if s.attr == attr)


@dataclass
class Settings:
    scope: str = _default("scope")
    severity: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_SEVERITY))
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    debounce_ms: int = _default("debounce_ms")
    watch: bool = _default("watch")
    pull_diagnostics: bool = _default("pull_diagnostics")
    max_diagnostics_per_file: int = _default("max_diagnostics_per_file")
    ignore_patterns: list[str] = field(default_factory=list)  # globs of files that get no diagnostics
    line_breaks: str = _default("line_breaks")  # "auto" (from clientInfo) | "lsp" | "lf": how the client splits lines

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
        for spec in SCHEMA:
            if spec.attr is None or spec.kind == "severity":
                continue
            v = raw.get(spec.key)
            if v is not None:
                _parse_one(s, spec, v, errors)
        _parse_severity(s, raw.get("severity"), errors)
        return s, errors


def _parse_one(s: Settings, spec: Setting, v: Any, errors: list[str]) -> None:
    assert spec.attr is not None
    name = f"trainlint.{spec.key}"
    if spec.kind == "enum":
        value = v if v in spec.enum else dict(spec.aliases).get(v) if isinstance(v, str) else None
        if value is not None:
            setattr(s, spec.attr, value)
        else:
            errors.append(f"{name} must be {' or '.join(repr(x).replace(chr(39), chr(34)) for x in spec.enum)}, "
                          f"got {v!r}")
    elif spec.kind == "bool":
        if isinstance(v, bool):
            setattr(s, spec.attr, v)
        else:
            errors.append(f"{name} must be true or false, got {v!r}")
    elif spec.kind == "int":
        lo, hi = spec.minimum, spec.maximum
        if isinstance(v, int) and not isinstance(v, bool) and (lo is None or v >= lo) and (hi is None or v <= hi):
            setattr(s, spec.attr, v)
        else:
            errors.append(f"{name} must be an integer from {lo} to {hi}, got {str(v)[:40]}; using "
                          f"{getattr(s, spec.attr)}")
    elif spec.kind == "strings":
        if isinstance(v, str) and spec.key in ("select", "ignore"):  # a comma-separated string of rule IDs
            v = [x.strip() for x in v.split(",") if x.strip()]
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            if spec.key in ("select", "ignore"):  # an unknown rule ID is named, never silently selects nothing
                from ..rules.ids import validate  # start-up: the rule registry, only when IDs are given

                kept, bad = validate(name, [x.strip() for x in v])
                setattr(s, spec.attr, kept)
                errors.extend(message for _, message in bad)
            else:
                setattr(s, spec.attr, list(v))
        elif spec.key == "ignorePatterns":
            errors.append(f"{name} must be a list of glob patterns such as \"**/old_runs/**\"")
        else:
            errors.append(f"{name} must be a list of rule IDs or prefixes")


def _parse_severity(s: Settings, sev: Any, errors: list[str]) -> None:
    """Clients send the four ``severity.*`` settings as one object: ``{"fail": "error", ...}``."""
    if sev is None:
        return
    if not isinstance(sev, dict):
        errors.append("trainlint.severity must be an object such as {\"fail\": \"error\"}")
        return
    for k, v in sev.items():
        level = _LEVEL_KEYS.get(str(k).lower().replace(" ", ""))
        if level is None:
            errors.append(f"trainlint.severity has an unknown level {k!r} (fail, warn, info, notChecked)")
        elif str(v).lower() not in SEVERITIES:
            errors.append(f"trainlint.severity.{k} must be one of {', '.join(SEVERITIES)}, got {v!r}")
        else:
            s.severity[level] = str(v).lower()


def vscode_configuration() -> dict[str, Any]:
    """``contributes.configuration`` for the extension's package.json."""
    props: dict[str, Any] = {}
    for spec in SCHEMA:
        p: dict[str, Any] = {}
        if spec.kind in ("enum", "severity"):
            p.update(type="string", enum=list(spec.enum))
        elif spec.kind == "bool":
            p["type"] = "boolean"
        elif spec.kind == "int":
            p.update(type="integer", minimum=spec.minimum, maximum=spec.maximum)
        else:
            p.update(type="array", items={"type": "string"})
        p["default"] = spec.default
        if spec.scope:
            p["scope"] = spec.scope
        if spec.enum_descriptions:
            p["enumDescriptions"] = list(spec.enum_descriptions)
        p["description"] = spec.description
        props[f"trainlint.{spec.key}"] = p
    return {"title": "trainlint", "properties": props}


def server_defaults() -> dict[str, Any]:
    """What the client sends the server when the user set nothing: every server setting and its default."""
    return {spec.key: spec.default for spec in SCHEMA if spec.attr is not None}


assert {_SEVERITY_KEY[k] for k in DEFAULT_SEVERITY} == {s.key.split(".")[1] for s in SCHEMA if s.kind == "severity"}
assert all(DEFAULT_SEVERITY[lv] == next(s.default for s in SCHEMA if s.key == f"severity.{k}")
           for lv, k in _SEVERITY_KEY.items())
