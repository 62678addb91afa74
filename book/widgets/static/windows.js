/* mha front end, the window explorer: local (sliding-window) and global layers, what each sees and caches.
 *
 * Needs core.js, controller.js and heatmaps.js first. The page computes everything, in integers, with the port
 * ports/windows.js (book.compute.since_2017's layer_masks and receptive_fields); this file draws it. The
 * controls, bounds, defaults and messages come from Python with the settings (book/widgets/windows.py,
 * book.widgets.spec.windows_spec), and controller.js mounts them:
 *
 *   <div class="mha-windows">
 *     <script type="application/json">{
 *       "spec": {...},                                  book.widgets.spec.windows_spec()
 *       "settings": {"n": 16, "window": 4, "layers": 6, "global_period": 3, "layer": 6}
 *     }</script>
 *   </div>
 *
 * el.mha = {settings, update(settings) -> {masks (L, n, n), seen (L, n, n): booleans, cached, full}}, where
 * cached = sum over layers of the tokens a layer keeps after n tokens (min(n, window) local, n global) and
 * full = n L, what the cache would hold with global layers only. Tokens are counted from 1, as the chapter
 * counts them; the two panels answer yes or no (a key of two colours, not a scale); the focused picture
 * reads out the cell the arrow keys choose, in both panels; it redraws at its new width when that changes.
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});
  const { make } = ns;

  function mountWindows(el, config, options) {
    const spec = config.spec, m = spec.messages;
    let result = null;
    let layout = null; // what drawHeatmaps laid out
    const ctl = ns.controller(spec, config, options, { refresh });
    const { c, status } = ctl;

    el.classList.add("mha-windows");
    el.replaceChildren();
    const help = make("p", { className: "mha-help", id: ns.uniqueId("mha-help") }, m.help);
    const canvas = make("canvas", { className: "mha-canvas", tabIndex: 0, role: "img", "aria-describedby": help.id });
    const readout = make("p", { className: "mha-readout", "aria-live": "polite" });
    el.append(
      make("div", { className: "mha-controls" }, spec.controls.map((k) => ns.labelled(spec, c, k.name))),
      status, make("div", { className: "mha-figure" }, canvas), readout, help);
    let selected = null; // the cell read out: {panel, row, col}

    const kindOf = (state) => (state.global_period > 0 && state.layer % state.global_period === 0
      ? m.kind_global : ns.format(m.kind_local, { window: state.window }));

    function draw() {
      const state = ctl.state, l = state.layer - 1, n = state.n;
      const labels = Array.from({ length: n }, (_, i) => String(i + 1));
      const ones = Array.from({ length: n }, () => new Array(n).fill(1));
      const kind = kindOf(state);
      const maxWidth = Math.max(300, canvas.parentElement.clientWidth || el.clientWidth || 720);
      // Both panels on a line if they fit; on a slide (text scaled up, k > 1) at most 320 px tall, so that the
      // controls, the status and the picture fit the slide at the hall's text size.
      const k = parseFloat(getComputedStyle(canvas).getPropertyValue("--mha-text-scale")) || 1;
      const tallest = k > 1 ? Math.floor(320 / n) : 22;
      const cell = Math.max(8, Math.min(tallest, Math.floor((maxWidth - 130) / (2 * n))));
      layout = ns.drawHeatmaps(canvas, {
        panels: [
          { title: ns.format(m.panel_mask, { layer: state.layer, kind }), values: ones, mask: result.masks[l] },
          { title: ns.format(m.panel_seen, { layer: state.layer }), values: ones, mask: result.seen[l] },
        ],
        rowLabels: labels, colLabels: labels, rowName: m.rows, colName: m.cols,
        lo: 0, hi: 1, cell: [cell, cell], maxWidth, format: null,
        selected, groups: null, scaleLabel: null, swatches: [{ t: 1, text: m.scale }], maskKey: m.masked,
      });
      canvas.setAttribute("aria-label", ns.format(m.picture, { layer: state.layer, kind, n }));
      say(selected);
    }

    /** The read-out of one cell, both panels: may the token attend to the key, has it seen that input. */
    function say(cell) {
      if (!cell) { readout.textContent = ""; return; }
      const state = ctl.state, l = state.layer - 1, { row, col } = cell;
      const answer = (yes) => (yes ? m.scale : m.masked);
      readout.textContent = ns.format(m.cell, { layer: state.layer, kind: kindOf(state), row: row + 1, col: col + 1,
        may: answer(result.masks[l][row][col]), seen: answer(result.seen[l][row][col]) });
    }

    function refresh() {
      result = ns.windowsCompute(ctl.state);
      if (selected && (selected.row >= ctl.state.n || selected.col >= ctl.state.n)) selected = null;
      ctl.sync();
      draw();
      // The status is written only here, so a redraw (a focus, a theme, a width) keeps a box's warning.
      const state = ctl.state, first = result.seen[state.layer - 1][state.n - 1].indexOf(true) + 1;
      const notes = Object.values(ctl.notes); // what followed the reader's change (the layer shown)
      const summary = ns.format(m.summary, { layer: state.layer, n: state.n, first, layers: state.layers, cached: result.cached, full: result.full });
      ns.setStatus(status, [...notes, summary].join(" "), "");
      return { masks: result.masks, seen: result.seen, cached: result.cached, full: result.full };
    }

    ns.heatmapReadout(el, canvas, { // the pointer, a tap, the arrow keys; Page Up/Down: the other panel
      layout: () => layout, selected: () => selected, say, draw,
      select(cell) { selected = cell; draw(); },
      clear() { selected = null; draw(); },
      size: () => result && { panels: 2, n: ctl.state.n },
    });

    const api = ctl.expose(el, {
      /** Where the panels and every text are, in CSS pixels of the canvas (see heatmaps.js). */
      get layout() { return ns.layoutView(layout); },
      canvas,
    });
    refresh();
    return api;
  }

  ns.mountWindows = mountWindows;
  ns.autoMount("mha-windows", mountWindows);
})(globalThis);
