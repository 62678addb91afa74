/* Your own sentence, in the page: all-MiniLM-L6-v2 in the reader's browser (mha/widgets/minilm_page.py).
 *
 * A classic script (no modules, no build step, nothing from a CDN), so it runs from disk too; it needs core.js,
 * controller.js and heatmaps.js first, and its look is mha.css's. It mounts every
 *   <div class="mha-minilm"><script type="application/json">{spec of box_spec()}</script></div>
 * as the controller (controller.js) mounts a figure: its controls (the two sentences, the menus that switch
 * heads off), defaults and every text it shows are the spec's; this file keeps the model, the grid of 72
 * small heads and the head shown large (drawHeatmaps). The root gets a property `mha` (the controller's
 * settings and update(settings), for the two sentences, and):
 *   attend(sentence)     -> Promise<{tokens: string[], attention: number[L][h][n][n]}> (layer, head, query, key)
 *   embed(sentence, {off}) -> Promise<number[d_model]>, the normalised sentence embedding with the heads of
 *                           `off`, [layer, head] pairs counted from 0, switched off (zeroed before W_o)
 *   tokenize(sentence)   -> Promise<{tokens, ids, truncated, total}>
 *   load()               -> Promise, resolved once the model is in the worker
 *   refresh()            -> Promise: run the model on the box's sentences, as the Run button does
 *   off                  the heads switched off, [layer, head] pairs (settable)
 *
 * The weights (minilm-weights.js, float16 in base64, written at build time) are a classic script inserted
 * only on first use; its data goes, as transferable ArrayBuffers, to a Web Worker built from a Blob URL (a
 * worker from a file does not start from file://). The worker holds the tokenizer (BertNormalizer,
 * BertPreTokenizer, WordPiece: as `tokenizers` does for this model) and the forward pass, a port of
 * mha.pretrained.MiniLMEncoder: embeddings + LayerNorm, then 6 post-LayerNorm layers of 12-head attention
 * and an erf-GELU feed-forward block; mean pooling over the tokens and L2 normalisation.
 *
 * In a live kernel the same box is an anywidget (mha.widgets.minilm_page.MiniLMWidget): `export default
 * globalThis.mhaMiniLM.anywidget`, and Python answers the requests the worker would (see `anywidget` below).
 *
 * Shape legend: n tokens, d_model 384, h 12 heads, d_k 32, d_ff 1536, L 6 layers.
 */
(function () {
  "use strict";
  const ns = globalThis.mhaFrontEnd; // core.js, controller.js and heatmaps.js, loaded before this file

  // ---- the worker: tokenizer and forward pass (its source is this function's text) ----------------------
  function workerMain(scope) {
    let model = null; // {vocab: Map, itos, config, max_tokens, W: {name: Float32Array}}

    // float16 bits -> float32, through a table of all 65536 values
    const HALF = new Float32Array(65536);
    for (let b = 0; b < 65536; b++) {
      const s = b & 0x8000 ? -1 : 1, e = (b >> 10) & 0x1f, m = b & 0x3ff;
      HALF[b] = e === 0 ? s * m * Math.pow(2, -24) : e === 31 ? (m ? NaN : s * Infinity)
        : s * (1 + m / 1024) * Math.pow(2, e - 15);
    }
    function fromHalf(buffer) {
      const bits = new Uint16Array(buffer), out = new Float32Array(bits.length);
      for (let i = 0; i < bits.length; i++) out[i] = HALF[bits[i]];
      return out;
    }

    // -- tokenizer: tokenizers' BertNormalizer (clean text, Chinese characters, strip accents, lower case),
    //    BertPreTokenizer (whitespace, punctuation) and WordPiece (greedy longest match, "##", [UNK])
    const CONTROL = /[\p{Cc}\p{Cf}\p{Co}]/u, SPACE = /\s/u, MARK = /\p{Mn}/u, PUNCT = /\p{P}/u;
    const ASCII_PUNCT = new Set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~");
    function isChinese(cp) {
      return (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0x3400 && cp <= 0x4dbf) || (cp >= 0x20000 && cp <= 0x2a6df)
        || (cp >= 0x2a700 && cp <= 0x2b73f) || (cp >= 0x2b740 && cp <= 0x2b81f) || (cp >= 0x2b920 && cp <= 0x2ceaf)
        || (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0x2f800 && cp <= 0x2fa1f);
    }
    function normalize(text) {
      let out = "";
      for (const c of text) {
        const cp = c.codePointAt(0);
        if (cp === 0 || cp === 0xfffd || (CONTROL.test(c) && c !== "\t" && c !== "\n" && c !== "\r")) continue;
        if (SPACE.test(c)) out += " ";
        else if (isChinese(cp)) out += " " + c + " ";
        else out += c;
      }
      let stripped = "";
      for (const c of out.normalize("NFD")) if (!MARK.test(c)) stripped += c;
      let lower = "";
      for (const c of stripped) lower += c.toLowerCase(); // per character, as Rust's char::to_lowercase
      return lower;
    }
    function preTokenize(text) {
      const words = [];
      let word = "";
      for (const c of text) {
        if (SPACE.test(c)) {
          if (word) words.push(word);
          word = "";
        } else if (ASCII_PUNCT.has(c) || PUNCT.test(c)) {
          if (word) words.push(word);
          words.push(c);
          word = "";
        } else word += c;
      }
      if (word) words.push(word);
      return words;
    }
    function wordPiece(word, vocab) {
      const chars = Array.from(word);
      if (chars.length > 100) return ["[UNK]"];
      const pieces = [];
      let start = 0;
      while (start < chars.length) {
        let end = chars.length, found = null;
        while (start < end) {
          const piece = (start > 0 ? "##" : "") + chars.slice(start, end).join("");
          if (vocab.has(piece)) { found = piece; break; }
          end--;
        }
        if (found === null) return ["[UNK]"];
        pieces.push(found);
        start = end;
      }
      return pieces;
    }
    function tokenize(text) {
      const words = preTokenize(normalize(text));
      let pieces = [];
      const unknown = [];
      for (const w of words) {
        const p = wordPiece(w, model.vocab);
        if (p[0] === "[UNK]") unknown.push(w);
        pieces = pieces.concat(p);
      }
      const total = pieces.length + 2, keep = model.max_tokens - 2;
      const tokens = ["[CLS]"].concat(pieces.slice(0, keep), ["[SEP]"]);
      return { tokens, ids: tokens.map((t) => model.vocab.get(t)), truncated: total > model.max_tokens, total,
        unknown };
    }

    // -- the forward pass
    function linear(x, n, W, b, dIn, dOut) { // x (n, dIn) @ W^T (dIn, dOut) + b -> (n, dOut); W is (dOut, dIn)
      const y = new Float32Array(n * dOut);
      for (let o = 0; o < dOut; o++) {
        const wo = o * dIn, bias = b[o];
        let i = 0;
        for (; i + 3 < n; i += 4) { // four rows at once: each weight row is read once per four tokens
          const x0 = i * dIn, x1 = x0 + dIn, x2 = x1 + dIn, x3 = x2 + dIn;
          let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
          for (let k = 0; k < dIn; k++) {
            const w = W[wo + k];
            s0 += x[x0 + k] * w; s1 += x[x1 + k] * w; s2 += x[x2 + k] * w; s3 += x[x3 + k] * w;
          }
          y[i * dOut + o] = s0 + bias; y[(i + 1) * dOut + o] = s1 + bias;
          y[(i + 2) * dOut + o] = s2 + bias; y[(i + 3) * dOut + o] = s3 + bias;
        }
        for (; i < n; i++) {
          const xi = i * dIn;
          let s = 0;
          for (let k = 0; k < dIn; k++) s += x[xi + k] * W[wo + k];
          y[i * dOut + o] = s + bias;
        }
      }
      return y;
    }
    function layerNorm(x, n, d, g, b, eps) { // in place, over the last axis of (n, d)
      for (let i = 0; i < n; i++) {
        const r = i * d;
        let mean = 0, v = 0;
        for (let k = 0; k < d; k++) mean += x[r + k];
        mean /= d;
        for (let k = 0; k < d; k++) { const c = x[r + k] - mean; v += c * c; }
        const inv = 1 / Math.sqrt(v / d + eps);
        for (let k = 0; k < d; k++) x[r + k] = (x[r + k] - mean) * inv * g[k] + b[k];
      }
      return x;
    }
    function erf(x) { // Numerical Recipes' erfc (Chebyshev fit), fractional error below 1.2e-7
      const z = Math.abs(x), t = 1 / (1 + 0.5 * z);
      const r = t * Math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418
        + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587
        + t * (-0.82215223 + t * 0.17087277)))))))));
      return x >= 0 ? 1 - r : r - 1;
    }
    function forward(ids, off, wantAttention) {
      const W = model.W, c = model.config, n = ids.length, d = c.d_model, h = c.h, dk = d / h, dff = c.d_ff;
      const x = new Float32Array(n * d); // (n, d_model): word + position + segment A, then LayerNorm
      const we = W["word_embeddings.weight"], pe = W["position_embeddings.weight"];
      const te = W["token_type_embeddings.weight"];
      for (let i = 0; i < n; i++) {
        for (let k = 0; k < d; k++) x[i * d + k] = we[ids[i] * d + k] + pe[i * d + k] + te[k];
      }
      layerNorm(x, n, d, W["embedding_norm.weight"], W["embedding_norm.bias"], c.eps);
      const attention = [], scale = 1 / Math.sqrt(dk);
      let hid = x;
      for (let l = 0; l < c.layers; l++) {
        const p = "layers." + l + ".";
        const q = linear(hid, n, W[p + "attn.W_q.weight"], W[p + "attn.W_q.bias"], d, d); // (n, h * d_k)
        const k = linear(hid, n, W[p + "attn.W_k.weight"], W[p + "attn.W_k.bias"], d, d); // (n, h * d_k)
        const v = linear(hid, n, W[p + "attn.W_v.weight"], W[p + "attn.W_v.bias"], d, d); // (n, h * d_k)
        const concat = new Float32Array(n * d); // (n, h * d_k): the heads side by side, as W_o sees them
        const heads = [];
        for (let hh = 0; hh < h; hh++) {
          const o = hh * dk, rows = [];
          const isOff = off.has(l * h + hh);
          for (let i = 0; i < n; i++) {
            const s = new Float64Array(n); // (n_k,) scores of query i
            let max = -Infinity;
            for (let j = 0; j < n; j++) {
              let a = 0;
              for (let t = 0; t < dk; t++) a += q[i * d + o + t] * k[j * d + o + t];
              s[j] = a * scale;
              if (s[j] > max) max = s[j];
            }
            let sum = 0;
            for (let j = 0; j < n; j++) { s[j] = Math.exp(s[j] - max); sum += s[j]; }
            for (let j = 0; j < n; j++) s[j] /= sum; // softmax over the keys
            if (!isOff) { // head output: weights @ V, (n_k,) @ (n_k, d_k) -> (d_k,); an off head stays 0
              for (let j = 0; j < n; j++) {
                const wj = s[j];
                for (let t = 0; t < dk; t++) concat[i * d + o + t] += wj * v[j * d + o + t];
              }
            }
            if (wantAttention) rows.push(Array.from(s));
          }
          if (wantAttention) heads.push(rows);
        }
        if (wantAttention) attention.push(heads);
        const a = linear(concat, n, W[p + "attn.W_o.weight"], W[p + "attn.W_o.bias"], d, d); // (n, d_model)
        for (let t = 0; t < n * d; t++) a[t] += hid[t];
        layerNorm(a, n, d, W[p + "norm_1.weight"], W[p + "norm_1.bias"], c.eps); // x = LN(x + MultiHead(x))
        const f = linear(a, n, W[p + "W_1.weight"], W[p + "W_1.bias"], d, dff); // (n, d_ff)
        for (let t = 0; t < f.length; t++) f[t] = 0.5 * f[t] * (1 + erf(f[t] / Math.SQRT2)); // exact GELU
        const y = linear(f, n, W[p + "W_2.weight"], W[p + "W_2.bias"], dff, d); // (n, d_model)
        for (let t = 0; t < n * d; t++) y[t] += a[t];
        hid = layerNorm(y, n, d, W[p + "norm_2.weight"], W[p + "norm_2.bias"], c.eps); // LN(x + FFN(x))
      }
      const mean = new Float64Array(d); // (d_model,): mean over the tokens, then L2-normalised
      for (let i = 0; i < n; i++) for (let t = 0; t < d; t++) mean[t] += hid[i * d + t] / n;
      let norm = 0;
      for (let t = 0; t < d; t++) norm += mean[t] * mean[t];
      norm = Math.max(Math.sqrt(norm), 1e-12);
      return { attention, embedding: Array.from(mean, (m) => m / norm) };
    }

    scope.onmessage = (event) => {
      const m = event.data;
      try {
        if (m.type === "init") {
          const W = {};
          for (const name in m.tensors) W[name] = fromHalf(m.tensors[name]);
          model = { vocab: new Map(m.vocab.map((t, i) => [t, i])), config: m.config, max_tokens: m.max_tokens, W };
          scope.postMessage({ id: m.id, result: true });
          return;
        }
        const tok = tokenize(m.sentence);
        const result = { tokens: tok.tokens, truncated: tok.truncated, total: tok.total, unknown: tok.unknown };
        if (m.type === "tokenize") result.ids = tok.ids;
        else {
          const off = new Set((m.off || []).map((p) => p[0] * model.config.h + p[1]));
          const run = forward(tok.ids, off, m.type === "attend");
          if (m.type === "attend") result.attention = run.attention;
          result.embedding = run.embedding;
        }
        scope.postMessage({ id: m.id, result });
      } catch (error) {
        scope.postMessage({ id: m.id, error: String((error && error.message) || error) });
      }
    };
  }

  // ---- loading: the weights script on first use, then the worker ------------------------------------------
  const here = document.currentScript && document.currentScript.src; // the URL of this file
  let model = null; // one Promise<worker client> per page

  function base64Bytes(text) {
    if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(text);
    const raw = atob(text), bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    return bytes;
  }

  function loadModel(spec) {
    if (model) return model;
    const M = spec.messages;
    model = new Promise((resolve, reject) => {
      if (typeof Worker !== "function") return reject(new Error(M.no_worker));
      const started = performance.now();
      const script = document.createElement("script");
      globalThis[spec.callback] = (data) => {
        delete globalThis[spec.callback];
        script.remove();
        if (data.format !== spec.format) {
          return reject(new Error(ns.format(M.bad_format, { got: data.format, expected: spec.format })));
        }
        const tensors = {}, buffers = [];
        for (const name in data.tensors) {
          const bytes = base64Bytes(data.tensors[name].data);
          tensors[name] = bytes.buffer;
          buffers.push(bytes.buffer);
        }
        const source = "(" + workerMain.toString() + ")(self);";
        const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
        const worker = new Worker(url);
        URL.revokeObjectURL(url);
        const pending = new Map();
        let next = 0;
        const call = (message, transfer) => new Promise((ok, fail) => {
          const id = next++;
          pending.set(id, { ok, fail });
          worker.postMessage({ ...message, id }, transfer || []);
        });
        worker.onmessage = (event) => {
          const { id, result, error } = event.data, p = pending.get(id);
          pending.delete(id);
          if (error !== undefined) p.fail(new Error(error));
          else p.ok(result);
        };
        worker.onerror = (event) => reject(new Error(event.message || M.worker_failed));
        call({ type: "init", tensors, vocab: data.vocab, config: data.config, max_tokens: data.max_tokens }, buffers)
          .then(() => resolve({ call, loadMs: performance.now() - started }), reject);
      };
      script.onerror = () => reject(new Error(ns.format(M.no_weights, { file: spec.weights })));
      script.src = here ? new URL(spec.weights, here).href : spec.weights;
      document.head.appendChild(script);
    });
    model.catch(() => { model = null; }); // a later use tries again
    return model;
  }

  // ---- the box: mounted from its spec by the controller (controller.js); it keeps only its drawing ----------
  function dot(a, b) { let s = 0; for (let i = 0; i < a.length; i++) s += a[i] * b[i]; return s; }

  let scratch = null; // one pixel per cell, scaled up onto a thumbnail
  /** One head's weights (n, n) into a 48 px thumbnail, in the heatmaps' colours; a cross if it is off. */
  function drawThumb(canvas, weights, off) {
    const n = weights.length, image = new ImageData(n, n), size = canvas.width, ctx = canvas.getContext("2d");
    weights.forEach((row, i) => row.forEach((w, j) => {
      image.data.set(ns.colour(w).rgb, 4 * (i * n + j));
      image.data[4 * (i * n + j) + 3] = 255;
    }));
    scratch = scratch || document.createElement("canvas");
    scratch.width = scratch.height = n;
    scratch.getContext("2d").putImageData(image, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(scratch, 0, 0, size, size);
    if (!off) return;
    ctx.strokeStyle = "rgb(200,40,40)";
    ctx.lineWidth = size / 16;
    ctx.beginPath(); ctx.moveTo(0, 0); ctx.lineTo(size, size); ctx.moveTo(size, 0); ctx.lineTo(0, size);
    ctx.stroke();
  }

  // backend: {call(message) -> Promise<result>} that computes instead of the worker (a live kernel's Python,
  // see `anywidget` below); spec: the box's spec, if not inline in `root`.
  function mount(root, backend, givenSpec) {
    if (root.mha) return root.mha;
    const spec = givenSpec || ns.readConfig(root);
    const getModel = () => (backend ? Promise.resolve(backend) : loadModel(spec));
    const L = spec.layers, H = spec.heads, M = spec.messages, { make, format } = ns;
    const state = { shown: [0, 0], off: new Set(), result: null, loaded: Boolean(backend), ticket: 0, cell: null };
    let layout = null;
    // the controls (the sentences, the menus that switch heads off) and the status line, from the spec
    const ctl = ns.controller(spec, {}, {}, { refresh() { ctl.sync(); return ctl.settings(); } });
    const { c, status } = ctl;
    const say = (text, level) => ns.setStatus(status, text, level || "");
    const button = (name, text) => make("button", { type: "button", name, className: "mha-button" }, text);
    const run = button("run", M.run), toggle = button("toggle", ""), reset = button("reset", M.reset);
    const grid = make("div", { className: "mm-grid", role: "group", "aria-label": M.grid }, make("span"));
    for (let hh = 0; hh < H; hh++) grid.append(make("span", {}, String(hh + 1)));
    const thumbs = Array.from({ length: L }, (_, l) => {
      grid.append(make("span", {}, format(M.grid_layer, { layer: l + 1 })));
      return Array.from({ length: H }, (_, hh) => {
        const thumb = make("canvas", { width: 48, height: 48, "data-layer": l, "data-head": hh,
          title: format(M.thumb, { layer: l + 1, head: hh + 1, pattern: spec.labels[l][hh] }) });
        thumb.addEventListener("click", () => { state.shown = [l, hh]; state.cell = null; draw(); });
        grid.append(thumb);
        return thumb;
      });
    });
    const bigTitle = make("p", { className: "mm-big-title" });
    const big = make("canvas", { className: "mha-canvas", tabIndex: 0, role: "img" });
    const cellOut = make("p", { className: "mha-readout", "aria-live": "polite" });
    const readout = make("p", { className: "mm-readout", "aria-live": "polite" });
    root.querySelectorAll(".mm-fallback").forEach((e) => e.remove()); // for pages that run no scripts
    root.classList.add("mm-mounted");
    root.append(
      make("div", { className: "mha-controls" }, ns.labelled(spec, c, "sentence")),
      make("div", { className: "mha-controls" }, ns.labelled(spec, c, "other"), run),
      status, grid,
      make("div", { className: "mha-controls" }, toggle, ns.labelled(spec, c, "layer_off"),
        ns.labelled(spec, c, "pattern_off"), reset),
      readout, bigTitle, make("div", { className: "mha-figure" }, big), cellOut);
    const picture = root.querySelector(".mm-print"); // the static picture, for print: after the controls
    if (picture) root.appendChild(picture);
    ctl.sync();
    say(M.idle);

    const key = (l, hh) => l * H + hh;
    const offList = () => [...state.off].sort((a, b) => a - b).map((i) => [Math.floor(i / H), i % H]);

    function draw() {
      const [l, hh] = state.shown;
      toggle.textContent = format(state.off.has(key(l, hh)) ? M.toggle_on : M.toggle_off, { layer: l + 1, head: hh + 1 });
      thumbs.forEach((row, a) => row.forEach((thumb, b) => {
        const off = state.off.has(key(a, b));
        thumb.classList.toggle("mm-shown", a === l && b === hh);
        thumb.classList.toggle("mm-off", off);
        if (state.result) drawThumb(thumb, state.result.attention[a][b], off);
      }));
      drawBig();
    }

    /** The head shown large: drawHeatmaps (heatmaps.js), with its tokens, colour bar and read-out. */
    function drawBig() {
      const r = state.result;
      if (!r) return;
      const [l, hh] = state.shown, head = { layer: l + 1, head: hh + 1 }, n = r.tokens.length;
      bigTitle.textContent = format(M.big, { ...head, pattern: spec.labels[l][hh],
        switched: state.off.has(key(l, hh)) ? M.big_switched : "",
        others: state.off.size ? format(M.big_others, { k: state.off.size }) : "" });
      layout = ns.drawHeatmaps(big, {
        panels: [{ title: format(M.panel, head), values: r.attention[l][hh], mask: null }],
        rowLabels: r.tokens, colLabels: r.tokens, rowName: M.rows, colName: M.cols,
        lo: 0, hi: 1, cell: [26, 26], maxWidth: Math.max(300, big.parentElement.clientWidth || 720), maxColumns: 1,
        format: null, selected: state.cell && { panel: 0, ...state.cell }, scaleLabel: M.scale, maskKey: false,
      });
      big.setAttribute("aria-label", format(M.big_label, { ...head, n }));
      tell(state.cell);
    }

    /** The read-out of one cell of the large head (pointed at, tapped or reached with the arrow keys). */
    function tell(cell) {
      const r = state.result, [l, hh] = state.shown;
      cellOut.textContent = !cell || !r ? "" : format(M.cell, { layer: l + 1, head: hh + 1,
        query: r.tokens[cell.row], row: cell.row + 1, key: r.tokens[cell.col], col: cell.col + 1,
        weight: r.attention[l][hh][cell.row][cell.col].toFixed(3) });
    }
    ns.heatmapReadout(root, big, { // pointer, tap and arrow keys (Page Up/Down: the next head of the layer)
      layout: () => layout, selected: () => state.cell, say: tell, draw: drawBig,
      select(cell) { state.cell = { row: cell.row, col: cell.col }; drawBig(); },
      size: () => state.result && { panels: 1, n: state.result.tokens.length },
      page(step) { state.shown = [state.shown[0], (state.shown[1] + step + H) % H]; draw(); },
    });

    function readOut(values, k) {
      const total = L * H, fixed = (v) => v.toFixed(3);
      const pair = Number.isNaN(values.sim0) ? ""
        : k === 0 ? format(M.pair, { sim: fixed(values.sim0) }) : format(M.pair_off, { sim: fixed(values.sim), sim0: fixed(values.sim0) });
      readout.textContent = (k === 0 ? format(M.all_on, { total }) : format(M.some_off, { k, total, cos: fixed(values.cos) })) + pair;
    }

    async function refresh() {
      let text = ctl.state.sentence;
      const notes = [];
      if (!text.trim()) { state.ticket++; say(M.empty, "warning"); return; }
      if (text.length > spec.max_chars) {
        notes.push(format(M.too_long, { chars: spec.max_chars, cut: text.length - spec.max_chars }));
        text = text.slice(0, spec.max_chars);
      }
      const second = ctl.state.other.slice(0, spec.max_chars);
      const ticket = ++state.ticket; // only the latest run draws: the reader may click while one runs
      try {
        if (!state.loaded) say(M.loading);
        const m = await getModel();
        state.loaded = true;
        say(M.running);
        const off = offList();
        const r = await m.call({ type: "attend", sentence: text, off });
        if (r.truncated) notes.push(format(M.truncated, { n: r.total, max: spec.max_tokens }));
        if (r.unknown.length) notes.push(format(M.unknown, { k: r.unknown.length, words: r.unknown }));
        const intact = off.length ? (await m.call({ type: "embed", sentence: text, off: [] })).embedding : r.embedding;
        let sim0 = NaN, sim = NaN;
        if (second.trim()) {
          const b0 = await m.call({ type: "embed", sentence: second, off: [] });
          const b = off.length ? await m.call({ type: "embed", sentence: second, off }) : b0;
          sim0 = dot(intact, b0.embedding); sim = dot(r.embedding, b.embedding);
        }
        if (ticket !== state.ticket) return;
        if (!state.result || state.result.tokens.length !== r.tokens.length) state.cell = null;
        state.result = r;
        say(notes.join(" ") || format(M.shown, { n: r.tokens.length }), notes.length ? "warning" : "");
        draw();
        readOut({ cos: dot(intact, r.embedding), sim, sim0 }, off.length);
      } catch (error) {
        if (ticket === state.ticket) say(format(M.failed, { error: error.message }), "error");
        if (!state.loaded) root.classList.add("mm-failed"); // no model here (a deck, say): the static picture
      }
    }

    const change = (fn) => () => { fn(); draw(); if (state.loaded) refresh(); };
    run.addEventListener("click", () => refresh());
    for (const name of ["sentence", "other"]) {
      c[name].addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); refresh(); } });
    }
    toggle.addEventListener("click", change(() => {
      const i = key(...state.shown);
      if (state.off.has(i)) state.off.delete(i); else state.off.add(i);
    }));
    c.layer_off.addEventListener("change", change(() => {
      if (c.layer_off.value !== "") for (let hh = 0; hh < H; hh++) state.off.add(key(Number(c.layer_off.value), hh));
      c.layer_off.value = "";
    }));
    c.pattern_off.addEventListener("change", change(() => {
      for (let l = 0; l < L; l++) for (let hh = 0; hh < H; hh++) {
        if (spec.labels[l][hh] === c.pattern_off.value) state.off.add(key(l, hh));
      }
      c.pattern_off.value = "";
    }));
    reset.addEventListener("click", change(() => state.off.clear()));
    draw();

    const api = (type) => async (text, options) => {
      if (typeof text !== "string") throw new TypeError(format(M.invalid.text, { name: "sentence", value: JSON.stringify(text) }));
      const m = await getModel();
      state.loaded = true;
      return m.call({ type, sentence: text, off: (options && options.off) || [] });
    };
    return ctl.expose(root, { // and settings, update(settings): the two sentences
      spec,
      load: async () => { const m = await getModel(); state.loaded = true; return { loadMs: m.loadMs }; },
      tokenize: api("tokenize"),
      attend: async (text) => { const r = await api("attend")(text); return { tokens: r.tokens, attention: r.attention }; },
      embed: async (text, options) => (await api("embed")(text, options)).embedding,
      refresh,
      get off() { return offList(); },
      set off(pairs) { state.off = new Set(pairs.map(([l, hh]) => key(l, hh))); draw(); },
      canvas: big,
      get layout() { return layout && { width: layout.width, height: layout.height, boxes: layout.boxes, cw: layout.cw }; },
    });
  }

  function mountAll() { document.querySelectorAll(".mha-minilm").forEach((root) => mount(root)); }

  // In a live kernel (mha.widgets.minilm_page.MiniLMWidget): the same box, computed by Python. Each request
  // goes to Python as a custom message {id, type, sentence, off}; the reply is {id, result} (the attention as
  // float32 bytes in buffers[0], of shape result.attention_shape) or {id, error}.
  function toNested(buffer, shape) { // float32 little-endian bytes -> nested arrays of `shape`
    const flat = ns.float32s(buffer);
    const build = (axis, offset) => {
      if (axis === shape.length - 1) return Array.from(flat.subarray(offset, offset + shape[axis]));
      const stride = shape.slice(axis + 1).reduce((a, b) => a * b, 1), out = [];
      for (let i = 0; i < shape[axis]; i++) out.push(build(axis + 1, offset + i * stride));
      return out;
    };
    return build(0, 0);
  }
  const anywidget = {
    render({ model, el }) {
      const root = ns.make("div", { className: "mha-minilm" });
      el.appendChild(root);
      const pending = new Map();
      let next = 0;
      const onMessage = (message, buffers) => {
        const p = pending.get(message && message.id);
        if (!p) return;
        pending.delete(message.id);
        if (message.error !== undefined) return p.fail(new Error(message.error));
        const result = message.result;
        if (result.attention_shape) result.attention = toNested(buffers[0], result.attention_shape);
        p.ok(result);
      };
      model.on("msg:custom", onMessage);
      const backend = {
        loadMs: 0,
        call: (message) => new Promise((ok, fail) => {
          const id = next++;
          pending.set(id, { ok, fail });
          model.send({ ...message, id });
        }),
      };
      mount(root, backend, model.get("spec"));
      return () => model.off("msg:custom", onMessage);
    },
  };

  if (document.currentScript) { // a classic script of the site: mount the page's boxes (not as a module)
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
    else mountAll();
  }
  ns.mountMiniLM = mount;
  globalThis.mhaMiniLM = { mount, mountAll, anywidget };
})();
