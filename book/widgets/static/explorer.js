/* mha front end, the head explorer: per-head attention weights of a layer on a typed sentence.
 *
 * Needs core.js and heatmaps.js first. The picture is computed in the page by the port in core.js of
 * book.compute.explorer.explorer_weights (a fresh layer from a seed), or from a trained model's exported
 * weights; the tests keep both equal to Python within 1e-5.
 *
 * A page includes it as (classic scripts, data inline, works from file://):
 *
 *   <div class="mha-explorer">
 *     <script type="application/json">{"settings": {...}, "model": null}</script>
 *   </div>
 *
 * (or the same JSON in a data-mha-config attribute). In the JSON text, "</" must be written "<\/"
 * (Python: json.dumps(config).replace("</", "<\\/")). Every key but spec is optional:
 *
 *   {
 *     "spec": {...},                          book.widgets.spec.explorer_spec(): controls, masks, messages
 *     "settings": {"d_model": 32, "h": 4, "mask": ..., "valid_length": null,
 *                  "sentence": "the cat sat on the mat", "seed": 0, "source": "fresh"},
 *     "model": null | {
 *       "name": "recall-3, h = 4",            shown in the note
 *       "d_model": 16, "h": 4,
 *       "vocab": ["0", "1", "A5", "?"],       token names, as split from the sentence
 *       "embeddings": T,                      (len(vocab), d_model): each token's vector, without position
 *       "positions": T | null,                (max_len, d_model): added to the token at each position
 *       "params": {"W_q.weight": T, "W_q.bias": T, ..., "W_o.bias": T},  book.compute.explorer.PARAMETERS
 *       "parameters": {"W_q": 272, ..., "total": 1088}     counts shown under the picture
 *     }
 *   }
 *
 * Python writes it (book.widgets.frontend.explorer_config); settings mean what they mean for
 * explorer_weights (the masks, bounds and defaults are the spec's; valid_length null = n); "source" is
 * "trained" (the default when a model is given) or "fresh".
 * A tensor T is nested lists of numbers, or
 * {"dtype": "float32", "shape": [rows, cols], "data": "<base64 of the little-endian float32 bytes>"}.
 * With a model, x = embeddings[token] + positions[p] and the weights are those of
 * MultiHeadAttention(x[None], mask=...) with the model's parameters: weight (d_model, d_model) and bias
 * (d_model,) of each nn.Linear, a bias may be null.
 *
 * Mount by hand: mhaFrontEnd.mountExplorer(el, config, {onChange(settings) {...}}). Either way the root
 * element gets el.mha = {settings, update(settings) -> weights [h][n][n], weights, tokens, message}.
 *
 * Live mode (options.live, set by the anywidget adapter in core.js): Python is in charge, and the page
 * draws at once. A reader's change is merged (mergeSettings), drawn from the tested port when the page can
 * compute it (a fresh layer, or a trained model whose weights are in the page) and sent with
 * onChange(settings); what Python sends then replaces the picture through el.mha.show(drawn), drawn =
 * {tokens, shape: [h, n, n], weights: float32 bytes (DataView, ArrayBuffer or typed array; h * n * n
 * little-endian values), mask: uint8 bytes (n * n, 1 = may attend) or null, d_model, h, d_k, parameters:
 * {W_q, W_k, W_v, W_o, total}, message, level: "" | "warning" | "error"}; tokens and message are shown as
 * text, literally. A trained model is then described by config.trained = {name, d_model, h} instead of
 * config.model (its weights stay in Python, which alone draws it).
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});
  const { make, ReaderError } = ns;

  function mountExplorer(el, config, options) {
    config = config || {};
    options = options || {};
    const live = Boolean(options.live);
    const spec = config.spec, m = spec.messages;
    const model = config.model ? ns.loadModel(config.model, spec)
      : config.trained ? Object.assign({ maxTokens: spec.max_tokens }, config.trained) : null;
    const local = !live || !config.trained; // the page can compute this figure itself
    // The state (ctl.state): the fresh layer's d_model and h are kept while a trained model is shown.
    const ctl = ns.controller(spec, config, options, { refresh, fixed, settings: current });
    const { c, status } = ctl;
    let shown = null; // what the picture shows: {tokens, weights, mask, d_model, h, d_k}
    let message = "";
    let selected = null; // {panel, row, col} of the read-out
    let layout = null;

    // -- the page ---------------------------------------------------------------------------------------
    el.classList.add("mha-explorer");
    el.replaceChildren(); // drop the inline data and any fallback
    const f = (name) => ns.labelled(spec, c, name);
    const note = make("p", { className: "mha-note" });
    const help = make("p", { className: "mha-help", id: ns.uniqueId("mha-help") }, m.help);
    const canvas = make("canvas", { className: "mha-canvas", tabIndex: 0, role: "img", "aria-describedby": help.id });
    const readout = make("p", { className: "mha-readout", "aria-live": "polite" });
    const shapes = make("div", { className: "mha-shapes" });
    const numbersNote = make("p", { className: "mha-note", hidden: true }); // why no numbers are printed
    el.append(
      make("div", { className: "mha-controls" },
        model ? f("source") : null, f("d_model"), f("h"), f("mask"), f("valid_length")),
      make("div", { className: "mha-controls" }, f("sentence"), f("seed"), f("show_numbers"),
        c.scale ? f("scale") : null), // a spec written before the per-head scale has no such control
      note, numbersNote, status,
      make("div", { className: "mha-figure" }, canvas),
      readout, help, shapes);

    // -- settings -------------------------------------------------------------------------------------
    function trained() { return ctl.state.source === "trained"; }
    function current() {
      const state = ctl.state;
      return {
        d_model: trained() ? model.d_model : state.d_model,
        h: trained() ? model.h : state.h,
        mask: state.mask, valid_length: state.valid_length, sentence: state.sentence, seed: state.seed,
        source: state.source,
      };
    }

    /** The settings a trained model fixes while it is shown (mergeSettings refuses other values). */
    function fixed(changes, state) {
      const source = "source" in changes ? changes.source : state.source;
      return source === "trained" && model ? { d_model: model.d_model, h: model.h } : null;
    }

    // -- drawing --------------------------------------------------------------------------------------
    let drawnLength = null; // the valid length of the picture shown, which a refused sentence keeps
    function compute() {
      const tokens = ns.splitTokens(ctl.state.sentence);
      const limit = model && trained() ? model.maxTokens : spec.max_tokens;
      if (!tokens.length) throw new ReaderError(m.no_tokens);
      if (tokens.length > limit) throw new ReaderError(ns.format(m.too_long, { n: tokens.length, limit }));
      return ns.explorerCompute(current(), trained() ? model : null, spec);
    }

    /** Recompute and redraw for the state; a reader's bad input keeps the last picture and says why. Live
     * with a trained model in the kernel, only the controls change until Python answers. */
    function refresh() {
      if (!local && trained()) {
        syncControls();
        return shown ? ns.toNested(shown.weights) : null;
      }
      let level = "";
      try {
        shown = compute();
        drawnLength = ctl.state.valid_length;
        message = notes();
        if (selected && (selected.panel >= shown.h || selected.row >= shown.tokens.length || selected.col >= shown.tokens.length)) selected = null;
        draw();
        drawShapes();
      } catch (error) {
        if (!(error instanceof ReaderError)) {
          message = ns.bugMessage(spec, error);
          ns.setStatus(status, message, "error");
          throw error;
        }
        message = error.message + m.still;
        level = "warning";
      }
      ns.setStatus(status, message, level);
      syncControls(level === "warning");
      return shown ? ns.toNested(shown.weights) : null;
    }

    /** What followed the reader's last change (the controller's notes; the valid length's only while the
     * mask cuts the keys after it), for the status line. */
    function notes() {
      const cut = spec.masks.find((k) => k.name === ctl.state.mask).cut;
      return Object.entries(ctl.notes).filter(([name]) => cut || name !== "valid_length").map(([, text]) => text).join(" ");
    }

    let draws = 0;
    let received = 0; // live: how many payloads Python sent
    function draw() {
      if (!shown) return;
      draws += 1;
      const n = shown.tokens.length;
      const maxWidth = Math.max(300, canvas.parentElement.clientWidth || el.clientWidth || 860); // the picture's own box
      const numbers = c.show_numbers.checked, least = spec.numbers_min;
      const cellFor = (k) => Math.max(12, Math.min(36, Math.floor((maxWidth - 210 - 18 * (k - 1)) / (k * n))));
      // with numbers, fewer heads on a line if that makes the cells wide enough to print them in
      let perLine = Math.min(shown.h, 4);
      while (numbers && perLine > 1 && cellFor(perLine) < least) perLine -= 1;
      const cell = cellFor(perLine);
      const own = perHead(); // each head against its own largest weight
      layout = ns.drawHeatmaps(canvas, {
        panels: shown.weights.map((values, i) => {
          const top = own ? largest(values) : null;
          const head = { head: i + 1, d_k: shown.d_k, max: own ? top.toFixed(2) : "" };
          const titles = (own ? [m.panel_own, m.panel_own_short, m.panel_own_shorter] : [m.panel, m.panel_short])
            .map((t) => ns.format(t, head));
          return {
            title: titles[0], shortTitles: [...titles.slice(1), String(i + 1)],
            values, mask: shown.mask, lo: 0, hi: own ? top || 1 : 1,
          };
        }),
        rowLabels: shown.tokens, colLabels: shown.tokens, rowName: m.rows, colName: m.cols,
        lo: 0, hi: 1, cell: [cell, cell], maxWidth, maxColumns: perLine, selected,
        format: numbers && cell >= least ? ns.weightText : null,
        scaleLabel: own ? m.scale_own : m.scale, maskKey: m.masked,
        tickFormat: own ? (v) => `${Math.round(v * 100)}%` : null,
      });
      // "show numbers" with cells too small to print in: say why (the spec's message), never do nothing
      numbersNote.hidden = !(numbers && !layout.printed);
      numbersNote.textContent = numbersNote.hidden ? "" : ns.format(m.numbers_too_small, { min: least, n, cell: layout.cw });
      canvas.setAttribute("aria-label",
        ns.format(m.picture, { h: shown.h, s: shown.h > 1 ? "s" : "", n, tokens: shown.tokens.join(" ") }));
      say(selected);
    }

    /** True when the panels are coloured each against its own largest weight. */
    const perHead = () => Boolean(c.scale) && c.scale.value === "per head";

    /** The largest weight a reader can see in one head (masked cells left out). */
    function largest(values) {
      let top = 0;
      values.forEach((row, i) => row.forEach((w, j) => { if ((!shown.mask || shown.mask[i][j]) && w > top) top = w; }));
      return top;
    }

    /** The read-out of one cell: head, query token, key token and the exact weight. */
    function say(cell) {
      if (!cell || !shown) { readout.textContent = ""; return; }
      const { panel, row, col } = cell, t = shown.tokens;
      const masked = shown.mask && !shown.mask[row][col];
      const value = masked ? m.cell_masked : ns.format(m.cell_weight, { weight: shown.weights[panel][row][col].toFixed(4) })
        + (perHead() ? ns.format(m.cell_largest, { largest: largest(shown.weights[panel]).toFixed(4) }) : "");
      readout.textContent = ns.format(m.cell,
        { head: panel + 1, d_k: shown.d_k, query: t[row], row: row + 1, key: t[col], col: col + 1, value });
    }

    /** Live mode: draw what Python computed (see the header for `drawn`). */
    function show(drawn) {
      if (!drawn) return null;
      received += 1;
      if (drawn.tokens && drawn.weights) {
        const [h, n] = drawn.shape, values = ns.float32s(drawn.weights), flags = ns.bytesOf(drawn.mask);
        if (values.length !== h * n * n || drawn.tokens.length !== n) throw new RangeError(`drawn: shape (${drawn.shape}) does not match ${values.length} weights and ${drawn.tokens.length} tokens`);
        const weights = [];
        for (let p = 0; p < h; p++) {
          const rows = [];
          for (let i = 0; i < n; i++) rows.push(values.subarray((p * n + i) * n, (p * n + i + 1) * n));
          weights.push(rows);
        }
        const mask = flags && Array.from({ length: n }, (_, i) => Array.from(flags.subarray(i * n, (i + 1) * n), Boolean));
        shown = { tokens: drawn.tokens.slice(), weights, mask, d_model: drawn.d_model, h, d_k: drawn.d_k ?? drawn.d_model / h, parameters: drawn.parameters };
        drawnLength = ctl.state.valid_length;
        if (selected && (selected.panel >= h || selected.row >= n || selected.col >= n)) selected = null;
        draw();
        drawShapes();
      }
      message = drawn.message || "";
      ns.setStatus(status, message, drawn.level);
      syncControls(drawn.level === "warning");
      return shown ? ns.toNested(shown.weights) : null;
    }

    function drawShapes() {
      // the spec's table (book.widgets.spec.SHAPE_ROWS): a label's pieces are text or ["sub", text]
      const { tokens, d_model, h, d_k } = shown, n = tokens.length;
      const values = { n, d_model, h, d_k, concat: h * d_k };
      const label = (pieces) => pieces.map((x) => (typeof x === "string" ? x : make(x[0], {}, x[1])));
      const rows = [
        [m.tokens, tokens.map((t) => [make("code", { className: "mha-token" }, t), " "])],
        ...spec.shapes.map(([pieces, value]) => [label(pieces), make("code", {}, ns.format(value, values))]),
      ];
      // counted by Python: sent with its arrays, with a trained model, or in the spec for a fresh layer
      const p = shown.parameters || (trained() ? model.parameters : spec.fresh_parameters[String(d_model)]);
      const fmt = (k) => k.toLocaleString("en-US");
      shapes.replaceChildren(
        make("p", {}, make("strong", {}, m.shapes), ns.format(m.shapes_for, { ...values, s: n > 1 ? "s" : "" })),
        make("table", {}, make("tbody", {}, rows.map(([name, value]) => make("tr", {}, make("th", { scope: "row" }, name), make("td", {}, value))))),
        make("p", {}, make("strong", {}, m.parameters), `: ${Object.keys(p).filter((w) => w !== "total").map((w) => `${w} ${fmt(p[w])}`).join(" + ")} = `,
          make("strong", {}, fmt(p.total))),
        make("p", { className: "mha-small" }, m.same_parameters));
    }

    /** Make every control show the state (and only offer what the state allows); while a sentence is
     * refused, the valid length of the picture still shown. */
    function syncControls(refused) {
      const s = current();
      if (refused && drawnLength !== null) s.valid_length = drawnLength;
      const choices = ns.explorerChoices(spec, ctl.state, model); // a trained model's own d_model and h
      ns.syncControls(spec, c, s, { choices, tokens: shown ? shown.tokens.length : 1 });
      c.d_model.disabled = c.h.disabled = c.seed.disabled = trained();
      c.valid_length.disabled = !spec.masks.find((k) => k.name === s.mask).cut;
      const fields = { name: model && model.name, d_model: model && model.d_model, h: model && model.h };
      note.textContent = !trained() ? m.fresh_note
        : ns.format(model.name ? m.trained_note : m.trained_note_plain, fields)
          + (model.known ? ns.format(m.trained_reads, { known: model.known }) : "");
    }

    // -- the reader's input: the controller merges a change and draws it at once, from the port; in a
    // kernel, Python's arrays replace the picture when they arrive ------------------------------------------
    c.show_numbers.addEventListener("change", () => { if (shown) draw(); });
    if (c.scale) c.scale.addEventListener("change", () => { if (shown) draw(); });

    // The read-out follows the pointer, a tap, or the keyboard on the focused picture.
    ns.heatmapReadout(el, canvas, {
      layout: () => layout, selected: () => selected, say, draw,
      select(cell) { selected = cell; draw(); },
      clear() { selected = null; draw(); },
      size: () => shown && { panels: shown.h, n: shown.tokens.length },
    });

    // -- the element's API ------------------------------------------------------------------------------
    const api = ctl.expose(el, { // update(settings) returns the drawn weights [h][n][n]
      get weights() { return shown ? ns.toNested(shown.weights) : null; },
      get tokens() { return shown ? shown.tokens.slice() : null; },
      get message() { return message; },
      /** Where the panels are, in CSS pixels of the canvas: {rects: [{x, y}], cw, ch, width, height}. */
      get layout() { return ns.layoutView(layout); },
      /** The colour scale of the panels: "shared" or "per head" (the spec's view option), or null. */
      get scale() { return c.scale ? c.scale.value : null; },
      /** Live mode: draw a payload computed by Python; returns the drawn weights [h][n][n]. */
      show,
      /** How many times the picture was drawn (a test waits for it to change). */
      get draws() { return draws; },
      /** Live: how many payloads from Python were shown (a test waits for Python's arrays). */
      get received() { return received; },
      live,
      canvas,
    });
    if (live && options.drawn && options.drawn.tokens) show(options.drawn);
    else refresh();
    return api;
  }

  ns.mountExplorer = mountExplorer;
  ns.autoMount("mha-explorer", mountExplorer);
})(globalThis);
