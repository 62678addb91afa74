/* mha front end, PORT of the byte formats Python writes for the page.
 *
 * Python twins:
 *   str.encode("utf-8")    as book.compute.portable_random.text_word reads a token              -> utf8Bytes
 *   base64.b64encode       as book.widgets.frontend.tensor_json, book.minilm.page (weights_payload,
 *                          word_shard) and book.decoder.page.weights_payload write tensors     -> base64Bytes
 *   numpy "<f4" bytes      book.widgets.frontend.tensor_json and the widgets' `drawn` arrays
 *                          (HeadExplorer.payload, MiniLMWidget.compute)                        -> float32s
 *   numpy "<f2" bytes      the float16 weights of book.minilm.page and book.decoder.page          -> float16s
 * Tested by tests/unit/book/widgets/test_frontend.py (test_bytes_*), in mini-racer, against those Python
 * functions.
 *
 * A port is a classic script that adds to globalThis.mhaFrontEnd, in strict mode, with no top-level binding
 * (so it is also valid inside the ES module that book/widgets/frontend.py concatenates for a live widget); it
 * touches no DOM and no browser API (no TextEncoder, no atob): it runs in a JavaScript engine alone. Its one
 * function, bytesPort, is also its text for a Web Worker (ports/minilm.js's miniLMWorker): `(${bytesPort})(self)`.
 */
(function bytesPort(root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});

  /** The UTF-8 bytes of a string, as TextEncoder gives them (a lone surrogate becomes U+FFFD). */
  function utf8Bytes(text) {
    const out = [];
    for (const char of String(text)) { // by code point: a surrogate pair is one character
      let cp = char.codePointAt(0);
      if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
      if (cp < 0x80) out.push(cp);
      else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 63));
      else if (cp < 0x10000) out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
      else out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
    }
    return Uint8Array.from(out);
  }

  const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const SIXES = new Int8Array(65536).fill(-1); // a UTF-16 code unit -> its 6 bits, -1 if not base64
  for (let i = 0; i < 64; i++) SIXES[ALPHABET.charCodeAt(i)] = i;

  /** The bytes of standard base64 text (ending in "=" or "==" or not); throws on any other character. */
  function base64Bytes(text) {
    const body = text.replace(/=+$/, "");
    if (body.length % 4 === 1) throw new RangeError(`base64 text of ${text.length} characters is cut short`);
    const out = new Uint8Array(Math.floor((body.length * 3) / 4));
    let bits = 0, count = 0, i = 0, j = 0;
    for (; i + 3 < body.length; i += 4) { // four characters -> three bytes, while all four are base64
      const a = SIXES[body.charCodeAt(i)], b = SIXES[body.charCodeAt(i + 1)];
      const c = SIXES[body.charCodeAt(i + 2)], d = SIXES[body.charCodeAt(i + 3)];
      if ((a | b | c | d) < 0) break; // the loop below says which character
      const v = (a << 18) | (b << 12) | (c << 6) | d;
      out[j++] = v >> 16; out[j++] = (v >> 8) & 255; out[j++] = v & 255;
    }
    for (; i < body.length; i++) { // the last two or three characters, or from a wrong one on
      const six = SIXES[body.charCodeAt(i)];
      if (six < 0) throw new RangeError(`base64 text holds ${JSON.stringify(body[i])} at ${i}`);
      bits = (bits << 6) | six;
      count += 6;
      if (count >= 8) {
        count -= 8;
        out[j++] = (bits >> count) & 255;
      }
    }
    return out;
  }

  /** Float32 values from little-endian bytes (DataView, ArrayBuffer or typed array), as float64 numbers. */
  function float32s(buffer) {
    if (buffer == null) return null;
    const view = buffer instanceof DataView ? buffer
      : ArrayBuffer.isView(buffer) ? new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength)
      : new DataView(buffer);
    const out = new Float64Array(view.byteLength / 4);
    for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(4 * i, true);
    return out;
  }

  let HALF = null; // float16 bits -> its value, a table of all 65536, built on first use

  /** Float16 values from little-endian bytes (an ArrayBuffer or a Uint8Array), as a Float32Array. */
  function float16s(bytes) {
    if (!HALF) {
      HALF = new Float32Array(65536);
      for (let b = 0; b < 65536; b++) {
        const s = b & 0x8000 ? -1 : 1, e = (b >> 10) & 0x1f, m = b & 0x3ff;
        HALF[b] = e === 0 ? s * m * 2 ** -24 : e === 31 ? (m ? NaN : s * Infinity) : s * (1 + m / 1024) * 2 ** (e - 15);
      }
    }
    const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes), out = new Float32Array(u8.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = HALF[u8[2 * i] | (u8[2 * i + 1] << 8)];
    return out;
  }

  Object.assign(ns, { utf8Bytes, base64Bytes, float32s, float16s, bytesPort });
})(globalThis);
