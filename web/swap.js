// Section 3, "Swap a plugin on the same weights": builds model B from the
// current model A's weights (every tensor both configs have, same shape),
// initialises the tensors only B has from the seed, reports what was kept,
// dropped and added, and shows how the output changes. "Swap" makes B the
// current model.
import { h, fill, setOptions, plotBox, errorText, plural } from './dom.js';
import { heatmap, linePlot } from './plots.js';
import { displayToken } from './tokenizer.js';
import { positionOptionsFor, formatNumber } from './experiments.js';

/** Splits A's weights into those B keeps (same name and shape) and the rest:
 * dropped (B has no such tensor, or one of another shape) and added (B's own,
 * initialised from the seed). */
export function planSwap(weightsA, shapesA, shapesB) {
  const kept = [],
    dropped = [],
    added = [],
    reshaped = [];
  const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
  for (const name of Object.keys(shapesA)) {
    if (!(name in shapesB)) dropped.push(name);
    else if (!same(shapesA[name], shapesB[name])) {
      reshaped.push(name);
      dropped.push(name);
    } else kept.push(name);
  }
  for (const name of Object.keys(shapesB)) if (!(name in shapesA) || reshaped.includes(name)) added.push(name);
  const weights = Object.fromEntries(kept.map((n) => [n, weightsA[n]]));
  return { kept, dropped, added, reshaped, weights };
}

/** B's config: A's with another position / norm / placement / final norm. */
export function swapConfig(configA, { position, norm, normPlacement, finalNorm }) {
  const positionOptions = position === configA.position ? configA.positionOptions : positionOptionsFor(position, {});
  return { ...configA, position, positionOptions, norm, normPlacement, finalNorm };
}

const describe = (c) => `${c.position} · ${c.norm} · ${c.normPlacement}-norm${c.finalNorm ? ' + final norm' : ''}`;

const WHY = {
  'embed.positions': 'the learned position table',
  bias: 'RMSNorm has no bias',
  final_norm: 'the final norm',
};

function why(name) {
  if (name === 'embed.positions') return WHY['embed.positions'];
  if (name.startsWith('final_norm')) return WHY.final_norm;
  if (/norm\d?\.bias$|final_norm\.bias$/.test(name)) return WHY.bias;
  return '';
}

export function mountSwap(root, app) {
  const body = root.querySelector('#swap-body');
  const posB = h('select', { id: 'swap-position' });
  const normB = h('select', { id: 'swap-norm' });
  const placeB = h('select', { id: 'swap-placement' }, h('option', { value: 'pre' }, 'pre-norm'), h('option', { value: 'post' }, 'post-norm'));
  const finalB = h('input', { id: 'swap-final-norm', type: 'checkbox' });
  const button = h('button', { id: 'swap-button', type: 'button' }, 'Swap: make B the current model');
  setOptions(posB, app.plugins.position);
  setOptions(normB, app.plugins.norm);
  posB.value = 'none';

  const from = h('p', { class: 'swap-from' });
  const report = h('div', { id: 'swap-report' });
  const diffPlot = plotBox("Change of each token's output vector");
  const deltaPlot = plotBox('Output of B minus output of A');
  const deltaCaption = h('p', { class: 'caption' });

  fill(
    body,
    h(
      'p',
      { class: 'hint' },
      "Model B takes model A's tensors (every one B also has, with the same shape) and initialises only what it adds from the seed. Nothing is re-trained: any difference in the output is the plugin's doing.",
    ),
    h(
      'div',
      { class: 'swap-grid' },
      h(
        'div',
        {},
        from,
        h(
          'div',
          { class: 'swap-controls' },
          h('label', {}, 'B: position', posB),
          h('label', {}, 'B: norm', normB),
          h('label', {}, 'B: placement', placeB),
          h('label', { class: 'check' }, finalB, 'B: final norm'),
        ),
        report,
        h('div', { style: 'margin-top:10px' }, button),
      ),
      h('div', {}, diffPlot.box, deltaPlot.box, deltaCaption),
    ),
  );

  let state = null;
  let pending = null; // {encoder, config, plan} of the last B
  let touched = false; // whether the user chose B's placement / final norm
  const lastReport = {};
  app.swapReport = lastReport;

  const rerun = () => app.enqueue(() => state && compare(state));
  posB.addEventListener('change', rerun);
  normB.addEventListener('change', rerun);
  placeB.addEventListener('change', () => {
    touched = true;
    finalB.checked = placeB.value === 'pre';
    rerun();
  });
  finalB.addEventListener('change', () => {
    touched = true;
    rerun();
  });
  button.addEventListener('click', () => app.enqueue(() => adoptB()));

  async function compare(s) {
    pending?.encoder.dispose();
    pending = null;
    const A = s.encoder,
      cA = A.config;
    if (!touched) {
      placeB.value = cA.normPlacement;
      finalB.checked = cA.finalNorm;
    }
    fill(from, 'A (current): ', h('strong', {}, describe(cA)), h('span', { class: 'muted' }, ` · ${plural(cA.layers, 'layer')}, dModel ${cA.dModel}`));
    const cB = swapConfig(cA, { position: posB.value, norm: normB.value, normPlacement: placeB.value, finalNorm: finalB.checked });
    let B, plan;
    try {
      const probe = await s.api.createEncoder(cB, { seed: s.seed });
      const shapesB = probe.weightShapes();
      probe.dispose();
      plan = planSwap(A.getWeights(), A.weightShapes(), shapesB);
      B = await s.api.createEncoder(cB, { weights: plan.weights, seed: s.seed });
    } catch (e) {
      fill(report, h('div', { class: 'errbox' }, h('span', { class: 'code' }, e.code ?? 'ERROR'), ' ', e.message));
      button.disabled = true;
      return;
    }
    pending = { encoder: B, config: cB, plan };
    button.disabled = false;

    const same = describe(cA) === describe(B.config);
    const list = (names) =>
      h(
        'ul',
        { class: 'tensor-list' },
        names.map((n) => h('li', {}, h('code', {}, n), why(n) ? h('span', { class: 'muted' }, ` (${why(n)})`) : null)),
      );
    const out = {};
    let diff = null;
    if (s.result) {
      try {
        const oA = s.result,
          oB = B.forward(s.ids);
        const T = s.ids.length,
          C = cA.dModel;
        const delta = new Float32Array(T * C);
        let max = 0;
        const perToken = Array.from({ length: T }, (_, t) => {
          let sum = 0;
          for (let i = 0; i < C; i++) {
            const d = oB.data[t * C + i] - oA.data[t * C + i];
            delta[t * C + i] = d;
            sum += d * d;
            max = Math.max(max, Math.abs(d));
          }
          return Math.sqrt(sum);
        });
        diff = { max, perToken, delta, T, C };
      } catch (e) {
        out.error = e;
      }
    }

    Object.assign(lastReport, {
      from: describe(cA),
      to: describe(B.config),
      kept: plan.kept,
      dropped: plan.dropped,
      added: plan.added,
      reshaped: plan.reshaped,
      maxDiff: diff?.max ?? null,
      error: out.error ? { code: out.error.code, message: out.error.message } : null,
    });

    fill(
      report,
      h(
        'p',
        { class: 'swap-from' },
        'B: ',
        h('strong', {}, describe(B.config)),
        same ? h('span', { class: 'muted' }, ' (the same as A: choose another plugin)') : null,
      ),
      h(
        'dl',
        { class: 'kv' },
        h('dt', {}, 'kept from A'),
        h('dd', { id: 'swap-kept' }, `${plan.kept.length} tensors (all shared ones, same values)`),
        h('dt', {}, 'dropped'),
        h(
          'dd',
          { id: 'swap-dropped' },
          plan.dropped.length ? `${plan.dropped.length}: ${plan.dropped.slice(0, 3).join(', ')}${plan.dropped.length > 3 ? ', …' : ''}` : 'none',
        ),
        h('dt', {}, 'added'),
        h(
          'dd',
          { id: 'swap-added' },
          plan.added.length ? `${plan.added.length}, from seed ${s.seed}: ${plan.added.slice(0, 3).join(', ')}${plan.added.length > 3 ? ', …' : ''}` : 'none',
        ),
        h('dt', {}, 'output change'),
        h(
          'dd',
          { id: 'swap-maxdiff' },
          out.error
            ? h('span', { class: 'bad' }, `B: ${errorText(out.error)}`)
            : diff
              ? `max |B − A| = ${formatNumber(diff.max)}${diff.max === 0 ? ' (identical)' : ''}`
              : '—',
        ),
      ),
      h(
        'details',
        {},
        h('summary', {}, `Tensor names (${plan.kept.length} kept, ${plan.dropped.length} dropped, ${plan.added.length} added)`),
        plan.dropped.length ? [h('strong', {}, 'dropped'), list(plan.dropped)] : null,
        plan.added.length ? [h('strong', {}, 'added'), list(plan.added)] : null,
        h('strong', {}, 'kept'),
        list(plan.kept),
      ),
    );

    if (diff) {
      const labels = s.tokens.map(displayToken);
      diffPlot.box.hidden = false;
      deltaPlot.box.hidden = false;
      linePlot(diffPlot.canvas, {
        series: [{ label: '‖output_B − output_A‖ per token', x: labels.map((_, i) => i), y: diff.perToken, color: '#d62728' }],
        bars: true,
        yRange: [0, Math.max(...diff.perToken) * 1.1 || 1],
        height: 200,
        xTickLabels: labels.map((l, i) => ({ value: i, label: l })),
        xLabel: 'token',
        yLabel: 'L2 norm of the change',
      });
      heatmap(deltaPlot.canvas, {
        data: diff.delta,
        rows: diff.T,
        cols: diff.C,
        scale: 'diverging',
        xLabel: 'dimension',
        yLabel: 'token',
        colorLabel: 'B − A',
        yTickLabels: labels,
        rowHeight: Math.max(6, Math.min(18, 240 / diff.T)),
        maxHeight: 300,
      });
      deltaCaption.textContent =
        diff.max === 0
          ? 'B computes exactly what A computes.'
          : `Same tokens, same shared weights: the change comes from ${cA.position !== cB.position ? `position '${cA.position}' → '${cB.position}'` : ''}${cA.position !== cB.position && cA.norm !== cB.norm ? ' and ' : ''}${cA.norm !== cB.norm ? `norm '${cA.norm}' → '${cB.norm}'` : ''}${cA.normPlacement !== cB.normPlacement || cA.finalNorm !== cB.finalNorm ? `${cA.position !== cB.position || cA.norm !== cB.norm ? ' and ' : ''}the norm placement` : ''}${plan.added.length ? ` (and ${plan.added.length} added tensors)` : ''}.`;
    } else {
      diffPlot.box.hidden = true;
      deltaPlot.box.hidden = true;
      deltaCaption.textContent = 'Fix the error above to compare outputs.';
    }
  }

  async function adoptB() {
    if (!pending) return;
    const { encoder, plan } = pending;
    pending = null;
    touched = false;
    const fromText = lastReport.from,
      toText = describe(encoder.config);
    // next B: back to where we came from
    posB.value = state.encoder.config.position;
    normB.value = state.encoder.config.norm;
    app.adopt(encoder, {
      seed: state.seed,
      provenance: { kind: 'swap', from: fromText, to: toText, kept: plan.kept, dropped: plan.dropped, added: plan.added, seed: state.seed },
    });
  }

  return {
    async update(s) {
      state = s;
      await compare(s);
    },
  };
}
