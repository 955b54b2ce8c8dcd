"""A real S3-compatible server on loopback for the tests: moto's server mode (``moto[server]``, in the test extra),
started as its own process on a free port of 127.0.0.1 and stopped after the tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time

import pytest

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class S3Server:
    def __init__(self) -> None:
        try:
            import moto.server  # noqa: F401
            import s3fs  # noqa: F401
        except ImportError as e:
            pytest.skip(f"moto[server] and s3fs are needed for the S3 tests (pip install -e '.[test]'): {e}")
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, **CREDENTIALS, "AWS_ENDPOINT_URL": self.endpoint}
        # its log goes to a file: moto logs every request, and an unread pipe would block it once full
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=self.log, env=self.env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    self.log.seek(0)
                    raise RuntimeError(f"moto server exited: {self.log.read().decode()[-2000:]}") from None
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("moto server did not start within 30 s")

    def filesystem(self):  # type: ignore[no-untyped-def]
        import s3fs

        return s3fs.S3FileSystem(key=CREDENTIALS["AWS_ACCESS_KEY_ID"], secret=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
                                 client_kwargs={"endpoint_url": self.endpoint},
                                 skip_instance_cache=True, use_listings_cache=False)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
