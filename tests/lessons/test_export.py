"""Every lesson, in every language, exported: the script runs with plain python and the notebook
executes top to bottom in a Jupyter kernel, both printing what the lesson's own run printed;
every figure cell shows an image; the notebook is valid and jupytext reads the script back as
its cells; the install cell installs attnlab into a fresh environment from the wheel beside it.

Each lesson runs once per language to be exported (the export fills its prose with that run's
numbers), and that run's printed output is what the script and the notebook must print (every
script runs; each lesson's notebook in one language, the languages taking turns): the
export is a process apart too, since some digits (a float32 rounding difference) depend on how
many threads torch uses, which a test process may change. The terminal lesson runs once, in
the language of its notebook's export (English for lessons 1-5), with its figures written as
PNG files. Each language's runs are an xdist group of their own (``export/en``, ...), so the
three can go to different workers. The runs go two at a time (the machine has two cores), each
a fork of the test process's runner, which imported torch and attnlab once
(``helpers.fork_jobs``, tests/forks.py; off with ATTNLAB_TEST_FORKS=0), all on one torch
thread; a script runs once its export has ended."""

import json
import os
import re
import struct
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from attnlab import lessons
from attnlab.grade import words
from attnlab.lessons import answers, runner, source
from helpers import fork_jobs, short, trains

LANGS = ["en", "ja", "zh"]
# The lessons that train (STEPS in their setup) run the same code in every language; their
# exports run in one language each (tests/lessons/test_training_lessons.py runs all three).
TRAINING = {6: "ja", 7: "zh"}
PAIRS = [
    (n, lang)
    for n in source.lessons()
    for lang in LANGS
    if not trains(n) or TRAINING.get(n, "en") == lang
]
# Each notebook executes in one language (the languages taking turns across the lessons): its
# code cells are the script's, which runs in every language (test_the_notebook_is_valid_and_...
# checks that they are the same cells), and a kernel costs about 2 CPU-seconds beyond the code.
NOTEBOOKS = [(n, TRAINING.get(n, LANGS[(n - 1) % len(LANGS)])) for n in source.lessons()]
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


EXPORT = """
import sys
from attnlab import lessons
from attnlab.lessons import runner
number, lang, folder, overrides = int(sys.argv[1]), sys.argv[2], sys.argv[3], eval(sys.argv[4])
printed, run_cell = [], runner.Session.run_cell
def recorded(self, cell, quiet=False):  # what the export's run of each setup and step printed
    out = run_cell(self, cell, quiet)
    if cell.kind in ("setup", "step"):
        printed.append(out[0])
    return out
runner.Session.run_cell = recorded
lessons.export(number, folder, lang, overrides=overrides)
print("".join(printed), end="")
"""


# the terminal lesson of a lesson that trains, as ``python -m attnlab lesson ...`` runs it, with
# the shortened constants that have no flag (lesson 7's N_TEST) set as ``--steps`` sets STEPS,
# and the words its run's values fill in (what the notebook's kernel must show), in a file
CLI_WORDS = """
import json, sys
from attnlab.cli import main
from attnlab.lessons import engine, filled, render, runner, source
path, more, argv = sys.argv[1], eval(sys.argv[2]), sys.argv[3:]
session, ran, run_cell = engine.session, [], runner.Session.run_cell
def shortened(number, lang="en", seed=0, overrides=None):
    return session(number, lang, seed, {**(overrides or {}), **more})
engine.session = shortened
def watched(self, cell, quiet=False):  # the session the lesson runs its setup in: its own
    if cell.kind == "setup" and not ran:
        ran.append(self)
    return run_cell(self, cell, quiet)
runner.Session.run_cell = watched
status = main(argv)
s = ran[0]
texts = source.prose(s.number, s.lang).texts
keys = [c.id for c in runner.steps(s.number) if source.placeholders(texts.get(c.id, ""))]
words = {k: render.join_cjk(filled.said(s.number, k, s.ns)) for k in keys}
with open(path, "w", encoding="utf-8") as f:
    json.dump(words, f)
raise SystemExit(status)
"""


def _no_flag(number: int) -> dict:
    """The shortened setup constants of lesson ``number`` that ``attnlab lesson`` has no flag
    for (all but STEPS, which ``--steps`` sets)."""
    return {k: v for k, v in short(number).items() if k != "STEPS"}


def _in(lang: str, cases) -> list:
    """``cases`` (tuples whose language is ``lang``), each in that language's xdist group."""
    return [pytest.param(*c, marks=pytest.mark.xdist_group(f"export/{lang}")) for c in cases]


def _of(cases, lang_of) -> list:
    """``cases``, each in the xdist group of its language (``lang_of(case)``)."""
    return [p for lang in LANGS for p in _in(lang, [c for c in cases if lang_of(c) == lang])]


def _cli_lang(number: int) -> str:
    """The language lesson ``number``'s terminal run (``attnlab lesson N --plots``) is in."""
    return TRAINING.get(number, "en")


@pytest.fixture(scope="session")
def runs(tmp_path_factory):
    """``runs(lang)``: the jobs of one language, run once per process when a test first asks
    (each language is an xdist group of its own, so the three can go to different workers)."""
    pytest.importorskip("nbclient", reason="pip install -e '.[dev]' (nbclient, ipykernel)")
    made: dict[str, tuple] = {}

    def of(lang: str) -> tuple[dict, dict, Path]:
        if lang not in made:
            made[lang] = _run(tmp_path_factory, lang)
        return made[lang]

    return of


def _run(tmp_path_factory, lang: str) -> tuple[dict, dict, Path]:
    """Each lesson exported in ``lang`` (the export's own run printing the lesson's output),
    then its script run, the notebooks that execute in ``lang``, and the terminal lessons that
    run in ``lang``, with their figures as PNG files."""
    files, keys, jobs, cwd = {}, {}, [], os.getcwd()  # where pytest runs, as a subprocess would

    def job(key: tuple, *args: str, after: tuple | None = None) -> None:
        keys[repr(key)] = key
        jobs.append([repr(key), args, cwd] + ([repr(after)] if after else []))

    plots = tmp_path_factory.mktemp(f"plots_{lang}")  # the terminal lessons' figures, as PNGs
    pairs = [(n, x) for n, x in PAIRS if x == lang]
    for number, _ in pairs:  # exports first: their scripts wait for them
        folder = tmp_path_factory.mktemp(f"lesson{number}_{lang}")
        files[(number, lang)] = (folder / f"lesson{number}.py", folder / f"lesson{number}.ipynb")
        job(
            (number, lang, "export"),
            "-c",
            EXPORT,
            str(number),
            lang,
            str(folder),
            repr(short(number)),
        )
    said = tmp_path_factory.mktemp(f"words_{lang}")  # the training lessons' words, as JSON
    for number in [n for n in source.lessons() if _cli_lang(n) == lang]:  # the terminal lesson
        extra = ["--steps", str(short(number)["STEPS"])] if trains(number) else []
        extra += ["--lang", lang]  # the language its export ran in
        # a lesson that trains: its run's values also give the words its notebook must show
        cli = (
            ["-c", CLI_WORDS, str(said / f"{number}.json"), repr(_no_flag(number))]
            if trains(number)
            else ["-m", "attnlab"]
        )
        job((number, "cli"), *cli, "lesson", str(number), *extra, "--plots", str(plots))
    for (number, _), (py, nb) in files.items():
        job((number, lang, "py"), str(py), after=(number, lang, "export"))
        if (number, lang) in NOTEBOOKS:
            job((number, lang, "ipynb"), "-c", EXECUTE, str(nb), after=(number, lang, "export"))
    done = {
        keys[key]: subprocess.CompletedProcess(key, status, stdout, stderr)
        for key, (status, stdout, stderr) in fork_jobs(jobs).items()
    }
    for number, _ in pairs:
        r = done[(number, lang, "export")]
        assert r.returncode == 0, r.stderr[-3000:]
    for number in [n for n, x in TRAINING.items() if x == lang]:
        path = said / f"{number}.json"
        done[(number, lang, "words")] = path.read_text(encoding="utf-8") if path.exists() else ""
    return done, files, plots


def _printed(done: dict, number: int, lang: str = "en") -> list[str]:
    """The lines the export's run of lesson ``number`` in ``lang`` printed."""
    return done[(number, lang, "export")].stdout.splitlines()


def _in_order(lines: list[str], text: str) -> bool:
    """Every line of ``lines``, in order, among the lines of ``text`` (figures may come between)."""
    it = iter(text.splitlines())
    return all(line in it for line in lines)


@pytest.mark.parametrize(("number", "lang"), _of(PAIRS, lambda c: c[1]))
def test_exported_script_runs_with_python_and_prints_the_lesson(runs, number, lang):
    done, _, _ = runs(lang)
    r = done[(number, lang, "py")]
    assert r.returncode == 0, r.stderr[-3000:]
    # a lesson that trains too: by steps, from a seed, on one thread, the same numbers each run
    assert _in_order(_printed(done, number, lang), r.stdout)
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
    assert _in_order(
        [f"== {k}. {titles[c.id]}" for k, c in enumerate(runner.steps(number), 1)], r.stdout
    )
    if number == 1:
        assert "{'床': 0.12, '前': 0.11, '明': 0.26, '月': 0.29, '光': 0.23}" in r.stdout
        assert "{'床': 0.01, '前': 0.0, '明': 0.3, '月': 0.5, '光': 0.18}" in r.stdout


@pytest.mark.parametrize(("number", "lang"), _of(NOTEBOOKS, lambda c: c[1]))
def test_exported_notebook_executes_in_a_kernel_and_every_figure_is_an_image(runs, number, lang):
    done, _, _ = runs(lang)
    r = done[(number, lang, "ipynb")]
    assert r.returncode == 0, r.stderr[-3000:]
    cells = json.loads(r.stdout.splitlines()[-1])
    outputs = [o for c in cells for o in c["outputs"]]
    assert not [o for o in outputs if o["type"] == "error"]
    streamed = "".join(o["text"] for o in outputs if o["type"] == "stream")
    assert _in_order(_printed(done, number, lang), streamed)
    figures = [c for c in cells if "plot(" in c["source"] and "def plot" not in c["source"]]
    steps_with_plots = [c for c in runner.steps(number) if "plot(" in c.code]
    assert len(figures) >= len(steps_with_plots)
    for c in figures:  # the image itself, never only "<Figure size ...>"
        pngs = [o for o in c["outputs"] if "image/png" in o["mime"]]
        assert pngs, (c["source"][:200], c["outputs"])
        assert not any("<Figure size" in o["text"] for o in c["outputs"])


@pytest.mark.parametrize(("number", "lang"), _of(TRAINING.items(), lambda c: c[1]))
def test_a_training_notebook_fills_its_words_from_its_own_kernel(runs, number, lang):
    """No number of the export's making in the words: each text with numbers is a cell that
    fills it in the kernel, and what it showed there is the text filled from the values of an
    independent run of the same steps (the terminal lesson's run in that language: the same
    numbers, word for word)."""
    done, files, _ = runs(lang)
    _, nb_path = files[(number, lang)]
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    markdown = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    r = done[(number, "cli")]
    assert r.returncode == 0, r.stderr[-3000:]
    expected = json.loads(done[(number, lang, "words")])
    assert len(expected) >= 6
    cells = json.loads(done[(number, lang, "ipynb")].stdout.splitlines()[-1])
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


@pytest.mark.parametrize(("number", "lang"), _of(PAIRS, lambda c: c[1]))
def test_the_notebook_is_valid_and_jupytext_reads_the_script_as_its_cells(runs, number, lang):
    nbformat = pytest.importorskip("nbformat")
    jupytext = pytest.importorskip("jupytext")
    _, files, _ = runs(lang)
    py, nb_path = files[(number, lang)]
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


@pytest.mark.parametrize("number", _of([(n,) for n in source.lessons()], lambda c: _cli_lang(c[0])))
def test_the_terminal_lesson_prints_those_numbers(runs, number):
    done, _, _ = runs(_cli_lang(number))
    r = done[(number, "cli")]
    assert r.returncode == 0, r.stderr[-3000:]
    assert _in_order(_printed(done, number, _cli_lang(number)), r.stdout)
    assert "|---" not in r.stdout and "\x1b[" not in r.stdout  # piped: plain, tables drawn


@pytest.mark.parametrize("lang", _of([(x,) for x in LANGS], lambda c: c[0]))
def test_the_terminal_lesson_writes_each_figure_as_a_png(runs, lang):
    """The terminal lessons that run in ``lang`` (lessons 1-5 in English, 6 in Japanese, 7 in
    Chinese), each into that language's folder of figures."""
    done, _, plots = runs(lang)
    printed = []
    for number in [n for n in source.lessons() if _cli_lang(n) == lang]:  # (training: short)
        paths = re.findall(r"^  \[plot\] (.+)$", done[(number, "cli")].stdout, re.M)
        calls = sum(c.code.count("plot(") for c in runner.steps(number))
        assert len(paths) >= calls and len(set(paths)) == len(paths), number  # (some in loops)
        printed += [Path(p) for p in paths]
    assert sorted(printed) == sorted(plots.iterdir())  # every file it wrote, nothing else
    assert len(printed) >= (10 if lang == "en" else 1)  # lessons 1-5 alone draw 10 or more
    for p in printed:
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


def test_the_install_cell_installs_attnlab_from_the_wheel_beside_the_lesson(tmp_path):
    lesson = tmp_path / "lesson"
    # the timing exercise on short lengths (TIMED), in the export's run and in the script
    written = lessons.export(1, lesson, "zh", fmt="py", wheel=True, overrides=short(1))
    assert [p.name for p in written] == ["lesson1.py", "attnlab-0.1.0-py3-none-any.whl"]
    python = _fresh_env(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    missing = subprocess.run([python, "-c", "import attnlab"], capture_output=True, env=env)
    assert missing.returncode != 0  # fresh: no attnlab until the cell installs it
    r = subprocess.run(
        [python, str(lesson / "lesson1.py")],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,  # elsewhere: the cell finds the wheel beside the script
        env=env,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert "{'床': 0.12, '前': 0.11, '明': 0.26, '月': 0.29, '光': 0.23}" in r.stdout
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
