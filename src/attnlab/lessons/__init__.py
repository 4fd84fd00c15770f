"""The attention course's lessons, each a literate source the learner can run, read and edit.

- ``content/lessonN/``: ``code.py`` (the code, written once) and ``en.md``/``ja.md``/``zh.md``
- ``source``: reading those files; ``runner``: running their cells exactly as shown
- ``engine``: the terminal lesson, an exercise, the quiz; ``notebooks``: a script and a
  notebook (``export(n, folder, ...)`` writes them, ``notebook(n, lang, seed, overrides)`` gives
  the nbformat node)
- ``answers``: checking an exercise's answer or a quiz answer; ``show``: what lesson code prints
  and draws (text figures in the terminal, images in Jupyter); ``render``: the terminal (rich)
- ``comments``: the code's comments in the learner's language; ``filled``: a step's words filled
  where its code ran (the exported notebooks of the lessons that train)

Importing this package computes nothing.
"""

from .answers import check_answer, quiz
from .engine import get, list_lessons, run, run_exercise, run_quiz
from .filled import say
from .notebooks import export, notebook
from .source import lessons

__all__ = [
    "check_answer",
    "export",
    "get",
    "lessons",
    "list_lessons",
    "notebook",
    "quiz",
    "run",
    "run_exercise",
    "run_quiz",
    "say",
]
