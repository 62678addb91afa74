/* mha front end, PORT of SmolLM2-135M-Instruct (mha/pretrained/smollm2.py) for "Run on your own text":
 * tokenizer, dequantisation and forward pass, on the GGUF file's own blocks.
 *
 * Python twins:
 *   mha.pretrained.smollm2.build_tokenizer (tokenizers' GPT-2 byte-level BPE from the file's tokens and merges,
 *     its control tokens special, matched whole) -> tokenizer(meta): encode, decode;
 *   gguf.quants.dequantize on Q4_1 and Q8_0 blocks (float16 scale and minimum, float32 arithmetic as numpy's)
 *     -> dequantize;
 *   mha.pretrained.smollm2.SmolLM2Decoder.forward (DecoderLayer.forward: RMSNorm, grouped-query attention with
 *     rotary positions, SwiGLU MLP), with heads switched off as heads_off does (a head's output zeroed before
 *     W_o), and predict / generate (top-5 of the softmax, greedy decoding with the KV cache)
 *     -> model(manifest, bytes): layer, forward, predict, generate.
 * smolLM2Worker(main), the text of the Web Worker that smollm2run.js starts, has no twin.
 * Tested by tests/unit/book/smollm2/test_weights.py, in mini-racer: the tokenizer id for id on hard texts,
 * dequantisation bit for bit on sampled blocks, one layer within 1e-5, all against the installed file.
 *
 * The weights stay in the file's blocks: a Q4_1 row is 18 blocks of 20 bytes (scale d, minimum m, 32 nibbles:
 * w = q d + m), a Q8_0 row 18 blocks of 34 bytes (scale d, 32 signed bytes: w = q d). A matrix times many
 * tokens decodes one row at a time into a buffer of 576 float32 values (as the Python weights are) and takes
 * its dot product with every token; one token (generation) skips the decoding: per block,
 * d * sum(q x) + m * sum(x) (Q4_1) or d * sum(q x) (Q8_0, the logits). llama.cpp stores the query and key rows of each head as neighbouring pairs, so
 * the rotary here turns neighbouring pairs (Python undoes the permutation and turns halves: the same scores).
 *
 * The port is one function, smolLM2(), that returns the functions; its body uses nothing from outside, so
 * that its text alone runs in the worker. A port: a classic script adding to globalThis.mhaFrontEnd, strict,
 * no top-level binding, no DOM.
 *
 * Shape legend: n tokens, n_k tokens attended to (the cached ones included), d_model 576, h 9 query heads,
 * h_kv 3 key/value heads, d_k 64, d_ff 1536, L 30 layers, V 49,152 tokens.
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});

  function smolLM2() {
    "use strict"; // also when its text runs on its own, in the worker

    // -- bytes: base64 (no atob in a port's engine), UTF-8 both ways (TextDecoder's replacement rules)
    const B64 = new Int16Array(128).fill(-1);
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".split("").forEach((c, i) => {
      B64[c.charCodeAt(0)] = i;
    });
    function base64Bytes(text) {
      let n = text.length;
      while (n > 0 && text[n - 1] === "=") n--;
      const out = new Uint8Array((n * 3) >> 2);
      let bits = 0, count = 0, j = 0;
      for (let i = 0; i < n; i++) {
        bits = (bits << 6) | B64[text.charCodeAt(i)];
        count += 6;
        if (count >= 8) {
          count -= 8;
          out[j++] = (bits >> count) & 255;
        }
      }
      return out;
    }
    function utf8Bytes(text) {
      const out = [];
      for (const c of text) {
        let cp = c.codePointAt(0);
        if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd; // a lone surrogate, as Python's "replace" would not take
        if (cp < 0x80) out.push(cp);
        else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 63));
        else if (cp < 0x10000) out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
        else out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
      }
      return out;
    }
    function utf8Text(bytes) {
      // The WHATWG decoder (and Rust's from_utf8_lossy): each maximal invalid subsequence becomes one U+FFFD.
      let out = "", i = 0;
      const n = bytes.length;
      while (i < n) {
        const b = bytes[i];
        if (b < 0x80) { out += String.fromCharCode(b); i++; continue; }
        let need = 0, cp = 0, lo = 0x80, hi = 0xbf;
        if (b >= 0xc2 && b <= 0xdf) { need = 1; cp = b & 31; }
        else if (b >= 0xe0 && b <= 0xef) {
          need = 2; cp = b & 15;
          if (b === 0xe0) lo = 0xa0;
          if (b === 0xed) hi = 0x9f;
        } else if (b >= 0xf0 && b <= 0xf4) {
          need = 3; cp = b & 7;
          if (b === 0xf0) lo = 0x90;
          if (b === 0xf4) hi = 0x8f;
        } else { out += "\ufffd"; i++; continue; }
        let j = i + 1, ok = true;
        for (let k = 0; k < need; k++, j++) {
          const c = bytes[j];
          if (j >= n || c < lo || c > hi) { ok = false; break; }
          cp = (cp << 6) | (c & 63);
          lo = 0x80; hi = 0xbf;
        }
        if (!ok) { out += "\ufffd"; i = j; continue; }
        out += String.fromCodePoint(cp);
        i = j;
      }
      return out;
    }

    // -- tokenizer: GPT-2's byte-level BPE, control tokens matched whole (leftmost, longest)
    const PRE = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
    function byteChars() {
      const bs = [];
      for (let b = 33; b <= 126; b++) bs.push(b);
      for (let b = 161; b <= 172; b++) bs.push(b);
      for (let b = 174; b <= 255; b++) bs.push(b);
      const cs = bs.slice();
      let extra = 0;
      for (let b = 0; b < 256; b++) {
        if (!bs.includes(b)) { bs.push(b); cs.push(256 + extra++); }
      }
      const toChar = new Array(256), toByte = new Map();
      bs.forEach((b, i) => { toChar[b] = String.fromCharCode(cs[i]); toByte.set(String.fromCharCode(cs[i]), b); });
      return { toChar, toByte };
    }
    function tokenizer(meta) {
      // meta: {tokens: [V strings], merges: ["a b", ...], control: [ids of the control tokens]}
      const vocab = new Map();
      meta.tokens.forEach((t, i) => vocab.set(t, i));
      const ranks = new Map();
      meta.merges.forEach((m, i) => ranks.set(m, i));
      const control = new Set(meta.control);
      const specials = meta.control.map((i) => meta.tokens[i]).sort((a, b) => b.length - a.length);
      const { toChar, toByte } = byteChars();
      const cache = new Map();
      function bpe(word) {
        if (cache.has(word)) return cache.get(word);
        let parts = Array.from(word);
        while (parts.length > 1) {
          let best = -1, rank = Infinity;
          for (let i = 0; i + 1 < parts.length; i++) {
            const r = ranks.get(parts[i] + " " + parts[i + 1]);
            if (r !== undefined && r < rank) { rank = r; best = i; }
          }
          if (best < 0) break;
          const a = parts[best], b = parts[best + 1], merged = [];
          for (let i = 0; i < parts.length; i++) {
            if (i + 1 < parts.length && parts[i] === a && parts[i + 1] === b) { merged.push(a + b); i++; }
            else merged.push(parts[i]);
          }
          parts = merged;
        }
        const ids = parts.map((p) => {
          const id = vocab.get(p);
          if (id === undefined) throw new Error(`the tokenizer has no token ${JSON.stringify(p)}`);
          return id;
        });
        if (cache.size < 50000) cache.set(word, ids);
        return ids;
      }
      function encodePlain(text, ids) {
        for (const match of text.matchAll(PRE)) {
          let word = "";
          for (const b of utf8Bytes(match[0])) word += toChar[b];
          for (const id of bpe(word)) ids.push(id);
        }
      }
      function encode(text) {
        const ids = [];
        let start = 0, i = 0;
        while (i < text.length) {
          let found = null;
          if (text[i] === "<" || specials.some((s) => s[0] === text[i])) {
            for (const s of specials) if (text.startsWith(s, i)) { found = s; break; }
          }
          if (found === null) { i++; continue; }
          if (i > start) encodePlain(text.slice(start, i), ids);
          ids.push(vocab.get(found));
          i += found.length;
          start = i;
        }
        if (start < text.length) encodePlain(text.slice(start), ids);
        return ids;
      }
      function decode(ids) {
        // tokenizers' ByteLevel decoder: special tokens as written, the others' characters back to bytes
        let out = "", bytes = [];
        for (const id of ids) {
          const t = meta.tokens[id];
          if (control.has(id)) {
            out += utf8Text(bytes) + t;
            bytes = [];
          } else {
            for (const c of t) {
              const b = toByte.get(c);
              if (b === undefined) bytes.push(...utf8Bytes(c));
              else bytes.push(b);
            }
          }
        }
        return out + utf8Text(bytes);
      }
      return { encode, decode, size: meta.tokens.length };
    }

    // -- dequantisation: the file's blocks to float32, as gguf.quants.dequantize computes them
    const F16 = new Float64Array(65536);
    for (let h = 0; h < 65536; h++) {
      const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, f = h & 1023;
      F16[h] = e === 0 ? s * f * 2 ** -24 : e === 31 ? (f ? NaN : s * Infinity) : s * (1 + f / 1024) * 2 ** (e - 15);
    }
    const BLOCK = 32, Q4_1 = 20, Q8_0 = 34; // weights per block; bytes per block
    const fr = Math.fround;
    function dequantizeRow(type, bytes, offset, out, count) {
      // `count` weights (a multiple of 32) of blocks from bytes[offset...] into out[0..count)
      let o = offset;
      if (type === "Q4_1") {
        for (let j = 0; j < count; j += BLOCK, o += Q4_1) {
          const d = F16[bytes[o] | (bytes[o + 1] << 8)], m = F16[bytes[o + 2] | (bytes[o + 3] << 8)];
          for (let k = 0; k < 16; k++) {
            const q = bytes[o + 4 + k];
            out[j + k] = fr(d * (q & 15)) + m; // out is float32: the sum rounds as numpy's
            out[j + k + 16] = fr(d * (q >> 4)) + m;
          }
        }
      } else if (type === "Q8_0") {
        for (let j = 0; j < count; j += BLOCK, o += Q8_0) {
          const d = F16[bytes[o] | (bytes[o + 1] << 8)];
          for (let k = 0; k < 32; k++) {
            const q = bytes[o + 2 + k];
            out[j + k] = d * (q > 127 ? q - 256 : q);
          }
        }
      } else throw new Error(`no dequantisation of ${type} blocks`);
      return out;
    }
    function rowBytes(type, count) {
      return (count / BLOCK) * (type === "Q4_1" ? Q4_1 : type === "Q8_0" ? Q8_0 : 4 * BLOCK);
    }
    function dequantize(type, bytes, rows, cols) {
      // a whole (rows, cols) tensor (for tests; the model never decodes a whole matrix)
      const out = new Float32Array(rows * cols), row = new Float32Array(cols), size = rowBytes(type, cols);
      for (let r = 0; r < rows; r++) out.set(dequantizeRow(type, bytes, r * size, row, cols), r * cols);
      return out;
    }

    // -- the model
    function model(manifest, bytes) {
      // manifest: {config: {...}, tensors: {gguf name: {type, shape: [cols, rows] as the file's, offset}}}
      const c = manifest.config;
      const D = c.d_model, H = c.h, HKV = c.n_kv_heads, DK = c.d_k, FF = c.d_ff, L = c.n_layers, V = c.vocab_size;
      const group = H / HKV;
      function tensor(name) {
        const t = manifest.tensors[name];
        if (!t) throw new Error(`the weights hold no tensor ${name}`);
        const cols = t.shape[0], rows = t.shape.length > 1 ? t.shape[1] : 1;
        if (t.type === "F32") {
          const copy = bytes.slice(t.offset, t.offset + 4 * cols * rows);
          return { type: t.type, rows, cols, values: new Float32Array(copy.buffer) };
        }
        return { type: t.type, rows, cols, offset: t.offset, stride: rowBytes(t.type, cols) };
      }
      const layers = [];
      for (let i = 0; i < L; i++) {
        const p = (n) => tensor(`blk.${i}.${n}.weight`);
        layers.push({
          norm1: p("attn_norm").values, q: p("attn_q"), k: p("attn_k"), v: p("attn_v"), o: p("attn_output"),
          norm2: p("ffn_norm").values, gate: p("ffn_gate"), up: p("ffn_up"), down: p("ffn_down"),
        });
      }
      const embed = tensor("token_embd.weight"), finalNorm = tensor("output_norm.weight").values;
      // rotary: neighbouring pairs (2i, 2i + 1) turned by position * theta^(-2i / d_k), float32 as Python's
      const freqs = new Float64Array(DK / 2);
      for (let i = 0; i < DK / 2; i++) freqs[i] = fr(1 / fr(c.theta ** fr((2 * i) / DK)));

      const row = new Float32Array(Math.max(D, FF)), sums = new Float64Array(Math.max(D, FF) / BLOCK);
      const signed = new Int8Array(bytes.buffer, bytes.byteOffset, bytes.length); // Q8_0's weights
      function linear(W, x, n) {
        // x (n, cols) row-major -> (n, rows)
        const { rows, cols, stride, offset, type } = W, y = new Float32Array(n * rows);
        if (n === 1 && type === "Q4_1") {
          const nb = cols / BLOCK;
          for (let b = 0; b < nb; b++) {
            let s = 0;
            for (let k = 0; k < BLOCK; k++) s += x[b * BLOCK + k];
            sums[b] = s;
          }
          for (let r = 0; r < rows; r++) {
            let o = offset + r * stride, acc = 0;
            for (let b = 0, j = 0; b < nb; b++, j += BLOCK, o += Q4_1) {
              let s = 0;
              for (let k = 0; k < 16; k++) {
                const q = bytes[o + 4 + k];
                s += (q & 15) * x[j + k] + (q >> 4) * x[j + k + 16];
              }
              acc += F16[bytes[o] | (bytes[o + 1] << 8)] * s + F16[bytes[o + 2] | (bytes[o + 3] << 8)] * sums[b];
            }
            y[r] = acc;
          }
          return y;
        }
        if (n === 1 && type === "Q8_0") { // one token's logits: per block, d * sum(q x)
          const nb = cols / BLOCK;
          for (let r = 0; r < rows; r++) {
            let o = offset + r * stride, acc = 0;
            for (let b = 0, j = 0; b < nb; b++, j += BLOCK, o += Q8_0) {
              let s = 0;
              for (let k = 0; k < BLOCK; k++) s += signed[o + 2 + k] * x[j + k];
              acc += F16[bytes[o] | (bytes[o + 1] << 8)] * s;
            }
            y[r] = acc;
          }
          return y;
        }
        for (let r = 0; r < rows; r++) {
          dequantizeRow(type, bytes, offset + r * stride, row, cols);
          let t = 0;
          for (; t + 4 <= n; t += 4) { // four tokens per pass over the row: a quarter of its loads
            let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
            const b0 = t * cols, b1 = b0 + cols, b2 = b1 + cols, b3 = b2 + cols;
            for (let k = 0; k < cols; k++) {
              const w = row[k];
              a0 += w * x[b0 + k];
              a1 += w * x[b1 + k];
              a2 += w * x[b2 + k];
              a3 += w * x[b3 + k];
            }
            y[t * rows + r] = a0;
            y[(t + 1) * rows + r] = a1;
            y[(t + 2) * rows + r] = a2;
            y[(t + 3) * rows + r] = a3;
          }
          for (; t < n; t++) {
            let acc = 0;
            const base = t * cols;
            for (let k = 0; k < cols; k++) acc += row[k] * x[base + k];
            y[t * rows + r] = acc;
          }
        }
        return y;
      }
      function rmsNorm(x, n, weight) {
        const y = new Float32Array(n * D);
        for (let t = 0; t < n; t++) {
          let s = 0;
          for (let k = 0; k < D; k++) s += x[t * D + k] * x[t * D + k];
          const scale = 1 / Math.sqrt(s / D + c.eps);
          for (let k = 0; k < D; k++) y[t * D + k] = x[t * D + k] * scale * weight[k];
        }
        return y;
      }
      function turn(x, n, heads, start) {
        // rotary on (n, heads * d_k) in place, positions start.. start + n - 1
        for (let t = 0; t < n; t++) {
          for (let i = 0; i < DK / 2; i++) {
            const angle = fr((start + t) * freqs[i]), cos = fr(Math.cos(angle)), sin = fr(Math.sin(angle));
            for (let hd = 0; hd < heads; hd++) {
              const a = t * heads * DK + hd * DK + 2 * i, x0 = x[a], x1 = x[a + 1];
              x[a] = x0 * cos - x1 * sin;
              x[a + 1] = x1 * cos + x0 * sin;
            }
          }
        }
      }
      function newCache(capacity) {
        const kv = [];
        for (let i = 0; i < L; i++) kv.push({ k: new Float32Array(capacity * HKV * DK), v: new Float32Array(capacity * HKV * DK) });
        return { layers: kv, end: 0, capacity };
      }
      function layer(i, x, n, cache, offSet, weights) {
        // one DecoderLayer: x (n, d_model), the tokens after cache.end; returns the new x. weights: null, or an
        // array receiving (h, n, n_k) Float32Arrays, one per head.
        const w = layers[i], start = cache.end, nk = start + n, kv = cache.layers[i];
        const y = rmsNorm(x, n, w.norm1);
        const q = linear(w.q, y, n), k = linear(w.k, y, n), v = linear(w.v, y, n);
        turn(q, n, H, start);
        turn(k, n, HKV, start);
        kv.k.set(k, start * HKV * DK);
        kv.v.set(v, start * HKV * DK);
        const a = new Float32Array(n * H * DK), scores = new Float64Array(nk), scale = 1 / Math.sqrt(DK);
        for (let hd = 0; hd < H; hd++) {
          const g = Math.floor(hd / group), p = weights ? new Float32Array(n * nk) : null;
          const off = offSet.has(i * H + hd);
          for (let t = 0; t < n; t++) {
            const last = start + t; // causal: keys 0..last
            let max = -Infinity;
            const qb = t * H * DK + hd * DK;
            for (let s = 0; s <= last; s++) {
              const kb = s * HKV * DK + g * DK;
              let dot = 0;
              for (let e = 0; e < DK; e++) dot += q[qb + e] * kv.k[kb + e];
              scores[s] = fr(dot * scale);
              if (scores[s] > max) max = scores[s];
            }
            let total = 0;
            for (let s = 0; s <= last; s++) { scores[s] = Math.exp(scores[s] - max); total += scores[s]; }
            for (let s = 0; s <= last; s++) scores[s] /= total;
            if (p) for (let s = 0; s <= last; s++) p[t * nk + s] = scores[s];
            if (off) continue; // its output zeroed before W_o
            const ab = t * H * DK + hd * DK;
            for (let s = 0; s <= last; s++) {
              const vb = s * HKV * DK + g * DK, ws = scores[s];
              for (let e = 0; e < DK; e++) a[ab + e] += ws * kv.v[vb + e];
            }
          }
          if (weights) weights.push(p);
        }
        const out = linear(w.o, a, n), x1 = new Float32Array(n * D);
        for (let j = 0; j < n * D; j++) x1[j] = x[j] + out[j];
        const z = rmsNorm(x1, n, w.norm2), gate = linear(w.gate, z, n), up = linear(w.up, z, n);
        for (let j = 0; j < n * FF; j++) gate[j] = (gate[j] / (1 + Math.exp(-gate[j]))) * up[j];
        const down = linear(w.down, gate, n);
        for (let j = 0; j < n * D; j++) x1[j] += down[j];
        return x1;
      }
      function embedTokens(ids) {
        const x = new Float32Array(ids.length * D), r = new Float32Array(D);
        ids.forEach((id, t) => x.set(dequantizeRow(embed.type, bytes, embed.offset + id * embed.stride, r, D), t * D));
        return x;
      }
      function offHeads(off) {
        const set = new Set();
        for (const [l, hd] of off || []) set.add(l * H + hd);
        return set;
      }
      function forward(ids, cache, off, needWeights, lastOnly) {
        // ids after cache.end -> {logits: (n or 1, V), attention: L arrays of h (n, n_k) or null}
        const n = ids.length, offSet = offHeads(off), attention = needWeights ? [] : null;
        if (cache.end + n > cache.capacity) throw new Error(`the cache holds ${cache.capacity} tokens`);
        let x = embedTokens(ids);
        for (let i = 0; i < L; i++) {
          const weights = needWeights ? [] : null;
          x = layer(i, x, n, cache, offSet, weights);
          if (needWeights) attention.push(weights);
        }
        cache.end += n;
        const rows = lastOnly ? 1 : n;
        const y = rmsNorm(lastOnly ? x.subarray((n - 1) * D) : x, rows, finalNorm);
        return { logits: linear(embed, y, rows), attention };
      }
      function topK(logits, t, k) {
        // the k most probable ids of position t, with their softmax probabilities, highest first
        const base = t * V;
        let max = -Infinity;
        for (let j = 0; j < V; j++) if (logits[base + j] > max) max = logits[base + j];
        let total = 0;
        const best = [];
        for (let j = 0; j < V; j++) {
          const l = logits[base + j];
          total += Math.exp(l - max);
          if (best.length < k || l > best[best.length - 1][1]) {
            best.push([j, l]);
            best.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
            if (best.length > k) best.pop();
          }
        }
        return best.map(([j, l]) => [j, Math.exp(l - max) / total]);
      }
      function predict(ids, off) {
        const cache = newCache(ids.length), { logits, attention } = forward(ids, cache, off, true, false);
        const top = ids.map((_, t) => topK(logits, t, 5));
        return { attention, top }; // attention[l][head]: Float32Array (n, n)
      }
      function argmax(logits) {
        let best = 0;
        for (let j = 1; j < logits.length; j++) if (logits[j] > logits[best]) best = j;
        return best;
      }
      function generate(ids, maxNew, off, onToken) {
        const cache = newCache(ids.length + maxNew), out = [];
        let { logits } = forward(ids, cache, off, false, true);
        for (;;) {
          out.push(argmax(logits));
          if (onToken) onToken(out[out.length - 1], out.length);
          if (out.length === maxNew || out[out.length - 1] === c.end_of_turn) return out;
          ({ logits } = forward([out[out.length - 1]], cache, off, false, true));
        }
      }
      return { layer, forward, predict, generate, newCache, embedTokens, linear, config: c };
    }

    return { base64Bytes, utf8Bytes, utf8Text, tokenizer, dequantize, dequantizeRow, model };
  }

  function smolLM2Worker(main) {
    return `(${main})(self, (${smolLM2})());\n`;
  }

  Object.assign(ns, { smolLM2, smolLM2Worker });
})(globalThis);
