"""``attnlab serve``: the explorer page, live, on 127.0.0.1 only: type a text, see its attention.

Two routes: ``/`` the page (the same one ``attnlab explore`` writes, with a text box), and
``/attention?text=...`` the views for one text as JSON, or ``{"error": ...}`` with status 400
for a text the model cannot read (too long, characters outside its vocabulary). The server
binds the loopback address and nothing else; the page may fetch from its own origin only.
A request whose ``Host`` is not ``127.0.0.1:PORT`` or ``localhost:PORT`` gets 403, so a web
page elsewhere cannot reach the server by pointing its own name at 127.0.0.1 (DNS rebinding).
A client that leaves before its answer is complete (a closed tab) is normal: nothing is printed.
"""

from __future__ import annotations

import json
import sys
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from ..errors import UserError
from . import data, page

HOST = "127.0.0.1"  # never another interface
MAX_QUERY = 4096  # bytes of a request line's query: longer is refused before any work
LIVE_CSP = page.CSP + "; connect-src 'self'"


def make_server(run_dir, port: int = 8000, lang: str = "en", texts=()) -> ThreadingHTTPServer:
    """A server for ``run_dir`` on 127.0.0.1:``port`` (0: any free port), not yet serving."""
    run = data.Run(run_dir)

    def view(v: data.View) -> dict:
        return page.view_json(v, run.kind)

    first = run.views(list(texts) or [run.default_text()]) + run.snapshots()
    body = page.render(
        {"mode": "model", "kind": run.kind, "live": True, "views": [view(v) for v in first]},
        lang,
        f"attnlab serve: {run_dir}",
        csp=LIVE_CSP,
        glyphs=run.alphabet(),
    ).encode()
    lock = threading.Lock()  # one forward pass at a time

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if not allowed_host(self.headers.get("Host"), self.server.server_address[1]):
                return self._json(
                    HTTPStatus.FORBIDDEN, {"error": "Host must be 127.0.0.1 or localhost"}
                )
            url = urlparse(self.path)
            if url.path == "/":
                return self._send(HTTPStatus.OK, "text/html; charset=utf-8", body)
            if url.path != "/attention":
                return self._json(HTTPStatus.NOT_FOUND, {"error": f"no page {url.path}"})
            if len(url.query) > MAX_QUERY:
                return self._json(HTTPStatus.BAD_REQUEST, {"error": "text too long"})
            text = parse_qs(url.query).get("text", [""])[0]
            try:
                with lock:
                    views = run.views([text])
            except UserError as e:
                return self._json(HTTPStatus.BAD_REQUEST, {"error": str(e)})
            self._json(HTTPStatus.OK, {"views": [view(v) for v in views]})

        def _json(self, status, obj) -> None:
            self._send(status, "application/json", json.dumps(obj, ensure_ascii=False).encode())

        def _send(self, status, kind: str, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args) -> None:  # quiet: the terminal shows the address only
            return

    return QuietServer((HOST, port), Handler)


def allowed_host(host: str | None, port: int) -> bool:
    """Only this machine's own names for the server: ``127.0.0.1:PORT`` or ``localhost:PORT``."""
    return (host or "").strip().lower() in {f"127.0.0.1:{port}", f"localhost:{port}"}


class QuietServer(ThreadingHTTPServer):
    """A threading server that says nothing when a client hangs up early. Its listen queue
    holds 64 connections, not socketserver's 5: a seventh client arriving at once had its
    connection dropped and retried by TCP a second later."""

    request_queue_size = 64

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):  # BrokenPipe, ConnectionReset, ...
            return
        super().handle_error(request, client_address)


__all__ = ["HOST", "QuietServer", "allowed_host", "make_server"]
