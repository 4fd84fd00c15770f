"""``attnlab lesson N --export DIR``: the lesson as a script and a notebook the learner edits.

Both come from one notebook (``notebook``): the prose in the chosen language (numbers filled in
by running the lesson once; a lesson that trains fills them where the notebook runs, ``say``),
the lesson's code exactly as ``attnlab lesson N`` shows and runs it (comments in that language), each exercise as its starting code followed by the cell that
checks it (the worked answer hidden under a fold), and the quiz as cells that check an answer.

- ``lessonN.ipynb``: written by ``nbformat`` (validated), for Jupyter and Colab;
- ``lessonN.py``: the same notebook written by ``jupytext`` as ``py:percent`` cells, so
  ``python lessonN.py`` runs it and jupytext reads it back as the notebook's cells, plus the
  script's own (``script_cells``, ``active="py"``: raw cells in Jupyter): each heading printed,
  and each worked answer out of sight until ``python lessonN.py --answers`` asks for it.

The first code cell installs attnlab when it is missing: from a wheel written beside the lesson
(``wheel=True``, ``--wheel``) or from ``install_from`` (``--install-from URL``, anything pip
installs); without either it says where attnlab comes from and imports it.

From Python (the web book builds on it)::

    nb = attnlab.lessons.notebooks.notebook(1, lang="ja", seed=0, overrides=None)  # nbformat node
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .. import __version__
from ..errors import UserError
from ..files import atomic_write_text
from ..i18n import Text
from ..wheel import build_wheel
from . import engine, render, runner, source

if TYPE_CHECKING:
    import nbformat

FORMATS = ("py", "ipynb", "both")

WORDS = {
    "install": Text(
        "Needs attnlab: in Colab or a fresh environment, this cell installs it",
        "attnlab が必要です。Colab や新しい環境では、このセルがインストールします",
        "需要 attnlab：在 Colab 或新环境中，这个单元格会安装它",
    ),
    "wheel_beside": Text(
        "from the wheel beside this notebook (in Colab, upload it first).",
        "（このノートブックと同じフォルダーの wheel から。Colab では先にアップロード）。",
        "（来自与本笔记本同一文件夹中的 wheel；在 Colab 中请先上传）。",
    ),
    "from_url": Text("from {url}.", "（{url} から）。", "（来自 {url}）。"),
    "no_source": Text(
        "Needs attnlab installed (pip install it from its source; a teacher can export the "
        "lesson with --wheel or --install-from URL to make this cell install it).",
        "attnlab のインストールが必要です（ソースから pip install します。教える側が --wheel か "
        "--install-from URL 付きで書き出すと、このセルがインストールします）。",
        "需要已安装 attnlab（从源代码 pip install；教师用 --wheel 或 --install-from URL "
        "导出时，这个单元格会自动安装）。",
    ),
    "exercises": Text("Exercises", "練習問題", "练习"),
    "solution": Text("Worked answer", "模範解答", "参考答案"),
    "quiz": Text("Quiz", "確認テスト", "小测验"),
    "installed": Text(
        "installed attnlab {version} from {source}",
        "attnlab {version} を {source} からインストールしました",
        "已从 {source} 安装 attnlab {version}",
    ),
    "folded": Text(
        "The worked answer stays folded away: run python lesson{n}.py --answers to print it here "
        "(or: attnlab lesson {n} --exercise {k} --solution).",
        "模範解答は隠してあります。python lesson{n}.py --answers で実行すると、ここに表示されます"
        "（attnlab lesson {n} --exercise {k} --solution でも見られます）。",
        "参考答案已折叠：运行 python lesson{n}.py --answers 时会显示在这里"
        "（也可以用 attnlab lesson {n} --exercise {k} --solution 查看）。",
    ),
    "answer_here": Text(
        "your answer between the quotes",
        "引用符の間にあなたの答え",
        "把你的答案写在引号之间",
    ),
}


@dataclass(frozen=True)
class NotebookCell:
    kind: str  # "markdown" or "code"
    text: str


def build(
    number: int,
    lang: str = "en",
    seed: int = 0,
    overrides: runner.Overrides | None = None,
    install: str | None = None,
    run: bool = True,
    ran: runner.Session | None = None,
) -> list[NotebookCell]:
    """The lesson as cells, its prose filled with the numbers of this seed; ``install``: the
    source the first cell installs attnlab from (a wheel's file name, or what pip takes).
    A lesson that trains is not run here: each text with numbers is a code cell that fills
    it where the notebook runs (``say_code``), from the values its cells computed there.

    ``run=False`` executes nothing: a text that shows numbers comes as a ``NUMBERS`` cell (its
    text is the prose key, e.g. ``train_gpt`` or ``sharpen/solution``) for whoever executes the
    notebook to fill in where the code runs (the web book fills them in its kernel, so the
    prose and the outputs come from one run).

    ``ran``: the session of a run of this lesson that has run its setup and every step (the
    terminal lesson's own, ``lessons.run``): the texts as it filled them (``Session.said``),
    nothing run again but the worked answers, each in a copy of it. A lesson that trains
    fills its words where its notebook runs: it is exported from a run of its own."""
    engine.get(number)
    engine.check_lang(lang)
    words = source.prose(number, lang)
    s = _session(number, lang, seed, overrides, ran)
    cells = [
        NotebookCell("markdown", f"# {engine.title(number, lang)}\n\n{words.intro}".strip()),
        NotebookCell("code", install_code(install, lang)),
    ]
    live = run and trains(number)  # its words come from the kernel's run (``say``), not ours
    k = 0
    for cell in source.cells(number):
        if cell.kind == "setup":
            if run and ran is None:
                s.run_cell(cell, quiet=True)
            cells.append(NotebookCell("code", s.code(cell)))
        elif cell.kind == "step":
            k += 1
            if run and not live and ran is None:
                s.run_cell(cell, quiet=True)
            head = f"## {k}. {words.titles[cell.id]}"
            text = _prose(words, cell.id, s.ns, run and not live, s.said if ran else None)
            if text and text.kind == NUMBERS and live:
                text = NotebookCell("code", say_code(number, cell.id))
            if cell.has_code:
                cells += [NotebookCell("markdown", head), NotebookCell("code", s.code(cell))]
            elif text and text.kind == "markdown":  # prose only: one Markdown cell
                text = NotebookCell("markdown", f"{head}\n\n{text.text}")
            else:
                cells.append(NotebookCell("markdown", head))
            if text:
                cells.append(text)
    if live and (needed := _needed_by_answers(number, lang)):  # the worked answers read them
        s.steps(needed)
    cells += _exercises(number, s, lang, run)
    cells += _quiz(number, lang)
    return cells


NUMBERS = "numbers"  # a NotebookCell kind: prose to fill in where the notebook runs
SCRIPT = "script"  # a NotebookCell kind: code only the script runs (jupytext: active="py")


def trains(number: int) -> bool:
    """Lesson ``number`` trains models (its setup sets ``STEPS``): its exported notebook fills
    its words where it runs, so they always match the numbers its cells printed."""
    return "STEPS" in runner.tunable(number)


def say_code(number: int, key: str) -> str:
    """The code cell that shows text ``key`` filled from the kernel's own values."""
    return f'attnlab.lessons.say({number}, "{key}", globals())'


def _needed_by_answers(number: int, lang: str) -> int:
    """How many steps the worked answers and the words after them read."""
    words = source.prose(number, lang).texts
    return max(
        (
            runner.needed_steps(
                number,
                runner.versions(number, c),
                source.placeholders(words.get(f"{c.id}/solution", "")),
            )
            for c in runner.exercises(number)
        ),
        default=0,
    )


def _session(
    number: int, lang: str, seed: int, overrides: runner.Overrides | None, ran
) -> runner.Session:
    """A fresh session for ``build``, or ``ran`` once it is seen to be this lesson's run."""
    if ran is None:
        return engine.session(number, lang, seed, overrides)
    if trains(number):
        raise ValueError(f"ran: lesson {number} trains; its export fills its words where it runs")
    asked = (number, lang, seed, dict(overrides or {}))
    if (ran.number, ran.lang, ran.seed, ran.overrides) != asked:
        raise ValueError(f"ran: a run of lesson {ran.number} ({ran.lang}), not {asked}")
    return ran


def _prose(
    words: source.Prose, key: str, ns: dict, run: bool, said: dict | None = None
) -> NotebookCell | None:
    """The prose under ``key``, filled from ``ns`` (or as ``said`` filled it where the step
    ran; or left to fill: see ``build``)."""
    text = words.texts.get(key, "")
    if not text.strip():
        return None
    if not run and source.placeholders(text):
        return NotebookCell(NUMBERS, key)
    return NotebookCell(
        "markdown", (said[key] if said is not None else source.fill(text, ns)).strip()
    )


def install_code(install: str | None, lang: str) -> str:
    """The first code cell: install attnlab from ``install`` when it is missing, import it."""
    if install is None:
        return f"# {WORDS['no_source'](lang)}\nimport attnlab"
    wheel = install.endswith(".whl") and "/" not in install
    where = WORDS["wheel_beside"](lang) if wheel else WORDS["from_url"](lang).format(url=install)
    lines = [
        f"# {WORDS['install'](lang)}",
        f"# {where}",
        "import importlib",
        "import importlib.util",
        "import subprocess",
        "import sys",
        "from pathlib import Path",
        "",
        f'SOURCE = "{install}"',
        'if importlib.util.find_spec("attnlab") is None:',
    ]
    if wheel:  # beside the script (python lessonN.py) or in the notebook's folder
        lines.append('    SOURCE = str(Path(globals().get("__file__", "x")).parent / SOURCE)')
    said = WORDS["installed"](lang).format(version="{attnlab.__version__}", source="{SOURCE}")
    lines += [
        '    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", SOURCE])',
        "    importlib.invalidate_caches()  # Python sees the package just installed",
        "    import attnlab",
        "",
        f'    print(f"{said}")',
        "import attnlab",
    ]
    return "\n".join(lines)


def _exercises(number: int, s: runner.Session, lang: str, run: bool) -> list[NotebookCell]:
    exercises = runner.exercises(number)
    words = source.prose(number, lang)
    cells = [NotebookCell("markdown", f"## {WORDS['exercises'](lang)}")] if exercises else []
    for k, cell in enumerate(exercises, 1):
        task = f"### {k}. {words.titles[cell.id]}\n\n{words.texts.get(cell.id, '')}"
        cells += [
            NotebookCell("markdown", task.strip()),
            NotebookCell("code", s.code(cell)),
            NotebookCell("code", runner.check_code(number, cell)),
            worked_answer(s, cell.id, run),
        ]
    return cells


def worked_answer(s: runner.Session, ident: str, run: bool = True) -> NotebookCell:
    """Exercise ``ident``'s worked answer, folded: its code, and the prose that follows it with
    the numbers the answer computes from ``s``'s state (run in a copy of it)."""
    code, after = _worked(s, ident, run)
    if after and after.kind == NUMBERS:
        return NotebookCell(NUMBERS, f"{ident}/solution")
    return NotebookCell(
        "markdown",
        f"<details><summary>{WORDS['solution'](s.lang)}</summary>\n\n"
        f"```python\n{code}\n```\n\n{after.text if after else ''}\n\n</details>",
    )


def _worked(s: runner.Session, ident: str, run: bool) -> tuple[str, NotebookCell | None]:
    """Exercise ``ident``'s worked answer: its code as ``s`` shows it, and the prose after it
    filled from a copy of ``s``'s state with the answer run in it (not run: ``_prose``)."""
    solution = runner.part(s.number, "solution", ident)[0]
    worked = s.fork()
    if run:
        worked.run_cell(solution, quiet=True)
    return s.code(solution), _prose(
        source.prose(s.number, s.lang), f"{ident}/solution", worked.ns, run
    )


def _quiz(number: int, lang: str) -> list[NotebookCell]:
    questions = source.prose(number, lang).quiz
    cells = [NotebookCell("markdown", f"## {WORDS['quiz'](lang)}")] if questions else []
    for i, q in enumerate(questions, 1):
        choices = "".join(f"\n- {c}" for c in q.choices)
        cells.append(NotebookCell("markdown", f"**{i}.** {q.question}\n{choices}".rstrip()))
        code = (
            f'answer = ""  # {WORDS["answer_here"](lang)}\nquiz({number}, {i}, answer, lang=LANG)'
        )
        cells.append(NotebookCell("code", code))
    return cells


def script_cells(cells: list[NotebookCell], number: int, lang: str) -> list[NotebookCell]:
    """The cells of ``lessonN.py``: the notebook's, but each heading is also printed (the
    script shows where each step begins, as the terminal lesson does) and each worked answer
    stays out of sight, printed only when asked (``python lessonN.py --answers``), as the
    notebook folds it."""
    exercises = runner.exercises(number)
    out, k = [], 0
    for i, c in enumerate(cells):
        heading = re.match(r"#{2,3} (.+)", c.text) if c.kind == "markdown" else None
        if c.kind == "markdown" and c.text.startswith("<details>") and 0 < k <= len(exercises):
            ident = exercises[k - 1].id
            note = WORDS["folded"](lang).format(n=number, k=k)
            call = (
                f"from {__name__} import show_answer\n\nshow_answer({number}, {ident!r}, globals())"
            )
            out.append(NotebookCell(SCRIPT, f"# {note}\n{call}"))
            continue
        out.append(c)
        if heading:
            k += c.text.startswith("### ")
        if heading and _runs_code(cells, i):  # (the recap's table is read, not run)
            out.append(NotebookCell(SCRIPT, f"print({chr(10) + '== ' + heading.group(1)!r})"))
    return out


def _runs_code(cells: list[NotebookCell], at: int) -> bool:
    """Whether the part headed by ``cells[at]`` (up to the next heading as high) has code."""
    level = len(cells[at].text) - len(cells[at].text.lstrip("#"))
    for c in cells[at + 1 :]:
        if c.kind == "code":
            return True
        if c.kind == "markdown" and re.match(f"#{{2,{level}}} ", c.text):
            return False
    return False


def show_answer(number: int, ident: str, ns: dict, argv: list[str] | None = None) -> None:
    """In ``lessonN.py``: print exercise ``ident``'s worked answer (its code, then what it
    shows, run on a copy of the script's state ``ns``) when the script was run with
    ``--answers``; otherwise nothing."""
    if "--answers" not in (sys.argv if argv is None else argv):
        return
    s = runner.Session(number, int(ns.get("SEED", 0)), str(ns.get("LANG", "en")), dict(ns))
    code, after = _worked(s, ident, run=True)
    con = render.console(sys.stdout)  # as the terminal lesson shows it: fitted, code behind
    con.print("\n" + WORDS["solution"](s.lang) + (":" if s.lang == "en" else "："))  # its gutter
    render.code(con, code)
    if after:
        con.print()
        render.prose(con, after.text)


def to_notebook(cells: list[NotebookCell]) -> nbformat.NotebookNode:
    """nbformat 4 (no outputs: the learner runs it), validated; cell ids numbered, so the same
    lesson exports to the same file. Markdown's CJK line breaks are joined (``render.join_cjk``)."""
    import nbformat
    from nbformat import v4

    nb = v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    nb.cells = [notebook_cell(c, f"cell-{i}") for i, c in enumerate(cells)]
    nbformat.validate(nb)
    return nb


def notebook_cell(c: NotebookCell, ident: str) -> nbformat.NotebookNode:
    """One Markdown or code cell of a notebook (Markdown's CJK line breaks joined)."""
    from nbformat import v4

    if c.kind == "markdown":
        return v4.new_markdown_cell(render.join_cjk(c.text), id=ident)
    if c.kind == SCRIPT:  # jupytext writes it as "# %% active="py"": a raw cell in Jupyter
        return v4.new_raw_cell(c.text, id=ident, metadata={"active": "py"})
    return v4.new_code_cell(c.text, id=ident)


def notebook(
    number: int,
    lang: str = "en",
    seed: int = 0,
    overrides: runner.Overrides | None = None,
    install: str | None = None,
) -> nbformat.NotebookNode:
    """Lesson ``number`` as a validated notebook node, prose in ``lang`` with the numbers of
    ``seed`` (and ``overrides`` of setup constants such as ``{"STEPS": 5}``)."""
    return to_notebook(build(number, lang, seed, overrides, install))


def to_ipynb(nb: nbformat.NotebookNode | list[NotebookCell]) -> str:
    """The notebook as ``.ipynb`` JSON (from the node, or from ``build``'s cells)."""
    import nbformat

    return nbformat.writes(_node(nb)) + "\n"


def to_py(nb: nbformat.NotebookNode | list[NotebookCell]) -> str:
    """``py:percent`` by jupytext: Markdown cells as comments under ``# %% [markdown]``."""
    import jupytext

    return jupytext.writes(_node(nb), fmt="py:percent")


def _node(nb: nbformat.NotebookNode | list[NotebookCell]) -> nbformat.NotebookNode:
    return to_notebook(nb) if isinstance(nb, list) else nb


def export(
    number: int,
    folder: str | Path,
    lang: str = "en",
    fmt: str = "both",
    seed: int = 0,
    force: bool = False,
    overrides: runner.Overrides | None = None,
    wheel: bool = False,
    install_from: str | None = None,
    ran: runner.Session | None = None,
) -> list[Path]:
    """Write ``lessonN.py`` and/or ``lessonN.ipynb`` into ``folder`` (and, with ``wheel``,
    attnlab's wheel beside them); never over a learner's edited file unless ``force``;
    ``ran``: the lesson's own run to take the numbers from (see ``build``)."""
    if fmt not in FORMATS:
        raise UserError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if wheel and install_from:
        raise UserError("choose one of --wheel, --install-from")
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"--export {folder}: a file, expected a folder")
    suffixes = ["py", "ipynb"] if fmt == "both" else [fmt]
    targets = [folder / f"lesson{number}.{x}" for x in suffixes]
    existing = [str(p) for p in targets if p.exists()]
    if existing and not force:
        raise UserError(
            f"{', '.join(existing)} already there (your edits?); pass --force to overwrite"
        )
    install = f"attnlab-{__version__}-py3-none-any.whl" if wheel else install_from
    cells = build(number, lang, seed, overrides, install, ran=ran)
    folder.mkdir(parents=True, exist_ok=True)
    texts = {
        "py": lambda: to_py(script_cells(cells, number, lang)),
        "ipynb": lambda: to_ipynb(cells),
    }
    written = [atomic_write_text(p, texts[p.suffix[1:]]()) for p in targets]
    return [*written, build_wheel(folder)] if wheel else written


__all__ = ["FORMATS", "NUMBERS", "NotebookCell", "build", "export", "install_code", "say_code"]
__all__ += ["notebook", "notebook_cell", "script_cells", "show_answer", "to_ipynb", "to_notebook"]
__all__ += ["to_py", "worked_answer"]
