"""``attnlab explore``: one offline HTML page to explore a run's attention, or lesson 1's."""

from __future__ import annotations

from pathlib import Path

from ..errors import UserError
from ._args import add_lang, check_outputs, examples

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
        epilog=examples(
            "attnlab explore runs/gpt --text 'ROMEO:' --text 'To be' -o gpt.html",
            "attnlab explore runs/date --text 'Saturday 9 May 2018'",
            "attnlab explore --playground --lang zh -o playground.html",
            "attnlab explore --hf path/to/gpt2 --text 'The cat sat' -o gpt2.html",
        ),
    )
    p.add_argument("run_dir", metavar="RUN_DIR", nargs="?", help="a GPT or seq2seq run directory")
    p.add_argument(
        "--text",
        action="append",
        default=[],
        help="a text to explore (repeatable; default: the start of the run's probe text)",
    )
    p.add_argument("--playground", action="store_true", help="lesson 1's 床前明月光, live")
    p.add_argument(
        "--hf",
        metavar="MODEL_DIR",
        help="instead of a run: a local transformers model folder (eager attention, its own "
        "tokenizer, nothing downloaded; needs pip install 'attnlab[hf]')",
    )
    p.add_argument(
        "-o",
        "--output",
        "--out",
        dest="out",
        metavar="FILE.html",
        help="default RUN_DIR/explore.html (--hf: explore.html; --playground: playground.html)",
    )
    add_lang(p, "page")
    p.set_defaults(run=run)


def run(a) -> int:
    check_outputs((a.out, "-o", "file"))
    from ..explore import explore

    if [a.playground, a.run_dir is not None, a.hf is not None].count(True) != 1:
        raise UserError("give one of RUN_DIR, --hf MODEL_DIR or --playground")
    if a.playground and a.text:
        raise UserError("--text goes with a RUN_DIR or --hf, not --playground")
    if a.hf is not None and not a.text:
        raise UserError("--hf needs at least one --text")
    source = a.hf if a.hf is not None else a.run_dir
    default = "playground.html" if a.playground else str(Path(source) / "explore.html")
    if a.hf is not None:
        default = "explore.html"  # here, not inside someone's model folder
    out = Path(a.out or default)
    if a.hf is not None:
        from ..hf import explore_hf

        page = explore_hf(a.hf, a.text, lang=a.lang)
    else:
        page = explore(a.run_dir, a.text, lang=a.lang, playground=a.playground)
    page.save(out)
    size = human_size(out.stat().st_size)
    print(f"wrote {out} ({size}); open it in a browser, no server needed")
    return 0


def human_size(n: int) -> str:
    """Bytes as MiB, or as KiB under 0.1 MiB (a small page is not "0.0 MiB")."""
    return f"{n / 2**20:.1f} MiB" if n >= 0.1 * 2**20 else f"{max(1, round(n / 2**10))} KiB"
