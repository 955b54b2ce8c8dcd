"""Initialize, initialized (watchers registered, the first scan started), configuration changes, shutdown."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING, Any

from lsprotocol import types as t

from ..linebreaks import lf_client
from ..settings import Settings
from .diagnostics import enable_pull
from .watching import watch_globs

if TYPE_CHECKING:
    from ..server import TrainlintServer

log = logging.getLogger("trainlint.lsp")


def register(server: TrainlintServer) -> None:
    server.feature(t.INITIALIZE)(on_initialize)
    server.feature(t.INITIALIZED)(on_initialized)
    server.feature(t.WORKSPACE_DID_CHANGE_CONFIGURATION)(on_configuration)
    server.feature(t.SHUTDOWN)(on_shutdown)


def on_initialize(ls: TrainlintServer, params: t.InitializeParams) -> None:
    ls.settings, ls.settings_errors = Settings.parse(params.initialization_options)
    ls.lines.client_lf, ls.lines.setting = lf_client(params.client_info), ls.settings.line_breaks
    ls.ws.select, ls.ws.ignore = ls.settings.select, ls.settings.ignore
    caps = params.capabilities.text_document
    if ls.settings.pull_diagnostics and caps is not None and caps.diagnostic is not None:
        enable_pull(ls)


async def on_initialized(ls: TrainlintServer, params: t.InitializedParams) -> None:
    ls.ws.roots = ls.roots()
    for err in ls.settings_errors:
        ls.message(f"trainlint: {err}; the default is used")
    ws_caps = ls.client_capabilities.workspace
    if ws_caps is not None and ws_caps.configuration:
        await _pull_configuration(ls)
    watched = ws_caps.did_change_watched_files if ws_caps is not None else None
    if watched is not None and watched.dynamic_registration:
        try:
            await ls.client_register_capability_async(t.RegistrationParams([t.Registration(
                str(uuid.uuid4()), t.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                t.DidChangeWatchedFilesRegistrationOptions([t.FileSystemWatcher(g) for g in watch_globs()]))]))
        except Exception as e:
            log.info("client did not register file watchers: %s", e)
    ls.spawn(ls.scan(), "initial scan")
    if ls.settings.watch:
        ls.spawn(ls.watch(), "watching run directories")


async def _pull_configuration(ls: TrainlintServer) -> None:
    try:
        result = await asyncio.wait_for(ls.workspace_configuration_async(
            t.ConfigurationParams([t.ConfigurationItem(section="trainlint")])), 5)
    except Exception as e:
        log.info("workspace/configuration failed: %s", e)
        return
    raw = result[0] if result else None
    if raw:
        _apply_settings(ls, raw)


def _apply_settings(ls: TrainlintServer, raw: Any) -> None:
    settings, errors = Settings.parse(raw)
    for err in errors:
        ls.message(f"trainlint: {err}; the default is used")
    ls.settings = settings
    ls.lines.setting = settings.line_breaks
    ls.ws.select, ls.ws.ignore = settings.select, settings.ignore


async def on_configuration(ls: TrainlintServer, params: t.DidChangeConfigurationParams) -> None:
    ws_caps = ls.client_capabilities.workspace
    if ws_caps is not None and ws_caps.configuration:
        await _pull_configuration(ls)
    elif params.settings:
        _apply_settings(ls, params.settings)
    ls.ws.forget_configs()
    await ls.rejudge_all()


def on_shutdown(ls: TrainlintServer, params: Any) -> None:
    if ls.stop_watch is not None:
        ls.stop_watch.set()
