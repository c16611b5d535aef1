"""A small local web site for the bookmarks example: the demo and tests fetch from it.

It listens on 127.0.0.1 on a free port, so nothing ever leaves the machine,
and serves the cases the handler has to tell apart:

- ``/articles/<name>``: 200 with a small HTML page;
- ``/retired/<name>``: 410 Gone (the handler gives up at once);
- ``/busy/<name>``: 503 on the first request, then 200 (the handler's run is retried);
- anything else: 404.
"""

from __future__ import annotations

import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Self


class LocalSite:
    """``with LocalSite() as site:`` serves in a background thread; ``site.url(path)``."""

    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()  # path -> how many times it was requested
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        # A short poll interval: shutdown() waits for it, and the demo should end promptly.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def base(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def url(self, path: str) -> str:
        return self.base + path

    def respond(self, path: str) -> tuple[int, bytes]:
        with self._lock:
            self.requests[path] += 1
            count = self.requests[path]
        name = path.rsplit("/", 1)[-1]
        if path.startswith("/articles/"):
            return 200, _page(name)
        if path.startswith("/retired/"):
            return 410, b"gone\n"
        if path.startswith("/busy/"):
            return (503, b"try again later\n") if count == 1 else (200, _page(name))
        return 404, b"not found\n"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def _page(name: str) -> bytes:
    title = name.replace("-", " ").capitalize()
    return f"<!doctype html>\n<title>{title}</title>\n<h1>{title}</h1>\n<p>Saved for later.</p>\n".encode()


def _handler_for(site: LocalSite) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, body = site.respond(self.path)
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # keep the demo's output to what the jobs did

    return Handler
