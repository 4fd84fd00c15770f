"""Every lesson, in every language, exported: the script runs with plain python and the notebook
executes top to bottom in a Jupyter kernel, both printing what the terminal lesson printed.

The terminal lesson's own run of the steps is a fresh process as well: some digits (a float32
rounding difference) depend on how many threads torch uses, which a test process may change.
The 35 runs go two at a time in subprocesses (the machine has two cores)."""

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from attnlab import lessons
from attnlab.grade import words
from attnlab.lessons import answers, runner, source

LANGS = ["en", "ja", "zh"]
PAIRS = [(n, lang) for n in source.lessons() for lang in LANGS]

EXECUTE = """
import json, sys, nbformat
from nbclient import NotebookClient
path = sys.argv[1]
nb = nbformat.read(path, as_version=4)
NotebookClient(nb, timeout=120, kernel_name="python3").execute(cwd=str(__import__("pathlib").Path(path).parent))
out = [[o.get("output_type"), o.get("text", "")] for c in nb.cells if c.cell_type == "code" for o in c.outputs]
print(json.dumps(out))
"""


STEPS = """
import sys
from attnlab.lessons import runner, source
s = runner.Session(int(sys.argv[1]))
print("".join(s.run_cell(c, quiet=True)[0] for c in source.cells(s.number) if c.kind in ("setup", "step")), end="")
"""


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    pytest.importorskip("nbclient", reason="pip install -e '.[dev]' (nbclient, ipykernel)")
    jobs = {}
    for number, lang in PAIRS:
        folder = tmp_path_factory.mktemp(f"lesson{number}_{lang}")
        py, nb = lessons.export(number, folder, lang)
        jobs[(number, lang, "py")] = [sys.executable, str(py)]
        jobs[(number, lang, "ipynb")] = [sys.executable, "-c", EXECUTE, str(nb)]
    for number in source.lessons():  # what the terminal lesson runs, in a fresh process too
        jobs[(number, "steps")] = [sys.executable, "-c", STEPS, str(number)]
        jobs[(number, "cli")] = [sys.executable, "-m", "attnlab", "lesson", str(number)]
    with ThreadPoolExecutor(2) as pool:
        done = dict(zip(jobs, pool.map(_run, jobs.values()), strict=True))
    return done


@pytest.mark.parametrize(("number", "lang"), PAIRS)
def test_exported_script_runs_with_python_and_prints_the_lesson(runs, number, lang):
    r = runs[(number, lang, "py")]
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.startswith(runs[(number, "steps")].stdout)
    for cell in runner.exercises(number):  # each starting code ran, and its check said "not yet"
        failed = answers.WORDS["failed"] if "answer" in cell.options else words.WORDS["failed"]
        assert failed(lang) in r.stdout, cell.id
    if number == 1:
        assert "{'床': 0.12, '前': 0.11, '明': 0.26, '月': 0.29, '光': 0.23}" in r.stdout
        assert "{'床': 0.01, '前': 0.0, '明': 0.3, '月': 0.5, '光': 0.18}" in r.stdout


@pytest.mark.parametrize(("number", "lang"), PAIRS)
def test_exported_notebook_executes_in_a_kernel_and_prints_the_lesson(runs, number, lang):
    r = runs[(number, lang, "ipynb")]
    assert r.returncode == 0, r.stderr[-3000:]
    outputs = json.loads(r.stdout.splitlines()[-1])
    assert not [o for o in outputs if o[0] == "error"]
    streamed = "".join(text for kind, text in outputs if kind == "stream")
    assert streamed.startswith(runs[(number, "steps")].stdout)  # the numbers the script printed
    if number == 1:
        assert any(kind == "display_data" for kind, _ in outputs)  # the figures show inline


@pytest.mark.parametrize("number", source.lessons())
def test_the_terminal_lesson_prints_those_numbers(runs, number):
    r = runs[(number, "cli")]
    assert r.returncode == 0, r.stderr[-3000:]
    lines = iter(r.stdout.splitlines())
    assert all(line in lines for line in runs[(number, "steps")].stdout.splitlines())
