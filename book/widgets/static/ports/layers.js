/* mha front end, PORT of the layers that every model of the page is built from: a linear layer, and attention
 * from the projections on.
 *
 * Python twins:
 *   torch.nn.functional.linear (nn.Linear's forward)                                          -> linear
 *   mha.multihead.MultiHeadAttention.forward between its projections and W_o: split_heads, the scores q k^T
 *     times d_k ** -0.5 (MultiHeadAttention.scale), the mask (True = may attend; a fully masked row gives
 *     zero weights), the softmax, the weighted sum of the values (mha.attention.scaled_dot_product_attention
 *     on each head), merge_heads; a head in `off` has its output zeroed before W_o, as
 *     mha.compute.ablation does                                                       -> scaledDotProductAttention
 * Used by ports/explorer.js, ports/decoder.js and ports/minilm.js (in its Web Worker too). Tested by
 * tests/unit/mha/test_multihead.py (test_layers_*), in mini-racer, against torch and mha.
 *
 * A port: a classic script adding to globalThis.mhaFrontEnd, strict, no top-level binding, no DOM. Its one
 * function, layersPort, is also its text for a Web Worker (ports/minilm.js's miniLMWorker): `(${layersPort})(self)`.
 *
 * Shape legend:
 *   n        number of rows (tokens); n_q queries, n_k keys
 *   d_in     input width, d_out output width of a linear layer
 *   h        number of heads; d_k the width of each
 * A matrix is flat and row-major: a Float64Array or a Float32Array holding its rows one after another.
 * Sums are float64 (JavaScript's numbers); a result in a Float32Array is rounded to float32 as it is stored.
 */
(function layersPort(root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});

  /**
   * y = x W^T + b: x (n, d_in), W (d_out, d_in) as nn.Linear keeps it, b (d_out,) or null; y (n, d_out), a
   * new `Out` (Float64Array or Float32Array). Each sum runs over d_in in order, then adds the bias.
   */
  function linear(x, W, b, dIn, Out = Float64Array) {
    const n = x.length / dIn, dOut = W.length / dIn, y = new Out(n * dOut); // (n, d_out)
    for (let o = 0; o < dOut; o++) {
      const wo = o * dIn, bias = b ? b[o] : 0;
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

  /**
   * Attention on one sequence, every head: q (n_q, h d_k), k and v (n_k, h d_k), the heads side by side as the
   * projections give them (head i: columns i d_k .. (i + 1) d_k - 1); v may be null (the weights only).
   *
   * options: mask, null or n_q rows of n_k booleans (true = may attend); off(head), true for a head whose
   * output stays zero (its weights are still computed); Out, the output's type (Float64Array).
   * Returns {weights: h panels of n_q rows, each a Float64Array (n_k,), out: (n_q, h d_k) in an Out, or null}.
   */
  function scaledDotProductAttention(q, k, v, h, d_k, options = {}) {
    const { mask = null, off = null, Out = Float64Array } = options;
    const width = h * d_k, n_q = q.length / width, n_k = k.length / width, scale = d_k ** -0.5;
    const out = v ? new Out(n_q * width) : null, weights = [];
    for (let head = 0; head < h; head++) {
      const c0 = head * d_k, on = out && !(off && off(head)), rows = [];
      for (let i = 0; i < n_q; i++) {
        const w = new Float64Array(n_k); // (n_k,): the scaled scores of query i, -inf where masked, then weights
        const seen = mask && mask[i], qi = i * width + c0; // query i's row of the mask, its head's first column
        let max = -Infinity;
        for (let j = 0; j < n_k; j++) {
          if (seen && !seen[j]) { w[j] = -Infinity; continue; }
          let s = 0;
          for (let c = 0, kj = j * width + c0; c < d_k; c++) s += q[qi + c] * k[kj + c];
          w[j] = s * scale;
          if (w[j] > max) max = w[j];
        }
        if (max === -Infinity) w.fill(0); // every key masked: zeros, not NaN
        else {
          let total = 0;
          for (let j = 0; j < n_k; j++) total += (w[j] = w[j] === -Infinity ? 0 : Math.exp(w[j] - max));
          for (let j = 0; j < n_k; j++) w[j] /= total; // softmax over the keys
        }
        if (on) { // this head's output: weights @ V, (n_k,) @ (n_k, d_k) -> (d_k,)
          for (let j = 0; j < n_k; j++) {
            const wj = w[j], vj = j * width + c0;
            if (wj !== 0) for (let c = 0; c < d_k; c++) out[qi + c] += wj * v[vj + c];
          }
        }
        rows.push(w);
      }
      weights.push(rows);
    }
    return { weights, out }; // (h, n_q, n_k) and (n_q, h d_k)
  }

  Object.assign(ns, { linear, scaledDotProductAttention, layersPort });
})(globalThis);
