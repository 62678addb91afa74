/* mha front end, PORT of all-MiniLM-L6-v2 (mha/pretrained/minilm.py) for chapter 1's box: tokenizer and encoder.
 *
 * Python twins:
 *   the model's tokenizer, MiniLMEncoder.tokenizer (tokenizers' BertNormalizer, BertPreTokenizer and WordPiece
 *     from its tokenizer.json), with book.minilm.page.page_tokens (truncation, [UNK] words)
 *     -> normalize, preTokenize, wordPiece, tokenize;
 *   mha.pretrained.minilm: MiniLMEncoder.forward (embed, EncoderLayer.forward) and mean_pool, as attend and
 *     sentence_embeddings use them, with heads switched off as mha.pretrained.heads.ablate_encoder_heads does
 *     (a head's output zeroed before W_o; ablated_embeddings) -> forward, whose linear layers and attention are
 *     ports/layers.js's (the weights' base64 and float16 are read by ports/bytes.js).
 * miniLMWorker(main), the text of the Web Worker that minilm.js starts, has no twin.
 * Tested by tests/unit/mha/pretrained/test_minilm.py (test_minilm_*), in mini-racer, against those functions:
 * on a small encoder with a small vocabulary in the fast lane, also as the worker's text alone, and on
 * all-MiniLM-L6-v2 itself (the book's corpus, odd input, a sample of Unicode) in the slow one.
 *
 * The port is one function, miniLM(), that returns the functions: minilm.js calls it on the page (the tokenizer)
 * and also starts a Web Worker (the encoder) from the text miniLMWorker makes of it and of the ports it calls,
 * so its body may use nothing from outside but ports/bytes.js and ports/layers.js. A port: a classic script
 * adding to globalThis.mhaFrontEnd, strict, no top-level binding, no DOM.
 *
 * Shape legend: n tokens, d_model 384, h 12 heads, d_k 32, d_ff 1536, L 6 layers.
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});

  function miniLM() {
    "use strict"; // also when its text runs on its own, in the worker

    const { linear, scaledDotProductAttention } = globalThis.mhaFrontEnd; // ports/layers.js, in the worker too

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
    /** The tokens of a sentence, [CLS] and [SEP] included and cut to maxTokens as the tokenizer truncates;
     * ids by `vocab` (a Map token -> id); total: the tokens before the cut; unknown: the words (normalised)
     * that became [UNK]. */
    function tokenize(text, vocab, maxTokens) {
      const words = preTokenize(normalize(text));
      let pieces = [];
      const unknown = [];
      for (const w of words) {
        const p = wordPiece(w, vocab);
        if (p[0] === "[UNK]") unknown.push(w);
        pieces = pieces.concat(p);
      }
      const total = pieces.length + 2, keep = maxTokens - 2;
      const tokens = ["[CLS]"].concat(pieces.slice(0, keep), ["[SEP]"]);
      return { tokens, ids: tokens.map((t) => vocab.get(t)), truncated: total > maxTokens, total, unknown };
    }

    // -- the forward pass
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
    /**
     * The encoder on one sentence's token ids: {attention: [L][h][n][n] (if wantAttention), embedding: the
     * normalised mean of the last layer's token vectors (d_model,)}. model = {config: {d_model, h, d_ff,
     * layers, eps}, W: {name: Float32Array, row-major}}, the parameters by MiniLMEncoder's names; off: a Set of
     * layer * h + head, the heads whose output is zeroed before W_o (ablate_encoder_heads).
     */
    function forward(model, ids, off, wantAttention) {
      const W = model.W, c = model.config, n = ids.length, d = c.d_model, h = c.h, dk = d / h, dff = c.d_ff;
      const x = new Float32Array(n * d); // (n, d_model): word + position + segment A, then LayerNorm
      const we = W["word_embeddings.weight"], pe = W["position_embeddings.weight"];
      const te = W["token_type_embeddings.weight"];
      for (let i = 0; i < n; i++) {
        for (let k = 0; k < d; k++) x[i * d + k] = we[ids[i] * d + k] + pe[i * d + k] + te[k];
      }
      layerNorm(x, n, d, W["embedding_norm.weight"], W["embedding_norm.bias"], c.eps);
      const attention = [];
      let hid = x;
      for (let l = 0; l < c.layers; l++) {
        const p = "layers." + l + ".";
        const dense = (input, name, dIn) => // nn.Linear `name` of this layer, in float32
          linear(input, W[p + name + ".weight"], W[p + name + ".bias"], dIn, Float32Array);
        const q = dense(hid, "attn.W_q", d), k = dense(hid, "attn.W_k", d), v = dense(hid, "attn.W_v", d); // (n, h d_k)
        const isOff = (j) => off.has(l * h + j); // a head switched off: its output is zeroed before W_o
        const heads = scaledDotProductAttention(q, k, v, h, dk, { off: isOff, Out: Float32Array });
        if (wantAttention) attention.push(heads.weights); // (h, n, n)
        const a = dense(heads.out, "attn.W_o", d); // (n, d_model), from the heads side by side
        for (let t = 0; t < n * d; t++) a[t] += hid[t];
        layerNorm(a, n, d, W[p + "norm_1.weight"], W[p + "norm_1.bias"], c.eps); // x = LN(x + MultiHead(x))
        const f = dense(a, "W_1", d); // (n, d_ff)
        for (let t = 0; t < f.length; t++) f[t] = 0.5 * f[t] * (1 + erf(f[t] / Math.SQRT2)); // exact GELU
        const y = dense(f, "W_2", dff); // (n, d_model)
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

    return { normalize, preTokenize, wordPiece, tokenize, forward };
  }

  /** The text of a Web Worker's script (a worker from a Blob URL: one from a file does not start from file://):
   * the ports the encoder calls (ports/bytes.js, ports/layers.js), then main(self, miniLM()). */
  function miniLMWorker(main) {
    return `(${ns.bytesPort})(self);\n(${ns.layersPort})(self);\n(${main})(self, (${miniLM})());\n`;
  }

  Object.assign(ns, { miniLM, miniLMWorker });
})(globalThis);
