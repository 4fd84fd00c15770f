"""Every lesson, in every language, exported: its script holds the code the lesson ran, the
script runs with plain python and the notebook executes top to bottom in a Jupyter kernel, both
printing what the lesson's own run printed; every figure cell shows an image; the notebook is
valid and jupytext reads the script back as its cells; the install cell installs attnlab into
a fresh environment from the wheel beside it.

Each lesson runs once per language (``helpers.lesson_run``: the terminal lesson, the run its
other tests read too), and is exported from that run (``lessons.export(..., ran=session)``:
the prose filled with its numbers, nothing run again): every script holds the code that run
ran, and what that run printed is what the script and the notebook must print (each
lesson's script runs in one language and its notebook in another, the languages taking
turns). A lesson that trains is exported by a run of its own, which trains nothing: its
notebook's words fill where it runs; its script, which would train the same steps again to
print what the notebook shows, is not run: what it adds, its words printed by ``say`` outside
Jupyter, is checked against the lesson's own run. The scripts and notebooks run as forks of
the test process's runner, which imported torch and attnlab once (``helpers.fork_jobs``,
tests/forks.py; off with ATTNLAB_TEST_FORKS=0), two at a time, all on one torch thread, as
the lesson's own run is. The checks of a lesson are in the xdist group of its other tests
(``lessonN``: tests/conftest.py), so that run is made once."""

import json
import os
import re
import struct
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import attnlab
from attnlab import lessons
from attnlab.grade import words
from attnlab.lessons import answers, engine, filled, notebooks, render, runner, source
from helpers import FIGURES_IN, bare_text, fork_jobs, lesson_ran, short, trains

LANGS = ["en", "ja", "zh"]
# The lessons that train (STEPS in their setup) run the same code in every language; their
# exports run in one language each (tests/lessons/test_training_lessons.py runs all three).
PAIRS = [
    (n, lang)
    for n in source.lessons()
    for lang in LANGS
    if not trains(n) or FIGURES_IN.get(n, "en") == lang
]
# Each notebook executes in one language and each script runs in another (the languages taking
# turns across the lessons; a lesson that trains is exported in one): every script holds the
# code its lesson's run in that language ran, and the notebook the script's cells
# (test_every_script_holds_the_code_its_run_ran, test_the_notebook_is_valid_and_...), so
# what running them adds is the plain-python and the kernel side, each language in turn.
NOTEBOOKS = [(n, FIGURES_IN.get(n, LANGS[(n - 1) % len(LANGS)])) for n in source.lessons()]
SCRIPTS = [(n, LANGS[n % len(LANGS)]) for n in source.lessons() if not trains(n)]
WORD_RUNS = re.compile(r"[\w.,%()]+")  # what of a text survives the terminal's rendering
EXECUTE = """
import json, sys, nbformat
from nbclient import NotebookClient
path = sys.argv[1]
nb = nbformat.read(path, as_version=4)
NotebookClient(nb, timeout=300, kernel_name="python3").execute(cwd=str(__import__("pathlib").Path(path).parent))
cells = [
    {"source": c.source, "outputs": [
        {"type": o.get("output_type"), "text": o.get("text", ""), "mime": sorted(o.get("data", {})),
         "markdown": o.get("data", {}).get("text/markdown", "")}
        for o in c.outputs
    ]}
    for c in nb.cells if c.cell_type == "code"
]
print(json.dumps(cells))
"""


@pytest.fixture(scope="session")
def runs(tmp_path_factory):
    """``runs(number)``: lesson ``number``'s exports and their runs, made once per process when
    a test first asks (each lesson's tests are one xdist group)."""
    pytest.importorskip("nbclient", reason="pip install -e '.[dev]' (nbclient, ipykernel)")
    made: dict[int, tuple] = {}

    def of(number: int) -> tuple[dict, dict]:
        if number not in made:
            made[number] = _run(tmp_path_factory, number)
        return made[number]

    return of


def _run(tmp_path_factory, number: int) -> tuple[dict, dict]:
    """Lesson ``number`` exported in each of its languages from its run in that language, then
    the script that runs and the notebook that executes: (lang, "py"/"ipynb") -> the finished
    process, and lang -> the script's and the notebook's paths."""
    files, jobs, keys, cwd = {}, [], {}, os.getcwd()  # where pytest runs, as a subprocess would
    for lang in [x for n, x in PAIRS if n == number]:
        folder = tmp_path_factory.mktemp(f"lesson{number}_{lang}")
        ran = None if trains(number) else lesson_ran(number, lang).session
        lessons.export(number, folder, lang, overrides=short(number), ran=ran)
        py, nb = folder / f"lesson{number}.py", folder / f"lesson{number}.ipynb"
        files[lang] = (py, nb)
        keys.update({f"{lang} py": (lang, "py"), f"{lang} ipynb": (lang, "ipynb")})
        if (number, lang) in SCRIPTS:
            jobs.append([f"{lang} py", [str(py)], cwd])
        if (number, lang) in NOTEBOOKS:
            jobs.append([f"{lang} ipynb", ["-c", EXECUTE, str(nb)], cwd])
    done = {
        keys[key]: subprocess.CompletedProcess(key, status, stdout, stderr)
        for key, (status, stdout, stderr) in fork_jobs(jobs).items()
    }
    return done, files


def _filled(number: int, lang: str) -> list[str]:
    """The steps of lesson ``number`` whose text in ``lang`` shows numbers (its placeholders)."""
    texts = source.prose(number, lang).texts
    return [c.id for c in runner.steps(number) if source.placeholders(texts.get(c.id, ""))]


def _printed(number: int, lang: str) -> list[str]:
    """The lines lesson ``number``'s run in ``lang`` printed (its setup and steps)."""
    return "".join(lesson_ran(number, lang).printed).splitlines()


def _in_order(lines: list[str], text: str) -> bool:
    """Every line of ``lines``, in order, among the lines of ``text`` (figures may come between)."""
    it = iter(text.splitlines())
    return all(line in it for line in lines)


@pytest.mark.parametrize(("number", "lang"), PAIRS)
def test_every_script_holds_the_code_its_run_ran(runs, number, lang):
    """The exported script's code cells hold, in order, the setup and every step as the
    lesson's run in that language ran them (its comments, its strings, its constants)."""
    jupytext = pytest.importorskip("jupytext")
    _, files = runs(number)
    script = jupytext.reads(files[lang][0].read_text(encoding="utf-8"), fmt="py:percent")
    code = [c.source for c in script.cells if c.cell_type == "code"]
    session = lesson_ran(number, lang).session
    ran = [session.code(c) for c in source.cells(number) if c.kind in ("setup", "step")]
    it = iter(code)
    assert all(any(c == r for c in it) for r in ran if r.strip())


@pytest.mark.parametrize(("number", "lang"), SCRIPTS)
def test_exported_script_runs_with_python_and_prints_the_lesson(runs, number, lang):
    done, _ = runs(number)
    r = done[(lang, "py")]
    assert r.returncode == 0, r.stderr[-3000:]
    # a lesson that trains too: by steps, from a seed, on one thread, the same numbers each run
    assert _in_order(_printed(number, lang), r.stdout)
    for cell in runner.exercises(number):  # each starting code ran, and its check said "not yet"
        failed = answers.WORDS["failed"] if "answer" in cell.options else words.WORDS["failed"]
        assert failed(lang) in r.stdout, cell.id
    assert "run the cell again" not in r.stdout and "もう一度セル" not in r.stdout
    if source.prose(number, lang).quiz:  # the script's quiz points to the interactive one
        assert f"attnlab lesson {number} --quiz" in r.stdout
    if any("plot(" in c.code for c in runner.steps(number)):  # figures as text, and the way on
        assert "░" in r.stdout or "█" in r.stdout or "▁" in r.stdout
        assert "--plots DIR" in r.stdout
    titles = source.prose(number, lang).titles  # each step's heading, as the terminal shows it
    steps = list(enumerate(runner.steps(number), 1))
    assert _in_order([f"== {k}. {titles[c.id]}" for k, c in steps if c.code.strip()], r.stdout)
    assert not [c.id for k, c in steps if not c.code.strip() and titles[c.id] in r.stdout]
    if number == 1:
        assert "{'床': 0.12, '前': 0.11, '明': 0.26, '月': 0.29, '光': 0.23}" in r.stdout
        assert "{'床': 0.01, '前': 0.0, '明': 0.3, '月': 0.5, '光': 0.18}" in r.stdout


@pytest.mark.parametrize(("number", "lang"), NOTEBOOKS)
def test_exported_notebook_executes_in_a_kernel_and_every_figure_is_an_image(runs, number, lang):
    done, _ = runs(number)
    r = done[(lang, "ipynb")]
    assert r.returncode == 0, r.stderr[-3000:]
    cells = json.loads(r.stdout.splitlines()[-1])
    outputs = [o for c in cells for o in c["outputs"]]
    assert not [o for o in outputs if o["type"] == "error"]
    streamed = "".join(o["text"] for o in outputs if o["type"] == "stream")
    assert _in_order(_printed(number, lang), streamed)
    figures = [c for c in cells if "plot(" in c["source"] and "def plot" not in c["source"]]
    steps_with_plots = [c for c in runner.steps(number) if "plot(" in c.code]
    assert len(figures) >= len(steps_with_plots)
    for c in figures:  # the image itself, never only "<Figure size ...>"
        pngs = [o for o in c["outputs"] if "image/png" in o["mime"]]
        assert pngs, (c["source"][:200], c["outputs"])
        assert not any("<Figure size" in o["text"] for o in c["outputs"])


@pytest.mark.parametrize(("number", "lang"), FIGURES_IN.items())
def test_a_training_notebook_fills_its_words_from_its_own_kernel(runs, number, lang):
    """No number of the export's making in the words: each text with numbers is a cell that
    fills it in the kernel, and what it showed there is the text filled from the values of an
    independent run of the same steps (the lesson's terminal run in that language: the same
    numbers, word for word)."""
    done, files = runs(number)
    _, nb_path = files[lang]
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    markdown = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    ns = lesson_ran(number, lang).session.ns
    expected = {k: render.join_cjk(filled.said(number, k, ns)) for k in _filled(number, lang)}
    assert len(expected) >= 6
    cells = json.loads(done[(lang, "ipynb")].stdout.splitlines()[-1])
    shown = {}
    for c in cells:
        m = re.fullmatch(r'attnlab\.lessons\.say\(\d+, "(\w+)", globals\(\)\)', c["source"])
        if m:
            shown[m.group(1)] = "".join(o["markdown"] for o in c["outputs"])
    assert shown == expected
    for key, text in expected.items():  # and none of it was written into the notebook itself
        for sentence in re.split(r"(?<=[.。])\s", text):
            if re.search(r"\d", sentence) and len(sentence) > 40:
                assert sentence not in markdown, (key, sentence)


@pytest.mark.parametrize(("number", "lang"), FIGURES_IN.items())
def test_a_training_scripts_words_are_printed_as_the_lesson_shows_them(number, lang, capsys):
    """Outside Jupyter, the script's ``say`` cells print each text with numbers filled from the
    values its own steps computed: here, from the lesson's own run, whose terminal showed the
    same words (as the terminal renders Markdown, however it wraps)."""
    ran = lesson_ran(number, lang)
    keys = _filled(number, lang)
    shown = bare_text(ran.text)
    assert len(keys) >= 6
    for key in keys:
        exec(notebooks.say_code(number, key), {"attnlab": attnlab, **ran.session.ns})
        printed = capsys.readouterr().out
        assert len(bare_text(printed)) > 20 and bare_text(printed) in shown, (key, printed)
        said = filled.said(number, key, ran.session.ns)  # all of it: its words and numbers,
        # whatever Markdown (a table) became on the terminal
        assert "".join(WORD_RUNS.findall(printed)) == "".join(WORD_RUNS.findall(said)), key
        assert re.search(r"\d", printed) and "{" not in printed, (key, printed)


@pytest.mark.parametrize(("number", "lang"), PAIRS)
def test_the_notebook_is_valid_and_jupytext_reads_the_script_as_its_cells(runs, number, lang):
    nbformat = pytest.importorskip("nbformat")
    jupytext = pytest.importorskip("jupytext")
    _, files = runs(number)
    py, nb_path = files[lang]
    nb = nbformat.read(nb_path, as_version=4)
    nbformat.validate(nb)
    back = jupytext.reads(py.read_text(encoding="utf-8"), fmt="py:percent")
    own = [c for c in back.cells if c.cell_type == "raw" and c.metadata.get("active") == "py"]
    folded = [c for c in nb.cells if c.cell_type == "markdown" and c.source.startswith("<details")]
    assert len(folded) == len(runner.exercises(number))  # the script keeps them out of sight
    assert [(c.cell_type, c.source) for c in back.cells if c not in own] == [
        (c.cell_type, c.source) for c in nb.cells if c not in folded
    ]
    assert len(own) >= len(runner.steps(number)) + len(folded)  # headings printed; answers
    magics = [c.source for c in back.cells if c.cell_type == "code" and "%pip" in c.source]
    assert not magics  # no live magic the notebook did not have


@pytest.mark.parametrize(("number", "lang"), [(2, "ja"), (3, "zh"), (4, "en")])
def test_an_export_from_the_lessons_run_is_the_export_that_runs_it_again(number, lang):
    """``ran=``: the export made from the terminal run's session is, cell for cell, the one
    ``lessons.export`` makes by running the lesson itself (lessons whose worked answers time
    nothing, so both runs print the same)."""
    ran = lesson_ran(number, lang).session
    assert notebooks.build(number, lang, overrides=short(number), ran=ran) == notebooks.build(
        number, lang, overrides=short(number)
    )
    with pytest.raises(ValueError, match="ran: a run of lesson"):
        notebooks.build(number, lang, seed=1, overrides=short(number), ran=ran)
    trained = engine.session(6, "ja", 0, short(6))  # a lesson that trains: never from a run
    with pytest.raises(ValueError, match="ran: lesson 6 trains"):
        notebooks.build(6, "ja", overrides=short(6), ran=trained)


@pytest.mark.parametrize("number", source.lessons())
def test_the_terminal_lesson_prints_plain_text_to_a_pipe(number):
    lang = FIGURES_IN.get(number, "en")
    text = lesson_ran(number, lang).text
    assert _in_order(_printed(number, lang), text)
    assert "|---" not in text and "\x1b[" not in text  # piped: plain, tables drawn


@pytest.mark.parametrize("number", source.lessons())
def test_the_terminal_lesson_writes_each_figure_as_a_png(number):
    """The lesson's run in the language of ``FIGURES_IN`` (English for lessons 1-5), its
    figures into a folder of their own."""
    ran = lesson_ran(number, FIGURES_IN.get(number, "en"))
    paths = [Path(p) for p in re.findall(r"^  \[plot\] (.+)$", ran.text, re.M)]
    calls = sum(c.code.count("plot(") for c in runner.steps(number))
    assert len(paths) >= calls and len(set(paths)) == len(paths)  # (some in loops)
    assert sorted(paths) == sorted(ran.plots.iterdir())  # every file it wrote, nothing else
    for p in paths:
        data = p.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, p
        width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
        assert width <= 1600 and height <= 1600, (p.name, width, height)


def _fresh_env(tmp: Path) -> Path:
    """A new virtual environment without attnlab, its other dependencies (pip included)
    borrowed from this one: links to each installed package but attnlab, so pip needs no
    network and installs into the new environment."""
    venv = [sys.executable, "-m", "venv", "--without-pip", str(tmp / "env")]
    subprocess.run(venv, check=True, timeout=300)
    ours = Path(sysconfig.get_paths()["purelib"])
    deps = tmp / "deps"
    deps.mkdir()
    for entry in ours.iterdir():
        if not entry.name.lower().startswith(("attnlab", "__editable__", "_attnlab")):
            (deps / entry.name).symlink_to(entry)
    python = tmp / "env" / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(site) / "deps.pth").write_text(f"{deps}\n")
    return python


@pytest.mark.lesson(2)  # exported from the run of lesson 2's group
def test_the_install_cell_installs_attnlab_from_the_wheel_beside_the_lesson(tmp_path):
    lesson = tmp_path / "lesson"
    ran = lesson_ran(2, "zh")
    written = lessons.export(2, lesson, "zh", fmt="py", wheel=True, ran=ran.session)
    assert [p.name for p in written] == ["lesson2.py", "attnlab-0.1.0-py3-none-any.whl"]
    python = _fresh_env(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    missing = subprocess.run([python, "-c", "import attnlab"], capture_output=True, env=env)
    assert missing.returncode != 0  # fresh: no attnlab until the cell installs it
    r = subprocess.run(
        [python, str(lesson / "lesson2.py")],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,  # elsewhere: the cell finds the wheel beside the script
        env=env,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert _in_order(_printed(2, "zh"), r.stdout)  # what the lesson's own run printed
    where = subprocess.run(
        [python, "-c", "import attnlab; print(attnlab.__file__)"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert str(tmp_path / "env") in where.stdout  # installed into the fresh environment


def test_install_from_a_url_and_the_notebook_node_from_python():
    nb = lessons.notebook(2, "ja", install="git+https://example.org/attnlab.git")
    first = nb.cells[1].source
    assert '"git+https://example.org/attnlab.git"' in first and '"pip", "install"' in first
    assert "%pip" not in first and nb.cells[0].source.startswith("# レッスン 2：")
    bare = lessons.notebook(2, "en").cells[1].source
    assert "--wheel" in bare and "pip install attnlab" not in bare.replace("pip install it", "")
