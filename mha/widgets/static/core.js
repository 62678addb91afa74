/* mha front end, core: the namespace, a port of the explorer's numbers, and small DOM helpers.
 *
 * Every front end of the book (explorer.js, stepper.js, calculator.js) is a CLASSIC script that adds to one
 * global namespace, globalThis.mhaFrontEnd, so that a page opened from disk (file://, where Chromium refuses
 * ES modules and fetch) works with plain <script src> tags and data inline in the page. Load order:
 *
 *   <link rel="stylesheet" href="mha.css">
 *   <script src="core.js"></script>         this file: numbers, DOM helpers, auto-mount, anywidget adapter
 *   <script src="controller.js"></script>   the one controller: controls, status, rules from a figure's spec
 *   <script src="heatmaps.js"></script>     the canvas heatmap grid (explorer and stepper)
 *   <script src="explorer.js"></script>     and/or stepper.js, calculator.js
 *
 * In a live kernel, anywidget wants an ES module; the Python side concatenates the same files and appends
 *   export default globalThis.mhaFrontEnd.anywidget("mountExplorer");
 * (see ns.anywidget below). The files are strict-mode code with no top-level bindings, so they are valid
 * both as classic scripts and as the body of that module.
 *
 * The port: mha/compute/portable_random.py (mix32, text_word, stream_key, uniform) and
 * mha/compute/explorer.py (split_tokens, token_vectors, embed_tokens, fresh parameters, build_mask,
 * explorer_weights), with the forward pass of mha/multihead.py and mha/attention.py. Computed in float64,
 * as Python does; tests/test_frontend.py compares the two.
 *
 * Shape legend:
 *   n        number of tokens (queries and keys: self-attention)
 *   d_model  model width
 *   h        number of heads
 *   d_k      width of each head, d_model / h
 * A matrix is an array of rows (Float64Array), e.g. x: n rows of d_model.
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});

  // ---------------------------------------------------------------------------------------------------
  // The portable generator (mha/compute/portable_random.py): 32-bit integer arithmetic only.
  // ---------------------------------------------------------------------------------------------------
  const MASK32 = 0xffffffff;
  const GOLDEN = 0x9e3779b9; // 2**32 / golden ratio

  /** lowbias32: a bijective hash of a 32-bit value. Math.imul is 32-bit multiplication mod 2**32. */
  function mix32(x) {
    x = (x ^ (x >>> 16)) >>> 0;
    x = Math.imul(x, 0x7feb352d) >>> 0;
    x = (x ^ (x >>> 15)) >>> 0;
    x = Math.imul(x, 0x846ca68b) >>> 0;
    return (x ^ (x >>> 16)) >>> 0;
  }

  /** FNV-1a over the UTF-8 bytes of a string: a 32-bit word. */
  function textWord(text) {
    let h = 0x811c9dc5;
    for (const byte of new TextEncoder().encode(text)) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
    return h;
  }

  /** The key of a stream named by a few 32-bit words, e.g. (seed, parameter index). */
  function streamKey(...words) {
    let key = 0x243f6a88; // the first digits of pi
    for (const word of words) {
      if (!Number.isInteger(word) || word < 0 || word > MASK32) {
        throw new RangeError(`stream words must be ints in [0, 2**32), got ${word}`);
      }
      key = mix32((key + Math.imul(word, GOLDEN)) >>> 0); // key + word * GOLDEN mod 2**32
    }
    return key;
  }

  /** n numbers in [0, 1), multiples of 2**-24: positions 0 .. n-1 of stream `key`. */
  function uniform(key, n) {
    const out = new Float64Array(n); // (n,)
    for (let i = 0; i < n; i++) out[i] = (mix32((key + Math.imul(i, GOLDEN)) >>> 0) >>> 8) * 2 ** -24;
    return out;
  }

  // ---------------------------------------------------------------------------------------------------
  // The explorer's input and its fresh layer (mha/compute/explorer.py). Its constants (the masks, the
  // parameter names, the longest sentence) come with its spec (mha/widgets/spec.py), as `spec` below.
  // ---------------------------------------------------------------------------------------------------
  const TOKEN_STREAM = 0x746f6b65; // "toke"

  /** The pieces of a sentence between runs of ASCII whitespace; other characters belong to tokens. */
  function splitTokens(sentence) {
    return String(sentence).split(/[ \t\n\r]+/).filter((t) => t.length > 0);
  }

  /** A fixed vector per token, uniform in [-sqrt(3), sqrt(3)): n rows of d_model. */
  function tokenVectors(tokens, d_model) {
    return tokens.map((t) => {
      const row = uniform(streamKey(TOKEN_STREAM, textWord(t)), d_model);
      for (let j = 0; j < d_model; j++) row[j] = (row[j] * 2 - 1) * Math.sqrt(3);
      return row;
    });
  }

  /** PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(same); an odd width drops the last cosine. */
  function sinusoidalPositions(n, d_model) {
    const out = [];
    for (let p = 0; p < n; p++) {
      const row = new Float64Array(d_model); // (d_model,)
      for (let i = 0; i < d_model; i += 2) {
        const angle = p / 10000 ** (i / d_model);
        row[i] = Math.sin(angle);
        if (i + 1 < d_model) row[i + 1] = Math.cos(angle);
      }
      out.push(row);
    }
    return out;
  }

  /** token vectors + sinusoidal positions: the explorer's input x, n rows of d_model. */
  function embedTokens(tokens, d_model) {
    const pe = sinusoidalPositions(tokens.length, d_model);
    return tokenVectors(tokens, d_model).map((row, p) => row.map((v, j) => v + pe[p][j]));
  }

  const freshCache = new Map(); // "d_model/seed" -> parameters, like Python's lru_cache

  /** The fresh layer's parameters: stream (seed, i) for the i-th of `names` (mha.compute.explorer.PARAMETERS),
   * row-major, in +-1/sqrt(d_model). */
  function freshParameters(d_model, seed, names) {
    const cacheKey = `${d_model}/${seed}/${names.length}`;
    if (freshCache.has(cacheKey)) return freshCache.get(cacheKey);
    const bound = d_model ** -0.5; // PyTorch's nn.Linear default: fan_in = d_model
    const params = {};
    names.forEach((name, i) => {
      const flat = uniform(streamKey(seed, i), name.endsWith("weight") ? d_model * d_model : d_model);
      for (let j = 0; j < flat.length; j++) flat[j] = (flat[j] * 2 - 1) * bound;
      params[name] = name.endsWith("weight") ? rowsOf(flat, d_model, d_model) : flat; // (d, d) or (d,)
    });
    if (freshCache.size >= 32) freshCache.clear();
    freshCache.set(cacheKey, params);
    return params;
  }

  function rowsOf(flat, rows, cols) {
    const out = [];
    for (let i = 0; i < rows; i++) out.push(flat.subarray(i * cols, (i + 1) * cols));
    return out;
  }

  /** The mask of a kind ({no_later, cut}, from the spec's masks): null, or n rows of n booleans (true = may
   * attend): a query sees no later key if no_later, no key at or after validLength (null = n) if cut. */
  function buildMask(kind, n, validLength) {
    if (!kind.no_later && !kind.cut) return null;
    const valid = kind.cut ? (validLength == null ? n : validLength) : n; // checked by mergeSettings
    const mask = [];
    for (let i = 0; i < n; i++) {
      const row = [];
      for (let j = 0; j < n; j++) row.push((!kind.no_later || j <= i) && j < valid); // lower triangle AND key < valid
      mask.push(row);
    }
    return mask;
  }

  /** y = x W^T + b (nn.Linear): x n rows of d_in, W d_out rows of d_in, b (d_out,) or null. */
  function linear(x, W, b) {
    return x.map((xi) => {
      const y = new Float64Array(W.length); // (d_out,)
      for (let o = 0; o < W.length; o++) {
        const w = W[o];
        let s = b ? b[o] : 0;
        for (let j = 0; j < xi.length; j++) s += xi[j] * w[j];
        y[o] = s;
      }
      return y;
    });
  }

  /**
   * The per-head attention weights of a layer on one sequence: h panels of n rows of n.
   *
   * Q = x W_q^T + b_q and K = x W_k^T + b_k (n, d_model); head i takes columns i*d_k .. (i+1)*d_k - 1 of
   * each (n, d_k); its weights are softmax(Q_i K_i^T / sqrt(d_k)) over the keys, with masked scores set to
   * -inf before the softmax and masked weights set to 0 after it (so a fully masked row is all zeros).
   * V and W_o do not change the weights, so they are not computed.
   */
  function headWeights(params, x, h, mask) {
    const d_model = x[0].length, d_k = d_model / h, n = x.length;
    const q = linear(x, params["W_q.weight"], params["W_q.bias"]); // (n, d_model)
    const k = linear(x, params["W_k.weight"], params["W_k.bias"]); // (n, d_model)
    const scale = Math.sqrt(d_k);
    const heads = [];
    for (let head = 0; head < h; head++) {
      const c0 = head * d_k; // this head's columns c0 .. c0 + d_k - 1
      const rows = [];
      for (let i = 0; i < n; i++) {
        const scores = new Float64Array(n); // (n,): q_i . k_j / sqrt(d_k), -inf where masked
        let max = -Infinity;
        for (let j = 0; j < n; j++) {
          if (mask && !mask[i][j]) { scores[j] = -Infinity; continue; }
          let s = 0;
          for (let c = c0; c < c0 + d_k; c++) s += q[i][c] * k[j][c];
          scores[j] = s / scale;
          if (scores[j] > max) max = scores[j];
        }
        const w = new Float64Array(n); // softmax, 0 where masked (and everywhere for a fully masked row)
        if (max > -Infinity) {
          let total = 0;
          for (let j = 0; j < n; j++) total += (w[j] = scores[j] === -Infinity ? 0 : Math.exp(scores[j] - max));
          for (let j = 0; j < n; j++) w[j] /= total;
        }
        rows.push(w);
      }
      heads.push(rows);
    }
    return heads; // (h, n, n)
  }

  /** A reader's input that cannot be drawn: the front end shows the message, it is not a bug. */
  class ReaderError extends Error {}

  /**
   * What the explorer draws (explorer_weights, plus what a picture needs), for settings merged and checked
   * against the spec (mergeSettings in controller.js): the input is checked once, there.
   *
   * settings: {sentence, d_model, h, mask, valid_length (null = n), seed}; model: a loaded trained model
   * (loadModel) or null for a fresh layer; spec: the explorer's (its masks, parameters and messages).
   * Returns {tokens, weights (h, n, n), mask (n, n) or null, d_model, h, d_k}. Throws ReaderError for a
   * sentence that cannot be drawn.
   */
  function explorerCompute(settings, model, spec) {
    const tokens = splitTokens(settings.sentence);
    if (!tokens.length) throw new ReaderError(spec.messages.no_tokens);
    let x, params, d_model, h;
    if (model) {
      ({ d_model, h } = model);
      x = modelEmbed(model, tokens, spec); // (n, d_model)
      params = model.params;
    } else {
      ({ d_model, h } = settings);
      x = embedTokens(tokens, d_model); // (n, d_model)
      params = freshParameters(d_model, settings.seed, spec.parameters);
    }
    const kind = spec.masks.find((m) => m.name === settings.mask);
    const mask = buildMask(kind, tokens.length, kind.cut ? settings.valid_length : null);
    return { tokens, weights: headWeights(params, x, h, mask), mask, d_model, h, d_k: d_model / h };
  }

  /** explorer_weights as nested arrays [h][n][n] of float32 values, as Python's .float() gives. */
  function explorerWeights(settings, model, spec) {
    const s = Object.assign({}, spec.defaults, { valid_length: null }, settings);
    return toNested(explorerCompute(s, model ? loadModel(model, spec) : null, spec).weights);
  }

  function toNested(panels) {
    return panels.map((rows) => rows.map((row) => Array.from(row, Math.fround)));
  }

  // ---------------------------------------------------------------------------------------------------
  // Trained models: a JSON payload of named tensors (safetensors' convention: loaded strictly by name).
  // ---------------------------------------------------------------------------------------------------

  /** A tensor from JSON: nested lists, or {dtype: "float32", shape: [...], data: base64 little-endian}. */
  function decodeTensor(name, value, shape) {
    let flat;
    if (Array.isArray(value)) {
      flat = Float64Array.from(value.flat(Infinity));
    } else if (value && value.dtype === "float32" && typeof value.data === "string") {
      const bytes = Uint8Array.from(atob(value.data), (c) => c.charCodeAt(0));
      const view = new DataView(bytes.buffer);
      flat = new Float64Array(bytes.length / 4);
      for (let i = 0; i < flat.length; i++) flat[i] = view.getFloat32(4 * i, true);
      if (value.shape && value.shape.reduce((a, b) => a * b, 1) !== flat.length) {
        throw new RangeError(`${name}: shape ${value.shape} does not match ${flat.length} values`);
      }
    } else {
      throw new TypeError(`${name}: expected nested lists or {dtype: "float32", shape, data}`);
    }
    const size = shape.reduce((a, b) => a * b, 1);
    if (flat.length !== size) throw new RangeError(`${name}: expected shape (${shape.join(", ")}), got ${flat.length} values`);
    return shape.length === 2 ? rowsOf(flat, shape[0], shape[1]) : flat;
  }

  const loadedModels = new WeakMap();

  /**
   * A trained model from its payload (schema in explorer.js): checks every name and shape, and fails
   * loudly on a missing, extra or misshapen tensor.
   */
  function loadModel(payload, spec) {
    if (loadedModels.has(payload)) return loadedModels.get(payload);
    const PARAMETERS = spec.parameters, MAX_TOKENS = spec.max_tokens;
    const { d_model, h } = payload;
    if (!Number.isInteger(d_model) || !Number.isInteger(h) || h < 1 || d_model % h) {
      throw new RangeError(`model: h=${h} must divide d_model=${d_model}`);
    }
    const names = Object.keys(payload.params || {});
    const unexpected = names.filter((k) => !PARAMETERS.includes(k));
    const missing = PARAMETERS.filter((k) => k.endsWith("weight") && !names.includes(k));
    if (unexpected.length || missing.length) {
      throw new RangeError(`model params: missing [${missing.join(", ")}], unexpected [${unexpected.join(", ")}]`);
    }
    const params = {};
    for (const name of PARAMETERS) {
      const value = payload.params[name];
      const shape = name.endsWith("weight") ? [d_model, d_model] : [d_model];
      params[name] = value == null ? null : decodeTensor(name, value, shape); // a missing bias is no bias
    }
    const vocab = payload.vocab;
    const embeddings = decodeTensor("embeddings", payload.embeddings, [vocab.length, d_model]);
    const positions = payload.positions == null
      ? null
      : decodeTensor("positions", payload.positions, [payload.positions.length ?? payload.positions.shape[0], d_model]);
    const model = {
      name: payload.name || "trained model",
      d_model, h, params, positions,
      index: new Map(vocab.map((t, i) => [t, i])),
      embeddings,
      maxTokens: positions ? Math.min(positions.length, MAX_TOKENS) : MAX_TOKENS,
      parameters: payload.parameters, // per projection and in total, counted by Python
    };
    loadedModels.set(payload, model);
    return model;
  }

  /** The model's input for tokens: embedding row + position row (as embed_names does), n rows of d_model. */
  function modelEmbed(model, tokens, spec) {
    const m = spec.messages, say = (template, values) => ns.format(m.cannot_embed, { reason: ns.format(template, values) });
    const unknown = [...new Set(tokens.filter((t) => !model.index.has(t)))];
    if (unknown.length) {
      const list = unknown.map((t) => `'${t}'`).join(", ");
      throw new ReaderError(say(m.unknown_tokens, { plural: unknown.length > 1 ? "s" : "", tokens: list }));
    }
    if (model.positions && tokens.length > model.positions.length) {
      throw new ReaderError(say(m.positions, { positions: model.positions.length, n: tokens.length }));
    }
    return tokens.map((t, p) => {
      const row = Float64Array.from(model.embeddings[model.index.get(t)]);
      if (model.positions) for (let j = 0; j < row.length; j++) row[j] += model.positions[p][j];
      return row;
    });
  }

  // ---------------------------------------------------------------------------------------------------
  // DOM helpers: text always goes in as text nodes, never as HTML.
  // ---------------------------------------------------------------------------------------------------

  /** make("p", {className: "x"}, "text", child, ...): an element; strings become text nodes. */
  function make(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (key === "className" || key === "textContent" || key === "value" || key === "checked" || key === "disabled" || key === "tabIndex") node[key] = value;
      else if (value !== undefined && value !== null && value !== false) node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat(Infinity)) if (child != null) node.append(child); // append(string) makes a text node
    return node;
  }

  let uid = 0;
  const uniqueId = (prefix) => `${prefix}-${++uid}`;
  /** A labelled control: <label for=id>text</label><control id=id name=name>, wrapped in a span. */
  function field(text, control, extra) {
    control.id = control.id || uniqueId(`mha-${control.name}`);
    return make("span", { className: `mha-field mha-field-${control.name}` },
      make("label", { for: control.id }, text), control, extra);
  }

  function select(name, options, value) {
    const node = make("select", { name });
    setOptions(node, options, value);
    return node;
  }

  /** Replace a select's options ([value, text] pairs or values) only if they changed, then set its value. */
  function setOptions(node, options, value) {
    const pairs = options.map((o) => (Array.isArray(o) ? o : [o, String(o)]));
    const same = node.options.length === pairs.length && pairs.every(([v], i) => node.options[i].value === String(v));
    if (!same) node.replaceChildren(...pairs.map(([v, t]) => make("option", { value: String(v) }, t)));
    node.value = String(value);
  }

  /** The inline JSON of a root element: a data-mha-config attribute or a <script type="application/json"> in it. */
  function readConfig(el) {
    if (el.dataset.mhaConfig) return JSON.parse(el.dataset.mhaConfig);
    const script = el.querySelector(':scope > script[type="application/json"]');
    if (script) return JSON.parse(script.textContent);
    const previous = el.previousElementSibling;
    if (previous && previous.matches('script[type="application/json"]')) return JSON.parse(previous.textContent);
    return null;
  }

  /** Mount every <div class=className> of the page that has inline data, once the page is parsed. */
  function autoMount(className, mount) {
    if (typeof document === "undefined") return;
    const run = () => {
      for (const el of document.querySelectorAll(`div.${className}`)) {
        if (el.mha) continue; // mounted already
        const config = readConfig(el);
        if (config) mount(el, config);
      }
    };
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", run);
    else run();
  }

  /** Call `redraw` when the page switches between light and dark (canvas text takes the page's colour). */
  function onThemeChange(redraw) {
    if (typeof document === "undefined") return;
    new MutationObserver(() => redraw()).observe(document.documentElement,
      { attributes: true, attributeFilter: ["data-theme", "data-mode", "class"] }); // pydata-sphinx-theme's switch
    if (root.matchMedia) root.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => redraw());
  }

  /** Float32 values from a binary buffer (DataView, ArrayBuffer or typed array), little-endian. */
  function float32s(buffer) {
    if (buffer == null) return null;
    const view = buffer instanceof DataView ? buffer
      : ArrayBuffer.isView(buffer) ? new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength)
      : new DataView(buffer);
    const out = new Float64Array(view.byteLength / 4);
    for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(4 * i, true);
    return out;
  }

  /** Bytes (0 or 1) from a binary buffer: a boolean mask. */
  function bytesOf(buffer) {
    if (buffer == null) return null;
    if (buffer instanceof DataView || ArrayBuffer.isView(buffer)) return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    return new Uint8Array(buffer);
  }

  /**
   * anywidget's module for a mount function: `export default mhaFrontEnd.anywidget("mountExplorer")`.
   *
   * The live protocol (mha/widgets/*.py are the Python side), three traitlets:
   *   config    Python -> page, once: what the static page has inline, the figure's spec included (for the
   *             explorer's trained model only its name, d_model and h; for the stepper its stages).
   *   settings  both ways: the controls' values. A reader's change is merged here (mergeSettings, so the
   *             controls at once offer only valid choices), then set and saved; Python checks it with the
   *             same rules, computes, and may correct it (a change from Python updates the controls).
   *   drawn     Python -> page: what to draw, computed by Python with the real mha. The explorer's is
   *             {tokens, shape: [h, n, n], weights: float32 bytes, mask: uint8 bytes (n * n) or null,
   *             d_model, h, d_k, parameters, message, level}; bytes arrive as binary buffers (DataView).
   *             The explorer has drawn the change at once from the port; this replaces its picture.
   * The mount function gets options {live: true, onChange}; its el.mha.show(drawn) draws a payload.
   */
  function anywidget(mountName) {
    return {
      render({ model, el }) {
        const div = document.createElement("div");
        el.appendChild(div);
        const config = Object.assign({}, model.get("config"), { settings: model.get("settings") || undefined });
        const api = ns[mountName](div, config, {
          live: true,
          drawn: model.get("drawn"),
          onChange(settings) {
            model.set("settings", settings);
            model.save_changes();
          },
        });
        const pull = () => {
          const settings = model.get("settings");
          if (JSON.stringify(settings) !== JSON.stringify(api.settings)) api.update(settings);
        };
        const show = () => { if (api.show) api.show(model.get("drawn")); };
        model.on("change:settings", pull);
        model.on("change:drawn", show);
        return () => {
          model.off("change:settings", pull);
          model.off("change:drawn", show);
        };
      },
    };
  }

  Object.assign(ns, {
    ReaderError,
    mix32, textWord, streamKey, uniform, splitTokens, tokenVectors, sinusoidalPositions,
    embedTokens, freshParameters, buildMask, headWeights, explorerCompute, explorerWeights, toNested,
    loadModel, modelEmbed, float32s, bytesOf, make, uniqueId, field, select, setOptions, readConfig, autoMount, onThemeChange, anywidget,
  });
})(globalThis);
