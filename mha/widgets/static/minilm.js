/* Your own sentence, in the page: all-MiniLM-L6-v2 in the reader's browser (mha/widgets/minilm_page.py).
 *
 * A classic script (no modules, no build step, nothing from a CDN), so it runs from disk too; it needs the ports,
 * core.js, controller.js and heatmaps.js first, and its look is mha.css's. It mounts every
 *   <div class="mha-minilm"><script type="application/json">{spec of box_spec()}</script></div>
 * as the controller (controller.js) mounts a figure: its controls (the two sentences, the menus that switch
 * heads off), defaults and every text it shows are the spec's; this file keeps the model, the grid of 72
 * small heads and the head shown large (drawHeatmaps). The root gets a property `mha` (the controller's
 * settings and update(settings), for the two sentences, and):
 *   attend(sentence)     -> Promise<{tokens: string[], attention: number[L][h][n][n]}> (layer, head, query, key)
 *   embed(sentence, {off}) -> Promise<number[d_model]>, the normalised sentence embedding with the heads of
 *                           `off`, [layer, head] pairs counted from 0, switched off (zeroed before W_o)
 *   tokenize(sentence)   -> Promise<{tokens, ids, truncated, total}>
 *   load()               -> Promise, resolved once the model is in the worker
 *   refresh()            -> Promise: run the model on the box's sentences, as the Run button does
 *   off                  the heads switched off, [layer, head] pairs (settable)
 *
 * The model is the port ports/minilm.js (tokenizer and encoder, tested against mha.pretrained); this file
 * loads its weights, runs it and draws. The weights (float16 in base64, written at build time,
 * mha.widgets.minilm_page) are classic scripts beside this file, inserted only on use: minilm-weights.js (the
 * vocabulary and every tensor but the word embeddings) on first use, then minilm-words/<k>.js, rows
 * 64 k .. 64 k + 63 of the word embeddings, when a sentence first needs one of them. The tokenizer runs on
 * the page; the tensors go, as transferable ArrayBuffers, to a Web Worker built from a Blob URL (a worker
 * from a file does not start from file://) that runs the encoder: embeddings + LayerNorm, then 6
 * post-LayerNorm layers of 12-head attention and an erf-GELU feed-forward block; mean pooling over the
 * tokens and L2 normalisation.
 *
 * In a live kernel the same box is an anywidget (mha.widgets.minilm_page.MiniLMWidget): `export default
 * globalThis.mhaMiniLM.anywidget`, and Python answers the requests the page would (see `anywidget` below).
 *
 * Shape legend: n tokens, d_model 384, h 12 heads, d_k 32, d_ff 1536, L 6 layers.
 */
(function () {
  "use strict";
  const ns = globalThis.mhaFrontEnd; // the ports, core.js, controller.js and heatmaps.js, loaded before

  // ---- the worker: the port's encoder (ports/minilm.js) off the page's main thread ----------------------
  // Its source is this function's text and the port's (a worker from a Blob URL: one from a file does not
  // start from file://). It holds the weights as float32, the word embeddings' rows as they arrive.
  function workerMain(scope, port) {
    let model = null, loaded = null; // {config, W}; which shards of word rows are in W
    scope.onmessage = (event) => {
      const m = event.data;
      try {
        let result = true;
        if (m.type === "init") {
          const W = {};
          for (const name in m.tensors) W[name] = port.float16s(m.tensors[name]);
          W[m.words.name] = new Float32Array(m.words.count * m.config.d_model); // rows filled on demand
          model = { config: m.config, W, words: m.words };
          loaded = new Uint8Array(m.words.shards);
        } else if (m.type === "rows") { // one shard of word rows, from its first row
          model.W[model.words.name].set(port.float16s(m.data), m.first * model.config.d_model);
          loaded[Math.floor(m.first / model.words.rows)] = 1;
        } else { // "attend" or "embed": the encoder on token ids, whose rows the page sent first
          const missing = m.ids.filter((id) => !loaded[Math.floor(id / model.words.rows)]);
          if (missing.length) throw new Error(`the rows of token ids ${missing} were not loaded`);
          const off = new Set((m.off || []).map((p) => p[0] * model.config.h + p[1]));
          const run = port.forward(model, m.ids, off, m.type === "attend");
          result = m.type === "attend" ? run : { embedding: run.embedding };
        }
        scope.postMessage({ id: m.id, result });
      } catch (error) {
        scope.postMessage({ id: m.id, error: String((error && error.message) || error) });
      }
    };
  }

  // ---- loading: the weights script on first use, then the worker; a word's row when a sentence needs it ----
  const here = document.currentScript && document.currentScript.src; // the URL of this file
  let model = null; // one Promise<{vocab, call, rows, loadMs}> per page

  /** Insert a classic script (a weights file beside this one); resolves when the page has run it. */
  function insertScript(file, failed) {
    return new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.onload = () => { script.remove(); resolve(); };
      script.onerror = () => { script.remove(); reject(new Error(failed)); };
      script.src = here ? new URL(file, here).href : file;
      document.head.appendChild(script);
    });
  }

  function loadModel(spec) {
    if (model) return model;
    const M = spec.messages, port = ns.miniLM();
    model = new Promise((resolve, reject) => {
      if (typeof Worker !== "function") return reject(new Error(M.no_worker));
      const started = performance.now();
      let data = null;
      globalThis[spec.callback] = (payload) => { data = payload; };
      insertScript(spec.weights, ns.format(M.no_weights, { file: spec.weights })).then(() => {
        delete globalThis[spec.callback];
        if (!data || data.format !== spec.format) {
          const got = data ? data.format : null;
          throw new Error(ns.format(M.bad_format, { got, expected: spec.format }));
        }
        const tensors = {}, buffers = [];
        for (const name in data.tensors) {
          tensors[name] = ns.base64Bytes(data.tensors[name].data).buffer;
          buffers.push(tensors[name]);
        }
        const source = `(${workerMain})(self, (${ns.miniLM})());`;
        const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
        const worker = new Worker(url);
        URL.revokeObjectURL(url);
        const pending = new Map();
        let next = 0;
        const call = (message, transfer) => new Promise((ok, fail) => {
          const id = next++;
          pending.set(id, { ok, fail });
          worker.postMessage({ ...message, id }, transfer || []);
        });
        worker.onmessage = (event) => {
          const { id, result, error } = event.data, p = pending.get(id);
          pending.delete(id);
          if (error !== undefined) p.fail(new Error(error));
          else p.ok(result);
        };
        worker.onerror = (event) => reject(new Error(event.message || M.worker_failed));
        const words = data.words, shards = new Map(); // shard index -> Promise, once sent to the worker
        const arrived = new Map(); // shard index -> its entry, from the shard's script
        globalThis[words.callback] = (index, entry) => arrived.set(index, entry);
        /** The shard of word rows `index`, loaded (its script beside this file) and sent to the worker. */
        const shard = (index) => {
          if (!shards.has(index)) {
            const file = `${words.folder}/${index}.js`;
            const p = insertScript(file, ns.format(M.no_weights, { file })).then(() => {
              const entry = arrived.get(index);
              arrived.delete(index);
              const bytes = ns.base64Bytes(entry.data);
              return call({ type: "rows", first: entry.first, data: bytes.buffer }, [bytes.buffer]);
            });
            p.catch(() => shards.delete(index)); // a later use tries again
            shards.set(index, p);
          }
          return shards.get(index);
        };
        const rows = (ids) => Promise.all([...new Set(ids.map((id) => Math.floor(id / words.rows)))].map(shard));
        const vocab = new Map(data.vocab.map((t, i) => [t, i]));
        const init = { type: "init", tensors, config: data.config, words };
        return call(init, buffers).then(() => ({ port, vocab, maxTokens: data.max_tokens, call, rows,
          loadMs: performance.now() - started }));
      }).then(resolve, reject);
    });
    model.catch(() => { model = null; }); // a later use tries again
    return model;
  }

  /** The box's computer without a kernel: MiniLMWidget.compute's requests, answered in the page with the port
   * (the tokenizer here, the encoder in the worker). */
  function pageBackend(spec) {
    return {
      load: () => loadModel(spec),
      async call({ type, sentence, off }) {
        const m = await loadModel(spec);
        const tok = m.port.tokenize(sentence, m.vocab, m.maxTokens);
        const result = { tokens: tok.tokens, truncated: tok.truncated, total: tok.total, unknown: tok.unknown };
        if (type === "tokenize") return { ...result, ids: tok.ids };
        await m.rows(tok.ids);
        return { ...result, ...(await m.call({ type, ids: tok.ids, off: off || [] })) };
      },
    };
  }

  // ---- the box: mounted from its spec by the controller (controller.js); it keeps only its drawing ----------
  function dot(a, b) { let s = 0; for (let i = 0; i < a.length; i++) s += a[i] * b[i]; return s; }

  let scratch = null; // one pixel per cell, scaled up onto a thumbnail
  /** One head's weights (n, n) into a 48 px thumbnail, in the heatmaps' colours; a cross if it is off. */
  function drawThumb(canvas, weights, off) {
    const n = weights.length, image = new ImageData(n, n), size = canvas.width, ctx = canvas.getContext("2d");
    weights.forEach((row, i) => row.forEach((w, j) => {
      image.data.set(ns.colour(w).rgb, 4 * (i * n + j));
      image.data[4 * (i * n + j) + 3] = 255;
    }));
    scratch = scratch || document.createElement("canvas");
    scratch.width = scratch.height = n;
    scratch.getContext("2d").putImageData(image, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(scratch, 0, 0, size, size);
    if (!off) return;
    ctx.strokeStyle = "rgb(200,40,40)";
    ctx.lineWidth = size / 16;
    ctx.beginPath(); ctx.moveTo(0, 0); ctx.lineTo(size, size); ctx.moveTo(size, 0); ctx.lineTo(0, size);
    ctx.stroke();
  }

  // backend: {call(message) -> Promise<result>} that computes instead of the page (a live kernel's Python,
  // see `anywidget` below); spec: the box's spec, if not inline in `root`.
  function mount(root, backend, givenSpec) {
    if (root.mha) return root.mha;
    const spec = givenSpec || ns.readConfig(root);
    const computer = backend || pageBackend(spec);
    const getModel = async () => { const loaded = computer.load ? await computer.load() : computer; return { call: computer.call, loadMs: loaded.loadMs }; };
    const L = spec.layers, H = spec.heads, M = spec.messages, { make, format } = ns;
    const state = { shown: [0, 0], off: new Set(), result: null, loaded: Boolean(backend), ticket: 0, cell: null };
    let layout = null;
    // the controls (the sentences, the menus that switch heads off) and the status line, from the spec
    const ctl = ns.controller(spec, {}, {}, { refresh() { ctl.sync(); return ctl.settings(); } });
    const { c, status } = ctl;
    const say = (text, level) => ns.setStatus(status, text, level || "");
    const button = (name, text) => make("button", { type: "button", name, className: "mha-button" }, text);
    const run = button("run", M.run), toggle = button("toggle", ""), reset = button("reset", M.reset);
    const grid = make("div", { className: "mm-grid", role: "group", "aria-label": M.grid }, make("span"));
    for (let hh = 0; hh < H; hh++) grid.append(make("span", {}, String(hh + 1)));
    const thumbs = Array.from({ length: L }, (_, l) => {
      grid.append(make("span", {}, format(M.grid_layer, { layer: l + 1 })));
      return Array.from({ length: H }, (_, hh) => {
        const thumb = make("canvas", { width: 48, height: 48, "data-layer": l, "data-head": hh,
          title: format(M.thumb, { layer: l + 1, head: hh + 1, pattern: spec.labels[l][hh] }) });
        thumb.addEventListener("click", () => { state.shown = [l, hh]; state.cell = null; draw(); });
        grid.append(thumb);
        return thumb;
      });
    });
    const bigTitle = make("p", { className: "mm-big-title" });
    const big = make("canvas", { className: "mha-canvas", tabIndex: 0, role: "img" });
    const cellOut = make("p", { className: "mha-readout", "aria-live": "polite" });
    const readout = make("p", { className: "mm-readout", "aria-live": "polite" });
    root.querySelectorAll(".mm-fallback").forEach((e) => e.remove()); // for pages that run no scripts
    root.classList.add("mm-mounted");
    root.append(
      make("div", { className: "mha-controls" }, ns.labelled(spec, c, "sentence")),
      make("div", { className: "mha-controls" }, ns.labelled(spec, c, "other"), run),
      status, grid,
      make("div", { className: "mha-controls" }, toggle, ns.labelled(spec, c, "layer_off"),
        ns.labelled(spec, c, "pattern_off"), reset),
      readout, bigTitle, make("div", { className: "mha-figure" }, big), cellOut);
    const picture = root.querySelector(".mm-print"); // the static picture, for print: after the controls
    if (picture) root.appendChild(picture);
    ctl.sync();
    say(M.idle);

    const key = (l, hh) => l * H + hh;
    const offList = () => [...state.off].sort((a, b) => a - b).map((i) => [Math.floor(i / H), i % H]);

    function draw() {
      const [l, hh] = state.shown;
      toggle.textContent = format(state.off.has(key(l, hh)) ? M.toggle_on : M.toggle_off, { layer: l + 1, head: hh + 1 });
      thumbs.forEach((row, a) => row.forEach((thumb, b) => {
        const off = state.off.has(key(a, b));
        thumb.classList.toggle("mm-shown", a === l && b === hh);
        thumb.classList.toggle("mm-off", off);
        if (state.result) drawThumb(thumb, state.result.attention[a][b], off);
      }));
      drawBig();
    }

    /** The head shown large: drawHeatmaps (heatmaps.js), with its tokens, colour bar and read-out. */
    function drawBig() {
      const r = state.result;
      if (!r) return;
      const [l, hh] = state.shown, head = { layer: l + 1, head: hh + 1 }, n = r.tokens.length;
      bigTitle.textContent = format(M.big, { ...head, pattern: spec.labels[l][hh],
        switched: state.off.has(key(l, hh)) ? M.big_switched : "",
        others: state.off.size ? format(M.big_others, { k: state.off.size }) : "" });
      layout = ns.drawHeatmaps(big, {
        panels: [{ title: format(M.panel, head), values: r.attention[l][hh], mask: null }],
        rowLabels: r.tokens, colLabels: r.tokens, rowName: M.rows, colName: M.cols,
        lo: 0, hi: 1, cell: [26, 26], maxWidth: Math.max(300, big.parentElement.clientWidth || 720), maxColumns: 1,
        format: null, selected: state.cell && { panel: 0, ...state.cell }, scaleLabel: M.scale, maskKey: null,
      });
      big.setAttribute("aria-label", format(M.big_label, { ...head, n }));
      tell(state.cell);
    }

    /** The read-out of one cell of the large head (pointed at, tapped or reached with the arrow keys). */
    function tell(cell) {
      const r = state.result, [l, hh] = state.shown;
      cellOut.textContent = !cell || !r ? "" : format(M.cell, { layer: l + 1, head: hh + 1,
        query: r.tokens[cell.row], row: cell.row + 1, key: r.tokens[cell.col], col: cell.col + 1,
        weight: r.attention[l][hh][cell.row][cell.col].toFixed(3) });
    }
    ns.heatmapReadout(root, big, { // pointer, tap and arrow keys (Page Up/Down: the next head of the layer)
      layout: () => layout, selected: () => state.cell, say: tell, draw: drawBig,
      select(cell) { state.cell = { row: cell.row, col: cell.col }; drawBig(); },
      size: () => state.result && { panels: 1, n: state.result.tokens.length },
      page(step) { state.shown = [state.shown[0], (state.shown[1] + step + H) % H]; draw(); },
    });

    function readOut(values, k) {
      const total = L * H, fixed = (v) => v.toFixed(3);
      const pair = Number.isNaN(values.sim0) ? ""
        : k === 0 ? format(M.pair, { sim: fixed(values.sim0) }) : format(M.pair_off, { sim: fixed(values.sim), sim0: fixed(values.sim0) });
      readout.textContent = (k === 0 ? format(M.all_on, { total }) : format(M.some_off, { k, total, cos: fixed(values.cos) })) + pair;
    }

    async function refresh() {
      let text = ctl.state.sentence;
      const notes = [];
      if (!text.trim()) { state.ticket++; say(M.empty, "warning"); return; }
      if (text.length > spec.max_chars) {
        notes.push(format(M.too_long, { chars: spec.max_chars, cut: text.length - spec.max_chars }));
        text = text.slice(0, spec.max_chars);
      }
      const second = ctl.state.other.slice(0, spec.max_chars);
      const ticket = ++state.ticket; // only the latest run draws: the reader may click while one runs
      try {
        if (!state.loaded) say(M.loading);
        const m = await getModel();
        state.loaded = true;
        say(M.running);
        const off = offList();
        const r = await m.call({ type: "attend", sentence: text, off });
        if (r.truncated) notes.push(format(M.truncated, { n: r.total, max: spec.max_tokens }));
        if (r.unknown.length) notes.push(format(M.unknown, { k: r.unknown.length, words: r.unknown }));
        const intact = off.length ? (await m.call({ type: "embed", sentence: text, off: [] })).embedding : r.embedding;
        let sim0 = NaN, sim = NaN;
        if (second.trim()) {
          const b0 = await m.call({ type: "embed", sentence: second, off: [] });
          const b = off.length ? await m.call({ type: "embed", sentence: second, off }) : b0;
          sim0 = dot(intact, b0.embedding); sim = dot(r.embedding, b.embedding);
        }
        if (ticket !== state.ticket) return;
        if (!state.result || state.result.tokens.length !== r.tokens.length) state.cell = null;
        state.result = r;
        say(notes.join(" ") || format(M.shown, { n: r.tokens.length }), notes.length ? "warning" : "");
        draw();
        readOut({ cos: dot(intact, r.embedding), sim, sim0 }, off.length);
      } catch (error) {
        if (ticket === state.ticket) say(format(M.failed, { error: error.message }), "error");
        if (!state.loaded) root.classList.add("mm-failed"); // no model here (a deck, say): the static picture
      }
    }

    const change = (fn) => () => { fn(); draw(); if (state.loaded) refresh(); };
    run.addEventListener("click", () => refresh());
    for (const name of ["sentence", "other"]) {
      c[name].addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); refresh(); } });
    }
    toggle.addEventListener("click", change(() => {
      const i = key(...state.shown);
      if (state.off.has(i)) state.off.delete(i); else state.off.add(i);
    }));
    c.layer_off.addEventListener("change", change(() => {
      if (c.layer_off.value !== "") for (let hh = 0; hh < H; hh++) state.off.add(key(Number(c.layer_off.value), hh));
      c.layer_off.value = "";
    }));
    c.pattern_off.addEventListener("change", change(() => {
      for (let l = 0; l < L; l++) for (let hh = 0; hh < H; hh++) {
        if (spec.labels[l][hh] === c.pattern_off.value) state.off.add(key(l, hh));
      }
      c.pattern_off.value = "";
    }));
    reset.addEventListener("click", change(() => state.off.clear()));
    draw();

    const api = (type) => async (text, options) => {
      if (typeof text !== "string") throw new TypeError(format(M.invalid.text, { name: "sentence", value: JSON.stringify(text) }));
      const m = await getModel();
      state.loaded = true;
      return m.call({ type, sentence: text, off: (options && options.off) || [] });
    };
    return ctl.expose(root, { // and settings, update(settings): the two sentences
      spec,
      load: async () => { const m = await getModel(); state.loaded = true; return { loadMs: m.loadMs }; },
      tokenize: api("tokenize"),
      attend: async (text) => { const r = await api("attend")(text); return { tokens: r.tokens, attention: r.attention }; },
      embed: async (text, options) => (await api("embed")(text, options)).embedding,
      refresh,
      get off() { return offList(); },
      set off(pairs) { state.off = new Set(pairs.map(([l, hh]) => key(l, hh))); draw(); },
      canvas: big,
      get layout() { return layout && { width: layout.width, height: layout.height, boxes: layout.boxes, cw: layout.cw }; },
    });
  }

  function mountAll() { document.querySelectorAll(".mha-minilm").forEach((root) => mount(root)); }

  // In a live kernel (mha.widgets.minilm_page.MiniLMWidget): the same box, computed by Python. Each request
  // goes to Python as a custom message {id, type, sentence, off}; the reply is {id, result} (the attention as
  // float32 bytes in buffers[0], of shape result.attention_shape) or {id, error}.
  function toNested(buffer, shape) { // float32 little-endian bytes -> nested arrays of `shape`
    const flat = ns.float32s(buffer);
    const build = (axis, offset) => {
      if (axis === shape.length - 1) return Array.from(flat.subarray(offset, offset + shape[axis]));
      const stride = shape.slice(axis + 1).reduce((a, b) => a * b, 1), out = [];
      for (let i = 0; i < shape[axis]; i++) out.push(build(axis + 1, offset + i * stride));
      return out;
    };
    return build(0, 0);
  }
  const anywidget = {
    render({ model, el }) {
      const root = ns.make("div", { className: "mha-minilm" });
      el.appendChild(root);
      const pending = new Map();
      let next = 0;
      const onMessage = (message, buffers) => {
        const p = pending.get(message && message.id);
        if (!p) return;
        pending.delete(message.id);
        if (message.error !== undefined) return p.fail(new Error(message.error));
        const result = message.result;
        if (result.attention_shape) result.attention = toNested(buffers[0], result.attention_shape);
        p.ok(result);
      };
      model.on("msg:custom", onMessage);
      const backend = {
        loadMs: 0,
        call: (message) => new Promise((ok, fail) => {
          const id = next++;
          pending.set(id, { ok, fail });
          model.send({ ...message, id });
        }),
      };
      mount(root, backend, model.get("spec"));
      return () => model.off("msg:custom", onMessage);
    },
  };

  if (document.currentScript) { // a classic script of the site: mount the page's boxes (not as a module)
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
    else mountAll();
  }
  ns.mountMiniLM = mount;
  globalThis.mhaMiniLM = { mount, mountAll, anywidget };
})();
