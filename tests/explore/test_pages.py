"""The explorer pages in a real browser (Debian's chromium through Playwright), opened from
file://: no console error, no request but the file itself, the numbers shown are the run's,
every control works by mouse, keyboard and touch, exports download, and hostile text stays text.

With ATTNLAB_DOCS_SHOTS=1 the screenshots go to docs/explore/ (the README shows them)."""

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import torch

from attnlab import ref
from attnlab.explore import explore, page
from attnlab.train import probes
from attnlab.train.lm import load_run
from attnlab.train.seq2seq import load_seq2seq, translate
from helpers import browser_page

from .conftest import EVIL

DOCS = Path(__file__).resolve().parents[2] / "docs" / "explore"


class Watched:
    """A page with its console errors, requests and dialogs recorded."""

    def __init__(self, browser, path: Path, own: bool = False, **context):
        """``own`` or any ``context`` option (a viewport, touch): a context of the test's own
        (one that installs a clock must: the clock is the context's); else the worker's page
        (``helpers.browser_page``)."""
        self.errors, self.requests, self.dialogs = [], [], []
        listeners = {
            "console": lambda m: m.type == "error" and self.errors.append(m.text),
            "pageerror": lambda e: self.errors.append(str(e)),
            "request": lambda r: self.requests.append(r.url),
            "dialog": lambda d: (self.dialogs.append(d.message), d.dismiss()),
        }
        self.context = None
        if own or context:
            self.context = browser.new_context(accept_downloads=True, **context)
            self.page = self.context.new_page()
            for event, handler in listeners.items():
                self.page.on(event, handler)
        else:
            self.page = browser_page(browser, listeners)
        self.url = path.resolve().as_uri()
        self.page.goto(self.url)

    def clean(self) -> None:
        assert self.errors == [] and self.dialogs == []
        assert set(self.requests) == {self.url}
        if self.context is not None:
            self.context.close()  # an open page keeps its renderer (and a playing timer) busy

    def shot(self, tmp_path: Path, name: str) -> None:
        folder = DOCS if os.environ.get("ATTNLAB_DOCS_SHOTS") == "1" else tmp_path
        folder.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(folder / f"{name}.png"))

    def weights(self, head: int = 0, which: str = "all") -> list[float]:
        """The weights in the side panel: "all" in text order, "top" strongest first."""
        sel = f'#weights li.{which}[data-head="{head}"]'
        return [
            float(x) for x in self.page.locator(sel).evaluate_all("l => l.map(e => e.dataset.w)")
        ]

    def line_heads(self) -> set[str]:
        return set(self.page.locator("#lines line").evaluate_all("l => l.map(e => e.dataset.head)"))


@pytest.fixture(scope="module")
def gpt_page(gpt_run, tmp_path_factory):
    path = tmp_path_factory.mktemp("pages") / "gpt.html"
    explore(gpt_run, ["ROMEO: and JULIET", EVIL]).save(path)
    return path


def _model_weights(run, text: str) -> np.ndarray:
    model, tok, _ = load_run(run)
    with torch.no_grad():
        _, _, ws = model(torch.tensor([tok.encode(text)]), need_weights=True)
    return torch.stack([x[0] for x in ws]).numpy()  # (L, H, T, T)


def test_gpt_page_head_view_shows_the_runs_weights(browser, gpt_run, gpt_page, tmp_path):
    w = Watched(browser, gpt_page)
    text = "ROMEO: and JULIET"
    expected = _model_weights(gpt_run, text)
    w.page.select_option("#layer", "1")
    w.page.hover('.tok.q[data-i="6"]')
    for h in range(2):
        assert w.weights(h) == pytest.approx(expected[1, h, 6, :7], abs=1e-4)
        top = w.weights(h, "top")  # the strongest keys first: sorted, the largest leading
        assert top == pytest.approx(sorted(expected[1, h, 6, :7], reverse=True)[:5], abs=1e-4)
        assert top[0] == pytest.approx(expected[1, h, 6, :7].max(), abs=1e-4)
    headings = w.page.locator("#weights h3").all_inner_texts()
    assert [t.strip() for t in headings] == ["head 0", "head 1"]  # no stray list number
    assert w.page.locator("#weights details[open]").count() == 0  # the full lists are folded
    guesses = w.page.locator("#predictions li").evaluate_all("l => l.map(e => +e.dataset.p)")
    box = w.page.locator("#predictions").bounding_box()
    assert box["y"] + box["height"] <= w.page.viewport_size["height"]  # the guesses in view
    model, tok, _ = load_run(gpt_run)
    with torch.no_grad():
        probs = model(torch.tensor([tok.encode(text)]))[0][0, 6].softmax(-1)
    assert guesses == pytest.approx(probs.topk(5).values.tolist(), abs=1e-4)
    w.page.select_option("#head", "1")  # one head: only its lines
    assert w.page.locator('#weights li[data-head="0"]').count() == 0
    w.shot(tmp_path, "gpt_head_view")
    w.clean()


def test_keyboard_and_touch_select_tokens(browser, gpt_run, gpt_page):
    expected = _model_weights(gpt_run, "ROMEO: and JULIET")
    w = Watched(browser, gpt_page)
    w.page.focus('.tok.q[data-i="2"]')
    w.page.keyboard.press("ArrowDown")  # to token 3
    assert w.weights(0) == pytest.approx(expected[0, 0, 3, :4], abs=1e-4)
    w.page.keyboard.press("Escape")
    assert w.page.locator("#weights").count() == 0
    w.clean()
    t = Watched(browser, gpt_page, has_touch=True)
    t.page.tap('.tok.q[data-i="5"]')
    assert t.weights(1) == pytest.approx(expected[0, 1, 5, :6], abs=1e-4)
    t.clean()


def test_matrix_view_says_what_to_do_and_shows_the_hovered_cell(
    browser, gpt_run, gpt_page, tmp_path
):
    w = Watched(browser, gpt_page)
    w.page.hover('.tok.q[data-i="6"]')  # a hover in the head view ...
    assert w.page.locator("#weights").count() == 1
    w.page.click("#tab-matrix")
    assert w.page.locator("#weights").count() == 0  # ... is not shown in the matrix view
    assert page.WORDS["matrix_help"]("en") in w.page.locator("#side-help").inner_text()
    assert "on the left" not in w.page.locator("aside").inner_text()
    assert w.page.locator(".thumb").count() == 4  # 2 layers x 2 heads
    w.page.click('.thumb[data-layer="1"][data-head="0"]')
    labels = w.page.locator("#matrix-svg text").all_text_contents()
    assert "L1 H0" in labels and "J" in labels
    assert page.WORDS["cell_help"]("en") in w.page.locator("#side-help").inner_text()
    text = "ROMEO: and JULIET"
    box = w.page.locator("#matrix-img").bounding_box()
    T = len(text)
    for t, s in ((9, 2), (16, 16), (3, 0)):  # the middle of cell (t, s)
        w.page.mouse.move(
            box["x"] + (s + 0.5) * box["width"] / T, box["y"] + (t + 0.5) * box["height"] / T
        )
        info = w.page.locator("#cell-info")
        assert (info.get_attribute("data-row"), info.get_attribute("data-col")) == (str(t), str(s))
        weight = _model_weights(gpt_run, text)[1, 0, t, s]
        assert float(info.get_attribute("data-w")) == pytest.approx(weight, abs=1e-4)
        assert f"{text[t].replace(' ', '␣')} → " in info.inner_text()
    w.shot(tmp_path, "gpt_matrix_view")
    w.page.mouse.move(0, 0)
    assert w.page.locator("#cell-info").count() == 0
    w.clean()


def test_the_training_control_moves_through_the_snapshots_and_plays(
    browser, gpt_run, gpt_page, tmp_path
):
    w = Watched(browser, gpt_page, own=True)  # (it installs a clock)
    help_ = w.page.locator("#training-help")  # visible at once, with its one-line explanation
    assert help_.is_visible() and help_.inner_text() == page.WORDS["formed_help"]("en")
    snaps = probes.load(gpt_run)
    slider = w.page.locator("#step")
    assert slider.is_visible() and slider.get_attribute("max") == str(len(snaps) - 1)
    for i, (step, snap) in enumerate(snaps):
        slider.fill(str(i))
        assert w.page.locator("#step-label").inner_text().endswith(f" {step}")
        assert w.page.locator("#text").input_value() == "probe"
        w.page.hover('.tok.q[data-i="4"]')
        assert w.weights(0) == pytest.approx(snap["weights"][0, 0, 4, :5], abs=2 / 255)
        w.page.mouse.move(0, 0)
    assert snaps[0][1]["weights"][0, 0, 4, :5] != pytest.approx(
        snaps[-1][1]["weights"][0, 0, 4, :5]
    )
    w.page.select_option("#text", "t0")  # back to a text; play starts from the first snapshot
    w.page.clock.install()  # the page's timers on a clock the test moves: no waiting
    w.page.click("#play")
    seen = set()
    for _ in range(len(snaps) + 2):  # bounded: one snapshot per 0.9 s step, then it stops
        seen.add(w.page.locator("#step-label").inner_text())
        if w.page.locator("#play").get_attribute("aria-pressed") == "false":
            break
        w.page.clock.run_for(900)
    seen.add(w.page.locator("#step-label").inner_text())
    assert seen == {f"step {s}" for s, _ in snaps}  # every snapshot shown, then it stops
    assert w.page.locator("#play").get_attribute("aria-pressed") == "false"
    assert slider.input_value() == str(len(snaps) - 1)
    w.shot(tmp_path, "gpt_training_slider")
    w.clean()


def test_the_legend_isolates_a_head(browser, gpt_run, gpt_page):
    w = Watched(browser, gpt_page)
    entries = w.page.locator(".legend-entry")
    assert entries.all_inner_texts() == ["head 0", "head 1"]
    colors = w.page.locator(".legend-entry .swatch").evaluate_all(
        "l => l.map(e => getComputedStyle(e).backgroundColor)"
    )
    line_colors = w.page.locator("#lines line").evaluate_all(
        "l => [...new Set(l.map(e => e.dataset.head + ' ' + getComputedStyle(e).stroke))]"
    )
    assert sorted(line_colors) == [f"{h} {c}" for h, c in enumerate(colors)]  # same colours
    assert w.line_heads() == {"0", "1"}
    w.page.click('.legend-entry[data-head="1"]')
    assert w.line_heads() == {"1"} and w.page.locator("#head").input_value() == "1"
    w.page.hover('.tok.q[data-i="5"]')
    assert w.page.locator('#weights li[data-head="0"]').count() == 0
    assert w.weights(1) == pytest.approx(
        _model_weights(gpt_run, "ROMEO: and JULIET")[0, 1, 5, :6], abs=1e-4
    )
    w.page.mouse.move(0, 0)
    w.page.click('.legend-entry[data-head="1"]')  # again: all heads
    assert w.line_heads() == {"0", "1"} and w.page.locator("#head").input_value() == "all"
    w.clean()


def test_guidance_is_in_the_pages_language_and_can_be_hidden(browser, gpt_run, tmp_path):
    for lang, word in (("en", "query"), ("ja", "クエリ"), ("zh", "查询")):
        path = tmp_path / f"{lang}.html"
        explore(gpt_run, ["ROMEO:"], lang=lang).save(path)
        w = Watched(browser, path)
        guide = w.page.locator("#guide")
        assert guide.inner_text().strip().startswith(page.WORDS["guide_head"](lang)[:12])
        assert word in guide.inner_text() and w.page.locator("html").get_attribute("lang") == lang
        w.page.click("#tab-matrix")
        assert guide.inner_text().strip().startswith(page.WORDS["guide_matrix"](lang)[:12])
        w.page.click("#guide-close")
        assert not guide.is_visible()
        w.page.click("#tab-head")  # each view has its own line
        assert guide.is_visible()
        w.page.click("#tab-matrix")
        assert not guide.is_visible()  # and a hidden one stays hidden
        w.clean()
    assert "注意" not in page.WORDS["guide_head"]("ja")  # the glossary's アテンション


def test_heads_that_do_something_recognisable_are_pointed_to(browser, tmp_path):
    from attnlab.explore import data

    tokens = list("ab␣cd⏎ef␣gh⏎ij␣kl")
    T = len(tokens)
    prev = np.eye(T, k=-1)
    prev[0, 0] = 1
    first = np.zeros((T, T))
    first[:, 0] = 1
    even = np.tril(np.ones((T, T)))
    even /= even.sum(-1, keepdims=True)
    w = np.stack([[even, prev], [first, even]])  # (2, 2, T, T)
    view = data.View("1", tokens, tokens, w, True, top=[[("a", 0.5)]] * T)
    path = tmp_path / "found.html"
    path.write_text(page.model_page(data.Page("gpt", "run", [view]), "en"), encoding="utf-8")
    p = Watched(browser, path)
    found = p.page.locator("#heads-found button")
    assert found.evaluate_all(
        "l => l.map(e => [e.dataset.layer, e.dataset.head, e.dataset.pattern, +e.dataset.share])"
    ) == [["0", "1", "previous", 1.0], ["1", "0", "first", 1.0]]
    assert "the previous character: 1.00" in found.first.inner_text()
    found.first.click()  # goes to that head
    assert (
        p.page.locator("#layer").input_value() == "0"
        and p.page.locator("#head").input_value() == "1"
    )
    assert p.line_heads() == {"1"}
    p.clean()


def test_the_page_uses_the_width_and_fits_a_phone(browser, gpt_page):
    w = Watched(browser, gpt_page, viewport={"width": 1400, "height": 900})
    svg, side = w.page.locator("#head-svg").bounding_box(), w.page.locator("aside").bounding_box()
    assert svg["width"] >= 700  # not a third of the window
    assert 0 <= side["x"] - (svg["x"] + svg["width"]) <= 60  # the panel beside the figure
    w.clean()
    phone = Watched(browser, gpt_page, viewport={"width": 390, "height": 844}, has_touch=True)
    assert phone.page.evaluate("document.documentElement.scrollWidth") <= 390  # no sideways scroll
    svg, side = (
        phone.page.locator("#head-svg").bounding_box(),
        phone.page.locator("aside").bounding_box(),
    )
    assert svg["x"] + svg["width"] <= 390 and side["y"] >= svg["y"] + svg["height"] - 1  # below
    phone.page.tap('.tok.q[data-i="3"]')
    assert len(phone.weights(0)) == 4
    phone.clean()


def test_exports_download_svg_and_png(browser, gpt_page):
    w = Watched(browser, gpt_page)
    w.page.hover('.tok.q[data-i="3"]')
    with w.page.expect_download() as svg:
        w.page.click("#export-svg")
    tree = ET.parse(svg.value.path())
    assert tree.getroot().tag.endswith("svg") and svg.value.suggested_filename == "attention.svg"
    texts = [e.text for e in tree.iter() if e.tag.endswith("text")]
    assert "R" in texts and "M" in texts
    with w.page.expect_download() as png:
        w.page.click("#export-png")
    assert Path(png.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    w.clean()


def test_hostile_text_is_only_text(browser, gpt_page):
    w = Watched(browser, gpt_page)
    w.page.select_option("#text", "t1")
    tokens = w.page.locator(".tok.q").all_text_contents()
    assert "".join(tokens) == EVIL.replace(" ", "␣")
    assert w.page.locator("img").count() == 0
    w.page.hover('.tok.q[data-i="3"]')
    w.clean()  # no alert, no request for "x"


def test_date_model_page_steps_through_decoding(browser, date_run, tmp_path):
    path = tmp_path / "date.html"
    explore(date_run, ["Saturday 9 May 2018"], lang="ja").save(path)
    t = translate(load_seq2seq(date_run), "Saturday 9 May 2018")
    assert len(t.text) >= 5  # the fixture's model writes something to step through
    w = Watched(browser, path)
    assert "出力" in w.page.locator("#note").inner_text()
    guide = w.page.locator("#guide").inner_text()  # what a seq2seq page shows, in Japanese
    assert page.WORDS["guide_s2s"]("ja") in guide and "アテンション" in guide
    w.page.locator("#decode").fill("4")
    assert w.page.locator(".tok.q.sel").text_content() == t.text[3]
    assert w.weights(0) == pytest.approx(t.weights[3].tolist(), abs=1e-4)
    assert w.page.locator(".tok.q.dim").count() == len(t.text) - 4  # not yet decoded
    w.shot(tmp_path, "date_alignment")
    w.page.click("#tab-matrix")
    assert w.page.locator("#matrix-svg").count() == 1
    w.page.select_option("#text", "probe")
    assert w.page.locator("#step-label").count() == 1
    w.clean()


def _playground_weights(w) -> list[float]:
    return [
        float(x)
        for x in w.page.locator("#pg-weights li").evaluate_all("l => l.map(e => e.dataset.w)")
    ]


def test_playground_computes_what_attnlab_ref_computes(browser, tmp_path):
    path = tmp_path / "pg.html"
    path.write_text(page.playground_page("zh"), encoding="utf-8")
    w = Watched(browser, path)
    keys = page.KEYS
    _numbers_and_labels_are_tidy(w)
    got = _playground_weights(w)
    assert got == pytest.approx(ref.softmax(keys @ [1.0, 0.0]), abs=1e-12)
    assert [round(x, 2) for x in got] == [0.12, 0.11, 0.26, 0.29, 0.23]  # the course's numbers
    w.page.locator("#mult").fill("5")
    got = _playground_weights(w)
    assert got == pytest.approx(ref.softmax(5 * keys @ [1.0, 0.0]), abs=1e-12)
    assert [round(x, 2) for x in got] == [0.01, 0.0, 0.3, 0.5, 0.18]
    w.shot(tmp_path, "playground")
    w.page.locator("#mult").fill("1")
    box = w.page.locator("#pad").bounding_box()
    w.page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    w.page.mouse.down()
    w.page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.2, steps=5)
    w.page.mouse.up()
    q = [float(w.page.locator(f"#q{i}").input_value()) for i in (0, 1)]
    assert q[1] > 0.5 and abs(q[0]) < 0.1  # dragged up: towards places and directions
    assert _playground_weights(w) == pytest.approx(ref.softmax(keys @ q), abs=1e-12)
    w.page.focus("#query-dot")
    w.page.keyboard.press("ArrowRight")
    q2 = [float(w.page.locator(f"#q{i}").input_value()) for i in (0, 1)]
    assert q2[0] == pytest.approx(q[0] + 0.1)
    w.page.check("#scale")
    w.page.locator("#d").fill("8")
    expected = ref.softmax(keys @ q2 / np.sqrt(8))
    assert _playground_weights(w) == pytest.approx(expected, abs=1e-12)
    w.page.check("#causal")  # the other characters' rows lose their future
    cells = w.page.locator("#pg-matrix tr").nth(1).locator("td").all_text_contents()
    assert cells[0] == "1.00" and set(cells[1:]) == {"0.00"}
    _numbers_and_labels_are_tidy(w)
    w.clean()


def test_cjk_labels_are_drawn_as_glyphs_without_an_installed_cjk_font(browser, tmp_path):
    """The playground in Japanese, as the browser draws it: each character's key label is its
    own glyph, none an empty box, with or without a CJK font on the machine (CI has none: the
    page's inlined subset of attnlab's font draws them). An empty box is what a character no
    font has looks like: a private-use one, put in a label at the end."""
    path = tmp_path / "pg.html"
    path.write_text(page.playground_page("ja"), encoding="utf-8")
    w = Watched(browser, path)
    w.page.evaluate("document.fonts.ready")
    labels = w.page.locator("#pad text").filter(has_text=re.compile("^[床前明月光]$"))
    assert labels.count() == len(page.CHARS)
    handles = labels.element_handles()
    drawn = [h.screenshot() for h in handles]  # PNG bytes: the same pixels, the same bytes
    handles[0].evaluate("e => { e.textContent = '\\ue000'; }")
    box = handles[0].screenshot()
    assert len(set(drawn)) == len(drawn) and box not in drawn
    w.clean()


def _numbers_and_labels_are_tidy(w) -> None:
    """Every number in the playground as 0.00; no two key labels overlap, none covers a key."""
    shown = w.page.locator("#pg-table td, #pg-weights .num, #mult-label").all_inner_texts()
    assert len(shown) == 5 + 5 + 25 + 5 + 1
    assert all(re.fullmatch(r"(× )?(-?\d+\.\d\d|-inf)", x.strip()) for x in shown), shown
    labels = w.page.locator("#pad text.key-label").evaluate_all(
        "l => l.map(e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })"
    )
    dots = w.page.locator("#pad circle:not(#query-dot)").evaluate_all(
        "l => l.map(e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })"
    )
    assert len(labels) == 5 and len(dots) == 5

    def overlap(a, b) -> bool:
        return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]

    for i, a in enumerate(labels):
        assert not any(overlap(a, b) for b in labels[i + 1 :] + dots), (i, labels, dots)


def test_two_explorers_in_one_notebook_page_do_not_clash(browser, gpt_run, tmp_path):
    host = tmp_path / "notebook.html"
    a, b = explore(gpt_run, "ROMEO:"), explore(playground=True)
    host.write_text(f"<!doctype html><body>{a._repr_html_()}{b._repr_html_()}</body>", "utf-8")
    w = Watched(browser, host)
    frames = [f for f in w.page.frames if f != w.page.main_frame]
    assert len(frames) == 2
    gpt, pg = sorted(frames, key=lambda f: f.locator("#pad").count())
    assert gpt.locator(".tok.q").count() == len("ROMEO:") and pg.locator("#pad").count() == 1
    gpt.hover('.tok.q[data-i="2"]')
    assert gpt.locator("#weights li").count() > 0
    assert re.search("about:srcdoc", " ".join(w.requests)) or set(w.requests) == {w.url}
    assert w.errors == [] and w.dialogs == []


def test_serve_listens_on_loopback_only_and_computes_typed_text(browser, gpt_run, served):
    import json
    import urllib.error
    import urllib.request

    host, port = served.server_address[:2]
    assert host == "127.0.0.1"
    base = f"http://{host}:{port}/"
    page_ = browser.new_page()
    errors, requests = [], []
    page_.on("pageerror", lambda e: errors.append(str(e)))
    page_.on("request", lambda r: requests.append(r.url))
    page_.goto(base)
    page_.fill("#live-text", "JULIET: O")
    page_.click("#live-go")
    page_.wait_for_selector('.tok.q[data-i="8"]')
    page_.hover('.tok.q[data-i="8"]')
    shown = page_.locator('#weights li.all[data-head="1"]').evaluate_all(
        "l => l.map(e => +e.dataset.w)"
    )
    assert shown == pytest.approx(_model_weights(gpt_run, "JULIET: O")[0, 1, 8], abs=1e-4)
    page_.fill("#live-text", "snow ☃")
    page_.click("#live-go")
    page_.locator("#live-error", has_text="☃").wait_for()  # (no eval: the page's CSP forbids it)
    assert "☃" in page_.locator("#live-error").text_content()
    assert errors == [] and all(u.startswith(base) for u in requests)
    for query, status in (("text=" + "x" * 5000, 400), ("text=" + "x" * 65, 400)):
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(f"{base}attention?{query}")
        assert e.value.code == status and "error" in json.loads(e.value.read())
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(f"{base}elsewhere")
    assert e.value.code == 404


def test_a_long_text_on_a_6x6_model_stays_usable(browser, tmp_path):
    from attnlab.explore import data

    rng = np.random.default_rng(0)
    w = np.tril(rng.random((6, 6, 256, 256)) ** 8)
    w /= w.sum(-1, keepdims=True)
    tokens = list("床前明月光疑是地上霜" * 26)[:256]
    view = data.View("1", tokens, tokens, w, True, top=[[("光", 0.5)]] * 256)
    path = tmp_path / "long.html"
    path.write_text(page.model_page(data.Page("gpt", "run", [view]), "en"), encoding="utf-8")
    p = Watched(browser, path)
    assert p.page.locator("#lines line").count() == 3000  # the strongest lines only
    assert p.page.locator("#lines-note").count() == 1
    p.page.hover('.tok.q[data-i="200"]')
    for h in (0, 5):
        assert p.weights(h) == pytest.approx(w[0, h, 200, :201], abs=1e-4)
    p.page.click("#tab-matrix")
    assert p.page.locator(".thumb").count() == 36
    p.clean()
