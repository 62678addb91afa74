/* mha front end, core: the namespace, small DOM helpers, auto-mount, the anywidget adapters and the requests
 * to Python or to a Web Worker.
 *
 * Every front end of the book is a CLASSIC script that adds to one global namespace, globalThis.mhaFrontEnd,
 * so that a page opened from disk (file://, where Chromium refuses ES modules and fetch) works with plain
 * <script src> tags and data inline in the page. The files, in load order (book.widgets.frontend.SCRIPTS,
 * which the book's pages, the lecture decks and the tests all load):
 *
 *   ports/*.js        the ports: every computation the page makes that has a Python twin, DOM-free, each
 *                     file naming its twin (random numbers, the explorer's weights, the settings' rules,
 *                     the calculator's sums, the window masks, MiniLM, ...); loaded first, in name order
 *   core.js           this file: DOM helpers, auto-mount, the anywidget adapters, requests to Python
 *                     (pythonCalls) and to a page's Web Worker (blobWorker), the stored maps inflated
 *                     (storedMaps)
 *   controller.js     the one controller: controls, status and read-out, from a figure's spec
 *   heatmaps.js       the canvas heatmap grid
 *   explorer.js, stepper.js, calculator.js, windows.js, minilm.js: the figures, each only its
 *                     drawing (mha.css is their look)
 *
 * In a live kernel, anywidget wants an ES module; the Python side concatenates the same files and appends
 *   export default globalThis.mhaFrontEnd.anywidget("mountExplorer");
 * (see ns.anywidget below). The files are strict-mode code with no top-level bindings, so they are valid
 * both as classic scripts and as the body of that module.
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});

  // ---------------------------------------------------------------------------------------------------
  // DOM helpers: text always goes in as text nodes, never as HTML.
  // ---------------------------------------------------------------------------------------------------

  /** make("p", {className: "x"}, "text", child, ...): an element; strings become text nodes. */
  function make(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (key === "className" || key === "textContent" || key === "value" || key === "checked" || key === "disabled" || key === "tabIndex") node[key] = value;
      else if (value !== undefined && value !== null && value !== false) node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat(Infinity)) if (child != null) node.append(child); // append(string) makes a text node
    return node;
  }

  let uid = 0;
  const uniqueId = (prefix) => `${prefix}-${++uid}`;
  /** A labelled control: <label for=id>text</label><control id=id name=name>, wrapped in a span. */
  function field(text, control, extra) {
    control.id = control.id || uniqueId(`mha-${control.name}`);
    return make("span", { className: `mha-field mha-field-${control.name}` },
      make("label", { for: control.id }, text), control, extra);
  }

  function select(name, options, value) {
    const node = make("select", { name });
    setOptions(node, options, value);
    return node;
  }

  /** Replace a select's options ([value, text] pairs or values) only if they changed, then set its value. */
  function setOptions(node, options, value) {
    const pairs = options.map((o) => (Array.isArray(o) ? o : [o, String(o)]));
    const same = node.options.length === pairs.length && pairs.every(([v], i) => node.options[i].value === String(v));
    if (!same) node.replaceChildren(...pairs.map(([v, t]) => make("option", { value: String(v) }, t)));
    node.value = String(value);
  }

  /** The inline JSON of a root element: a data-mha-config attribute or a <script type="application/json"> in it. */
  function readConfig(el) {
    if (el.dataset.mhaConfig) return JSON.parse(el.dataset.mhaConfig);
    const script = el.querySelector(':scope > script[type="application/json"]');
    if (script) return JSON.parse(script.textContent);
    const previous = el.previousElementSibling;
    if (previous && previous.matches('script[type="application/json"]')) return JSON.parse(previous.textContent);
    return null;
  }

  /** Mount every <div class=className> of the page that has inline data, once the page is parsed. */
  function autoMount(className, mount) {
    if (typeof document === "undefined") return;
    const run = () => {
      for (const el of document.querySelectorAll(`div.${className}`)) {
        if (el.mha) continue; // mounted already
        const config = readConfig(el);
        if (config) mount(el, config);
      }
    };
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", run);
    else run();
  }

  /** Call `redraw` when the page switches between light and dark (canvas text takes the page's colour). */
  function onThemeChange(redraw) {
    if (typeof document === "undefined") return;
    new MutationObserver(() => redraw()).observe(document.documentElement,
      { attributes: true, attributeFilter: ["data-theme", "data-mode", "class"] }); // pydata-sphinx-theme's switch
    if (root.matchMedia) root.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => redraw());
  }

  /**
   * Call `redraw` before the page is printed and after: while ns.printing is true the canvases are drawn for
   * paper (black text, whatever the screen's theme), and mha.css scales each one to the paper's width, so a
   * printed figure is the picture it shows now, whole. Printing a page to PDF fires these events too.
   */
  function onPrint(redraw) {
    if (typeof root.addEventListener !== "function") return;
    root.addEventListener("beforeprint", () => { ns.printing = true; redraw(); });
    root.addEventListener("afterprint", () => { ns.printing = false; redraw(); });
  }

  /** Bytes (0 or 1) from a binary buffer: a boolean mask. */
  function bytesOf(buffer) {
    if (buffer == null) return null;
    if (buffer instanceof DataView || ArrayBuffer.isView(buffer)) return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    return new Uint8Array(buffer);
  }

  /**
   * anywidget's module for a mount function: `export default mhaFrontEnd.anywidget("mountExplorer")`.
   *
   * The live protocol (book/widgets/*.py are the Python side), three traitlets:
   *   config    Python -> page, once: what the static page has inline, the figure's spec included (for the
   *             explorer's trained model only its name, d_model and h; for the stepper its stages).
   *   settings  both ways: the controls' values. A reader's change is merged here (mergeSettings, so the
   *             controls at once offer only valid choices), then set and saved; Python checks it with the
   *             same rules, computes, and may correct it (a change from Python updates the controls).
   *   drawn     Python -> page: what to draw, computed by Python with the real mha. The explorer's is
   *             {tokens, shape: [h, n, n], weights: float32 bytes, mask: uint8 bytes (n * n) or null,
   *             d_model, h, d_k, parameters, message, level}; bytes arrive as binary buffers (DataView).
   *             The explorer has drawn the change at once from the port; this replaces its picture.
   * The mount function gets options {live: true, onChange}; its el.mha.show(drawn) draws a payload.
   */
  function anywidget(mountName) {
    return {
      render({ model, el }) {
        const div = document.createElement("div");
        el.appendChild(div);
        const config = Object.assign({}, model.get("config"), { settings: model.get("settings") || undefined });
        const api = ns[mountName](div, config, {
          live: true,
          drawn: model.get("drawn"),
          onChange(settings) {
            model.set("settings", settings);
            model.save_changes();
          },
        });
        const pull = () => {
          const settings = model.get("settings");
          if (JSON.stringify(settings) !== JSON.stringify(api.settings)) api.update(settings);
        };
        const show = () => { if (api.show) api.show(model.get("drawn")); };
        model.on("change:settings", pull);
        model.on("change:drawn", show);
        return () => {
          model.off("change:settings", pull);
          model.off("change:drawn", show);
        };
      },
    };
  }

  /** float32 little-endian bytes (ports/bytes.js: float32s) as nested arrays of `shape`. */
  function toNested(buffer, shape) {
    const flat = ns.float32s(buffer);
    const build = (axis, offset) => {
      if (axis === shape.length - 1) return Array.from(flat.subarray(offset, offset + shape[axis]));
      const stride = shape.slice(axis + 1).reduce((a, b) => a * b, 1), out = [];
      for (let i = 0; i < shape[axis]; i++) out.push(build(axis + 1, offset + i * stride));
      return out;
    };
    return build(0, 0);
  }

  /**
   * Requests matched to their replies by id, for pythonCalls (a live kernel) and blobWorker (a Web Worker):
   * call(message, transfer) sends {...message, id} and returns a Promise of the reply's result ({id, result},
   * through read(reply, buffers) if given) or rejects with an Error of the reply's message ({id, error});
   * answer(reply, buffers) settles the call of reply.id (a reply to no call is passed over); failAll(error)
   * rejects every call still waiting.
   */
  function replies(send, read = (reply) => reply.result) {
    const pending = new Map();
    let next = 0;
    return {
      call: (message, transfer) => new Promise((ok, fail) => {
        const id = next++;
        pending.set(id, { ok, fail });
        send({ ...message, id }, transfer);
      }),
      answer(reply, buffers) {
        const p = pending.get(reply && reply.id);
        if (!p) return;
        pending.delete(reply.id);
        if (reply.error !== undefined) p.fail(new Error(reply.error));
        else p.ok(read(reply, buffers));
      },
      failAll(error) {
        pending.forEach((p) => p.fail(error));
        pending.clear();
      },
    };
  }

  /**
   * Requests to Python over a live widget's custom messages (the MiniLM box, the decoder box, the SmolLM2
   * figure): call(message) as replies' (an attention sent as float32 bytes in buffers[0], of shape
   * result.attention_shape, arrives as nested arrays). close() stops listening.
   */
  function pythonCalls(model) {
    const calls = replies((message) => model.send(message), ({ result }, buffers) => {
      if (result.attention_shape) {
        result.attention = toNested(buffers[0], result.attention_shape);
        delete result.attention_shape;
      }
      return result;
    });
    model.on("msg:custom", calls.answer);
    return { call: calls.call, close: () => model.off("msg:custom", calls.answer) };
  }

  /**
   * Requests to a Web Worker made from its script's text through a Blob URL (a worker from a file does not
   * start from file://), the pages' models (minilm.js, smollm2run.js): call(message, transfer) as replies'
   * (the buffers in `transfer` moved, not copied); post(message, transfer) sends what wants no reply.
   * stop(error) ends the worker: every call waiting, and every later call or post, fails with `error`.
   * onError(text) is told when the worker fails (its script did not start, or an error escaped it), with the
   * browser's text of it (maybe empty); it decides whether to stop.
   */
  function blobWorker(source, onError) {
    const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
    const worker = new Worker(url);
    URL.revokeObjectURL(url);
    let stopped = null;
    const send = (message, transfer) => worker.postMessage(message, transfer || []);
    const calls = replies(send);
    worker.onmessage = (event) => calls.answer(event.data);
    worker.onerror = (event) => { event.preventDefault(); onError(event.message); };
    return {
      call: (message, transfer) => (stopped ? Promise.reject(stopped) : calls.call(message, transfer)),
      post(message, transfer) {
        if (stopped) throw stopped;
        send(message, transfer);
      },
      stop(error) {
        if (stopped) return;
        stopped = error;
        worker.terminate();
        calls.failAll(error);
      },
    };
  }

  /**
   * anywidget's module for a box computed by Python (MiniLMWidget, SmolLM2Widget, DecoderWidget): render puts
   * a <div class=className> in the cell and mounts it with mount(root, backend(call), spec), `call` asking
   * Python (pythonCalls); the box's own code says what a request holds. backend: the box's computer made of
   * `call`, by default {call}.
   */
  function pythonBox(className, mount, backend = (call) => ({ call })) {
    return {
      render({ model, el }) {
        const root = make("div", { className });
        el.appendChild(root);
        const python = pythonCalls(model);
        mount(root, backend(python.call), model.get("spec"));
        return python.close;
      },
    };
  }

  /**
   * A figure's stored attention maps (spec.stored: 8-bit, zlib, base64; book.compute.stored_maps), inflated in
   * the page with DecompressionStream (which works from file:// too): Promise<array of () => {tokens,
   * attention}>, one per entry of `entries` (each with `tokens`), read as the port ports/stored_maps.js's
   * unpackMaps reads them (q / scale, [layer][head][query] Float32Array rows, built on first call).
   */
  async function storedMaps(stored, entries, L, H) {
    if (typeof DecompressionStream === "undefined") throw new Error("no DecompressionStream");
    const stream = new Blob([ns.base64Bytes(stored.data)]).stream().pipeThrough(new DecompressionStream("deflate"));
    const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
    return ns.unpackMaps(bytes, stored.scale, entries, L, H);
  }

  Object.assign(ns, {
    bytesOf, make, uniqueId, field, select, setOptions, readConfig, autoMount, onThemeChange, onPrint, anywidget,
    pythonCalls, blobWorker, pythonBox, storedMaps,
  });
})(globalThis);
