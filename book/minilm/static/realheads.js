/* mha front end, real heads: a pretrained encoder's attention, one head at a time, on fixed sentences
 * (static pages) or on the reader's own sentence (live mode, below).
 *
 * Needs core.js and heatmaps.js first. Nothing is computed here: the weights were computed in Python
 * (book/minilm/realheads.py, data in book/chapters/data/minilm_attention.json) and are stored 8-bit,
 * q = round(w * 255), so a weight read here is within 1/510 of the model's. A page includes it as
 *
 *   <div class="mha-realheads"><script type="application/json">{...}</script></div>
 *
 * with the JSON (in the text, "</" written "<\/"):
 *
 *   {
 *     "model": "all-MiniLM-L6-v2", "layers": 6, "heads": 12, "scale": 255,
 *     "encoding": "uint8-zlib-base64",
 *     "sentences": [{"text": "The cat sat on the mat.", "tokens": ["[CLS]", "the", ...]}, ...],
 *     "data": "<base64 of the zlib-compressed bytes>",
 *     "settings": {"sentence": 0, "layer": 0, "head": 2},     0-based indices, shown 1-based
 *     "spec": {...}         book.widgets.spec.realheads_spec(): the controls (sentence, layer, head, show
 *   }                       numbers), their choices, and the messages; controller.js mounts them
 *
 * The bytes are sentence after sentence, each layers * heads * n * n bytes in the order
 * [layer][head][query][key] (n = the sentence's number of tokens). They are inflated in the page with the
 * browser's DecompressionStream("deflate"), which works from file:// too (no fetch).
 *
 * The root element gets el.mha = {ready: Promise, settings, update(settings) -> weights [n][n] (q / 255),
 * weights, tokens, message, layout, draws, canvas, live, show}; settings are 0-based {sentence, layer,
 * head}. Token labels and sentences are drawn and inserted as text, literally.
 *
 * Live mode (options.live, set by the anywidget adapter in core.js; Python side:
 * book.minilm.realheads.EncoderExplorer): the reader TYPES the sentence, and the model runs in the kernel.
 * The config then holds no weights: {"model", "layers", "heads", "max_tokens", "spec", "settings":
 * {"sentence": "<text>", "layer": 0, "head": 2}} (sentence is the text here, not an index; the spec's
 * sentence is a text box that suggests the examples). A reader's change updates the controls and calls
 * options.onChange(settings); nothing is computed here. Python answers with el.mha.show(drawn), drawn =
 * {text, tokens, shape: [n, n], weights: float32 bytes (DataView, ArrayBuffer or typed array; n * n
 * little-endian values, the head's rows), layer, head, message, level: "" | "warning" | "error"}; a
 * drawn without weights only changes the message (the picture stays that of the last valid sentence).
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});

  /** The bytes of base64 zlib data, inflated in the page. */
  async function inflate(base64, cannot) {
    if (typeof DecompressionStream === "undefined") throw new Error(cannot);
    const packed = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    const stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream("deflate"));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }

  function mountRealHeads(el, config, options) {
    const { make } = ns;
    options = options || {};
    const live = Boolean(options.live);
    const spec = config.spec, m = spec.messages;
    const L = config.layers, H = config.heads, scale = config.scale || 255;
    const sentences = live ? [] : config.sentences;
    const offsets = []; // where each sentence's bytes start
    let total = 0;
    for (const s of sentences) {
      offsets.push(total);
      total += L * H * s.tokens.length * s.tokens.length;
    }
    let bytes = null, shown = null, selected = null, layout = null, draws = 0, received = 0, message = "", level = "";
    const ctl = ns.controller(spec, config, options, { refresh });
    const { c, status } = ctl;

    // -- the page ---------------------------------------------------------------------------------------
    el.classList.add("mha-realheads");
    el.replaceChildren();
    c.sentence.style.maxWidth = "100%";
    if (live) Object.assign(c.sentence, { maxLength: 1000, title: ns.format(m.sentence_hint, { max_tokens: config.max_tokens }) });
    ns.setStatus(status, ns.format(live ? m.waiting : m.loading, { model: config.model }), "");
    const help = make("p", { className: "mha-help", id: ns.uniqueId("mha-help") }, m.help);
    const canvas = make("canvas", { className: "mha-canvas", tabIndex: 0, role: "img", "aria-describedby": help.id });
    const readout = make("p", { className: "mha-readout", "aria-live": "polite" });
    const numbersNote = make("p", { className: "mha-note", hidden: true }); // why no numbers are printed
    const f = (name) => ns.labelled(spec, c, name);
    el.append(
      make("div", { className: "mha-controls" }, f("sentence")),
      make("div", { className: "mha-controls" }, f("layer"), f("head"), f("show_numbers")),
      numbersNote, status, make("div", { className: "mha-figure" }, canvas), readout, help);

    // -- the numbers ----------------------------------------------------------------------------------
    /** The stored weights of one head on one sentence: n rows of n values q / scale. */
    function headWeights(s, l, h) {
      const n = sentences[s].tokens.length, start = offsets[s] + (l * H + h) * n * n;
      return Array.from({ length: n }, (_, i) => Array.from(bytes.subarray(start + i * n, start + (i + 1) * n), (q) => q / scale));
    }

    function refresh() {
      ctl.sync();
      const { sentence, layer, head } = ctl.state;
      if (live) { // Python computes; another layer or head of the sentence shown is drawn at once, 8-bit
        if (!bytes || !shown || sentence !== shown.sentence || (layer === shown.layer && head === shown.head)) {
          return shown ? shown.weights.map((row) => row.slice()) : null;
        }
        shown = Object.assign({}, shown, { weights: headWeights(0, layer, head), layer, head });
      } else {
        if (!bytes) return null;
        shown = { tokens: sentences[sentence].tokens, weights: headWeights(sentence, layer, head), sentence, layer, head };
      }
      const n = shown.tokens.length;
      if (selected && (selected.row >= n || selected.col >= n)) selected = null;
      draw();
      return shown.weights.map((row) => row.slice());
    }

    function draw() {
      if (!shown) return;
      draws += 1;
      const n = shown.tokens.length;
      const maxWidth = Math.max(300, canvas.parentElement.clientWidth || el.clientWidth || 860); // the picture's own box
      const cell = Math.max(12, Math.min(40, Math.floor((maxWidth - 230) / n)));
      layout = ns.drawHeatmaps(canvas, {
        panels: [{ title: ns.format(m.panel, { layer: shown.layer + 1, head: shown.head + 1 }), values: shown.weights, mask: null }],
        rowLabels: shown.tokens, colLabels: shown.tokens, rowName: m.rows, colName: m.cols,
        lo: 0, hi: 1, cell: [cell, cell], maxWidth, maxColumns: 1,
        format: c.show_numbers.checked && cell >= spec.numbers_min ? ns.weightText : null,
        selected,
        scaleLabel: m.scale, maskKey: null,
      });
      // "show numbers" with cells too small to print in: say why (the spec's message), never do nothing
      numbersNote.hidden = !(c.show_numbers.checked && !layout.printed);
      numbersNote.textContent = numbersNote.hidden ? "" : ns.format(m.numbers_too_small, { min: spec.numbers_min, n, cell: layout.cw });
      canvas.setAttribute("aria-label", ns.format(m.picture,
        { layer: shown.layer + 1, head: shown.head + 1, model: config.model, n, tokens: shown.tokens.join(" ") }));
      describe();
      say(selected);
    }

    /** The status line: Python's message in live mode if there is one, else what the picture shows. */
    function describe() {
      if (!shown || (live && message)) {
        if (message) ns.setStatus(status, message, level);
        return;
      }
      const n = shown.tokens.length;
      ns.setStatus(status, live
        ? ns.format(m.shown_live, { model: config.model, n })
        : ns.format(m.shown, { model: config.model, sentence: shown.sentence + 1, count: sentences.length, n, scale }), "");
    }

    /** Live mode: draw what Python computed (see the header for `drawn`); returns the drawn weights [n][n]. */
    function show(drawn) {
      if (!drawn) return null;
      received += 1;
      if (drawn.tokens && drawn.weights) {
        const [n] = drawn.shape, values = ns.float32s(drawn.weights);
        if (values.length !== n * n || drawn.tokens.length !== n) {
          throw new RangeError(`drawn: shape (${drawn.shape}) does not match ${values.length} weights and ${drawn.tokens.length} tokens`);
        }
        const weights = Array.from({ length: n }, (_, i) => Array.from(values.subarray(i * n, (i + 1) * n)));
        shown = { tokens: drawn.tokens.slice(), weights, sentence: drawn.text, layer: drawn.layer, head: drawn.head };
        if (drawn.heads) { // every head of this sentence, 8-bit: a change of layer or head is drawn at once
          sentences.splice(0, sentences.length, { text: drawn.text, tokens: shown.tokens });
          offsets.splice(0, offsets.length, 0);
          bytes = ns.bytesOf(drawn.heads);
        }
        if (selected && (selected.row >= n || selected.col >= n)) selected = null;
      }
      message = drawn.message || "";
      level = drawn.level || "";
      if (drawn.tokens && drawn.weights) draw();
      else describe();
      return shown ? shown.weights.map((row) => row.slice()) : null;
    }

    /** The read-out of one cell: the head, the query and key tokens and the stored weight. */
    function say(cell) {
      if (!cell || !shown) { readout.textContent = ""; return; }
      const { row, col } = cell, t = shown.tokens, w = shown.weights[row][col];
      readout.textContent = ns.format(m.cell, { layer: shown.layer + 1, head: shown.head + 1, query: t[row], row: row + 1,
        key: t[col], col: col + 1, weight: live ? w.toFixed(4) : w.toFixed(3) })
        + (live ? "" : ns.format(m.stored, { q: Math.round(w * scale), scale }));
    }

    // -- events: the controller listens to the controls; the picture answers the pointer and the keys --
    c.show_numbers.addEventListener("change", draw);
    ns.heatmapReadout(el, canvas, { // Page Up/Down: the other heads
      layout: () => layout, selected: () => selected, say, draw,
      select(cell) { selected = cell; draw(); },
      clear() { selected = null; draw(); },
      size: () => shown && { panels: 1, n: shown.tokens.length },
      page: (step) => ctl.fromReader({ head: Math.min(H - 1, Math.max(0, ctl.state.head + step)) }),
    });

    // -- the element's API ------------------------------------------------------------------------------
    const ready = live ? Promise.resolve() : inflate(config.data, m.no_inflate).then((raw) => {
      if (raw.length !== total) throw new RangeError(`the data holds ${raw.length} weights, the sentences need ${total}`);
      bytes = raw;
      refresh();
    }).catch((error) => ns.setStatus(status, ns.format(m.load_failed, { error: error.message }), "warning"));
    const api = ctl.expose(el, { // update(settings) returns the drawn weights [n][n]
      /** Resolves once the weights are inflated and the first head is drawn. */
      ready,
      get weights() { return shown ? shown.weights.map((row) => row.slice()) : null; },
      get tokens() { return shown ? shown.tokens.slice() : null; },
      /** Live mode: Python's message to the reader (plain text; "" when all is well). */
      get message() { return message; },
      get layout() { return ns.layoutView(layout); },
      get draws() { return draws; },
      /** Live: how many answers from Python were shown. */
      get received() { return received; },
      /** Live mode: draw a payload computed by Python. */
      show,
      live,
      canvas,
    });
    ctl.sync();
    if (live) show(options.drawn);
    return api;
  }

  ns.mountRealHeads = mountRealHeads;
  ns.autoMount("mha-realheads", mountRealHeads);
})(globalThis);
