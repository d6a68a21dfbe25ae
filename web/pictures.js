// Section 2, "Inside the model": the pictures of the current model and text.
import { h, fill, setOptions, plotBox, plural } from './dom.js';
import { heatmap, linePlot } from './plots.js';
import { displayToken } from './tokenizer.js';
import { gaussian, alibiSlopes, slopeLabel } from './experiments.js';

const NOT_ADDED = {
  none: "Position 'none' adds nothing, rotates nothing, biases nothing: the encoder cannot see word order. Try the first experiment below, or swap to another plugin.",
};

// A figure card: title, optional controls, then either a note or plot + caption.
function card(title, controls = null) {
  const note = h('p', { class: 'note', hidden: true });
  const caption = h('p', { class: 'caption' });
  const { box, canvas } = plotBox(title);
  const el = h('article', { class: 'card figure' }, h('h3', {}, title), controls, note, box, caption);
  return { el, note, caption, box, canvas, controls };
}

function showNote(c, text) {
  c.note.textContent = text;
  for (const [el, hidden] of [
    [c.note, false],
    [c.box, true],
    [c.caption, true],
    [c.controls, true],
  ])
    if (el) el.hidden = hidden;
}

function showPlot(c) {
  for (const [el, hidden] of [
    [c.note, true],
    [c.box, false],
    [c.caption, false],
    [c.controls, false],
  ])
    if (el) el.hidden = hidden;
}

export function mountPictures(root, app) {
  const grid = root.querySelector('#pictures-grid');

  // One card for what the position plugin does: its table (sinusoidal,
  // learned), its bias matrix (ALiBi) or its score against offset (RoPE).
  const posTitle = h('h3', {}, 'The position plugin');
  const posCard = card('Position vectors added to the embeddings');
  posCard.el.id = 'fig-positions';
  const alibiHead = h('select', { id: 'alibi-head' });
  const alibiCard = card('ALiBi bias matrix', h('div', { class: 'row' }, h('label', {}, 'Head', alibiHead)));
  alibiCard.el.id = 'fig-alibi';
  const ropeCard = card('RoPE: q·k/√d_k against the offset n − m');
  ropeCard.el.id = 'fig-rope';
  const noneNote = h('p', { class: 'note', id: 'fig-none' });
  const views = [posCard, alibiCard, ropeCard];
  for (const v of views) {
    v.el.className = 'view';
    v.el.querySelector('h3').remove();
  }
  const positionFigure = h(
    'article',
    { class: 'card figure', id: 'fig-position' },
    posTitle,
    views.map((v) => v.el),
    noneNote,
  );

  const attnLayer = h('select', { id: 'attn-layer' }),
    attnHead = h('select', { id: 'attn-head' });
  const attnCard = card('Attention probabilities', h('div', { class: 'row' }, h('label', {}, 'Layer', attnLayer), h('label', {}, 'Head', attnHead)));
  attnCard.el.id = 'fig-attention';

  const outCard = card('Output hidden states');
  outCard.el.id = 'fig-output';

  const normCard = card('Residual-stream norm per layer');
  normCard.el.id = 'fig-norms';

  fill(grid, positionFigure, attnCard.el, outCard.el, normCard.el);

  /** Shows the view of the current position plugin (or the note for 'none' and others). */
  function showPositionView(position) {
    const view = { sinusoidal: posCard, learned: posCard, alibi: alibiCard, rope: ropeCard }[position];
    for (const v of views) v.el.hidden = v !== view;
    noneNote.hidden = !!view;
    posTitle.textContent =
      {
        sinusoidal: 'Position: the sinusoidal table added to the embeddings',
        learned: 'Position: the learned table added to the embeddings',
        alibi: 'Position: the ALiBi bias matrix',
        rope: 'Position: RoPE’s q·k/√d_k against the offset n − m',
      }[position] ?? `Position: '${position}'`;
    if (!view) noneNote.textContent = NOT_ADDED[position] ?? `Position '${position}' has no picture here.`;
  }

  let state = null;
  // through the app's queue: never interleaved with a run, errors shown in the page
  const redraw = (draw) => () => app.enqueue(() => state && draw(state));
  attnLayer.addEventListener('change', redraw(drawAttention));
  attnHead.addEventListener('change', redraw(drawAttention));
  alibiHead.addEventListener('change', redraw(drawAlibi));

  function labels(s) {
    return s.tokens.map(displayToken);
  }

  function drawPositions(s) {
    const c = s.config;
    if (c.position !== 'sinusoidal' && c.position !== 'learned') return;
    const T = s.ids.length;
    const rows = c.position === 'learned' ? Math.min(c.maxLen, 128) : Math.min(128, Math.max(T, 48));
    const pv = s.encoder.positionVectors(rows);
    showPlot(posCard);
    heatmap(posCard.canvas, {
      data: pv.data,
      rows,
      cols: c.dModel,
      scale: 'diverging',
      xLabel: 'dimension',
      yLabel: 'position',
      colorLabel: 'value added',
      rowHeight: Math.max(3, Math.min(8, 360 / rows)),
      maxHeight: 380,
    });
    posCard.caption.textContent =
      c.position === 'sinusoidal'
        ? `PE[t, 2i] = sin(t / ${c.positionOptions.base}^(2i/${c.dModel})), PE[t, 2i+1] = cos(…): the left pairs turn fast, the right ones slowly. Rows 0–${rows - 1}; your text uses rows 0–${T - 1}.`
        : `embed.positions: ${plural(c.maxLen, 'row')} (maxLen) of untrained N(0, 1) numbers${c.maxLen > rows ? `, first ${rows} shown` : ''}. Position ${c.maxLen} has no row: a longer text is refused.`;
  }

  function drawAttention(s) {
    const c = s.config;
    if (!s.result) return showNote(attnCard, 'No result to show (see the error above).');
    if (c.layers === 0) return showNote(attnCard, 'This model has no layers, so no attention.');
    const layer = Number(attnLayer.value) || 0,
      head = Number(attnHead.value) || 0;
    const T = s.ids.length;
    const a = s.result.attentions[layer];
    const off = head * T * T;
    showPlot(attnCard);
    const tl = labels(s);
    heatmap(attnCard.canvas, {
      data: a.data.subarray(off, off + T * T),
      rows: T,
      cols: T,
      scale: 'sequential',
      range: [0, 1],
      square: true,
      xLabel: 'key (attended to)',
      yLabel: 'query',
      colorLabel: 'attention probability',
      xTickLabels: tl,
      yTickLabels: tl,
      maxHeight: 400,
      valueLabel: (r, col, v) => `query ${tl[r]} (${r}) → key ${tl[col]} (${col}): ${v.toFixed(4)}`,
    });
    attnCard.caption.textContent = `Layer ${layer}, head ${head} of ${c.heads}: row i is how token i spreads its attention over the tokens (each row sums to 1).`;
  }

  function drawAlibi(s) {
    const c = s.config;
    if (c.position !== 'alibi') return;
    const head = Math.min(Number(alibiHead.value) || 0, c.heads - 1);
    const L = Math.min(48, Math.max(8, s.ids.length));
    const scores = s.encoder.positionScores({ length: L });
    const off = head * L * L;
    const slope = -scores.data[off + 1];
    showPlot(alibiCard);
    heatmap(alibiCard.canvas, {
      data: scores.data.subarray(off, off + L * L),
      rows: L,
      cols: L,
      scale: 'diverging',
      square: true,
      xLabel: 'key position j',
      yLabel: 'query position i',
      colorLabel: 'bias added to the score',
      maxHeight: 360,
    });
    const want = alibiSlopes(c.heads)[head];
    alibiCard.caption.textContent = `Head ${head} of ${c.heads}: slope ${slopeLabel(slope)} = ${slope.toPrecision(4)} (the paper's formula gives ${slopeLabel(want)}); bias = −slope·|i − j|, added to q·k/√d_k before the softmax. Symmetric: left and right look alike.`;
  }

  function drawRope(s) {
    const c = s.config;
    if (c.position !== 'rope') return;
    const L = 65,
      m = 32;
    const rnd = gaussian(s.seed + 1);
    const q = Array.from({ length: c.dModel }, rnd),
      k = Array.from({ length: c.dModel }, rnd);
    const S = s.encoder.positionScores({ q, k, length: L });
    const heads = Math.min(c.heads, 8);
    const offsets = Array.from({ length: L }, (_, n) => n - m);
    showPlot(ropeCard);
    linePlot(ropeCard.canvas, {
      series: Array.from({ length: heads }, (_, hd) => ({
        label: `head ${hd}`,
        x: offsets,
        y: offsets.map((_, n) => S.data[(hd * L + m) * L + n]),
      })),
      xLabel: 'offset n − m (key position − query position)',
      xLabelShort: 'offset n − m',
      yLabel: 'score q·k/√d_k',
      height: 260,
      integerX: true,
    });
    ropeCard.caption.textContent = `q and k: the same random vectors at every position (seed ${s.seed}), rotated by RoPE (${c.positionOptions.style}, base ${c.positionOptions.base}); query at m = ${m}. Offset 0 scores q·k/√d_k; the farther apart, the more the pairs have turned${c.heads > heads ? `; first ${heads} heads shown` : ''}.`;
  }

  function drawOutput(s) {
    const c = s.config;
    if (!s.result) return showNote(outCard, 'No result to show (see the error above).');
    const T = s.ids.length;
    showPlot(outCard);
    heatmap(outCard.canvas, {
      data: s.result.data,
      rows: T,
      cols: c.dModel,
      scale: 'diverging',
      xLabel: 'dimension',
      yLabel: 'token',
      colorLabel: 'value',
      yTickLabels: labels(s),
      rowHeight: Math.max(6, Math.min(22, 320 / T)),
      maxHeight: 400,
    });
    outCard.caption.textContent = `The encoder's output: one ${c.dModel}-dimensional vector per token, ${c.finalNorm ? `after the final ${c.norm}` : 'with no final norm'}.`;
  }

  function drawNorms(s) {
    const c = s.config;
    if (!s.result) return showNote(normCard, 'No result to show (see the error above).');
    const T = s.ids.length,
      C = c.dModel;
    const tokenNorms = (data) =>
      Array.from({ length: T }, (_, t) => {
        let sum = 0;
        for (let i = 0; i < C; i++) sum += data[t * C + i] ** 2;
        return Math.sqrt(sum);
      });
    const stages = [...s.result.hiddenStates.map((x) => tokenNorms(x.data)), tokenNorms(s.result.data)];
    const xs = stages.map((_, i) => i);
    const tickLabels = xs.map((i) => ({ value: i, label: i === 0 ? 'emb' : i === stages.length - 1 ? 'out' : String(i) }));
    const shown = Math.min(T, 24);
    const series = Array.from({ length: shown }, (_, t) => ({
      label: t === 0 ? `each token${T > shown ? ` (first ${shown})` : ''}` : undefined,
      x: xs,
      y: stages.map((st) => st[t]),
      color: '#b8c2cc',
      width: 1,
    }));
    series.push({ label: 'mean over tokens', x: xs, y: stages.map((st) => st.reduce((a, b) => a + b, 0) / T), color: '#1f77b4', width: 2.5, markers: true });
    showPlot(normCard);
    linePlot(normCard.canvas, {
      series,
      xTickLabels: tickLabels,
      xPad: true,
      hlines: [{ y: Math.sqrt(C), label: `√dModel = ${Math.sqrt(C).toFixed(2)}` }],
      xLabel: 'stream after: emb = embeddings, 1…L = layer, out = output',
      xLabelShort: 'emb, layer 1…L, out',
      yLabel: '‖x_t‖ (L2 norm)',
      height: 250,
    });
    normCard.caption.textContent =
      c.normPlacement === 'pre'
        ? `Pre-norm: the stream is a plain sum that is never normalised, so it drifts with depth; ${c.finalNorm ? `the final ${c.norm} brings the output back to about √dModel.` : 'there is no final norm, so the output keeps the drifted scale (the "missing final LayerNorm" bug).'}`
        : `Post-norm: every layer ends on a ${c.norm}, so after each layer the stream is back at about √dModel${c.finalNorm ? '; the final norm is a second normalisation' : ''}.`;
  }

  return {
    update(s) {
      state = s;
      if (!s.encoder) return;
      const c = s.config;
      setOptions(
        attnLayer,
        Array.from({ length: c.layers }, (_, i) => i),
        Array.from({ length: c.layers }, (_, i) => `${i}`),
      );
      setOptions(
        attnHead,
        Array.from({ length: c.heads }, (_, i) => i),
      );
      setOptions(
        alibiHead,
        Array.from({ length: c.heads }, (_, i) => i),
      );
      showPositionView(c.position);
      drawPositions(s);
      drawAttention(s);
      drawAlibi(s);
      drawRope(s);
      drawOutput(s);
      drawNorms(s);
    },
  };
}
