/* The figure mha-smollm2: any of SmolLM2-135M-Instruct's 270 heads on a prompt, and the 9 heads of its layer
 * (book/smollm2/page.py).
 *
 * A classic script (no modules, nothing from the network), so it runs from disk too; it needs the ports,
 * core.js, controller.js and heatmaps.js first, and its look is mha.css's. It mounts every
 *   <div class="mha-smollm2"><script type="application/json">{spec of figure_spec()}</script></div>
 * with the controller (controller.js): the controls (prompt, layer, head), defaults and every text are the
 * spec's; this file keeps the drawing. The stored weights (spec.stored: 8-bit, zlib, base64; book.smollm2.stored)
 * are inflated in the page by core.js's storedMaps (DecompressionStream, which works from file:// too, then
 * the port ports/stored_maps.js).
 *
 * The root gets a property `mha`: the controller's settings and update(settings) ({prompt, layer, head},
 * 0-based), and
 *   ready          Promise, resolved once the prompt it opens on is drawn
 *   drawn          {prompt, tokens, layer, head, live} of the picture, or null
 *   show(result)   draw {tokens, attention[layer][head][query][key], scores?, label?} computed elsewhere (a
 *                  live kernel, or SmolLM2 running in the page); scores default to the port's (ports/smollm2.js)
 *                  when result.ids is given, else only the census's are shown
 *   stored(name)   Promise<{tokens, attention} | null>, a stored prompt's weights
 *   off            live: the heads switched off, [layer, head] pairs (settable)
 * and globalThis.mhaSmolLM2 = {mount, mountAll, anywidget, drawHead, drawLayer}: the two pictures, for any
 * attention (drawHead(canvas, attention, layer, head, tokens, options) -> the heatmap's layout;
 * drawLayer(canvases, attention, layer, options) paints the layer's h heads into h canvases).
 *
 * In a live kernel the same figure is an anywidget (book.smollm2.page.SmolLM2Widget): the reader types a text,
 * and Python runs the model on it with the heads switched off ({type: "attend", text, off} -> {tokens,
 * scores, attention}).
 *
 * Shape legend: L 30 layers, h 9 query heads, g 3 key/value groups (head i reads group floor(i / 3)), n tokens.
 */
(function () {
  "use strict";
  const ns = globalThis.mhaFrontEnd; // the ports, core.js, controller.js and heatmaps.js, loaded before

  const earlier = (n) => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => j <= i)); // true: a key the query may see
  const PICTURE = { rows: "query", cols: "key", scale: "weight", masked: "masked" };

  /** One head large: drawHeatmaps (heatmaps.js), the keys a query may not see hatched; returns the layout.
   * options: {title, selected: {row, col} | null, maxWidth, messages (rows, cols, scale, masked)}; a cell is
   * 24 CSS pixels, or the canvas's --ms-cell (a lecture deck's). */
  function drawHead(canvas, attention, layer, head, tokens, options) {
    const o = options || {}, M = o.messages || PICTURE, n = tokens.length;
    const size = parseFloat(getComputedStyle(canvas).getPropertyValue("--ms-cell")) || 24; // a deck asks less
    return ns.drawHeatmaps(canvas, {
      panels: [{ title: o.title || `layer ${layer + 1}, head ${head + 1}`, values: attention[layer][head], mask: earlier(n) }],
      rowLabels: tokens, colLabels: tokens, rowName: M.rows, colName: M.cols, lo: 0, hi: 1,
      cell: [size, size], minCell: 4, maxWidth: o.maxWidth || 720, maxColumns: 1, format: null,
      selected: o.selected ? { panel: 0, ...o.selected } : null, scaleLabel: M.scale, maskKey: M.masked,
    });
  }

  const MASKED = [200, 200, 200]; // the keys a query may not see, in a thumbnail
  const paint = (v, r, c) => (c > r ? MASKED : ns.colour(v).rgb);
  /** The layer's heads small: attention[layer][i] into canvases[i] (square, heatmaps.js drawThumb), the upper
   * triangle grey; a cross over the heads in options.off (indices). */
  function drawLayer(canvases, attention, layer, options) {
    const off = (options && options.off) || new Set();
    canvases.forEach((canvas, i) => {
      const rows = attention && attention[layer] && attention[layer][i];
      ns.drawThumb(canvas, rows || null, paint, off.has(i));
    });
  }

  // backend: {call(message) -> Promise<result>}, a live kernel's Python (see `anywidget` below); spec: the
  // figure's spec, if not inline in `root`.
  function mount(root, backend, givenSpec) {
    if (root.mha) return root.mha;
    const spec = givenSpec || ns.readConfig(root);
    const L = spec.layers, H = spec.heads, G = spec.kv_heads, per = H / G, M = spec.messages, { make, format } = ns;
    const state = { result: null, cell: null, focus: 0, off: new Set(), ticket: 0 };
    let layout = null;
    const ctl = ns.controller(spec, {}, {}, { refresh() { ctl.sync(); pick(); return ctl.settings(); } });
    const { c, status } = ctl;
    const say = (text, level) => ns.setStatus(status, text, level || "");
    const button = (name, text) => make("button", { type: "button", name, className: "mha-button" }, text);
    const promptIndex = () => spec.prompts.findIndex((p) => p.name === ctl.state.prompt);
    const group = (hh) => Math.floor(hh / per);
    const kind = (l, hh) => spec.kinds[spec.labels[l][hh]];
    const key = (l, hh) => l * H + hh;

    // the layer's heads: a grid, one row per key/value group; a roving tabindex (one Tab stop)
    const gridHelp = make("p", { className: "mha-sr", id: ns.uniqueId("ms-grid-help") }, M.grid_help);
    const grid = make("div", { className: "ms-grid", role: "grid", "aria-describedby": gridHelp.id });
    const cells = [], canvases = [];
    for (let g = 0; g < G; g++) {
      const row = make("div", { role: "row", className: "ms-row" },
        make("span", { role: "rowheader", className: "ms-group" }, format(M.group, { group: g + 1 })));
      for (let k = 0; k < per; k++) {
        const hh = g * per + k;
        const canvas = make("canvas", { width: 72, height: 72, "data-head": hh });
        const cell = make("div", { className: "ms-cell", role: "gridcell", tabIndex: -1, "data-head": hh },
          canvas, make("span", { className: "ms-cell-name", "aria-hidden": "true" }, String(hh + 1)));
        row.append(cell);
        cells.push(cell);
        canvases.push(canvas);
      }
      grid.append(row);
    }
    const notice = make("p", { className: "ms-notice", "aria-live": "polite" });
    const scores = make("table", { className: "ms-scores" });
    const kindLine = make("p", { className: "ms-kind" });
    const bigTitle = make("p", { className: "mm-big-title" });
    const big = make("canvas", { className: "mha-canvas", tabIndex: 0, role: "img", "aria-label": M.big_empty });
    const figure = make("div", { className: "mha-figure" }, big);
    const cellOut = make("p", { className: "mha-readout", "aria-live": "polite" });
    const run = button("run", M.run), toggle = button("toggle", ""), reset = button("reset", M.reset);
    root.querySelectorAll(".mm-fallback").forEach((e) => e.remove()); // for pages that run no scripts
    root.classList.add("mm-mounted");
    const choose = make("div", { className: "mha-controls" },
      ns.labelled(spec, c, "prompt"), ns.labelled(spec, c, "layer"), ns.labelled(spec, c, "head"));
    root.append(choose);
    if (spec.live) {
      root.append(make("div", { className: "mha-controls" }, ns.labelled(spec, c, "text"), run),
        make("div", { className: "mha-controls" }, toggle, reset));
    }
    root.append(status, notice, gridHelp,
      make("div", { className: "ms-panels" },
        make("div", { className: "ms-side" }, grid, kindLine, scores),
        make("div", { className: "ms-main" }, bigTitle, figure, cellOut)));
    const picture = root.querySelector(".mm-print"); // the static picture, for print: after the controls
    if (picture) root.appendChild(picture);
    ctl.sync();

    function fixed(v) { return v === null || v === undefined ? M.none : v.toFixed(2); }
    function drawScores(l, hh) {
      const r = state.result, own = r && r.scores;
      const head = make("tr", {}, make("th", { scope: "col" }, M.score_name),
        make("th", { scope: "col" }, M.on_prompt), make("th", { scope: "col" }, M.on_census));
      const rows = ["sink", "previous", "induction"].map((name) => make("tr", {},
        make("th", { scope: "row" }, M[name]),
        make("td", {}, fixed(own && own[name] ? own[name][l][hh] : null)),
        make("td", {}, fixed(spec.census[name][l][hh]))));
      scores.replaceChildren(make("caption", {}, format(M.scores, { layer: l + 1, head: hh + 1 })), head, ...rows);
      const others = [0, 1, 2].map((k) => group(hh) * per + k).filter((k) => k !== hh).map((k) => k + 1);
      kindLine.textContent = format(M.kind_line, { kind: kind(l, hh), group: group(hh) + 1, others: format(M.two, { a: others[0], b: others[1] }) });
    }

    function draw() {
      const l = ctl.state.layer, hh = ctl.state.head, r = state.result;
      grid.setAttribute("aria-label", format(M.layer_grid, { layer: l + 1 }));
      toggle.textContent = format(state.off.has(key(l, hh)) ? M.toggle_on : M.toggle_off, { layer: l + 1, head: hh + 1 });
      const offHere = new Set([...state.off].filter((i) => Math.floor(i / H) === l).map((i) => i % H));
      cells.forEach((cell, b) => {
        cell.classList.toggle("mm-shown", b === hh);
        cell.classList.toggle("mm-off", offHere.has(b));
        cell.tabIndex = b === state.focus ? 0 : -1;
        cell.setAttribute("aria-selected", String(b === hh));
        const name = format(M.thumb, { head: b + 1, group: group(b) + 1, kind: kind(l, b) });
        cell.setAttribute("aria-label", name + (offHere.has(b) ? M.thumb_off : ""));
        cell.title = cell.getAttribute("aria-label");
      });
      drawLayer(canvases, r && r.attention, l, { off: offHere });
      drawScores(l, hh);
      drawBig();
    }

    function drawBig() {
      const r = state.result, l = ctl.state.layer, hh = ctl.state.head, h1 = { layer: l + 1, head: hh + 1 };
      if (!r) { figure.hidden = true; layout = null; bigTitle.textContent = ""; tell(null); return; }
      figure.hidden = false;
      const switched = state.off.has(key(l, hh)) ? M.big_switched : "";
      bigTitle.textContent = format(M.big, { ...h1, kind: kind(l, hh), group: group(hh) + 1, switched });
      big.setAttribute("aria-label", format(M.big_label, { ...h1, n: r.tokens.length }));
      layout = drawHead(big, r.attention, l, hh, r.tokens, {
        title: format(M.panel, h1), selected: state.cell, messages: M,
        maxWidth: Math.max(280, big.parentElement.clientWidth || 640),
      });
      tell(state.cell);
    }

    function tell(cell) {
      const r = state.result, l = ctl.state.layer, hh = ctl.state.head;
      if (!cell || !r) { cellOut.textContent = ""; return; }
      cellOut.textContent = format(M.cell, { layer: l + 1, head: hh + 1, query: r.tokens[cell.row], row: cell.row + 1,
        key: r.tokens[cell.col], col: cell.col + 1, weight: r.attention[l][hh][cell.row][cell.col].toFixed(3) });
    }

    /** Show head hh of the current layer (or [layer, head]) large. */
    function showHead(l, hh) {
      state.focus = hh;
      ctl.merge({ layer: l, head: hh });
      ctl.sync();
      draw();
    }

    // the stored prompts
    const stored = spec.stored ? ns.storedMaps(spec.stored, spec.prompts, spec.layers, spec.heads) : null; // core.js
    let storedRead = Boolean(stored);
    /** A prompt's notice ({message, fields}, book.smollm2.page.notices), in the spec's words. */
    function noticeOf(index) {
      const n = spec.prompts[index].notice;
      return format(M.notice, { text: format(M[n.message], { ...n.fields, kind: spec.kinds[n.fields.kind] }) });
    }
    async function showStored(index, ticket) {
      const heads = (await stored)[index]();
      if (ticket !== state.ticket) return;
      if (!state.result || state.result.tokens.length !== heads.tokens.length) state.cell = null;
      const p = spec.prompts[index];
      state.result = { ...heads, scores: p.scores, prompt: p.name, live: false };
      notice.textContent = noticeOf(index);
      say(format(M.stored, { index: index + 1, count: spec.prompts.length, n: heads.tokens.length, scale: spec.stored.scale }));
      draw();
    }
    /** The reader picked a prompt, a layer or a head: draw the stored prompt (or, live, run the chosen one). */
    function pick() {
      state.focus = ctl.state.head;
      const index = promptIndex();
      if (spec.live) {
        if (state.result && state.result.prompt !== ctl.state.prompt && spec.prompts[index].text !== undefined) {
          c.text.value = spec.prompts[index].text;
          compute(ctl.state.prompt);
          return;
        }
      } else if (storedRead && (!state.result || state.result.prompt !== ctl.state.prompt)) {
        showStored(index, ++state.ticket).catch(() => {});
        return;
      }
      draw();
    }

    /** Draw a result computed elsewhere: {tokens, attention, scores?, ids?, label?}. */
    function show(result, label) {
      const scoresOf = result.scores || (result.ids ? ns.smolScores(result.attention, result.ids) : null);
      if (!state.result || state.result.tokens.length !== result.tokens.length) state.cell = null;
      state.result = { tokens: result.tokens, attention: result.attention, scores: scoresOf,
        prompt: label || result.label || null, live: true };
      notice.textContent = "";
      if (!spec.live) say(format(M.own, { n: result.tokens.length })); // the page's model ran it (smollm2run.js)
      draw();
    }

    // live: Python computes the reader's text, with heads off
    async function compute(prompt) {
      const text = c.text.value;
      if (!text.trim()) { say(M.empty, "warning"); return; }
      const ticket = ++state.ticket;
      say(M.running);
      try {
        const off = [...state.off].sort((a, b) => a - b).map((i) => [Math.floor(i / H), i % H]);
        const r = await backend.call({ type: "attend", text, off });
        if (ticket !== state.ticket) return;
        show(r, prompt || null);
        const index = spec.prompts.findIndex((p) => p.name === prompt);
        if (index >= 0 && !off.length) notice.textContent = noticeOf(index);
        say(format(M.live, { n: r.tokens.length, off: off.length ? format(M.live_off, { k: off.length }) : "" }));
      } catch (error) {
        if (ticket === state.ticket) say(format(M.failed, { error: error.message }), "warning");
      }
    }
    if (spec.live) {
      c.text.value = spec.defaults.text || "";
      run.addEventListener("click", () => compute(null));
      c.text.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); compute(null); } });
      toggle.addEventListener("click", () => {
        const i = key(ctl.state.layer, ctl.state.head);
        if (state.off.has(i)) state.off.delete(i); else state.off.add(i);
        compute(state.result && state.result.prompt);
      });
      reset.addEventListener("click", () => { state.off.clear(); compute(state.result && state.result.prompt); });
    }

    ns.heatmapReadout(root, big, { // pointer, tap and arrow keys; Page Up/Down: the previous/next head of all
      layout: () => layout, selected: () => state.cell, say: tell, draw: () => draw(),
      select(cell) { state.cell = { row: cell.row, col: cell.col }; drawBig(); },
      clear() { state.cell = null; drawBig(); },
      size: () => state.result && { panels: 1, n: state.result.tokens.length },
      page(step) {
        const i = (key(ctl.state.layer, ctl.state.head) + step + L * H) % (L * H);
        showHead(Math.floor(i / H), i % H);
      },
    });
    grid.addEventListener("click", (event) => {
      const cell = event.target.closest(".ms-cell");
      if (cell) showHead(ctl.state.layer, Number(cell.dataset.head));
    });
    grid.addEventListener("keydown", (event) => {
      let g = group(state.focus), k = state.focus % per;
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); showHead(ctl.state.layer, state.focus); return; }
      const moves = {
        ArrowLeft: () => { k = Math.max(0, k - 1); }, ArrowRight: () => { k = Math.min(per - 1, k + 1); },
        ArrowUp: () => { g = Math.max(0, g - 1); }, ArrowDown: () => { g = Math.min(G - 1, g + 1); },
        Home: () => { k = 0; if (event.ctrlKey || event.metaKey) g = 0; },
        End: () => { k = per - 1; if (event.ctrlKey || event.metaKey) g = G - 1; },
      };
      if (!moves[event.key]) return;
      event.preventDefault();
      moves[event.key]();
      state.focus = g * per + k;
      cells.forEach((cell, b) => { cell.tabIndex = b === state.focus ? 0 : -1; });
      cells[state.focus].focus();
    });

    state.focus = ctl.state.head;
    draw();
    let opened = Promise.resolve();
    if (stored) {
      opened = showStored(promptIndex(), state.ticket).catch((error) => {
        storedRead = false;
        root.classList.add("mm-failed");
        say(format(M.stored_failed, { error: error.message }), "warning");
      });
    } else if (spec.live && backend) {
      opened = compute(ctl.state.prompt);
    }

    const exposed = ctl.expose(root, { // and settings, update(settings)
      spec,
      ready: opened,
      show,
      canvas: big,
      get layout() { return ns.layoutView(layout); },
      get drawn() {
        const r = state.result;
        return r && { prompt: r.prompt, tokens: r.tokens.slice(), layer: ctl.state.layer, head: ctl.state.head, live: r.live };
      },
      async stored(name) {
        const index = spec.prompts.findIndex((p) => p.name === name);
        if (!stored || index < 0) return null;
        const heads = (await stored)[index]();
        return { tokens: heads.tokens, attention: heads.attention.map((hs) => hs.map((rows) => rows.map((row) => Array.from(row)))) };
      },
      get off() { return [...state.off].sort((a, b) => a - b).map((i) => [Math.floor(i / H), i % H]); },
      set off(pairs) { state.off = new Set(pairs.map(([l, hh]) => key(l, hh))); draw(); },
    });
    // on the site: "Run on your own text", SmolLM2 in the page (smollm2run.js adds predict and generate)
    if (!backend && spec.run && ns.smolLM2Run) ns.smolLM2Run(root, exposed, { show });
    return exposed;
  }

  function mountAll() { document.querySelectorAll(".mha-smollm2").forEach((root) => mount(root)); }

  // In a live kernel (book.smollm2.page.SmolLM2Widget): the reader's text, run by Python. A request goes as a
  // custom message {id, type: "attend", text, off}; the reply is {id, result} (the attention as float32
  // bytes in buffers[0], of shape result.attention_shape) or {id, error} (core.js's pythonBox).
  const anywidget = ns.pythonBox("mha-smollm2", mount);

  if (typeof document !== "undefined" && document.currentScript) { // a classic script of the site
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
    else mountAll();
  }
  ns.mountSmolLM2 = mount;
  globalThis.mhaSmolLM2 = { mount, mountAll, anywidget, drawHead, drawLayer };
})();
