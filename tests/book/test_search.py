"""The book's search finds multi-word Japanese and Chinese queries, in a real browser.

A small book built with the book's own Sphinx configuration and extension: two Japanese pages
made of lessons 1 and 3's words (title and texts, as Markdown; no notebook runs, so the build
takes seconds). searchtools.js then answers ``search.html?q=…`` in Debian's chromium: each
query finds exactly the lessons whose text holds it. Before the book indexed CJK pairs,
位置エンコーディング (lesson 3's own title) found nothing: the query is one term to the browser,
while the page's words had been cut into pieces. The Chinese queries (jieba's cuts) are asked of
the session's book in tests/book/test_book.py, which builds Chinese pages anyway.

Under CI=true a missing Sphinx fails these tests; elsewhere they skip."""

import importlib.util
import os
from pathlib import Path

import pytest

from attnlab.book import config, site
from attnlab.book.sphinxext import cjk_pairs
from attnlab.lessons import source
from helpers import browser_page

pytestmark = pytest.mark.filterwarnings("ignore:.*HandleFootnoteTransform.app")
LESSONS = (1, 3)
QUERIES = [("ja", "因果マスク"), ("ja", "位置エンコーディング")]


def _page(number: int, lang: str) -> str:
    words = source.prose(number, lang)
    return "\n\n".join([f"# {words.title}", words.intro, *words.texts.values()])


@pytest.fixture(scope="module")
def small_book(tmp_path_factory) -> Path:
    if importlib.util.find_spec("sphinx") is None or importlib.util.find_spec("myst_nb") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("the book's tools are missing: pip install -e '.[dev]'")
        pytest.skip("the book's tools are missing: pip install -e '.[dev]'")
    root = tmp_path_factory.mktemp("search")
    for lang in ("ja",):
        src = root / "src" / lang
        (src / "_extra").mkdir(parents=True)
        values = config.settings(lang, ["ja"], str(root / "jupyter"), "test", 60)
        (src / "conf.py").write_text(config.conf_py(values), encoding="utf-8")
        (src / "index.md").write_text(site.lang_index(lang, list(LESSONS)), encoding="utf-8")
        for n in LESSONS:
            (src / f"lesson{n}.md").write_text(_page(n, lang), encoding="utf-8")
        site._sphinx(src, root / "html" / lang, root / "doctrees" / lang, root / f"{lang}.log")
    return root / "html"


def test_cjk_pairs_cover_each_run_of_cjk_text():
    assert cjk_pairs("第 3 课：位置编码 (sin/cos)") == ["位置", "置编", "编码"]
    assert cjk_pairs("因果マスク") == ["因果", "果マ", "マス", "スク"]
    assert cjk_pairs("softmax と 注") == []  # a lone character pairs with nothing


@pytest.mark.parametrize(("lang", "query"), QUERIES)
def test_a_multi_word_cjk_query_finds_its_lessons(browser, small_book, lang, query):
    holding = {n for n in LESSONS if query in _page(n, lang)}
    assert holding, (lang, query)  # the words are in the lessons: the search must find them
    errors = []
    page = browser_page(browser, {"pageerror": lambda e: errors.append(str(e))})
    page.goto(f"{(small_book / lang / 'search.html').as_uri()}?q={query}")
    page.wait_for_selector("#search-results li")
    found = page.locator("#search-results li a").evaluate_all("l => l.map(a => a.href)")
    lessons = {int(h.rsplit("/lesson", 1)[1].split(".")[0]) for h in found if "/lesson" in h}
    assert holding <= lessons, (query, found)
    assert errors == []
