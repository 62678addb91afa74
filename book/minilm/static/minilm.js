/* Your own sentence, in the page: all-MiniLM-L6-v2 in the reader's browser (book/minilm/page.py).
 *
 * A classic script (no modules, no build step, nothing from a CDN), so it runs from disk too; it needs the ports,
 * core.js, controller.js and heatmaps.js first, and its look is mha.css's. It mounts every
 *   <div class="mha-minilm"><script type="application/json">{spec of box_spec()}</script></div>
 * as the controller (controller.js) mounts a figure: its controls (the two sentences, the menus that switch
 * heads off, the difference view), defaults, the head it opens on and every text it shows are the spec's; this
 * file keeps the model, the grid of 72 small heads and the head shown large (drawHeatmaps). The root gets a
 * property `mha` (the controller's settings and update(settings), for the two sentences, and):
 *   attend(sentence)     -> Promise<{tokens: string[], attention: number[L][h][n][n]}> (layer, head, query, key)
 *   embed(sentence, {off}) -> Promise<number[d_model]>, the normalised sentence embedding with the outputs
 *                           of the heads in `off` ([layer, head] pairs counted from 0) zeroed before W_o
 *   tokenize(sentence)   -> Promise<{tokens, ids, truncated, total}>
 *   load()               -> Promise, resolved once the whole model is in the worker
 *   refresh()            -> Promise: run the model on the box's sentences, as the Run button does
 *   cancel()             stop loading the model, as Escape or the Cancel button do
 *   off                  the heads switched off, [layer, head] pairs (settable)
 *   shown                the head shown large, [layer, head] (settable)
 *   ready                Promise, resolved once the box has drawn the stored sentence it opens on (if any)
 *   stored(sentence)     -> Promise<{tokens, attention} | null>, the sentence's stored weights (spec.stored)
 *   drawn                what the picture shows: {sentence, tokens, layers, stored} or null
 *
 * The model is the port ports/minilm.js (tokenizer and encoder, tested against mha.pretrained); this file
 * loads its weights, runs it and draws. The weights (float16 in base64, written at build time,
 * book.minilm.page) are classic scripts beside this file, inserted only on use: minilm-weights.js (the
 * vocabulary and the embeddings' small tensors), then minilm-layers/<p>.js, the layers' tensors in parts of
 * about 1.6 MB, one at a time, so that the box can say how far it has come and draw each layer's heads as
 * soon as that layer is in; and
 * minilm-words/<k>.js, rows 64 k .. 64 k + 63 of the word embeddings, when a sentence first needs one of
 * them. A script is read on the page's main thread (a page opened from disk can read no file another way);
 * its base64 text goes as it is to a Web Worker built from a Blob URL (core.js's blobWorker: a worker from a
 * file does not start from file://), which decodes it (base64 -> float16 -> float32) and runs the encoder:
 * embeddings + LayerNorm, then 6 post-LayerNorm layers of 12-head attention and an erf-GELU feed-forward
 * block; mean pooling over the tokens and L2 normalisation. The worker sends the attention back as one
 * Float32Array.
 *
 * A spec may also hold stored weights (spec.stored, book.minilm.stored): every head on some sentences, 8-bit,
 * zlib-compressed, in base64. The sentence field then suggests those sentences, and the box draws every head
 * on one of them at once, inflated in the page (core.js's storedMaps: DecompressionStream, which works from
 * file:// too, then the port ports/stored_maps.js), without
 * the model: when it opens and whenever the sentence is one of them, as long as no head is switched off and
 * the model is not in the page (loaded or loading). A sentence of the reader's own, or a head off, and Run
 * loads the model.
 *
 * In a live kernel the same box is an anywidget (book.minilm.page.MiniLMWidget): `export default
 * globalThis.mhaMiniLM.anywidget`, and Python answers the requests the page would (see `anywidget` below).
 *
 * Shape legend: n tokens, d_model 384, h 12 heads, d_k 32, d_ff 1536, L 6 layers.
 */
(function () {
  "use strict";
  const ns = globalThis.mhaFrontEnd; // the ports, core.js, controller.js and heatmaps.js, loaded before

  // ---- the worker: the port's encoder (ports/minilm.js) off the page's main thread ----------------------
  // Its source is this function's text, the port's and the ports it calls (ns.miniLMWorker), started from a
  // Blob URL by ns.blobWorker (core.js: a worker from a file does not start from file://). It decodes the
  // weights (the heavy part of loading) and holds them as float32: the embeddings', then each layer's as it
  // arrives, and the word embeddings' rows as sentences need them.
  function workerMain(scope, port) {
    let model = null, words = null, layers = 0; // {config, W, words}; which shards of word rows are in W
    const { base64Bytes, float16s } = scope.mhaFrontEnd; // ports/bytes.js
    const decode = (entry) => float16s(base64Bytes(entry.data)); // base64 -> float16 bytes -> Float32Array
    scope.onmessage = (event) => {
      const m = event.data;
      try {
        let result = true, transfer = [];
        if (m.type === "init") { // the embeddings' tensors; the word embeddings' rows filled on demand
          const W = {};
          for (const name in m.tensors) W[name] = decode(m.tensors[name]);
          W[m.words.name] = new Float32Array(m.words.count * m.config.d_model);
          model = { config: m.config, W, words: m.words };
          words = new Uint8Array(m.words.shards);
        } else if (m.type === "part") { // a part of layer m.layer's tensors; the parts come in order
          if (m.layer !== layers) throw new Error(`layer ${m.layer + 1} arrived before layer ${layers + 1}`);
          for (const name in m.tensors) model.W[name] = decode(m.tensors[name]);
          if (m.last) layers += 1;
        } else if (m.type === "rows") { // one shard of word rows, from its first row
          model.W[model.words.name].set(decode(m.entry), m.entry.first * model.config.d_model);
          words[Math.floor(m.entry.first / model.words.rows)] = 1;
        } else { // "attend" or "embed": the encoder's first `layers` layers on token ids, whose rows came first
          const c = model.config, k = m.layers || c.layers, n = m.ids.length;
          if (k > layers) throw new Error(`layer ${k} is not loaded yet`);
          const missing = m.ids.filter((id) => !words[Math.floor(id / model.words.rows)]);
          if (missing.length) throw new Error(`the rows of token ids ${missing} were not loaded`);
          const off = new Set((m.off || []).map((p) => p[0] * c.h + p[1]));
          const run = port.forward({ config: { ...c, layers: k }, W: model.W }, m.ids, off, m.type === "attend");
          result = k === c.layers ? { embedding: run.embedding } : {}; // an embedding needs every layer
          if (m.type === "attend") { // (k, h, n, n) in one buffer, moved to the page rather than copied
            const flat = new Float32Array(k * c.h * n * n);
            run.attention.forEach((heads, l) => heads.forEach((rows, hh) => rows.forEach((row, i) => {
              flat.set(row, ((l * c.h + hh) * n + i) * n);
            })));
            Object.assign(result, { attention: flat, shape: [k, c.h, n, n] });
            transfer = [flat.buffer];
          }
        }
        scope.postMessage({ id: m.id, result }, transfer);
      } catch (error) {
        scope.postMessage({ id: m.id, error: String((error && error.message) || error) });
      }
    };
  }

  // ---- loading: the weights scripts, in order, into the worker; a word's rows when a sentence needs them ----
  const here = document.currentScript && document.currentScript.src; // the URL of this file
  const arrived = new Map(); // what each weights script handed over, by file, until its loader takes it
  let loading = null; // the page's loader (every box of the page shares one model), or null

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

  /** Run a weights script and take what it handed over (its global callback stores it in `arrived`). */
  async function readScript(file, M) {
    await insertScript(file, ns.format(M.no_weights, { file }));
    const data = arrived.get(file);
    arrived.delete(file);
    if (data === undefined) throw new Error(ns.format(M.no_weights, { file }));
    return data;
  }

  /** A {Promise, resolve, reject} triple. */
  function deferred() {
    let resolve, reject;
    const promise = new Promise((ok, fail) => { resolve = ok; reject = fail; });
    return { promise, resolve, reject };
  }

  /**
   * Start loading the model, or join the load under way. The loader: {base (Promise<{port, vocab, maxTokens,
   * call, rows}> once the vocabulary and the embeddings are in the worker), ready (Promise, once every layer
   * is), layers (how many are in), done (base64 characters in, of spec.characters), complete, loadMs,
   * after(k) (Promise, once more than k layers are in), onProgress(fn) (fn(loader) on every step; returns
   * its removal), cancel()}. A failed or cancelled load is dropped: the next use starts again.
   */
  function startLoading(spec) {
    if (loading) return loading;
    const M = spec.messages, port = ns.miniLM(), started = performance.now();
    const listeners = new Set(), waiters = [];
    let worker = null, stopped = null; // worker: ns.blobWorker's (core.js), once the vocabulary is read
    const loader = {
      layers: 0, done: 0, complete: false, loadMs: 0,
      onProgress(fn) { listeners.add(fn); return () => listeners.delete(fn); },
      after(k) {
        if (stopped) return Promise.reject(stopped);
        if (loader.complete || loader.layers > k) return Promise.resolve();
        const d = deferred();
        waiters.push({ k, d });
        return d.promise;
      },
      cancel() {
        const error = new Error(M.cancelled);
        error.name = "AbortError";
        stop(error);
      },
    };
    const tell = () => {
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (stopped) waiters[i].d.reject(stopped);
        else if (loader.complete || loader.layers > waiters[i].k) waiters[i].d.resolve();
        else continue;
        waiters.splice(i, 1);
      }
      listeners.forEach((fn) => fn(loader));
    };
    function stop(error) {
      if (stopped || loader.complete) return;
      stopped = error;
      loader.stopped = error;
      if (worker) worker.stop(error); // and every call waiting fails with `error`
      if (loading === loader) loading = null; // a later use starts again
      tell();
    }
    const call = (message, transfer) => worker.call(message, transfer);
    // each weights script calls its global with its data: kept until its loader takes it
    globalThis[spec.callback] = (payload) => arrived.set(spec.weights, payload);

    loader.base = (async () => {
      if (typeof Worker !== "function") throw new Error(M.no_worker);
      const data = await readScript(spec.weights, M);
      if (stopped) throw stopped;
      if (!data || data.format !== spec.format) {
        throw new Error(ns.format(M.bad_format, { got: data ? data.format : null, expected: spec.format }));
      }
      const { layers, words } = data;
      globalThis[layers.callback] = (index, entry) => arrived.set(`${layers.folder}/${index}.js`, entry);
      globalThis[words.callback] = (index, entry) => arrived.set(`${words.folder}/${index}.js`, entry);
      worker = ns.blobWorker(ns.miniLMWorker(workerMain), (text) => stop(new Error(text || M.worker_failed)));
      await call({ type: "init", tensors: data.tensors, config: data.config, words });
      loader.done = Object.values(data.tensors).reduce((sum, t) => sum + t.data.length, 0);
      tell();
      const shards = new Map(); // shard index -> Promise, once its rows are in the worker
      /** The shard of word rows `index`, read (its script beside this file) and sent to the worker. */
      const shard = (index) => {
        if (!shards.has(index)) {
          const p = readScript(`${words.folder}/${index}.js`, M).then((entry) => call({ type: "rows", entry }));
          p.catch(() => shards.delete(index)); // a later use tries again
          shards.set(index, p);
        }
        return shards.get(index);
      };
      const rows = (ids) => Promise.all([...new Set(ids.map((id) => Math.floor(id / words.rows)))].map(shard));
      const vocab = new Map(data.vocab.map((t, i) => [t, i]));
      return { port, vocab, maxTokens: data.max_tokens, call, rows, layers };
    })();
    loader.ready = loader.base.then(async (base) => {
      const parts = base.layers.parts;
      for (let p = 0; p < parts.length; p++) {
        const entry = await readScript(`${base.layers.folder}/${p}.js`, M);
        if (stopped) throw stopped;
        const last = p + 1 === parts.length || parts[p + 1].layer !== entry.layer;
        await call({ type: "part", layer: entry.layer, tensors: entry.tensors, last });
        if (last) loader.layers = entry.layer + 1;
        loader.done += parts[p].characters;
        tell();
      }
      loader.complete = true;
      loader.loadMs = performance.now() - started;
      tell();
      return base;
    });
    loader.ready.catch((error) => stop(error)); // a failure anywhere stops the load
    loader.base.catch(() => {}); // (told through `ready` and every later call)
    loading = loader;
    return loader;
  }

  /** The worker's attention, (k, h, n, n) in one Float32Array, as nested arrays of rows (views, no copy). */
  function nest(flat, [k, h, n]) {
    return Array.from({ length: k }, (_, l) => Array.from({ length: h }, (_, hh) => Array.from({ length: n },
      (_, i) => flat.subarray(((l * h + hh) * n + i) * n, ((l * h + hh) * n + i + 1) * n))));
  }

  /** The box's computer without a kernel: MiniLMWidget.compute's requests, answered in the page with the port
   * (the tokenizer here, the encoder in the worker); `layers`: run only the first layers (those loaded). */
  function pageBackend(spec) {
    return {
      loader: () => startLoading(spec),
      load: () => startLoading(spec).ready.then(() => ({ loadMs: loading ? loading.loadMs : 0 })),
      loaded: () => Boolean(loading && loading.complete),
      async call({ type, sentence, off, layers }) {
        const loader = startLoading(spec), m = await loader.base;
        const tok = m.port.tokenize(sentence, m.vocab, m.maxTokens);
        const result = { tokens: tok.tokens, truncated: tok.truncated, total: tok.total, unknown: tok.unknown };
        if (type === "tokenize") return { ...result, ids: tok.ids };
        await m.rows(tok.ids);
        const k = layers || spec.layers;
        while (loader.layers < k) await loader.after(loader.layers);
        const r = await m.call({ type, ids: tok.ids, off: off || [], layers: k });
        if (r.attention) r.attention = nest(r.attention, r.shape);
        return { ...result, ...r };
      },
    };
  }

  // ---- the box: mounted from its spec by the controller (controller.js); it keeps only its drawing ----------
  function dot(a, b) { let s = 0; for (let i = 0; i < a.length; i++) s += a[i] * b[i]; return s; }
  function largest(rows) { let m = 0; for (const row of rows) for (const v of row) m = Math.max(m, Math.abs(v)); return m; }
  const plain = (attention) => attention.map((heads) => heads.map((rows) => rows.map((row) => Array.from(row))));
  const MIN_CHANGE = 0.01; // the difference view's colour scale reaches at least this far from 0


  /**
   * A <select> of actions ("switch these heads off") that acts on a deliberate choice only: a click in its
   * list, Enter, or leaving it. The arrow keys (and typing) on a closed select change its value and fire
   * "change" at every key press, within the key's own task; those changes wait. (A choice made in its open
   * list comes in a later task, and acts at once.)
   */
  function actionMenu(select, act) {
    let keyed = false, waiting = false;
    const commit = () => {
      waiting = false;
      if (select.value !== "") act(select.value);
      select.value = "";
    };
    select.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        if (waiting) { event.preventDefault(); commit(); }
      } else if (event.key === "Escape") {
        if (waiting) { event.stopPropagation(); waiting = false; select.value = ""; }
      } else if (event.key !== "Tab") {
        keyed = true;
        setTimeout(() => { keyed = false; }, 0); // after the key's own "change", if any
      }
    });
    select.addEventListener("change", () => { if (keyed) waiting = true; else commit(); });
    select.addEventListener("blur", () => { keyed = false; if (waiting) commit(); });
  }

  // backend: {call(message) -> Promise<result>} that computes instead of the page (a live kernel's Python,
  // see `anywidget` below); spec: the box's spec, if not inline in `root`.
  function mount(root, backend, givenSpec) {
    if (root.mha) return root.mha;
    const spec = givenSpec || ns.readConfig(root);
    const computer = backend || pageBackend(spec);
    const loaded = () => (computer.loaded ? computer.loaded() : true);
    const L = spec.layers, H = spec.heads, M = spec.messages, { make, format } = ns;
    const state = {
      shown: spec.shown.slice(), focus: spec.shown.slice(), off: new Set(), result: null, intact: null,
      changeMax: 0, ticket: 0, cell: null, watching: null, said: null,
    };
    let layout = null;
    // the controls (the sentences, the menus that switch heads off, the difference view) and the status line
    // a reader's sentence: the controls follow, and a stored sentence is drawn at once (pick, below)
    const ctl = ns.controller(spec, {}, {}, { refresh() { ctl.sync(); pick(); return ctl.settings(); } });
    const { c, status } = ctl;
    const say = (text, level) => ns.setStatus(status, text, level || "");
    const button = (name, text) => make("button", { type: "button", name, className: "mha-button" }, text);
    const run = button("run", M.run), cancel = button("cancel", M.cancel);
    const toggle = button("toggle", ""), reset = button("reset", M.reset);
    cancel.hidden = true;
    const progress = make("progress", { className: "mm-progress", max: spec.characters, value: 0,
      "aria-label": M.progress, hidden: true });
    const menuHelp = make("p", { className: "mha-sr", id: ns.uniqueId("mm-menu-help") }, M.menu_help);
    for (const name of ["layer_off", "pattern_off"]) c[name].setAttribute("aria-describedby", menuHelp.id);

    // the grid of every head: a roving tabindex (one Tab stop; the arrow keys move, Enter shows one large)
    const gridHelp = make("p", { className: "mha-sr", id: ns.uniqueId("mm-grid-help") }, M.grid_help);
    const grid = make("div", { className: "mm-grid", role: "grid", "aria-label": M.grid,
      "aria-describedby": gridHelp.id });
    const header = make("div", { role: "row", className: "mm-row" },
      make("span", { role: "columnheader", className: "mm-corner" }));
    for (let hh = 0; hh < H; hh++) {
      header.append(make("span", { role: "columnheader", "aria-label": format(M.grid_head, { head: hh + 1 }) },
        String(hh + 1)));
    }
    grid.append(header);
    const thumbs = Array.from({ length: L }, (_, l) => {
      const row = make("div", { role: "row", className: "mm-row" },
        make("span", { role: "rowheader", className: "mm-layer" }, format(M.grid_layer, { layer: l + 1 })));
      grid.append(row);
      return Array.from({ length: H }, (_, hh) => { // a cell (named, focusable) holding the head's picture
        const at = { "data-layer": l, "data-head": hh };
        const canvas = make("canvas", { width: 48, height: 48, ...at });
        const cell = make("div", { className: "mm-cell", role: "gridcell", tabIndex: -1, ...at }, canvas);
        row.append(cell);
        return { cell, canvas };
      });
    });
    const bigTitle = make("p", { className: "mm-big-title" });
    const big = make("canvas", { className: "mha-canvas", tabIndex: 0, role: "img", "aria-label": M.big_empty });
    const figure = make("div", { className: "mha-figure", hidden: true }, big);
    const cellOut = make("p", { className: "mha-readout", "aria-live": "polite" });
    const readout = make("p", { className: "mm-readout", "aria-live": "polite" });
    root.querySelectorAll(".mm-fallback").forEach((e) => e.remove()); // for pages that run no scripts
    root.classList.add("mm-mounted");
    root.append( // (the lecture decks lay these children out in two columns: slides/template/mha_reveal)
      make("div", { className: "mha-controls" }, ns.labelled(spec, c, "sentence")),
      make("div", { className: "mha-controls" }, ns.labelled(spec, c, "other"), run, cancel, progress),
      status, gridHelp, grid,
      make("div", { className: "mha-controls" }, toggle, ns.labelled(spec, c, "layer_off"),
        ns.labelled(spec, c, "pattern_off"), reset, ns.labelled(spec, c, "difference"), menuHelp),
      readout, bigTitle, figure, cellOut);
    const picture = root.querySelector(".mm-print"); // the static picture, for print: after the controls
    if (picture) root.appendChild(picture);
    ctl.sync();
    say(M.idle);

    // the stored weights, if the spec has them: which sentences, and whether they could be read
    const stored = spec.stored ? ns.storedMaps(spec.stored, spec.stored.sentences, L, H) : null; // core.js
    const storedIndex = new Map((spec.stored ? spec.stored.sentences : []).map((s, i) => [s.text, i]));
    let storedRead = Boolean(stored);
    /** Whether the box draws `text` from the stored weights: stored, every head on, no model in the page. */
    const fromStored = (text) => storedRead && storedIndex.has(text) && !state.off.size && !loading;
    /** Draw the stored weights of `text` (fromStored(text) holds) unless a later run came first. */
    async function showStored(text, ticket) {
      const heads = (await stored)[storedIndex.get(text)]();
      if (ticket !== state.ticket) return;
      if (!state.result || state.result.tokens.length !== heads.tokens.length) state.cell = null;
      state.result = { ...heads, layers: L, off: [], sentence: text, stored: true };
      state.intact = null;
      state.changeMax = 0;
      readout.textContent = "";
      root.classList.remove("mm-failed"); // drawn, though the model could not be loaded here
      say(format(M.stored, { index: storedIndex.get(text) + 1, count: storedIndex.size, scale: spec.stored.scale }));
      draw();
    }
    /** The reader typed or picked a sentence: a stored one is drawn at once, with no Run. */
    function pick() {
      const text = ctl.state.sentence;
      if (fromStored(text)) showStored(text, ++state.ticket).catch(() => {});
    }
    const opened = !stored ? Promise.resolve() : stored.then(() => {
      if (!state.result && fromStored(ctl.state.sentence)) return showStored(ctl.state.sentence, state.ticket);
    }).catch((error) => {
      storedRead = false; // Run computes every sentence with the model
      say(format(M.stored_failed, { error: error.message }), "warning");
    });

    const key = (l, hh) => l * H + hh;
    const kind = (l, hh) => spec.kinds[spec.labels[l][hh]];
    const offList = () => [...state.off].sort((a, b) => a - b).map((i) => [Math.floor(i / H), i % H]);
    const difference = () => c.difference.checked;
    /** Head (l, hh)'s weights with the result's heads off minus the intact model's (zero if no head is off). */
    function changeOf(l, hh) {
      const now = state.result.attention[l][hh], intact = state.intact && state.intact.attention[l][hh];
      return now.map((row, i) => row.map((v, j) => (intact ? v - intact[i][j] : 0)));
    }

    function draw() {
      const [l, hh] = state.shown, r = state.result, diff = difference() && r && r.layers === L;
      toggle.textContent = format(state.off.has(key(l, hh)) ? M.toggle_on : M.toggle_off, { layer: l + 1, head: hh + 1 });
      const scale = Math.max(state.changeMax, MIN_CHANGE);
      const paint = diff ? (v) => ns.divergingColour(0.5 + v / (2 * scale)).rgb : (v) => ns.colour(v).rgb;
      thumbs.forEach((row, a) => row.forEach(({ cell, canvas }, b) => {
        const off = state.off.has(key(a, b)), here = r && a < r.layers;
        cell.classList.toggle("mm-shown", a === l && b === hh);
        cell.classList.toggle("mm-off", off);
        cell.tabIndex = a === state.focus[0] && b === state.focus[1] ? 0 : -1;
        cell.setAttribute("aria-selected", String(a === l && b === hh));
        const name = format(M.thumb, { layer: a + 1, head: b + 1, pattern: kind(a, b) });
        cell.setAttribute("aria-label", name + (off ? M.thumb_off : "") + (r && !here ? M.thumb_waiting : ""));
        cell.title = cell.getAttribute("aria-label");
        ns.drawThumb(canvas, here ? (diff ? changeOf(a, b) : r.attention[a][b]) : null, paint, off);
      }));
      drawBig();
    }

    /** The head shown large: drawHeatmaps (heatmaps.js), with its tokens, colour bar and read-out. */
    function drawBig() {
      const r = state.result, [l, hh] = state.shown, head = { layer: l + 1, head: hh + 1 };
      const pattern = kind(l, hh);
      if (!r || l >= r.layers) { // nothing run yet, or its layer is still loading
        figure.hidden = true;
        layout = null;
        bigTitle.textContent = r ? format(M.big_waiting, { ...head, pattern }) : "";
        big.setAttribute("aria-label", M.big_empty);
        tell(null);
        return;
      }
      figure.hidden = false; // before measuring the room it has
      const n = r.tokens.length, k = r.off.length, diff = difference() && r.layers === L;
      const switched = state.off.has(key(l, hh)) ? M.big_switched : "";
      let values = r.attention[l][hh], lo = 0, hi = 1;
      if (diff) {
        values = changeOf(l, hh);
        hi = Math.max(largest(values), MIN_CHANGE);
        lo = -hi;
        const first = Math.min(...r.off.map(([a]) => a)); // a head off changes only the layers after its own
        bigTitle.textContent = !k || !state.intact ? format(M.big_diff_none, { ...head, pattern })
          : l <= first ? format(M.big_diff_before, { ...head, pattern, first: first + 1 })
          : format(M.big_diff, { ...head, pattern, k, largest: largest(values).toFixed(3) });
        big.setAttribute("aria-label", format(M.big_label_diff, { ...head, n, k }));
      } else {
        bigTitle.textContent = format(M.big, { ...head, pattern, switched,
          others: r.off.length ? format(M.big_others, { k: r.off.length }) : "" });
        big.setAttribute("aria-label", format(M.big_label, { ...head, n }));
      }
      layout = ns.drawHeatmaps(big, {
        panels: [{ title: format(M.panel, head), values, mask: null }],
        rowLabels: r.tokens, colLabels: r.tokens, rowName: M.rows, colName: M.cols,
        lo, hi, cell: [26, 26], maxWidth: Math.max(300, big.parentElement.clientWidth || 720), maxColumns: 1,
        format: null, selected: state.cell && { panel: 0, ...state.cell }, palette: diff ? "diverging" : null,
        scaleLabel: diff ? M.diff_scale : M.scale, maskKey: null,
      });
      tell(state.cell);
    }

    /** The read-out of one cell of the large head (pointed at, tapped or reached with the arrow keys). */
    function tell(cell) {
      const r = state.result, [l, hh] = state.shown;
      if (!cell || !r || l >= r.layers) { cellOut.textContent = ""; return; }
      const weight = r.attention[l][hh][cell.row][cell.col];
      const fields = { layer: l + 1, head: hh + 1, query: r.tokens[cell.row], row: cell.row + 1,
        key: r.tokens[cell.col], col: cell.col + 1, weight: weight.toFixed(3) };
      if (difference() && r.layers === L && state.intact && r.off.length) {
        const intact = state.intact.attention[l][hh][cell.row][cell.col], d = weight - intact;
        fields.intact = intact.toFixed(3);
        fields.change = (d > 0 ? "+" : "") + d.toFixed(3);
        cellOut.textContent = format(M.cell_diff, fields);
      } else {
        cellOut.textContent = format(M.cell, fields);
      }
    }
    /** Show head (l, hh) large, and keep the grid's Tab stop on it. */
    function show(at) {
      state.shown = at.slice();
      state.focus = at.slice();
      draw();
    }
    ns.heatmapReadout(root, big, { // pointer, tap and arrow keys (Page Up/Down: the previous/next head of all)
      layout: () => layout, selected: () => state.cell, say: tell, draw: drawBig,
      select(cell) { state.cell = { row: cell.row, col: cell.col }; drawBig(); },
      size: () => state.result && state.shown[0] < state.result.layers && { panels: 1, n: state.result.tokens.length },
      page(step) {
        const i = (key(...state.shown) + step + L * H) % (L * H);
        show([Math.floor(i / H), i % H]);
      },
    });

    grid.addEventListener("click", (event) => {
      const cell = event.target.closest(".mm-cell");
      if (cell) show([Number(cell.dataset.layer), Number(cell.dataset.head)]);
    });
    grid.addEventListener("keydown", (event) => {
      let [l, hh] = state.focus;
      const ctrl = event.ctrlKey || event.metaKey;
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); show(state.focus); return; }
      const moves = {
        ArrowLeft: () => { hh = Math.max(0, hh - 1); }, ArrowRight: () => { hh = Math.min(H - 1, hh + 1); },
        ArrowUp: () => { l = Math.max(0, l - 1); }, ArrowDown: () => { l = Math.min(L - 1, l + 1); },
        Home: () => { hh = 0; if (ctrl) l = 0; }, End: () => { hh = H - 1; if (ctrl) l = L - 1; },
        PageUp: () => { l = 0; }, PageDown: () => { l = L - 1; },
      };
      if (!moves[event.key]) return;
      event.preventDefault();
      moves[event.key]();
      state.focus = [l, hh];
      thumbs.forEach((row, a) => row.forEach(({ cell }, b) => { cell.tabIndex = a === l && b === hh ? 0 : -1; }));
      thumbs[l][hh].cell.focus();
    });

    function readOut(values, k) {
      const total = L * H, fixed = (v) => v.toFixed(3);
      const pair = Number.isNaN(values.sim0) ? ""
        : k === 0 ? format(M.pair, { sim: fixed(values.sim0) }) : format(M.pair_off, { sim: fixed(values.sim), sim0: fixed(values.sim0) });
      readout.textContent = (k === 0 ? format(M.all_on, { total }) : format(M.some_off, { k, total, cos: fixed(values.cos) })) + pair;
    }

    /** How far the load has come, in the status line and the bar: MB and layers in, or layers drawn. */
    // The bar moves with every file; the status line (read aloud) once a layer is in or drawn, not more often.
    function sayProgress(loader) {
      progress.value = loader.done;
      const r = state.result, layers = r ? r.layers : loader.layers, said = `${Boolean(r)} ${layers}`;
      if (said === state.said) return;
      state.said = said;
      say(format(r ? M.partial : M.loading, { done: (loader.done / 1e6).toFixed(1), layers, total: L }));
    }

    /** While the page's model loads: its progress in the status line and the bar, and the Cancel button. */
    function watch(loader) {
      if (state.watching === loader) return;
      state.watching = loader;
      state.said = null;
      progress.hidden = cancel.hidden = false;
      const update = () => {
        if (loader.complete || loader.stopped) stopWatching();
        else sayProgress(loader);
      };
      const stopWatching = () => {
        unsubscribe();
        state.watching = null;
        const hadFocus = document.activeElement === cancel;
        progress.hidden = cancel.hidden = true;
        if (hadFocus) run.focus(); // not lost with the button that goes away
      };
      const unsubscribe = loader.onProgress(update);
      update();
    }

    /** The box as before Run, with a message (Cancel, Escape). */
    function ready(message) {
      state.result = state.intact = null;
      state.cell = null;
      readout.textContent = "";
      say(message);
      draw();
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
      const current = () => ticket === state.ticket;
      if (fromStored(text)) {
        try { await showStored(text, ticket); return; } catch (error) { /* the model computes it */ }
      }
      try {
        if (!loaded() && computer.loader) { // the first Run: each layer's heads drawn as soon as it is in
          const loader = computer.loader();
          watch(loader);
          while (!loader.complete) {
            const k = loader.layers;
            if (k > 0 && k < L) {
              const off = offList(), r = await computer.call({ type: "attend", sentence: text, off, layers: k });
              if (!current()) return;
              if (!state.result || state.result.tokens.length !== r.tokens.length) state.cell = null;
              state.result = { ...r, layers: k, off, sentence: text };
              state.intact = null;
              draw();
              if (!loader.complete) sayProgress(loader);
            }
            await loader.after(k);
            if (!current()) return;
          }
        }
        say(M.running);
        const off = offList();
        const r = await computer.call({ type: "attend", sentence: text, off });
        if (r.truncated) notes.push(format(M.truncated, { n: r.total, max: spec.max_tokens }));
        if (r.unknown.length) notes.push(format(M.unknown, { k: r.unknown.length, words: r.unknown }));
        let intact = null; // the intact model's run: for the cosine and the difference view
        if (off.length) {
          const same = state.intact && state.intact.sentence === text;
          intact = same ? state.intact : { ...(await computer.call({ type: "attend", sentence: text, off: [] })), sentence: text };
        }
        let sim0 = NaN, sim = NaN;
        if (second.trim()) {
          const b0 = await computer.call({ type: "embed", sentence: second, off: [] });
          const b = off.length ? await computer.call({ type: "embed", sentence: second, off }) : b0;
          sim0 = dot((intact || r).embedding, b0.embedding); sim = dot(r.embedding, b.embedding);
        }
        if (!current()) return;
        if (!state.result || state.result.tokens.length !== r.tokens.length) state.cell = null;
        state.result = { ...r, layers: L, off, sentence: text };
        state.intact = intact;
        state.changeMax = 0;
        if (intact) {
          for (let l = 0; l < L; l++) for (let hh = 0; hh < H; hh++) state.changeMax = Math.max(state.changeMax, largest(changeOf(l, hh)));
        }
        say(notes.join(" ") || format(M.shown, { n: r.tokens.length }), notes.length ? "warning" : "");
        draw();
        readOut({ cos: dot((intact || r).embedding, r.embedding), sim, sim0 }, off.length);
      } catch (error) {
        if (!current()) return;
        if (error.name === "AbortError") { ready(M.cancelled); return; }
        say(format(M.failed, { error: error.message }), "error");
        if (!loaded()) root.classList.add("mm-failed"); // no model here (a deck, say): the static picture
      }
    }
    /** Stop loading the model (Escape, Cancel): the box returns to what it was before Run. */
    function stopLoading() {
      if (state.watching) state.watching.cancel();
    }

    const onChange = (fn) => () => { fn(); draw(); if (loaded()) refresh(); };
    run.addEventListener("click", () => refresh());
    cancel.addEventListener("click", stopLoading);
    root.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && state.watching) { event.preventDefault(); stopLoading(); }
    });
    for (const name of ["sentence", "other"]) {
      c[name].addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); refresh(); } });
    }
    toggle.addEventListener("click", onChange(() => {
      const i = key(...state.shown);
      if (state.off.has(i)) state.off.delete(i); else state.off.add(i);
    }));
    actionMenu(c.layer_off, onChange(() => {
      for (let hh = 0; hh < H; hh++) state.off.add(key(Number(c.layer_off.value), hh));
    }));
    actionMenu(c.pattern_off, onChange(() => {
      for (let l = 0; l < L; l++) for (let hh = 0; hh < H; hh++) {
        if (spec.labels[l][hh] === c.pattern_off.value) state.off.add(key(l, hh));
      }
    }));
    reset.addEventListener("click", onChange(() => state.off.clear()));
    c.difference.addEventListener("change", draw);
    draw();

    const api = (type) => async (text, options) => {
      if (typeof text !== "string") throw new TypeError(format(M.invalid.text, { name: "sentence", value: JSON.stringify(text) }));
      return computer.call({ type, sentence: text, off: (options && options.off) || [] });
    };
    return ctl.expose(root, { // and settings, update(settings): the two sentences
      spec,
      load: async () => ({ loadMs: computer.load ? (await computer.load()).loadMs : 0 }),
      tokenize: api("tokenize"),
      attend: async (text) => { const r = await api("attend")(text); return { tokens: r.tokens, attention: plain(r.attention) }; },
      embed: async (text, options) => (await api("embed")(text, options)).embedding,
      refresh,
      cancel: stopLoading,
      get off() { return offList(); },
      set off(pairs) { state.off = new Set(pairs.map(([l, hh]) => key(l, hh))); draw(); },
      get shown() { return state.shown.slice(); },
      set shown(at) { show(at); },
      canvas: big,
      get layout() { return ns.layoutView(layout); },
      ready: opened,
      async stored(text) {
        if (!stored || !storedIndex.has(text)) return null;
        const heads = (await stored)[storedIndex.get(text)]();
        return { tokens: heads.tokens, attention: plain(heads.attention) };
      },
      get drawn() {
        const r = state.result;
        return r && { sentence: r.sentence, tokens: r.tokens.slice(), layers: r.layers, stored: Boolean(r.stored) };
      },
    });
  }

  function mountAll() { document.querySelectorAll(".mha-minilm").forEach((root) => mount(root)); }

  // In a live kernel (book.minilm.page.MiniLMWidget): the same box, computed by Python. Each request
  // goes to Python as a custom message {id, type, sentence, off}; the reply is {id, result} (the attention as
  // float32 bytes in buffers[0], of shape result.attention_shape) or {id, error} (core.js's pythonBox).
  const anywidget = ns.pythonBox("mha-minilm", mount);

  if (document.currentScript) { // a classic script of the site: mount the page's boxes (not as a module)
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
    else mountAll();
  }
  ns.mountMiniLM = mount;
  globalThis.mhaMiniLM = { mount, mountAll, anywidget };
})();
