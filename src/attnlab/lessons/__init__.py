"""Runnable, bilingual lessons of the attention course (``attnlab lesson``).

- ``base``: the shape of a lesson (steps, exercises, quiz) and the context a step runs in
- ``engine``: running a lesson, an exercise or the quiz
- ``lesson1`` .. ``lesson4``: the lessons themselves

Importing this package computes nothing.
"""

from .engine import LESSONS, get, list_lessons, run, run_exercise, run_quiz

__all__ = ["LESSONS", "get", "list_lessons", "run", "run_exercise", "run_quiz"]
