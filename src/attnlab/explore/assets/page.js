// attnlab explore: one offline page. Every text from the data goes in as textContent or an SVG
// text node, never as markup. Nothing is fetched (the live page of `attnlab serve` excepted).
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("attnlab-data").textContent);
  const W = DATA.words;
  const SVGNS = "http://www.w3.org/2000/svg";
  const MAX_LINES = 3000;  // lines in the head view at once: more make a long text sluggish
  const COLORS = ["#2f6fb5", "#d1495b", "#3c9d5d", "#e08e0b", "#7a4fb5", "#00798c", "#b5651d", "#c2185b",
    "#5d737e", "#8a9a1b", "#6d4c41", "#1e88e5"];

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function sv(tag, attrs, text) {
    const e = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  const bar = document.getElementById("bar"), stage = document.getElementById("stage"),
    side = document.getElementById("side");

  // ---- export: the shown SVG as .svg, or drawn onto a canvas as .png ---------------------
  function download(blob, name) {
    const a = el("a", { download: name });
    a.href = URL.createObjectURL(blob);
    document.body.appendChild(a);
    a.click();
    setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  }
  function svgText(svg) {
    const copy = svg.cloneNode(true);
    copy.setAttribute("xmlns", SVGNS);
    const style = sv("style", {}, "text{font:13px sans-serif;fill:#1d232b}");
    copy.insertBefore(style, copy.firstChild);
    return new XMLSerializer().serializeToString(copy);
  }
  function exportSvg() {
    const svg = stage.querySelector("svg.export");
    if (svg) download(new Blob([svgText(svg)], { type: "image/svg+xml" }), "attention.svg");
  }
  function exportPng() {
    const svg = stage.querySelector("svg.export");
    if (!svg) return;
    const w = +svg.getAttribute("width"), h = +svg.getAttribute("height");
    const img = new Image();
    img.onload = () => {
      const c = el("canvas", { width: 2 * w, height: 2 * h });
      const g = c.getContext("2d");
      g.fillStyle = "#fff"; g.fillRect(0, 0, c.width, c.height);
      g.drawImage(img, 0, 0, c.width, c.height);
      c.toBlob((b) => download(b, "attention.png"), "image/png");
    };
    img.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(svgText(svg));
  }
  function exportButtons() {
    const svgB = el("button", { id: "export-svg", type: "button" }, W.export_svg);
    const pngB = el("button", { id: "export-png", type: "button" }, W.export_png);
    svgB.addEventListener("click", exportSvg);
    pngB.addEventListener("click", exportPng);
    bar.append(svgB, pngB);
  }
  const fmt = (x) => x.toFixed(4);
  const dismissed = new Set();

  // ---- guidance: one dismissable "what am I looking at" line per view ---------------------
  function guide(key) {
    const box = document.getElementById("guide");
    if (dismissed.has(key)) { box.replaceChildren(); box.hidden = true; return; }
    const close = el("button", { type: "button", id: "guide-close", class: "close", "aria-label": W.dismiss, title: W.dismiss }, "×");
    close.addEventListener("click", () => { dismissed.add(key); guide(key); });
    box.hidden = false;
    box.dataset.view = key;
    box.replaceChildren(el("span", {}, W[key]), close);
  }

  if (DATA.mode === "playground") return playground();

  // ---- the model explorer ---------------------------------------------------------------
  const views = DATA.views.map(unpackView);
  const texts = views.filter((v) => v.step === null), probes = views.filter((v) => v.step !== null);
  const state = { view: texts[0] || probes[probes.length - 1], layer: 0, head: "all", sel: null,
    pinned: false, tab: "head", big: null, decode: null, cell: null, timer: null };
  const TOP_K = 5;  // the strongest keys listed first; the rest folded

  function unpackView(v) {
    const bytes = Uint8Array.from(atob(v.w), (c) => c.charCodeAt(0));
    const dv = new DataView(bytes.buffer);
    const T = v.queries.length, S = v.keys.length, w = [];
    let k = 0;
    for (let l = 0; l < v.layers; l++) {
      const hs = [];
      for (let h = 0; h < v.heads; h++) {
        const m = [];
        for (let t = 0; t < T; t++) {
          const row = new Float64Array(S);
          const n = v.causal ? t + 1 : S;
          for (let s = 0; s < n; s++, k++) row[s] = v.bits === 8 ? dv.getUint8(k) / 255 : dv.getUint16(2 * k, true) / 65535;
          m.push(row);
        }
        hs.push(m);
      }
      w.push(hs);
    }
    return Object.assign({}, v, { W: w });
  }

  function showView(v) {  // another text or snapshot: nothing selected carries over
    state.view = v; state.sel = null; state.pinned = false; state.decode = null; state.cell = null;
  }

  function controls() {
    bar.replaceChildren(el("h1", {}, W.title));
    const pick = el("select", { id: "text", "aria-label": W.text });
    const label = (v) => (DATA.kind === "seq2seq" ? v.keys.join("") + " → " + v.note : v.queries.join("")).slice(0, 48);
    texts.forEach((v, i) => pick.append(el("option", { value: "t" + i }, W.text + " " + v.name + ": " + label(v))));
    if (probes.length) pick.append(el("option", { value: "probe" }, W.probe));
    pick.value = state.view.step === null ? "t" + texts.indexOf(state.view) : "probe";
    pick.addEventListener("change", () => {
      stop();
      showView(pick.value === "probe" ? probes[probes.length - 1] : texts[+pick.value.slice(1)]);
      controls(); draw();
    });
    bar.append(el("label", {}, W.text), pick);
    const v = state.view;
    if (v.layers > 1 || v.heads > 1) {
      const layer = el("select", { id: "layer", "aria-label": W.layer });
      for (let l = 0; l < v.layers; l++) layer.append(el("option", { value: l }, String(l)));
      layer.value = state.layer;
      layer.addEventListener("change", () => { state.layer = +layer.value; draw(); });
      const head = el("select", { id: "head", "aria-label": W.head });
      head.append(el("option", { value: "all" }, W.all));
      for (let h = 0; h < v.heads; h++) head.append(el("option", { value: h }, String(h)));
      head.value = state.head;
      head.addEventListener("change", () => setHead(head.value === "all" ? "all" : +head.value));
      bar.append(el("label", {}, W.layer), layer, el("label", {}, W.head), head);
    }
    if (DATA.kind === "seq2seq") {
      const dec = el("input", { id: "decode", type: "range", min: 1, max: v.queries.length,
        value: state.decode || v.queries.length, "aria-label": W.decode });
      dec.addEventListener("input", () => { state.decode = +dec.value; state.sel = state.decode - 1; draw(); });
      bar.append(el("label", {}, W.decode), dec);
    }
    for (const [tab, name] of [["head", W.head_view], ["matrix", W.matrix_view]]) {
      const b = el("button", { id: "tab-" + tab, type: "button", "aria-pressed": String(state.tab === tab) }, name);
      b.addEventListener("click", () => {
        state.tab = tab; state.sel = null; state.pinned = false; state.cell = null;  // no stale hover
        controls(); draw();
      });
      bar.append(b);
    }
    exportButtons();
    if (DATA.live) liveBox();
    if (probes.length) bar.append(trainingRow());
  }

  function setHead(h) {
    state.head = h;
    const pick = document.getElementById("head");
    if (pick) pick.value = String(h);
    draw();
  }

  // ---- how attention formed: the probe text at each evaluation, with play/pause -----------
  function trainingRow() {
    const row = el("div", { id: "training", class: "row" });
    const at = state.view.step === null ? probes.length - 1 : probes.indexOf(state.view);
    const play = el("button", { id: "play", type: "button", "aria-pressed": String(state.timer !== null) },
      state.timer !== null ? "❚❚ " + W.pause : "▶ " + W.play);
    const slider = el("input", { id: "step", type: "range", min: 0, max: probes.length - 1, value: at,
      "aria-label": W.formed });
    const shown = el("output", { id: "step-label" }, W.step + " " + probes[at].step);
    slider.addEventListener("input", () => { stop(); toStep(+slider.value); });
    play.addEventListener("click", () => (state.timer !== null ? stop() : start()));
    row.append(el("strong", {}, W.formed), play, slider, shown,
      el("span", { class: "note", id: "training-help" }, W.formed_help));
    return row;
  }
  function toStep(i) {
    const wasText = state.view.step === null;
    const keep = state.pinned ? state.sel : null;  // a pinned token stays pinned across steps
    showView(probes[i]);
    state.sel = keep; state.pinned = keep !== null;
    if (wasText) { controls(); } else {
      document.getElementById("step").value = i;
      document.getElementById("step-label").textContent = W.step + " " + probes[i].step;
    }
    draw();
  }
  function start() {
    let i = state.view.step === null ? probes.length - 1 : probes.indexOf(state.view);
    if (i >= probes.length - 1) i = -1;  // at the end, or on a text: from the first snapshot
    const tick = () => { i += 1; toStep(i); if (i >= probes.length - 1) stop(); };
    state.timer = setInterval(tick, 900);
    syncPlay();
    tick();
  }
  function stop() {
    if (state.timer !== null) clearInterval(state.timer);
    state.timer = null;
    syncPlay();
  }
  function syncPlay() {
    const b = document.getElementById("play");
    if (!b) return;
    b.textContent = state.timer !== null ? "❚❚ " + W.pause : "▶ " + W.play;
    b.setAttribute("aria-pressed", String(state.timer !== null));
  }

  // ---- attnlab serve: type a text, the server computes its attention ----------------------
  function liveBox() {
    const form = el("form", { id: "live" });
    const input = el("input", { id: "live-text", type: "text", maxlength: 2000, size: 30,
      "aria-label": W.type_text, placeholder: W.type_text });
    const go = el("button", { id: "live-go", type: "submit" }, W.show);
    const err = el("output", { id: "live-error", role: "alert" });
    form.append(input, go, err);
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      err.textContent = "";
      const r = await fetch("attention?text=" + encodeURIComponent(input.value));
      const body = await r.json();
      if (!r.ok) { err.textContent = body.error; return; }
      const v = unpackView(body.views[0]);
      v.name = String(texts.length + 1);
      texts.push(v);
      stop(); showView(v); state.big = null;
      controls(); draw();
      document.getElementById("live-text").value = input.value;
    });
    bar.append(form);
  }

  function heads() {
    const v = state.view;
    return state.head === "all" ? [...Array(v.heads).keys()] : [state.head];
  }
  function visibleRows() {
    const v = state.view;
    return DATA.kind === "seq2seq" && state.decode ? state.decode : v.queries.length;
  }
  const color = (h) => COLORS[h % COLORS.length];

  function legend() {
    const v = state.view, box = el("div", { id: "legend", role: "group", "aria-label": W.legend });
    for (let h = 0; h < v.heads; h++) {
      const b = el("button", { type: "button", class: "legend-entry" + (state.head !== "all" && state.head !== h ? " off" : ""),
        "data-head": h, "aria-pressed": String(state.head === h), title: W.legend });
      b.append(el("span", { class: "swatch", style: "background:" + color(h) }), document.createTextNode(W.head + " " + h));
      b.addEventListener("click", () => setHead(state.head === h ? "all" : h));
      box.append(b);
    }
    box.append(el("span", { class: "note" }, W.legend));
    return box;
  }

  function headView() {
    const v = state.view, T = v.queries.length, S = v.keys.length, rowH = 20, top = 24;
    const width = Math.max(300, Math.min(stage.clientWidth - 8, 820)), qx = 64, kx = width - 64;
    const height = top + rowH * Math.max(T, S) + 10;
    const svg = sv("svg", { width, height, class: "export", id: "head-svg", role: "img",
      "aria-label": W.head_view });
    svg.append(sv("text", { x: qx, y: 14, "text-anchor": "end", class: "label" }, W.queries),
      sv("text", { x: kx, y: 14, class: "label" }, W.keys));
    const lines = sv("g", { id: "lines" });
    svg.append(lines);
    const rows = visibleRows(), drawn = [];
    for (const h of heads()) {
      const m = v.W[state.layer][h];
      for (let t = 0; t < rows; t++) {
        if (state.sel !== null && t !== state.sel) continue;
        for (let s = 0; s < S; s++) if (m[t][s] >= 0.01) drawn.push([m[t][s], h, t, s]);
      }
    }
    state.capped = drawn.length > MAX_LINES;
    if (state.capped) drawn.sort((p, q) => q[0] - p[0]).length = MAX_LINES;  // long text: stay quick
    for (const [a, h, t, s] of drawn) {
      lines.append(sv("line", { x1: qx + 10, y1: top + rowH * t + 10, x2: kx - 10, y2: top + rowH * s + 10,
        stroke: color(h), "stroke-width": 1 + 3 * a, "data-head": h,
        "stroke-opacity": Math.min(1, a * (state.sel === null ? 1 : 1.5)) }));
    }
    v.queries.forEach((q, t) => {
      const cls = "tok q" + (t === state.sel ? " sel" : "") + (t >= rows ? " dim" : "");
      const node = sv("text", { x: qx, y: top + rowH * t + 14, "text-anchor": "end", class: cls,
        tabindex: 0, role: "button", "data-i": t, "aria-label": W.queries + " " + t + ": " + q }, q);
      node.addEventListener("mouseenter", () => { if (!state.pinned) select(t); });
      node.addEventListener("focus", () => { if (!state.refocus) select(t); });
      node.addEventListener("click", () => { state.pinned = !(state.pinned && state.sel === t); select(t); });
      node.addEventListener("touchstart", (e) => { e.preventDefault(); state.pinned = true; select(t); }, { passive: false });
      node.addEventListener("keydown", (e) => keys(e, t));
      svg.append(node);
    });
    v.keys.forEach((k, s) => {
      svg.append(sv("text", { x: kx, y: top + rowH * s + 14, class: "tok k", "data-i": s }, k));
    });
    svg.addEventListener("mouseleave", () => { if (!state.pinned) select(null); });
    const parts = [svg];
    if (v.heads > 1) parts.unshift(legend());
    return parts;
  }

  function keys(e, t) {
    const n = visibleRows();
    let next = null;
    if (e.key === "ArrowDown") next = Math.min(n - 1, t + 1);
    if (e.key === "ArrowUp") next = Math.max(0, t - 1);
    if (e.key === "Escape") { state.pinned = false; select(null); return; }
    if (e.key === "Enter" || e.key === " ") { state.pinned = !state.pinned; e.preventDefault(); return; }
    if (next === null) return;
    e.preventDefault();
    select(next);
    const node = stage.querySelector('.tok.q[data-i="' + next + '"]');
    if (node) node.focus();
  }

  function select(t) {
    if (state.sel === t) return;
    state.sel = t;
    const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.i : null;
    draw();
    if (focused !== null && focused !== undefined) {  // keep the keyboard where it was
      const node = stage.querySelector('.tok.q[data-i="' + focused + '"]');
      state.refocus = true;
      if (node) node.focus({ preventScroll: true });
      state.refocus = false;
    }
  }

  function thumb(m, rows, S) {
    const c = el("canvas", { width: S, height: rows.length });
    const g = c.getContext("2d"), img = g.createImageData(S, rows.length);
    rows.forEach((t, r) => {
      for (let s = 0; s < S; s++) {
        const a = Math.sqrt(m[t][s]), i = 4 * (r * S + s);  // sqrt: small weights stay visible
        img.data[i] = 255 - 208 * a; img.data[i + 1] = 255 - 144 * a; img.data[i + 2] = 255 - 74 * a; img.data[i + 3] = 255;
      }
    });
    g.putImageData(img, 0, 0);
    return c;
  }

  function matrixView() {
    const v = state.view, wrap = el("div", { id: "matrix" });
    const rows = [...Array(visibleRows()).keys()];
    if (v.layers * v.heads === 1) state.big = [0, 0];
    if (state.big === null) {
      const grid = el("div", { class: "grid", style: "grid-template-columns:repeat(" + v.heads + ",auto)" });
      for (let l = 0; l < v.layers; l++) for (let h = 0; h < v.heads; h++) {
        const b = el("button", { class: "thumb", type: "button", "data-layer": l, "data-head": h,
          "aria-label": W.layer + " " + l + ", " + W.head + " " + h });
        b.append(thumb(v.W[l][h], rows, v.keys.length), el("span", {}, "L" + l + " H" + h));
        b.addEventListener("click", () => { state.big = [l, h]; state.cell = null; draw(); });
        grid.append(b);
      }
      wrap.append(grid);
      return wrap;
    }
    const [l, h] = state.big, S = v.keys.length;
    const below = window.innerHeight - stage.getBoundingClientRect().top - 100;  // all of it in view
    const room = Math.max(200, Math.min(stage.clientWidth - 60, below, 720));
    const cell = Math.max(4, Math.min(32, Math.floor(room / Math.max(rows.length, S))));
    const left = 40, top = 40, width = left + cell * S + 10, height = top + cell * rows.length + 10;
    const svg = sv("svg", { width, height, class: "export", id: "matrix-svg", role: "img",
      "aria-label": W.layer + " " + l + ", " + W.head + " " + h });
    const img = sv("image", { x: left, y: top, width: cell * S, height: cell * rows.length,
      preserveAspectRatio: "none", style: "image-rendering:pixelated", id: "matrix-img" });
    img.setAttribute("href", thumb(v.W[l][h], rows, S).toDataURL("image/png"));
    const mark = sv("rect", { id: "cell-mark", width: cell, height: cell, fill: "none", stroke: "#f2a900",
      "stroke-width": 2, visibility: "hidden" });
    svg.append(sv("text", { x: 4, y: 14 }, "L" + l + " H" + h), img, mark);
    if (cell >= 10) {
      v.keys.forEach((k, s) => svg.append(sv("text", { x: left + cell * s + cell / 2, y: top - 6, "text-anchor": "middle" }, k)));
      rows.forEach((t) => svg.append(sv("text", { x: left - 4, y: top + cell * t + cell * 0.75, "text-anchor": "end" }, v.queries[t])));
    }
    const leave = () => {
      if (state.cell === null) return;
      state.cell = null; mark.setAttribute("visibility", "hidden"); sidePanel();
    };
    const hover = (e) => {  // on the svg, not the image: an image still decoding gets no events
      const r = img.getBoundingClientRect();
      const s = Math.floor((e.clientX - r.left) / r.width * S), t = Math.floor((e.clientY - r.top) / r.height * rows.length);
      if (s < 0 || s >= S || t < 0 || t >= rows.length) return leave();
      state.cell = [t, s];
      mark.setAttribute("x", left + cell * s); mark.setAttribute("y", top + cell * t);
      mark.setAttribute("visibility", "visible");
      sidePanel();
    };
    svg.addEventListener("mousemove", hover);
    svg.addEventListener("click", hover);
    svg.addEventListener("mouseleave", leave);
    const back = el("button", { id: "back", type: "button" }, W.back);
    back.addEventListener("click", () => { state.big = null; state.cell = null; draw(); });
    if (v.layers * v.heads > 1) wrap.append(back);
    wrap.append(svg);
    return wrap;
  }

  // ---- the side panel: what to do here, then the numbers of what is selected --------------
  function headsFound() {
    const found = state.view.heads_found;
    if (!found) return [];
    const parts = [el("h2", {}, W.heads_found)];
    if (!found.length) return parts.concat(el("p", { class: "note", id: "heads-found" }, W.no_heads));
    const list = el("ul", { id: "heads-found", class: "plain" });
    for (const f of found) {
      const b = el("button", { type: "button", class: "found", "data-layer": f.layer, "data-head": f.head,
        "data-pattern": f.pattern, "data-share": f.share },
        "L" + f.layer + " H" + f.head + " → " + W[f.pattern] + ": " + f.share.toFixed(2) + " (" + f.chance.toFixed(2) + ")");
      b.addEventListener("click", () => { state.layer = f.layer; state.head = f.head; state.tab = "head"; controls(); draw(); });
      const li = el("li");
      li.append(b);
      list.append(li);
    }
    return parts.concat(list, el("p", { class: "note" }, W.heads_found_help));
  }

  function weightRow(cls, h, s, w, k) {
    const li = el("li", { class: cls, "data-head": h, "data-key": s, "data-w": fmt(w) });
    li.append(el("span", { class: "k" }, k), el("span", { class: "pos" }, "#" + s),
      el("span", { class: "num" }, fmt(w)), el("span", { class: "bar", style: "width:" + Math.round(80 * w) + "px;background:" + color(h) }));
    return li;
  }

  function weightsOf(t) {
    const v = state.view, box = el("div", { id: "weights" });
    const n = v.causal ? t + 1 : v.keys.length;
    for (const h of heads()) {
      const row = v.W[state.layer][h][t], part = el("section", { class: "head-weights", "data-head": h });
      if (v.heads > 1) {
        const title = el("h3", {});
        title.append(el("span", { class: "swatch", style: "background:" + color(h) }), document.createTextNode(W.head + " " + h));
        part.append(title);
      }
      const order = [...Array(n).keys()].sort((a, b) => row[b] - row[a] || a - b);
      const topList = el("ol", { class: "top" });
      order.slice(0, TOP_K).forEach((s) => topList.append(weightRow("top", h, s, row[s], v.keys[s])));
      const all = el("details", {}), allList = el("ul", { class: "plain" });
      all.append(el("summary", {}, W.all_weights.replace("{n}", n)));
      for (let s = 0; s < n; s++) allList.append(weightRow("all", h, s, row[s], v.keys[s]));
      all.append(allList);
      part.append(topList, all);
      box.append(part);
    }
    return box;
  }

  function sidePanel() {
    const v = state.view, parts = [];
    if (v.note) parts.push(el("p", { class: "note", id: "note" }, W.output + ": " + v.note));
    if (state.tab === "matrix") {
      const big = state.big !== null;
      parts.push(el("p", { class: "note", id: "side-help" }, big ? W.cell_help : W.matrix_help));
      if (big && state.cell) {
        const [t, s] = state.cell, w = v.W[state.big[0]][state.big[1]][t][s];
        const info = el("p", { id: "cell-info", "data-row": t, "data-col": s, "data-w": fmt(w) });
        info.append(el("span", {}, W.row + " " + t + " " + v.queries[t] + " → " + W.column + " " + s + " " + v.keys[s] + ": "),
          el("strong", {}, fmt(w)));
        parts.push(info);
      }
      side.replaceChildren(...parts);
      return;
    }
    if (state.capped) parts.unshift(el("p", { class: "note", id: "lines-note" }, W.strongest.replace("{n}", MAX_LINES)));
    if (state.sel === null) {
      parts.push(el("p", { class: "note", id: "side-help" }, W.hover), ...headsFound());
      side.replaceChildren(...parts);
      return;
    }
    const t = state.sel;
    parts.push(el("p", { class: "query-line" }, W.queries + " " + t + ": " + v.queries[t]));
    if (v.top) {  // the guesses first: they stay in view however many keys follow
      const guesses = el("ol", { id: "predictions" });
      for (const [tok, p] of v.top[t]) guesses.append(el("li", { "data-p": p }, tok + "  " + p.toFixed(3)));
      parts.push(el("h2", {}, DATA.kind === "seq2seq" ? W.probability : W.predicts), guesses);
    }
    parts.push(el("h2", {}, W.weights + ": " + W.strongest_keys), weightsOf(t));
    side.replaceChildren(...parts);
  }

  function draw() {
    guide(state.tab === "head" ? (DATA.kind === "seq2seq" ? "guide_s2s" : "guide_head") : "guide_matrix");
    const shown = state.tab === "head" ? headView() : [matrixView()];
    stage.replaceChildren(...shown);
    sidePanel();
  }

  controls();
  draw();
  let resized = null;
  window.addEventListener("resize", () => { clearTimeout(resized); resized = setTimeout(draw, 150); });

  // ---- the lesson playground: 床前明月光, the query of 光 in your hands -------------------
  function playground() {
    const P = DATA.playground, chars = P.chars, keys = P.keys;
    const st = { q: P.query.slice(), mult: 1, scale: false, d: 2, causal: false };
    const num = (x) => (x === -Infinity ? "-inf" : x.toFixed(2));  // one format for every number
    bar.replaceChildren(el("h1", {}, W.playground_title));
    guide("guide_playground");
    const mult = el("input", { id: "mult", type: "range", min: 0.5, max: 10, step: 0.5, value: 1, "aria-label": W.multiply });
    const multOut = el("output", { id: "mult-label" }, "× " + num(1));
    mult.addEventListener("input", () => { st.mult = +mult.value; multOut.textContent = "× " + num(st.mult); update(); });
    const scale = el("input", { id: "scale", type: "checkbox", "aria-label": W.scale });
    scale.addEventListener("change", () => { st.scale = scale.checked; update(); });
    const d = el("input", { id: "d", type: "number", min: 1, max: 4096, value: 2, style: "width:6em", "aria-label": "d" });
    d.addEventListener("input", () => { st.d = Math.max(1, +d.value || 1); update(); });
    const causal = el("input", { id: "causal", type: "checkbox", "aria-label": W.causal });
    causal.addEventListener("change", () => { st.causal = causal.checked; update(); });
    const q0 = el("input", { id: "q0", type: "number", step: 0.1, value: st.q[0], style: "width:5em", "aria-label": "q[0]" });
    const q1 = el("input", { id: "q1", type: "number", step: 0.1, value: st.q[1], style: "width:5em", "aria-label": "q[1]" });
    for (const [inp, i] of [[q0, 0], [q1, 1]]) inp.addEventListener("input", () => { st.q[i] = +inp.value || 0; update(); });
    const group = (text, ...inputs) => {  // a label with its inputs: they wrap as one on a phone
      const l = el("label", {}, text);
      l.append(...inputs);
      return l;
    };
    bar.append(group(W.query, q0, q1), group(W.multiply, mult, multOut), group(W.scale, scale),
      group("d", d), group(W.causal, causal));
    exportButtons();
    // the pad: a fixed 360-unit drawing, scaled to its box by the browser
    const R = 1.5, size = 360, px = (x) => size / 2 + (x / R) * (size / 2 - 16), py = (y) => size / 2 - (y / R) * (size / 2 - 16);
    const pad = sv("svg", { id: "pad", width: size, height: size, viewBox: "0 0 " + size + " " + size,
      class: "export", role: "application", "aria-label": W.drag });
    pad.append(sv("line", { x1: 0, y1: size / 2, x2: size, y2: size / 2, stroke: "#d5dbe2" }),
      sv("line", { x1: size / 2, y1: 0, x2: size / 2, y2: size, stroke: "#d5dbe2" }));
    const points = keys.map((k) => [px(k[0]), py(k[1])]);
    points.forEach(([x, y]) => pad.append(sv("circle", { cx: x, cy: y, r: 4, fill: "#5b6570" })));
    placeLabels(points).forEach(([x, y], i) => pad.append(sv("text", { x, y, class: "key-label",
      "text-anchor": "middle", "dominant-baseline": "central", "data-char": chars[i] }, chars[i])));
    const arrow = sv("line", { stroke: "#d1495b", "stroke-width": 2 });
    const dot = sv("circle", { r: 9, fill: "#d1495b", class: "q", tabindex: 0, id: "query-dot", role: "slider",
      "aria-label": W.drag });
    pad.append(arrow, dot);
    function fromEvent(e) {
      const r = pad.getBoundingClientRect(), k = size / r.width;  // screen pixels to drawing units
      const x = ((e.clientX - r.left) * k - size / 2) / (size / 2 - 16) * R;
      const y = (size / 2 - (e.clientY - r.top) * k) / (size / 2 - 16) * R;
      st.q = [Math.round(x * 100) / 100, Math.round(y * 100) / 100];
      q0.value = st.q[0]; q1.value = st.q[1];
      update();
    }
    let dragging = false;
    pad.addEventListener("pointerdown", (e) => { dragging = true; pad.setPointerCapture(e.pointerId); fromEvent(e); });
    pad.addEventListener("pointermove", (e) => { if (dragging) fromEvent(e); });
    pad.addEventListener("pointerup", () => { dragging = false; });
    dot.addEventListener("keydown", (e) => {
      const step = { ArrowLeft: [-0.1, 0], ArrowRight: [0.1, 0], ArrowUp: [0, 0.1], ArrowDown: [0, -0.1] }[e.key];
      if (!step) return;
      e.preventDefault();
      st.q = [Math.round((st.q[0] + step[0]) * 100) / 100, Math.round((st.q[1] + step[1]) * 100) / 100];
      q0.value = st.q[0]; q1.value = st.q[1];
      update();
    });
    const wrapPad = el("div", { id: "pad-wrap" }), table = el("div", { id: "pg-table" });
    wrapPad.append(pad);
    stage.classList.add("pg");
    stage.replaceChildren(wrapPad, table);

    // each label beside its point, at the first place clear of the other labels and points
    function placeLabels(pts) {
      const half = 10, taken = [];
      const clear = (x, y) => taken.every(([a, b]) => Math.abs(a - x) >= 2 * half + 2 || Math.abs(b - y) >= 2 * half + 2) &&
        pts.every(([a, b]) => Math.abs(a - x) >= half + 5 || Math.abs(b - y) >= half + 5) &&
        x - half >= 0 && x + half <= size && y - half >= 0 && y + half <= size;
      return pts.map(([x, y]) => {
        for (const r of [16, 26, 38, 52]) {
          for (const [dx, dy] of [[1, -1], [1, 1], [-1, -1], [-1, 1], [1.4, 0], [-1.4, 0], [0, -1.4], [0, 1.4]]) {
            const at = [x + dx * r, y + dy * r];
            if (clear(...at)) { taken.push(at); return at; }
          }
        }
        taken.push([x + 16, y - 16]);
        return [x + 16, y - 16];
      });
    }
    function softmax(xs) {
      const m = Math.max(...xs.filter((x) => x > -Infinity));
      if (m === -Infinity || !isFinite(m)) return xs.map(() => 0);
      const e = xs.map((x) => (x === -Infinity ? 0 : Math.exp(x - m)));
      const z = e.reduce((a, b) => a + b, 0);
      return e.map((x) => x / z);
    }
    function update() {
      dot.setAttribute("cx", px(st.q[0])); dot.setAttribute("cy", py(st.q[1]));
      arrow.setAttribute("x1", px(0)); arrow.setAttribute("y1", py(0));
      arrow.setAttribute("x2", px(st.q[0])); arrow.setAttribute("y2", py(st.q[1]));
      const factor = st.mult / (st.scale ? Math.sqrt(st.d) : 1);
      // every character's query is its own key, except 光 (the last), whose query you move
      const queries = keys.map((k, i) => (i === keys.length - 1 ? st.q : k));
      const S = queries.map((q, t) => keys.map((k, s) => (st.causal && s > t ? -Infinity : factor * (q[0] * k[0] + q[1] * k[1]))));
      const A = S.map(softmax);
      const t = keys.length - 1;
      const nums = el("table", { class: "nums", id: "pg-row" });
      const head = el("tr"); head.append(el("th", {}, ""));
      chars.forEach((c) => head.append(el("th", {}, c)));
      const sRow = el("tr"); sRow.append(el("th", {}, W.scores));
      S[t].forEach((x) => sRow.append(el("td", {}, num(x))));
      const wRow = el("tr"); wRow.append(el("th", {}, W.weights));
      A[t].forEach((x) => wRow.append(el("td", {}, num(x))));
      nums.append(head, sRow, wRow);
      const list = el("ul", { id: "pg-weights", class: "plain" });
      A[t].forEach((x, s) => {
        const li = el("li", { "data-w": String(x), "data-char": chars[s] });
        li.append(el("span", { class: "k" }, chars[s]), el("span", { class: "num" }, num(x)),
          el("span", { class: "bar", style: "width:" + Math.round(120 * x) + "px" }));
        list.append(li);
      });
      const grid = el("table", { class: "nums", id: "pg-matrix" });
      const gh = el("tr"); gh.append(el("th", {}, ""));
      chars.forEach((c) => gh.append(el("th", {}, c)));
      grid.append(gh);
      A.forEach((row, i) => {
        const tr = el("tr"); tr.append(el("th", {}, chars[i]));
        row.forEach((x) => tr.append(el("td", { style: "background:rgba(47,111,181," + x.toFixed(3) + ")" }, num(x))));
        grid.append(tr);
      });
      table.replaceChildren(el("h2", {}, W.row_of), nums, list, el("h2", {}, W.all_rows), grid);
      side.replaceChildren(el("p", { class: "note" }, W.playground_help),
        el("p", { class: "note", id: "pg-formula" }, "softmax(" + (st.mult !== 1 ? num(st.mult) + " × " : "") + "q · k" + (st.scale ? " / √" + st.d : "") + ")"));
    }
    update();
  }
})();
