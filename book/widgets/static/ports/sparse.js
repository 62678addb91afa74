/* mha front end, PORT of book/compute/attention_2026.py's lightning indexer, for the sparse-attention figure.
 *
 * Python twins: book.compute.attention_2026.index_weights -> indexWeights, index_selection -> indexSelection
 * (with select_top_k's rule: a query's top_k best keys among those it sees, ties to the earlier key), and
 * mha.costs.sparse.causal_pairs -> causalPairs; sparseCompute gathers what the figure shows. Computed in
 * float64, as Python computes. Tested by tests/unit/book/compute/test_attention_2026.py (test_sparse_*), in
 * mini-racer, against those functions; needs ports/random.js and ports/explorer.js (the explorer's token
 * vectors) when called.
 *
 * I[t][s] = sum_j w[t][j] ReLU(q[t][j] . k[s] / sqrt(d_i)) for s <= t, with q = x W_iq (h_i heads of d_i),
 * k = x W_ik (one key for all heads), w = x W_iw / sqrt(h_i); x = embedTokens(tokens, d_model).
 *
 * A port: a classic script adding to globalThis.mhaFrontEnd, strict, no top-level binding, no DOM.
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});

  /** W_iq (h_i d_i rows), W_ik (d_i rows), W_iw (h_i rows), each row of d_model, from stream (stream, seed, i). */
  function indexWeights(shape, stream, seed) {
    const d = shape.d_model, rows = [shape.index_heads * shape.index_dim, shape.index_dim, shape.index_heads];
    return rows.map((r, i) => {
      const flat = ns.uniform(ns.streamKey(stream, seed, i), r * d);
      return Array.from({ length: r }, (_, a) => Array.from({ length: d }, (_, b) => (flat[a * d + b] * 2 - 1) * d ** -0.5));
    });
  }

  const times = (x, W) => x.map((row) => W.map((w) => w.reduce((sum, v, b) => sum + v * row[b], 0))); // x W^T

  /** The scores (n rows of n, -Infinity above the diagonal) and the kept keys (booleans), as index_selection. */
  function indexSelection(sentence, topK, seed, shape, stream) {
    const tokens = ns.splitTokens(sentence), n = tokens.length, hi = shape.index_heads, di = shape.index_dim;
    const [Wq, Wk, Ww] = indexWeights(shape, stream, seed);
    const x = ns.embedTokens(tokens, shape.d_model), q = times(x, Wq), k = times(x, Wk), w = times(x, Ww);
    const scores = q.map((qt, t) => k.map((ks, s) => {
      if (s > t) return -Infinity;
      let sum = 0;
      for (let j = 0; j < hi; j++) {
        let dot = 0;
        for (let a = 0; a < di; a++) dot += qt[j * di + a] * ks[a];
        sum += w[t][j] * hi ** -0.5 * Math.max(0, dot * di ** -0.5);
      }
      return sum;
    }));
    const selected = scores.map((row, t) => {
      const order = row.slice(0, t + 1).map((v, s) => s).sort((a, b) => row[b] - row[a] || a - b); // stable
      const kept = new Array(n).fill(false);
      order.slice(0, topK).forEach((s) => { kept[s] = true; });
      return kept;
    });
    return { tokens, scores, selected };
  }

  /** Query-key pairs of n tokens where token t sees t keys: sum over t of min(t, topK) (topK null: all). */
  function causalPairs(n, topK) {
    if (topK == null || topK >= n) return (n * (n + 1)) / 2;
    return (topK * (topK + 1)) / 2 + (n - topK) * topK;
  }

  /** What the figure shows for settings {sentence, top_k (null: all), seed}. */
  function sparseCompute(s, spec) {
    const n = ns.splitTokens(s.sentence).length, k = s.top_k == null ? n : Math.min(s.top_k, n);
    const out = indexSelection(s.sentence, k, s.seed, spec.index_shape, spec.index_stream);
    return Object.assign(out, { k, kept: causalPairs(n, k), pairs: causalPairs(n, null) });
  }

  Object.assign(ns, { indexWeights, indexSelection, causalPairs, sparseCompute });
})(globalThis);
