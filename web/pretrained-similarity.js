// Section 6, "Cosine similarity, and the same weights with other positions":
// the sentences' cosine-similarity heat map, the position plugin or the RoPE
// scaling swapped on the same weights (Pretrained.withConfig) with its own
// map next to it, how much the similarities move, and the numbers.
import { h, fill, setOptions, plotBox, scrollTable, plural } from './dom.js';
import { heatmap, touchScreen } from './plots.js';
import { POSITION_NOTES, show, shortText, signed, showError, clearError } from './pretrained-shared.js';

const SWAP_MS = 120;
const SWAP_POSITIONS = ['rope', 'alibi', 'none'];
const SCALINGS = ['none', 'linear', 'ntk', 'yarn', 'dynamic'];
const SCALING_LABELS = ['none', 'linear (position interpolation)', 'NTK-aware', 'YaRN', 'dynamic NTK'];
// the tensors a position plugin owns: dropped when the weights move to another plugin
const POSITION_TENSORS = { learned: ['embed.positions'], t5: ['embed.relative_bias'] };

/**
 * ctx: {app, state ({model, swapped, view}), refresh()}.
 * Returns {el, setup(), draw(), ready(bool)}; applySwap sets state.swapped.
 */
export function similarityCard(ctx) {
  const { app, state } = ctx;
  const { api } = app;
  const posSel = h('select', { id: 'pretrained-position' });
  const scalingSel = h('select', { id: 'pretrained-scaling' });
  const factorInput = h('input', { id: 'pretrained-factor', type: 'number', min: '1', step: 'any', value: '4' });
  const origLenInput = h('input', { id: 'pretrained-original-len', type: 'number', min: '1', step: '1', value: '2048' });
  const scalingLabel = h('label', { id: 'pretrained-scaling-label', class: 'wide' }, 'RoPE scaling', scalingSel);
  const factorLabel = h('label', {}, 'factor', factorInput);
  const origLenLabel = h('label', {}, 'originalMaxLen', origLenInput);
  const swapNote = h('p', { class: 'caption', id: 'pretrained-swap-note' });
  const swapError = h('div', { class: 'error', id: 'pretrained-swap-error', role: 'alert', hidden: true });
  const origMap = plotBox('Cosine similarity of the sentences, the checkpoint as it is');
  origMap.canvas.id = 'pretrained-matrix';
  const swapMap = plotBox('Cosine similarity of the sentences, the same weights with the swapped positions');
  swapMap.canvas.id = 'pretrained-swapped-matrix';
  const origTitle = h('h4', { id: 'pretrained-matrix-title' }, 'The checkpoint');
  const swapTitle = h('h4', { id: 'pretrained-swapped-title' }, 'Swapped');
  const swapEmpty = h(
    'p',
    { class: 'note', id: 'pretrained-swapped-empty' },
    'Choose another position plugin or a RoPE scaling above: the same weights run again and their matrix appears here.',
  );
  const change = h('p', { class: 'lesson', id: 'pretrained-change', hidden: true });
  const simTable = h('table', { class: 'numbers sim', id: 'pretrained-sim-table' });
  const simCaption = h('p', { class: 'caption', id: 'pretrained-matrix-caption' });
  const simKey = h('p', { class: 'caption', id: 'pretrained-sim-key' });

  const wait = h(
    'p',
    { class: 'note', id: 'pretrained-sim-wait' },
    'Load a model above (drop a folder or type an id). Its sentence similarities appear here, and the same weights with other positions next to them.',
  );
  const body = h(
    'div',
    { class: 'pt-stack', hidden: true },
    h('div', { class: 'pt-swap-controls' }, h('label', { class: 'wide' }, 'Position plugin', posSel), scalingLabel, factorLabel, origLenLabel),
    swapNote,
    swapError,
    h('div', { class: 'pt-maps' }, h('figure', { class: 'view' }, origTitle, origMap.box), h('figure', { class: 'view' }, swapTitle, swapEmpty, swapMap.box)),
    simCaption,
    change,
    h('details', { id: 'pretrained-numbers' }, h('summary', {}, 'The numbers'), simKey, scrollTable(simTable)),
  );
  const el = h(
    'article',
    { class: 'card', id: 'pretrained-similarity' },
    h('h3', {}, 'Cosine similarity, and the same weights with other positions'),
    wait,
    body,
  );

  // ---------------------------------------------------------------- swap controls

  const originalScaling = () => state.model?.p.encoder.config.positionOptions?.scaling ?? null;

  /** The controls for a newly loaded checkpoint: its own positions chosen. */
  function setup() {
    const { model } = state;
    const c = model.p.encoder.config;
    const positions = [c.position, ...SWAP_POSITIONS.filter((p) => p !== c.position)];
    setOptions(
      posSel,
      positions,
      positions.map((p) => (p === c.position ? `${p} (as trained)` : p)),
    );
    posSel.value = c.position;
    setOptions(scalingSel, SCALINGS, SCALING_LABELS);
    const s = originalScaling();
    const hf = model.p.hfConfig ?? {};
    scalingSel.value = s?.type ?? 'none';
    factorInput.value = String(s?.factor ?? 4);
    origLenInput.value = String(s?.originalMaxLen ?? hf.max_trained_positions ?? hf.max_position_embeddings ?? 2048);
    clearError(swapError);
    showSwapFields();
    describeSwap(readSwap());
  }

  function showSwapFields() {
    const rope = posSel.value === 'rope';
    scalingLabel.hidden = !rope;
    factorLabel.hidden = !rope || scalingSel.value === 'none';
    origLenLabel.hidden = !rope || !['yarn', 'dynamic'].includes(scalingSel.value);
  }

  /** What the swap controls ask for: {key: 'original'} or {key, changes, weights?, label}. */
  function readSwap() {
    const c = state.model.p.encoder.config;
    const position = posSel.value;
    let positionOptions;
    if (position === c.position) positionOptions = { ...c.positionOptions };
    else positionOptions = position === 'rope' ? { base: 10000, style: 'half' } : {};
    let scaling = null;
    if (position === 'rope') {
      delete positionOptions.scaling;
      const type = scalingSel.value;
      if (type !== 'none') {
        // the checkpoint's own scaling keeps its other fields (YaRN's betas)
        const own = originalScaling();
        scaling = { ...(own?.type === type && position === c.position ? own : {}), type, factor: Number(factorInput.value) };
        if (type === 'yarn' || type === 'dynamic') scaling.originalMaxLen = Number(origLenInput.value);
        positionOptions.scaling = scaling;
      }
    }
    const changes = { position, positionOptions };
    const key = JSON.stringify(changes);
    if (key === JSON.stringify({ position: c.position, positionOptions: c.positionOptions })) return { key: 'original' };
    const drop = position !== c.position ? (POSITION_TENSORS[c.position] ?? []) : [];
    const scaleText = scaling
      ? ` + ${scalingSel.selectedOptions[0]?.textContent ?? scaling.type} ×${scaling.factor}${scaling.originalMaxLen ? ` (originalMaxLen ${scaling.originalMaxLen})` : ''}`
      : '';
    const label = position === c.position ? `${position}${scaleText || ' without scaling'}` : `${position}${scaleText} (was ${c.position})`;
    return { key, changes, drop, label };
  }

  function describeSwap(want) {
    const c = state.model.p.encoder.config;
    if (want.key === 'original') {
      swapNote.textContent = `The checkpoint's own positions: ${c.position}${c.positionOptions?.scaling ? ` with ${show(c.positionOptions.scaling)}` : ''}. Choose another plugin${c.position === 'rope' || posSel.value === 'rope' ? ' or a RoPE scaling' : ''} to run the same weights with it.`;
      return;
    }
    const parts = [`Same weights, ${want.label}: ${POSITION_NOTES[want.changes.position] ?? ''}.`];
    if (want.drop.length) parts.push(`The ${want.drop.join(', ')} tensor of '${c.position}' is left out.`);
    if (want.changes.position !== c.position) parts.push('The model was never trained this way: expect its similarities to move.');
    else parts.push('RoPE scaling stretches the rotations for longer inputs; on short sentences it shows what it costs.');
    swapNote.textContent = parts.join(' ');
  }

  /** Builds the swapped model the controls describe (or none) and redraws. */
  async function applySwap() {
    if (!state.model) return;
    showSwapFields();
    const want = readSwap();
    describeSwap(want);
    if (want.key === (state.swapped?.key ?? 'original')) {
      await ctx.refresh();
      return;
    }
    state.swapped?.p.dispose();
    state.swapped = null;
    clearError(swapError);
    if (want.key !== 'original') {
      try {
        // withConfig drops the tensors of the plugin swapped out and keeps the rest
        state.swapped = { p: await state.model.p.withConfig(want.changes), key: want.key, label: want.label, changes: want.changes };
      } catch (e) {
        if (!(e instanceof api.SwapformerError)) throw e;
        showError(swapError, e);
      }
    }
    await ctx.refresh();
  }

  // ---------------------------------------------------------------- the maps and the numbers

  function draw() {
    const { view, model, swapped } = state;
    const { list, orig, swap } = view;
    const n = list.length;
    const all = swap ? [...orig.sims, ...swap.sims] : [...orig.sims];
    let lo = Math.min(...all);
    lo = Math.max(-1, Math.floor(lo * 10) / 10);
    if (lo > 0.9) lo = 0.9;
    const range = [lo, 1];
    // the sentences' starts as row labels, shorter at phone width so that the cells keep their size
    const narrow = origMap.box.clientWidth > 0 && origMap.box.clientWidth < 480;
    const ylabels = list.map((s, i) => `${i + 1} ${shortText(s, narrow ? 11 : 22)}`);
    const xlabels = list.map((_, i) => String(i + 1));
    const spec = (sims, other, what) => ({
      data: Float32Array.from(sims),
      rows: n,
      cols: n,
      scale: 'sequential',
      range,
      square: true,
      xLabel: 'sentence',
      yLabel: 'sentence',
      colorLabel: 'cosine similarity',
      xTickLabels: xlabels,
      yTickLabels: ylabels,
      maxHeight: 380,
      valueLabel: (r, c) =>
        `${what}: ${r + 1} · ${c + 1}: cos ${sims[r * n + c].toFixed(4)}${other ? ` (the checkpoint ${other[r * n + c].toFixed(4)}, Δ ${signed(sims[r * n + c] - other[r * n + c])})` : ''}`,
    });
    const c = model.p.encoder.config;
    origTitle.textContent = `The checkpoint (${c.position}${c.positionOptions?.scaling ? ` + ${c.positionOptions.scaling.type}` : ''})`;
    heatmap(origMap.canvas, spec(orig.sims, null, 'the checkpoint'));
    simCaption.textContent = `Cosine of the ${model.p.recipe.pooling.join('+')}-pooled embeddings${model.p.recipe.dense.length ? ' after Dense' : ''}; colours from ${lo.toFixed(1)} to 1 (shared by both maps); ${touchScreen() ? 'tap' : 'hover over'} a cell for its value.`;
    swapMap.box.hidden = !swap;
    swapEmpty.hidden = !!swap;
    if (swap) {
      swapTitle.textContent = `Swapped: ${swapped.label}`;
      heatmap(swapMap.canvas, spec(swap.sims, orig.sims, 'swapped'));
      let sumAbs = 0,
        sum = 0,
        pairs = 0,
        worst = { d: -1 };
      for (let i = 0; i < n; i++) {
        for (let j = i + 1; j < n; j++) {
          const d = swap.sims[i * n + j] - orig.sims[i * n + j];
          sumAbs += Math.abs(d);
          sum += d;
          pairs++;
          if (Math.abs(d) > worst.d) worst = { d: Math.abs(d), i, j, signed: d };
        }
      }
      const meanAbs = pairs ? sumAbs / pairs : 0,
        mean = pairs ? sum / pairs : 0;
      view.change = { meanAbs, mean, pairs, worst };
      change.hidden = false;
      change.dataset.meanAbs = String(meanAbs);
      change.dataset.mean = String(mean);
      fill(
        change,
        `Mean change in cosine similarity over the ${plural(pairs, 'pair')}: `,
        h('strong', { id: 'pretrained-change-value' }, `|Δ cos| = ${meanAbs.toFixed(4)}`),
        ` (mean Δ ${signed(mean)})`,
        pairs ? `; the largest, ${signed(worst.signed)}, between sentences ${worst.i + 1} and ${worst.j + 1}.` : '.',
        meanAbs < 1e-6 ? ' These weights barely notice this change on these sentences.' : '',
      );
    } else {
      view.change = null;
      change.hidden = true;
      delete change.dataset.meanAbs;
    }
    // the numbers: the checkpoint's, and the swapped model's under them
    fill(
      simTable,
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', {}),
          xlabels.map((x) => h('th', { class: 'num-cell' }, x)),
        ),
      ),
      h(
        'tbody',
        {},
        list.map((s, i) =>
          h(
            'tr',
            {},
            h('th', { title: s }, h('span', { class: 'rnum' }, String(i + 1)), h('span', { class: 'rtext' }, ` ${shortText(s, narrow ? 11 : 22)}`)),
            list.map((_, j) => {
              const v = orig.sims[i * n + j],
                w = swap?.sims[i * n + j];
              return h(
                'td',
                { class: 'num-cell', dataset: { row: String(i), col: String(j), value: String(v), ...(swap ? { swapped: String(w) } : {}) } },
                v.toFixed(2),
                swap ? h('span', { class: 'swapped-value' }, h('span', { class: 'arrow' }, ' → '), w.toFixed(2)) : null,
              );
            }),
          ),
        ),
      ),
    );
    simKey.textContent = swap
      ? `Each cell: the checkpoint's cosine, then (in orange) the swapped model's, ${swapped.label}.`
      : "The checkpoint's cosine of each pair of sentences.";
  }

  function ready(yes) {
    wait.hidden = yes;
    body.hidden = !yes;
    if (!yes) clearError(swapError);
  }

  for (const input of [posSel, scalingSel])
    input.addEventListener('change', () => {
      showSwapFields();
      app.later('pretrained-swap', 0, applySwap);
    });
  for (const input of [factorInput, origLenInput]) input.addEventListener('input', () => app.later('pretrained-swap', SWAP_MS, applySwap));

  return { el, setup, draw, ready };
}
