/* mha front end, the cost calculator: attention parameters, multiply-adds and KV-cache memory of real models.
 *
 * Needs core.js first (not heatmaps.js). A port of mha/costs/counts.py (attention_params, attention_macs,
 * attention_macs_per_token, kv_cache_bytes, model_costs, format_bytes, format_count) and of the rows of
 * mha/costs/report.py (cost_report: cost_rows with "context x batch" second). Integer arithmetic is exact
 * (BigInt: a forward pass of a large model over a long batch exceeds 2**53 multiply-adds), and the two
 * formatters round exactly as Python's f"{x:.2f}" does.
 *
 *   <div class="mha-calculator">
 *     <script type="application/json">{...}</script>
 *   </div>
 *
 * (or a data-mha-config attribute; "</" written "<\/" in the JSON). The JSON:
 *
 *   {
 *     "configs": [{"name": "Llama 3.1 8B", "d_model": 4096, "h": 32, "n_kv_heads": 8, "n_layers": 32,
 *                  "context": 131072, "kind": "decoder"}, ...],   ModelConfig fields; non-decoders are skipped
 *     "settings": {"model": "Llama 3.1 8B", "context": 4096, "batch": 1, "dtype": "bfloat16"},
 *     "dtypes": {"float32": 4, "bfloat16": 2, "float16": 2, "float8_e4m3fn": 1}    optional: bytes per element
 *   }
 *
 * el.mha = {settings, update(settings) -> {params, macs_per_token, macs_per_sequence, kv_cache_bytes,
 * kv_cache_bytes_as_mha (BigInt each), rows: [[label, value], ...]}}.
 *
 * Live mode (options.live, set by the anywidget adapter in core.js): Python computes (mha.costs.cost_rows)
 * and this file only draws. A reader's change calls onChange(settings); el.mha.show(drawn) draws what
 * Python sends, drawn = {rows: [[label, value], ...], numbers: {params, macs_per_token, ...: decimal
 * strings}, message}. The port above is for the static page only.
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});
  const { make, field, select, setOptions } = ns;
  const DTYPES = { float32: 4, bfloat16: 2, float16: 2, float8_e4m3fn: 1 };
  const MAX_CONTEXT = 2 ** 20, MAX_BATCH = 2 ** 12; // the bounds of the Python widget's inputs
  const B = BigInt;

  /** Parameters of one attention layer: W_q, W_o (d x d) + W_k, W_v (d x h_kv d_k), biases optional. */
  function attentionParams(d, h, hkv, bias) {
    const kv = B(hkv) * B(d / h);
    return 2n * B(d) * B(d) + 2n * B(d) * kv + (bias ? 2n * B(d) + 2n * kv : 0n);
  }

  /** Multiply-adds of one layer over one sequence: projections + q k^T and weights v per head. */
  function attentionMacs(d, h, hkv, nq, nk) {
    const dk = B(d / h);
    return 2n * B(nq) * B(d) * B(d) + 2n * B(nk) * B(d) * B(hkv) * dk + 2n * B(h) * B(nq) * B(nk) * dk;
  }

  /** Multiply-adds of one layer for one new token attending to `context` cached keys. */
  function attentionMacsPerToken(d, h, hkv, context) {
    const dk = B(d / h);
    return 2n * B(d) * B(d) + 2n * B(d) * B(hkv) * dk + 2n * B(h) * B(context) * dk;
  }

  /** Bytes of the key/value cache: a key and a value of width h_kv d_k per token and layer. */
  function kvCacheBytes(layers, hkv, dk, context, batch, element) {
    return 2n * B(layers) * B(batch) * B(context) * B(hkv) * B(dk) * B(element);
  }

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

  /** The numbers and the rows of cost_report for a decoder config. */
  function costs(config, context, batch, dtype, dtypes) {
    const { d_model: d, h, n_kv_heads: hkv, n_layers: L } = config;
    const dk = d / h, element = dtypes[dtype];
    const out = {
      params: B(L) * attentionParams(d, h, hkv, false),
      macs_per_token: B(L) * attentionMacsPerToken(d, h, hkv, context),
      macs_per_sequence: B(batch) * B(L) * attentionMacs(d, h, hkv, context, context),
      kv_cache_bytes: kvCacheBytes(L, hkv, dk, context, batch, element),
      kv_cache_bytes_as_mha: kvCacheBytes(L, h, dk, context, batch, element),
    };
    const macs = (n) => `${formatCount(n)} = ${formatCount(2n * n)}FLOP (attention layers only)`;
    const attention = hkv === h ? "MHA" : hkv === 1 ? "MQA" : "GQA";
    out.rows = [
      ["model", `${config.name} (${attention}: d_model=${d}, h=${h}, n_kv_heads=${hkv}, d_k=${dk}, ${L} layers)`],
      ["context x batch", `${context} tokens x ${batch} sequence${batch !== 1 ? "s" : ""}`],
      ["attention parameters, all layers", `${formatCount(out.params)} parameters (${comma(out.params)})`],
      ["multiply-adds per new token", macs(out.macs_per_token)],
      ["multiply-adds, forward over the batch", macs(out.macs_per_sequence)],
      ["KV cache", `${formatBytes(out.kv_cache_bytes)} (${comma(out.kv_cache_bytes)} bytes, ${dtype})`],
    ];
    if (hkv !== h) {
      out.rows.push(["KV cache if every head kept its own K, V",
        `${formatBytes(out.kv_cache_bytes_as_mha)} (${out.kv_cache_bytes_as_mha / out.kv_cache_bytes}x)`]);
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
