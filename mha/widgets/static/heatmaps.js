/* mha front end, heatmaps: a grid of heatmap panels on one canvas, for the explorer and the stepper.
 *
 * Needs core.js first. One call, mhaFrontEnd.drawHeatmaps(canvas, spec), draws everything (panels, their
 * titles, token labels, a colour bar and the key of masked cells) and returns the layout, whose hit(x, y)
 * maps a point in CSS pixels to {panel, row, col}. Like mha/figures/heatmaps.py: one colour scale for all
 * panels (viridis), masked cells light grey with dark hatching, so "may not attend" never looks like
 * "attended with weight 0". Text is drawn with fillText, so a label is shown literally, whatever it holds.
 *
 * spec = {
 *   panels: [{title: "head 1 (d_k = 8)", values: rows x cols numbers, mask: rows x cols booleans or null}],
 *   rowLabels, colLabels: strings (one per row / column), rowName, colName: axis names ("query", "key"),
 *   lo, hi: the colour scale, cell: [width, height] of a cell in CSS pixels, maxWidth: CSS pixels,
 *   format: value -> string to print in each cell, or null, selected: {panel, row, col} or null,
 *   groups: null or {size, names}: vertical separators every `size` columns, names above (heads side by side),
 *   scaleLabel: "weight", maskKey: true to explain the hatching,
 * }
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});

  // matplotlib's viridis at 9 evenly spaced points; colours in between are interpolated linearly.
  const VIRIDIS = ["#440154", "#472c7a", "#3b518b", "#2c718e", "#21908d", "#27ad81", "#5cc863", "#aadc32", "#fde725"]
    .map((hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)));
  const LUT = Array.from({ length: 256 }, (_, i) => {
    const t = (i / 255) * (VIRIDIS.length - 1), k = Math.min(Math.floor(t), VIRIDIS.length - 2), f = t - k;
    const rgb = VIRIDIS[k].map((c, j) => Math.round(c + f * (VIRIDIS[k + 1][j] - c)));
    return { rgb, css: `rgb(${rgb.join(",")})`, dark: 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2] < 128 };
  });
  let scratch = null; // a canvas of one pixel per cell, scaled up onto the picture: fast for many cells
  const MASK_FILL = "#dbdbdb", MASK_LINE = "#595959";
  const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans CJK SC", sans-serif';
  const MAX_LABEL = 10; // characters of a token shown as a label

  /** A colour of the scale for t in [0, 1]. */
  function colour(t) {
    return LUT[Math.max(0, Math.min(255, Math.round(t * 255)))];
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
    const ink = getComputedStyle(canvas).color || "#222";
    const [cw, ch] = spec.cell;
    const rows = spec.panels[0].values.length, cols = spec.panels[0].values[0].length;
    const pw = cols * cw, ph = rows * ch; // one panel in CSS pixels
    const rowLabels = spec.rowLabels.map(label), colLabels = spec.colLabels.map(label);
    ctx.font = `12px ${FONT}`;
    const widest = (labels) => Math.max(0, ...labels.map((t) => ctx.measureText(t).width));
    const rowLabelW = Math.ceil(widest(rowLabels)) + 8;
    // Column labels wider than a cell are turned: 45 degrees if the cells leave room, else upright.
    const angle = widest(colLabels) <= cw - 2 ? 0 : cw >= 24 ? Math.PI / 4 : Math.PI / 2;
    const colLabelH = Math.ceil(widest(colLabels) * Math.sin(angle) + 6 * Math.cos(angle)) + 16;
    const titled = spec.panels.some((p) => p.title), titleH = spec.groups && titled ? 38 : 22, gapX = 18, gapY = 10, axisW = 18, barW = 86;

    // The grid of panels: as many per line as fit (at most 4), labels only at the left and bottom edges.
    const fit = Math.floor((spec.maxWidth - axisW - rowLabelW - barW + gapX) / (pw + gapX));
    const perLine = Math.max(1, Math.min(spec.panels.length, spec.maxColumns || 4, fit));
    const lines = Math.ceil(spec.panels.length / perLine);
    const lowest = (c) => Math.floor((spec.panels.length - 1 - c) / perLine); // last line with a panel in column c
    const lineTop = [];
    let y = 0;
    for (let l = 0; l < lines; l++) {
      if (l) y += gapY;
      lineTop.push(y + titleH);
      const labelsBelow = [...Array(perLine).keys()].some((c) => l * perLine + c < spec.panels.length && lowest(c) === l);
      y += titleH + ph + (labelsBelow ? colLabelH : 0);
    }
    const left = axisW + rowLabelW;
    const gridW = perLine * pw + (perLine - 1) * gapX;
    const width = left + gridW + barW, height = Math.max(y + 18, titleH + (spec.maskKey ? 210 : 170));
    const rects = spec.panels.map((_, p) => ({ x: left + (p % perLine) * (pw + gapX), y: lineTop[Math.floor(p / perLine)] }));

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
      const image = new ImageData(cols, rows);
      for (let i = 0; i < rows; i++) {
        for (let j = 0; j < cols; j++) {
          if (panel.mask && !panel.mask[i][j]) continue;
          image.data.set(colour((panel.values[i][j] - spec.lo) / span).rgb, 4 * (i * cols + j));
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
      if (spec.format) {
        ctx.font = `${Math.min(11, ch - 6)}px ${FONT}`;
        ctx.textAlign = "center";
        for (let i = 0; i < rows; i++) {
          for (let j = 0; j < cols; j++) {
            if (panel.mask && !panel.mask[i][j]) continue;
            const v = panel.values[i][j];
            ctx.fillStyle = colour((v - spec.lo) / span).dark ? "#fff" : "#111";
            ctx.fillText(spec.format(v), x0 + (j + 0.5) * cw, y0 + (i + 0.5) * ch);
          }
        }
      }
      if (spec.groups) { // heads side by side: a white line between them, their names above
        ctx.font = `11px ${FONT}`;
        ctx.textAlign = "center";
        spec.groups.names.forEach((name, g) => {
          if (g) { ctx.fillStyle = "#fff"; ctx.fillRect(x0 + g * spec.groups.size * cw - 1.5, y0, 3, ph); }
          ctx.fillStyle = ink;
          ctx.fillText(name, x0 + (g + 0.5) * spec.groups.size * cw, y0 - 9);
        });
      }
      ctx.strokeStyle = "rgba(128,128,128,0.6)";
      ctx.lineWidth = 1;
      ctx.strokeRect(x0 - 0.5, y0 - 0.5, pw + 1, ph + 1);
      // title
      ctx.fillStyle = ink;
      ctx.font = `600 13px ${FONT}`;
      ctx.textAlign = "center";
      if (panel.title) ctx.fillText(panel.title, x0 + pw / 2, y0 - (spec.groups ? 27 : 11));
      // row labels at the left edge, column labels under the lowest panel of each column
      ctx.font = `12px ${FONT}`;
      if (p % perLine === 0) {
        ctx.textAlign = "right";
        rowLabels.forEach((t, i) => {
          if (sel && sel.row === i) ctx.font = `700 12px ${FONT}`; // the selected cell's row in bold
          ctx.fillText(t, x0 - 5, y0 + (i + 0.5) * ch);
          if (sel && sel.row === i) ctx.font = `12px ${FONT}`;
        });
      }
      if (lowest(p % perLine) === Math.floor(p / perLine)) {
        colLabels.forEach((t, j) => {
          ctx.font = `${sel && sel.col === j ? "700 " : ""}12px ${FONT}`; // font strings are cached by the canvas
          ctx.save();
          ctx.translate(x0 + (j + 0.5) * cw, y0 + ph + 7);
          if (angle) { ctx.rotate(-angle); ctx.textAlign = "right"; } else { ctx.textAlign = "center"; }
          ctx.fillText(t, angle ? 0 : 0, angle ? 0 : 5);
          ctx.restore();
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
    ctx.font = `italic 12px ${FONT}`;
    ctx.textAlign = "center";
    ctx.save();
    ctx.translate(8, lineTop[0] + Math.min(ph, (lines > 1 ? y - titleH : ph)) / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.fillText(`${spec.rowName} \u2192`, 0, 0);
    ctx.restore();
    ctx.fillText(`${spec.colName} \u2192`, left + gridW / 2, y + 8);

    // colour bar with ticks, then the key of masked cells
    const bx = left + gridW + 16, by = lineTop[0], bh = Math.min(ph, 160), bw = 12;
    for (let k = 0; k < bh; k++) {
      ctx.fillStyle = colour(1 - k / (bh - 1)).css;
      ctx.fillRect(bx, by + k, bw, 1.5);
    }
    ctx.strokeStyle = "rgba(128,128,128,0.6)";
    ctx.strokeRect(bx - 0.5, by - 0.5, bw + 1, bh + 1);
    ctx.font = `11px ${FONT}`;
    ctx.textAlign = "left";
    ctx.fillStyle = ink;
    const step = niceStep(span / 4);
    for (let v = Math.ceil(spec.lo / step - 1e-9) * step; v <= spec.hi + 1e-9 * span; v += step) {
      const ty = by + (1 - (v - spec.lo) / span) * (bh - 1);
      ctx.fillRect(bx + bw, ty - 0.5, 3, 1);
      ctx.fillText(formatNumber(v, step), bx + bw + 5, ty);
    }
    if (spec.scaleLabel) ctx.fillText(spec.scaleLabel, bx - 2, by - 11);
    if (spec.maskKey) {
      const ky = by + bh + 16;
      hatch(ctx, bx, ky, [[false]], 14, 14);
      ctx.strokeRect(bx - 0.5, ky - 0.5, 15, 15);
      ctx.fillStyle = ink;
      ctx.fillText("masked", bx + 19, ky + 7);
    }

    return {
      width, height, rects, cw, ch, rows, cols,
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

  Object.assign(ns, { drawHeatmaps, colour, label, formatNumber, MAX_LABEL });
})(globalThis);
