/* mha front end, PORT of book/compute/portable_random.py: the counter-based generator of the head explorer.
 *
 * Python twins (book.compute.portable_random): mix32 -> mix32, text_word -> textWord, stream_key -> streamKey,
 * uniform -> uniform. Only 32-bit integer arithmetic (Math.imul is multiplication mod 2**32), so the two
 * languages agree bit for bit. Tested by tests/unit/book/compute/test_portable_random.py (test_random_*), in
 * mini-racer, against those functions. Needs ports/bytes.js (utf8Bytes) when called.
 *
 * A port: a classic script adding to globalThis.mhaFrontEnd, strict, no top-level binding, no DOM.
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});
  const MASK32 = 0xffffffff;
  const GOLDEN = 0x9e3779b9; // 2**32 / golden ratio

  /** lowbias32: a bijective hash of a 32-bit value. */
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
    for (const byte of ns.utf8Bytes(text)) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
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

  Object.assign(ns, { mix32, textWord, streamKey, uniform });
})(globalThis);
