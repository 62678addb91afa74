/* mha front end, the cost calculator: attention parameters, multiply-adds and KV-cache memory of real models.
 *
 * Needs core.js and controller.js first (not heatmaps.js). Python computes what does not depend on the
 * settings, per model (mha.costs.calculator_data); the port ports/costs.js adds and multiplies those numbers
 * for a context, batch and dtype and fills the rows of mha.costs.report.cost_report; this file draws them.
 *
 *   <div class="mha-calculator">
 *     <script type="application/json">{...}</script>
 *   </div>
 *
 * (or a data-mha-config attribute; "</" written "<\/" in the JSON). The JSON:
 *
 *   {
 *     "spec": {...},     book.widgets.spec.calculator_spec(): the controls, their bounds, the dtypes' bytes,
 *                        the rows' labels and templates, messages
 *     "configs": [{"name": "Gemma 3 27B", "kind": "decoder", "context": 131072, "description": "...",
 *                  "layers": "52 local (window 1024) + 10 global: ..." or null, "n_layers": 62,
 *                  "params": "4095737856", "token_macs": "...", "key_macs": "...", "sequence_macs": "...",
 *                  "pair_macs": "...", "windows": [[52, 1024], [10, null]], "window": 1024, "uncounted": null,
 *                  "groups": [{"kind": "sliding", "width": 4096, "window": 1024, "count": 52, "label": "...",
 *                  ...}, ...], "mha_width": 8192}, ...],     mha.costs.calculator_data(); non-decoders are
 *                  skipped; the counts are null where mha.costs.uncounted_layers gives a reason
 *     "settings": {"model": "Llama 3.1 8B", "context": 4096, "batch": 1, "dtype": "bfloat16"}
 *   }
 *
 * el.mha = {settings, update(settings) -> {params, macs_per_token, macs_per_sequence, kv_cache_bytes,
 * kv_cache_bytes_as_mha, kv_cache_bytes_all_global (BigInt each, the first three null where not counted),
 * rows: [[label, value], ...]}}.
 *
 * Live mode (options.live, set by the anywidget adapter in core.js): Python computes (mha.costs.cost_rows)
 * and is in charge. A reader's change is drawn at once from the port (ports/costs.js), then sent with
 * onChange(settings); el.mha.show(drawn) draws what Python sends, drawn = {rows: [[label, value], ...],
 * numbers: {params, macs_per_token, ...: decimal strings}, message}, in place of the page's rows.
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});
  const { make } = ns;

  function mountCalculator(el, config, options) {
    options = options || {};
    const live = Boolean(options.live);
    const spec = config.spec;
    const configs = config.configs.filter((m) => (m.kind || "decoder") === "decoder");
    const byName = new Map(configs.map((m) => [m.name, m]));
    let result = null;
    const ctl = ns.controller(spec, config, options, { refresh });
    const { c, status } = ctl;

    el.classList.add("mha-calculator");
    el.replaceChildren();
    const f = (name) => ns.labelled(spec, c, name);
    const report = make("table", { className: "mha-cost-report" });
    el.append(
      make("div", { className: "mha-controls" }, f("model"), f("dtype")),
      make("div", { className: "mha-controls" }, f("context"), f("batch")),
      status, report);

    let draws = 0;
    function drawRows(rows) {
      draws += 1;
      report.replaceChildren(make("tbody", {}, rows.map(([k, v]) => make("tr", {}, make("th", { scope: "row" }, k), make("td", {}, v)))));
    }

    /** Live mode: draw the rows Python computed for the current settings (they replace the port's). */
    let received = 0;
    function show(drawn) {
      if (!drawn || !drawn.rows) return null;
      received += 1;
      result = Object.assign({}, drawn.numbers || {}, { rows: drawn.rows });
      drawRows(drawn.rows);
      ns.setStatus(status, drawn.message || "", "error");
      ctl.sync();
      return Object.assign({}, result);
    }

    /** Compute and draw the rows at once, from the port (live too: Python's rows replace them). */
    function refresh() {
      const s = ctl.state;
      result = ns.costs(byName.get(s.model), s.context, s.batch, s.dtype, spec);
      drawRows(result.rows);
      ns.setStatus(status, "", "");
      ctl.sync();
      return Object.assign({}, result);
    }

    const api = ctl.expose(el, {
      show,
      live,
      get rows() { return result ? result.rows.map((r) => r.slice()) : null; },
      /** How many times the table was drawn (a test waits for it to change). */
      get draws() { return draws; },
      /** Live: how many answers from Python were shown. */
      get received() { return received; },
    });
    if (live) show(options.drawn);
    else refresh();
    return api;
  }

  ns.mountCalculator = mountCalculator;
  ns.autoMount("mha-calculator", mountCalculator);
})(globalThis);
