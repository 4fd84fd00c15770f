"""``attnlab book``: the course as a static site, one Sphinx build per language.

::

    OUT/index.html               the table of contents in every language built
    OUT/en/index.html            one book per language (Sphinx + myst-nb + sphinx-book-theme),
    OUT/en/lesson1.html ...      with its own search index; the switch on each page leads to
    OUT/ja/lesson1.html ...      the same page in the other languages

The sources live in a cache folder that persists between builds (default: beside OUT,
``OUT-cache``): per language a conf.py, an index.md and each lesson's notebook (exported by
the lessons' own code without running it, see ``notebook.py``: the kernel fills in the prose's
numbers, so each lesson runs once per language), Sphinx's doctrees, and myst-nb's jupyter cache
of executed notebooks. A notebook is exported again only when its stamp (the attnlab sources,
the lesson, language, seed and overrides) changed, and written only when its text changed;
myst-nb executes a notebook only when its code (or attnlab's library code) changed; and a
language whose sources are all unchanged skips Sphinx. So a rebuild with nothing changed
exports, reads, executes and writes nothing. Sphinx builds into the cache (myst-nb writes
beside its output folder); OUT/<lang> is then made to mirror it. Before Sphinx runs, every
notebook not yet in the jupyter cache is executed there, one per core at a time
(jupyter-cache's local-parallel executor, each kernel's threads set to its share of the
cores), so the lessons of all languages share the cores and Sphinx finds them all executed.
"""

from __future__ import annotations

import hashlib
import html
import importlib.util
import io
import json
import multiprocessing
import os
import shutil
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata, resources
from pathlib import Path

import attnlab

from ..errors import UserError
from ..files import atomic_write_text
from ..i18n import LANGS
from ..lessons import source
from .config import conf_py, settings
from .notebook import PLAYGROUND_FILE, PLAYGROUNDS, page_notebook
from .words import LANG_NAMES, WORDS

MARK = ".attnlab-book"
FONTS = "_fonts"  # one copy of the CJK font for the whole site (attnlab-book.css reads it)
DISTS = ("sphinx", "myst-nb", "sphinx-book-theme", "pydata-sphinx-theme")
NEEDS = ("sphinx", "myst_nb", "sphinx_book_theme")
INSTALL = "pip install -e '.[book]' in attnlab's source folder"


@dataclass(frozen=True)
class BookConfig:
    out: Path
    langs: tuple[str, ...] = LANGS
    lessons: tuple[int, ...] = ()  # () = every lesson
    seed: int = 0
    overrides: dict[str, object] = field(default_factory=dict)  # e.g. {"STEPS": 5}
    cache: Path | None = None  # default: OUT-cache beside OUT
    timeout: int = 900  # seconds one notebook cell may run
    quiet: bool = False


def require_sphinx() -> None:
    """One line saying how to install the book's tools when one is missing (exit 2)."""
    missing = [m for m in NEEDS if importlib.util.find_spec(m) is None]
    if missing:
        raise UserError(f"the book needs {', '.join(missing)}: {INSTALL}")


def build(cfg: BookConfig) -> Path:
    """Build the book; return the path of its index.html."""
    require_sphinx()
    out = Path(cfg.out).resolve()
    lessons = choose_lessons(cfg.langs, cfg.lessons)
    cache = Path(cfg.cache).resolve() if cfg.cache else out.with_name(f"{out.name}-cache")
    if out.exists() and not out.is_dir():
        raise UserError(f"OUT_DIR {cfg.out}: a file, expected a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MARK).is_file():
        raise UserError(f"OUT_DIR {cfg.out} holds other files; expected a new or empty folder")
    out.mkdir(parents=True, exist_ok=True)
    (out / MARK).touch()  # a folder the book may update (its language folders are mirrored)
    fp = fingerprint()
    jupyter = _jupyter_cache(cache, fp)
    for lang in cfg.langs:
        changed = _sources(cache / "src" / lang, lang, lessons, cfg, fp, str(jupyter))
        if changed:
            _say(cfg, f"{lang}: {changed} of {len(lessons)} lessons exported anew")
    longest_first = sorted(lessons, reverse=True)  # the lessons that train come last in the course
    notebooks = [cache / "src" / g / f"lesson{n}.ipynb" for n in longest_first for g in cfg.langs]
    execute(jupyter, notebooks, cfg, cache / "execute.log")
    for lang in cfg.langs:
        _language(cfg, lessons, cache, out, lang)
    fonts(out / FONTS)
    index = out / "index.html"
    _write_if_changed(index, root_index(cfg.langs, lessons))
    _say(cfg, f"wrote {index}")
    return index


def cores() -> int:
    """The CPU cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def execute(jupyter: Path, notebooks: list[Path], cfg: BookConfig, log: Path) -> None:
    """Execute every notebook the jupyter cache does not hold yet, one per core at a time
    (jupyter-cache's ``local-parallel`` executor, the cache myst-nb reads): Sphinx then finds
    them all executed. Each kernel's torch and BLAS get their share of the cores."""
    from jupyter_cache import get_cache

    jc = get_cache(str(jupyter))
    todo = jc.list_unexecuted(filter_pks=[jc.add_nb_to_project(str(p)).pk for p in notebooks])
    if not todo:
        return
    at_once = min(len(todo), os.cpu_count() or 1)  # the executor's pool: one per CPU
    _say(cfg, f"executing {len(todo)} notebooks, {at_once} at a time (log: {log})")
    start = time.perf_counter()
    threads = {"OMP_NUM_THREADS": str(max(1, cores() // at_once))}
    pks = [r.pk for r in todo]
    with open(log, "w", encoding="utf-8") as out, _kernels(log.parent / "ipython", out, threads):
        before = len(jc.list_cache_records())  # a cheap count (list_unexecuted hashes each)
        with _progress(cfg, lambda: len(jc.list_cache_records()) - before, len(pks)):
            ran = _run(jc, pks, cfg.timeout)
            failed = list(ran.excepted)
            if ran.errored:  # the executor's own error (a kernel that died, or never answered)
                out.write(f"\nonce more, after an error outside their cells: {ran.errored}\n")
                out.flush()
                again = _run(jc, [jc.get_project_record(u).pk for u in ran.errored], cfg.timeout)
                failed += again.excepted + again.errored
    if failed:
        for uri in failed:
            record = jc.get_project_record(uri)
            said = record.traceback or "(no traceback recorded: the executor's error is above)"
            with open(log, "a", encoding="utf-8") as out:
                out.write(f"\n{uri}\n{said}\n")
        raise UserError(f"a lesson failed in its kernel: {failed[0]} (the traceback is in {log})")
    _say(cfg, f"executed {len(todo)} notebooks in {time.perf_counter() - start:.0f} s")


def _run(jc, pks: list[int], timeout: int):
    """jupyter-cache's ``local-parallel`` executor over ``pks``: its result (which notebooks
    succeeded, failed in a cell: ``excepted``, or failed outside the cells: ``errored``)."""
    from jupyter_cache.executors import load_executor

    try:
        return load_executor("local-parallel", jc).run_and_cache(filter_pks=pks, timeout=timeout)
    finally:  # the executor sends multiprocessing's log to stderr, for good
        multiprocessing.get_logger().handlers.clear()


@contextmanager
def _progress(cfg: BookConfig, done: Callable[[], int], total: int) -> Iterator[None]:
    """While inside: a line each time ``done()`` (polled every few seconds) grows."""
    stop, start = threading.Event(), time.perf_counter()

    def watch() -> None:
        seen = 0
        while not stop.wait(3.0):
            now = done()
            if now != seen:
                seen = now
                _say(cfg, f"{now} of {total} executed ({time.perf_counter() - start:.0f} s)")

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _language(cfg: BookConfig, lessons: list[int], cache: Path, out: Path, lang: str) -> None:
    """One language's book: a Sphinx build when its sources changed, mirrored to OUT."""
    start = time.perf_counter()
    src = cache / "src" / lang
    html_dir = cache / "html" / lang  # myst-nb writes beside Sphinx's output: not into OUT
    log, built, stamp = cache / f"sphinx-{lang}.log", cache / f"built-{lang}.stamp", _tree(src)
    if html_dir.is_dir() and built.is_file() and built.read_text() == stamp:
        atomic_write_text(log, "Nothing changed since the last build: Sphinx did not run.\n")
        _say(cfg, f"{lang}: {len(lessons)} lessons, nothing changed")
    else:
        _say(cfg, f"{lang}: {len(lessons)} lessons; building")
        built.unlink(missing_ok=True)
        _sphinx(src, html_dir, cache / "doctrees" / lang, log)
        atomic_write_text(built, stamp)
    mirror(html_dir, out / lang)
    _say(cfg, f"{lang}: done in {time.perf_counter() - start:.0f} s")


def fonts(folder: Path) -> None:
    """The CJK font attnlab ships (a subset of Noto Sans CJK) and its licence, into ``folder``."""
    assets = resources.files("attnlab.viz") / "assets"
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("attnlab-cjk-sans.otf", "OFL.txt"):
        data = (assets / name).read_bytes()
        target = folder / name
        if not target.is_file() or target.read_bytes() != data:
            target.write_bytes(data)


def _say(cfg: BookConfig, text: str) -> None:
    if not cfg.quiet:
        print(f"book: {text}", flush=True)


def choose_lessons(langs: tuple[str, ...], lessons: tuple[int, ...] = ()) -> list[int]:
    """The lessons to build (all when none are named), each checked to exist in ``langs``."""
    known = source.lessons()
    chosen = list(lessons) or known
    bad = [n for n in chosen if n not in known]
    if bad:
        raise UserError(f"--lessons {bad[0]}: no such lesson; expected some of {known}")
    for n in chosen:
        missing = [lang for lang in langs if lang not in source.languages(n)]
        if missing:
            raise UserError(
                f"lesson {n} has no {missing[0]} text; choose --lang from {source.languages(n)}"
            )
    return sorted(set(chosen))


def fingerprint() -> str:
    """A hash of the code the lessons' cells run: attnlab's library and lesson content (not the
    book's own modules and commands, which change no output), and how the kernel is set up."""
    root = Path(attnlab.__file__).parent
    h = hashlib.sha256(f"{attnlab.__version__} {KERNEL_CONFIG}".encode())
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if rel.parts[0] in ("commands", "cli.py") or "__pycache__" in rel.parts:
            continue
        if rel.parts[0] == "book" and rel.name != "live.py":  # the kernel runs live.py
            continue
        if p.suffix in (".py", ".md", ".json"):
            h.update(rel.as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:16]


def _book_code() -> str:
    """A hash of the book's modules that shape a page's notebook (a stamp changes with them)."""
    here = Path(__file__).parent
    return hashlib.sha256(b"".join(p.read_bytes() for p in sorted(here.glob("*.py")))).hexdigest()


def _jupyter_cache(cache: Path, fp: str) -> Path:
    """myst-nb's cache for this fingerprint; caches of older code are removed."""
    base = cache / "jupyter"
    if base.exists():
        for old in base.iterdir():
            if old.name != fp:
                shutil.rmtree(old, ignore_errors=True)
    return base / fp


def _sources(
    src: Path, lang: str, lessons: list[int], cfg: BookConfig, fp: str, jupyter: str
) -> int:
    """Write one language's Sphinx sources; return how many notebooks were exported anew."""
    src.mkdir(parents=True, exist_ok=True)
    values = settings(lang, list(cfg.langs), jupyter, fp, cfg.timeout)
    _write_if_changed(src / "conf.py", conf_py(values))
    _write_if_changed(src / "index.md", lang_index(lang, lessons))
    for old in src.glob("lesson*.ipynb"):  # lessons left out of this build
        if old.stem.removeprefix("lesson").isdigit() and int(old.stem[6:]) not in lessons:
            old.unlink()
    extra = src / "_extra"
    extra.mkdir(exist_ok=True)
    if any(n in PLAYGROUNDS for n in lessons):
        from ..explore.page import playground_page

        _write_if_changed(extra / PLAYGROUND_FILE, playground_page(lang))
    exported = 0
    for n in lessons:
        nb, stamp_file = src / f"lesson{n}.ipynb", src / f"lesson{n}.stamp"
        stamp = json.dumps(
            [fp, _book_code(), n, lang, cfg.seed, sorted(cfg.overrides.items())], default=str
        )
        if nb.exists() and stamp_file.exists() and stamp_file.read_text() == stamp:
            continue
        _write_if_changed(nb, page_notebook(n, lang, cfg.seed, cfg.overrides))
        atomic_write_text(stamp_file, stamp)
        exported += 1
    return exported


def _tree(src: Path) -> str:
    """What one language's pages are made of: its sources, the book's own code, templates and
    style, and the versions of the tools (Sphinx does not always tell an unchanged book apart:
    themes change its settings after it compares them)."""
    h = hashlib.sha256(" ".join(f"{m} {metadata.version(m)}" for m in DISTS).encode())
    for folder in (src, Path(__file__).parent):
        for p in sorted(folder.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                h.update(p.relative_to(folder).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def _write_if_changed(path: Path, text: str) -> None:
    """Keep a file (and its time, which Sphinx reads) when its text is the same."""
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        atomic_write_text(path, text)


def _sphinx(src: Path, out: Path, doctrees: Path, log: Path) -> None:
    """One Sphinx build, as sphinx-build runs it (its own docutils registry, so that several
    builds in one process do not collide). Its progress and the kernels' chatter go to ``log``;
    its warnings are shown."""
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace, patch_docutils

    warnings = io.StringIO()
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as status, _kernels(log.parent / "ipython", status):
        with patch_docutils(src), docutils_namespace():
            app = Sphinx(src, src, out, doctrees, "html", status=status, warning=warnings)
            try:
                app.build()
            except Exception as e:  # e.g. a lesson cell that raised: the traceback in the log
                status.write("\n" + "".join(traceback.format_exception(e)) + warnings.getvalue())
                first = (str(e).strip().splitlines() or [""])[0]
                raise UserError(
                    f"building the {out.name} book failed: {type(e).__name__} {first} "
                    f"(the traceback is in {log})"
                ) from e
    if warnings.getvalue().strip():
        print(warnings.getvalue().rstrip())
    if app.statuscode:
        raise UserError(f"Sphinx failed building {out}; its log: {log}")


# The kernels that execute the pages: figures inline (lesson code draws with matplotlib's object
# API and calls IPython's display, which shows a PNG once the inline backend is active).
KERNEL_CONFIG = 'c.IPKernelApp.matplotlib = "inline"\nc.IPKernelApp.log_level = "ERROR"\n'


@contextmanager
def _kernels(ipython_dir: Path, log, env: dict[str, str] | None = None) -> Iterator[None]:
    """While inside: kernels read ``KERNEL_CONFIG`` and start with ``env`` set; everything
    written to stderr (the kernels', jupyter's logging, the executor's workers' messages) goes
    to ``log``: the file descriptor and ``sys.stderr`` both (a test runner may have replaced
    ``sys.stderr`` with its own capture, where an executor's error would be lost)."""
    profile = ipython_dir / "profile_default"
    profile.mkdir(parents=True, exist_ok=True)
    _write_if_changed(profile / "ipython_kernel_config.py", KERNEL_CONFIG)
    env = {"IPYTHONDIR": str(ipython_dir), **(env or {})}
    before = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    sys.stderr.flush()
    saved, saved_stderr = os.dup(2), sys.stderr
    log.flush()
    os.dup2(log.fileno(), 2)
    sys.stderr = log
    try:
        yield
    finally:
        sys.stderr.flush()
        sys.stderr = saved_stderr
        os.dup2(saved, 2)
        os.close(saved)
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def mirror(src: Path, dst: Path) -> None:
    """Make ``dst`` hold exactly ``src``'s visible files; copy only those that differ."""
    dst.mkdir(parents=True, exist_ok=True)
    wanted = set()
    for p in src.rglob("*"):
        rel = p.relative_to(src)
        if any(part.startswith(".") for part in rel.parts):
            continue
        wanted.add(rel)
        target = dst / rel
        if p.is_dir():
            target.mkdir(exist_ok=True)
        elif not target.is_file() or not _same(p, target):
            shutil.copy2(p, target)
    for p in sorted(dst.rglob("*"), reverse=True):  # deepest first: files before their folders
        if p.relative_to(dst) not in wanted:
            shutil.rmtree(p) if p.is_dir() else p.unlink()


def _same(a: Path, b: Path) -> bool:
    sa, sb = a.stat(), b.stat()
    return sa.st_size == sb.st_size and int(sa.st_mtime) == int(sb.st_mtime)


def lang_index(lang: str, lessons: list[int]) -> str:
    """One language's start page: what the book is, and its lessons (the toctree)."""
    entries = "\n".join(f"lesson{n}" for n in lessons)
    return (
        f"# {WORDS['book'](lang)}\n\n{WORDS['about'](lang)}\n\n"
        f"```{{toctree}}\n:maxdepth: 1\n:caption: {WORDS['lessons'](lang)}\n\n{entries}\n```\n"
    )


def root_index(langs: tuple[str, ...], lessons: list[int]) -> str:
    """OUT/index.html: every lesson in every language built, one column per language."""
    columns = []
    for lang in langs:
        items = "".join(
            f'<li><a href="{lang}/lesson{n}.html">'
            f"{html.escape(WORDS['lesson'](lang).format(n=n))}: "
            f"{html.escape(source.prose(n, lang).title)}</a>"
            f"<p>{html.escape(source.prose(n, lang).summary)}</p></li>"
            for n in lessons
        )
        columns.append(
            f'<section lang="{lang}"><h2><a href="{lang}/index.html">'
            f"{html.escape(WORDS['book'](lang))}</a> <small>{LANG_NAMES[lang]}</small></h2>"
            f"<p>{html.escape(WORDS['about'](lang))}</p><ol>{items}</ol></section>"
        )
    title = " · ".join(html.escape(WORDS["book"](lang)) for lang in langs)
    return ROOT.format(lang=langs[0], title=title, columns="\n".join(columns))


ROOT = """<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; font-src 'self'">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 72rem; padding: 0 1rem;
  line-height: 1.5; color: #222; }}
main {{ display: grid; grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr)); gap: 2rem; }}
@font-face {{ font-family: "attnlab CJK"; src: local("Noto Sans CJK SC"),
  url("_fonts/attnlab-cjk-sans.otf") format("opentype");
  unicode-range: U+2E80-31FF, U+3400-4DBF, U+4E00-9FFF, U+F900-FAFF, U+FE30-FE4F, U+FF00-FFEF; }}
body {{ font-family: "attnlab CJK", system-ui, sans-serif; }}
h1 {{ font-size: 1.6rem; }} h2 {{ font-size: 1.2rem; }} small {{ color: #666; font-weight: normal; }}
li {{ margin-bottom: 0.6rem; }} li p {{ margin: 0.1rem 0 0; color: #555; font-size: 0.9rem; }}
a {{ color: #0a58ca; }}
</style>
</head>
<body>
<h1>attnlab: {title}</h1>
<main>
{columns}
</main>
</body>
</html>
"""


__all__ = [
    "BookConfig",
    "build",
    "choose_lessons",
    "fingerprint",
    "lang_index",
    "require_sphinx",
    "root_index",
]
