/* mha front end, the sparse-attention figure: a lightning indexer's scores and the keys each query keeps.
 *
 * Needs core.js, controller.js and heatmaps.js first. The page computes everything with the port
 * ports/sparse.js (book.compute.attention_2026.index_selection, mha.costs.sparse.causal_pairs); this file
 * draws it. The controls, bounds, defaults and messages come from Python with the settings
 * (book/widgets/sparse.py, book.widgets.spec.sparse_spec), and controller.js mounts them:
 *
 *   <div class="mha-sparse">
 *     <script type="application/json">{"spec": {...}, "settings": {"sentence": "...", "top_k": 4, "seed": 0}}</script>
 *   </div>
 *
 * el.mha = {settings, update(settings) -> {tokens, scores (n, n; null above the diagonal), selected (n, n), k,
 * kept, pairs}}: kept = the pairs the queries keep, pairs = n (n + 1) / 2, those dense attention scores.
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});
  const { make } = ns;

  function mountSparse(el, config, options) {
    const spec = config.spec, m = spec.messages;
    let result = null, layout = null, selected = null;
    const ctl = ns.controller(spec, config, options, { refresh });
    const { c, status } = ctl;

    el.classList.add("mha-sparse");
    el.replaceChildren();
    const help = make("p", { className: "mha-help", id: ns.uniqueId("mha-help") }, m.help);
    const canvas = make("canvas", { className: "mha-canvas", tabIndex: 0, role: "img", "aria-describedby": help.id });
    const readout = make("p", { className: "mha-readout", "aria-live": "polite" });
    el.append(make("div", { className: "mha-controls" }, spec.controls.map((k) => ns.labelled(spec, c, k.name))),
      status, make("div", { className: "mha-figure" }, canvas), readout, help);

    function draw() {
      if (!result) return;
      const n = result.tokens.length, visible = result.scores.map((row) => row.map((v) => v !== -Infinity));
      const seen = result.scores.flat().filter((v) => v !== -Infinity);
      const lo = Math.min(...seen), hi = Math.max(...seen);
      const values = result.scores.map((row) => row.map((v) => (v === -Infinity ? lo : v)));
      const maxWidth = Math.max(300, canvas.parentElement.clientWidth || el.clientWidth || 720);
      layout = ns.drawHeatmaps(canvas, {
        panels: [
          { title: m.panel_scores, values, mask: visible },
          { title: ns.format(m.panel_kept, { k: result.k }), shortTitles: [ns.format(m.panel_kept_short, { k: result.k })],
            values, mask: result.selected },
        ],
        rowLabels: result.tokens, colLabels: result.tokens, rowName: m.rows, colName: m.cols,
        lo, hi: hi > lo ? hi : lo + 1, cell: [22, 22], oneLine: 12, maxWidth, format: null,
        selected, groups: null, scaleLabel: m.scale, maskKey: m.masked,
      });
      canvas.setAttribute("aria-label", ns.format(m.picture, { n, k: result.k, tokens: result.tokens.join(" ") }));
      say(selected);
    }

    /** The read-out of one cell: the query, the key, its index score and whether the query keeps it. */
    function say(cell) {
      if (!cell || !result) { readout.textContent = ""; return; }
      const { row, col } = cell, t = result.tokens, score = result.scores[row][col];
      const where = { query: t[row], row: row + 1, key: t[col], col: col + 1 };
      if (score === -Infinity) { readout.textContent = ns.format(m.cell_later, where); return; }
      const rank = 1 + result.scores[row].filter((v, s) => v > score || (v === score && s < col)).length;
      readout.textContent = ns.format(m.cell, Object.assign(where, { score: score.toFixed(3),
        kept: result.selected[row][col] ? m.kept : m.dropped, rank, seen: row + 1 }));
    }

    /** Recompute and redraw for the state, and say what the picture shows. Only here is the status line
     * written: a redraw (a focus, a theme, a width) keeps what it says, a number box's warning included. */
    function refresh() {
      const n = ns.splitTokens(ctl.state.sentence).length;
      if (n === 0 || n > spec.max_tokens) { // the reader's input: say so, keep the last picture and its slider
        ctl.sync({ tokens: result ? result.tokens.length : 1 });
        const message = n === 0 ? m.no_tokens : ns.format(m.too_long, { n, limit: spec.max_tokens });
        ns.setStatus(status, message + m.still, "warning");
        return null;
      }
      ctl.sync({ tokens: n });
      result = ns.sparseCompute(ctl.state, spec);
      if (selected && (selected.row >= n || selected.col >= n)) selected = null;
      draw();
      const share = ((100 * result.kept) / result.pairs).toFixed(0);
      ns.setStatus(status, ns.format(m.summary, { k: result.k, n, kept: result.kept, pairs: result.pairs, share }), "");
      return { tokens: result.tokens, scores: result.scores.map((row) => row.map((v) => (v === -Infinity ? null : v))),
        selected: result.selected, k: result.k, kept: result.kept, pairs: result.pairs };
    }

    ns.heatmapReadout(el, canvas, {
      layout: () => layout, selected: () => selected, say, draw,
      select(cell) { selected = cell; draw(); },
      size: () => result && { panels: 2, n: result.tokens.length },
    });
    const api = ctl.expose(el, {
      get layout() { return ns.layoutView(layout); },
      canvas,
    });
    refresh();
    return api;
  }

  ns.mountSparse = mountSparse;
  ns.autoMount("mha-sparse", mountSparse);
})(globalThis);
