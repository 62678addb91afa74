/* mha front end, PORT of book/compute/since_2017.py's masks of local and global layers, for the window explorer.
 *
 * Python twins (book.compute.since_2017): layer_masks -> layerMasks (global_period 0 for None), receptive_fields
 * -> receptiveFields; windowsCompute adds the entries the stack caches, layer_masks(...)[:, -1].sum(). Every
 * number is a small integer or a boolean, the same in both languages. Tested by
 * tests/unit/book/compute/test_since_2017.py (test_windows_*), in mini-racer, against those functions on the
 * cases of the browser tests.
 *
 * Layer i (1-based) is global iff global_period > 0 and i % global_period == 0; a local layer lets query i
 * see keys j with i - window < j <= i, a global one every j <= i. After layer l, input j reaches position i
 * iff some key its mask allows had seen j after layer l - 1 (seen_l = mask_l @ seen_{l-1}, boolean).
 *
 * A port: a classic script adding to globalThis.mhaFrontEnd, strict, no top-level binding, no DOM.
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});

  /** The masks of a stack: L arrays of n rows of n booleans (book.compute.since_2017.layer_masks). */
  function layerMasks(n, window, layers, period) {
    const masks = [];
    for (let l = 1; l <= layers; l++) {
      const global = period > 0 && l % period === 0;
      const rows = [];
      for (let i = 0; i < n; i++) {
        const row = [];
        for (let j = 0; j < n; j++) row.push(j <= i && (global || i - j < window));
        rows.push(row);
      }
      masks.push(rows);
    }
    return masks; // (L, n, n)
  }

  /** What each position has seen after each layer (book.compute.since_2017.receptive_fields). */
  function receptiveFields(masks) {
    const seen = [masks[0]];
    for (let l = 1; l < masks.length; l++) {
      const prev = seen[l - 1], mask = masks[l], n = mask.length;
      seen.push(mask.map((row) => {
        const out = new Array(n).fill(false);
        for (let k = 0; k < n; k++) if (row[k]) for (let j = 0; j < n; j++) out[j] = out[j] || prev[k][j];
        return out;
      }));
    }
    return seen; // (L, n, n)
  }

  /**
   * What the window explorer shows for settings {n, window, layers, global_period}: the masks and what each
   * position has seen (L, n, n), the token entries the stack caches after n tokens (a layer keeps the keys
   * its last query may attend to: layer_masks(...)[:, -1].sum()), and n L, what global layers would keep.
   */
  function windowsCompute(s) {
    const masks = layerMasks(s.n, s.window, s.layers, s.global_period);
    const cached = masks.reduce((sum, mask) => sum + mask[s.n - 1].filter(Boolean).length, 0);
    return { masks, seen: receptiveFields(masks), cached, full: s.n * s.layers };
  }

  Object.assign(ns, { layerMasks, receptiveFields, windowsCompute });
})(globalThis);
