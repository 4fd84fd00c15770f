"""A small Sphinx extension for the book: the language switch, the book's template and style.

Every page gets ``attnlab_switch``: for each language of this build, its name and the link to the
same page in that language (``../ja/lesson1.html`` from ``en/lesson1.html``), so the switch
leads to the same lesson, not to the start. ``attnlab_fingerprint`` (the attnlab sources the
pages were computed with) is an "env" setting: when it changes, every page is read and executed
anew instead of keeping outputs cached under older code.
"""

from __future__ import annotations

import re
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
    app.add_search_language(_japanese())
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def _chinese() -> type:
    """Sphinx's Chinese search (words cut by jieba), with CJK pairs (``cjk_pairs``) and the
    query splitter that makes the same pairs; and its script fixed: it ships the English
    stemmer (for the Latin words in Chinese text) but names it ``ChineseStemmer`` in
    language_data.js, so the search page stops with "ChineseStemmer is not defined". Named
    after the stemmer it ships."""
    from sphinx.search.zh import SearchChinese

    return _with_pairs(SearchChinese, "SearchChineseFixed", language_name="English")


def _japanese() -> type:
    """Sphinx's Japanese search (its own splitter, offline, no dictionary to install), with
    CJK pairs and the query splitter that makes the same pairs."""
    from sphinx.search.ja import SearchJapanese

    return _with_pairs(SearchJapanese, "SearchJapaneseWithPairs")


def _with_pairs(base: type, name: str, **attrs) -> type:
    def split(self, text: str) -> list[str]:
        return [*base.split(self, text), *cjk_pairs(text)]

    return type(name, (base,), {"split": split, "js_splitter_code": SPLIT_QUERY, **attrs})


CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_CJK_RUN = re.compile(f"[{CJK_CHARS}]+")


def cjk_pairs(text: str) -> list[str]:
    """Every two neighbouring characters of each run of Chinese or Japanese text (a run of
    two is itself). The page's words come from a segmenter the browser does not have; the
    query "位置编码" is one term to searchtools.js, which finds no such word when the
    segmenter cut 位置 / 编码. Indexing the pairs, and splitting the query into the same
    pairs (``SPLIT_QUERY``), finds every page holding the phrase."""
    return [run[i : i + 2] for run in _CJK_RUN.findall(text) for i in range(len(run) - 1)]


# searchtools.js calls splitQuery(query): its own split (on what is not a letter, a digit or _),
# then each CJK run as the same pairs ``cjk_pairs`` indexed (a single character stays itself)
SPLIT_QUERY = """
function splitQuery(query) {
  const run = /([CJK]+)/u;
  const terms = [];
  for (const word of query.split(/[^\\p{Letter}\\p{Number}_\\p{Emoji_Presentation}]+/gu)) {
    for (const part of word.split(run)) {
      if (!part) continue;
      if (!run.test(part) || part.length < 3) { terms.push(part); continue; }
      for (let i = 0; i + 1 < part.length; i++) terms.push(part.slice(i, i + 2));
    }
  }
  return terms;
}
""".replace("CJK", CJK_CHARS)


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
