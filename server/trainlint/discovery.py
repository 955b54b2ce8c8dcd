"""Find the logs under a path: what was found, what will be read, what was skipped and why.

The CLI and the language server use this one walk, so ``trainlint check DIR`` and the editor
see the same files. Symlinks to directories are not followed (no loops); hidden directories,
virtual environments and caches are not entered.
"""

from __future__ import annotations

import errno
import os
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from .core.fsio import open_regular
from .readers import Detection, detect
from .readers.registry import candidate_suffixes
from .readers.stores import store_kind
from .readers.tfevents import is_event_file, scalars_dirs, split_dirs

SKIP_DIRS = {"node_modules", "__pycache__", "site-packages", ".venv", "venv", ".git", ".hg", ".svn",
             ".mypy_cache", ".ruff_cache", ".pytest_cache", "media", "artifacts"}
MAX_DEPTH = 64
DATASET_DIRS = {"data", "dataset", "datasets"}  # a .jsonl of examples in such a folder is a dataset, not a log
# Suffixes said "not read" by name, though no format reads them (the W&B binary datastore).
NOTED_SUFFIXES = frozenset({".wandb"})
# Files that share a log's suffix but never hold a training curve.
NOT_LOGS = {"config.json", "run_meta.json", "wandb-summary.json", "wandb-metadata.json", "wandb-events.jsonl",
            "requirements.txt", "package.json", "package-lock.json", "tsconfig.json", "tokenizer.json",
            "tokenizer_config.json", "special_tokens_map.json", "vocab.json", "adapter_config.json",
            "generation_config.json", "preprocessor_config.json", "all_results.json", "train_results.json",
            "eval_results.json", "hparams.yaml", "README.txt", "LICENSE.txt", "NOTICE.txt",
            "LABEL.json"}  # LABEL.json: the label a gallery or population generator wrote beside its run


# W&B's debug logs (wandb/debug.log, logs/debug-internal.log, debug-core.log, debug-cli.root.log) are the
# client's own logging, never a training curve.
_NOT_LOG_NAME = re.compile(r"^debug(?:-internal|-core|-cli\.[\w.-]+)?\.log$")


def is_candidate(name: str) -> bool:
    """Whether a file of this name may be a log by its suffix: a suffix some format declares (the format
    registry), or one said "not read" by name."""
    suffix = os.path.splitext(name)[1].lower()
    return suffix in candidate_suffixes() or suffix in NOTED_SUFFIXES


def within(path: str, root: str) -> bool:
    """Whether ``path`` (resolved) is ``root`` or under it, once the links of ``root`` are resolved."""
    root = os.path.realpath(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@dataclass
class Found:
    path: str
    format: str
    reason: str


@dataclass
class Discovery:
    found: list[Found] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    unreadable: list[tuple[str, str]] = field(default_factory=list)

    @property
    def considered(self) -> int:
        return len(self.found) + len(self.skipped) + len(self.unreadable)


def discover(root: str, max_files: int = 100_000, formats: Any = None) -> Discovery:
    """Walk ``root`` (a file or a directory) for training logs. ``formats`` is the configuration (its
    ``formats:`` entries make files of any name logs)."""
    if "://" in root and not root.startswith("file://"):  # s3://, gs://, hf://, https://: one fsspec listing
        return discover_remote(root, max_files, formats)
    out = Discovery()
    if not os.path.isdir(root):
        why = dataset_reason(root, formats)
        if why is not None:
            out.found.append(Found(root, "dataset", why))
        else:
            _consider(root, out, formats)
        return out
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False, onerror=lambda e: out.unreadable.append(
            (getattr(e, "filename", root) or root, _os_reason(e)))):
        if not _enter(root, dirpath, dirnames):
            out.skipped.append((dirpath, f"deeper than {MAX_DEPTH} folders below {root}; not entered"))
        if store_kind(dirpath) is not None:  # an MLflow run or a DVCLive folder: one unit, its files members
            _consider(dirpath, out)
            dirnames[:] = []
            continue
        splits = split_dirs(dirpath)
        if splits:  # Keras' logs/train + logs/validation: one run
            out.found.append(Found(dirpath, "tfevents", f"TensorBoard split folders: "
                                   f"{', '.join(os.path.basename(d) for d in splits)}"))
            dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) not in splits]
        events = sorted(f for f in filenames if is_event_file(f))
        if events:
            out.found.append(Found(dirpath, "tfevents", f"{len(events)} TensorBoard event file(s)"))
            subs = scalars_dirs(dirpath)  # add_scalars' loss_train/, loss_val/: members of this run
            dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) not in subs]
        for name in sorted(filenames):
            if is_event_file(name):
                continue
            path = os.path.join(dirpath, name)
            why = dataset_reason(path, formats)
            if why is not None:
                out.found.append(Found(path, "dataset", why))
                continue
            declared = formats is not None and formats.format_for(path) is not None
            if not declared and (name in NOT_LOGS or _NOT_LOG_NAME.match(name)
                                 or not is_candidate(name)):
                continue  # not counted: 100,000 images before runs/ must not use up the limit
            seen += 1
            if seen > max_files:
                out.skipped.append((path, f"over the limit of {max_files} candidate log files"))
                continue
            if declared:
                out.found.append(Found(path, "custom", "a format declared in the configuration"))
                continue
            if os.path.islink(path) and os.path.exists(path) and within(os.path.realpath(path), root):
                continue  # a link to a file of the same tree (W&B's wandb/debug.log): read where it lives
            _consider(path, out)
    return out


_AUDIO_KEYS = (b'"audio', b'"path"', b'"file"', b'"wav"', b'"file_name"', b".wav", b".flac", b".mp3", b".ogg")


def _may_name_audio(path: str) -> bool:
    """A JSON(L) file whose first 4 KB name no audio key or file: not a speech manifest, and the speech reader
    (csv, wave, the dataset reader) is not imported for it (start-up: every trainer_state.json passes here)."""
    try:
        with open_regular(path) as f:
            head = f.read(4096)
    except OSError:
        return True  # the speech reader says why it cannot be read
    return any(k in head for k in _AUDIO_KEYS)


def dataset_reason(path: str, cfg: Any = None) -> str | None:
    """Why ``path`` is a fine-tuning dataset (linted by preflight, not judged as a log), or None."""
    if cfg is not None and cfg.names_dataset(path):
        return "a dataset the configuration names (datasets:)"
    name = os.path.basename(path).lower()
    if (name.startswith("metadata") and name.endswith((".csv", ".txt"))) or (
            name.endswith((".jsonl", ".json")) and _may_name_audio(path)):
        from .readers.speech import layout_of as speech_layout  # a first line read: audio paths and transcripts?

        if speech_layout(path) is not None:
            return "a speech corpus manifest (audio paths and transcripts)"
    if not path.endswith(".jsonl") or not set(os.path.dirname(os.path.abspath(path)).split(os.sep)) & DATASET_DIRS:
        return None
    from .readers.dataset import looks_like as looks_like_dataset  # only for a .jsonl in a data folder

    try:
        with open_regular(path) as f:
            head = f.read(1 << 16).decode("utf-8", "replace")
    except OSError:
        return None
    return "a dataset: text or chat examples, one per line, in a data folder" if looks_like_dataset(head) else None


def _enter(root: str, dirpath: str, dirnames: list[str]) -> bool:
    """Prune ``dirnames`` in place to the folders a walk enters; False when it stopped at the depth limit.
    os.walk(followlinks=False) already leaves links to folders out (loops, `/`, the world outside)."""
    dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS)
    if dirnames and dirpath.count(os.sep) - root.rstrip(os.sep).count(os.sep) >= MAX_DEPTH:
        dirnames[:] = []  # os.walk recurses: a tree 1,500 deep would end in RecursionError
        return False
    return True


def folders(root: str, limit: int) -> tuple[list[str], int]:
    """The folders under ``root`` that discovery walks (the same rule for the watcher: no directory links,
    nothing outside), at most ``limit``; and how many more there were."""
    out: list[str] = []
    more = 0
    for dirpath, dirnames, _ in os.walk(root, followlinks=False):
        _enter(root, dirpath, dirnames)
        if len(out) < limit:
            out.append(dirpath)
        else:
            more += 1
    return out, more


def _consider(path: str, out: Discovery, formats: Any = None) -> None:
    if formats is not None and os.path.isfile(path) and formats.format_for(path) is not None:
        out.found.append(Found(path, "custom", "a format declared in the configuration"))
        return
    try:
        if os.path.islink(path) and not os.path.exists(path):
            out.unreadable.append((path, "a broken symbolic link"))
            return
        d: Detection = detect(path)
    except OSError as e:
        out.unreadable.append((path, _os_reason(e)))
        return
    except (ValueError, RecursionError, MemoryError, UnicodeError, ArithmeticError) as e:  # one hostile file
        out.unreadable.append((path, f"its structure could not be read ({type(e).__name__}: {str(e)[:120]})"))
        return
    if d.format is None:
        out.skipped.append((path, d.reason))
    else:
        out.found.append(Found(path, d.format, d.reason))


def _os_reason(e: OSError) -> str:
    if isinstance(e, FileNotFoundError):
        return "it does not exist (or vanished while being read)"
    if isinstance(e, PermissionError):
        return "permission denied"
    if isinstance(e, IsADirectoryError):
        return "it is a directory"
    return e.strerror or str(e)


def discover_remote(root: str, max_files: int = 100_000, formats: Any = None) -> Discovery:
    """``discover`` for a URL: the same candidates, event-file folders and skip reasons, from one listing."""
    from .core import remote  # start-up: fsspec, only for a URL
    out = Discovery()
    if not remote.isdir(root):
        if not remote.exists(root):
            raise FileNotFoundError(errno.ENOENT, "it does not exist", root)
        _consider(root, out, formats)
        return out
    base = root.rstrip("/")
    event_dirs: dict[str, int] = {}
    stores: set[str] = set()
    files = remote.find(base, max_files)
    for url, _size in files:
        rel = url[len(base):].lstrip("/")
        parts = rel.split("/")
        if any(p.startswith(".") or p in SKIP_DIRS for p in parts[:-1]):
            continue
        name = parts[-1]
        d = posixpath.dirname(url)
        if name == "meta.yaml" or "/plots/metrics/" in f"/{rel}":
            stores.add(d if name == "meta.yaml" else url[: url.index("/plots/metrics/")])
            continue
        if is_event_file(name):
            event_dirs[d] = event_dirs.get(d, 0) + 1
    for d in sorted(stores):
        out.skipped.append((d, "an MLflow or DVCLive store folder: read on local disk, or an MLflow tracking server "
                               "as mlflow:EXPERIMENT"))
    for d, n in sorted(event_dirs.items()):
        out.found.append(Found(d, "tfevents", f"{n} TensorBoard event file(s)"))
    for url, _size in files:
        rel = url[len(base):].lstrip("/")
        parts = rel.split("/")
        name = parts[-1]
        if any(p.startswith(".") or p in SKIP_DIRS for p in parts[:-1]) or is_event_file(name):
            continue
        if any(url.startswith(s + "/") for s in stores):
            continue
        if formats is not None and formats.format_for(url) is not None:
            out.found.append(Found(url, "custom", "a format declared in the configuration"))
            continue
        if name in NOT_LOGS or _NOT_LOG_NAME.match(name) or not is_candidate(name):
            continue
        _consider(url, out, formats)
    # the order of the walk on disk: a folder's event files, then its files by name, then its subfolders
    out.found.sort(key=lambda f: (f.path.split("/"), 0, "") if f.format == "tfevents" and f.path in event_dirs
                   else (posixpath.dirname(f.path).split("/"), 1, posixpath.basename(f.path)))
    return out
