"""``attnlab explore``: one offline HTML page to explore a run's attention, or lesson 1's."""

from __future__ import annotations

from pathlib import Path

from ..errors import UserError
from ._args import add_lang

NAME = "explore"


def add_parser(sub) -> None:
    p = sub.add_parser(
        NAME,
        help="write one offline HTML page to explore a run's attention (or lesson 1's example)",
        description="Write a self-contained HTML page (script, style and data inline; it loads "
        "nothing and opens from disk): for a GPT run, every layer's and head's attention on "
        "each --text as a head view and a matrix view, the model's top-5 guesses, and a slider "
        "over the attention recorded during training; for a seq2seq run, the alignment of each "
        "output character, step by step. --playground writes lesson 1's example to play with.",
        epilog="examples: attnlab explore runs/gpt --text 'ROMEO:' --text 'To be' -o gpt.html | "
        "attnlab explore runs/date --text 'Saturday 9 May 2018' | "
        "attnlab explore --playground --lang zh -o playground.html",
    )
    p.add_argument("run_dir", metavar="RUN_DIR", nargs="?", help="a GPT or seq2seq run directory")
    p.add_argument(
        "--text",
        action="append",
        default=[],
        help="a text to explore (repeatable; default: the start of the run's probe text)",
    )
    p.add_argument("--playground", action="store_true", help="lesson 1's 床前明月光, live")
    p.add_argument("-o", "--out", metavar="FILE.html", help="default RUN_DIR/explore.html")
    add_lang(p, "page")
    p.set_defaults(run=run)


def run(a) -> int:
    from ..explore import explore

    if a.playground == (a.run_dir is not None):
        raise UserError("give a RUN_DIR, or --playground (not both)")
    if a.playground and a.text:
        raise UserError("--text goes with a RUN_DIR, not --playground")
    default = "playground.html" if a.playground else str(Path(a.run_dir) / "explore.html")
    out = Path(a.out or default)
    if out.is_dir():
        raise UserError(f"-o {out}: a folder, expected a file name such as {out / 'explore.html'}")
    page = explore(a.run_dir, a.text, lang=a.lang, playground=a.playground)
    page.save(out)
    size = human_size(out.stat().st_size)
    print(f"wrote {out} ({size}); open it in a browser, no server needed")
    return 0


def human_size(n: int) -> str:
    """Bytes as MiB, or as KiB under 0.1 MiB (a small page is not "0.0 MiB")."""
    return f"{n / 2**20:.1f} MiB" if n >= 0.1 * 2**20 else f"{max(1, round(n / 2**10))} KiB"
