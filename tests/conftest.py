"""Fixtures shared by the test modules."""

from __future__ import annotations

import http.server
import threading
from functools import partial
from pathlib import Path

import pytest


class _Server:
    """A real HTTP server on localhost serving one folder, counting GET requests."""

    def __init__(self, root: Path):
        self.requests = 0
        outer = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server API)
                outer.requests += 1
                super().do_GET()

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(root)))
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/{name}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    srv = _Server(root)
    yield srv, root
    srv.close()
