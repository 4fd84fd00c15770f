"""The Sphinx configuration of one language's book, written out as that source folder's conf.py.

Offline by construction: the theme's fonts, icons and scripts are its own files in ``_static``;
no MathJax (the lessons' prose has no TeX; Sphinx adds it only to a page with math); the search
shows no page summaries (those are fetched, and a page opened from file:// cannot fetch);
nothing links to a repository or a launch service. Notebooks execute through myst-nb's
jupyter cache, so a notebook whose code did not change is never executed again.
"""

from __future__ import annotations

from .words import SPHINX_LANG, WORDS


def settings(
    lang: str, langs: list[str], jupyter_cache: str, fingerprint: str, timeout: int
) -> dict[str, object]:
    """conf.py's names and values for the book in ``lang`` (a build of ``langs``)."""
    return {
        "project": WORDS["book"](lang),
        "author": "attnlab",
        "copyright": "attnlab",
        "language": SPHINX_LANG[lang],
        "extensions": ["myst_nb", "attnlab.book.sphinxext"],
        "exclude_patterns": ["_extra", "**.ipynb_checkpoints"],
        "html_theme": "sphinx_book_theme",
        # Sphinx fills this in with translated words after comparing it with the last build's,
        # so the two never match and every page is read again; plain words keep it still
        # (the book numbers no figures, so they are never shown).
        "numfig_format": {
            "section": "Section %s",
            "figure": "Fig. %s",
            "table": "Table %s",
            "code-block": "Listing %s",
        },
        "html_title": WORDS["book"](lang),
        "html_extra_path": ["_extra"],
        "html_show_sourcelink": False,
        "html_show_sphinx": False,
        "html_show_search_summary": False,
        "html_last_updated_fmt": None,
        "html_permalinks": True,
        "html_theme_options": {
            "article_header_end": ["attnlab-lang.html", "article-header-buttons.html"],
            "use_download_button": True,
            "use_fullscreen_button": False,
            "home_page_in_toc": True,
            "show_toc_level": 2,
        },
        "html_context": {"default_mode": "light"},  # the theme's script wants a mode set
        "html_sidebars": {
            "**": ["navbar-logo.html", "search-button-field.html", "sbt-sidebar-nav.html"]
        },
        "nb_execution_mode": "cache",
        "nb_execution_cache_path": jupyter_cache,
        "nb_execution_timeout": timeout,
        "nb_execution_raise_on_error": True,
        "nb_merge_streams": True,
        "nb_render_markdown_format": "myst",  # the prose a hidden cell fills in (tables too)
        # Sphinx's Chinese search loads jieba's own dictionary a second time, as a user
        # dictionary (3-4 CPU-seconds a build), unless told there is none: jieba has it anyway
        **({"html_search_options": {"dict": ""}} if lang == "zh" else {}),
        "attnlab_lang": lang,
        "attnlab_langs": list(langs),
        "attnlab_fingerprint": fingerprint,
    }


def conf_py(values: dict[str, object]) -> str:
    """The text of conf.py: one plain assignment per setting (Python literals only)."""
    lines = ["# Written by `attnlab book`; it rewrites this file on every build.", ""]
    lines += [f"{name} = {value!r}" for name, value in values.items()]
    return "\n".join(lines) + "\n"


__all__ = ["conf_py", "settings"]
