"""The LSP base protocol over stdio: no frame can take the server down, and every request is answered.

pygls' own loop reads whatever ``Content-Length`` a header declares (``10^12`` ended the server with exit
1) and drops a request whose params do not fit its method without answering it (the client waits
forever). This loop bounds each frame, reads the next header after one it refused, and answers a
request it cannot decode with a JSON-RPC error that says what was wrong.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import threading
from typing import BinaryIO

from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

log = logging.getLogger("trainlint.lsp")

MAX_FRAME = 64 << 20    # one message; a didOpen of a 20 MB log is about that once JSON-escaped
MAX_HEADER = 8 << 10    # one header line
# The header may follow the unterminated end of a frame that was refused: search, not match.
_LENGTH = re.compile(rb"Content-Length:[ \t]*(\d{1,20})[ \t]*\r?\n\Z", re.IGNORECASE)
PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


def serve(ls: LanguageServer, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
    """Serve until ``exit`` or the end of input; the process exit code (LSP: 1 when ``exit`` came
    without ``shutdown``)."""
    ls._stop_event = stop = threading.Event()  # pygls' shutdown() sets it
    ls.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    code = 0
    try:
        asyncio.run(_loop(ls, stdin or sys.stdin.buffer, stop))
    except BrokenPipeError:
        log.error("the connection to the client is lost; shutting down")
    except SystemExit as e:  # pygls leaves through sys.exit on `exit`
        code = e.code if isinstance(e.code, int) else 0
    except KeyboardInterrupt:
        pass
    finally:
        ls.shutdown()
    return code


async def _loop(ls: LanguageServer, stdin: BinaryIO, stop: threading.Event) -> None:
    loop = asyncio.get_running_loop()
    length = 0
    while not stop.is_set():
        line = await loop.run_in_executor(ls.thread_pool, stdin.readline, MAX_HEADER)
        if not line:
            break
        m = _LENGTH.search(line)
        if m:
            length = int(m.group(1))
            continue
        if line.strip() or not length:
            continue  # another header (Content-Type), or the rest of a frame that was refused
        if length > MAX_FRAME:
            log.error("a message declares %d bytes, over the %d MB a message may have; it was skipped and the "
                      "next header is read as usual", length, MAX_FRAME >> 20)
            length = 0
            continue
        body = await loop.run_in_executor(ls.thread_pool, stdin.read, length)
        if len(body) < length:
            break  # the client closed its end mid-message
        length = 0
        handle(ls, body)


def handle(ls: LanguageServer, body: bytes) -> None:
    """Decode one message and hand it to pygls; answer what cannot be decoded."""
    proto = ls.protocol
    try:
        message = json.loads(body, object_hook=proto.structure_message)
    except Exception as exc:  # any decoding failure is answered, never raised
        _refuse(ls, body, exc)
        return
    try:
        proto.handle_message(message)
    except Exception:
        log.exception("a message could not be handled")


def _refuse(ls: LanguageServer, body: bytes, exc: Exception) -> None:
    try:
        raw = json.loads(body)
    except ValueError as e:
        log.error("a message is not valid JSON (%s); it was skipped", e)
        return
    if not isinstance(raw, dict) or "id" not in raw or not isinstance(raw.get("method"), str):
        log.error("a message that is not a request could not be decoded (%s); it was skipped", _why(exc))
        return
    method = raw["method"]
    code = INVALID_PARAMS if "params" in raw else INVALID_REQUEST
    # pygls' own framing and writer (pinned <3), for a response it could not make itself
    ls.protocol._send_data({"jsonrpc": "2.0", "id": raw["id"],
                            "error": {"code": code, "message": f"invalid params for {method}: {_why(exc)}"}})
    log.error("request %s: invalid params for %s: %s", raw["id"], method, _why(exc))


def _why(exc: BaseException) -> str:
    """What did not fit, in cattrs' words (``expected str @ $.params.text_document.uri``)."""
    cause = exc.__cause__ or exc
    try:
        from cattrs import transform_error

        return "; ".join(transform_error(cause))[:500]  # type: ignore[arg-type]
    except Exception:  # not a cattrs validation error
        return str(cause)[:500]
