"""A ready Gradescope autograder folder for one exercise (``attnlab exercise autograder``).

Gradescope runs ``setup.sh`` once to build its image and ``run_autograder`` for each submission
(the student's files in ``/autograder/submission``), and reads ``/autograder/results/
results.json``. Both scripts take their root from ``$AUTOGRADER`` (default ``/autograder``) and
the attnlab command from ``$ATTNLAB``, so they can be tried locally before uploading.
"""

from __future__ import annotations

import stat
from pathlib import Path

from .. import __version__
from ..errors import UserError
from ..files import atomic_write_text
from ..wheel import build_wheel
from .exercises import EXERCISES
from .grader import DEFAULT_SEED

NUMPY_REQUIREMENT = "numpy>=1.24"  # as pyproject's; the only dependency grading imports
SETUP = """#!/usr/bin/env bash
# Gradescope image setup for attnlab {version}: Python, bubblewrap (the grader's sandbox), NumPy and
# attnlab without torch. Where
# the container cannot create namespaces (Docker's default seccomp profile), run_autograder
# refuses to grade unless ALLOW_PROCESS_ISOLATION is 1 there (see README.txt).
set -euo pipefail
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv python3-pip bubblewrap
python3 -m venv /autograder/venv
/autograder/venv/bin/pip install --quiet --upgrade pip
# attnlab is not on PyPI: its wheel comes in the zip, beside this script
if ! ls /autograder/source/attnlab-*.whl >/dev/null 2>&1; then
    echo "setup.sh: no attnlab-*.whl beside setup.sh; write the folder again with" \
        "'attnlab exercise autograder NAME -o DIR' from attnlab's source checkout," \
        "or copy in the wheel attnlab was installed from" >&2
    exit 1
fi
# grading needs NumPy and attnlab only (the submission runs on NumPy; the reference is attnlab's
# float64 NumPy code): --no-deps keeps torch, matplotlib and the lesson tools out of the image
/autograder/venv/bin/pip install --quiet --no-deps /autograder/source/attnlab-*.whl
/autograder/venv/bin/pip install --quiet "{numpy}"
"""

RUN = """#!/usr/bin/env bash
# Grade the submission for '{exercise}' and write Gradescope's results.json.
# Without a working bwrap the grading is refused (a results.json that says why) unless this is 1:
# then the code runs with process isolation, as an unprivileged uid of its own whose every
# process is killed before results.json is written (atomically, in a folder it cannot write).
ALLOW_PROCESS_ISOLATION="${{ATTNLAB_ALLOW_PROCESS_ISOLATION:-{allow}}}"
# The random cases' seed: fixed, so a regrade gives every student the same score (results.json
# records it and attnlab's version). Change it here for another set of cases.
SEED={seed}
set -uo pipefail
root="${{AUTOGRADER:-/autograder}}"
attnlab="${{ATTNLAB:-$root/venv/bin/attnlab}}"
mkdir -p "$root/results"
chmod 755 "$root/results"
results="$root/results/results.json"
fail_closed() {{  # a zero that says why, and a non-zero exit: never an empty or missing result
    python3 -c 'import json, sys; print(json.dumps({{"score": 0, "output": sys.argv[1], "tests": []}}))' "$1" \
        > "$results" 2>/dev/null \
        || printf '{{"score": 0, "output": "%s", "tests": []}}\n' "the grader failed" > "$results"
    echo "run_autograder: $1" >&2
    exit 1
}}
if ! $attnlab --version >/dev/null 2>&1; then
    fail_closed "NOT GRADED: the grader is not installed ('$attnlab --version' failed): the image was built without attnlab; rebuild it with setup.sh and the attnlab wheel beside it."
fi
flags=()
[ "$ALLOW_PROCESS_ISOLATION" = "1" ] && flags+=(--no-sandbox)
file=$(find "$root/submission" -maxdepth 2 -type f \\( -name '*.py' -o -name '*.ipynb' \\) | sort | head -n 1)
if [ -z "$file" ]; then
    printf '%s\\n' '{{"score": 0, "output": "No .py or .ipynb file was submitted.", "tests": []}}' \\
        > "$root/results/results.json"
    exit 0
fi
{teacher}# the folder, not one file: attnlab grades the file that defines {exercise}() (then the one named
# for it), and results.json names the files it ignored (helpers, scratch files)
$attnlab grade "$root/submission" --exercise {exercise} --format gradescope --lang {lang} --seed "$SEED" ${{flags[@]+"${{flags[@]}}"}} \\
    -o "$results"
status=$?
[ "$status" -le 1 ] || echo "attnlab grade exited with $status" >&2
if [ ! -s "$results" ]; then  # the grader broke before it wrote a result
    fail_closed "NOT GRADED: attnlab grade exited with $status without writing a result."
fi
exit 0
"""

TEACHER_FILE = "teacher_exercise.py"
# the teacher's exercise, beside run_autograder in the zip: Gradescope unpacks it in
# $root/source; tried locally, it is the folder run_autograder is in
TEACHER = """source="$root/source"
[ -f "$source/teacher_exercise.py" ] || source=$(cd "$(dirname "$0")" && pwd)
flags+=(--exercise-file "$source/teacher_exercise.py")
"""

README = """Gradescope autograder for the attnlab exercise '{exercise}'.

Zip the files of this folder (not the folder itself) and upload the zip as the assignment's
autograder. Students submit a .py or .ipynb defining {signature}; the file that defines it is
graded (then one named {exercise}.py), whatever else they hand in (results.json lists the files
ignored). The random cases' seed is fixed (SEED={seed} in run_autograder): a regrade gives the
same score, and results.json records the seed and attnlab's version.
setup.sh installs attnlab from its wheel in this folder (attnlab is not on PyPI) with
--no-deps, and NumPy: grading needs nothing else, so the image holds no torch. If attnlab is
missing when a submission comes, run_autograder writes a results.json that says the grader is
not installed (score 0) and exits 1, so the failure shows instead of a silent empty result.
Each submission runs in a bubblewrap sandbox. Where Gradescope's container cannot create one,
run_autograder refuses to grade (results.json says why, score 0): set ALLOW_PROCESS_ISOLATION=1
at the top of run_autograder to grade with process isolation instead (the submission runs as an
unprivileged uid of its own, every process of it is killed before results.json is written).
Try it locally: AUTOGRADER=some/folder ATTNLAB=attnlab ./run_autograder, with the student's file
in some/folder/submission; the results land in some/folder/results/results.json.
"""


def write_autograder(
    exercise: str,
    out: str | Path,
    lang: str = "en",
    wheel: bool = True,
    allow_process_isolation: bool = False,
    seed: int = DEFAULT_SEED,
    exercise_file: str | Path | None = None,
) -> list[Path]:
    """Write setup.sh, run_autograder and README.txt for ``exercise`` into ``out``, and (with
    ``wheel``) attnlab's wheel, which setup.sh installs. Without a sandbox the autograder
    refuses to grade unless ``allow_process_isolation`` (or the variable in run_autograder).
    ``exercise_file``: a teacher's exercise (already loaded), copied in as
    ``teacher_exercise.py`` and passed to every grading."""
    if exercise not in EXERCISES:
        raise UserError(f"unknown exercise {exercise!r}; choose one of {', '.join(EXERCISES)}")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserError(f"-o {out}: a file, expected a folder")
    sig = EXERCISES[exercise].signature
    files = {
        "setup.sh": SETUP.format(version=__version__, numpy=NUMPY_REQUIREMENT),
        "run_autograder": RUN.format(
            exercise=exercise,
            lang=lang,
            allow=int(allow_process_isolation),
            seed=seed,
            teacher=TEACHER if exercise_file else "",
        ),
        "README.txt": README.format(exercise=exercise, signature=sig, seed=seed),
    }
    if exercise_file:
        files[TEACHER_FILE] = Path(exercise_file).read_text(encoding="utf-8")
    written = []
    for name, text in files.items():
        path = atomic_write_text(out / name, text)
        if name not in ("README.txt", TEACHER_FILE):
            path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        written.append(path)
    if wheel:
        written.append(build_wheel(out))
    return written
