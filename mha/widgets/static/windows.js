/* mha front end, the window explorer: local (sliding-window) and global layers, what each sees and caches.
 *
 * Needs core.js and heatmaps.js first. The page computes everything, in integers: a port of
 * mha/compute/since_2017.py (layer_masks, receptive_fields), which tests/test_site_since_2017.py keeps
 * equal to the Python. The controls, bounds, defaults and messages come from Python with the settings
 * (mha/widgets/windows.py, mha.widgets.spec.windows_spec), and controller.js mounts them:
 *
 *   <div class="mha-windows">
 *     <script type="application/json">{
 *       "spec": {...},                                  mha.widgets.spec.windows_spec()
 *       "settings": {"n": 16, "window": 4, "layers": 6, "global_period": 3, "layer": 6}
 *     }</script>
 *   </div>
 *
 * Layer i (1-based) is global iff global_period > 0 and i % global_period == 0; a local layer lets query i
 * see keys j with i - window < j <= i, a global one every j <= i. After layer l, position i has seen input j
 * iff some key its mask allows had seen j after layer l - 1 (seen_l = mask_l @ seen_{l-1}, boolean).
 *
 * el.mha = {settings, update(settings) -> {masks (L, n, n), seen (L, n, n): booleans, cached, full}}, where
 * cached = sum over layers of the tokens a layer keeps after n tokens (min(n, window) local, n global) and
 * full = n L, what the cache would hold with global layers only.
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});
  const { make } = ns;

  /** The masks of a stack: L arrays of n rows of n booleans (mha.compute.since_2017.layer_masks). */
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

  /** What each position has seen after each layer (mha.compute.since_2017.receptive_fields). */
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

  function windowsCompute(s) {
    const masks = layerMasks(s.n, s.window, s.layers, s.global_period);
    let cached = 0;
    for (let l = 1; l <= s.layers; l++) {
      cached += s.global_period > 0 && l % s.global_period === 0 ? s.n : Math.min(s.n, s.window);
    }
    return { masks, seen: receptiveFields(masks), cached, full: s.n * s.layers };
  }

  function mountWindows(el, config, options) {
    const spec = config.spec, m = spec.messages;
    let result = null;
    let layout = null; // what drawHeatmaps laid out
    const ctl = ns.controller(spec, config, options, { refresh });
    const { c, status } = ctl;

    el.classList.add("mha-windows");
    el.replaceChildren();
    const canvas = make("canvas", { className: "mha-canvas", role: "img" });
    el.append(
      make("div", { className: "mha-controls" }, spec.controls.map((k) => ns.labelled(spec, c, k.name))),
      status, make("div", { className: "mha-figure" }, canvas));

    function draw() {
      const state = ctl.state, l = state.layer - 1, n = state.n;
      const labels = Array.from({ length: n }, (_, i) => String(i + 1));
      const ones = Array.from({ length: n }, () => new Array(n).fill(1));
      const global = state.global_period > 0 && state.layer % state.global_period === 0;
      const kind = global ? m.kind_global : ns.format(m.kind_local, { window: state.window });
      const cell = Math.max(8, Math.min(22, Math.floor(300 / n)));
      layout = ns.drawHeatmaps(canvas, {
        panels: [
          { title: `layer ${state.layer} (${kind}): may attend`, values: ones, mask: result.masks[l] },
          { title: `after layer ${state.layer}: has seen input`, values: ones, mask: result.seen[l] },
        ],
        rowLabels: labels, colLabels: labels, rowName: "token", colName: "key / input token",
        lo: 0, hi: 1, cell: [cell, cell], maxWidth: Math.max(300, canvas.parentElement.clientWidth || el.clientWidth || 720), format: null,
        selected: null, groups: null, scaleLabel: "yes", maskKey: true,
      });
      const last = result.seen[l][n - 1];
      const first = last.indexOf(true) + 1;
      canvas.setAttribute("aria-label", `Layer ${state.layer}, ${kind}: its mask and what each of ${n} tokens has seen`);
      ns.setStatus(status, ns.format(m.summary, { layer: state.layer, n, first, layers: state.layers, cached: result.cached, full: result.full }), "");
    }

    function refresh() {
      result = windowsCompute(ctl.state);
      ctl.sync();
      draw();
      return { masks: result.masks, seen: result.seen, cached: result.cached, full: result.full };
    }

    const api = ctl.expose(el, {
      /** Where the panels and every text are, in CSS pixels of the canvas (see heatmaps.js). */
      get layout() {
        return layout && { width: layout.width, height: layout.height, boxes: layout.boxes, angle: layout.angle, cw: layout.cw };
      },
      canvas,
    });
    ns.onThemeChange(draw);
    refresh();
    return api;
  }

  Object.assign(ns, { mountWindows, layerMasks, receptiveFields, windowsCompute });
  ns.autoMount("mha-windows", mountWindows);
})(globalThis);
