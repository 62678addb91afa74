/* mha front end, PORT of the cost calculator's numbers: mha/costs for the calculator's context, batch, dtype.
 *
 * Python twins: mha.costs.counts.model_costs (params, macs_per_token, macs_per_sequence, kv_cache_bytes,
 * kv_cache_bytes_all_global, kv_cache_bytes_as_mha: one set of counts; null where not counted) -> costs;
 * mha.costs.layers.Layer.cache_elements -> cacheElements, Layer.global_elements -> globalElements;
 * mha.costs.report.costs_and_rows (the report's rows, written from those counts with the labels and
 * templates of mha.costs.report.ROWS, in the spec) -> costs(...).rows; mha.costs.report.format_bytes ->
 * formatBytes, format_count -> formatCount (their units, mha.costs.report.BYTE_UNITS and COUNT_UNITS, come
 * with the spec; digits grouped as f"{x:,.2f}"), format_ratio -> formatRatio. What does not depend on the
 * settings comes per model from mha.costs.report.calculator_data (texts, counts per layer, windows); this file
 * only adds and multiplies those numbers. Integer arithmetic is exact (BigInt: a forward pass of a large model
 * over a long batch exceeds 2**53 multiply-adds), and the formatters round exactly as Python's f"{x:.2f}" and
 * f"{x:.1f}" do. Tested by tests/unit/mha/costs/test_report.py (test_costs_*, test_the_page_*), in mini-racer,
 * against cost_report and model_costs for every decoder of mha.costs.MODEL_CONFIGS; needs ports/settings.js
 * (format) when called.
 *
 * A port: a classic script adding to globalThis.mhaFrontEnd, strict, no top-level binding, no DOM.
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});
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

  /**
   * Port of mha.costs.format_ratio: a / b (BigInts) with one decimal and an x, e.g. "5.3x", "8.0x"; below 0.05
   * (non-zero) the decimals its first digit needs, e.g. "0.02x". There toFixed equals Python's f"{x:.nf}": an
   * exact tie below 10 ** (1 - n) would be an odd multiple of 2 ** -(n + 1), which is larger.
   */
  function formatRatio(a, b) {
    if (a === 0n) return "0.0x"; // divide needs a non-zero quotient
    const x = divide(a, b);
    let decimals = 1;
    while (Number(x.toFixed(decimals)) === 0) decimals += 1;
    return `${decimals === 1 ? fixed1(x) : x.toFixed(decimals)}x`;
  }

  const comma = (n) => n.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ","); // f"{n:,}"
  const grouped = (text) => { const [whole, part] = text.split("."); return `${comma(whole)}.${part}`; }; // f"{x:,.2f}"

  /** n bytes (a BigInt) in binary units; units: the names of 1024 ** 1, 2, ... (the spec's units.bytes). */
  function formatBytes(n, units) {
    if (n < 1024n) return `${n} B`;
    const power = Math.min(units.length, Math.floor((n.toString(2).length - 1) / 10)); // 1024 ** power <= n
    return `${grouped(fixed2(divide(n, 1024n ** B(power))))} ${units[power - 1]}`;
  }

  /** A count (a BigInt) with an SI prefix; units: the names of 1000 ** 1, 2, ... (the spec's units.counts). */
  function formatCount(n, units) {
    if (n < 1000n) return n.toString();
    const power = Math.min(units.length, Math.floor((n.toString().length - 1) / 3)); // 1000 ** power <= n
    return `${grouped(fixed2(divide(n, 1000n ** B(power))))} ${units[power - 1]}`;
  }

  /** Port of mha.costs.layers.Layer.cache_elements: what one layer of a group keeps for n tokens. */
  function cacheElements(g, n) {
    if (g.shares != null) return 0n;
    if (g.kind === "linear") return B(g.state);
    const width = B(g.width), index = B(g.index_dim || 0);
    if (g.kind === "full" || g.kind === "latent") return n * (width + index);
    const tail = (B(g.window) < n ? B(g.window) : n) * width;
    return g.kind === "compressed" ? tail + (n / B(g.ratio)) * (width + index) : tail;
  }

  /** Port of mha.costs.layers.Layer.global_elements: the same with no window and no compression. */
  function globalElements(g, n) {
    const local = g.kind === "sliding" || g.kind === "chunked" || g.kind === "compressed";
    return g.shares == null && local ? n * B(g.width) : cacheElements(g, n);
  }

  /**
   * The numbers and the rows of cost_report for a decoder, from the model's data (calculator_data) and the
   * spec (the dtypes' bytes, and each row's label and value template: mha.costs.report.ROWS).
   */
  function costs(config, context, batch, dtype, spec) {
    const n = B(context), element = B(spec.dtypes[dtype]), layers = B(config.n_layers);
    let keys = 0n; // tokens attended over all layers: min(context, window) in a local layer
    for (const [count, window] of config.windows) keys += B(count) * (window == null || window > context ? n : B(window));
    const bytes = B(batch) * element; // per cached value, over the batch
    const sum = (f) => config.groups.reduce((total, g) => total + B(g.count) * f(g, n), 0n);
    const counted = config.params != null;
    const out = {
      params: counted ? B(config.params) : null,
      macs_per_token: counted ? B(config.token_macs) + B(config.key_macs) * keys : null,
      macs_per_sequence: counted ? B(batch) * (B(config.sequence_macs) * n + B(config.pair_macs) * n * n) : null,
      kv_cache_bytes: bytes * sum(cacheElements),
      kv_cache_bytes_all_global: bytes * sum(globalElements),
      kv_cache_bytes_as_mha: bytes * B(config.mha_width) * layers * n,
    };
    const row = (key, fields) => [spec.rows[key][0], ns.format(spec.rows[key][1], fields)];
    const count = (m) => formatCount(m, spec.units.counts), size = (bytes) => formatBytes(bytes, spec.units.bytes);
    const macs = (key, m) => row(key, { count: count(m), flops: count(2n * m) });
    const ratio = (key, bytes) => row(key, { size: size(bytes), ratio: formatRatio(bytes, kv) });
    const kv = out.kv_cache_bytes;
    out.rows = [row("model", { description: config.description }),
      row("context", { context: comma(context), batch: comma(batch), plural: context !== 1 ? "s" : "", s: batch !== 1 ? "s" : "" })];
    if (config.layers != null) out.rows.push([spec.rows.layers[0], config.layers]);
    if (counted) {
      out.rows.push(
        row("params", { count: count(out.params), exact: comma(out.params) }),
        macs("macs_per_token", out.macs_per_token),
        macs("macs_per_sequence", out.macs_per_sequence));
    } else {
      out.rows.push(row("uncounted", { reason: config.uncounted }));
    }
    out.rows.push(row("kv_cache", { size: size(kv), exact: comma(kv), dtype }));
    if (config.groups.length > 1) {
      for (const g of config.groups) {
        const fields = { count: g.count, s: g.count !== 1 ? "s" : "", layer: g.label };
        out.rows.push([ns.format(spec.rows.group[0], fields),
          ns.format(spec.rows.group[1], { size: size(bytes * B(g.count) * cacheElements(g, n)) })]);
      }
    }
    if (config.window != null) out.rows.push(ratio("all_global", out.kv_cache_bytes_all_global));
    if (out.kv_cache_bytes_as_mha !== kv) out.rows.push(ratio("as_mha", out.kv_cache_bytes_as_mha));
    if (config.trained_context != null && context > config.trained_context) {
      out.rows.push(row("note", { context: comma(context), trained: comma(config.trained_context) }));
    }
    return out;
  }

  Object.assign(ns, { costs, formatBytes, formatCount, formatRatio });
})(globalThis);
