"""A small Sphinx extension for the book: the language switch, the book's template and style.

Every page gets ``attnlab_switch``: for each language of this build, its name and the link to the
same page in that language (``../ja/lesson1.html`` from ``en/lesson1.html``), so the switch
leads to the same lesson, not to the start. ``attnlab_fingerprint`` (the attnlab sources the
pages were computed with) is an "env" setting: when it changes, every page is read and executed
anew instead of keeping outputs cached under older code.
"""

from __future__ import annotations

from pathlib import Path

from .words import LANG_NAMES, WORDS

HERE = Path(__file__).parent


def setup(app) -> dict:
    app.add_config_value("attnlab_lang", "en", "html")
    app.add_config_value("attnlab_langs", [], "html")
    app.add_config_value("attnlab_fingerprint", "", "env")
    app.connect("config-inited", _paths)
    app.connect("html-page-context", _switch)
    app.add_css_file("attnlab-book.css")
    app.add_search_language(_chinese())
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def _chinese() -> type:
    """Sphinx's Chinese search, its script fixed: it ships the English stemmer (for the Latin
    words in Chinese text) but names it ``ChineseStemmer`` in language_data.js, so the search
    page stops with "ChineseStemmer is not defined". Named after the stemmer it ships."""
    from sphinx.search.zh import SearchChinese

    return type("SearchChineseFixed", (SearchChinese,), {"language_name": "English"})


def _paths(app, config) -> None:
    config.templates_path.append(str(HERE / "templates"))
    config.html_static_path.append(str(HERE / "static"))


def _switch(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    here, langs = app.config.attnlab_lang, app.config.attnlab_langs
    up = "../" * (pagename.count("/") + 1)  # from this page up to the book's root
    context["attnlab_home"] = f"{up}index.html"
    context["attnlab_home_label"] = WORDS["all_languages"](here)
    context["attnlab_languages_label"] = WORDS["languages"](here)
    context["attnlab_switch"] = [
        (code, LANG_NAMES[code], f"{up}{code}/{pagename}.html", code == here) for code in langs
    ]


__all__ = ["setup"]
