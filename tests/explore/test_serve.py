"""``attnlab serve`` without a browser: who may ask (the Host header), and a quiet terminal when
clients hang up early. Everything talks to 127.0.0.1 only, in bounded loops."""

import http.client
import socket
import struct
import sys
import threading
import time

from attnlab.explore.serve import allowed_host


def _get(port: int, path: str, host: str | None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {} if host is None else {"Host": host}
    conn.putrequest("GET", path, skip_host=True)
    for k, v in headers.items():
        conn.putheader(k, v)
    conn.endheaders()
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r.status, body


def test_only_this_machines_names_for_the_server_are_answered(served):
    port = served.server_address[1]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LocalHost:{port}"):
        assert _get(port, "/", host)[0] == 200, host
        assert _get(port, "/attention?text=ROMEO", host)[0] == 200, host
    for host in (
        f"evil.example:{port}",  # DNS rebinding: a name that now points at 127.0.0.1
        "127.0.0.1",  # no port
        f"127.0.0.1:{port + 1}",
        f"localhost.evil.example:{port}",
        f"[::1]:{port}",
        "",
        None,  # no Host header at all
    ):
        status, body = _get(port, "/attention?text=ROMEO", host)
        assert status == 403 and b"Host" in body and b"views" not in body, host
        assert _get(port, "/", host)[0] == 403, host


def test_allowed_host_is_exact():
    assert allowed_host("127.0.0.1:8000", 8000) and allowed_host("localhost:8000", 8000)
    assert not allowed_host("127.0.0.1:80001", 8000) and not allowed_host("x:8000", 8000)


def _hang_up_early(port: int, asking: int, idle: int) -> None:
    """Clients that ask for the page and reset the connection at once (each costs the server a
    page), and idle ones, all reset."""
    linger = struct.pack("ii", 1, 0)  # close with a reset, as a browser tab closing can
    for _ in range(asking):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
        s.close()
    idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(idle)]
    for s in idle:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
        s.close()


def test_clients_that_leave_early_print_nothing(served, capfd, monkeypatch):
    port = served.server_address[1]
    errors = []
    monkeypatch.setattr(sys, "stderr", _Recorder(errors))
    _hang_up_early(port, asking=10, idle=10)
    assert _get(port, "/", f"127.0.0.1:{port}")[0] == 200  # still serving
    for _ in range(200):  # every early client's thread has finished (bounded wait)
        if not any("process_request" in t.name for t in threading.enumerate()):
            break
        time.sleep(0.05)
    assert errors == [] and capfd.readouterr().err == ""


class _Recorder:
    """sys.stderr for the server's threads: what they write, kept."""

    def __init__(self, into: list):
        self.into = into

    def write(self, text: str) -> int:
        self.into.append(text)
        return len(text)

    def flush(self) -> None:
        pass


def test_twenty_clients_arriving_at_once_are_all_let_in(gpt_run):
    """Before any is served, the listen queue holds them all (socketserver's 5 held six: the
    seventh client's connection was dropped and retried by TCP a second later)."""
    from attnlab.explore.serve import make_server

    server = make_server(gpt_run, port=0, texts=["ROMEO:"])  # listening, not yet accepting
    clients = []
    try:
        for _ in range(20):
            clients.append(socket.socket())
            clients[-1].settimeout(0.8)  # under TCP's first retry (1 s): a dropped one times out
            clients[-1].connect(server.server_address)
    finally:
        for c in clients:
            c.close()
        server.server_close()
    assert len(clients) == 20
