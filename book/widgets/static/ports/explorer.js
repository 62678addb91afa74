/* mha front end, PORT of book/compute/explorer.py: the head explorer's weights, computed in the page.
 *
 * Python twins:
 *   book.compute.explorer: split_tokens -> splitTokens, token_vectors -> tokenVectors, embed_tokens ->
 *     embedTokens (with mha.positional.sinusoidal_positions -> sinusoidalPositions), _fresh_parameters /
 *     fresh_attention -> freshParameters, build_mask -> buildMask, head_weights -> headWeights (the weights
 *     of mha.MultiHeadAttention's forward pass: mha.multihead, mha.attention), explorer_weights ->
 *     explorerWeights (explorerCompute: the same, plus what a picture needs);
 *   a trained model's payload, book.widgets.frontend.model_payload, read back by loadModel, and its input
 *     (a token's vector plus its position's, the split model_payload makes of the model's embed) by
 *     modelEmbed; a token the model cannot embed is the reader's input, told with the spec's cannot_embed.
 * Computed in float64, as Python computes a fresh layer. Tested by tests/unit/book/compute/test_explorer.py
 * (test_explorer_*), in mini-racer, against those functions on the cases of the browser tests; needs
 * ports/bytes.js, ports/layers.js (the projections and the attention), ports/random.js and ports/settings.js
 * when called.
 *
 * A port: a classic script adding to globalThis.mhaFrontEnd, strict, no top-level binding, no DOM.
 *
 * Shape legend:
 *   n        number of tokens (queries and keys: self-attention)
 *   d_model  model width
 *   h        number of heads
 *   d_k      width of each head, d_model / h
 * A matrix is an array of rows (Float64Array), e.g. x: n rows of d_model; a weight is flat, row-major, as
 * ports/layers.js takes it.
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});

  // The explorer's constants (the masks, the parameter names, the longest sentence) come with its spec
  // (book.widgets.spec.explorer_spec), as `spec` below.
  const TOKEN_STREAM = 0x746f6b65; // "toke"

  // book.compute.explorer.CJK: each character of these blocks is a token of its own.
  const CJK = "\\u2e80-\\u2fff\\u3001-\\u303f\\u3040-\\u30ff\\u3100-\\u312f\\u3190-\\u31ff\\u3400-\\u4dbf\\u4e00-\\u9fff" +
    "\\uf900-\\ufaff\\ufe30-\\ufe4f\\uff00-\\uffef\\u{20000}-\\u{3ffff}";
  const TOKEN = new RegExp(`[${CJK}]|[^ \\t\\n\\r\\u3000${CJK}]+`, "gu");

  /** The pieces of a sentence between runs of whitespace (ASCII's and U+3000), each CJK character a piece
   * of its own; other characters belong to tokens. */
  function splitTokens(sentence) {
    return String(sentence).match(TOKEN) || [];
  }

  /** A fixed vector per token, uniform in [-sqrt(3), sqrt(3)): n rows of d_model. */
  function tokenVectors(tokens, d_model) {
    return tokens.map((t) => {
      const row = ns.uniform(ns.streamKey(TOKEN_STREAM, ns.textWord(t)), d_model);
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

  /** The fresh layer's parameters: stream (seed, i) for the i-th of `names` (book.compute.explorer.PARAMETERS),
   * flat and row-major, in +-1/sqrt(d_model). */
  function freshParameters(d_model, seed, names) {
    const cacheKey = `${d_model}/${seed}/${names.length}`;
    if (freshCache.has(cacheKey)) return freshCache.get(cacheKey);
    const bound = d_model ** -0.5; // PyTorch's nn.Linear default: fan_in = d_model
    const params = {};
    names.forEach((name, i) => {
      const flat = ns.uniform(ns.streamKey(seed, i), name.endsWith("weight") ? d_model * d_model : d_model);
      for (let j = 0; j < flat.length; j++) flat[j] = (flat[j] * 2 - 1) * bound;
      params[name] = flat; // (d_model, d_model) or (d_model,)
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

  /**
   * The per-head attention weights of a layer on one sequence: h panels of n rows of n.
   *
   * Q = x W_q^T + b_q and K = x W_k^T + b_k (n, d_model), then each head's softmax(Q_i K_i^T / sqrt(d_k)) with
   * the mask (ports/layers.js). V and W_o do not change the weights, so they are not computed.
   */
  function headWeights(params, x, h, mask) {
    const n = x.length, d_model = x[0].length, flat = new Float64Array(n * d_model); // (n, d_model)
    x.forEach((row, i) => flat.set(row, i * d_model));
    const q = ns.linear(flat, params["W_q.weight"], params["W_q.bias"], d_model); // (n, d_model)
    const k = ns.linear(flat, params["W_k.weight"], params["W_k.bias"], d_model); // (n, d_model)
    return ns.scaledDotProductAttention(q, k, null, h, d_model / h, { mask }).weights; // (h, n, n)
  }

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
    if (!tokens.length) throw new ns.ReaderError(spec.messages.no_tokens);
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

  /** A tensor from JSON, flat: nested lists, or {dtype: "float32", shape: [...], data: base64 little-endian}. */
  function decodeTensor(name, value, shape) {
    let flat;
    if (Array.isArray(value)) {
      flat = Float64Array.from(value.flat(Infinity));
    } else if (value && value.dtype === "float32" && typeof value.data === "string") {
      flat = ns.float32s(ns.base64Bytes(value.data));
      if (value.shape && value.shape.reduce((a, b) => a * b, 1) !== flat.length) {
        throw new RangeError(`${name}: shape ${value.shape} does not match ${flat.length} values`);
      }
    } else {
      throw new TypeError(`${name}: expected nested lists or {dtype: "float32", shape, data}`);
    }
    const size = shape.reduce((a, b) => a * b, 1);
    if (flat.length !== size) throw new RangeError(`${name}: expected shape (${shape.join(", ")}), got ${flat.length} values`);
    return flat;
  }

  const loadedModels = new WeakMap();

  /**
   * A trained model from its payload (its schema is in the figure, explorer.js): checks every name and shape, and fails
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
    const vocab = payload.vocab, p = payload.positions;
    const rows = (name, count) => rowsOf(decodeTensor(name, payload[name], [count, d_model]), count, d_model);
    const embeddings = rows("embeddings", vocab.length); // (len(vocab), d_model)
    const positions = p == null ? null : rows("positions", p.length ?? p.shape[0]); // (max_tokens, d_model)
    const model = {
      name: payload.name,
      known: payload.known, // its tokens as the page names them ("0–7"), written by Python
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
      const known = model.known ? ns.format(m.known_tokens, { known: model.known }) : "";
      throw new ns.ReaderError(say(m.unknown_tokens, { plural: unknown.length > 1 ? "s" : "", tokens: list }) + known);
    }
    if (model.positions && tokens.length > model.positions.length) {
      throw new ns.ReaderError(say(m.positions, { positions: model.positions.length, n: tokens.length }));
    }
    return tokens.map((t, p) => {
      const row = Float64Array.from(model.embeddings[model.index.get(t)]);
      if (model.positions) for (let j = 0; j < row.length; j++) row[j] += model.positions[p][j];
      return row;
    });
  }

  Object.assign(ns, {
    splitTokens, tokenVectors, sinusoidalPositions, embedTokens, freshParameters, buildMask, headWeights,
    explorerCompute, explorerWeights, toNested, loadModel, modelEmbed,
  });
})(globalThis);
