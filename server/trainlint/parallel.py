"""``trainlint check --jobs N``: judge the logs of a check in N worker processes, in the same order and with the
same output as one process (each log's judgement is independent of the others: the only state shared across
logs in a serial check is the cache of companion readers, which a worker keeps for the logs it is given).

Processes, not threads: reading and judging are pure Python and hold the GIL. A report travels back whole (its
LogFile included) because the renderings read the log's lines for locations, fingerprints and ``full`` output.
A worker imports the judge when it starts (start-up: the parent process may never need it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import Config
    from .core.report import Report


@dataclass
class Pending:
    """A log to judge, kept in its place among the reports until the judging is done."""

    path: str
    fmt: str | None
    facts: dict[str, Any] = field(default_factory=dict)
    live: bool = False  # judged as a run still being written (`check --live`)


_cfg: Any = None
_companions: Any = None


def _init(cfg: Config) -> None:
    global _cfg, _companions
    from .runs import Companions

    _cfg, _companions = cfg, Companions()


def _judge(task: Pending) -> Report:
    from .judge import judge_path

    return judge_path(task.path, _cfg, task.fmt, task.facts, _companions, live=task.live)


def resolve(slots: list[Any], cfg: Config, jobs: int = 1) -> list[Report]:
    """Replace every Pending of ``slots`` by its report (in place order), with ``jobs`` processes."""
    tasks = [s for s in slots if isinstance(s, Pending)]
    if jobs <= 1 or len(tasks) <= 1:
        _init(cfg)
        done = iter([_judge(t) for t in tasks])
    else:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), initializer=_init, initargs=(cfg,)) as pool:
            done = iter(list(pool.map(_judge, tasks, chunksize=max(1, len(tasks) // (jobs * 4)))))
    return [next(done) if isinstance(s, Pending) else s for s in slots]
