/* mha front end, the cost calculator: attention parameters, multiply-adds and KV-cache memory of real models.
 *
 * Needs core.js first (not heatmaps.js). Python computes what does not depend on the settings, per model
 * (mha.costs.calculator_data: the texts of the rows, the parameters, multiply-adds per token and per key, the
 * windows of the layers, the values cached per token); this file only adds and multiplies those numbers for
 * a context, batch and dtype, and formats the rows of mha/costs/report.py (cost_report: cost_rows with
 * "context x batch" second). Integer arithmetic is exact (BigInt: a forward pass of a large model over a
 * long batch exceeds 2**53 multiply-adds), and the two formatters round exactly as Python's f"{x:.2f}" does.
 *
 *   <div class="mha-calculator">
 *     <script type="application/json">{...}</script>
 *   </div>
 *
 * (or a data-mha-config attribute; "</" written "<\/" in the JSON). The JSON:
 *
 *   {
 *     "configs": [{"name": "Gemma 3 27B", "kind": "decoder", "context": 131072, "description": "...",
 *                  "layers": "52 local (window 1024) + 10 global: ..." or null, "n_layers": 62,
 *                  "params": "4095737856", "token_macs": "...", "key_macs": "...", "sequence_macs": "...",
 *                  "pair_macs": "...", "windows": [[52, 1024], [10, null]], "cache_width": 4096,
 *                  "mha_width": 8192}, ...],     mha.costs.calculator_data(); non-decoders are skipped
 *     "settings": {"model": "Llama 3.1 8B", "context": 4096, "batch": 1, "dtype": "bfloat16"},
 *     "dtypes": {"float32": 4, "bfloat16": 2, "float16": 2, "float8_e4m3fn": 1}    optional: bytes per element
 *   }
 *
 * el.mha = {settings, update(settings) -> {params, macs_per_token, macs_per_sequence, kv_cache_bytes,
 * kv_cache_bytes_as_mha, kv_cache_bytes_all_global (BigInt each), rows: [[label, value], ...]}}.
 *
 * Live mode (options.live, set by the anywidget adapter in core.js): Python computes (mha.costs.cost_rows)
 * and this file only draws. A reader's change calls onChange(settings); el.mha.show(drawn) draws what
 * Python sends, drawn = {rows: [[label, value], ...], numbers: {params, macs_per_token, ...: decimal
 * strings}, message}. The sums above are for the static page only.
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});
  const { make, field, select, setOptions } = ns;
  const DTYPES = { float32: 4, bfloat16: 2, float16: 2, float8_e4m3fn: 1 };
  const MAX_CONTEXT = 2 ** 24, MAX_BATCH = 2 ** 12; // the bounds of the Python widget's inputs
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

  /** The numbers and the rows of cost_report for a decoder, from the model's data (calculator_data). */
  function costs(config, context, batch, dtype, dtypes) {
    const n = B(context), element = B(dtypes[dtype]), layers = B(config.n_layers);
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
    const macs = (m) => `${formatCount(m)} = ${formatCount(2n * m)}FLOP (attention layers only)`;
    const kv = out.kv_cache_bytes;
    out.rows = [["model", config.description], ["context x batch", `${context} tokens x ${batch} sequence${batch !== 1 ? "s" : ""}`]];
    if (config.layers != null) out.rows.push(["layers", config.layers]);
    out.rows.push(
      ["attention parameters, all layers", `${formatCount(out.params)} parameters (${comma(out.params)})`],
      ["multiply-adds per new token", macs(out.macs_per_token)],
      ["multiply-adds, forward over the batch", macs(out.macs_per_sequence)],
      ["KV cache", `${formatBytes(kv)} (${comma(kv)} bytes, ${dtype})`]);
    if (config.layers != null) {
      out.rows.push(["KV cache if every layer were global", `${formatBytes(out.kv_cache_bytes_all_global)} (${out.kv_cache_bytes_all_global / kv}x)`]);
    }
    if (out.kv_cache_bytes_as_mha !== kv) {
      out.rows.push(["KV cache as MHA (K, V per head, all global)", `${formatBytes(out.kv_cache_bytes_as_mha)} (${out.kv_cache_bytes_as_mha / kv}x)`]);
    }
    if (config.context != null && context > config.context) {
      out.rows.push(["note", `${context} tokens is longer than the ${config.context} the model was trained for`]);
    }
    return out;
  }

  function mountCalculator(el, config, options) {
    options = options || {};
    const live = Boolean(options.live);
    const configs = config.configs.filter((m) => (m.kind || "decoder") === "decoder");
    const byName = new Map(configs.map((m) => [m.name, m]));
    const dtypes = config.dtypes || DTYPES;
    const state = Object.assign({ model: configs[0].name, context: 4096, batch: 1, dtype: "bfloat16" });
    let result = null;

    el.classList.add("mha-calculator");
    el.replaceChildren();
    const c = {
      model: select("model", configs.map((m) => m.name), state.model),
      dtype: select("dtype", Object.keys(dtypes), state.dtype),
      context: make("input", { type: "number", name: "context", min: 1, max: MAX_CONTEXT, step: 1 }),
      batch: make("input", { type: "number", name: "batch", min: 1, max: MAX_BATCH, step: 1 }),
    };
    const status = make("p", { className: "mha-status", role: "status", "aria-live": "polite" });
    const report = make("table", { className: "mha-cost-report" });
    el.append(
      make("div", { className: "mha-controls" }, field("model", c.model), field("dtype", c.dtype)),
      make("div", { className: "mha-controls" }, field("context", c.context), field("batch", c.batch)),
      status, report);

    function merge(s) {
      if ("model" in s && !byName.has(s.model)) throw new RangeError(`unknown model ${s.model}; decoder-only models: ${[...byName.keys()].join(", ")}`);
      if ("dtype" in s && !(s.dtype in dtypes)) throw new RangeError(`dtype must be one of ${Object.keys(dtypes).join(", ")}, got ${s.dtype}`);
      for (const [k, max] of [["context", MAX_CONTEXT], ["batch", MAX_BATCH]]) {
        if (k in s && (!Number.isInteger(s[k]) || s[k] < 1 || s[k] > max)) throw new RangeError(`${k} must be an int in 1..${max}, got ${s[k]}`);
      }
      Object.assign(state, s);
    }

    function drawRows(rows) {
      report.replaceChildren(make("tbody", {}, rows.map(([k, v]) => make("tr", {}, make("th", { scope: "row" }, k), make("td", {}, v)))));
    }

    /** Live mode: draw the rows Python computed for the current settings. */
    function show(drawn) {
      if (!drawn || !drawn.rows) return null;
      result = Object.assign({}, drawn.numbers || {}, { rows: drawn.rows });
      drawRows(drawn.rows);
      status.textContent = drawn.message || "";
      syncControls();
      return Object.assign({}, result);
    }

    function refresh() {
      if (live) { syncControls(); return result && Object.assign({}, result); }
      result = costs(byName.get(state.model), state.context, state.batch, state.dtype, dtypes);
      drawRows(result.rows);
      status.textContent = "";
      syncControls();
      return Object.assign({}, result);
    }

    function syncControls() {
      c.model.value = state.model;
      setOptions(c.dtype, Object.keys(dtypes), state.dtype);
      if (Number(c.context.value) !== state.context) c.context.value = String(state.context);
      if (Number(c.batch.value) !== state.batch) c.batch.value = String(state.batch);
    }

    function fromReader(name, value, max) {
      if (max && (!Number.isInteger(value) || value < 1 || value > max)) {
        status.textContent = `The ${name} must be a whole number from 1 to ${max}. (The numbers below are for the last valid input.)`;
        return;
      }
      merge({ [name]: value });
      refresh();
      if (options.onChange) options.onChange(api.settings);
    }
    c.model.addEventListener("change", () => fromReader("model", c.model.value));
    c.dtype.addEventListener("change", () => fromReader("dtype", c.dtype.value));
    for (const [k, max] of [["context", MAX_CONTEXT], ["batch", MAX_BATCH]]) {
      c[k].addEventListener("input", () => fromReader(k, c[k].value.trim() === "" ? NaN : Number(c[k].value), max));
    }

    const api = {
      get settings() { return Object.assign({}, state); },
      /** Merge settings ({model, context, batch, dtype}), redraw; returns the numbers and rows. */
      update(settings) { merge(settings || {}); return refresh(); },
      show,
      live,
      get rows() { return result ? result.rows.map((r) => r.slice()) : null; },
    };
    el.mha = api;
    merge(Object.assign({}, config.settings || {}));
    if (live) show(options.drawn);
    else refresh();
    return api;
  }

  Object.assign(ns, { mountCalculator, costs, formatBytes, formatCount });
  ns.autoMount("mha-calculator", mountCalculator);
})(globalThis);
