/* mha front end, the cost calculator: attention parameters, multiply-adds and KV-cache memory of real models.
 *
 * Needs core.js first (not heatmaps.js). Python computes what does not depend on the settings, per model
 * (mha.costs.calculator_data: the texts of the rows, the parameters, multiply-adds per token and per key, the
 * windows of the layers, the values cached per token); this file only adds and multiplies those numbers for
 * a context, batch and dtype, and fills the rows of mha/costs/report.py (cost_report: cost_rows with the
 * context's row second) from their labels and templates in the spec (mha.costs.report.ROWS). Integer
 * arithmetic is exact (BigInt: a forward pass of a large model over a long batch exceeds 2**53
 * multiply-adds), and the formatters round exactly as Python's f"{x:.2f}" and f"{x:.1f}" do.
 *
 *   <div class="mha-calculator">
 *     <script type="application/json">{...}</script>
 *   </div>
 *
 * (or a data-mha-config attribute; "</" written "<\/" in the JSON). The JSON:
 *
 *   {
 *     "spec": {...},     mha.widgets.spec.calculator_spec(): the controls, their bounds, the dtypes' bytes,
 *                        the rows' labels and templates, messages
 *     "configs": [{"name": "Gemma 3 27B", "kind": "decoder", "trained_context": 131072, "description": "...",
 *                  "layers": "52 local (window 1024) + 10 global: ..." or null, "n_layers": 62,
 *                  "params": "4095737856", "token_macs": "...", "key_macs": "...", "sequence_macs": "...",
 *                  "pair_macs": "...", "windows": [[52, 1024], [10, null]], "cache_width": 4096,
 *                  "mha_width": 8192}, ...],     mha.costs.calculator_data(); non-decoders are skipped
 *     "settings": {"model": "Llama 3.1 8B", "context": 4096, "batch": 1, "dtype": "bfloat16"}
 *   }
 *
 * el.mha = {settings, update(settings) -> {params, macs_per_token, macs_per_sequence, kv_cache_bytes,
 * kv_cache_bytes_as_mha, kv_cache_bytes_all_global (BigInt each), rows: [[label, value], ...]}}.
 *
 * Live mode (options.live, set by the anywidget adapter in core.js): Python computes (mha.costs.cost_rows)
 * and is in charge. A reader's change is drawn at once from the sums above, then sent with
 * onChange(settings); el.mha.show(drawn) draws what Python sends, drawn = {rows: [[label, value], ...],
 * numbers: {params, macs_per_token, ...: decimal strings}, message}, in place of the page's rows.
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});
  const { make } = ns;
  const B = BigInt;

  /** The double nearest to n / d (BigInts), ties to even, as Python's int / int gives. */
  function divide(n, d) {
    let shift = 0n;
    while ((n << shift) / d < 1n << 60n) shift += 8n; // at least 60 bits of quotient
    const scaled = n << shift, q = scaled / d;
    const sticky = scaled % d === 0n ? 0n : 1n; // below the rounding position: exact or not
    return Number((q << 1n) | sticky) / 2 ** (Number(shift) + 1); // one rounding, then an exact power of 2
  }

  /** Python's f"{x:.2f}" for x >= 0: nearest, ties (exact in binary) to even; toFixed breaks ties up. */
  function fixed2(x) {
    if (Number.isInteger(x * 8) && (x * 8) % 2 === 1) { // x * 100 ends in exactly .5
      let k = Math.floor(x * 100);
      if (k % 2) k += 1;
      return `${Math.floor(k / 100)}.${String(k % 100).padStart(2, "0")}`;
    }
    return x.toFixed(2);
  }

  /** Python's f"{x:.1f}" for x >= 0: as fixed2, the ties (exact in binary: odd multiples of 1/4) to even. */
  function fixed1(x) {
    if (Number.isInteger(x * 4) && (x * 4) % 2 === 1) { // x * 10 ends in exactly .5
      let k = Math.floor(x * 10);
      if (k % 2) k += 1;
      return `${Math.floor(k / 10)}.${k % 10}`;
    }
    return x.toFixed(1);
  }

  /** Port of mha.costs.format_ratio: a / b (BigInts) with one decimal and an x, e.g. "5.3x", "8.0x". */
  const formatRatio = (a, b) => `${fixed1(divide(a, b))}x`;

  const comma = (n) => n.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ","); // f"{n:,}"

  function formatBytes(n) {
    if (n < 1024n) return `${n} B`;
    for (const [power, unit] of [[4n, "TiB"], [3n, "GiB"], [2n, "MiB"], [1n, "KiB"]]) {
      if (n >= 1024n ** power) return `${fixed2(divide(n, 1024n ** power))} ${unit}`;
    }
    throw new Error("unreachable");
  }

  function formatCount(n) {
    for (const [power, suffix] of [[12n, "T"], [9n, "G"], [6n, "M"], [3n, "k"]]) {
      if (n >= 10n ** power) return `${fixed2(divide(n, 10n ** power))} ${suffix}`;
    }
    return n.toString();
  }

  /**
   * The numbers and the rows of cost_report for a decoder, from the model's data (calculator_data) and the
   * spec (the dtypes' bytes, and each row's label and value template: mha.costs.report.ROWS).
   */
  function costs(config, context, batch, dtype, spec) {
    const n = B(context), element = B(spec.dtypes[dtype]), layers = B(config.n_layers);
    let keys = 0n; // tokens cached over all layers: min(context, window) in a local layer
    for (const [count, window] of config.windows) keys += B(count) * (window == null || window > context ? n : B(window));
    const cache = (width, tokens) => B(batch) * element * B(width) * tokens;
    const out = {
      params: B(config.params),
      macs_per_token: B(config.token_macs) + B(config.key_macs) * keys,
      macs_per_sequence: B(batch) * (B(config.sequence_macs) * n + B(config.pair_macs) * n * n),
      kv_cache_bytes: cache(config.cache_width, keys),
      kv_cache_bytes_all_global: cache(config.cache_width, layers * n),
      kv_cache_bytes_as_mha: cache(config.mha_width, layers * n),
    };
    const row = (key, fields) => [spec.rows[key][0], ns.format(spec.rows[key][1], fields)];
    const macs = (key, m) => row(key, { count: formatCount(m), flops: formatCount(2n * m) });
    const ratio = (key, bytes) => row(key, { size: formatBytes(bytes), ratio: formatRatio(bytes, kv) });
    const kv = out.kv_cache_bytes;
    out.rows = [row("model", { description: config.description }),
      row("context", { context, batch, s: batch !== 1 ? "s" : "" })];
    if (config.layers != null) out.rows.push([spec.rows.layers[0], config.layers]);
    out.rows.push(
      row("params", { count: formatCount(out.params), exact: comma(out.params) }),
      macs("macs_per_token", out.macs_per_token),
      macs("macs_per_sequence", out.macs_per_sequence),
      row("kv_cache", { size: formatBytes(kv), exact: comma(kv), dtype }));
    if (config.layers != null) out.rows.push(ratio("all_global", out.kv_cache_bytes_all_global));
    if (out.kv_cache_bytes_as_mha !== kv) out.rows.push(ratio("as_mha", out.kv_cache_bytes_as_mha));
    if (config.trained_context != null && context > config.trained_context) {
      out.rows.push(row("note", { context, trained: config.trained_context }));
    }
    return out;
  }

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
      result = costs(byName.get(s.model), s.context, s.batch, s.dtype, spec);
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

  Object.assign(ns, { mountCalculator, costs, formatBytes, formatCount, formatRatio });
  ns.autoMount("mha-calculator", mountCalculator);
})(globalThis);
