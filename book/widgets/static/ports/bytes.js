/* mha front end, PORT of the byte formats Python writes for the page.
 *
 * Python twins:
 *   str.encode("utf-8")    as book.compute.portable_random.text_word reads a token              -> utf8Bytes
 *   base64.b64encode       as book.widgets.frontend.tensor_json and book.minilm.page
 *                          (weights_payload, word_shard) write tensors                         -> base64Bytes
 *   numpy "<f4" bytes      book.widgets.frontend.tensor_json and the widgets' `drawn` arrays
 *                          (HeadExplorer.payload, EncoderExplorer.payload, MiniLMWidget.compute) -> float32s
 * (The float16 of the MiniLM weights is read by ports/minilm.js, whose worker cannot see this file.)
 * Tested by tests/unit/test_ports.py (test_bytes_*), in mini-racer, against those Python functions.
 *
 * A port is a classic script that adds to globalThis.mhaFrontEnd, in strict mode, with no top-level binding
 * (so it is also valid inside the ES module that book/widgets/frontend.py concatenates for a live widget); it
 * touches no DOM and no browser API (no TextEncoder, no atob): it runs in a JavaScript engine alone.
 */
(function (root) {
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
  const SIXES = new Int16Array(128).fill(-1); // a base64 character -> its 6 bits
  for (let i = 0; i < 64; i++) SIXES[ALPHABET.charCodeAt(i)] = i;

  /** The bytes of standard base64 text (ending in "=" or "==" or not); throws on any other character. */
  function base64Bytes(text) {
    const body = text.replace(/=+$/, "");
    if (body.length % 4 === 1) throw new RangeError(`base64 text of ${text.length} characters is cut short`);
    const out = new Uint8Array(Math.floor((body.length * 3) / 4));
    let bits = 0, count = 0, j = 0;
    for (let i = 0; i < body.length; i++) {
      const code = body.charCodeAt(i), six = code < 128 ? SIXES[code] : -1;
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

  Object.assign(ns, { utf8Bytes, base64Bytes, float32s });
})(globalThis);
