/* mha front end, PORT of the stored attention maps read back, for the MiniLM box and the SmolLM2 figure.
 *
 * Python twin: book.compute.stored_maps.unpack -> unpackMaps (the bytes already inflated: core.js's
 * storedMaps inflates spec.stored.data with DecompressionStream, a browser API, then calls this). Every
 * weight is one byte q, the maps of all entries one after another in row-major order (L, h, n, n); a weight
 * reads back as q / scale in a Float32Array row. Tested by tests/unit/book/compute/test_stored_maps.py
 * (test_the_port_*), in mini-racer, against unpack.
 *
 * A port: a classic script adding to globalThis.mhaFrontEnd, strict, no top-level binding, no DOM.
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});

  /** The maps of `entries` (each with `tokens`) in `bytes`: one () => {tokens, attention} per entry, in their
   * order, attention[layer][head][query] a Float32Array of q / scale built on first call; a RangeError if the
   * bytes are not exactly the entries' L * H * n * n. */
  function unpackMaps(bytes, scale, entries, L, H) {
    const out = [];
    let start = 0;
    for (const { tokens } of entries) { // each L * H * n * n bytes, [layer][head][query][key]
      const n = tokens.length, at = start;
      let heads = null;
      out.push(() => {
        heads = heads || Array.from({ length: L }, (_, l) => Array.from({ length: H }, (_, hh) => Array.from(
          { length: n }, (_, i) => Float32Array.from(bytes.subarray(at + ((l * H + hh) * n + i) * n,
            at + ((l * H + hh) * n + i + 1) * n), (q) => q / scale))));
        return { tokens: tokens.slice(), attention: heads };
      });
      start += L * H * n * n;
    }
    if (start !== bytes.length) throw new RangeError(`the stored data holds ${bytes.length} weights, not ${start}`);
    return out;
  }

  Object.assign(ns, { unpackMaps });
})(globalThis);
