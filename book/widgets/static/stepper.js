/* mha front end, the stage stepper: every intermediate tensor of multi-head attention, one at a time.
 *
 * Needs core.js and heatmaps.js first. The numbers are computed in Python (book.compute.stages:
 * attention_stages, the module's own forward pass) and given inline; this file only draws them.
 *
 *   <div class="mha-stepper">
 *     <script type="application/json">{...}</script>
 *   </div>
 *
 * (or a data-mha-config attribute; "</" written "<\/" in the JSON). The JSON, with the stages in the order
 * of book.compute.stages.STAGES:
 *
 *   {
 *     "spec": {...},                                         book.widgets.spec.stepper_spec(): the slider,
 *                                                            the axis names (book.compute.stages.AXIS_NAMES)
 *     "tokens": ["the", "cat", "sat"],                       n labels (optional: 1..n)
 *     "settings": {"stage": "out"},                          the stage shown first (default: the spec's)
 *     "stages": [
 *       {"key": "x", "title": "input", "formula": "$X$", "shape": "(n, d_model)", "side_by_side": false,
 *        "values": [[...], ...],                             nested lists, (rows, cols) or (h, rows, cols)
 *        "decimals": 2},                                     printed in cells large enough
 *       ... one entry per Stage of STAGES, in order
 *     ]
 *   }
 *
 * "formula" is the Stage's mathtext; a small subset of TeX (^, _, {}, \mathrm, \sqrt, \top, \ldots, \,) is
 * shown as text with <sub>/<sup>, no TeX engine. The slider (the spec's one control, mounted by
 * controller.js; it announces the stage, not its index), the previous/next buttons (which keep the focus at
 * either end) and the list of stages all set the one setting, stage. Every value is printed in its cell
 * where the cells are wide enough (on a phone, one head a line: the attention weights always), and the
 * focused picture reads out the cell the arrow keys choose, with its row's sum in the attention weights.
 * el.mha = {settings: {stage}, update({stage: key}) -> the stage's values}.
 *
 * Live mode (the anywidget adapter in core.js): Python sends this same JSON as the `config` traitlet, once,
 * and keeps `settings` = {stage} in sync both ways; every step is drawn here, from those values.
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});
  const { make } = ns;
  const SYMBOLS = { top: "\u22a4", ldots: "\u2026", cdot: "\u00b7", times: "\u00d7" };

  /** DOM nodes for a mathtext formula such as "$A_i = \mathrm{softmax}(S_i / \sqrt{d_k})$". */
  function formulaNodes(formula) {
    const src = formula.replace(/\$/g, "");
    let i = 0;
    const seq = () => {
      const out = [];
      while (i < src.length && src[i] !== "}") {
        if (src[i] === "^" || src[i] === "_") {
          const tag = src[i++] === "^" ? "sup" : "sub";
          out.push(make(tag, {}, atom()));
        } else {
          out.push(...atom());
        }
      }
      return out;
    };
    const atom = () => {
      if (src[i] === "{") { i++; const nodes = seq(); i++; return nodes; }
      if (src[i] !== "\\") return [src[i++]];
      i++;
      const name = (/^[a-zA-Z]+/.exec(src.slice(i)) || [""])[0];
      if (!name) { const ch = src[i++]; return [ch === "," ? "\u2009" : ch]; }
      i += name.length;
      if (name === "mathrm" || name === "text") return [make("span", { className: "mha-upright" }, atom())];
      if (name === "sqrt") return ["\u221a", make("span", { className: "mha-sqrt" }, atom())];
      return [SYMBOLS[name] || name];
    };
    return make("span", { className: "mha-formula" }, seq());
  }

  /** How a cell prints a value: with the stage's decimals (book.compute.stages.stage_decimals), no "-0". */
  function valueFormat(decimals) {
    return (v) => v.toFixed(decimals).replace(/^-(0\.?0*)$/, "$1");
  }

  function mountStepper(el, config, options) {
    const spec = config.spec, stages = config.stages;
    const keys = stages.map((s) => s.key);
    const n = stages[0].values.length;
    const tokens = config.tokens || Array.from({ length: n }, (_, i) => String(i + 1));
    const qh = stages.find((s) => s.key === "q_heads");
    const h = qh ? qh.values.length : 1;
    let draws = 0;
    const ctl = ns.controller(spec, config, options, { refresh: draw });
    const current = () => keys.indexOf(ctl.state.stage);
    const go = (index) => ctl.fromReader({ stage: keys[Math.max(0, Math.min(stages.length - 1, index))] });

    el.classList.add("mha-stepper");
    el.replaceChildren();
    const m = spec.messages;
    const previous = make("button", { type: "button", className: "mha-button" }, m.previous);
    const next = make("button", { type: "button", className: "mha-button" }, m.next);
    const list = make("ol", { className: "mha-stage-list" }, stages.map((s, i) =>
      make("li", {}, make("button", { type: "button", className: "mha-stage-link", "data-stage": i }, s.title))));
    const caption = make("p", { className: "mha-caption", "aria-live": "polite" });
    const help = make("p", { className: "mha-help", id: ns.uniqueId("mha-help") }, m.help);
    const canvas = make("canvas", { className: "mha-canvas", tabIndex: 0, role: "img", "aria-describedby": help.id });
    const readout = make("p", { className: "mha-readout", "aria-live": "polite" });
    el.append(
      make("div", { className: "mha-controls" }, previous, ns.labelled(spec, ctl.c, "stage"), next),
      make("div", { className: "mha-stepper-body" }, list,
        make("div", { className: "mha-stage-view" }, caption, make("div", { className: "mha-figure" }, canvas),
          readout, help)));
    let selected = null, view = null, layout = null; // the cell read out; what the picture shows; its layout

    /** What the stage at `index` shows: its panels (panels, rows, cols), their labels and axis names. */
    function viewOf(index) {
      const stage = stages[index];
      const perHead = Array.isArray(stage.values[0][0]);
      const panels = perHead ? stage.values : [stage.values]; // (panels, rows, cols)
      const [rowSym, colSym] = stage.shape.replace(/[()]/g, "").split(",").map((t) => t.trim()).slice(-2);
      const numbered = (k) => Array.from({ length: k }, (_, i) => String(i + 1));
      const tokensBoth = rowSym === "n" && colSym === "n";
      return {
        stage, index, perHead, panels, rows: panels[0].length, cols: panels[0][0].length, numbered,
        rowLabels: rowSym === "n" ? tokens : numbered(panels[0].length),
        colLabels: colSym === "n" ? tokens : numbered(panels[0][0].length),
        rowName: tokensBoth ? m.rows : spec.axis_names[rowSym] || rowSym,
        colName: tokensBoth ? m.cols : spec.axis_names[colSym] || colSym,
        rowTokens: rowSym === "n", colTokens: colSym === "n",
      };
    }

    function draw() {
      draws += 1;
      const index = current();
      if (!view || view.index !== index) selected = null;
      view = viewOf(index);
      const { stage, perHead, panels, rows, cols, numbered } = view;
      const flat = panels.flat(2);
      let [lo, hi] = stage.key === "weights" ? [0, 1] : [Math.min(...flat), Math.max(...flat)];
      if (lo === hi) { lo -= 1; hi += 1; }
      const maxWidth = Math.max(300, (el.querySelector(".mha-stage-view").clientWidth || 640));
      // as many heads on a line as leave cells wide enough for the numbers (34 px), one at least
      const cellFor = (k) => Math.max(14, Math.min(44, Math.floor((maxWidth - 190 - 18 * (k - 1)) / (cols * k))));
      let perLine = Math.min(panels.length, 4);
      while (perLine > 1 && cellFor(perLine) < 34) perLine -= 1;
      const cw = cellFor(perLine), ch = Math.max(14, Math.min(26, cw));
      const groups = stage.side_by_side && h > 1
        ? { size: cols / h, names: numbered(h).map((i) => ns.format(m.panel, { head: i })) } : null;
      layout = ns.drawHeatmaps(canvas, {
        panels: panels.map((values, p) => ({ title: perHead ? ns.format(m.panel, { head: p + 1 }) : "", values, mask: null })),
        rowLabels: view.rowLabels, colLabels: view.colLabels, rowName: view.rowName, colName: view.colName,
        lo, hi, cell: [cw, ch], maxWidth, maxColumns: perLine, selected, groups,
        format: cw >= 34 && ch >= 16 ? valueFormat(stage.decimals) : null,
        scaleLabel: stage.key === "weights" ? m.scale : m.value, maskKey: null,
      });
      const shape = perHead ? [panels.length, rows, cols] : [rows, cols];
      caption.replaceChildren(make("strong", {}, ns.format(m.caption, { index: index + 1, title: stage.title })), ": ",
        formulaNodes(stage.formula), ns.format(m.caption_shape, { shape: shape.join(", "), symbols: stage.shape }));
      canvas.setAttribute("aria-label",
        ns.format(m.picture, { index: index + 1, count: stages.length, title: stage.title, shape: shape.join(", ") }));
      ctl.sync();
      // at either end a button says it can go no further, and keeps the focus (a disabled one would lose it)
      previous.setAttribute("aria-disabled", String(index === 0));
      next.setAttribute("aria-disabled", String(index === stages.length - 1));
      list.querySelectorAll("button").forEach((b, i) => {
        b.parentElement.className = i === index ? "mha-current" : i < index ? "mha-done" : "";
        if (i === index) b.setAttribute("aria-current", "step"); else b.removeAttribute("aria-current");
      });
      say(selected);
      return stage.values;
    }

    /** The read-out of one cell: the stage (and head), its row and column, the value; a weight's row sum. */
    function say(cell) {
      if (!cell || !view) { readout.textContent = ""; return; }
      const { stage, perHead, panels } = view, { panel, row, col } = cell;
      const token = (show, label) => (show ? ns.format(m.cell_token, { token: label }) : "");
      const values = panels[panel][row], decimals = stage.decimals + 2; // more than the cells print
      readout.textContent = ns.format(m.cell, {
        where: perHead ? ns.format(m.cell_head, { title: stage.title, head: panel + 1 }) : stage.title,
        rows: view.rowName, row: row + 1, row_token: token(view.rowTokens, tokens[row]),
        cols: view.colName, col: col + 1, col_token: token(view.colTokens, tokens[col]),
        value: valueFormat(decimals)(values[col]),
      }) + (stage.key === "weights"
        ? ns.format(m.row_sum, { row: row + 1, sum: valueFormat(decimals)(values.reduce((a, b) => a + b, 0)) }) : "");
    }

    ns.heatmapReadout(el, canvas, {
      layout: () => layout, selected: () => selected, say, draw,
      select(cell) { selected = cell; draw(); },
      clear() { selected = null; draw(); },
      size: () => view && { panels: view.panels.length, rows: view.rows, cols: view.cols },
    });

    previous.addEventListener("click", () => { if (current() > 0) go(current() - 1); });
    next.addEventListener("click", () => { if (current() < stages.length - 1) go(current() + 1); });
    list.addEventListener("click", (event) => {
      const button = event.target.closest("button[data-stage]");
      if (button) go(Number(button.dataset.stage));
    });

    const api = ctl.expose(el, { // update({stage: key}) returns the stage's values
      /** How many times the picture was drawn (a test waits for it to change). */
      get draws() { return draws; },
      /** Where the panels are and whether the values are printed in the cells (see heatmaps.js). */
      get layout() { return ns.layoutView(layout); },
      canvas,
    });
    draw();
    return api;
  }

  Object.assign(ns, { mountStepper, formulaNodes });
  ns.autoMount("mha-stepper", mountStepper);
})(globalThis);
