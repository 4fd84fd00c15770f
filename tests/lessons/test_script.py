"""``lessonN.py`` as a learner reads and runs it: each heading printed, each worked answer out of
sight until ``--answers`` asks for it, and an install cell that says what it installed.

In process and quick; tests/lessons/test_export.py runs every exported script with python."""

import io
import re
from contextlib import redirect_stdout

import pytest

from attnlab.lessons import notebooks as export
from attnlab.lessons import render, runner, source
from attnlab.lessons.render import GUTTER, code_lines
from attnlab.tables import display_width


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_script_prints_headings_and_keeps_worked_answers_out_of_sight(lang):
    cells = export.build(2, lang, run=False)
    script = export.to_py(export.script_cells(cells, 2, lang))
    titles = source.prose(2, lang).titles
    for k, cell in enumerate(runner.steps(2), 1):  # what python lesson2.py prints per step
        printed = f"print({chr(10) + f'== {k}. {titles[cell.id]}'!r})" in script
        assert printed == bool(cell.code.strip()), cell.id  # the recap, no code: no heading
    for k, cell in enumerate(runner.exercises(2), 1):
        answer = runner.part(2, "solution", cell.id)[0].code
        distinct = [ln for ln in answer.splitlines() if ln.strip() and ln not in cell.code]
        assert distinct and not any(ln in script for ln in distinct), cell.id  # nothing to read
        assert f"show_answer(2, {cell.id!r}, globals())" in script
        assert f"--exercise {k} --solution" in script
    assert "<details>" not in script


def test_show_answer_prints_the_worked_answer_only_when_asked():
    s = runner.Session(2)
    s.steps()
    ident = runner.exercises(2)[1].id
    quiet, asked = io.StringIO(), io.StringIO()
    with redirect_stdout(quiet):
        export.show_answer(2, ident, s.ns, argv=["lesson2.py"])
    with redirect_stdout(asked):
        export.show_answer(2, ident, s.ns, argv=["lesson2.py", "--answers"])
    assert quiet.getvalue() == ""
    shown = asked.getvalue()
    assert shown.lstrip().startswith("Worked answer:")
    assert "<details" not in shown and "```" not in shown
    assert runner.part(2, "solution", ident)[0].code.splitlines()[0] in shown
    after = source.prose(2, "en").texts.get(f"{ident}/solution", "")
    assert not after or source.fill(after, s.ns).split()[0] in shown


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_worked_answers_print_as_the_terminal_lesson_shows_them(lang):
    # they were Markdown printed raw: backticks, lines of 93-105 columns, Japanese broken
    # mid-word where the source's lines ended
    s = runner.Session(1, lang=lang)
    s.steps()
    for cell in runner.exercises(1):
        out = io.StringIO()
        with redirect_stdout(out):  # piped: 80 columns
            export.show_answer(1, cell.id, s.ns, argv=["lesson1.py", "--answers"])
        shown = out.getvalue()
        wide = [ln for ln in shown.splitlines() if display_width(ln) > render.PIPED_WIDTH]
        assert wide == [], (cell.id, wide)
        code = s.code(runner.part(1, "solution", cell.id)[0])
        assert code_lines(shown) == code_lines(render.code_block(code, colour=False)), cell.id
        prose = [ln for ln in shown.splitlines() if not ln.startswith(GUTTER)]
        assert not [ln for ln in prose if "`" in ln], cell.id
        after = source.prose(1, lang).texts.get(f"{cell.id}/solution", "")
        if after:  # the prose after the code is there: its longest piece between numbers
            pieces = re.split(r"\{[^}]*\}|\*", render.plain(after))
            piece = re.sub(r"\s", "", max(pieces, key=len))[:20]
            assert piece and piece in re.sub(r"\s", "", "".join(prose)), cell.id


def test_the_install_cell_says_what_it_installed():
    code = export.install_code("attnlab-0.1.0-py3-none-any.whl", "en")
    installing = code[code.index("if importlib.util.find_spec") :]
    assert 'print(f"installed attnlab {attnlab.__version__} from {SOURCE}")' in installing
    compile(code, "install", "exec")  # valid Python
    assert "インストールしました" in export.install_code("x.whl", "ja")
