// Canvas plots with axes, tick labels and a colour bar; device-pixel-ratio
// aware, redrawn when their container changes width. No dependencies.
//
//   heatmap(canvas, {data, rows, cols, scale: 'diverging' | 'sequential', ...})
//   linePlot(canvas, {series: [{label, x, y}], xLabel, yLabel, ...})
//   barChart(canvas, {groups, series: [{label, values}], ...})   (grouped bars)
//
// Signed quantities use the diverging map (blue < 0 < red, white at 0,
// symmetric range); probabilities and other non-negative quantities use the
// sequential map (viridis).

const FONT = '11px system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';
const SMALL_FONT = '9px system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';
const LABEL_FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';
const INK = '#1f2933';
const MUTED = '#52606d';
const GRID = '#e4e7eb';

export const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];

// ------------------------------------------------------------------ colour maps

const VIRIDIS = ['#440154', '#482878', '#3e4989', '#31688e', '#26828e', '#1f9e89', '#35b779', '#6ece58', '#b5de2b', '#fde725'];
const RDBU = ['#053061', '#2166ac', '#4393c3', '#92c5de', '#d1e5f0', '#f7f7f7', '#fddbc7', '#f4a582', '#d6604d', '#b2182b', '#67001f'];

const hexToRgb = (h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));

function makeMap(anchors) {
  const rgb = anchors.map(hexToRgb);
  const lut = new Uint8ClampedArray(256 * 3);
  for (let i = 0; i < 256; i++) {
    const t = (i / 255) * (rgb.length - 1),
      k = Math.min(Math.floor(t), rgb.length - 2),
      f = t - k;
    for (let c = 0; c < 3; c++) lut[i * 3 + c] = rgb[k][c] + (rgb[k + 1][c] - rgb[k][c]) * f;
  }
  return lut;
}

export const COLOUR_MAPS = { sequential: makeMap(VIRIDIS), diverging: makeMap(RDBU) };

// ------------------------------------------------------------------ helpers

/** Round tick values covering [lo, hi], about `count` of them. */
export function niceTicks(lo, hi, count = 5) {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [];
  if (hi < lo) [lo, hi] = [hi, lo];
  if (hi === lo) return [lo];
  const raw = (hi - lo) / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw * 0.8) ?? 10 * mag;
  const out = [];
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

/** A short label for a tick value. */
export function formatTick(v) {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e4 || a < 1e-3) return v.toExponential(0).replace('e+', 'e');
  return String(Number(v.toPrecision(4)));
}

// ?debug=1: every text a plot draws is recorded with its box in CSS pixels of
// its canvas (canvas.plotTexts: [{text, kind, x0, y0, x1, y1}], kind 'axis' for
// axis labels), so that a test can check that nothing is drawn outside.
const DEBUG = typeof location === 'object' && new URLSearchParams(location.search).get('debug') === '1';

function recordTexts(canvas, ctx, dpr) {
  canvas.plotTexts = [];
  if (ctx.recordsTexts) return;
  ctx.recordsTexts = true;
  const fillText = ctx.fillText;
  ctx.fillText = function (text, x, y, maxWidth) {
    const m = this.measureText(text),
      t = this.getTransform();
    const xs = [],
      ys = [];
    for (const px of [x - m.actualBoundingBoxLeft, x + m.actualBoundingBoxRight]) {
      for (const py of [y - m.actualBoundingBoxAscent, y + m.actualBoundingBoxDescent]) {
        xs.push((t.a * px + t.c * py + t.e) / dpr);
        ys.push((t.b * px + t.d * py + t.f) / dpr);
      }
    }
    canvas.plotTexts.push({
      text: String(text),
      kind: this.textKind ?? 'text',
      x0: Math.min(...xs),
      y0: Math.min(...ys),
      x1: Math.max(...xs),
      y1: Math.max(...ys),
    });
    return fillText.call(this, text, x, y, maxWidth);
  };
}

function setupCanvas(canvas, cssWidth, cssHeight) {
  const dpr = Math.max(1, Math.min(3, globalThis.devicePixelRatio || 1));
  canvas.style.width = `${cssWidth}px`;
  canvas.style.height = `${cssHeight}px`;
  canvas.width = Math.round(cssWidth * dpr);
  canvas.height = Math.round(cssHeight * dpr);
  const ctx = canvas.getContext('2d');
  if (DEBUG) recordTexts(canvas, ctx, canvas.width / cssWidth);
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, cssWidth, cssHeight);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, cssWidth, cssHeight);
  return ctx;
}

function availableWidth(canvas, fallback = 480) {
  const parent = canvas.parentElement;
  const w = parent ? parent.clientWidth - parseFloat(getComputedStyle(parent).paddingLeft || 0) - parseFloat(getComputedStyle(parent).paddingRight || 0) : 0;
  return Math.max(200, Math.floor(w || fallback));
}

/**
 * Legend entries ({label, w}) laid out in rows no wider than the plot (from
 * `left` to width - right); when one entry is wider, the legend starts at the
 * canvas's left edge instead, and an entry wider than the whole canvas is cut.
 * Returns {x0, rows}.
 */
function legendLayout(ctx, items, left, width, right) {
  let x0 = left;
  if (items.some((it) => it.w > width - left - right)) {
    x0 = 4;
    for (const it of items) {
      if (it.w <= width - x0 - right) continue;
      const pad = it.w - textWidth(ctx, it.label);
      it.label = clip(ctx, it.label, width - x0 - right - pad);
      it.w = pad + textWidth(ctx, it.label);
    }
  }
  const rows = [];
  let rowW = 0;
  for (const it of items) {
    if (!rows.length || rowW + it.w > width - x0 - right) {
      rows.push([]);
      rowW = 0;
    }
    rows[rows.length - 1].push(it);
    rowW += it.w;
  }
  return { x0, rows };
}

function textWidth(ctx, s, font = FONT) {
  ctx.font = font;
  return ctx.measureText(s).width;
}

const LABEL_LINE = 14; // the line height of an axis label

/** Text broken at spaces into lines no wider than maxW (one line when it fits). */
function wrapText(ctx, text, maxW, font = LABEL_FONT) {
  ctx.font = font;
  if (ctx.measureText(text).width <= maxW) return [text];
  const lines = [];
  let line = '';
  for (const word of text.split(' ')) {
    const longer = line ? `${line} ${word}` : word;
    if (line && ctx.measureText(longer).width > maxW) {
      lines.push(line);
      line = word;
    } else line = longer;
  }
  lines.push(line);
  return lines;
}

/** An axis label's lines in maxW: the label if it fits, else its short form if that fits, else the label wrapped. */
function labelLines(ctx, label, short, maxW) {
  if (!label) return [];
  ctx.font = LABEL_FONT;
  if (ctx.measureText(label).width <= maxW) return [label];
  if (short && ctx.measureText(short).width <= maxW) return [short];
  return wrapText(ctx, label, maxW);
}

/** The space an axis label's lines take across: 0 for none. */
const labelBand = (lines) => (lines.length ? lines.length * LABEL_LINE + 6 : 0);

/** A centred x-axis label whose centre is cx, in a canvas `width` wide: its lines. */
const xLabelLines = (ctx, spec, cx, width) => labelLines(ctx, spec.xLabel, spec.xLabelShort, 2 * Math.min(cx, width - cx) - 6);

/** Draws a centred axis label's lines upwards from the baseline y (the last line on it). */
function drawXLabel(ctx, lines, cx, y) {
  ctx.font = LABEL_FONT;
  ctx.fillStyle = INK;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'bottom';
  lines.forEach((line, i) => axisText(ctx, line, cx, y - (lines.length - 1 - i) * LABEL_LINE));
}

/**
 * Draws a label written upwards: its first line's middle at x, the others to
 * its right, centred at y but moved to stay inside a canvas `height` tall.
 */
function drawRotatedLabel(ctx, lines, x, y, height) {
  if (!lines.length) return;
  ctx.save();
  ctx.font = LABEL_FONT;
  const half = Math.max(...lines.map((l) => ctx.measureText(l).width)) / 2;
  ctx.translate(x, Math.max(half + 2, Math.min(height - half - 2, y)));
  ctx.rotate(-Math.PI / 2);
  ctx.fillStyle = INK;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  lines.forEach((line, i) => axisText(ctx, line, 0, i * LABEL_LINE));
  ctx.restore();
}

/** An axis label (the debug record tells it from the ticks). */
function axisText(ctx, text, x, y) {
  ctx.textKind = 'axis';
  ctx.fillText(text, x, y);
  ctx.textKind = undefined;
}

// Re-draw plots when their container changes width (phone rotation, resize).
const drawn = new WeakMap(); // canvas -> {draw, width}
const observer =
  typeof ResizeObserver === 'function'
    ? new ResizeObserver((entries) => {
        requestAnimationFrame(() => {
          for (const entry of entries) {
            for (const canvas of entry.target.querySelectorAll('canvas')) {
              const d = drawn.get(canvas);
              if (d && canvas.isConnected && availableWidth(canvas) !== d.width) d.draw();
            }
          }
        });
      })
    : null;

function register(canvas, draw) {
  const first = !drawn.has(canvas);
  const entry = {
    draw: () => {
      entry.width = availableWidth(canvas);
      draw(entry.width);
    },
  };
  drawn.set(canvas, entry);
  entry.draw();
  if (first && observer && canvas.parentElement) observer.observe(canvas.parentElement);
  canvas.dataset.drawn = 'true';
}

// ------------------------------------------------------------------ tooltip

let tooltip;
function showTooltip(event, text) {
  if (!tooltip) {
    tooltip = document.createElement('div');
    tooltip.className = 'plot-tooltip';
    tooltip.setAttribute('role', 'status');
    document.body.append(tooltip);
    // a tap leaves no mouse to move away: a tap elsewhere or a scroll hides the readout
    document.addEventListener(
      'pointerdown',
      (e) => {
        if (!e.target.closest?.('canvas')) hideTooltip();
      },
      true,
    );
    addEventListener('scroll', hideTooltip, { capture: true, passive: true });
  }
  tooltip.textContent = text;
  tooltip.hidden = false;
  const pad = 12;
  const x = Math.min(event.clientX + pad, window.innerWidth - tooltip.offsetWidth - 4);
  const y = event.clientY + pad + tooltip.offsetHeight > window.innerHeight ? event.clientY - tooltip.offsetHeight - pad : event.clientY + pad;
  tooltip.style.transform = `translate(${Math.max(4, x)}px, ${y}px)`;
}
function hideTooltip() {
  if (tooltip) tooltip.hidden = true;
}

/** The readout of what is under the pointer (text(event) or null): on hover, and on a tap or click (touch screens have no hover). */
function readout(canvas, text) {
  const show =
    text &&
    ((event) => {
      const t = text(event);
      if (t === null) hideTooltip();
      else showTooltip(event, t);
    });
  canvas.onmousemove = show;
  canvas.onclick = show;
  canvas.onmouseleave = text && hideTooltip;
}

/** Whether the page is read with a finger (no hover): hints say tap rather than hover. */
export const touchScreen = () => typeof matchMedia === 'function' && matchMedia('(hover: none)').matches;

// ------------------------------------------------------------------ text alternatives

const shortNumber = (v) => (Number.isFinite(v) ? String(Number(v.toPrecision(3))) : String(v));
const oneLine = (s) => String(s).replace(/\n/g, ' ');

/** The canvas's text alternative: its title (plotBox's label) and what it shows now (summary). */
function describe(canvas, summary) {
  if (canvas.dataset.title === undefined) canvas.dataset.title = canvas.getAttribute('aria-label') ?? '';
  const title = canvas.dataset.title.replace(/[.:]?$/, '');
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', title ? `${title}. ${summary}` : summary);
}

function rangeOf(values) {
  let lo = Infinity,
    hi = -Infinity;
  for (const v of values)
    if (Number.isFinite(v)) {
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  return [lo, hi];
}

function describeHeatmap(spec) {
  const { rows, cols, data } = spec;
  const [lo, hi] = rangeOf(data);
  let text = `Heat map of ${rows} rows (${spec.yLabel ?? 'row'}) by ${cols} columns (${spec.xLabel ?? 'column'}), ${spec.colorLabel ?? 'values'} from ${shortNumber(lo)} to ${shortNumber(hi)}.`;
  if (spec.yTickLabels && rows <= 12) text += ` Rows: ${spec.yTickLabels.join(', ')}.`;
  if (rows * cols <= 16) {
    text += ` Row by row: ${Array.from({ length: rows }, (_, r) => Array.from(data.slice(r * cols, (r + 1) * cols), shortNumber).join(', ')).join('; ')}.`;
  }
  return text;
}

function describeLines(spec, series) {
  const fmt = spec.valueFormat ?? shortNumber;
  const xName = (x) => spec.xTickLabels?.find((t) => t.value === x)?.label ?? shortNumber(x);
  const lines = series.map((s) => {
    const what =
      s.x.length <= 8
        ? s.x.map((x, i) => `${xName(x)} ${fmt(s.y[i])}`).join(', ')
        : (([lo, hi]) => `${s.x.length} points from ${xName(s.x[0])} to ${xName(s.x.at(-1))}, between ${fmt(lo)} and ${fmt(hi)}`)(rangeOf(s.y));
    return `${s.label ?? 'a line'}: ${what}`;
  });
  for (const hl of spec.hlines ?? []) if (hl.label) lines.push(`dashed line: ${hl.label}`);
  return `Line chart of ${spec.yLabel ?? 'y'} against ${spec.xLabel ?? 'x'}. ${lines.join('; ')}.`;
}

function describeBars(spec, valueFmt) {
  const { groups, series } = spec;
  const value = (v) => (v !== null && typeof v === 'object' ? v.text : valueFmt(v));
  const lines = series.map((s) => {
    if (groups.length * series.length <= 24) {
      return `${s.label}: ${groups
        .map((g, i) => (s.values[i] === null || s.values[i] === undefined ? null : `${oneLine(g)} ${value(s.values[i])}`))
        .filter(Boolean)
        .join(', ')}`;
    }
    const [lo, hi] = rangeOf(s.values);
    return `${s.label}: from ${valueFmt(lo)} to ${valueFmt(hi)} over ${groups.length} groups`;
  });
  for (const hl of spec.hlines ?? []) if (hl.label) lines.push(`dashed line: ${hl.label}`);
  return `Bar chart of ${spec.yLabel ?? 'values'}${spec.xLabel ? ` per ${spec.xLabel}` : ''}. ${lines.join('; ')}.`;
}

// ------------------------------------------------------------------ heatmap

/**
 * Draws a rows x cols matrix (row-major `data`) as a heatmap with axes and a colour bar.
 * spec: {data, rows, cols, scale: 'diverging' | 'sequential', range?: [lo, hi],
 *        xLabel, yLabel, colorLabel, xTickLabels?: string[], yTickLabels?: string[],
 *        square?: boolean (square cells, e.g. attention), rowHeight?: px, maxHeight?: px,
 *        valueLabel?: (r, c, v) => string (hover text)}
 */
export function heatmap(canvas, spec) {
  const { data, rows, cols } = spec;
  const scale = spec.scale === 'diverging' ? 'diverging' : 'sequential';
  let [lo, hi] = spec.range ?? [Infinity, -Infinity];
  if (!spec.range)
    for (let i = 0; i < rows * cols; i++) {
      const v = data[i];
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  if (scale === 'diverging') {
    const m = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
    [lo, hi] = spec.range ?? [-m, m];
  }
  if (!(hi > lo)) hi = lo + 1;
  const lut = COLOUR_MAPS[scale];

  // the colours, one pixel per cell
  const img = new ImageData(cols, rows);
  for (let i = 0; i < rows * cols; i++) {
    const t = Math.max(0, Math.min(1, (data[i] - lo) / (hi - lo)));
    const k = Math.round(t * 255) * 3;
    img.data[i * 4] = lut[k];
    img.data[i * 4 + 1] = lut[k + 1];
    img.data[i * 4 + 2] = lut[k + 2];
    img.data[i * 4 + 3] = 255;
  }
  const cells = document.createElement('canvas');
  cells.width = cols;
  cells.height = rows;
  cells.getContext('2d').putImageData(img, 0, 0);

  const draw = (width) => {
    const measure = canvas.getContext('2d');
    const ylabels = spec.yTickLabels,
      xlabels = spec.xTickLabels;
    const yTickW = ylabels ? Math.min(110, Math.max(...ylabels.map((s) => textWidth(measure, s)), 10)) : textWidth(measure, String(rows - 1));
    const cbTicks = niceTicks(lo, hi, 4);
    const cbTickW = Math.max(...cbTicks.map((v) => textWidth(measure, formatTick(v))), 10);
    const xMaxLabelW = xlabels ? Math.min(90, Math.max(...xlabels.map((s) => textWidth(measure, s)), 4)) : 0;
    const top = 8,
      maxH = spec.maxHeight ?? 420;
    // the margins for the axis labels' lines (yLines on the left, cLines by the colour bar, xLines below)
    const layout = (yLines, cLines) => {
      const left = Math.max(20, labelBand(yLines)) + yTickW + 8;
      const right = 14 + 12 + 5 + cbTickW + (cLines.length ? 4 + labelBand(cLines) : 4);
      let plotW = Math.max(40, width - left - right),
        plotH;
      if (spec.square) {
        const cell = Math.min(plotW / cols, maxH / rows, spec.maxCell ?? 56);
        plotW = cell * cols;
        plotH = cell * rows;
      } else {
        plotH = Math.max(60, Math.min(maxH, rows * (spec.rowHeight ?? 14)));
      }
      const cellW = plotW / cols,
        cellH = plotH / rows;
      // x tick labels: categorical (rotated when they do not fit) or numeric
      const rotateX = xlabels && xMaxLabelW + 4 > cellW;
      const totalW = Math.ceil(Math.min(width, left + plotW + right));
      const xLines = xLabelLines(measure, spec, left + plotW / 2, totalW);
      const bottom = (rotateX ? xMaxLabelW * 0.72 + 14 : 18) + Math.max(20, labelBand(xLines));
      return { yLines, cLines, xLines, left, right, plotW, plotH, cellW, cellH, rotateX, totalW, height: Math.ceil(top + plotH + bottom) };
    };
    // a label written upwards that is longer than the canvas is tall wraps (which makes the plot smaller: again)
    let L = layout(spec.yLabel ? [spec.yLabel] : [], spec.colorLabel ? [spec.colorLabel] : []);
    for (let i = 0; i < 3; i++) {
      const y = labelLines(measure, spec.yLabel, null, L.height - 4),
        c = labelLines(measure, spec.colorLabel, null, L.height - 4);
      if (y.length === L.yLines.length && c.length === L.cLines.length) break;
      L = layout(y, c);
    }
    const { left, plotW, plotH, cellW, cellH, rotateX, totalW, height } = L;
    const ctx = setupCanvas(canvas, totalW, height);

    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(cells, left, top, plotW, plotH);
    ctx.strokeStyle = MUTED;
    ctx.lineWidth = 1;
    ctx.strokeRect(left - 0.5, top - 0.5, plotW + 1, plotH + 1);

    ctx.font = FONT;
    ctx.fillStyle = INK;
    // y ticks
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    if (ylabels) {
      const step = Math.max(1, Math.ceil(13 / cellH));
      for (let r = 0; r < rows; r += step) ctx.fillText(clip(ctx, ylabels[r], 110), left - 5, top + (r + 0.5) * cellH);
    } else {
      for (const v of niceTicks(0, rows - 1, Math.max(2, Math.min(8, Math.floor(plotH / 28))))) {
        if (!Number.isInteger(v)) continue;
        const y = top + (v + 0.5) * cellH;
        ctx.fillText(String(v), left - 5, y);
        ctx.fillRect(left - 3, y, 3, 1);
      }
    }
    // x ticks
    if (xlabels) {
      const step = Math.max(1, Math.ceil((rotateX ? 13 : xMaxLabelW + 6) / cellW));
      for (let c = 0; c < cols; c += step) {
        const x = left + (c + 0.5) * cellW;
        if (rotateX) {
          ctx.save();
          ctx.translate(x, top + plotH + 5);
          ctx.rotate(-Math.PI / 4);
          ctx.textAlign = 'right';
          ctx.textBaseline = 'middle';
          ctx.fillText(clip(ctx, xlabels[c], 90), 0, 0);
          ctx.restore();
        } else {
          ctx.textAlign = 'center';
          ctx.textBaseline = 'top';
          ctx.fillText(xlabels[c], x, top + plotH + 4);
        }
      }
    } else {
      ctx.textAlign = 'center';
      ctx.textBaseline = 'top';
      for (const v of niceTicks(0, cols - 1, Math.max(2, Math.min(8, Math.floor(plotW / 50))))) {
        if (!Number.isInteger(v)) continue;
        const x = left + (v + 0.5) * cellW;
        ctx.fillText(String(v), x, top + plotH + 4);
        ctx.fillRect(x, top + plotH, 1, 3);
      }
    }
    // axis labels
    drawXLabel(ctx, L.xLines, left + plotW / 2, height - 3);
    drawRotatedLabel(ctx, L.yLines, 9, top + plotH / 2, height);

    // colour bar
    const cbX = left + plotW + 14,
      cbW = 12;
    const grad = ctx.createLinearGradient(0, top + plotH, 0, top);
    for (let i = 0; i <= 16; i++) {
      const k = Math.round((i / 16) * 255) * 3;
      grad.addColorStop(i / 16, `rgb(${lut[k]},${lut[k + 1]},${lut[k + 2]})`);
    }
    ctx.fillStyle = grad;
    ctx.fillRect(cbX, top, cbW, plotH);
    ctx.strokeStyle = MUTED;
    ctx.strokeRect(cbX - 0.5, top - 0.5, cbW + 1, plotH + 1);
    ctx.font = FONT;
    ctx.fillStyle = INK;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'middle';
    for (const v of cbTicks) {
      const y = top + plotH - ((v - lo) / (hi - lo)) * plotH;
      ctx.fillRect(cbX + cbW, y, 3, 1);
      ctx.fillText(formatTick(v), cbX + cbW + 5, y);
    }
    drawRotatedLabel(ctx, L.cLines, cbX + cbW + 5 + cbTickW + 8 + 8, top + plotH / 2, height);

    canvas._hit = { left, top, cellW, cellH };
  };

  register(canvas, draw);
  describe(canvas, spec.summary ?? describeHeatmap(spec));
  readout(canvas, (event) => {
    const h = canvas._hit;
    if (!h) return null;
    const rect = canvas.getBoundingClientRect();
    const c = Math.floor((event.clientX - rect.left - h.left) / h.cellW);
    const r = Math.floor((event.clientY - rect.top - h.top) / h.cellH);
    if (r < 0 || c < 0 || r >= rows || c >= cols) return null;
    const v = data[r * cols + c];
    const rl = spec.yTickLabels ? `${spec.yTickLabels[r]} (${r})` : r;
    const cl = spec.xTickLabels ? `${spec.xTickLabels[c]} (${c})` : c;
    return spec.valueLabel ? spec.valueLabel(r, c, v) : `${spec.yLabel ?? 'row'} ${rl}, ${spec.xLabel ?? 'col'} ${cl}: ${v.toPrecision(4)}`;
  });
}

function clip(ctx, s, maxW) {
  if (ctx.measureText(s).width <= maxW) return s;
  let t = s;
  while (t.length > 1 && ctx.measureText(`${t}…`).width > maxW) t = t.slice(0, -1);
  return `${t}…`;
}

// ------------------------------------------------------------------ line plot

/**
 * Draws lines (optionally with markers) with axes, ticks and a legend.
 * spec: {series: [{label, x: number[], y: number[], color?, dash?: number[], markers?: boolean, width?}],
 *        xLabel, yLabel, xRange?, yRange?, xTickLabels?: [{value, label}], hlines?: [{y, label}],
 *        height?: px, legend?: boolean, bars?: boolean}
 */
export function linePlot(canvas, spec) {
  const series = spec.series.filter((s) => s.x.length);
  const draw = (width) => {
    const measure = canvas.getContext('2d');
    let [x0, x1] = spec.xRange ?? [Infinity, -Infinity];
    let [y0, y1] = spec.yRange ?? [Infinity, -Infinity];
    if (!spec.xRange)
      for (const s of series)
        for (const v of s.x) {
          x0 = Math.min(x0, v);
          x1 = Math.max(x1, v);
        }
    if (!spec.yRange) {
      for (const s of series)
        for (const v of s.y)
          if (Number.isFinite(v)) {
            y0 = Math.min(y0, v);
            y1 = Math.max(y1, v);
          }
      for (const h of spec.hlines ?? []) {
        y0 = Math.min(y0, h.y);
        y1 = Math.max(y1, h.y);
      }
      if (spec.includeZero) {
        y0 = Math.min(y0, 0);
        y1 = Math.max(y1, 0);
      }
      const pad = (y1 - y0) * 0.08 || Math.abs(y1) * 0.1 || 1;
      y0 -= pad;
      y1 += pad;
    }
    if (!Number.isFinite(x0)) [x0, x1] = [0, 1];
    if (!Number.isFinite(y0)) [y0, y1] = [0, 1];
    if (x1 === x0) {
      x0 -= 0.5;
      x1 += 0.5;
    }
    if (spec.bars || spec.xPad) {
      x0 -= 0.5;
      x1 += 0.5;
    }

    const height = spec.height ?? 240;
    const yTicks = niceTicks(y0, y1, Math.max(3, Math.floor((height - 60) / 36)));
    const yTickW = Math.max(...yTicks.map((v) => textWidth(measure, formatTick(v))), 10);
    // legend: rows of [swatch label], wrapped to the width
    const HLINE = '#616e7c';
    const items =
      spec.legend === false
        ? []
        : [
            ...series.filter((s) => s.label),
            ...(spec.hlines ?? []).filter((hl) => hl.label).map((hl) => ({ label: hl.label, dash: [4, 4], color: HLINE, isHline: true })),
          ].map((s) => ({ s, label: s.label, w: 22 + textWidth(measure, s.label) + 14 }));
    const yLines = labelLines(measure, spec.yLabel, null, height - 4);
    const left = Math.max(20, labelBand(yLines)) + yTickW + 8,
      right = 12;
    const legend = legendLayout(measure, items, left, width, right);
    const top = 8 + legend.rows.length * 16;
    const plotW = Math.max(40, width - left - right);
    const xLines = xLabelLines(measure, spec, left + plotW / 2, width);
    const bottom = 20 + Math.max(20, labelBand(xLines));
    const plotH = Math.max(60, height - top - bottom);
    const ctx = setupCanvas(canvas, width, height);
    const X = (v) => left + ((v - x0) / (x1 - x0)) * plotW;
    const Y = (v) => top + plotH - ((v - y0) / (y1 - y0)) * plotH;

    // grid + y ticks
    ctx.font = FONT;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (const v of yTicks) {
      const y = Math.round(Y(v)) + 0.5;
      ctx.strokeStyle = v === 0 ? '#9aa5b1' : GRID;
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(left, y);
      ctx.lineTo(left + plotW, y);
      ctx.stroke();
      ctx.fillStyle = INK;
      ctx.fillText(formatTick(v), left - 5, y);
    }
    // x ticks
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    const xTicks =
      spec.xTickLabels ??
      niceTicks(x0, x1, Math.max(2, Math.min(10, Math.floor(plotW / 60))))
        .filter((v) => !spec.integerX || Number.isInteger(v))
        .map((v) => ({ value: v, label: formatTick(v) }));
    const xStep = Math.max(1, Math.ceil((Math.max(...xTicks.map((t) => textWidth(ctx, t.label)), 1) / (plotW / Math.max(1, xTicks.length))) * 1.3));
    // label every xStep-th tick and always the last one (e.g. 'out')
    const labelled = new Set(xTicks.map((_, i) => i).filter((i) => i % xStep === 0));
    if (spec.xTickLabels && xTicks.length > 1) {
      const last = xTicks.length - 1;
      for (let i = last - 1; i > 0 && i > last - xStep; i--) labelled.delete(i);
      labelled.add(last);
    }
    xTicks.forEach((t, i) => {
      const x = X(t.value);
      if (x < left - 1 || x > left + plotW + 1) return;
      ctx.fillStyle = INK;
      ctx.fillRect(Math.round(x), top + plotH, 1, 4);
      if (labelled.has(i)) ctx.fillText(t.label, x, top + plotH + 6);
    });
    ctx.strokeStyle = MUTED;
    ctx.lineWidth = 1;
    ctx.strokeRect(left - 0.5, top - 0.5, plotW + 1, plotH + 1);

    // reference lines
    for (const h of spec.hlines ?? []) {
      const y = Y(h.y);
      ctx.save();
      ctx.setLineDash([4, 4]);
      ctx.strokeStyle = HLINE;
      ctx.lineWidth = 1.2;
      ctx.beginPath();
      ctx.moveTo(left, y);
      ctx.lineTo(left + plotW, y);
      ctx.stroke();
      ctx.restore();
    }

    // series
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, plotW, plotH);
    ctx.clip();
    series.forEach((s, k) => {
      const color = s.color ?? PALETTE[k % PALETTE.length];
      ctx.strokeStyle = color;
      ctx.fillStyle = color;
      if (spec.bars) {
        const n = series.length,
          bw = Math.max(2, Math.min(48, (plotW / (x1 - x0)) * 0.7) / n);
        s.x.forEach((xv, i) => {
          const x = X(xv) - (n * bw) / 2 + k * bw,
            ya = Y(Math.max(0, Math.min(s.y[i], y1))),
            yb = Y(Math.max(y0, 0));
          ctx.fillRect(x, Math.min(ya, yb), bw - 1, Math.abs(yb - ya));
        });
        return;
      }
      ctx.lineWidth = s.width ?? 1.8;
      ctx.setLineDash(s.dash ?? []);
      ctx.beginPath();
      let pen = false;
      s.x.forEach((xv, i) => {
        const yv = s.y[i];
        if (!Number.isFinite(yv)) {
          pen = false;
          return;
        }
        if (pen) ctx.lineTo(X(xv), Y(yv));
        else ctx.moveTo(X(xv), Y(yv));
        pen = true;
      });
      if (s.line !== false) ctx.stroke();
      ctx.setLineDash([]);
      if (s.markers) {
        s.x.forEach((xv, i) => {
          if (!Number.isFinite(s.y[i])) return;
          ctx.beginPath();
          ctx.arc(X(xv), Y(s.y[i]), s.markerSize ?? 2.8, 0, 2 * Math.PI);
          ctx.fill();
        });
      }
    });
    ctx.restore();

    // legend
    ctx.font = FONT;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'middle';
    legend.rows.forEach((rowItems, r) => {
      let x = legend.x0;
      const y = 8 + r * 16 + 4;
      for (const { s, label, w } of rowItems) {
        const color = s.color ?? PALETTE[series.indexOf(s) % PALETTE.length];
        ctx.strokeStyle = color;
        ctx.fillStyle = color;
        ctx.lineWidth = s.isHline ? 1.2 : 2;
        if (spec.bars && !s.isHline) ctx.fillRect(x, y - 4, 16, 8);
        else {
          ctx.setLineDash(s.dash ?? []);
          ctx.beginPath();
          ctx.moveTo(x, y);
          ctx.lineTo(x + 16, y);
          ctx.stroke();
          ctx.setLineDash([]);
          if (s.markers) {
            ctx.beginPath();
            ctx.arc(x + 8, y, 2.8, 0, 2 * Math.PI);
            ctx.fill();
          }
        }
        ctx.fillStyle = INK;
        ctx.fillText(label, x + 22, y);
        x += w;
      }
    });

    // axis labels
    drawXLabel(ctx, xLines, left + plotW / 2, height - 3);
    drawRotatedLabel(ctx, yLines, 9, top + plotH / 2, height);
  };
  register(canvas, draw);
  describe(canvas, spec.summary ?? describeLines(spec, series));
  readout(canvas, null);
}

// ------------------------------------------------------------------ grouped bars

/**
 * Grouped bars with axes, a legend, value labels and hover text.
 * spec: {groups: string[] (x categories; '\n' splits a label into lines),
 *        groupsShort?: string[] (used when a label of groups does not fit its slot),
 *        series: [{label, color?, values: (number | null | {text: string})[]}],
 *        yRange?: [lo, hi], yTickFormat?: v => string, valueFormat?: v => string,
 *        xLabel?, yLabel?, height?: px, hlines?: [{y, label}],
 *        highlight?: index of a series (the others are drawn lighter),
 *        separators?: group indices (a dashed line before that group),
 *        tooltip?: (group, series) => string}
 * A value {text} draws no bar but the text written up the bar's slot (e.g. 'refused');
 * null draws nothing.
 */
export function barChart(canvas, spec) {
  const { groups, series } = spec;
  const [y0, y1] = spec.yRange ?? [0, Math.max(1e-9, ...series.flatMap((s) => s.values.filter(Number.isFinite)))];
  const tickFmt = spec.yTickFormat ?? formatTick;
  const valueFmt = spec.valueFormat ?? ((v) => formatTick(v));
  const HLINE = '#616e7c';
  const colorOf = (k) => series[k].color ?? PALETTE[k % PALETTE.length];
  const draw = (width) => {
    const measure = canvas.getContext('2d');
    const height = spec.height ?? 260;
    const yTicks = niceTicks(y0, y1, Math.max(3, Math.floor((height - 80) / 34)));
    const yTickW = Math.max(...yTicks.map((v) => textWidth(measure, tickFmt(v))), 10);
    const yLines = labelLines(measure, spec.yLabel, null, height - 4);
    const left = (yLines.length ? labelBand(yLines) : 4) + yTickW + 8,
      right = 8;
    // legend rows, wrapped to the width
    const items = [
      ...series.map((s, k) => ({ label: s.label, color: colorOf(k), k })),
      ...(spec.hlines ?? []).filter((hl) => hl.label).map((hl) => ({ label: hl.label, color: HLINE, isHline: true })),
    ].map((it) => ({ ...it, w: 22 + textWidth(measure, it.label) + 12 }));
    const legend = legendLayout(measure, items, left, width, right);
    const top = 10 + legend.rows.length * 16;
    // group labels: the short forms when a long one does not fit its slot, then the key to them
    const slotW = (width - left - right) / groups.length - 4;
    const fits = (g) => g.split('\n').every((line) => textWidth(measure, line) <= slotW);
    const short = !!spec.groupsShort && !groups.every(fits);
    const shown = short ? spec.groupsShort : groups;
    const groupLines = Math.max(1, ...shown.map((g) => g.split('\n').length));
    const keyLines = short && spec.groupsKey ? wrapText(measure, spec.groupsKey, width - 8, FONT) : [];
    const plotW = Math.max(60, width - left - right);
    const xLines = xLabelLines(measure, spec, left + plotW / 2, width);
    const blocksY = 5 + groupLines * 13,
      keyY = blocksY + (spec.blocks ? 14 : 0);
    const bottom = 3 + keyY + keyLines.length * 13 + (xLines.length ? 18 + (xLines.length - 1) * LABEL_LINE : 2);
    const plotH = Math.max(60, height - top - bottom);
    const ctx = setupCanvas(canvas, width, height);
    const Y = (v) => top + plotH - ((Math.max(y0, Math.min(y1, v)) - y0) / (y1 - y0)) * plotH;

    // grid + y ticks
    ctx.font = FONT;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (const v of yTicks) {
      const y = Math.round(Y(v)) + 0.5;
      ctx.strokeStyle = GRID;
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(left, y);
      ctx.lineTo(left + plotW, y);
      ctx.stroke();
      ctx.fillStyle = INK;
      ctx.fillText(tickFmt(v), left - 5, y);
    }

    // geometry: each group gets an equal slot, its bars fill 80% of it
    const gw = plotW / groups.length,
      inner = gw * 0.82,
      n = series.length;
    const bw = Math.min(44, inner / n);
    const slot = (g, k) => left + g * gw + (gw - bw * n) / 2 + k * bw;

    // group labels and separators
    ctx.fillStyle = INK;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    shown.forEach((g, i) => {
      g.split('\n').forEach((line, j) => {
        ctx.font = j === 0 ? FONT : SMALL_FONT.replace('9px', '10px');
        ctx.fillStyle = j === 0 ? INK : MUTED;
        ctx.fillText(clip(ctx, line, gw - 4), left + (i + 0.5) * gw, top + plotH + 5 + j * 13);
      });
    });
    for (const i of spec.separators ?? []) {
      const x = Math.round(left + i * gw) + 0.5;
      ctx.save();
      ctx.setLineDash([3, 3]);
      ctx.strokeStyle = '#9aa5b1';
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, top + plotH + keyY - 1);
      ctx.stroke();
      ctx.restore();
    }
    // the blocks' names under their groups, and the key to the short labels
    ctx.font = `600 ${FONT}`;
    ctx.fillStyle = INK;
    for (const b of spec.blocks ?? []) ctx.fillText(clip(ctx, b.label, (b.to - b.from) * gw - 4), left + ((b.from + b.to) / 2) * gw, top + plotH + blocksY);
    ctx.font = FONT;
    ctx.fillStyle = MUTED;
    keyLines.forEach((line, j) => ctx.fillText(line, width / 2, top + plotH + keyY + j * 13));

    // bars
    const hl = spec.highlight;
    const labelW = textWidth(measure, valueFmt(y1)) + 3;
    const gap = bw >= 12 ? 2 : 1;
    for (let k = 0; k < n; k++) {
      const color = colorOf(k);
      const faded = hl !== undefined && hl !== null && hl >= 0 && k !== hl;
      series[k].values.forEach((v, g) => {
        const x = slot(g, k),
          w = Math.max(1, bw - gap);
        if (v === null || v === undefined) return;
        if (typeof v === 'object') {
          // no number: write the text up the slot (e.g. 'refused'), on a hatched stub
          ctx.font = FONT;
          const tw = textWidth(ctx, v.text) + 10,
            base = top + plotH;
          ctx.save();
          ctx.globalAlpha = faded ? 0.5 : 1;
          ctx.strokeStyle = color;
          ctx.setLineDash([3, 2]);
          ctx.lineWidth = 1;
          ctx.strokeRect(x + 0.5, base - tw + 0.5, w - 1, tw - 1);
          ctx.restore();
          ctx.save();
          ctx.translate(x + w / 2, base - 5);
          ctx.rotate(-Math.PI / 2);
          ctx.fillStyle = faded ? MUTED : INK;
          ctx.textAlign = 'left';
          ctx.textBaseline = 'middle';
          ctx.fillText(v.text, 0, 0);
          ctx.restore();
          return;
        }
        if (!Number.isFinite(v)) return;
        const yTop = Y(v),
          yBase = Y(Math.max(y0, 0));
        ctx.globalAlpha = faded ? 0.35 : 1;
        ctx.fillStyle = color;
        ctx.fillRect(x, Math.min(yTop, yBase), w, Math.max(1, Math.abs(yBase - yTop)));
        ctx.globalAlpha = 1;
        if (k === hl) {
          ctx.strokeStyle = INK;
          ctx.lineWidth = 1.5;
          ctx.strokeRect(x + 0.75, Math.min(yTop, yBase) + 0.75, w - 1.5, Math.max(1, Math.abs(yBase - yTop)) - 1.5);
        }
        // value label: above the bar, or written up it when the bar is narrow
        const text = valueFmt(v);
        ctx.font = FONT;
        ctx.fillStyle = faded ? MUTED : INK;
        if (w >= labelW) {
          ctx.textAlign = 'center';
          ctx.textBaseline = 'bottom';
          const inside = yTop - 13 < top;
          if (inside) ctx.fillStyle = faded ? INK : '#fff';
          ctx.fillText(text, x + w / 2, inside ? yTop + 14 : yTop - 2);
        } else if (w >= 7) {
          ctx.font = w >= 9 ? FONT : SMALL_FONT;
          const tw = ctx.measureText(text).width;
          const inside = yBase - yTop > tw + 8;
          ctx.save();
          ctx.translate(x + w / 2, inside ? yTop + 4 : yTop - 3);
          ctx.rotate(-Math.PI / 2);
          ctx.textBaseline = 'middle';
          ctx.textAlign = inside ? 'right' : 'left';
          ctx.fillStyle = inside && !faded ? '#fff' : faded ? MUTED : INK;
          ctx.fillText(text, 0, 0);
          ctx.restore();
        }
      });
    }

    // reference lines
    for (const h of spec.hlines ?? []) {
      const y = Math.round(Y(h.y)) + 0.5;
      ctx.save();
      ctx.setLineDash([4, 4]);
      ctx.strokeStyle = HLINE;
      ctx.lineWidth = 1.2;
      ctx.beginPath();
      ctx.moveTo(left, y);
      ctx.lineTo(left + plotW, y);
      ctx.stroke();
      ctx.restore();
    }
    ctx.strokeStyle = MUTED;
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(left - 0.5, top);
    ctx.lineTo(left - 0.5, top + plotH + 0.5);
    ctx.lineTo(left + plotW, top + plotH + 0.5);
    ctx.stroke();

    // legend
    ctx.font = FONT;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'middle';
    legend.rows.forEach((rowItems, r) => {
      let x = legend.x0;
      const y = 8 + r * 16 + 4;
      for (const it of rowItems) {
        if (it.isHline) {
          ctx.save();
          ctx.setLineDash([4, 4]);
          ctx.strokeStyle = it.color;
          ctx.lineWidth = 1.2;
          ctx.beginPath();
          ctx.moveTo(x, y);
          ctx.lineTo(x + 16, y);
          ctx.stroke();
          ctx.restore();
        } else {
          ctx.globalAlpha = hl !== undefined && hl !== null && hl >= 0 && it.k !== hl ? 0.35 : 1;
          ctx.fillStyle = it.color;
          ctx.fillRect(x, y - 5, 16, 10);
          ctx.globalAlpha = 1;
          if (it.k === hl) {
            ctx.strokeStyle = INK;
            ctx.lineWidth = 1.5;
            ctx.strokeRect(x + 0.75, y - 4.25, 14.5, 8.5);
          }
        }
        ctx.fillStyle = INK;
        ctx.font = it.k !== undefined && it.k === hl ? `bold ${FONT}` : FONT;
        ctx.fillText(it.label, x + 22, y);
        x += it.w;
      }
    });
    ctx.font = FONT;

    // axis labels
    drawXLabel(ctx, xLines, left + plotW / 2, height - 3);
    drawRotatedLabel(ctx, yLines, 9, top + plotH / 2, height);

    canvas._bars = { left, top, plotH, gw, bw, n, slot };
  };
  register(canvas, draw);
  describe(canvas, spec.summary ?? describeBars(spec, valueFmt));
  readout(canvas, (event) => {
    const b = canvas._bars;
    if (!b) return null;
    const rect = canvas.getBoundingClientRect();
    const x = event.clientX - rect.left,
      y = event.clientY - rect.top;
    const g = Math.floor((x - b.left) / b.gw);
    if (g < 0 || g >= groups.length || y < b.top || y > b.top + b.plotH) return null;
    const k = Math.floor((x - b.slot(g, 0)) / b.bw);
    if (k < 0 || k >= b.n) return null;
    const v = series[k].values[g];
    if (v === null || v === undefined) return null;
    return spec.tooltip ? spec.tooltip(g, k) : `${series[k].label}, ${oneLine(groups[g])}: ${typeof v === 'object' ? v.text : valueFmt(v)}`;
  });
}
