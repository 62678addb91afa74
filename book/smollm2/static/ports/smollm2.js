/* mha front end, PORT of book/smollm2/stored.py's prompt_scores, for the figure mha-smollm2 (smollm2.js).
 *
 * Python twin: book.smollm2.stored.prompt_scores -> smolScores (not rounded). Each head's scores on one text:
 * sink (mean weight on position 0) and previous (on position i - 1), over rows 1..n-1; induction, over the
 * rows i whose token occurred before, the mean of the weight on the positions just after its earlier
 * occurrences (j + 1 for ids[j] == ids[i], j + 1 < i), or null if no token repeats. Tested by
 * tests/unit/book/smollm2/test_stored.py, in mini-racer, against that function.
 *
 * A port: a classic script adding to globalThis.mhaFrontEnd, strict, no top-level binding, no DOM.
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});

  /** {sink, previous, induction}: each (L, h) nested arrays, induction null if no token of `ids` repeats.
   * attention[layer][head][query][key], causal; ids: the n token ids (n >= 2). */
  function smolScores(attention, ids) {
    const n = ids.length;
    if (n < 2) throw new RangeError(`ids must hold n >= 2 tokens, got ${n}`);
    const after = []; // after[i]: the positions j + 1 just after an earlier occurrence of token i
    for (let i = 0; i < n; i++) {
      const here = [];
      for (let j = 0; j + 1 < i; j++) if (ids[j] === ids[i]) here.push(j + 1);
      after.push(here);
    }
    const repeated = after.filter((a) => a.length).length;
    const out = { sink: [], previous: [], induction: repeated ? [] : null };
    for (const heads of attention) {
      const sink = [], previous = [], induction = [];
      for (const rows of heads) {
        let s = 0, p = 0, d = 0;
        for (let i = 1; i < n; i++) { s += rows[i][0]; p += rows[i][i - 1]; }
        for (let i = 0; i < n; i++) for (const k of after[i]) d += rows[i][k];
        sink.push(s / (n - 1));
        previous.push(p / (n - 1));
        induction.push(repeated ? d / repeated : null);
      }
      out.sink.push(sink);
      out.previous.push(previous);
      if (out.induction) out.induction.push(induction);
    }
    return out;
  }

  Object.assign(ns, { smolScores });
})(globalThis);
