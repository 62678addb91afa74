/* Your own sentence, in the page: all-MiniLM-L6-v2 in the reader's browser (mha/widgets/minilm_page.py).
 *
 * A classic script (no modules, no build step, nothing from a CDN), so it runs from disk too. It mounts every
 *   <div class="mha-minilm"><script type="application/json">{spec of box_spec()}</script></div>
 * and gives the root a property `mha`:
 *   attend(sentence)     -> Promise<{tokens: string[], attention: number[L][h][n][n]}> (layer, head, query, key)
 *   embed(sentence, {off}) -> Promise<number[d_model]>, the normalised sentence embedding with the heads of
 *                           `off`, [layer, head] pairs counted from 0, switched off (zeroed before W_o)
 *   tokenize(sentence)   -> Promise<{tokens, ids, truncated, total}>
 *   load()               -> Promise, resolved once the model is in the worker
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
    model = new Promise((resolve, reject) => {
      if (typeof Worker !== "function") return reject(new Error(spec.messages.no_worker));
      const started = performance.now();
      const script = document.createElement("script");
      globalThis[spec.callback] = (data) => {
        delete globalThis[spec.callback];
        script.remove();
        if (data.format !== spec.format) return reject(new Error("weights in format " + data.format));
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
        worker.onerror = (event) => reject(new Error(event.message || "the worker failed"));
        call({ type: "init", tensors, vocab: data.vocab, config: data.config, max_tokens: data.max_tokens }, buffers)
          .then(() => resolve({ call, loadMs: performance.now() - started }), reject);
      };
      script.onerror = () => reject(new Error("could not load " + spec.weights));
      script.src = here ? new URL(spec.weights, here).href : spec.weights;
      document.head.appendChild(script);
    });
    model.catch(() => { model = null; }); // a later use tries again
    return model;
  }

  // ---- the box -------------------------------------------------------------------------------------------
  // Colours come from the page (currentColor, translucent greys), as in mha.css, so that the theme's light
  // and dark modes (and a notebook output's own background) both read well.
  const STYLE = `
.mha-minilm { border: 1px solid rgba(128,128,128,.45); border-radius: 6px; padding: .75em; margin: 1em 0;
  font-size: .9rem; }
.mha-minilm .mm-row { display: flex; flex-wrap: wrap; gap: .5em; align-items: center; margin: .35em 0; }
.mha-minilm textarea, .mha-minilm input[type=text] { flex: 1 1 16em; min-width: 0; font: inherit; padding: .3em;
  color: inherit; background: rgba(128,128,128,.12); border: 1px solid rgba(128,128,128,.45); border-radius: 4px; }
.mha-minilm button, .mha-minilm select { font: inherit; color: inherit; padding: .2em .5em; border-radius: 4px;
  background: rgba(128,128,128,.12); border: 1px solid rgba(128,128,128,.45); max-width: 100%; cursor: pointer; }
.mha-minilm select option { color: initial; background: initial; }
.mha-minilm :focus-visible { outline: 2px solid var(--pst-color-primary, #1a73e8); }
.mha-minilm .mm-status { min-height: 1.4em; }
.mha-minilm .mm-status[data-level=warning] { color: #9a5b00; }
.mha-minilm .mm-status[data-level=error] { color: #c62828; }
.mha-minilm .mm-grid { display: grid; grid-template-columns: 3.2em repeat(12, minmax(0, 1fr)); gap: 2px;
  max-width: 36em; }
.mha-minilm .mm-grid canvas { width: 100%; aspect-ratio: 1; cursor: pointer; display: block;
  border: 2px solid rgba(128,128,128,.2); box-sizing: border-box; }
.mha-minilm .mm-grid canvas.mm-shown { border-color: var(--pst-color-primary, #1a73e8); }
.mha-minilm .mm-grid canvas.mm-off { opacity: .45; }
.mha-minilm .mm-grid span { font-size: .75em; align-self: center; }
.mha-minilm .mm-big { max-width: 100%; overflow-x: auto; }
.mha-minilm .mm-big canvas { display: block; }
.mha-minilm .mm-readout { font-variant-numeric: tabular-nums; font-weight: 600; }
.mha-minilm .mm-print { display: none; }
.mha-minilm.mm-failed .mm-print { display: block; max-width: 100%; }
.mha-minilm.mm-failed .mm-grid, .mha-minilm.mm-failed .mm-big { display: none; }
@media print {
  .mha-minilm > :not(.mm-print) { display: none; }
  .mha-minilm .mm-print { display: block; max-width: 100%; }
}
`;

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) {
      if (k === "text") e.textContent = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    for (const c of children) e.appendChild(c);
    return e;
  }
  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, (m, k) => (k in values ? String(values[k]) : m));
  }
  function dot(a, b) { let s = 0; for (let i = 0; i < a.length; i++) s += a[i] * b[i]; return s; }

  function ink(root) { // the page's text colour, for drawing on canvases in light and dark mode
    const c = getComputedStyle(root).color.match(/\d+(\.\d+)?/g) || [0, 0, 0];
    return c.slice(0, 3).map(Number);
  }
  function drawHead(canvas, weights, size, color, off) { // weights (n, n) into a size x size square
    const n = weights.length, ctx = canvas.getContext("2d"), cell = size / n;
    ctx.clearRect(0, 0, size, size);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        ctx.fillStyle = `rgba(${color[0]},${color[1]},${color[2]},${weights[i][j].toFixed(3)})`;
        ctx.fillRect(j * cell, i * cell, Math.ceil(cell), Math.ceil(cell));
      }
    }
    if (off) {
      ctx.strokeStyle = "rgb(200,40,40)";
      ctx.lineWidth = Math.max(1, size / 16);
      ctx.beginPath(); ctx.moveTo(0, 0); ctx.lineTo(size, size); ctx.moveTo(size, 0); ctx.lineTo(0, size);
      ctx.stroke();
    }
  }

  // backend: {call(message) -> Promise<result>} that computes instead of the worker (a live kernel's Python,
  // see `anywidget` below); spec: the box's spec, if not inline in `root`.
  function mount(root, backend, givenSpec) {
    if (root.mha) return;
    const spec = givenSpec || JSON.parse(root.querySelector("script[type='application/json']").textContent);
    const getModel = () => (backend ? Promise.resolve(backend) : loadModel(spec));
    const L = spec.layers, H = spec.heads, M = spec.messages;
    root.querySelectorAll(".mm-fallback").forEach((e) => e.remove()); // for pages that run no scripts
    if (!document.getElementById("mha-minilm-style")) {
      document.head.appendChild(el("style", { id: "mha-minilm-style", text: STYLE }));
    }
    const heatColor = [37, 99, 235];
    const sentence = el("textarea", { name: "sentence", rows: "2", "aria-label": "Your sentence" });
    sentence.value = spec.sentence;
    const other = el("input", { type: "text", name: "other", "aria-label": "A second sentence to compare" });
    other.value = spec.other;
    const run = el("button", { type: "button", name: "run", text: "Run" });
    const status = el("div", { class: "mm-status", role: "status", "aria-live": "polite", text: M.idle });
    const grid = el("div", { class: "mm-grid", role: "group", "aria-label": "All heads, layers down, heads across" });
    const thumbs = [];
    grid.appendChild(el("span"));
    for (let hh = 0; hh < H; hh++) grid.appendChild(el("span", { text: String(hh + 1) }));
    for (let l = 0; l < L; l++) {
      grid.appendChild(el("span", { text: "layer " + (l + 1) }));
      thumbs.push([]);
      for (let hh = 0; hh < H; hh++) {
        const c = el("canvas", { width: "48", height: "48", title: `layer ${l + 1}, head ${hh + 1}: ` + spec.labels[l][hh],
          "data-layer": String(l), "data-head": String(hh) });
        c.addEventListener("click", () => { state.shown = [l, hh]; draw(); });
        grid.appendChild(c);
        thumbs[l].push(c);
      }
    }
    const bigTitle = el("div", { class: "mm-big-title" });
    const big = el("canvas", { width: "10", height: "10" });
    const toggle = el("button", { type: "button", name: "toggle" });
    const layerSelect = el("select", { name: "layer_off", "aria-label": "Switch off a layer's heads" },
      el("option", { value: "", text: "Switch off all heads of a layer…" }),
      ...Array.from({ length: L }, (_, l) => el("option", { value: String(l), text: "layer " + (l + 1) })));
    const patternSelect = el("select", { name: "pattern_off", "aria-label": "Switch off the heads of a pattern" },
      el("option", { value: "", text: "Switch off the heads that…" }),
      ...spec.patterns.map(([p, name]) => {
        const k = spec.labels.flat().filter((x) => x === p).length;
        return el("option", { value: p, text: `${name} (${k})` });
      }));
    const reset = el("button", { type: "button", name: "reset", text: "All heads on" });
    const readout = el("div", { class: "mm-readout", "aria-live": "polite" });
    root.append(
      el("div", { class: "mm-row" }, el("label", { text: "Your sentence" }), sentence),
      el("div", { class: "mm-row" }, el("label", { text: "Compare with" }), other, run),
      status, grid,
      el("div", { class: "mm-row" }, toggle, layerSelect, patternSelect, reset),
      readout, bigTitle, el("div", { class: "mm-big" }, big));
    const picture = root.querySelector(".mm-print"); // the static picture, for print: after the controls
    if (picture) root.appendChild(picture);

    const state = { shown: [0, 0], off: new Set(), result: null, loaded: Boolean(backend), ticket: 0 };
    const key = (l, hh) => l * H + hh;
    const offList = () => [...state.off].sort((a, b) => a - b).map((i) => [Math.floor(i / H), i % H]);

    function say(text, level) { status.textContent = text; status.dataset.level = level || ""; }

    function draw() {
      const [l, hh] = state.shown;
      toggle.textContent = state.off.has(key(l, hh)) ? `Switch layer ${l + 1}, head ${hh + 1} back on`
        : `Switch layer ${l + 1}, head ${hh + 1} off`;
      const color = ink(root);
      for (let a = 0; a < L; a++) {
        for (let b = 0; b < H; b++) {
          const c = thumbs[a][b], off = state.off.has(key(a, b));
          c.classList.toggle("mm-shown", a === l && b === hh);
          c.classList.toggle("mm-off", off);
          if (state.result) drawHead(c, state.result.attention[a][b], 48, heatColor, off);
        }
      }
      if (!state.result) return;
      const r = state.result, tokens = r.tokens, n = tokens.length;
      bigTitle.textContent = `Layer ${l + 1}, head ${hh + 1} (${spec.labels[l][hh]})` +
        (state.off.has(key(l, hh)) ? ", switched off: its weights are computed but its output is zeroed" : "") +
        ": row i shows where token i looks" +
        (state.off.size ? `, in the model with ${state.off.size} heads off (later layers' weights change too).` : ".");
      const ctx = big.getContext("2d");
      const font = "12px sans-serif";
      ctx.font = font;
      const label = Math.min(110, Math.ceil(Math.max(...tokens.map((t) => ctx.measureText(t).width))) + 6);
      const cell = Math.max(6, Math.min(26, Math.floor((Math.min(root.clientWidth || 600, 720) - label - 4) / n)));
      const dpr = window.devicePixelRatio || 1, size = label + cell * n;
      big.width = Math.round(size * dpr); big.height = Math.round(size * dpr);
      big.style.width = size + "px"; big.style.height = size + "px";
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, size, size);
      const w = r.attention[l][hh];
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          ctx.fillStyle = `rgba(${heatColor.join(",")},${w[i][j].toFixed(3)})`;
          ctx.fillRect(label + j * cell, label + i * cell, cell, cell);
        }
      }
      ctx.fillStyle = `rgb(${color.join(",")})`;
      ctx.font = Math.min(12, cell) + "px sans-serif";
      ctx.textBaseline = "middle";
      ctx.textAlign = "right";
      for (let i = 0; i < n; i++) ctx.fillText(tokens[i], label - 4, label + (i + 0.5) * cell, label - 6);
      ctx.save();
      ctx.rotate(-Math.PI / 2);
      ctx.textAlign = "left";
      for (let j = 0; j < n; j++) ctx.fillText(tokens[j], -label + 4, label + (j + 0.5) * cell, label - 6);
      ctx.restore();
      big.setAttribute("aria-label", `Attention of layer ${l + 1}, head ${hh + 1} over ${n} tokens`);
    }

    function readOut(values, k) {
      const pair = Number.isNaN(values.sim0) ? "" : k === 0
        ? ` Similarity of your two sentences: ${values.sim0.toFixed(3)}.`
        : ` Similarity of your two sentences: ${values.sim.toFixed(3)} (intact: ${values.sim0.toFixed(3)}).`;
      readout.textContent = (k === 0 ? `All ${L * H} heads on.`
        : `${k} of ${L * H} heads off. Your sentence's embedding vs. the intact model's: cosine ` +
          `${values.cos.toFixed(3)}.`) + pair;
    }

    async function refresh() {
      let text = sentence.value, notes = [];
      if (!text.trim()) { state.ticket++; say(M.empty, "warning"); return; }
      if (text.length > spec.max_chars) {
        notes.push(fill(M.too_long, { chars: spec.max_chars, cut: text.length - spec.max_chars }));
        text = text.slice(0, spec.max_chars);
      }
      const second = other.value.slice(0, spec.max_chars);
      const ticket = ++state.ticket; // only the latest run draws: the reader may click while one runs
      try {
        if (!state.loaded) say(M.loading);
        const m = await getModel();
        state.loaded = true;
        say(M.running);
        const off = offList();
        const r = await m.call({ type: "attend", sentence: text, off });
        if (r.truncated) notes.push(fill(M.truncated, { n: r.total, max: spec.max_tokens }));
        if (r.unknown.length) notes.push(fill(M.unknown, { k: r.unknown.length, words: r.unknown.join(", ") }));
        const intact = off.length ? (await m.call({ type: "embed", sentence: text, off: [] })).embedding : r.embedding;
        let sim0 = NaN, sim = NaN;
        if (second.trim()) {
          const b0 = await m.call({ type: "embed", sentence: second, off: [] });
          const b = off.length ? await m.call({ type: "embed", sentence: second, off }) : b0;
          sim0 = dot(intact, b0.embedding); sim = dot(r.embedding, b.embedding);
        }
        if (ticket !== state.ticket) return;
        state.result = r;
        say(notes.join(" ") || `${r.tokens.length} tokens. Click a head to see it large.`,
          notes.length ? "warning" : "");
        draw();
        readOut({ cos: dot(intact, r.embedding), sim, sim0 }, off.length);
      } catch (error) {
        if (ticket === state.ticket) say(fill(M.failed, { error: error.message }), "error");
        if (!state.loaded) root.classList.add("mm-failed"); // no model here (a deck, say): the static picture
      }
    }

    const change = (fn) => () => { fn(); draw(); if (state.loaded) refresh(); };
    run.addEventListener("click", () => refresh());
    sentence.addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); refresh(); } });
    toggle.addEventListener("click", change(() => {
      const i = key(...state.shown);
      if (state.off.has(i)) state.off.delete(i); else state.off.add(i);
    }));
    layerSelect.addEventListener("change", change(() => {
      if (layerSelect.value !== "") for (let hh = 0; hh < H; hh++) state.off.add(key(Number(layerSelect.value), hh));
      layerSelect.value = "";
    }));
    patternSelect.addEventListener("change", change(() => {
      for (let l = 0; l < L; l++) for (let hh = 0; hh < H; hh++) {
        if (spec.labels[l][hh] === patternSelect.value) state.off.add(key(l, hh));
      }
      patternSelect.value = "";
    }));
    reset.addEventListener("click", change(() => state.off.clear()));
    draw();

    const api = (type) => async (text, options) => {
      if (typeof text !== "string") throw new TypeError("sentence must be a string");
      const m = await getModel();
      state.loaded = true;
      return m.call({ type, sentence: text, off: (options && options.off) || [] });
    };
    root.mha = {
      spec,
      load: async () => { const m = await getModel(); state.loaded = true; return { loadMs: m.loadMs }; },
      tokenize: api("tokenize"),
      attend: async (text) => { const r = await api("attend")(text); return { tokens: r.tokens, attention: r.attention }; },
      embed: async (text, options) => (await api("embed")(text, options)).embedding,
      refresh,
      get off() { return offList(); },
      set off(pairs) { state.off = new Set(pairs.map(([l, hh]) => key(l, hh))); draw(); },
    };
  }

  function mountAll() { document.querySelectorAll(".mha-minilm").forEach((root) => mount(root)); }

  // In a live kernel (mha.widgets.minilm_page.MiniLMWidget): the same box, computed by Python. Each request
  // goes to Python as a custom message {id, type, sentence, off}; the reply is {id, result} (the attention as
  // float32 bytes in buffers[0], of shape result.attention_shape) or {id, error}.
  function toNested(view, shape) { // float32 little-endian bytes -> nested arrays of `shape`
    const flat = new Float32Array(view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength));
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
      const root = document.createElement("div");
      root.className = "mha-minilm";
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
  globalThis.mhaMiniLM = { mount, mountAll, anywidget };
})();
