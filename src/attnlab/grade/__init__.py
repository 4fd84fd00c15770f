"""``attnlab grade``: grade learners' NumPy attention against PyTorch and name the mistake.

- ``exercises``: the catalogue (contract, cases, reference, known mistakes)
- ``sandbox`` and ``bwrap``: run learner code isolated, bring back only arrays
- ``mistakes``: the table of mistake ids (step, hints, the versions that produce each)
- ``variants``: the wrong versions themselves (keyword switches on the right code)
- ``diagnosis``: weighs the evidence and names ids
- ``grader``: orchestrates one submission (static checks, sandboxed run, verdict)
- ``results``: the data types (``CheckResult``, ``Report``); ``view``: text and HTML of one
- ``classroom``: a whole folder, each submission in its own sandbox
- ``report``: text, JSON, JUnit and class CSV
- ``helpers``: helper modules handed in beside a submission; ``teacher``: a teacher's exercise
"""

from __future__ import annotations

from .classroom import UnsafeClassError, grade_class, grade_dir, submissions_in
from .exercises import EXERCISES, Case
from .grader import grade_file, grade_source
from .inprocess import check
from .results import CheckResult, Report
from .sandbox import SandboxError
from .starter import write_starter

__all__ = [
    "EXERCISES",
    "Case",
    "CheckResult",
    "Report",
    "SandboxError",
    "UnsafeClassError",
    "check",
    "grade_class",
    "grade_dir",
    "grade_file",
    "grade_source",
    "submissions_in",
    "write_starter",
]
