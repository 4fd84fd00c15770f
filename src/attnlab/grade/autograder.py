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

SETUP = """#!/usr/bin/env bash
# Gradescope image setup for attnlab {version}: Python, bubblewrap (the grader's sandbox; inside
# a container without user namespaces attnlab falls back to process isolation and says so).
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
/autograder/venv/bin/pip install --quiet /autograder/source/attnlab-*.whl
"""

RUN = """#!/usr/bin/env bash
# Grade the submission for '{exercise}' and write Gradescope's results.json.
set -uo pipefail
root="${{AUTOGRADER:-/autograder}}"
attnlab="${{ATTNLAB:-$root/venv/bin/attnlab}}"
mkdir -p "$root/results"
file=$(find "$root/submission" -maxdepth 2 -type f \\( -name '*.py' -o -name '*.ipynb' \\) | sort | head -n 1)
if [ -z "$file" ]; then
    printf '%s\\n' '{{"score": 0, "output": "No .py or .ipynb file was submitted.", "tests": []}}' \\
        > "$root/results/results.json"
    exit 0
fi
$attnlab grade "$file" --exercise {exercise} --format gradescope --lang {lang} \\
    > "$root/results/results.json"
status=$?
[ "$status" -le 1 ] || echo "attnlab grade exited with $status" >&2
exit 0
"""

README = """Gradescope autograder for the attnlab exercise '{exercise}'.

Zip the files of this folder (not the folder itself) and upload the zip as the assignment's
autograder. Students submit one .py or .ipynb defining {signature}.
setup.sh installs attnlab from its wheel in this folder (attnlab is not on PyPI).
Try it locally: AUTOGRADER=some/folder ATTNLAB=attnlab ./run_autograder, with the student's file
in some/folder/submission; the results land in some/folder/results/results.json.
"""


def write_autograder(
    exercise: str, out: str | Path, lang: str = "en", wheel: bool = True
) -> list[Path]:
    """Write setup.sh, run_autograder and README.txt for ``exercise`` into ``out``, and (with
    ``wheel``) attnlab's wheel, which setup.sh installs."""
    if exercise not in EXERCISES:
        raise UserError(f"unknown exercise {exercise!r}; choose one of {', '.join(EXERCISES)}")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserError(f"-o {out}: a file, expected a folder")
    sig = EXERCISES[exercise].signature
    files = {
        "setup.sh": SETUP.format(version=__version__),
        "run_autograder": RUN.format(exercise=exercise, lang=lang),
        "README.txt": README.format(exercise=exercise, signature=sig),
    }
    written = []
    for name, text in files.items():
        path = atomic_write_text(out / name, text)
        if name != "README.txt":
            path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        written.append(path)
    if wheel:
        written.append(build_wheel(out))
    return written
