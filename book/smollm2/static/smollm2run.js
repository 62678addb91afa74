/* "Run on your own text" of the figure mha-smollm2: SmolLM2-135M-Instruct in the reader's browser, heads
 * switchable off (book/smollm2/weights.py, issue 47).
 *
 * A classic script (no modules, nothing from the network), so it runs from disk too; it loads before
 * smollm2.js, whose mount calls ns.smolLM2Run(root, exposed, view) on the site (not in a live kernel). It adds
 * to the root's `mha`:
 *   predict(text, {off})            Promise<{ids, tokens, attention, top}>, as mha.pretrained.smollm2.predict:
 *                                   attention[layer][head][query][key] (nested arrays), top[i] the 5 most
 *                                   probable next tokens after position i as [id, probability], highest first
 *   generate(text, {max_new_tokens, off})  Promise<the new ids>, greedy with the KV cache (stops after
 *                                   <|im_end|>, kept), as mha.pretrained.smollm2.generate
 *   load()                          Promise, resolved once the model is in the page; cancel() stops a load
 *   decode(ids)                     Promise<text>
 * Either call loads the model first. A bad argument (empty text, a head the model lacks, a text past the
 * page's limit of spec.run.max_tokens tokens) rejects with a plain Error saying why.
 *
 * Loading: the weights are classic scripts beside this file (book.smollm2.weights): smollm2-weights.js (the
 * sizes, the tokenizer, where each tensor lies), then smollm2-parts/<k>.js, the GGUF file's own blocks in
 * base64, 2 MB each. The page decodes each part (atob, one short task) and transfers its bytes to one Web
 * Worker, made from a Blob URL (core.js's blobWorker: a worker from a file does not start from file://),
 * which holds the port (ports/smollm2_model.js) and computes everything: tokenizer, forward pass, generation.
 *
 * Shape legend: L 30 layers, h 9 query heads, g 3 key/value groups, n tokens, V 49,152.
 */
(function () {
  "use strict";
  const ns = globalThis.mhaFrontEnd;
  const here = typeof document !== "undefined" && document.currentScript ? document.currentScript.src : null;

  // -- the worker: its text is this function's and the port's ------------------------------------------------
  function workerMain(scope, S) {
    let manifest = null, bytes = null, model = null, tok = null;
    scope.onmessage = (event) => {
      const m = event.data;
      try {
        let result = null;
        const transfer = [];
        if (m.type === "init") {
          manifest = m.manifest;
          bytes = new Uint8Array(manifest.bytes);
        } else if (m.type === "part") {
          bytes.set(new Uint8Array(m.buffer), m.index * manifest.parts.bytes);
          return;
        } else if (m.type === "ready") {
          tok = S.tokenizer(manifest.tokenizer);
          model = S.model(manifest, bytes);
        } else if (m.type === "tokenize") {
          result = tok.encode(m.text);
        } else if (m.type === "decode") {
          result = tok.decode(m.ids);
        } else if (m.type === "predict") {
          const ids = m.ids || tok.encode(m.text);
          if (ids.length > m.max) throw new Error(`LIMIT ${ids.length}`);
          const out = model.predict(ids, m.off);
          const n = ids.length, flat = new Float32Array(out.attention.length * out.attention[0].length * n * n);
          let at = 0;
          for (const heads of out.attention) for (const p of heads) { flat.set(p, at); at += p.length; }
          transfer.push(flat.buffer);
          result = { ids, tokens: ids.map((i) => tok.decode([i])), attention: flat, top: out.top };
        } else if (m.type === "generate") {
          const ids = tok.encode(m.text);
          if (ids.length + m.maxNew > m.max) throw new Error(`LIMIT ${ids.length}`);
          result = model.generate(ids, m.maxNew, m.off);
        }
        scope.postMessage({ id: m.id, result }, transfer);
      } catch (error) {
        scope.postMessage({ id: m.id, error: String((error && error.message) || error) });
      }
    };
  }

  // -- loading, once per page: every figure of the page shares the model -------------------------------------
  let engine = null;
  let M = null; // spec.run.messages: every text the model's loading and contract reject with
  const arrived = new Map();
  globalThis.mhaSmolLM2Weights = (manifest) => arrived.set("manifest", manifest);
  globalThis.mhaSmolLM2Part = (index, text) => arrived.set(index, text);

  function insertScript(file) {
    return new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.onload = () => { script.remove(); resolve(); };
      script.onerror = () => { script.remove(); reject(new Error(ns.format(M.no_script, { file }))); };
      script.src = here ? new URL(file, here).href : file;
      document.head.appendChild(script);
    });
  }
  function binary(text) {
    const s = atob(text), out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }

  function newEngine(run) {
    M = run.messages;
    let worker = null, ready = null, cancelled = false; // worker: ns.blobWorker's (core.js), one a load
    const listeners = new Set();
    const progress = { done: 0, total: run.bytes, loaded: false, loading: false };
    const tell = () => listeners.forEach((f) => f({ ...progress }));
    function stop(reason) { // the worker's calls, and its later posts, fail with `reason`; a later load starts again
      if (worker) worker.stop(new Error(reason));
      ready = null;
      progress.loading = progress.loaded = false;
      progress.done = 0;
      tell();
    }
    async function loadAll() {
      cancelled = false;
      progress.loading = true;
      progress.done = 0;
      tell();
      if (typeof Worker !== "function") throw new Error(M.no_worker);
      await insertScript(run.weights);
      const manifest = arrived.get("manifest");
      arrived.delete("manifest");
      if (!manifest || manifest.format !== run.format) throw new Error(ns.format(M.unreadable, { file: run.weights }));
      if (cancelled) throw new Error(M.cancelled);
      worker = ns.blobWorker(ns.smolLM2Worker(workerMain), () => stop(M.worker_failed));
      progress.done = JSON.stringify(manifest).length;
      tell();
      worker.post({ type: "init", manifest });
      const folder = manifest.parts.folder;
      for (let k = 0; k < manifest.parts.count; k++) {
        await insertScript(`${folder}/${k}.js`);
        if (cancelled) throw new Error(M.cancelled);
        const text = arrived.get(k);
        arrived.delete(k);
        if (typeof text !== "string") throw new Error(ns.format(M.unreadable, { file: `${folder}/${k}.js` }));
        const part = binary(text);
        worker.post({ type: "part", index: k, buffer: part.buffer }, [part.buffer]);
        progress.done += text.length;
        tell();
        await new Promise((resolve) => setTimeout(resolve, 0)); // the page stays responsive between parts
      }
      await worker.call({ type: "ready" });
      progress.loading = false;
      progress.loaded = true;
      tell();
    }
    return {
      progress,
      listen(f) { listeners.add(f); return () => listeners.delete(f); },
      load() {
        if (!ready) {
          ready = loadAll().catch((error) => {
            const reason = cancelled ? M.cancelled : error.message;
            stop(reason);
            throw new Error(reason);
          });
        }
        return ready;
      },
      cancel() {
        if (!progress.loading) return;
        cancelled = true;
        stop(M.cancelled);
      },
      async call(message, transfer) { await this.load(); return worker.call(message, transfer); },
    };
  }

  // -- the contract: checks, then the worker -----------------------------------------------------------------
  function api(run, config) {
    M = run.messages;
    engine = engine || newEngine(run);
    const L = config.layers, H = config.heads, max = run.max_tokens;
    function checkText(text) {
      if (typeof text !== "string") throw new Error(ns.format(M.not_string, { type: text === null ? "null" : typeof text }));
      if (!text) throw new Error(M.empty_text);
    }
    function checkOff(options) {
      const off = options && options.off !== undefined ? options.off : [];
      if (!Array.isArray(off)) throw new Error(M.off_array);
      for (const pair of off) {
        if (!Array.isArray(pair) || pair.length !== 2 || !pair.every(Number.isInteger)) {
          throw new Error(ns.format(M.off_pair, { pair: JSON.stringify(pair) }));
        }
        if (!(pair[0] >= 0 && pair[0] < L && pair[1] >= 0 && pair[1] < H)) {
          throw new Error(ns.format(M.off_head, { pair: String(pair), last_layer: L - 1, last_head: H - 1 }));
        }
      }
      return off.map((p) => [p[0], p[1]]);
    }
    const limit = (error, extra) => {
      const m = /^LIMIT (\d+)$/.exec(error.message);
      if (!m) return error;
      return new Error(ns.format(M.too_long, { n: m[1], extra, max }));
    };
    function nested(flat, n) {
      return Array.from({ length: L }, (_, l) => Array.from({ length: H }, (_, h) => Array.from({ length: n },
        (_, i) => Array.from(flat.subarray(((l * H + h) * n + i) * n, ((l * H + h) * n + i + 1) * n)))));
    }
    return {
      async predict(text, options) {
        checkText(text);
        const off = checkOff(options);
        const r = await engine.call({ type: "predict", text, off, max }).catch((e) => { throw limit(e, ""); });
        return { ids: r.ids, tokens: r.tokens, attention: nested(r.attention, r.ids.length), top: r.top };
      },
      async generate(text, options) {
        checkText(text);
        const off = checkOff(options), maxNew = options && options.max_new_tokens;
        if (!Number.isInteger(maxNew) || maxNew < 1) {
          throw new Error(ns.format(M.max_new, { value: JSON.stringify(maxNew) }));
        }
        if (maxNew >= max) throw new Error(ns.format(M.max_new_long, { value: maxNew, max }));
        return engine.call({ type: "generate", text, off, maxNew, max })
          .catch((e) => { throw limit(e, ns.format(M.too_long_new, { k: maxNew })); });
      },
      async decode(ids) { return engine.call({ type: "decode", ids: Array.from(ids) }); },
      load: () => engine.load(),
      cancel: () => engine.cancel(),
      get loaded() { return engine.progress.loaded; },
      engine,
    };
  }

  // -- the figure's section: "Run on your own text" -----------------------------------------------------------
  function attach(root, exposed, view) {
    const spec = exposed.spec, run = spec.run;
    if (!run) return exposed;
    const calls = api(run, spec), { make, format } = ns, M = run.messages;
    Object.assign(exposed, { predict: calls.predict, generate: calls.generate, load: calls.load, cancel: calls.cancel,
      decode: calls.decode });
    const L = spec.layers, H = spec.heads, G = spec.kv_heads, per = H / G, mb = (run.bytes / 1e6).toFixed(1);
    const off = new Set(); // layer * H + head
    const button = (name, text) => make("button", { type: "button", name, className: "mha-button" }, text);
    const textId = ns.uniqueId("ms-run-text");
    const text = make("textarea", { id: textId, name: "run_text", rows: 3, className: "ms-run-text" });
    text.value = run.default_text;
    const go = button("run_model", format(M.run, { mb })), cancel = button("cancel_load", M.cancel);
    cancel.hidden = true;
    const bar = make("progress", { className: "mm-progress", max: run.bytes, value: 0, "aria-label": M.progress, hidden: true });
    const status = make("p", { className: "mha-status", role: "status", "aria-live": "polite" }, format(M.idle, { mb }));
    // heads off: one box per head, a box per key/value group, and the census's kinds
    const boxes = new Map(), groupBoxes = [];
    const layers = make("div", { className: "ms-off-layers" });
    for (let l = 0; l < L; l++) {
      const fs = make("fieldset", { className: "ms-off-layer" }, make("legend", {}, format(M.layer, { layer: l + 1 })));
      for (let g = 0; g < G; g++) {
        const gb = make("input", { type: "checkbox", "data-layer": l, "data-group": g });
        groupBoxes.push(gb);
        const span = make("span", { className: "ms-off-group" },
          make("label", { className: "ms-off-glabel" }, gb, format(M.group_box, { group: g + 1 })));
        for (let k = 0; k < per; k++) {
          const h = g * per + k;
          const box = make("input", { type: "checkbox", "data-layer": l, "data-head": h,
            "aria-label": format(M.head_box_label, { layer: l + 1, head: h + 1, kind: spec.kinds[spec.labels[l][h]] }) });
          boxes.set(l * H + h, box);
          span.append(make("label", { className: "ms-off-head", title: spec.kinds[spec.labels[l][h]] }, box, String(h + 1)));
        }
        fs.append(span);
      }
      layers.append(fs);
    }
    const kindButtons = Object.keys(run.kinds).map((kind) => {
      const heads = [];
      spec.labels.forEach((row, l) => row.forEach((label, h) => { if (label === kind) heads.push(l * H + h); }));
      const b = button(`off_${kind}`, format(M.kind_off, { kinds: run.kinds[kind], k: heads.length }));
      b.addEventListener("click", () => { heads.forEach((i) => off.add(i)); changed(); });
      return b;
    });
    const allOn = button("all_on", M.all_on);
    const offCount = make("p", { className: "ms-off-count", "aria-live": "polite" });
    const offPanel = make("details", { className: "ms-off" }, make("summary", {}, M.off_summary),
      make("div", { className: "mha-controls" }, ...kindButtons, allOn), offCount, layers);
    const predictions = make("div", { className: "ms-top" });
    const continuation = make("p", { className: "ms-continuation", "aria-live": "polite" });
    const section = make("div", { className: "ms-run", role: "region", "aria-label": M.heading },
      make("h4", {}, M.heading),
      make("p", {}, format(M.about, { mb, max: run.max_tokens })),
      make("label", { for: textId }, M.text_label), text,
      make("div", { className: "mha-controls" }, go, cancel, bar), status, offPanel, predictions, continuation);
    const picture = root.querySelector(".mm-print");
    if (picture) root.insertBefore(section, picture); else root.append(section);

    let ticket = 0;
    const pairs = () => [...off].sort((a, b) => a - b).map((i) => [Math.floor(i / H), i % H]);
    function syncBoxes() {
      boxes.forEach((box, i) => { box.checked = off.has(i); });
      groupBoxes.forEach((gb) => {
        const l = Number(gb.dataset.layer), g = Number(gb.dataset.group);
        const inGroup = [0, 1, 2].map((k) => l * H + g * per + k).filter((i) => off.has(i)).length;
        gb.checked = inGroup === per;
        gb.indeterminate = inGroup > 0 && inGroup < per;
      });
      offCount.textContent = off.size ? format(M.off_count, { k: off.size, total: L * H }) : format(M.none_off, { total: L * H });
      exposed.off = pairs();
    }
    function changed() {
      syncBoxes();
      if (calls.loaded) compute();
    }
    layers.addEventListener("change", (event) => {
      const t = event.target;
      if (t.dataset.head !== undefined) {
        const i = Number(t.dataset.layer) * H + Number(t.dataset.head);
        if (t.checked) off.add(i); else off.delete(i);
      } else if (t.dataset.group !== undefined) {
        const l = Number(t.dataset.layer), g = Number(t.dataset.group);
        for (let k = 0; k < per; k++) { if (t.checked) off.add(l * H + g * per + k); else off.delete(l * H + g * per + k); }
      }
      changed();
    });
    allOn.addEventListener("click", () => { off.clear(); changed(); });

    const unlisten = calls.engine.listen((p) => {
      go.textContent = p.loaded ? M.run_again : format(M.run, { mb });
      bar.value = p.done;
      bar.hidden = cancel.hidden = !p.loading;
      if (p.loading) {
        ns.setStatus(status, format(M.loading, { done: (p.done / 1e6).toFixed(1), mb }));
      }
    });
    cancel.addEventListener("click", () => calls.cancel());
    root.addEventListener("keydown", (event) => { if (event.key === "Escape" && calls.engine.progress.loading) calls.cancel(); });
    void unlisten;

    function tokenText(t) { return JSON.stringify(t).slice(1, -1); }
    async function showTop(r) {
      const ids = [...new Set(r.top.flat().map(([id]) => id))];
      const names = await Promise.all(ids.map((id) => calls.decode([id])));
      const name = new Map(ids.map((id, j) => [id, names[j]]));
      const table = make("table", { className: "ms-top-table" },
        make("caption", {}, M.top_caption),
        make("tr", {}, make("th", { scope: "col" }, M.position), make("th", { scope: "col" }, M.token),
          ...[1, 2, 3, 4, 5].map((k) => make("th", { scope: "col" }, format(M.rank, { k })))),
        ...r.tokens.map((t, i) => make("tr", {}, make("td", {}, String(i + 1)),
          make("th", { scope: "row" }, make("code", {}, tokenText(t))),
          ...r.top[i].map(([id, p]) => make("td", {}, make("code", {}, tokenText(name.get(id))), ` ${(100 * p).toFixed(1)}%`)))));
      predictions.replaceChildren(make("div", { className: "ms-top-scroll", tabIndex: 0, role: "region",
        "aria-label": M.top_caption }, table));
    }
    async function compute() {
      const mine = ++ticket, value = text.value;
      if (!value) { ns.setStatus(status, M.empty, "warning"); return; }
      try {
        if (!calls.loaded) await calls.load();
        if (mine !== ticket) return;
        ns.setStatus(status, M.running);
        const o = pairs(), r = await calls.predict(value, { off: o });
        if (mine !== ticket) return;
        view.show({ ids: r.ids, tokens: r.tokens, attention: r.attention }, null);
        exposed.off = o;
        await showTop(r);
        ns.setStatus(status, format(M.generating, { n: r.ids.length }));
        const ids = await calls.generate(value, { max_new_tokens: run.new_tokens, off: o });
        if (mine !== ticket) return;
        continuation.replaceChildren(make("strong", {}, M.continuation), " ", make("span", {}, value),
          make("mark", {}, await calls.decode(ids)));
        ns.setStatus(status, format(o.length ? M.done_off : M.done, { n: r.ids.length, k: o.length, m: ids.length }));
      } catch (error) {
        if (mine === ticket) ns.setStatus(status, format(M.failed, { error: error.message }), "warning");
      }
    }
    go.addEventListener("click", () => compute());
    syncBoxes();
    return exposed;
  }

  ns.smolLM2Run = attach;
  globalThis.mhaSmolLM2Run = { attach, api };
})();
