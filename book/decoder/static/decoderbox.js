/* The decoder in the page: "Heads that work together" runs the book's decoder in the reader's browser
 * (book/decoder/box.py).
 *
 * A classic script (no modules, no build step, nothing from a CDN), so it runs from disk too; it needs the ports,
 * core.js, controller.js and heatmaps.js first, and its look is mha.css's. It mounts every
 *   <div class="mha-decoder"><script type="application/json">{spec of box_spec()}</script></div>
 * as the controller (controller.js) mounts a figure: its controls (the text, the head drawn, a check box per
 * head), defaults and every text it shows are the spec's; this file keeps the loading and the drawing: the
 * text with the top guess after each character, the five top guesses after the chosen one, how often the top
 * guess is right (on each copy of a text written twice), and the chosen head's attention (drawHeatmaps). The
 * root gets a property `mha` (the controller's settings and update(settings), and):
 *   predict(text, {off}) -> Promise<{tokens, attention, top, truncated, unknown, note}>, as
 *                           book.decoder.model.predict: attention[layer][head][query][key] (nested arrays),
 *                           top[i] = five [token, probability] pairs after position i; off = [[layer, head],
 *                           ...] counted from 0. Bad input rejects it with a plain Error whose message says why.
 *   load()               -> Promise, resolved once the weights are in the page
 *   refresh()            -> Promise: run the model on the box's text with its heads off, and draw
 *   random()             -> Promise: a random sequence written twice, as the button does
 *   off                  the heads switched off, [layer, head] pairs (settable)
 *   shown                the head drawn, [layer, head] (settable)
 *   selected             the position (0-based) whose five guesses are listed (settable)
 *
 * The model is the port ports/decoder.js (tested against book.decoder.model.predict). Its weights are one
 * classic script beside this file, decoder-weights.js (float16 in base64, written by the book's build,
 * book/decoder/page.py), which the box inserts with <script src> once per page: a page opened from
 * disk can read no file another way. The forward pass is small (two layers, 128 characters at most) and runs
 * on the page's main thread.
 *
 * In a live kernel the same box is an anywidget (book.decoder.box.DecoderWidget): `export default
 * globalThis.mhaDecoderBox.anywidget`, and Python answers each request (see `anywidget` below).
 *
 * Shape legend: n characters (tokens), L layers, h heads per layer.
 */
(function () {
  "use strict";
  const ns = globalThis.mhaFrontEnd; // the ports, core.js, controller.js and heatmaps.js, loaded before
  const here = typeof document !== "undefined" && document.currentScript && document.currentScript.src;

  // ---- the weights: one classic script beside this file, once per page ----------------------------------
  let loading = null; // Promise of the port's model, shared by every box of the page
  function loadModel(spec) {
    if (loading) return loading;
    const M = spec.messages;
    loading = new Promise((resolve, reject) => {
      let data;
      globalThis[spec.callback] = (payload) => { data = payload; };
      const script = document.createElement("script");
      script.onload = () => {
        script.remove();
        try {
          if (!data || data.format !== spec.format) {
            throw new Error(ns.format(M.bad_format, { got: data ? data.format : null, expected: spec.format }));
          }
          resolve(ns.decoderModel({ ...data, messages: { ...data.messages, ...M.model } })); // the page's words
        } catch (error) {
          reject(error);
        }
      };
      script.onerror = () => { script.remove(); reject(new Error(ns.format(M.no_weights, { file: spec.weights }))); };
      script.src = here ? new URL(spec.weights, here).href : spec.weights;
      document.head.appendChild(script);
    });
    loading.catch(() => { loading = null; }); // a later use tries again
    return loading;
  }

  /** The box's computer without a kernel: the port, on the weights beside this file. */
  function pageBackend(spec) {
    return {
      ready: () => loadModel(spec),
      predict: async (text, off) => ns.decoderPredict(await loadModel(spec), text, { off }),
    };
  }

  // ---- the box: mounted from its spec by the controller (controller.js); it keeps only its drawing ----------
  function mount(root, backend, givenSpec) {
    if (root.mha) return root.mha;
    const spec = givenSpec || ns.readConfig(root);
    const computer = backend || pageBackend(spec);
    const L = spec.layers, H = spec.heads, M = spec.messages, { make, format } = ns;
    const state = { result: null, computed: null, off: new Set(), selected: null, cell: null, ticket: 0, failed: false };
    let layout = null;
    const figure = {
      refresh() { // a setting changed: the text needs the model again, the head only a new picture
        ctl.sync();
        if (ctl.state.text !== state.computed) compute();
        else draw();
        return ctl.settings();
      },
    };
    const ctl = ns.controller(spec, {}, {}, figure);
    const { c, status } = ctl;
    const say = (text, level) => ns.setStatus(status, text, level || "");
    const show = (token) => spec.shown[token] || token; // a space as ␣, a newline as ⏎
    const key = (l, hh) => l * H + hh;
    const pair = (i) => [Math.floor(i / H), i % H];
    const offList = () => [...state.off].sort((a, b) => a - b).map(pair);
    const described = (l, hh) => spec.names[l][hh] + (spec.roles[l][hh] ? format(M.role, { role: spec.roles[l][hh] }) : "");

    const random = make("button", { type: "button", name: "random", className: "mha-button" }, M.random);
    const reset = make("button", { type: "button", name: "reset", className: "mha-button" }, M.reset);
    const tokensHelp = make("p", { className: "mha-sr", id: ns.uniqueId("md-tokens-help") }, M.tokens_help);
    const strip = make("div", { className: "md-tokens", role: "listbox", "aria-label": M.tokens,
      "aria-describedby": tokensHelp.id, "aria-orientation": "horizontal" });
    const guesses = make("p", { className: "md-guesses", "aria-live": "polite" });
    const accuracy = make("p", { className: "md-accuracy" });
    const switches = make("fieldset", { className: "md-off" }, make("legend", {}, M.off_legend));
    for (let l = 0; l < L; l++) {
      for (let hh = 0; hh < H; hh++) switches.append(ns.labelled(spec, c, `off_${l}_${hh}`));
    }
    switches.append(reset);
    const offOut = make("p", { className: "md-heads-off" });
    const canvas = make("canvas", { className: "mha-canvas", tabIndex: 0, role: "img", "aria-label": M.picture_empty });
    const frame = make("div", { className: "mha-figure" }, canvas);
    const cellOut = make("p", { className: "mha-readout", "aria-live": "polite" });
    const notice = make("p", { className: "md-notice" }, format(M.notice, { random: M.random }));
    root.querySelectorAll(".md-fallback").forEach((e) => e.remove()); // for pages that run no scripts
    root.classList.add("md-mounted");
    root.append( // (the lecture decks lay these children out in two columns: slides/template/mha_reveal)
      make("div", { className: "mha-controls" }, ns.labelled(spec, c, "text"), random),
      status, tokensHelp, strip, guesses, accuracy, switches, offOut,
      make("div", { className: "mha-controls" }, ns.labelled(spec, c, "head")),
      frame, cellOut, notice);
    const picture = root.querySelector(".md-print"); // the static picture, for print: after the controls
    if (picture) root.appendChild(picture);
    ctl.sync();

    // -- the text, a character per token, with the top guess under each ---------------------------------------
    let chips = [];
    const hit = (r, i) => i + 1 < r.tokens.length && r.top[i][0][0] === r.tokens[i + 1];
    function drawTokens() {
      const r = state.result;
      chips = r.tokens.map((token, i) => {
        const [guess, p] = r.top[i][0], right = hit(r, i);
        // its name is its text: the character and the guess shown, the words around them for screen readers
        const [before, between, after] = format(M.token, { i: i + 1, token: "\u0000", guess: "\u0000",
          p: p.toFixed(2), hit: right ? M.token_hit : i + 1 === r.tokens.length ? M.token_last : "" }).split("\u0000");
        return make("span", { role: "option", className: right ? "md-token md-hit" : "md-token", tabIndex: -1,
          title: before + show(token) + between + show(guess) + after, "data-i": i },
        make("span", { className: "mha-sr" }, before), make("span", { className: "md-char" }, show(token)),
        make("span", { className: "mha-sr" }, between), make("span", { className: "md-guess" }, show(guess)),
        make("span", { className: "mha-sr" }, after));
      });
      strip.replaceChildren(...chips);
    }

    /** Choose position i: its chip, its five guesses, and its row in the picture. */
    function select(i, focus) {
      const r = state.result;
      if (!r) return;
      const n = r.tokens.length;
      i = Math.max(0, Math.min(n - 1, i));
      state.selected = i;
      chips.forEach((chip, k) => {
        chip.tabIndex = k === i ? 0 : -1;
        chip.setAttribute("aria-selected", String(k === i));
      });
      if (focus) chips[i].focus();
      const listed = r.top[i].map(([t, p]) => format(M.guess, { token: show(t), p: p.toFixed(3) })).join(", ");
      const next = i + 1 < n ? format(M.guesses_next, { token: show(r.tokens[i + 1]) }) : "";
      guesses.textContent = format(M.guesses, { i: i + 1, token: show(r.tokens[i]), next, guesses: listed });
      const [l, hh] = pair(ctl.state.head), row = r.attention[l][hh][i];
      state.cell = { row: i, col: row.indexOf(Math.max(...row.slice(0, i + 1))) };
      drawPicture();
    }
    strip.addEventListener("click", (event) => {
      const chip = event.target.closest(".md-token");
      if (chip) select(Number(chip.dataset.i), true);
    });
    strip.addEventListener("keydown", (event) => {
      const moves = { ArrowLeft: -1, ArrowUp: -1, ArrowRight: 1, ArrowDown: 1 };
      const i = state.selected ?? 0;
      if (moves[event.key]) select(i + moves[event.key], true);
      else if (event.key === "Home") select(0, true);
      else if (event.key === "End") select(Infinity, true);
      else return;
      event.preventDefault();
    });

    function sayAccuracy() {
      const r = state.result, n = r.tokens.length, half = n / 2;
      if (n < 2) { accuracy.textContent = M.accuracy_one; return; }
      const repeated = n % 2 === 0 && half >= 2 && r.tokens.slice(0, half).every((t, i) => t === r.tokens[half + i]);
      if (repeated) { // as the chapter scores a copy: the predictions of its tokens 2 to m
        let first = 0, second = 0;
        for (let i = 0; i <= half - 2; i++) first += hit(r, i);
        for (let i = half; i <= 2 * half - 2; i++) second += hit(r, i);
        accuracy.textContent = format(M.accuracy_copies, { m: half, first, second, scored: half - 1 });
      } else {
        let right = 0;
        for (let i = 0; i + 1 < n; i++) right += hit(r, i);
        accuracy.textContent = format(M.accuracy, { right, total: n - 1 });
      }
    }

    // -- the chosen head's attention -------------------------------------------------------------------------
    function drawPicture() {
      const r = state.result, [l, hh] = pair(ctl.state.head);
      if (!r) { layout = null; return; }
      const n = r.tokens.length, tokens = r.tokens.map(show);
      const fields = { name: spec.names[l][hh], layer: l + 1, head: hh + 1,
        role: spec.roles[l][hh] ? format(M.role, { role: spec.roles[l][hh] }) : "" };
      canvas.setAttribute("aria-label", format(M.picture, { ...fields, n }));
      const mask = r.tokens.map((_, i) => r.tokens.map((__, j) => j <= i)); // a decoder looks back only
      layout = ns.drawHeatmaps(canvas, {
        panels: [{ title: format(M.panel, fields), values: r.attention[l][hh], mask }],
        rowLabels: tokens, colLabels: tokens, rowName: M.rows, colName: M.cols, lo: 0, hi: 1,
        cell: [16, 16], minCell: 2, maxWidth: Math.max(280, frame.clientWidth || 720), maxColumns: 1, format: null,
        selected: state.cell && { panel: 0, ...state.cell }, scaleLabel: M.scale, maskKey: M.masked,
      });
      tell(state.cell);
    }
    /** The read-out of one cell of the picture (pointed at, tapped or reached with the arrow keys). */
    function tell(cell) {
      const r = state.result;
      if (!cell || !r) { cellOut.textContent = ""; return; }
      const [l, hh] = pair(ctl.state.head), show2 = (i) => show(r.tokens[i]);
      cellOut.textContent = format(M.cell, { name: spec.names[l][hh], layer: l + 1, head: hh + 1,
        query: show2(cell.row), row: cell.row + 1, key: show2(cell.col), col: cell.col + 1,
        weight: r.attention[l][hh][cell.row][cell.col].toFixed(3) });
    }
    ns.heatmapReadout(root, canvas, { // pointer, tap and arrow keys (Page Up/Down: the previous/next head)
      layout: () => layout, selected: () => state.cell, say: tell, draw: drawPicture,
      select(cell) { state.cell = { row: cell.row, col: cell.col }; drawPicture(); },
      size: () => state.result && { panels: 1, n: state.result.tokens.length },
      page(step) { ctl.fromReader({ head: (ctl.state.head + step + L * H) % (L * H) }); },
    });

    function sayOff() {
      const off = offList();
      offOut.textContent = off.length
        ? format(M.heads_off, { k: off.length, total: L * H, names: off.map(([l, hh]) => described(l, hh)) })
        : format(M.heads_on, { total: L * H });
      for (let l = 0; l < L; l++) for (let hh = 0; hh < H; hh++) c[`off_${l}_${hh}`].checked = state.off.has(key(l, hh));
    }

    function draw() {
      ctl.sync();
      sayOff();
      if (!state.result) return;
      drawPicture();
    }

    /** Run the model on the box's text with its heads off, and draw; a refused text keeps the picture. */
    async function compute() {
      const text = ctl.state.text, ticket = ++state.ticket;
      const current = () => ticket === state.ticket;
      if (state.failed) return;
      try {
        if (!state.result) say(format(M.loading, { kb: spec.kb }));
        await computer.ready();
      } catch (error) {
        if (!current()) return;
        state.failed = true;
        say(format(M.failed, { error: error.message }), "error");
        root.classList.add("md-failed"); // no model here (a notebook, say): the static picture
        return;
      }
      let r;
      try {
        r = await computer.predict(text, offList());
      } catch (error) {
        if (!current()) return;
        say(error.message + M.still, "warning");
        return;
      }
      if (!current()) return;
      const same = state.result && state.computed === text;
      state.result = r;
      state.computed = text;
      say(r.note, r.note ? "warning" : "");
      drawTokens();
      sayAccuracy();
      sayOff();
      const focused = strip.contains(document.activeElement);
      select(same && state.selected !== null ? state.selected : r.tokens.length - 1, focused);
    }

    for (let l = 0; l < L; l++) {
      for (let hh = 0; hh < H; hh++) {
        c[`off_${l}_${hh}`].addEventListener("change", (event) => {
          if (event.target.checked) state.off.add(key(l, hh)); else state.off.delete(key(l, hh));
          sayOff();
          compute();
        });
      }
    }
    reset.addEventListener("click", () => { state.off.clear(); sayOff(); compute(); });

    /** A sequence of distinct ordinary characters, of a random length in spec.lengths, written twice. */
    function randomText() {
      const [lo, hi] = spec.lengths, pool = spec.ordinary.slice();
      const m = lo + Math.floor(Math.random() * (hi - lo + 1));
      for (let i = pool.length - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        [pool[i], pool[j]] = [pool[j], pool[i]];
      }
      const once = pool.slice(0, m).join("");
      return once + once;
    }
    random.addEventListener("click", () => ctl.fromReader({ text: randomText() }));
    sayOff();
    compute();

    /** Anything thrown in the page becomes a plain Error with a message (the contract of predict). */
    const plain = (error) => (error instanceof Error && error.constructor === Error ? error
      : new Error(ns.bugMessage(spec, error instanceof Error ? error : new Error(String(error)))));
    return ctl.expose(root, { // and settings, update(settings): the text and the head drawn
      spec,
      async predict(text, options) {
        try {
          return await computer.predict(text, options && options.off !== undefined ? options.off : []);
        } catch (error) {
          throw plain(error);
        }
      },
      load: () => computer.ready().then(() => true),
      refresh: () => compute(),
      random() { ctl.merge({ text: randomText() }); ctl.sync(); return compute(); },
      get off() { return offList(); },
      set off(pairs) { state.off = new Set(pairs.map(([l, hh]) => key(l, hh))); sayOff(); compute(); },
      get shown() { return pair(ctl.state.head); },
      set shown(at) { ctl.fromReader({ head: key(at[0], at[1]) }); },
      get selected() { return state.selected; },
      set selected(i) { select(i, false); },
      canvas,
      get layout() { return ns.layoutView(layout); },
    });
  }

  function mountAll() { document.querySelectorAll(".mha-decoder").forEach((root) => { if (ns.readConfig(root)) mount(root); }); }

  // In a live kernel (book.decoder.box.DecoderWidget): the same box, computed by Python. Each request
  // goes to Python as a custom message {id, text, off}; the reply is {id, result} (the attention as float32
  // bytes in buffers[0], of shape result.attention_shape) or {id, error} (core.js's pythonBox).
  const anywidget = ns.pythonBox("mha-decoder", mount,
    (call) => ({ ready: () => Promise.resolve(), predict: (text, off) => call({ text, off }) }));

  if (typeof document !== "undefined" && document.currentScript) { // a classic script of the site
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
    else mountAll();
  }
  ns.mountDecoder = mount;
  globalThis.mhaDecoderBox = { mount, mountAll, anywidget };
})();
