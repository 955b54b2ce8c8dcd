"""One module per LSP feature, each with ``register(server)``; every module of this package that has one is
registered (``server.create_server``), so adding a feature is one module. The server's mixins (publishing,
progress, scanning, watching) live here too and register nothing; ``common.py`` has the helpers every feature
needs (the log of a URI, the findings on a line)."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..server import TrainlintServer


def features() -> tuple[ModuleType, ...]:
    """The feature modules, in name order (registration order does not matter to pygls)."""
    mods = (importlib.import_module(f"{__name__}.{m.name}") for m in pkgutil.iter_modules(__path__))
    return tuple(m for m in mods if callable(getattr(m, "register", None)))


def register_all(server: TrainlintServer) -> None:
    for feature in features():
        feature.register(server)
