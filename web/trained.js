// Section 5, "Trained models": the 15 shipped models (models/index.json: task x
// position plugin), loaded from models/<task>-<position>.safetensors with the
// package's loadModel and run on a sequence of symbols typed or drawn here.
// Shows each position's prediction against the right answer (models/tasks.js),
// the attention maps, the ablation (the same weights with position 'none'),
// RoPE context extension (positionOptions.scaling on the same weights), and
// the accuracy table of models/results.json as charts.
//
// Self-contained: it takes nothing from the page's current model; every wasm
// call runs in the app's queue (app.enqueue / app.later), so app.whenIdle()
// covers it. For tests: app.trained (window.swapformerDemo.trained).
import { h, fill, setOptions, plotBox } from './dom.js';
import { heatmap, barChart } from './plots.js';
import { random } from '../models/tasks.js';

const MODELS = new URL('../models/', import.meta.url);
const POSITIONS = ['sinusoidal', 'learned', 'rope', 'alibi', 'none'];
const SCALINGS = ['none', 'linear', 'ntk', 'yarn'];
const COLOURS = { sinusoidal: '#1f77b4', learned: '#ff7f0e', rope: '#2ca02c', alibi: '#9467bd', none: '#7f7f7f' };
const SCALING_COLOURS = { none: '#2ca02c', linear: '#8c564b', ntk: '#e377c2', yarn: '#17becf' };
const MIN_T = 3;
const TYPING_MS = 150;
const SLIDER_MS = 60;

const POSITION_NOTES = {
  sinusoidal: 'a fixed sin/cos vector added at each absolute position',
  learned: 'a trained vector per absolute position: rows 0–31 only (maxLen 32)',
  rope: 'rotates q and k by their positions, so scores depend on the offset j − i',
  alibi: 'adds −slope·|i − j| to the scores: a distance penalty, no vectors',
  none: 'no positions at all: the model sees a bag of symbols',
};

const ATTENTION_NOTES = {
  reverse: 'Reverse: output t must read input n + 1 − t. In layer 1 look for the anti-diagonal (top right to bottom left).',
  sort: 'Sort: the answer at t is the t-th smallest symbol, which depends on every symbol, so the maps are spread out rather than diagonal.',
  shift: 'Shift: output t reads input t − 1. In layer 1 look for the diagonal just left of the main one: the same offset everywhere.',
};

const CHART_LEADS = {
  reverse: 'Reverse needs to know where the end is: nothing extrapolates it well',
  sort: 'Sort counts ranks from the start: nothing extrapolates it well',
  shift: 'Shift is one step to the left at every offset, a purely relative rule: RoPE extrapolates it',
};

const pct = (x, digits = 0) => `${(100 * x).toFixed(digits)}%`;
const panelError = (code, message) => Object.assign(new Error(message), { code });

async function fetchOk(url) {
  const r = await fetch(url);
  if (!r.ok) throw panelError('NOT_FOUND', `${url.pathname ?? url}: HTTP ${r.status}`);
  return r;
}

export function mountTrained(root, app) {
  const body = root.querySelector('#trained-body');
  const { api } = app;

  // ---------------------------------------------------------------- controls
  const taskSel = h('select', { id: 'trained-task' });
  const posSel = h('select', { id: 'trained-position' });
  const ablate = h('input', { id: 'trained-ablate', type: 'checkbox' });
  const scalingSel = h('select', { id: 'trained-scaling' });
  const scalingLabel = h('label', { class: 'scaling' }, 'RoPE scaling', scalingSel);
  const taskNote = h('p', { class: 'caption', id: 'trained-task-note' });
  const modelInfo = h('p', { class: 'caption', id: 'trained-model-info' });
  const variantNote = h('p', { class: 'lesson', id: 'trained-variant-note' });

  const text = h('input', {
    id: 'trained-text', type: 'text', class: 'mono', spellcheck: false, autocomplete: 'off', autocapitalize: 'off',
    'aria-describedby': 'trained-input-msg', 'aria-label': 'Input symbols (a to p)',
  });
  const randomBtn = h('button', { id: 'trained-random', type: 'button', class: 'secondary' }, 'random');
  const inputMsg = h('p', { class: 'input-msg', id: 'trained-input-msg', role: 'status', hidden: true });
  const examples = h('div', { class: 'examples', id: 'trained-examples' });
  const pytorchLine = h('p', { class: 'caption', id: 'trained-pytorch', hidden: true });
  const slider = h('input', { id: 'trained-length', type: 'range', step: '1' });
  const lengthText = h('span', { id: 'trained-length-text' });
  const lengthBadge = h('span', { class: 'len-badge', id: 'trained-length-badge' });
  const scale = h('div', { class: 'len-scale', 'aria-hidden': 'true' });

  const error = h('div', { class: 'error', id: 'trained-error', role: 'alert', hidden: true });
  const accuracyLine = h('p', { class: 'trained-accuracy', id: 'trained-accuracy', role: 'status' });
  const tokenGrid = h('div', { class: 'tgrid', id: 'trained-tokens', 'aria-label': 'Input, prediction and right answer at each position' });
  const results = h('div', { class: 'trained-results' }, accuracyLine, tokenGrid);

  const layerSel = h('select', { id: 'trained-layer' }), headSel = h('select', { id: 'trained-head' });
  const attn = plotBox('Attention probabilities of the trained model');
  const attnNote = h('p', { class: 'note', hidden: true });
  const attnCaption = h('p', { class: 'caption', id: 'trained-attention-caption' });

  const chart = plotBox('Accuracy against input length, per position plugin');
  chart.canvas.id = 'trained-chart';
  const chartLine = h('p', { class: 'lesson', id: 'trained-chart-line' });
  const ropeChart = plotBox('RoPE context extension: accuracy at 2x and 4x');
  ropeChart.canvas.id = 'trained-rope-chart';
  const ropeLine = h('p', { class: 'lesson', id: 'trained-rope-line' });

  fill(body,
    h('div', { class: 'trained-grid' },
      h('article', { class: 'card', id: 'trained-run' },
        h('h3', {}, 'Run a trained model'),
        h('div', { class: 'trained-controls' },
          h('label', {}, 'Task', taskSel),
          h('label', {}, 'Position plugin', posSel),
          scalingLabel),
        taskNote,
        h('label', { class: 'check ablate' }, ablate,
          h('span', {}, h('strong', {}, 'Ablate:'), ' run the same weights with position ', h('code', {}, 'none'))),
        modelInfo,
        h('div', { class: 'seq-head' }, h('label', { for: 'trained-text' }, 'Input symbols ', h('span', { class: 'muted' }, '(a–p; spaces are ignored)'))),
        h('div', { class: 'seq-input' }, text, randomBtn),
        inputMsg,
        examples,
        h('div', { class: 'len' },
          h('label', { for: 'trained-length', class: 'len-label' }, lengthText, ' ', lengthBadge),
          h('div', { class: 'len-track' }, slider, scale)),
        variantNote,
        error,
        results,
        pytorchLine),
      h('article', { class: 'card', id: 'trained-attention' },
        h('h3', {}, 'Attention of this input'),
        h('div', { class: 'row' }, h('label', {}, 'Layer', layerSel), h('label', {}, 'Head', headSel)),
        attnNote, attn.box, attnCaption)),
    h('div', { class: 'trained-grid charts' },
      h('article', { class: 'card', id: 'trained-accuracy-chart' },
        h('h3', { id: 'trained-chart-title' }, 'Accuracy against length'),
        chart.box, chartLine),
      h('article', { class: 'card', id: 'trained-rope-card' },
        h('h3', { id: 'trained-rope-title' }, 'RoPE context extension on the same weights'),
        ropeChart.box, ropeLine)));

  // ---------------------------------------------------------------- data and caches
  let tasks = null, index = null, table = null; // models/tasks.js, index.json, results.json
  let trainT = 32, maxT = 128, symbols = 'abcdefghijklmnop';
  let started = false, loadFailed = false;
  let randomSeed = 1;
  const bytes = new Map(); // file -> Promise<Uint8Array>
  const encoders = new Map(); // file -> Encoder (the trained model)
  const ablated = new Map(); // file -> Encoder (same weights, position 'none')
  let scaled = null; // {key, encoder}: the last RoPE scaling variant
  let last = null; // the last run: {sel, ids, result, error}
  const out = { lastPrediction: null };

  const modelOf = (task, position) => index.models.find((m) => m.task === task && m.position === position);
  const rowOf = (name) => table.rows.find((r) => r.name === name);

  function fetchBytes(file) {
    if (!bytes.has(file)) {
      const p = fetchOk(new URL(file, MODELS)).then((r) => r.arrayBuffer()).then((b) => new Uint8Array(b));
      p.catch(() => bytes.delete(file));
      bytes.set(file, p);
    }
    return bytes.get(file);
  }

  async function trainedEncoder(file) {
    if (!encoders.has(file)) encoders.set(file, await api.loadModel(await fetchBytes(file)));
    return encoders.get(file);
  }

  /** The encoder a selection runs: the trained one, its ablation, or a RoPE scaling of it. */
  async function encoderFor(sel) {
    const base = await trainedEncoder(sel.model.file);
    if (sel.ablate) {
      if (base.config.position === 'none') return base;
      if (!ablated.has(sel.model.file)) {
        const weights = base.getWeights();
        delete weights['embed.positions'];
        ablated.set(sel.model.file, await api.createEncoder({ ...base.config, position: 'none', positionOptions: {} }, { weights }));
      }
      return ablated.get(sel.model.file);
    }
    if (sel.scaling) {
      const key = JSON.stringify([sel.model.file, sel.scaling]);
      if (scaled?.key !== key) {
        scaled?.encoder.dispose();
        scaled = null;
        const encoder = await api.createEncoder(
          { ...base.config, positionOptions: { ...base.config.positionOptions, scaling: sel.scaling } },
          { weights: base.getWeights() });
        scaled = { key, encoder };
      }
      return scaled.encoder;
    }
    return base;
  }

  // ---------------------------------------------------------------- the input

  /** The symbols of the text box, or {error} with a message for the page. */
  function parseInput(raw) {
    const chars = Array.from(raw.replace(/\s+/g, ''));
    const bad = [...new Set(chars.filter((c) => !symbols.includes(c)))];
    if (bad.length) {
      const list = bad.slice(0, 5).map((c) => `'${c}'`).join(', ') + (bad.length > 5 ? ', …' : '');
      const upper = bad.some((c) => symbols.includes(c.toLowerCase()));
      return { error: `${list} ${bad.length === 1 ? 'is not a symbol' : 'are not symbols'} of these models: use the letters ${symbols[0]}–${symbols.at(-1)}${upper ? ' (lower case)' : ''}.` };
    }
    if (!chars.length) return { error: `Type at least one symbol (${symbols[0]}–${symbols.at(-1)}), or press random.` };
    if (chars.length + 2 > maxT) return { error: `${chars.length} symbols is more than this panel runs: at most ${maxT - 2} (T = ${maxT} tokens with the markers, 4× the training length).` };
    return { symbols: chars.join('') };
  }

  function randomSymbols(n, seed) {
    const rnd = random(seed * 7919 + 13);
    return Array.from({ length: n }, () => symbols[Math.floor(rnd() * symbols.length)]).join('');
  }

  /** Slider moved: cut the text, or extend it with random symbols, to T - 2 symbols. */
  function resizeText(T) {
    const parsed = parseInput(text.value);
    const current = parsed.symbols ?? '';
    const n = T - 2;
    text.value = current.length >= n ? current.slice(0, n) : current + randomSymbols(n - current.length, randomSeed++);
  }

  function showLength(T) {
    const n = T - 2;
    lengthText.textContent = `Length T = ${T} tokens (${n} symbol${n === 1 ? '' : 's'} + ^ $)`;
    const ratio = T / trainT;
    const inside = T >= index.trainLengths.min && T <= trainT;
    lengthBadge.className = `len-badge ${inside ? 'in' : T > trainT ? 'out' : 'short'}`;
    lengthBadge.textContent = inside ? `within the training lengths ${index.trainLengths.min}–${trainT}`
      : T > trainT ? `${ratio.toFixed(ratio < 10 ? 2 : 1).replace(/\.?0+$/, '')}× the longest training length` : `shorter than any training input (${index.trainLengths.min}–${trainT})`;
    slider.classList.toggle('past', T > trainT);
    slider.setAttribute('aria-valuetext', `${T} tokens, ${lengthBadge.textContent}`);
  }

  function buildScale() {
    // marks under the slider: the training band and 1x / 2x / 4x
    const at = (T) => (T - MIN_T) / (maxT - MIN_T);
    const pos = (f) => `calc(8px + ${f.toFixed(4)} * (100% - 16px))`;
    const lo = index.trainLengths.min;
    fill(scale,
      h('span', { class: 'band', style: `left:${pos(at(lo))};width:calc(${(at(trainT) - at(lo)).toFixed(4)} * (100% - 16px))`, title: `training lengths ${lo}–${trainT}` }),
      h('span', { class: 'mark', style: `left:${pos(at(lo))}` }, String(lo)),
      h('span', { class: 'mark strong', style: `left:${pos(at(trainT))}` }, `${trainT} (1×)`),
      h('span', { class: 'mark', style: `left:${pos(at(2 * trainT))}` }, `${2 * trainT} (2×)`),
      h('span', { class: 'mark end', style: `left:${pos(1)}` }, `${maxT} (4×)`));
  }

  /** The model's worked examples from models/index.json (inputs the training run also predicted). */
  function showExamples(model) {
    const list = (model?.examples ?? []).map((e) => ({ ...e, symbols: e.input.replace(/^\^|\$$/g, '') }));
    const chip = (e) => h('button', {
      type: 'button', class: 'chip', title: `T = ${e.length}: ${e.symbols}`,
      onclick: () => { text.value = e.symbols; app.enqueue(refresh); },
    }, e.symbols.length > 10 ? `${e.symbols.slice(0, 6)}… (T = ${e.length})` : e.symbols);
    fill(examples, list.length ? [h('span', { class: 'muted' }, 'Examples:'), list.map(chip)] : null);
    examples.hidden = !list.length;
  }

  /** When the input is one of the model's examples, what PyTorch predicted for it in training. */
  function showPytorch(sel, pred) {
    const e = (sel.model.examples ?? []).find((x) => x.input === `^${sel.parsed.symbols}$`);
    if (!e || !pred || sel.ablate || sel.scaling) { pytorchLine.hidden = true; return; }
    const mine = tasks.decode(pred.slice(1, -1), index.vocab);
    const same = mine === e.pytorch;
    fill(pytorchLine, `PyTorch, at training time, predicted “${e.pytorch}” for this input: `,
      h('span', { class: same ? 'ok' : 'bad' }, same ? '✓ the same here' : `✗ this page says “${mine}”`));
    pytorchLine.hidden = false;
  }

  // ---------------------------------------------------------------- a run

  function readSelection() {
    const task = taskSel.value, position = posSel.value;
    const model = modelOf(task, position);
    const parsed = parseInput(text.value);
    const T = parsed.symbols ? parsed.symbols.length + 2 : null;
    const scalingType = position === 'rope' && !ablate.checked ? scalingSel.value : 'none';
    let scaling = null;
    if (scalingType !== 'none' && T) {
      const factor = Math.max(1, T / trainT);
      scaling = scalingType === 'yarn' ? { type: 'yarn', factor, originalMaxLen: trainT } : { type: scalingType, factor };
    }
    return { task, position, model, parsed, T, ablate: ablate.checked, scalingType, scaling };
  }

  function describeVariant(sel) {
    if (sel.ablate) return sel.position === 'none' ? 'trained without positions (ablation changes nothing)' : `ablated: position '${sel.position}' → 'none'`;
    if (sel.scaling) return `RoPE ${sel.scalingType} scaling, factor ${sel.scaling.factor.toFixed(2)}`;
    return 'as trained';
  }

  function showVariantNote(sel) {
    const T = sel.T;
    let note;
    if (sel.ablate) {
      note = sel.position === 'none'
        ? 'This model was trained with no positions, so there is nothing to remove: the ablation of the others looks like this.'
        : 'Ablation is a debugging tool: the same weights with the positions taken out. If accuracy collapses, the model was using position; attention can no longer tell one place from another.';
    } else if (sel.position === 'rope') {
      const f = sel.scaling ? sel.scaling.factor.toFixed(2) : '';
      note = sel.scaling && T <= trainT
        ? `Context extension: factor = max(1, T/${trainT}) = 1 at this length, so ${sel.scalingType} scaling changes nothing. Move the slider past ${trainT}.`
        : sel.scaling
          ? {
            linear: `Context extension by position interpolation: every position is divided by factor = T/${trainT} = ${f}, so the angles stay in the trained range, but neighbours move closer together.`,
            ntk: `Context extension, NTK-aware: the base grows with factor = T/${trainT} = ${f}, stretching the slow rotations while keeping the fast ones that tell neighbours apart.`,
            yarn: `Context extension with YaRN (originalMaxLen ${trainT}): factor = T/${trainT} = ${f} stretches only the slow rotations, leaves the fast ones as trained, and sharpens the attention a little (mscale).`,
          }[sel.scalingType] + ' Same weights, no retraining.'
          : T > trainT
          ? `RoPE sees only offsets j − i: a rule that is the same at every offset (shift) carries on past ${trainT}; one that needs the end's absolute place (reverse, sort) meets offsets it never saw. Try a scaling (context extension).`
          : `RoPE sees only offsets j − i. Move the slider past ${trainT} to see what extrapolates, then try a scaling (context extension).`;
    } else if (sel.position === 'learned') {
      note = `A learned table has one trained row per position, ${trainT} rows (maxLen): past that there is no vector to add, so swapformer refuses rather than invent one.`;
    } else if (sel.position === 'alibi') {
      note = 'ALiBi penalises distance on the scores; it runs at any length, and its recency bias degrades gracefully past the training lengths.';
    } else if (sel.position === 'sinusoidal') {
      note = `Sinusoidal vectors exist for any position, but past ${trainT} the model meets vectors it was never trained on.`;
    } else {
      note = 'No positions: the model cannot tell where a symbol stands, only which symbols there are (about chance for these tasks).';
    }
    variantNote.textContent = note;
  }

  function showModelInfo(sel, enc) {
    const m = sel.model, c = m.config, r = rowOf(m.name);
    const cell = (a) => (!a ? '—' : a.refused ? 'refused' : pct(a.token));
    const measured = r ? [`1× ${cell(r.accuracy[trainT])}`, `2× ${cell(r.accuracy[2 * trainT])}`, `4× ${cell(r.accuracy[4 * trainT])}`, `ablated ${cell(r.ablatedToNone)}`].join(' · ') : '';
    fill(modelInfo,
      h('code', {}, m.file), ` · ${m.parameters.toLocaleString('en-US')} parameters · ${c.layers} layers, dModel ${c.dModel}, ${c.heads} heads, ${c.normPlacement}-${c.norm}, ${c.activation} · `,
      `trained ${m.training.steps} steps on lengths ${m.training.lengths[0]}–${m.training.lengths[1]} (final loss ${m.training.lastLoss}) · `,
      h('span', { title: `models/results.json: per-token accuracy on ${table.count} random inputs` }, `measured: ${measured}`),
      enc ? h('span', { class: 'muted' }, ` · running: ${describeVariant(sel)}`) : null);
  }

  function showError(e) {
    fill(error, h('span', { class: 'code' }, e.code ?? 'ERROR'), e.message,
      e.code === 'SEQUENCE_TOO_LONG'
        ? h('span', { class: 'error-more' }, ` The learned table has rows 0–${trainT - 1} only. Shorten the input, tick Ablate (no table), or choose a relative plugin.`)
        : null);
    error.hidden = false;
    error.dataset.code = e.code ?? 'ERROR';
  }

  function clearError() {
    error.hidden = true;
    delete error.dataset.code;
  }

  function setStale(stale) {
    results.classList.toggle('stale', stale);
    attn.box.classList.toggle('stale', stale);
  }

  const tokenText = (id) => index.vocab[id] ?? '?';

  function showTokens(ids, pred, want, probs) {
    const T = ids.length;
    const key = h('div', { class: 'tcell key', 'aria-hidden': 'true' },
      h('span', { class: 't' }, 't'), h('span', { class: 'in' }, 'input'), h('span', { class: 'out' }, 'model'), h('span', { class: 'want' }, 'answer'));
    const cells = Array.from(ids, (id, t) => {
      const marker = t === 0 || t === T - 1;
      const p = pred ? pred[t] : null;
      const ok = p !== null && p === want[t];
      const cls = `tcell${marker ? ' marker' : ''}${p === null ? '' : ok ? ' right' : ' wrong'}`;
      const title = `position ${t}: input '${tokenText(id)}'`
        + (p === null ? '' : `, model '${tokenText(p)}'${probs ? ` (p = ${probs[t].toFixed(3)})` : ''}`)
        + `, right answer '${tokenText(want[t])}'${marker ? ' (a marker: not scored)' : p === null ? '' : ok ? ': right' : ': wrong'}`;
      return h('div', { class: cls, title, dataset: { t: String(t) } },
        h('span', { class: 't' }, String(t)),
        h('span', { class: 'in' }, tokenText(id)),
        h('span', { class: 'out' }, p === null ? '·' : tokenText(p)),
        h('span', { class: 'want' }, tokenText(want[t])));
    });
    fill(tokenGrid, key, cells);
  }

  function drawAttention() {
    if (!last?.result) {
      attn.box.hidden = true;
      attnCaption.hidden = true;
      attnNote.hidden = false;
      attnNote.textContent = last?.error ? `No attention to show: the model refused this input (${last.error.code}).` : 'No attention to show yet.';
      return;
    }
    const { result, ids, sel } = last;
    const T = ids.length, layer = Number(layerSel.value) || 0, head = Number(headSel.value) || 0;
    const heads = result.attentions[layer].shape[1];
    const off = head * T * T;
    const labels = Array.from(ids, tokenText);
    attnNote.hidden = true;
    attn.box.hidden = false;
    attnCaption.hidden = false;
    heatmap(attn.canvas, {
      data: result.attentions[layer].data.subarray(off, off + T * T), rows: T, cols: T, scale: 'sequential', range: [0, 1], square: true,
      xLabel: 'key (attended to)', yLabel: 'query', colorLabel: 'attention probability',
      xTickLabels: labels, yTickLabels: labels, maxHeight: 420,
      valueLabel: (r, c, v) => `query ${labels[r]} (${r}) → key ${labels[c]} (${c}): ${v.toFixed(4)}`,
    });
    attnCaption.textContent = `Layer ${layer}, head ${head} of ${heads}, ${sel.model.name} ${describeVariant(sel)}: row i is how position i spreads its attention (each row sums to 1). `
      + (sel.ablate && sel.position !== 'none' ? 'With the positions gone, equal symbols get equal rows wherever they stand.' : ATTENTION_NOTES[sel.task]);
  }

  async function refresh() {
    if (!index) return;
    const sel = readSelection();
    scalingLabel.hidden = sel.position !== 'rope';
    scalingSel.disabled = sel.ablate;
    taskNote.textContent = `${sel.task}: ${index.tasks[sel.task]} · ${sel.position}: ${POSITION_NOTES[sel.position] ?? ''}.`;
    drawCharts(sel);
    showExamples(sel.model);
    if (!sel.model) {
      showError(panelError('NOT_FOUND', `no model for ${sel.task} with position '${sel.position}' in models/index.json`));
      return;
    }
    if (sel.parsed.error) {
      inputMsg.textContent = `${sel.parsed.error}${last ? ' The results below are for the last valid input.' : ''}`;
      inputMsg.hidden = false;
      text.setAttribute('aria-invalid', 'true');
      setStale(true);
      showModelInfo(sel, null);
      out.lastPrediction = {
        task: sel.task, position: sel.position, model: sel.model.name, file: sel.model.file, ablated: sel.ablate,
        text: text.value, predicted: null, error: null, inputError: sel.parsed.error,
      };
      return;
    }
    inputMsg.hidden = true;
    text.removeAttribute('aria-invalid');
    setStale(false);
    slider.value = String(Math.min(maxT, sel.T));
    showLength(sel.T);
    showVariantNote(sel);

    let enc;
    try {
      enc = await encoderFor(sel);
    } catch (e) {
      showModelInfo(sel, null);
      showError(e.code ? e : panelError('ERROR', e.message));
      last = { sel, ids: [], error: e };
      out.lastPrediction = { task: sel.task, position: sel.position, model: sel.model.name, error: { code: e.code ?? 'ERROR', message: e.message }, inputError: null };
      return;
    }
    showModelInfo(sel, enc);
    const ids = tasks.encode(sel.parsed.symbols, symbols);
    const want = tasks.target(sel.task, ids);
    let pred, result = null, err = null, probs = null;
    try {
      pred = enc.predict(ids);
      result = enc.forward(ids, { outputAttentions: true });
      const V = result.logits.shape[2];
      probs = Array.from(pred, (p, t) => {
        const row = result.logits.data.subarray(t * V, (t + 1) * V);
        let max = -Infinity, sum = 0;
        for (const v of row) max = Math.max(max, v);
        for (const v of row) sum += Math.exp(v - max);
        return Math.exp(row[p] - max) / sum;
      });
    } catch (e) {
      if (!(e instanceof api.SwapformerError)) throw e;
      err = e;
      pred = null;
      result = null;
    }
    last = { sel, ids, result, error: err };
    const s = pred ? tasks.score(sel.task, ids, pred) : null;
    out.lastPrediction = {
      task: sel.task, position: sel.position, model: sel.model.name, file: sel.model.file,
      ablated: sel.ablate, scaling: sel.scaling, variant: describeVariant(sel), config: enc.config,
      text: sel.parsed.symbols, T: ids.length, ids: Array.from(ids), target: Array.from(want),
      predicted: pred ? Array.from(pred) : null,
      right: s?.right ?? null, total: s?.total ?? ids.length - 2, accuracy: s ? s.right / s.total : null, allRight: s?.allRight ?? false,
      decoded: pred ? tasks.decode(pred, index.vocab) : null, error: err ? { code: err.code, message: err.message } : null, inputError: null,
    };
    if (err) {
      showError(err);
      fill(accuracyLine, h('span', { class: 'bad' }, 'No prediction: '), `the model refused this input (${err.code}).`);
    } else {
      clearError();
      const cls = s.right / s.total >= 0.95 ? 'ok' : s.right / s.total >= 0.5 ? 'meh' : 'bad';
      fill(accuracyLine,
        h('strong', { class: `big ${cls}`, id: 'trained-accuracy-value' }, pct(s.right / s.total, s.right === s.total || s.right === 0 ? 0 : 1)),
        ` of this input: ${s.right} of ${s.total} positions right${s.allRight ? ' (all of them)' : ''}`,
        h('span', { class: 'muted' }, ' · the ^ and $ positions predict themselves and are not scored'));
    }
    showTokens(ids, pred, want, probs);
    showPytorch(sel, pred);
    drawAttention();
  }

  // ---------------------------------------------------------------- the charts

  function drawCharts(sel) {
    const task = sel.task;
    const rows = POSITIONS.map((p) => table.rows.find((r) => r.task === task && r.position === p));
    const lengths = [trainT, 2 * trainT, 4 * trainT];
    const value = (a) => (!a ? null : a.refused ? { text: 'refused' } : a.token);
    const groups = [...lengths.map((T, i) => `T = ${T}\n${i ? `${T / trainT}× (past training)` : '1× (trained)'}`), `ablated to none\nT = ${trainT}`];
    const chance = 1 / symbols.length;
    barChart(chart.canvas, {
      groups,
      groupsShort: [...lengths.map((T, i) => `T = ${T}\n${i ? `${T / trainT}×` : '1×'}`), `ablated\nT = ${trainT}`],
      series: rows.map((r, k) => ({ label: POSITIONS[k], color: COLOURS[POSITIONS[k]], values: r ? [...lengths.map((T) => value(r.accuracy[T])), value(r.ablatedToNone)] : [] })),
      yRange: [0, 1], yTickFormat: (v) => pct(v), valueFormat: (v) => Math.round(100 * v).toString(),
      yLabel: 'per-token accuracy', height: 300, separators: [3],
      hlines: [{ y: chance, label: `chance (1 in ${symbols.length})` }],
      highlight: POSITIONS.indexOf(sel.position),
      tooltip: (g, k) => {
        const r = rows[k], a = g < 3 ? r?.accuracy[lengths[g]] : r?.ablatedToNone;
        if (!a) return '';
        const where = g < 3 ? `T = ${lengths[g]}` : `ablated to 'none', T = ${trainT}`;
        return a.refused ? `${r.name}, ${where}: ${a.refused} (${a.message})` : `${r.name}, ${where}: ${pct(a.token, 1)} of tokens, ${pct(a.sequence)} of inputs entirely right`;
      },
    });
    const fmt = (a) => (a && !a.refused ? pct(a.token) : '—');
    const best4 = rows.filter((r) => r && !r.accuracy[4 * trainT].refused)
      .reduce((b, r) => (!b || r.accuracy[4 * trainT].token > b.accuracy[4 * trainT].token ? r : b), null);
    const abl = rows.filter((r) => r && r.position !== 'none').map((r) => r.ablatedToNone.token);
    fill(chartLine,
      `${CHART_LEADS[task]} (best at 4×: ${best4.position} ${fmt(best4.accuracy[4 * trainT])}); `,
      `ablating the positions collapses every model to ${pct(Math.min(...abl))}–${pct(Math.max(...abl))}; learned refuses past ${trainT}. `,
      h('span', { class: 'muted' }, `Bars: models/results.json, per-token accuracy on ${table.count} random inputs per bar (tools/evaluate.mjs, through swapformer); the current choice is outlined.`));
    document.getElementById('trained-chart-title').textContent = `Accuracy against length: ${task}, every position plugin`;

    const rope = table.rows.find((r) => r.task === task && r.position === 'rope');
    const ext = [2 * trainT, 4 * trainT];
    barChart(ropeChart.canvas, {
      groups: ext.map((T) => `T = ${T}\n${T / trainT}×, factor ${T / trainT}`),
      groupsShort: ext.map((T) => `T = ${T}\n${T / trainT}×`),
      series: SCALINGS.map((type) => ({
        label: type === 'none' ? 'no scaling' : type === 'ntk' ? 'NTK' : type === 'yarn' ? 'YaRN' : 'linear (PI)',
        color: SCALING_COLOURS[type],
        values: ext.map((T) => value(type === 'none' ? rope.accuracy[T] : rope.ropeScaling?.[type]?.[T])),
      })),
      yRange: [0, 1], yTickFormat: (v) => pct(v), valueFormat: (v) => Math.round(100 * v).toString(),
      yLabel: 'per-token accuracy', height: 260,
      hlines: [{ y: rope.accuracy[trainT].token, label: `at T = ${trainT}: ${pct(rope.accuracy[trainT].token)}` }],
      highlight: sel.position === 'rope' && !sel.ablate ? SCALINGS.indexOf(sel.scalingType) : -1,
      tooltip: (g, k) => {
        const type = SCALINGS[k], a = type === 'none' ? rope.accuracy[ext[g]] : rope.ropeScaling?.[type]?.[ext[g]];
        return a ? `${rope.name}, ${type === 'none' ? 'no scaling' : type}, T = ${ext[g]}: ${pct(a.token, 1)} of tokens, ${pct(a.sequence)} of inputs entirely right` : '';
      },
    });
    const bestAt = (T) => SCALINGS.map((type) => [type, type === 'none' ? rope.accuracy[T] : rope.ropeScaling?.[type]?.[T]])
      .filter(([, a]) => a && !a.refused).sort((a, b) => b[1].token - a[1].token)[0];
    const [b2, a2] = bestAt(2 * trainT);
    fill(ropeLine,
      `${rope.name}: best at 2× is ${b2 === 'none' ? 'no scaling' : b2} (${pct(a2.token)}). `,
      task === 'shift'
        ? 'Shift needs the fast rotations that tell neighbours apart: NTK and YaRN keep them, linear interpolation squeezes them and breaks the rule. '
        : `${task[0].toUpperCase()}${task.slice(1)} needs absolute places: interpolation maps them back into the trained range, which helps, but nothing is perfect without retraining. `,
      h('span', { class: 'muted' }, `factor = T/${trainT}; YaRN with originalMaxLen ${trainT}. ${sel.position === 'rope' && sel.ablate ? 'Untick Ablate to try a scaling on your input.' : sel.position === 'rope' ? 'Choose a scaling above (and a length past ' + trainT + ') to run it on your input; the outlined bars are the current choice.' : 'Choose rope above, then a scaling, to run it on your input.'}`));
    document.getElementById('trained-rope-title').textContent = `RoPE context extension on the same weights: ${task}`;
  }

  // ---------------------------------------------------------------- wiring

  const queueRefresh = () => app.enqueue(refresh);
  taskSel.addEventListener('change', queueRefresh);
  posSel.addEventListener('change', queueRefresh);
  ablate.addEventListener('change', queueRefresh);
  scalingSel.addEventListener('change', queueRefresh);
  layerSel.addEventListener('change', () => app.enqueue(drawAttention));
  headSel.addEventListener('change', () => app.enqueue(drawAttention));
  text.addEventListener('input', () => app.later('trained-input', TYPING_MS, refresh));
  slider.addEventListener('input', () => {
    const T = Number(slider.value);
    resizeText(T);
    showLength(T);
    app.later('trained-input', SLIDER_MS, refresh);
  });
  randomBtn.addEventListener('click', () => {
    const parsed = parseInput(text.value);
    const n = parsed.symbols ? parsed.symbols.length : Number(slider.value) - 2;
    text.value = randomSymbols(Math.max(1, Math.min(maxT - 2, n)), randomSeed++);
    app.enqueue(refresh);
  });

  async function init() {
    try {
      [tasks, index, table] = await Promise.all([
        import('../models/tasks.js'),
        fetchOk(new URL('index.json', MODELS)).then((r) => r.json()),
        fetchOk(new URL('results.json', MODELS)).then((r) => r.json()),
      ]);
    } catch (e) {
      loadFailed = true;
      index = null;
      fill(body, h('div', { class: 'errbox', id: 'trained-error' }, h('span', { class: 'code' }, e.code ?? 'NOT_FOUND'), ` The trained models could not be loaded: ${e.message}`));
      return;
    }
    trainT = index.trainLengths.max;
    maxT = 4 * trainT;
    symbols = index.symbols.tokens;
    setOptions(taskSel, tasks.TASKS);
    const positions = POSITIONS.filter((p) => index.models.some((m) => m.position === p));
    setOptions(posSel, positions);
    setOptions(scalingSel, SCALINGS, ['none', 'linear (position interpolation)', 'NTK-aware', 'YaRN']);
    taskSel.value = 'reverse';
    posSel.value = 'rope';
    const layers = index.hyperparameters.layers, heads = index.hyperparameters.heads;
    setOptions(layerSel, Array.from({ length: layers }, (_, i) => i));
    setOptions(headSel, Array.from({ length: heads }, (_, i) => i));
    layerSel.value = String(layers - 1); // the second layer is where these models read the answer
    Object.assign(slider, { min: String(MIN_T), max: String(maxT) });
    buildScale();
    text.value = randomSymbols(20, randomSeed++);
    await refresh();
  }

  // ---------------------------------------------------------------- for tests and the console
  Object.assign(out, {
    /** Sets the panel's controls and runs; resolves to a copy of lastPrediction. */
    async select(task, position, { text: symbolsText, length, ablate: ab = false, scaling = 'none', layer, head } = {}) {
      await app.whenIdle();
      taskSel.value = task;
      posSel.value = position;
      ablate.checked = !!ab;
      scalingSel.value = scaling;
      if (layer !== undefined) layerSel.value = String(layer);
      if (head !== undefined) headSel.value = String(head);
      if (symbolsText !== undefined) text.value = symbolsText;
      else if (length !== undefined) resizeText(length);
      await app.enqueue(refresh);
      await app.whenIdle();
      return JSON.parse(JSON.stringify(out.lastPrediction));
    },
    /** The panel's data: what it loaded and what it shows. */
    info: () => ({ loaded: !!index && !loadFailed, files: [...encoders.keys()], trainT, maxT, symbols }),
  });
  app.trained = out;

  return {
    async update() {
      if (started) return;
      started = true;
      await init();
    },
  };
}
