/* mha front end, the controller: one way to mount a figure from its spec (book/widgets/spec.py).
 *
 * Needs core.js and the ports (ports/settings.js: the rules) first. A figure's spec comes from Python with
 * its data ("spec" in the inline JSON of a static root, or in the config traitlet of a live widget): its
 * controls (name, kind, label, choices, bounds, rule), defaults and message templates. This file declares
 * not one of them. It holds the page's side: controls built from the spec (buildControls, labelled), kept
 * equal to the state (syncControls), read back as settings (readControl, listen: a number box commits its
 * value when it changes, on Enter, on leaving it or with its arrows, never while it is being typed, and a
 * value that is not a setting shows the spec's message instead; Escape puts the setting back), a status line
 * (statusLine, setStatus, bugMessage), the controller that every figure mounts with (it tells what followed a
 * change: ns.followNotes), and the read-out of a heatmap picture (heatmapReadout: the pointer, a tap or the
 * keyboard on a focusable canvas; the picture redraws at its new width: watchWidth).
 *
 * A figure (explorer.js, windows.js, calculator.js, ...) keeps only its drawing: it builds its controls with
 * the controller, merges every change with ns.mergeSettings (a reader's, el.mha.update's or, live,
 * Python's), computes with its port (ports/) and redraws; live or static is the anywidget adapter's
 * business (core.js).
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});
  const { make, field, setOptions } = ns;

  /** The controls of a spec, by name: select, number box, slider, text box or checkbox. */
  function buildControls(spec) {
    const c = {};
    for (const control of spec.controls) {
      const { name, kind } = control;
      if (kind === "select") {
        c[name] = make("select", { name });
        if (control.choices.length) setOptions(c[name], control.choices, control.choices[0][0]); // a view option
      }
      else if (kind === "number") c[name] = make("input", { type: "number", name, min: control.lo, max: control.hi, step: 1 });
      else if (kind === "range" && control.choices.length) { // a slider over the choices: its value is their index
        c[name] = make("input", { type: "range", name, min: 0, max: control.choices.length - 1, step: 1 });
      }
      else if (kind === "range") c[name] = make("input", { type: "range", name, min: control.lo, max: control.lo, step: 1 });
      else if (kind === "text") {
        c[name] = make("input", { type: "text", name, size: 44, spellcheck: "false", autocomplete: "off" });
        if (control.choices.length) { // suggestions, offered in a list: any text is a setting
          c[name].mhaList = make("datalist", { id: ns.uniqueId(`mha-${name}-list`) },
            control.choices.map(([v]) => make("option", { value: v })));
          c[name].setAttribute("list", c[name].mhaList.id);
        }
      }
      else c[name] = make("input", { type: "checkbox", name });
    }
    return c;
  }

  /** A control with its label (and, for a slider, an <output> of its value; for a text box, its list). */
  function labelled(spec, c, name) {
    const control = spec.controls.find((k) => k.name === name);
    if (control.kind !== "range") return field(control.label, c[name], c[name].mhaList || null);
    const out = make("output", { className: "mha-output" });
    const node = field(control.label, c[name], out);
    out.htmlFor = c[name].id;
    c[name].mhaOutput = out;
    return node;
  }

  /** Make every control show the state, offering only what the state allows. */
  function syncControls(spec, c, state, options) {
    options = options || {};
    for (const control of spec.controls) {
      if (!control.setting) continue;
      const node = c[control.name], value = state[control.name];
      if (control.kind === "select") {
        const offered = (options.choices && options.choices[control.name]) || ns.choicesOf(control, state);
        const texts = new Map(control.choices.map(([v, t]) => [v, t]));
        setOptions(node, offered.map((v) => [v, texts.get(v) ?? String(v)]), value);
      } else if (control.kind === "number") {
        if (Number(node.value) !== value || node.value === "") node.value = String(value);
      } else if (control.kind === "range" && control.choices.length) { // it says which choice, not its index
        const index = control.choices.findIndex(([v]) => v === value);
        const fields = { index: index + 1, count: control.choices.length, text: control.choices[index][1] };
        node.value = String(index);
        node.setAttribute("aria-valuetext", ns.format(spec.messages.slider_value, fields));
        if (node.mhaOutput) node.mhaOutput.value = ns.format(spec.messages.slider_output, fields);
      } else if (control.kind === "range") {
        const n = options.tokens || 1;
        node.max = String(n);
        node.value = String(Math.min(value ?? n, n));
        if (node.mhaOutput) node.mhaOutput.value = node.value;
      } else if (control.kind === "text") {
        if (node.value !== value) node.value = value;
      }
    }
  }

  /** The value a control holds, as its setting (numbers as numbers; NaN for a box being typed in). */
  function readControl(spec, c, name) {
    const control = spec.controls.find((k) => k.name === name), node = c[name];
    if (control.kind === "text") return node.value;
    if (control.kind === "checkbox") return node.checked;
    if (control.kind === "number") return node.value.trim() === "" ? NaN : Number(node.value);
    if (control.kind === "range" && control.choices.length) return control.choices[Number(node.value)][0];
    const first = control.choices.length ? control.choices[0][0] : 0;
    return typeof first === "number" ? Number(node.value) : node.value;
  }

  function statusLine() {
    return make("p", { className: "mha-status", role: "status", "aria-live": "polite" });
  }

  /** Show a message: level "" (what the picture shows), "warning" (the reader's input) or "error" (a bug). */
  function setStatus(node, message, level) {
    node.textContent = message || "";
    node.className = !message || !level ? "mha-status" : level === "error" ? "mha-status mha-error" : "mha-status mha-warning";
  }

  /** What a number box being typed in says when its value is not yet a setting, or null when it is fine. */
  function boxMessage(spec, name, value) {
    const control = spec.controls.find((k) => k.name === name);
    if (control.kind !== "number" || (Number.isInteger(value) && value >= control.lo && value <= control.hi)) return null;
    return ns.format(spec.messages.whole, { label: control.label, lo: control.lo, hi: control.hi }) + spec.messages.still;
  }

  /**
   * Listen to every control of the spec: a reader's change calls onInput({name: value}). A select commits on
   * change, a slider and a text box as they move or are typed in. A number box commits on change (Enter,
   * leaving it, its arrows), so that a number being typed (1677721 on the way to 16777216) is never taken
   * for a setting; a value that is not a setting shows the spec's message in `status` instead, and Escape
   * calls onEscape(name), which puts the setting back in the box.
   */
  function listen(spec, c, status, onInput, onEscape) {
    for (const control of spec.controls) {
      if (!control.setting) continue;
      const node = c[control.name];
      const event = control.kind === "select" || control.kind === "number" ? "change" : "input";
      node.addEventListener(event, () => {
        const value = readControl(spec, c, control.name);
        const note = boxMessage(spec, control.name, value);
        if (note) { setStatus(status, note, "warning"); return; }
        onInput({ [control.name]: value });
      });
      if (control.kind === "number" && onEscape) {
        node.addEventListener("keydown", (event) => {
          if (event.key !== "Escape") return;
          onEscape(control.name);
          event.preventDefault();
        });
      }
    }
  }

  /**
   * What mounting every figure shares: its controls built from the spec, a status line, the state (the
   * spec's defaults with config.settings merged in), a reader's changes merged and redrawn, and el.mha.
   *
   * figure: {refresh() redraws for the state and returns what el.mha.update returns; fixed(changes,
   * state) optional: settings the state does not let change (a trained model's); settings() optional: what
   * el.mha.settings returns (a copy of the state by default)}. A reader's value that the rules refuse shows
   * the spec's message and keeps the picture. Returns the controller: {spec, c (the controls by name),
   * status, state, notes (what followed the last change: ns.followNotes), merge(changes), sync(options),
   * fromReader(changes), expose(el, extra)}, where expose sets el.mha = {settings, update(settings), ...extra
   * (getters kept)}.
   */
  function controller(spec, config, options, figure) {
    options = options || {};
    const fixed = figure.fixed || (() => null);
    const ctl = {
      spec,
      c: buildControls(spec),
      status: statusLine(),
      state: Object.assign({}, spec.defaults),
      notes: {},
      /** Merge changes into the state, checked against the spec; a value the rules refuse throws. What had
       * to follow the change is in ctl.notes, for the figure to say. */
      merge(changes) {
        const before = ctl.state;
        ctl.state = ns.mergeSettings(spec, before, changes || {}, fixed(changes || {}, before));
        ctl.notes = ns.followNotes(spec, before, ctl.state, changes || {});
      },
      sync(syncOptions) { syncControls(spec, ctl.c, ctl.state, syncOptions); },
      settings() { return figure.settings ? figure.settings() : Object.assign({}, ctl.state); },
      /** A reader's change: merged, drawn at once, then told to options.onChange (Python, live). */
      fromReader(changes) {
        try {
          ctl.merge(changes);
        } catch (error) {
          if (!(error instanceof RangeError || error instanceof TypeError)) throw error;
          setStatus(ctl.status, `${error.message}.${spec.messages.still}`, "warning");
          return;
        }
        figure.refresh();
        if (options.onChange) options.onChange(ctl.settings());
      },
      expose(el, extra) {
        const api = {
          get settings() { return ctl.settings(); },
          /** Merge settings, update the controls, redraw now; returns what the figure drew. */
          update(settings) { ctl.merge(settings); return figure.refresh(); },
        };
        Object.defineProperties(api, Object.getOwnPropertyDescriptors(extra || {}));
        el.mha = api;
        return api;
      },
    };
    ctl.merge(config.settings);
    ctl.notes = {}; // the first settings are the figure's own: nothing followed a reader's change
    listen(spec, ctl.c, ctl.status, ctl.fromReader, () => figure.refresh()); // Escape: the state again
    return ctl;
  }

  /**
   * The read-out of a heatmap picture, the same for every figure that has one: the pointer, a tap, or the
   * arrow keys (Home/End: first/last column) on the focused canvas choose a cell {panel, row, col}; Page
   * Up/Down go to the previous/next panel, or call view.page(step) if the figure turns them into a setting;
   * Escape calls view.clear() (no cell chosen), if the figure has it. The picture redraws when the theme or
   * the width of its column changes (watchWidth), and for print (ns.onPrint).
   *
   * view: {layout() (drawHeatmaps' result, for its hit test), size() ({panels, n} of what is drawn, or null;
   * or {panels, rows, cols} where they differ), selected(), select(cell) (keep it and redraw), say(cell)
   * (write the read-out), draw(), page(step)?, clear()?}.
   */
  function heatmapReadout(el, canvas, view) {
    const cellAt = (event) => {
      const box = canvas.getBoundingClientRect(), layout = view.layout();
      return layout && layout.hit(event.clientX - box.left, event.clientY - box.top);
    };
    canvas.addEventListener("pointermove", (event) => view.say(cellAt(event) || view.selected()));
    canvas.addEventListener("pointerleave", () => view.say(view.selected()));
    canvas.addEventListener("click", (event) => {
      const cell = cellAt(event);
      if (cell) view.select(cell);
    });
    canvas.addEventListener("focus", () => {
      if (!view.selected() && view.size()) view.select({ panel: 0, row: 0, col: 0 });
    });
    const moves = {
      ArrowUp: [0, -1, 0], ArrowDown: [0, 1, 0], ArrowLeft: [0, 0, -1], ArrowRight: [0, 0, 1],
      PageUp: [-1, 0, 0], PageDown: [1, 0, 0],
    };
    canvas.addEventListener("keydown", (event) => {
      const size = view.size();
      if (!size) return;
      const rows = size.rows || size.n, cols = size.cols || size.n;
      const s = view.selected() || { panel: 0, row: 0, col: 0 };
      const clamp = (v, k) => Math.min(k - 1, Math.max(0, v));
      if (view.page && (event.key === "PageUp" || event.key === "PageDown")) {
        view.page(event.key === "PageUp" ? -1 : 1);
      } else if (event.key === "Home" || event.key === "End") {
        view.select({ panel: s.panel, row: s.row, col: event.key === "Home" ? 0 : cols - 1 });
      } else if (moves[event.key]) {
        const [dp, dr, dc] = moves[event.key];
        view.select({ panel: clamp(s.panel + dp, size.panels), row: clamp(s.row + dr, rows), col: clamp(s.col + dc, cols) });
      } else if (event.key === "Escape" && view.clear && view.selected()) {
        view.clear();
      } else {
        return;
      }
      event.preventDefault();
    });
    ns.onThemeChange(view.draw);
    ns.onPrint(view.draw);
    watchWidth(el, view.draw);
  }

  /** Call draw() when el's width changes by more than 40 px (a turned phone, a resized window): a picture
   * laid out for the old width would be cut or left small. */
  function watchWidth(el, draw) {
    if (!root.ResizeObserver) return;
    let width = el.clientWidth;
    new ResizeObserver(() => {
      if (Math.abs(el.clientWidth - width) > 40) { width = el.clientWidth; draw(); }
    }).observe(el);
  }

  /** The message of an unexpected error (a bug), from the spec's template. */
  function bugMessage(spec, error) {
    return ns.format(spec.messages.bug, { figure: spec.figure, error: `${error.name}: ${error.message}` });
  }

  Object.assign(ns, {
    buildControls, labelled, syncControls, readControl, statusLine, setStatus, boxMessage, listen, bugMessage,
    controller, heatmapReadout, watchWidth,
  });
})(globalThis);
