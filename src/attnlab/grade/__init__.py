"""``attnlab grade``: grade learners' NumPy attention against PyTorch and name the mistake.

- ``exercises``: the catalogue (contract, cases, reference, known mistakes)
- ``sandbox`` and ``bwrap``: run learner code isolated, bring back only arrays
- ``grader``: turns what came back into checks and mistake ids
- ``classroom``: a whole folder, each submission in its own sandbox
- ``report``: text, JSON, JUnit and class CSV
"""

from __future__ import annotations

from .classroom import UnsafeClassError, grade_dir, submissions_in
from .exercises import EXERCISES
from .grader import Check, Report, grade_file, grade_source
from .inprocess import check
from .sandbox import SandboxError
from .starter import write_starter

__all__ = [
    "EXERCISES",
    "Check",
    "Report",
    "SandboxError",
    "UnsafeClassError",
    "check",
    "grade_dir",
    "grade_file",
    "grade_source",
    "submissions_in",
    "write_starter",
]
