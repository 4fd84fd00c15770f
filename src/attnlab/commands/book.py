"""``attnlab book``: every lesson as a page of a static web book, in the chosen languages."""

from __future__ import annotations

from pathlib import Path

from ..errors import UserError
from ..i18n import LANGS
from ._args import check_outputs, examples, int_list, nonneg_int, positive_int

NAME = "book"


def add_parser(sub) -> None:
    p = sub.add_parser(
        NAME,
        help="build the course as a static web book (Sphinx): every lesson, in en/ja/zh",
        description="Build a static site of the course: OUT_DIR/index.html and one page per "
        "lesson per language, each with the lesson's prose, code, outputs and figures "
        "(computed by the build from the lesson's own code), the exercises with their worked "
        "answers folded, and the quiz. Search works, a switch leads to the same lesson in the "
        "other languages, and the site loads nothing from outside (it opens from disk). "
        "Each lesson runs once per language, one per CPU core at a time (all seven lessons in "
        "three languages: about 3 minutes on 2 cores); executed notebooks are cached, so a "
        "rebuild with nothing changed executes nothing. "
        "Needs the book extra: pip install -e '.[book]' in attnlab's source folder.",
        epilog=examples("attnlab book build/book", "attnlab book site --lang ja --lessons 1,2"),
    )
    p.add_argument("out", metavar="OUT_DIR", help="the folder to write the site into")
    p.add_argument(
        "--lang",
        default="all",
        help="en, ja, zh, a comma-separated list of them, or all (default all)",
    )
    p.add_argument("--lessons", type=int_list, help="comma-separated lesson numbers (default all)")
    p.add_argument(
        "--seed", type=nonneg_int, default=0, help="seed for the lessons' examples (default 0)"
    )
    p.add_argument(
        "--steps",
        type=positive_int,
        metavar="N",
        help="training steps of the lessons that train (their STEPS; default theirs)",
    )
    p.add_argument(
        "--cache", metavar="DIR", help="the sources and executed notebooks (default OUT_DIR-cache)"
    )
    p.add_argument(
        "--timeout", type=positive_int, default=900, help="seconds one cell may run (default 900)"
    )
    p.set_defaults(run=run)


def langs(text: str) -> tuple[str, ...]:
    if text == "all":
        return LANGS
    chosen = tuple(dict.fromkeys(x.strip() for x in text.split(",") if x.strip()))
    bad = [x for x in chosen if x not in LANGS]
    if bad or not chosen:
        raise UserError(f"--lang {text!r}: expected all or some of {', '.join(LANGS)}")
    return chosen


def run(a) -> int:
    check_outputs((a.out, "OUT_DIR", "folder"), (a.cache, "--cache", "folder"))
    from ..book import BookConfig, build, choose_lessons, require_sphinx

    chosen = langs(a.lang)
    choose_lessons(chosen, a.lessons or ())
    require_sphinx()
    overrides = {} if a.steps is None else {"STEPS": a.steps}
    cfg = BookConfig(
        out=Path(a.out),
        langs=chosen,
        lessons=a.lessons or (),
        seed=a.seed,
        overrides=overrides,
        cache=Path(a.cache) if a.cache else None,
        timeout=a.timeout,
    )
    build(cfg)
    return 0
