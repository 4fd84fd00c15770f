"""The course as a web book: the lessons' notebooks built into a static site (Sphinx + myst-nb).

- ``notebook``: a lesson's page, from the lessons' own notebook export
- ``config`` / ``sphinxext``: the Sphinx settings and the language switch
- ``site``: the whole build (``attnlab book OUT_DIR``)

Importing this package imports no Sphinx and builds nothing.
"""

from .site import BookConfig, build, choose_lessons, require_sphinx

__all__ = ["BookConfig", "build", "choose_lessons", "require_sphinx"]
