"""``attnlab serve``: the explorer page of a run, live on 127.0.0.1, with a text box."""

from __future__ import annotations

from ._args import add_lang, bounded_int, examples

NAME = "serve"


def add_parser(sub) -> None:
    p = sub.add_parser(
        NAME,
        help="serve a run's explorer page on 127.0.0.1 with a text box: type, see the attention",
        description="Serve the page 'attnlab explore' writes, live: type any text into it and "
        "see the model's attention. Listens on 127.0.0.1 only (this machine) and answers only "
        "requests addressed to 127.0.0.1:PORT or localhost:PORT; Ctrl-C stops it.",
        epilog=examples(
            "attnlab serve runs/gpt --port 8000", then="then open http://127.0.0.1:8000/"
        ),
    )
    p.add_argument("run_dir", metavar="RUN_DIR", help="a GPT or seq2seq run directory")
    p.add_argument(
        "--port", type=bounded_int(0, 65535), default=8000, help="port (default 8000; 0: any)"
    )
    p.add_argument("--text", action="append", default=[], help="a text to show first")
    add_lang(p, "page")
    p.set_defaults(run=run)


def run(a) -> int:
    from ..explore.serve import make_server

    try:
        server = make_server(a.run_dir, a.port, a.lang, a.text)
    except OSError as e:
        from ..errors import UserError

        raise UserError(f"--port {a.port}: cannot listen on 127.0.0.1 ({e.strerror})") from None
    host, port = server.server_address[:2]
    print(f"serving {a.run_dir} on http://{host}:{port}/ (this machine only); Ctrl-C stops")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped")
    finally:
        server.server_close()
    return 0
