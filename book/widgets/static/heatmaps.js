/* mha front end, heatmaps: a grid of heatmap panels on one canvas, for the explorer and the stepper, and
 * drawThumb(canvas, values, paint, off), one small head without text, for the grids of heads.
 *
 * Needs core.js first. One call, mhaFrontEnd.drawHeatmaps(canvas, spec), draws everything (panels, their
 * titles, token labels, a colour bar and the key of masked cells) and returns the layout, whose hit(x, y)
 * maps a point in CSS pixels to {panel, row, col}. Like book/figures/heatmaps.py: one colour scale for all
 * panels (viridis), masked cells light grey with dark hatching, so "may not attend" never looks like
 * "attended with weight 0". Text is drawn with fillText, so a label is shown literally, whatever it holds.
 *
 * spec = {
 *   panels: [{title: "head 1 (d_k = 8)", values: rows x cols numbers, mask: rows x cols booleans or null,
 *             shortTitles: shorter titles, tried in turn when the title is wider than its panel,
 *             lo, hi: this panel's own colour scale (else the spec's)}],
 *   rowLabels, colLabels: strings (one per row / column), rowName, colName: axis names ("query", "key"),
 *   lo, hi: the colour scale, cell: [width, height] of a cell in CSS pixels, maxWidth: CSS pixels,
 *   minCell: the smallest a cell may shrink to (CSS pixels, default 6: a long sequence on a phone asks less),
 *   oneLine: null, or the smallest cell (CSS pixels) to which cells shrink so that all the panels (up to
 *             maxColumns) share one line, for panels read side by side (the sparse figure's two),
 *   format: value -> string to print in each cell, or null, selected: {panel, row, col} or null,
 *   groups: null or {size, names}: vertical separators every `size` columns, names above (heads side by side),
 *   scaleLabel: "weight", maskKey: the key's text that explains the hatching (the spec's "masked"), or null,
 *   tickFormat: null or (value, step) -> string, palette: "diverging" for signed values (else viridis),
 *   swatches: null, or [{t, text}]: a key of single colours (t in [0, 1] on the scale) in place of the colour
 *             bar, for a picture of yes and no (the window explorer's masks), which no 0-1 scale describes,
 * }
 *
 * The layout lays itself out: cells shrink (to minCell, 6 px, at least; on cells under 12 px only every 2nd or 3rd
 * label shows, 15 px apart at least) so that one panel and its labels fit maxWidth (with text scaled up by k, also by up to 1/k to
 * put more panels on a line); as many panels per line as fit, key labels
 * under every panel, titles that fit their panel (on two lines, else cut with an ellipsis, if the panel is
 * too narrow), a colour bar of at least 96 px with ticks at least 18 px apart, a right column as wide as its
 * labels; that column goes under the panels (layout.under) where a panel at its smallest cells and the
 * column would be wider than maxWidth, so that on a phone nothing of the picture is out of view. The returned layout's boxes list every text drawn ({kind, text, x, y, w, h}) and the panels and the bar, for tests of overlap.
 *
 * Text sizes (11 to 13 px) and the room laid out around text are multiplied by the canvas's CSS custom
 * property --mha-text-scale (default 1): a lecture deck sets it so that the smallest text reads at 18 px in
 * a hall (slides/template/mha_reveal), and the book's pages keep 1. The smallest font drawn, in CSS pixels,
 * is the layout's fontPx, and is written on the canvas as data-mha-font-px for the decks' tests.
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});

  // A colour scale from evenly spaced colours, interpolated linearly: `size` entries {rgb, css, dark}.
  function lut(stops, size) {
    const points = stops.map((hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)));
    return Array.from({ length: size }, (_, i) => {
      const t = (i / (size - 1)) * (points.length - 1), k = Math.min(Math.floor(t), points.length - 2), f = t - k;
      const rgb = points[k].map((c, j) => Math.round(c + f * (points[k + 1][j] - c)));
      return { rgb, css: `rgb(${rgb.join(",")})`, dark: 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2] < 128 };
    });
  }
  // matplotlib's viridis at 9 evenly spaced points
  const LUT = lut(["#440154", "#472c7a", "#3b518b", "#2c718e", "#21908d", "#27ad81", "#5cc863", "#aadc32", "#fde725"], 256);
  // ColorBrewer's RdBu at 11 points, reversed (matplotlib's RdBu_r): blue below the middle, near-white at it,
  // red above; for signed values such as a difference (spec.palette "diverging", lo = -hi). An odd number of
  // entries, so that 0 is the middle colour exactly.
  const DIVERGING = lut(["#053061", "#2166ac", "#4393c3", "#92c5de", "#d1e5f0", "#f7f7f7", "#fddbc7", "#f4a582",
    "#d6604d", "#b2182b", "#67001f"], 255);
  let scratch = null; // a canvas of one pixel per cell, scaled up onto the picture: fast for many cells
  const MASK_FILL = "#dbdbdb", MASK_LINE = "#595959";
  const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans CJK SC", sans-serif';
  const MAX_LABEL = 10; // characters of a token shown as a label
  const BREAK = /(?<= )|(?<=[\u2e80-\u9fff\uff00-\uffef])(?=[\u2e80-\u9fff\uff00-\uffef])/; // where a title may break

  /** A colour of the scale for t in [0, 1]. */
  function colour(t) {
    return LUT[Math.max(0, Math.min(255, Math.round(t * 255)))];
  }
  /** A colour of the diverging scale for t in [0, 1] (0.5: the middle, near-white). */
  function divergingColour(t) {
    return DIVERGING[Math.max(0, Math.min(254, Math.round(t * 254)))];
  }

  /** A token as a label: at most 10 characters (code points), the 10th an ellipsis if it is cut. */
  function label(text) {
    const chars = Array.from(text);
    return chars.length <= MAX_LABEL ? text : chars.slice(0, MAX_LABEL - 1).join("") + "\u2026";
  }

  /** Diagonal hatching over the masked cells of a panel at (x0, y0), clipped to those cells. */
  function hatch(ctx, x0, y0, mask, cw, ch) {
    ctx.save();
    ctx.beginPath();
    mask.forEach((row, i) => row.forEach((ok, j) => { if (!ok) ctx.rect(x0 + j * cw, y0 + i * ch, cw, ch); }));
    ctx.fillStyle = MASK_FILL;
    ctx.fill();
    ctx.clip();
    const w = mask[0].length * cw, h = mask.length * ch, step = Math.max(4, Math.min(cw, ch) / 2);
    ctx.beginPath();
    for (let t = -h; t < w; t += step) { ctx.moveTo(x0 + t, y0 + h); ctx.lineTo(x0 + t + h, y0); }
    ctx.strokeStyle = MASK_LINE;
    ctx.lineWidth = 1;
    ctx.stroke();
    ctx.restore();
  }

  function drawHeatmaps(canvas, spec) {
    const ctx = canvas.getContext("2d");
    const paint = spec.palette === "diverging" ? divergingColour : colour;
    const style = getComputedStyle(canvas);
    const ink = ns.printing ? "#000" : style.color || "#222"; // on paper, black whatever the screen's theme
    const k = parseFloat(style.getPropertyValue("--mha-text-scale")) || 1; // 1 on a page, larger on a slide
    const px = (n) => n * k; // a size laid out around text, in CSS pixels
    const rows = spec.panels[0].values.length, cols = spec.panels[0].values[0].length;
    const rowLabels = spec.rowLabels.map(label), colLabels = spec.colLabels.map(label);
    ctx.font = `${px(12)}px ${FONT}`;
    const widest = (labels) => Math.max(0, ...labels.map((t) => ctx.measureText(t).width));
    const rowLabelW = Math.ceil(widest(rowLabels)) + 8;
    const gapX = 18, gapY = 10, axisW = Math.ceil(px(18));
    const left = axisW + rowLabelW;
    // The colour bar's column: wide enough for its tick labels, its name and the key of masked cells.
    const tickText = spec.tickFormat || ((v, step) => formatNumber(v, step));
    ctx.font = `${px(11)}px ${FONT}`;
    const probe = [spec.lo, spec.hi, (spec.lo + spec.hi) / 2].map((v) => tickText(v, niceStep((spec.hi - spec.lo || 1) / 4)));
    const keys = [...(spec.swatches || []).map((w) => w.text), spec.maskKey].filter(Boolean);
    const barW = Math.ceil(Math.max(spec.swatches ? 0 : 16 + 12 + 5 + widest(probe), 14 + widest([spec.scaleLabel || ""]),
      16 + px(14) + 5 + widest(keys))) + 6;
    // Cells: the size asked for, smaller (down to minCell) when one panel would not fit the width. Where a
    // panel at its smallest cells and the colour bar's column are wider than the screen (a phone), the column
    // goes under the panels: the picture, its title and its scale stay in view, with nothing to scroll to.
    const least = spec.minCell || 6;
    const under = left + cols * least + barW > spec.maxWidth;
    const room = spec.maxWidth - left - (under ? 0 : barW);
    let shrink = Math.min(1, Math.max(least / Math.min(...spec.cell), room / (cols * spec.cell[0])));
    if (spec.oneLine && k === 1 && spec.panels.length > 1) { // panels read side by side: on one line if the
      const per = Math.min(spec.panels.length, spec.maxColumns || 4); // cells may shrink to spec.oneLine px
      const s = (room - (per - 1) * gapX) / (per * cols * spec.cell[0]);
      if (s < shrink && Math.min(...spec.cell) * s >= spec.oneLine) shrink = s;
    }
    if (k !== 1) { // a slide: more panels on a line, on cells shrunk by the text's scale at most, not more lines
      const fits = (s) => Math.floor((room + gapX) / (cols * Math.floor(spec.cell[0] * s) + gapX));
      const most = Math.min(spec.panels.length, spec.maxColumns || 4);
      for (let per = most; per > fits(shrink); per--) {
        const s = (room - (per - 1) * gapX) / (per * cols * spec.cell[0]);
        if (s >= 1 / k && Math.min(...spec.cell) * s >= least) { shrink = Math.min(shrink, s); break; }
      }
    }
    const cw = Math.floor(spec.cell[0] * shrink), ch = Math.floor(spec.cell[1] * shrink);
    const pw = cols * cw, ph = rows * ch; // one panel in CSS pixels
    ctx.font = `${px(12)}px ${FONT}`;
    // Column labels wider than a cell are turned: 45 degrees if the cells leave room, else upright.
    const angle = widest(colLabels) <= cw - 2 ? 0 : cw >= 24 ? Math.PI / 4 : Math.PI / 2;
    const colLabelH = Math.ceil(widest(colLabels) * Math.sin(angle) + px(14) * Math.cos(angle) + px(12));
    // A label on every row of cells a line (12 px) tall or more; on smaller cells (a phone, a long text) every
    // 2nd, 3rd... label, at least 15 px apart, so that the labels shown stand a line and a quarter apart.
    const every = (size) => (size >= px(12) - 1e-9 ? 1 : Math.ceil(px(15) / size - 1e-9));
    const everyRow = every(ch), everyCol = angle === Math.PI / 4 ? 1 : angle ? every(cw) : 1;
    // Titles: the longest of the panel's titles that fits its width, at 13 px, else 11 px (scaled by k).
    const titleSlot = pw + gapX - 4;
    const titles = spec.panels.map((panel) => {
      const options = [panel.title, ...(panel.shortTitles || [])].filter(Boolean);
      for (const size of [px(13), px(11)]) {
        ctx.font = `600 ${size}px ${FONT}`;
        const t = options.find((o) => ctx.measureText(o).width <= titleSlot);
        if (t) return { text: t, size, w: ctx.measureText(t).width };
      }
      if (!options.length) return null;
      { // a title too long for its panel takes two lines rather than an ellipsis: broken after a space, or
        // between two Chinese characters (written without spaces); the longest first line whose rest fits
        const pieces = options[0].split(BREAK), fits = (line) => ctx.measureText(line.trim()).width <= titleSlot;
        for (let cut = pieces.length - 1; cut > 0; cut--) {
          const lines = [pieces.slice(0, cut).join("").trim(), pieces.slice(cut).join("").trim()];
          if (!fits(lines[0])) continue;
          if (!fits(lines[1])) break;
          return { text: lines.join(" "), lines, size: px(11), w: Math.max(...lines.map((l) => ctx.measureText(l).width)) };
        }
      }
      let t = Array.from(options[options.length - 1]);
      while (t.length > 1 && ctx.measureText(t.join("") + "\u2026").width > titleSlot) t = t.slice(0, -1);
      return { text: t.join("") + "\u2026", size: px(11), w: ctx.measureText(t.join("") + "\u2026").width };
    });

    const titled = spec.panels.some((p) => p.title), twoLines = titles.some((t) => t && t.lines);
    const titleH = Math.ceil(px(spec.groups && titled ? 38 : 22) + (twoLines ? px(11) + 2 : 0));

    // The grid of panels: as many per line as fit (at most 4); row labels at the left of each line, key
    // labels under every panel (on a phone the panels stack, and each must say which column is which).
    const fit = Math.floor((spec.maxWidth - left - barW + gapX) / (pw + gapX));
    const perLine = Math.max(1, Math.min(spec.panels.length, spec.maxColumns || 4, fit));
    const lines = Math.ceil(spec.panels.length / perLine);
    const lineTop = [];
    let y = 0;
    for (let l = 0; l < lines; l++) {
      if (l) y += gapY;
      lineTop.push(y + titleH);
      y += titleH + ph + colLabelH;
    }
    const gridW = perLine * pw + (perLine - 1) * gapX;
    // The colour bar: at least 96 px tall whatever the panels' height, ticks at least 18 px apart; or the
    // swatches, one line each.
    const keySize = Math.round(px(14)), keyStep = keySize + Math.round(px(8));
    const bh = spec.swatches ? 0 : Math.max(Math.round(px(96)), Math.min(ph, Math.round(px(160))));
    const keysH = spec.swatches ? keys.length * keyStep : bh + px(spec.maskKey ? 40 : 8);
    // the column of the bar and keys: right of the panels, or under them (below the key axis's name)
    const bx = under ? left : left + gridW + 16, by = under ? y + px(spec.scaleLabel && bh ? 42 : 24) : lineTop[0];
    const width = Math.max(left + gridW + (under ? 0 : barW), bx + barW - 16);
    const height = Math.ceil(under ? by + keysH : Math.max(y + px(18), lineTop[0] + keysH));
    const rects = spec.panels.map((_, p) => ({ x: left + (p % perLine) * (pw + gapX), y: lineTop[Math.floor(p / perLine)] }));
    // Numbers in the cells only where they fit the cells drawn (a smaller screen may shrink them); where the
    // text is scaled up, only at the scaled size (not smaller than the other text).
    const valuePx = Math.min(px(11), ch - 6);
    ctx.font = `${valuePx}px ${FONT}`;
    const printed = Boolean(spec.format) && (k === 1 || valuePx >= px(11)) && spec.panels.every((panel) =>
      panel.values.every((row) => Array.from(row).every((v) => ctx.measureText(spec.format(v)).width <= cw - 2)));
    const boxes = []; // every text drawn: {kind, text, x, y, w, h} in CSS pixels (tests check that no two overlap)
    const box = (kind, text, x, y, w, h) => boxes.push({ kind, text, x, y, w, h });

    const dpr = root.devicePixelRatio || 1; // draw at device resolution, so text stays sharp
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.textBaseline = "middle";
    const span = spec.hi - spec.lo || 1;
    const sel = spec.selected;

    spec.panels.forEach((panel, p) => {
      const { x: x0, y: y0 } = rects[p];
      // cells: one pixel each (transparent where masked), scaled up without smoothing
      const lo = panel.lo ?? spec.lo, pspan = (panel.hi ?? spec.hi) - lo || 1; // a panel may have its own scale
      const image = new ImageData(cols, rows);
      for (let i = 0; i < rows; i++) {
        for (let j = 0; j < cols; j++) {
          if (panel.mask && !panel.mask[i][j]) continue;
          image.data.set(paint((panel.values[i][j] - lo) / pspan).rgb, 4 * (i * cols + j));
          image.data[4 * (i * cols + j) + 3] = 255;
        }
      }
      scratch = scratch || document.createElement("canvas");
      scratch.width = cols;
      scratch.height = rows;
      scratch.getContext("2d").putImageData(image, 0, 0);
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(scratch, x0, y0, pw, ph);
      if (panel.mask && panel.mask.some((r) => r.includes(false))) hatch(ctx, x0, y0, panel.mask, cw, ch);
      if (printed) {
        ctx.font = `${valuePx}px ${FONT}`;
        ctx.textAlign = "center";
        for (let i = 0; i < rows; i++) {
          for (let j = 0; j < cols; j++) {
            if (panel.mask && !panel.mask[i][j]) continue;
            const v = panel.values[i][j];
            ctx.fillStyle = paint((v - lo) / pspan).dark ? "#fff" : "#111";
            ctx.fillText(spec.format(v), x0 + (j + 0.5) * cw, y0 + (i + 0.5) * ch);
          }
        }
      }
      if (spec.groups) { // heads side by side: a white line between them, their names above
        ctx.font = `${px(11)}px ${FONT}`;
        ctx.textAlign = "center";
        spec.groups.names.forEach((name, g) => {
          if (g) { ctx.fillStyle = "#fff"; ctx.fillRect(x0 + g * spec.groups.size * cw - 1.5, y0, 3, ph); }
          ctx.fillStyle = ink;
          ctx.fillText(name, x0 + (g + 0.5) * spec.groups.size * cw, y0 - px(9));
          const nw = ctx.measureText(name).width;
          box("group", name, x0 + (g + 0.5) * spec.groups.size * cw - nw / 2, y0 - px(15), nw, px(12));
        });
      }
      ctx.strokeStyle = "rgba(128,128,128,0.6)";
      ctx.lineWidth = 1;
      ctx.strokeRect(x0 - 0.5, y0 - 0.5, pw + 1, ph + 1);
      // title
      ctx.fillStyle = ink;
      const title = titles[p];
      ctx.textAlign = "center";
      if (title) {
        ctx.font = `600 ${title.size}px ${FONT}`;
        const ty = y0 - px(spec.groups ? 27 : 11), lines = title.lines || [title.text], line = title.size + 2;
        lines.forEach((text, i) => ctx.fillText(text, x0 + pw / 2, ty - (lines.length - 1 - i) * line));
        const top = ty - (lines.length - 1) * line - title.size / 2 - 1;
        box("title", title.text, x0 + pw / 2 - title.w / 2, top, title.w, lines.length * line);
      }
      // row labels at the left of each line, column labels under every panel
      ctx.font = `${px(12)}px ${FONT}`;
      if (p % perLine === 0) {
        ctx.textAlign = "right";
        rowLabels.forEach((t, i) => {
          if (i % everyRow) return;
          if (sel && sel.row === i) ctx.font = `700 ${px(12)}px ${FONT}`; // the selected cell's row in bold
          ctx.fillText(t, x0 - 5, y0 + (i + 0.5) * ch);
          const tw = ctx.measureText(t).width;
          box("query", t, x0 - 5 - tw, y0 + (i + 0.5) * ch - px(6), tw, px(12));
          if (sel && sel.row === i) ctx.font = `${px(12)}px ${FONT}`;
        });
      }
      {
        colLabels.forEach((t, j) => {
          if (j % everyCol) return;
          ctx.font = `${sel && sel.col === j ? "700 " : ""}${px(12)}px ${FONT}`; // the canvas caches font strings
          ctx.save();
          ctx.translate(x0 + (j + 0.5) * cw, y0 + ph + px(7));
          if (angle) { ctx.rotate(-angle); ctx.textAlign = "right"; } else { ctx.textAlign = "center"; }
          ctx.fillText(t, 0, angle ? 0 : px(5));
          ctx.restore();
          const tw = ctx.measureText(t).width, cx = x0 + (j + 0.5) * cw, top = y0 + ph + px(7);
          const line = px(12), half = px(6);
          if (!angle) box("key", t, cx - tw / 2, top - 1, tw, line);
          else box("key", t, cx - tw * Math.cos(angle) - half * Math.sin(angle), top - half * Math.cos(angle),
            tw * Math.cos(angle) + line * Math.sin(angle), tw * Math.sin(angle) + line * Math.cos(angle));
        });
      }
    });

    // the selected cell: a dark and a light outline, visible on any colour
    if (sel && rects[sel.panel]) {
      const cx = rects[sel.panel].x + sel.col * cw, cy = rects[sel.panel].y + sel.row * ch;
      ctx.lineWidth = 4;
      ctx.strokeStyle = "#000";
      ctx.strokeRect(cx - 1, cy - 1, cw + 2, ch + 2);
      ctx.lineWidth = 2;
      ctx.strokeStyle = "#fff";
      ctx.strokeRect(cx - 1, cy - 1, cw + 2, ch + 2);
    }

    // axis names
    ctx.fillStyle = ink;
    ctx.font = `italic ${px(12)}px ${FONT}`;
    ctx.textAlign = "center";
    const rowName = `${spec.rowName} \u2192`, colName = `${spec.colName} \u2192`;
    const rnw = ctx.measureText(rowName).width, cnw = ctx.measureText(colName).width;
    const ry = Math.max(lineTop[0] + ph / 2, rnw / 2 + 2);
    ctx.save();
    ctx.translate(px(8), ry);
    ctx.rotate(-Math.PI / 2);
    ctx.fillText(rowName, 0, 0);
    ctx.restore();
    box("axis", rowName, 2, ry - rnw / 2, px(12), rnw);
    ctx.fillText(colName, left + gridW / 2, y + px(8));
    box("axis", colName, left + gridW / 2 - cnw / 2, y + px(2), cnw, px(12));

    // colour bar with ticks, then the key of masked cells; or the swatches, then that key
    const bw = 12;
    if (spec.swatches) {
      ctx.font = `${px(11)}px ${FONT}`;
      ctx.textAlign = "left";
      spec.swatches.forEach((w, i) => {
        const ky = by + i * keyStep;
        ctx.fillStyle = colour(w.t).css;
        ctx.fillRect(bx, ky, keySize, keySize);
        ctx.strokeStyle = "rgba(128,128,128,0.6)";
        ctx.strokeRect(bx - 0.5, ky - 0.5, keySize + 1, keySize + 1);
        ctx.fillStyle = ink;
        ctx.fillText(w.text, bx + keySize + 5, ky + keySize / 2);
        box("legend", w.text, bx + keySize + 5, ky + keySize / 2 - px(6), ctx.measureText(w.text).width, px(12));
        boxes.push({ kind: "swatch", text: "", x: bx, y: ky, w: keySize, h: keySize });
      });
      if (spec.maskKey) {
        const ky = by + spec.swatches.length * keyStep;
        hatch(ctx, bx, ky, [[false]], keySize, keySize);
        ctx.strokeRect(bx - 0.5, ky - 0.5, keySize + 1, keySize + 1);
        ctx.fillStyle = ink;
        ctx.fillText(spec.maskKey, bx + keySize + 5, ky + keySize / 2);
        box("legend", spec.maskKey, bx + keySize + 5, ky + keySize / 2 - px(6), ctx.measureText(spec.maskKey).width, px(12));
      }
    }
    for (let k = 0; k < bh; k++) {
      ctx.fillStyle = paint(1 - k / (bh - 1)).css;
      ctx.fillRect(bx, by + k, bw, 1.5);
    }
    ctx.strokeStyle = "rgba(128,128,128,0.6)";
    if (bh) ctx.strokeRect(bx - 0.5, by - 0.5, bw + 1, bh + 1);
    ctx.font = `${px(11)}px ${FONT}`;
    ctx.textAlign = "left";
    ctx.fillStyle = ink;
    let step = niceStep(span / 4);
    while ((step / span) * (bh - 1) < px(18) && step < span) step = niceStep(step * 2.1); // ticks a line and a half apart
    for (let v = Math.ceil(spec.lo / step - 1e-9) * step; bh && v <= spec.hi + 1e-9 * span; v += step) {
      const ty = by + (1 - (v - spec.lo) / span) * (bh - 1), t = tickText(v, step);
      ctx.fillRect(bx + bw, ty - 0.5, 3, 1);
      ctx.fillText(t, bx + bw + 5, ty);
      box("tick", t, bx + bw + 5, ty - px(6), ctx.measureText(t).width, px(12));
    }
    if (spec.scaleLabel && bh) {
      ctx.fillText(spec.scaleLabel, bx - 2, by - px(14)); // above the top tick's label (centred on by)
      box("scale", spec.scaleLabel, bx - 2, by - px(20), ctx.measureText(spec.scaleLabel).width, px(12));
    }
    if (spec.maskKey && bh) {
      const ky = by + bh + px(16), key = Math.round(px(14));
      hatch(ctx, bx, ky, [[false]], key, key);
      ctx.strokeRect(bx - 0.5, ky - 0.5, key + 1, key + 1);
      ctx.fillStyle = ink;
      ctx.fillText(spec.maskKey, bx + key + 5, ky + key / 2);
      box("legend", spec.maskKey, bx + key + 5, ky + key / 2 - px(6), ctx.measureText(spec.maskKey).width, px(12));
    }
    const panels = rects.map((r) => ({ kind: "panel", text: "", x: r.x, y: r.y, w: pw, h: ph }));
    if (bh) boxes.push({ kind: "bar", text: "", x: bx, y: by, w: bw, h: bh });
    const fontPx = Math.min(px(11), ...titles.filter(Boolean).map((t) => t.size), printed ? valuePx : Infinity);
    canvas.dataset.mhaFontPx = String(fontPx);

    return {
      width, height, rects, cw, ch, rows, cols, perLine, angle, printed, fontPx, under,
      /** Every text drawn and every panel and the colour bar: {kind, text, x, y, w, h} in CSS pixels. */
      boxes: boxes.concat(panels),
      /** The cell under a point in CSS pixels: {panel, row, col}, or null. */
      hit(px, py) {
        for (let p = 0; p < rects.length; p++) {
          const col = Math.floor((px - rects[p].x) / cw), row = Math.floor((py - rects[p].y) / ch);
          if (col >= 0 && col < cols && row >= 0 && row < rows) return { panel: p, row, col };
        }
        return null;
      },
    };
  }

  /** A layout as a figure's el.mha.layout shows it: drawHeatmaps' numbers and boxes without its hit test (a
   * function, which a test's page.evaluate could not return); null before the first drawing. */
  function layoutView(layout) {
    return layout && Object.fromEntries(Object.entries(layout).filter(([, v]) => typeof v !== "function"));
  }

  /** A round tick spacing near `raw`: 1, 2 or 5 times a power of ten. */
  function niceStep(raw) {
    const power = 10 ** Math.floor(Math.log10(raw)), f = raw / power;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * power;
  }

  /** A tick value with the decimals its spacing needs ("-0.00" printed as "0.00"). */
  function formatNumber(v, step) {
    const decimals = Math.max(0, Math.min(4, -Math.floor(Math.log10(step) + 1e-9)));
    return v.toFixed(decimals).replace(/^-(0\.?0*)$/, "$1");
  }

  /** A weight (0 to 1) as the figures print it in a cell: two decimals, no leading zero (".42", "1.00"). */
  const weightText = (v) => v.toFixed(2).replace(/^0/, "");

  /** One head's values (n, n) into a small square canvas, each cell coloured by paint(value, row, col) (an
   * rgb triple), no text; a red cross over it if `off` (a head switched off). Nothing but the clear if
   * values is null. For the grids of small heads (the MiniLM box, the SmolLM2 figure's layer). */
  function drawThumb(canvas, values, paint, off) {
    const ctx = canvas.getContext("2d"), size = canvas.width;
    ctx.clearRect(0, 0, size, size);
    if (!values) return;
    const n = values.length, image = new ImageData(n, n);
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
      image.data.set(paint(values[i][j], i, j), 4 * (i * n + j));
      image.data[4 * (i * n + j) + 3] = 255;
    }
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

  Object.assign(ns, { drawHeatmaps, drawThumb, layoutView, colour, divergingColour, label, formatNumber, weightText, MAX_LABEL });
})(globalThis);
