/* mha front end, PORT of book/decoder/model.py: the book's decoder, run in the page of "Heads that work
 * together" with no kernel.
 *
 * Python twins (book.decoder.model): predict -> decoderPredict, encode -> decoderEncode, Decoder.forward
 * (inside decoderPredict); book.decoder.page.weights_payload's data read back -> decoderModel (base64 and
 * float16 by ports/bytes.js; the linear layers and the attention are ports/layers.js's).
 * Tested by tests/unit/book/decoder/test_model.py (test_port_*), in mini-racer, against Python on several
 * texts and sets of heads switched off: attention and probabilities within 2e-3, the same top tokens where
 * they are not near-tied.
 *
 * A classic script with no DOM, no TextEncoder and no atob (mini-racer has not one of them): strict mode, no
 * top-level bindings, adding to the global namespace globalThis.mhaFrontEnd (core.js's convention), and
 * reading ports/bytes.js and ports/layers.js when called:
 *
 *   decoderModel(data)               the data of the weights script decoder-weights.js (written by the build
 *                                    from the shipped safetensors, book/decoder/page.py: format
 *                                    "float16-base64") -> a model {config, vocab, ids, unknown, topK,
 *                                    messages, W: {name: Float32Array}}
 *   decoderEncode(model, text)       -> {ids, truncated, unknown}, as decoder.encode: one token per code point,
 *                                    the last `context` of a longer text, unknown characters to one token
 *   decoderPredict(model, text, {off}) -> {tokens, attention, top, truncated, unknown, note}, as
 *                                    decoder.predict: attention[layer][head][query][key] (nested arrays, zero
 *                                    above the diagonal), top[i] = 5 [token, probability] pairs for the token
 *                                    after position i, highest first, ties in id order; off = [[layer, head],
 *                                    ...] counted from 0
 *
 * Bad input throws a plain Error worded by the messages that come with the weights (decoder.MESSAGES), as
 * Python's ValueError and TypeError are: empty text, a text that is not a string, an `off` that is not a list
 * of heads of this decoder.
 *
 * The forward pass: the token embedding; per layer x + attn(RMSNorm(x)), attn being mha/multihead.py's
 * MultiHeadAttention without biases, with rotary positions (mha/positional.py: half-split pairs, angles
 * p * theta^(-2i/d_k)) and mha/attention.py's softmax(q k^T / sqrt(d_k)), each query seeing itself and the keys before it; a head
 * switched off has its output zeroed before W_o (mha/compute/ablation.py); the final RMSNorm, the unembedding
 * and a softmax. Computed in float64 from the float16 values that Python computes with in float32.
 *
 * Shape legend:
 *   n        number of tokens, at most config.context
 *   V        vocabulary size
 *   d_model  model width
 *   L        number of layers (config.layers)
 *   h        heads per layer; d_k the head width, d_model divided by h
 * A matrix is flat and row-major (Float64Array), as ports/layers.js takes it, e.g. x: (n, d_model).
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});

  /** A tensor of the weights script: little-endian float16 in base64 -> Float32Array, row-major. */
  function decodeTensor(entry) {
    const bytes = ns.base64Bytes(entry.data), size = entry.shape.reduce((a, b) => a * b, 1);
    if (bytes.length !== 2 * size) {
      throw new Error(`a tensor of shape [${entry.shape}] needs ${2 * size} bytes, got ${bytes.length}`);
    }
    return ns.float16s(bytes);
  }

  /** A character as a message lists it: itself, or U+XXXX if it prints as nothing or blank (categories C, Z). */
  const visible = (c) => (/^[\p{C}\p{Z}]$/u.test(c) ? `U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}` : c);

  /** Fill a message's {fields} and choose its {name|one|many}, as book.widgets.spec.fill does for MESSAGES. */
  function fill(template, fields) {
    return template.replace(/\{(\w+)\|([^|{}]*)\|([^|{}]*)\}/g,
      (whole, key, one, many) => (key in fields ? (Number(fields[key]) === 1 ? one : many) : whole)).replace(/\{(\w+)\}/g, (whole, key) => (key in fields ? String(fields[key]) : whole));
  }

  function decoderModel(data) {
    if (!data || data.format !== "float16-base64") {
      throw new Error(`the decoder's weights must be in format float16-base64, got ${data && data.format}`);
    }
    const W = {};
    for (const name in data.tensors) W[name] = decodeTensor(data.tensors[name]);
    const ids = new Map(data.vocab.map((token, id) => [token, id]));
    const { config, vocab, unknown, messages } = data;
    return { config, vocab, ids, unknown, topK: data.top_k, messages, W };
  }

  // ---- tokens: one per code point ----------------------------------------------------------------------------
  function decoderEncode(model, text) {
    const M = model.messages;
    if (typeof text !== "string") throw new Error(fill(M.not_text, { type: text === null ? "null" : typeof text }));
    if (text.length === 0) throw new Error(M.empty);
    let characters = Array.from(text); // code points: an emoji is one character
    const truncated = Math.max(0, characters.length - model.config.context);
    characters = characters.slice(truncated);
    const unknown = [];
    const ids = characters.map((c) => {
      const id = model.ids.get(c);
      if (id !== undefined) return id;
      if (!unknown.includes(c)) unknown.push(c);
      return model.unknown;
    });
    return { ids, truncated, unknown };
  }

  function checkHeads(model, name, off) {
    const { layers, h } = model.config, M = model.messages;
    if (!Array.isArray(off)) throw new Error(fill(M.not_heads, { name, type: off === null ? "null" : typeof off }));
    return off.map((pair) => {
      const ok = Array.isArray(pair) && pair.length === 2 && pair.every(Number.isInteger)
        && pair[0] >= 0 && pair[0] < layers && pair[1] >= 0 && pair[1] < h;
      if (!ok) {
        const shown = JSON.stringify(pair) === undefined ? String(pair) : JSON.stringify(pair);
        throw new Error(fill(M.heads, { name, last_layer: layers - 1, last_head: h - 1, pair: shown }));
      }
      return [pair[0], pair[1]];
    });
  }

  // ---- the forward pass --------------------------------------------------------------------------------------
  /** nn.RMSNorm on each row of x (n, d): x / sqrt(mean(x^2) + eps) * g. */
  function rmsNorm(x, d, g, eps) {
    const out = new Float64Array(x.length);
    for (let r = 0; r < x.length; r += d) {
      let sum = 0;
      for (let c = 0; c < d; c++) sum += x[r + c] * x[r + c];
      const scale = 1 / Math.sqrt(sum / d + eps);
      for (let c = 0; c < d; c++) out[r + c] = x[r + c] * scale * g[c];
    }
    return out;
  }

  /** mha.positional.rotary_tables: cos and sin, n rows of d_k (the d_k/2 angles twice, half-split). */
  function rotaryTables(n, dK, theta) {
    const half = dK / 2, cos = [], sin = [];
    const inverse = Array.from({ length: half }, (_, i) => theta ** (-(2 * i) / dK)); // (d_k/2,)
    for (let p = 0; p < n; p++) {
      const c = new Float64Array(dK), s = new Float64Array(dK);
      for (let i = 0; i < half; i++) {
        c[i] = c[i + half] = Math.cos(p * inverse[i]);
        s[i] = s[i + half] = Math.sin(p * inverse[i]);
      }
      cos.push(c);
      sin.push(s);
    }
    return { cos, sin };
  }

  /** mha.positional.apply_rotary on every head of x (n, h d_k): each head's x cos + (-x2, x1) sin, row p at p. */
  function rotate(x, h, dK, { cos, sin }) {
    const half = dK / 2, width = h * dK, out = new Float64Array(x.length);
    for (let r = 0, p = 0; r < x.length; r += width, p++) {
      for (let base = r; base < r + width; base += dK) {
        for (let c = 0; c < dK; c++) {
          const other = c < half ? -x[base + c + half] : x[base + c - half];
          out[base + c] = x[base + c] * cos[p][c] + other * sin[p][c];
        }
      }
    }
    return out;
  }

  /** Decoder.forward on one sequence: {logits: (n, V), attention: [L][h][n][n]}. */
  function forward(model, ids, off) {
    const { d_model: d, h, layers: L, eps, rope_theta: theta } = model.config;
    const dK = d / h, n = ids.length, W = model.W;
    const switchedOff = new Set(off.map(([l, j]) => `${l},${j}`));
    const x = new Float64Array(n * d); // (n, d_model): the tokens' embeddings
    ids.forEach((id, i) => x.set(W["embed.weight"].subarray(id * d, (id + 1) * d), i * d));
    const tables = rotaryTables(n, dK, theta);
    const mask = ids.map((_, i) => ids.map((_, j) => j <= i)); // (n, n): a decoder looks back only
    const attention = [];
    for (let l = 0; l < L; l++) {
      const p = `layers.${l}.`;
      const a = rmsNorm(x, d, W[p + "norm.weight"], eps); // (n, d_model)
      const q = rotate(ns.linear(a, W[p + "attn.W_q.weight"], null, d), h, dK, tables); // (n, h d_k)
      const k = rotate(ns.linear(a, W[p + "attn.W_k.weight"], null, d), h, dK, tables); // (n, h d_k)
      const v = ns.linear(a, W[p + "attn.W_v.weight"], null, d); // (n, h d_k)
      // a head switched off still attends; its output is zeroed before W_o
      const heads = ns.scaledDotProductAttention(q, k, v, h, dK, { mask, off: (j) => switchedOff.has(`${l},${j}`) });
      attention.push(heads.weights.map((rows) => rows.map((row) => Array.from(row)))); // (h, n, n), nested arrays
      const out = ns.linear(heads.out, W[p + "attn.W_o.weight"], null, h * dK); // (n, d_model)
      for (let t = 0; t < x.length; t++) x[t] += out[t];
    }
    const logits = ns.linear(rmsNorm(x, d, W["norm.weight"], eps), W["unembed.weight"], null, d); // (n, V)
    return { logits, attention };
  }

  function decoderPredict(model, text, options) {
    const encoded = decoderEncode(model, text);
    const off = checkHeads(model, "off", options && options.off !== undefined ? options.off : []);
    const { logits, attention } = forward(model, encoded.ids, off);
    const K = model.topK, V = model.vocab.length;
    const top = encoded.ids.map((_, i) => { // softmax, then the K most probable ids, highest first, ties by id
      const row = logits.subarray(i * V, (i + 1) * V); // (V,): the logits of the token after position i
      let max = -Infinity, total = 0;
      for (let id = 0; id < row.length; id++) if (row[id] > max) max = row[id];
      const p = new Float64Array(row.length);
      for (let id = 0; id < row.length; id++) total += (p[id] = Math.exp(row[id] - max));
      const best = [];
      for (let id = 0; id < row.length; id++) {
        if (best.length === K && p[id] <= p[best[K - 1]]) continue; // a tie keeps the lower id
        let at = best.length;
        while (at > 0 && p[best[at - 1]] < p[id]) at--;
        best.splice(at, 0, id);
        if (best.length > K) best.pop();
      }
      return best.map((id) => [model.vocab[id], p[id] / total]);
    });
    const M = model.messages, notes = [];
    if (encoded.truncated) {
      const total = encoded.truncated + encoded.ids.length;
      notes.push(fill(M.truncated, { total, context: model.config.context }));
    }
    if (encoded.unknown.length) {
      const characters = encoded.unknown.map(visible).join(", ");
      notes.push(fill(M.unknown, { k: encoded.unknown.length, token: model.vocab[model.unknown], characters }));
    }
    return {
      tokens: encoded.ids.map((id) => model.vocab[id]), attention, top,
      truncated: encoded.truncated, unknown: encoded.unknown, note: notes.join(" "),
    };
  }

  Object.assign(ns, { decoderModel, decoderEncode, decoderPredict });
})(globalThis);
