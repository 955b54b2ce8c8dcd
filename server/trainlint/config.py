r"""Project configuration: ``.trainlint.yaml`` (``yaml.safe_load`` only) or ``[tool.trainlint]``.

```yaml
roles:                 # series name (or glob) -> role; replaces the default for that role
  my_loss: train-loss
thresholds:
  max_loss_divergence_ratio: 2.0
select: [TP, TL]       # rule IDs or prefixes
ignore: [TP-THROUGHPUT]
baseline:              # run glob -> baseline log (compare rules)
  "runs/*": runs/baseline/trainer_state.json
formats:               # in-house prints: a file glob and line patterns with a `step` group and metric groups
  - files: "logs/*.out"
    lines: ['ep=\d+ it=(?P<step>\d+) loss=(?P<loss>\S+)']
```
An invalid entry is reported and skipped; the rest of the file still applies.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from .core.fsio import open_regular
from .core.model import Role
from .core.roles import ROLE_NAMES, RoleMap
from .rules.thresholds import Thresholds

if TYPE_CHECKING:
    from typing import Any

CONFIG_NAMES = (".trainlint.yaml", ".trainlint.yml")
# A configuration is a page of settings; a cloned repository's 30 MB one (2 M `select` items) took 78 s and
# 1.5 GB to parse and froze the server for 150 s. Over this it is not read and says so.
MAX_CONFIG_BYTES = 1 << 20


@dataclass
class Config:
    roles: RoleMap = field(default_factory=RoleMap)
    thresholds: Thresholds = field(default_factory=Thresholds)
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    baseline: dict[str, str] = field(default_factory=dict)
    source: str | None = None
    errors: list[str] = field(default_factory=list)
    formats: list[Any] = field(default_factory=list)            # readers.custom.UserFormat
    # `datasets:` — globs of fine-tuning datasets (relative to the configuration's folder) and their options
    datasets: list[str] = field(default_factory=list)
    dataset_options: dict[str, Any] = field(default_factory=dict)  # tokenizer, max_len, text_field, chat_field
    # (line in the configuration file, message) for errors that have a place, for the editor
    placed: list[tuple[int, str]] = field(default_factory=list)

    def names_dataset(self, path: str) -> bool:
        """Whether a `datasets:` glob matches ``path`` (relative to the configuration's folder)."""
        from fnmatch import fnmatchcase

        if not self.datasets or not self.source:
            return False
        rel = os.path.relpath(os.path.abspath(path), os.path.dirname(os.path.abspath(self.source))).replace(os.sep, "/")
        return not rel.startswith("../") and any(fnmatchcase(rel, g) or fnmatchcase(os.path.basename(rel), g)
                                                 for g in self.datasets)

    def format_for(self, path: str) -> Any:
        """The user format whose glob matches ``path`` (relative to the configuration's folder), or None."""
        from fnmatch import fnmatchcase

        for uf in self.formats:
            rel = os.path.relpath(os.path.abspath(path), uf.base).replace(os.sep, "/")
            if not rel.startswith("../") and (fnmatchcase(rel, uf.files) or fnmatchcase(os.path.basename(rel),
                                                                                         uf.files)):
                return uf
        return None

    def enabled(self, rule_id: str) -> bool:
        if self.select and not any(rule_id == s or rule_id.startswith(s) for s in self.select):
            return False
        return not any(rule_id == s or rule_id.startswith(s) for s in self.ignore)


def from_mapping(data: Any, source: str | None = None, lines: dict[tuple[Any, ...], int] | None = None) -> Config:
    cfg = Config(source=source)
    if data is None:
        return cfg
    if not isinstance(data, dict):
        cfg.errors.append(f"{source or 'configuration'}: expected a mapping at the top level")
        return cfg
    known = {"roles", "thresholds", "select", "ignore", "baseline", "formats", "datasets"}
    for key in data:
        if key not in known:
            cfg.errors.append(f"unknown setting {key!r} (known: {', '.join(sorted(known))})")
    roles = data.get("roles") or {}
    if isinstance(roles, dict):
        overrides: dict[str, Role] = {}
        for name, role in roles.items():
            r = ROLE_NAMES.get(str(role).lower())
            if r is None:
                cfg.errors.append(f"roles: {name!r} has unknown role {role!r} (known: "
                                  f"{', '.join(x.value for x in Role)})")
            else:
                overrides[str(name)] = r
        cfg.roles = RoleMap(overrides)
    else:
        cfg.errors.append("roles: expected a mapping of series name to role")
    th = data.get("thresholds") or {}
    if isinstance(th, dict):
        cfg.thresholds, errs = Thresholds.with_overrides(th)
        cfg.errors.extend(f"thresholds: {e}" for e in errs)
    else:
        cfg.errors.append("thresholds: expected a mapping of name to number")
    for key in ("select", "ignore"):
        v = data.get(key) or []
        if isinstance(v, str):
            v = [v]
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            from .rules.ids import validate  # start-up: only a configuration that names rules

            kept, bad = validate(key, [x.strip() for x in v])
            setattr(cfg, key, kept)
            for j, message in bad:
                line = (lines or {}).get((key, j)) or (lines or {}).get((key,))
                cfg.errors.append(f"line {line}: {message}" if line else message)
                if line:
                    cfg.placed.append((line, message))
        else:
            cfg.errors.append(f"{key}: expected a list of rule IDs or prefixes")
    bl = data.get("baseline") or {}
    if isinstance(bl, dict) and all(isinstance(k, str) and isinstance(x, str) for k, x in bl.items()):
        cfg.baseline = dict(bl)
    elif isinstance(bl, str):
        cfg.baseline = {"*": bl}
    else:
        cfg.errors.append("baseline: expected a mapping of run glob to baseline path")
    _formats(cfg, data.get("formats"), lines or {})
    _datasets(cfg, data.get("datasets"))
    return cfg


DATASET_OPTIONS = {"tokenizer": str, "max_len": int, "text_field": str, "chat_field": str}


def _datasets(cfg: Config, raw: Any) -> None:
    """``datasets: [glob, ...]`` or ``datasets: {files: [glob, ...], tokenizer: path, max_len: N, ...}``."""
    if raw is None:
        return
    if isinstance(raw, dict):
        opts = {k: v for k, v in raw.items() if k != "files"}
        for k, v in opts.items():
            kind = DATASET_OPTIONS.get(k)
            if kind is None:
                cfg.errors.append(f"datasets: unknown option {k!r} (known: files, {', '.join(DATASET_OPTIONS)})")
            elif not isinstance(v, kind) or isinstance(v, bool) or (kind is int and not 0 < v <= 10_000_000):
                cfg.errors.append(f"datasets.{k}: expected {'a positive integer' if kind is int else 'a string'}")
            else:
                cfg.dataset_options[k] = v
        raw = raw.get("files")
    if isinstance(raw, str):
        raw = [raw]
    if isinstance(raw, list) and all(isinstance(g, str) for g in raw):
        cfg.datasets = list(raw)
    else:
        cfg.errors.append("datasets: expected a list of file globs (or {files: [...], tokenizer: ..., max_len: ...})")


def _formats(cfg: Config, raw: Any, lines: dict[tuple[Any, ...], int]) -> None:
    """``formats:`` -> UserFormat entries; a bad entry is an error on its line of the YAML file."""
    import re

    from .readers.custom import (  # start-up: only a configuration with `formats:` needs it
        UnsupportedPattern,
        UserFormat,
        compile_user_pattern,
    )

    if raw is None:
        return
    base = os.path.dirname(os.path.abspath(cfg.source)) if cfg.source else os.getcwd()

    def bad(where: tuple[Any, ...], message: str) -> None:
        line = lines.get(where) or lines.get(where[:2]) or lines.get(where[:1])
        cfg.errors.append(f"line {line}: {message}" if line else message)
        if line:
            cfg.placed.append((line, message))

    if not isinstance(raw, list):
        bad(("formats",), "formats: expected a list of {files: <glob>, lines: [<regex>, ...]}")
        return
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict) or not isinstance(entry.get("files"), str):
            bad(("formats", i), f"formats[{i}]: expected {{files: <glob>, lines: [<regex>, ...]}}")
            continue
        pats = entry.get("lines")
        pats = [pats] if isinstance(pats, str) else pats
        if not isinstance(pats, list) or not pats:
            bad(("formats", i, "lines"), f"formats[{i}].lines: expected a list of regular expressions")
            continue
        compiled = []
        for j, src in enumerate(pats):
            try:
                pat = compile_user_pattern(str(src))
            except re.error as e:
                bad(("formats", i, "lines", j), f"formats[{i}].lines[{j}]: not a regular expression ({e})")
                continue
            except UnsupportedPattern as e:
                bad(("formats", i, "lines", j), f"formats[{i}].lines[{j}]: {e}")
                continue
            groups = set(pat.groupindex)
            if "step" not in groups or len(groups) < 2:
                bad(("formats", i, "lines", j), f"formats[{i}].lines[{j}]: needs a group named step and one named "
                    "group per metric, e.g. it=(?P<step>\\d+) loss=(?P<loss>\\S+)")
                continue
            compiled.append(pat)
        if compiled:
            cfg.formats.append(UserFormat(entry["files"], tuple(compiled), base))


def _yaml_lines(node: Any, path: tuple[Any, ...] = ()) -> dict[tuple[Any, ...], int]:
    """1-based line of every key and list item of a composed YAML document, by its path."""
    import yaml

    out: dict[tuple[Any, ...], int] = {}
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            key = (*path, k.value)
            out[key] = k.start_mark.line + 1
            out.update(_yaml_lines(v, key))
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            out[(*path, i)] = v.start_mark.line + 1
            out.update(_yaml_lines(v, (*path, i)))
    return out


def project_root(start: str) -> str:
    """How far up a configuration is looked for: the nearest folder with ``.git`` at or above ``start``, else
    the working directory when ``start`` is inside it, else ``start``'s own folder. Never ``/`` or ``/tmp`` for a
    run that merely sits there: a stranger's configuration above a project must not silence its FAILs."""
    d = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    probe = d
    while True:
        if os.path.exists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    cwd = os.getcwd()
    return cwd if d == cwd or d.startswith(cwd.rstrip(os.sep) + os.sep) else d


def find_config(start: str, stop: str | None = None) -> str | None:
    """The nearest .trainlint.yaml (or pyproject.toml with [tool.trainlint]) at or above ``start``, up to
    ``stop`` (the workspace folder in the editor; :func:`project_root` otherwise) and no further."""
    d = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    stop = os.path.abspath(stop) if stop else project_root(start)
    if not (d == stop or d.startswith(stop.rstrip(os.sep) + os.sep)):
        stop = d
    while True:
        for name in CONFIG_NAMES:
            p = os.path.join(d, name)
            if os.path.isfile(p):
                return p
        pp = os.path.join(d, "pyproject.toml")
        if os.path.isfile(pp) and _pyproject_section(pp) is not None:
            return pp
        parent = os.path.dirname(d)
        if parent == d or d == stop:
            return None
        d = parent


def _too_large(path: str, size: int) -> str:
    return (f"{path}: {size} bytes, over the {MAX_CONFIG_BYTES >> 20} MB a configuration may have; it was not read "
            "(the defaults apply)")


def _pyproject_section(path: str) -> dict[str, Any] | None:
    try:
        with open_regular(path) as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
    except OSError:
        return None
    if len(raw) > MAX_CONFIG_BYTES:
        return None
    if b"tool.trainlint" not in raw:  # most pyproject files have no section: skip the TOML parser
        return None
    import tomllib

    try:
        data = tomllib.loads(raw.decode("utf-8", "replace"))
    except (tomllib.TOMLDecodeError, RecursionError):  # an array nested 1,000 deep is not a configuration
        return None
    section = data.get("tool", {}).get("trainlint")
    return section if isinstance(section, dict) else None


def load(path: str | None) -> Config:
    """Read a config file; problems become ``Config.errors``, never an exception."""
    if path is None:
        return Config()
    if path.endswith(".toml"):
        try:
            size = os.stat(path).st_size
        except OSError:
            size = 0
        if size > MAX_CONFIG_BYTES:
            return Config(source=path, errors=[_too_large(path, size)])
        return from_mapping(_pyproject_section(path), path)
    try:
        import yaml

        with open_regular(path) as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
            if len(raw) > MAX_CONFIG_BYTES:
                return Config(source=path, errors=[_too_large(path, os.fstat(f.fileno()).st_size)])
            text = raw.decode("utf-8", "replace")
        loader = _no_aliases_loader()  # safe_load's loader, refusing aliases
        data = yaml.load(text, Loader=loader)
        placed = isinstance(data, dict) and any(k in data for k in ("formats", "select", "ignore"))
        lines = _yaml_lines(yaml.compose(text, Loader=loader)) if placed else {}
    except OSError as e:
        return Config(source=path, errors=[f"{path}: cannot read ({e.strerror or e})"])
    except Exception as e:
        return Config(source=path, errors=[f"{path}: not valid YAML ({e})"])
    return from_mapping(data, path, lines)


@lru_cache(maxsize=1)
def _no_aliases_loader():  # type: ignore[no-untyped-def]
    import yaml

    class NoAliases(yaml.SafeLoader):
        """safe_load, and no aliases: a 400-byte alias bomb expands to gigabytes once turned into strings."""

        def compose_node(self, parent, index):  # type: ignore[no-untyped-def]
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise yaml.YAMLError(f"line {event.start_mark.line + 1}: aliases (*name) are not allowed in "
                                     "trainlint's configuration; write the value out")
            return super().compose_node(parent, index)

    return NoAliases


def for_path(path: str, stop: str | None = None) -> Config:
    return load(find_config(path, stop))
