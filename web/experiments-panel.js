// Section 4: one card per seed experiment (experiments.js computes, this
// file draws). Each card shows PASS / FAIL, its live numbers, a picture and
// a one-line explanation; results are kept in app.experimentResults[id].
import { h, fill, plotBox, errorText, scrollTable, plural } from './dom.js';
import { heatmap, linePlot, barChart, PALETTE } from './plots.js';
import { EXPERIMENTS, formatNumber, slopeLabel } from './experiments.js';

/** A table of numbers that scrolls sideways on its own when the card is narrow. */
const numbers = (...children) => scrollTable(h('table', { class: 'numbers' }, ...children));
const num = (x, cls = '') => h('td', { class: `num-cell ${cls}`.trim() }, x);
// the mark keeps to its first word (a no-break space): a narrow column never leaves it alone on a line
const verdict = (ok, yes = 'as expected', no = 'unexpected') => h('span', { class: ok ? 'ok' : 'bad' }, ok ? `✓\u00a0${yes}` : `✗\u00a0${no}`);
const pct = (x) => `${Math.round(100 * x)}%`;

// The trained models for "Remove one layer", fetched like the "Trained models" panel does.
const MODELS = new URL('../models/', import.meta.url);
let trainedIndex = null;
const trainedSource = {
  async index() {
    trainedIndex ??= fetch(new URL('index.json', MODELS)).then((r) => {
      if (!r.ok) throw Object.assign(new Error(`models/index.json: HTTP ${r.status}`), { code: 'NOT_FOUND' });
      return r.json();
    });
    return trainedIndex;
  },
  async bytes(file) {
    const r = await fetch(new URL(file, MODELS));
    if (!r.ok) throw Object.assign(new Error(`models/${file}: HTTP ${r.status}`), { code: 'NOT_FOUND' });
    return new Uint8Array(await r.arrayBuffer());
  },
};

// ------------------------------------------------------------------ renderers

const RENDER = {
  permutation(body, r) {
    const fmtDiff = (x, bits) => (bits ? '0 (bit for bit)' : formatNumber(x));
    const alibi = r.rows.find((x) => x.position === 'alibi');
    fill(
      body,
      h(
        'p',
        { class: 'caption' },
        `ids: “${r.sentences.a}” = [${r.ids.a.join(', ')}], “${r.sentences.b}” = [${r.ids.b.join(', ')}]; max |Δ| between each row and the row of the same word in “${r.sentences.a}”.`,
      ),
      numbers(
        h('thead', {}, h('tr', {}, h('th', {}, 'position'), h('th', {}, `“${r.sentences.b}”`), h('th', {}, `“${r.sentences.rotated}”`), h('th', {}, ''))),
        h(
          'tbody',
          {},
          r.rows.map((x) =>
            h(
              'tr',
              { dataset: { position: x.position } },
              h('td', {}, h('code', {}, x.position)),
              // '0 (bit for bit)' may break after the 0 on a phone
              num(fmtDiff(x.swap, x.swapBitIdentical), x.swapBitIdentical ? 'wrap' : ''),
              num(fmtDiff(x.rotation, x.rotationBitIdentical), x.rotationBitIdentical ? 'wrap' : ''),
              h('td', {}, verdict(x.pass, x.position === 'none' ? 'same rows' : x.position === 'alibi' ? 'mirror, sees order' : 'differs', 'unexpected')),
            ),
          ),
        ),
      ),
      alibi
        ? h(
            'p',
            { class: 'caption' },
            'ALiBi’s bias −slope·|i − j| is symmetric: the reversed sentence is a mirror image, so it matches up to rounding; the rotation shows ALiBi does see order.',
          )
        : null,
    );
  },

  sinusoidal(body, r) {
    const { box, canvas } = plotBox('PE_t · PE_(t+k) against t');
    fill(
      body,
      box,
      numbers(
        h(
          'thead',
          {},
          h('tr', {}, h('th', {}, 'k'), h('th', {}, 'Σ cos(k / base^(2i/d))'), h('th', {}, 'spread over t'), h('th', {}, 'max |measured − formula|')),
        ),
        h(
          'tbody',
          {},
          r.curves.map((c) => h('tr', {}, num(c.k), num(c.analytic.toFixed(4)), num(formatNumber(c.spread)), num(formatNumber(c.vsFormula)))),
        ),
      ),
      h(
        'p',
        { class: 'caption' },
        `The lesson’s d = 4 example: PE₁·PE₂ = ${r.worked.pe12.toFixed(5)}, PE₂·PE₃ = ${r.worked.pe23.toFixed(5)}, cos 1 + cos 0.01 = ${r.worked.want.toFixed(5)}.`,
      ),
    );
    linePlot(canvas, {
      series: r.curves.map((c) => ({ label: `k = ${c.k}`, x: c.t, y: c.values, markers: false })),
      xLabel: 't (position)',
      yLabel: 'PE_t · PE_(t+k)',
      height: 220,
      includeZero: true,
      integerX: true,
    });
  },

  learned(body, r) {
    const L = r.learned;
    fill(
      body,
      numbers(
        h('thead', {}, h('tr', {}, h('th', {}, 'position'), h('th', {}, 'tokens'), h('th', {}, 'result'))),
        h(
          'tbody',
          {},
          h(
            'tr',
            {},
            h('td', {}, h('code', {}, 'learned')),
            num(r.maxLen),
            h('td', {}, verdict(L.atMaxLen[1] === r.maxLen, `runs (maxLen = ${r.maxLen})`, 'failed')),
          ),
          h(
            'tr',
            {},
            h('td', {}, h('code', {}, 'learned')),
            num(r.maxLen + 1),
            h('td', {}, verdict(L.error?.code === 'SEQUENCE_TOO_LONG', 'refused', 'no error')),
          ),
          r.others.map((o) =>
            h(
              'tr',
              {},
              h('td', {}, h('code', {}, o.position)),
              num(r.longLength),
              h('td', {}, o.shape ? verdict(true, `carries on: output [${o.shape.join(', ')}]`) : verdict(false, '', errorText(o.error))),
            ),
          ),
        ),
      ),
      L.error
        ? h('div', { class: 'errbox', id: 'learned-error' }, 'The page caught: ', h('span', { class: 'code' }, L.error.code), ' ', L.error.message)
        : h('div', { class: 'errbox' }, 'No error was raised for maxLen + 1 tokens!'),
      h(
        'p',
        { class: 'caption' },
        `The table has rows 0–${r.maxLen - 1}; position ${r.maxLen} has none. After the error the encoder still works (ran ${L.stillUsable[1]} tokens).`,
      ),
    );
  },

  rope(body, r) {
    const main = r.styles.find((s) => s.style === r.mainStyle);
    const { box, canvas } = plotBox('RoPE score against offset');
    fill(
      body,
      box,
      numbers(
        h('thead', {}, h('tr', {}, h('th', {}, 'pairs'), h('th', {}, 'score(3, 7)'), h('th', {}, 'score(10, 14)'), h('th', {}, 'max spread at one offset'))),
        h(
          'tbody',
          {},
          r.styles.map((s) => h('tr', {}, h('td', {}, s.style), num(s.pairs.s37.toFixed(5)), num(s.pairs.s1014.toFixed(5)), num(formatNumber(s.spread)))),
        ),
      ),
      h(
        'p',
        { class: 'caption' },
        `Head 0, ${main.style} pairs, ${r.length} positions; q and k are fixed random vectors (the same at every position). Curves for different query positions m lie on top of each other.`,
      ),
    );
    linePlot(canvas, {
      series: main.curves.map((c, i) => ({
        label: `query at m = ${c.m}`,
        x: c.offsets,
        y: c.scores,
        markers: true,
        markerSize: 4.5 - i,
        width: 3 - i * 0.6,
        dash: i ? [6, 3] : [],
      })),
      xLabel: 'offset n − m',
      yLabel: 'score q·k/√d_k',
      height: 230,
      integerX: true,
    });
  },

  alibi(body, r, card) {
    const { box, canvas } = plotBox('ALiBi slopes per head');
    const biasBox = plotBox('ALiBi bias matrix');
    const twelve = r.models.find((m) => m.heads === 12) ?? r.models[r.models.length - 1];
    const headSel = h(
      'select',
      { id: 'alibi-exp-head' },
      Array.from({ length: twelve.heads }, (_, i) => h('option', { value: String(i) }, `head ${i}: slope ${slopeLabel(twelve.slopes[i])}`)),
    );
    headSel.value = String(card.alibiHead ?? 8);
    const drawBias = () => {
      const hd = Number(headSel.value);
      card.alibiHead = hd;
      const L = r.length;
      heatmap(biasBox.canvas, {
        data: twelve.bias[hd],
        rows: L,
        cols: L,
        scale: 'diverging',
        square: true,
        maxHeight: 220,
        xLabel: 'key position j',
        yLabel: 'query position i',
        colorLabel: 'bias',
      });
    };
    headSel.addEventListener('change', drawBias);
    fill(
      body,
      numbers(
        h('thead', {}, h('tr', {}, h('th', {}, 'heads'), h('th', {}, 'slopes measured from the bias matrix'), h('th', {}, 'max error'))),
        h(
          'tbody',
          {},
          r.models.map((m) => h('tr', {}, num(m.heads), h('td', {}, m.slopes.map(slopeLabel).join(', ')), num(formatNumber(m.maxError)))),
        ),
      ),
      box,
      h('div', { class: 'row' }, h('label', {}, `Bias matrix of the ${twelve.heads}-head model`, headSel)),
      biasBox.box,
    );
    linePlot(canvas, {
      series: r.models.map((m, i) => ({
        label: `${m.heads} heads${(m.heads & (m.heads - 1)) === 0 ? '' : ' (not a power of 2)'}`,
        x: m.slopes.map((_, hd) => hd),
        y: m.slopes.map((s) => -Math.log2(s)),
        markers: true,
        markerSize: 5 - i * 1.2,
        width: 1.2,
        color: PALETTE[i],
      })),
      xLabel: 'head',
      yLabel: '−log₂ slope  (slope = 2^−y)',
      height: 200,
      integerX: true,
      xPad: true,
    });
    drawBias();
  },

  depth(body, r, card, rerun) {
    const input = h('input', { id: 'depth-layers', type: 'number', min: '2', max: '48', step: '1', value: String(r.layers) });
    input.addEventListener('change', () => {
      const n = Math.round(Number(input.value));
      if (Number.isFinite(n) && n >= 2 && n <= 48) {
        card.options = { layers: n };
        rerun();
      } else input.value = String(r.layers);
    });
    const { box, canvas } = plotBox('Residual-stream norm per layer');
    const [pre, noFinal, post] = r.variants;
    fill(
      body,
      h(
        'div',
        { class: 'row' },
        h('label', {}, 'Layers', input),
        h('span', { class: 'caption' }, `position ${r.position}, dModel ${r.dModel}; mean ‖x_t‖ over the tokens of your text`),
      ),
      box,
      numbers(
        h('thead', {}, h('tr', {}, h('th', {}, ''), h('th', {}, 'after embeddings'), h('th', {}, `after layer ${r.layers}`), h('th', {}, 'output'))),
        h(
          'tbody',
          {},
          r.variants.map((v) => h('tr', {}, h('td', {}, v.label), num(v.stream[0].toFixed(2)), num(v.stream[r.layers].toFixed(2)), num(v.output.toFixed(2)))),
        ),
      ),
      h(
        'p',
        { class: 'caption' },
        `√dModel = ${r.sqrtD.toFixed(2)}. `,
        verdict(r.checks.preGrows, `pre-norm stream grows ${pre.stream[0].toFixed(2)} → ${pre.stream[r.layers].toFixed(2)}`, 'pre-norm stream did not grow'),
        '; ',
        verdict(r.checks.finalNormRestores, 'final norm restores √d', 'final norm did not restore √d'),
        '; ',
        verdict(r.checks.noFinalKeepsGrowth, `without it the output is ${(noFinal.output / r.sqrtD).toFixed(2)}× √d`, 'no-final output not grown'),
        '; ',
        verdict(r.checks.postNormalisedEveryLayer, 'post-norm: √d after every layer', 'post-norm not at √d'),
      ),
    );
    const xs = pre.stream.map((_, i) => i).concat([r.layers + 1]);
    linePlot(canvas, {
      series: [
        { label: pre.label, x: xs, y: [...pre.stream, pre.output], color: PALETTE[0], markers: true, width: 2.4 },
        { label: noFinal.label, x: xs, y: [...noFinal.stream, noFinal.output], color: PALETTE[1], markers: true, dash: [6, 4], width: 2 },
        { label: post.label, x: xs, y: [...post.stream, post.output], color: PALETTE[2], markers: true, width: 2 },
      ],
      hlines: [{ y: r.sqrtD, label: `√dModel = ${r.sqrtD.toFixed(2)}` }],
      xTickLabels: xs.map((i) => ({ value: i, label: i === 0 ? 'emb' : i === r.layers + 1 ? 'out' : String(i) })),
      xLabel: 'stream after: emb, each layer, out = output',
      xLabelShort: 'emb, layer 1…L, out',
      yLabel: 'mean ‖x_t‖',
      height: 240,
      xPad: true,
    });
  },

  stream(body, r) {
    const { box, canvas } = plotBox('Residual-stream norm per layer: plain, 1/√(2L), DeepNorm');
    const [plain, depth, deep] = r.variants;
    fill(
      body,
      h(
        'p',
        { class: 'caption' },
        `${r.layers} layers of this model’s size (dModel ${r.dModel}, position ${r.position}), seed weights, mean ‖x_t‖ over ${plural(r.tokens, 'token')} of your text after the embeddings and after each layer (forward’s hiddenStates).`,
      ),
      box,
      numbers(
        h('thead', {}, h('tr', {}, h('th', {}, ''), h('th', {}, 'after embeddings'), h('th', {}, `after layer ${r.layers}`), h('th', {}, 'growth'))),
        h(
          'tbody',
          {},
          r.variants.map((v) =>
            h(
              'tr',
              { dataset: { variant: v.id } },
              h('td', {}, v.label),
              num(v.stream[0].toFixed(2)),
              num(v.stream[r.layers].toFixed(2)),
              num(`×${v.growth.toFixed(2)}`),
            ),
          ),
        ),
      ),
      h(
        'p',
        { class: 'caption', id: 'stream-verdict' },
        verdict(r.checks.plainGrows, `pre-norm grows ×${plain.growth.toFixed(2)} over ${r.layers} layers`, 'pre-norm did not grow'),
        '; ',
        verdict(
          r.checks.depthBounded,
          `attn.o and ffn.down × 1/√${2 * r.layers} = ${r.outputScale.toFixed(3)}: ×${depth.growth.toFixed(2)}`,
          'scaled init grew as much',
        ),
        '; ',
        verdict(
          r.checks.deepnormBounded,
          `DeepNorm (α = (2L)^¼ = ${r.alpha.toFixed(3)}, β = (8L)^−¼ = ${r.beta.toFixed(3)}): ${deep.stream[r.layers].toFixed(2)} after every layer`,
          'DeepNorm not bounded',
        ),
      ),
    );
    const xs = plain.stream.map((_, i) => i);
    linePlot(canvas, {
      series: r.variants.map((v, i) => ({
        label: `${v.label} (×${v.growth.toFixed(2)})`,
        x: xs,
        y: v.stream,
        color: PALETTE[i],
        markers: false,
        width: 2.4 - 0.3 * i,
        dash: i === 2 ? [6, 4] : [],
      })),
      xTickLabels: xs.filter((i) => i % 4 === 0 || i === r.layers).map((i) => ({ value: i, label: i === 0 ? 'emb' : String(i) })),
      xLabel: 'stream after: the embeddings (emb), then layer 1…L',
      xLabelShort: 'emb, layer 1…L',
      yLabel: 'mean ‖x_t‖',
      height: 230,
      includeZero: true,
    });
  },

  qknorm(body, r) {
    const logitBox = plotBox('Largest attention logit against the q/k weight scale');
    const entBox = plotBox('Attention entropy against the q/k weight scale');
    const [plain, normed] = r.runs;
    const xTicks = r.scales.map((s) => ({ value: Math.log2(s), label: `×${s}` }));
    fill(
      body,
      h(
        'p',
        { class: 'caption' },
        `This model’s size with sinusoidal positions, seed weights; attn.q and attn.k (weights and biases) × s. The logits are layer 0’s, computed from its input and weights (their softmax matches the model’s attention to ${formatNumber(Math.max(...plain.softmaxError, ...normed.softmaxError))}).`,
      ),
      logitBox.box,
      numbers(
        h('thead', {}, h('tr', {}, h('th', {}, 'q, k ×'), ...r.scales.map((s) => h('th', {}, String(s))))),
        h(
          'tbody',
          {},
          h('tr', { dataset: { qknorm: 'none' } }, h('td', {}, 'largest logit, no QK-norm'), ...plain.maxLogit.map((x) => num(formatNumber(x)))),
          h('tr', { dataset: { qknorm: r.qkNorm } }, h('td', {}, `largest logit, ${r.qkNorm} QK-norm`), ...normed.maxLogit.map((x) => num(x.toFixed(3)))),
          h('tr', {}, h('td', {}, 'entropy (nats), no QK-norm'), ...plain.entropy.map((x) => num(x.toFixed(3)))),
          h('tr', {}, h('td', {}, `entropy (nats), ${r.qkNorm} QK-norm`), ...normed.entropy.map((x) => num(x.toFixed(3)))),
        ),
      ),
      entBox.box,
      h(
        'p',
        { class: 'caption', id: 'qknorm-verdict' },
        verdict(
          r.checks.unboundedWithout,
          `without: ×${formatNumber(plain.maxLogit[plain.maxLogit.length - 1] / plain.maxLogit[0])} from s = ${r.scales[0]} to ${r.scales[r.scales.length - 1]} (s² = ${(r.scales[r.scales.length - 1] / r.scales[0]) ** 2})`,
          'did not grow',
        ),
        '; ',
        verdict(r.checks.boundedWith, `with: ≤ ${normed.bound.toFixed(3)} = gains × √${r.headDim} at every scale`, 'bound exceeded'),
        '; ',
        verdict(
          r.checks.entropyCollapsesWithout && r.checks.entropyKeptWith,
          `entropy ${plain.entropy[0].toFixed(2)} → ${plain.entropy[plain.entropy.length - 1].toFixed(3)} without, ${normed.entropy[0].toFixed(3)} with`,
          'entropy not as expected',
        ),
      ),
    );
    const xs = r.scales.map(Math.log2);
    linePlot(logitBox.canvas, {
      series: r.runs.map((run, i) => ({
        label: run.qkNorm === 'none' ? 'no QK-norm' : `${run.qkNorm} QK-norm`,
        x: xs,
        y: run.maxLogit.map(Math.log10),
        color: PALETTE[i === 0 ? 1 : 0],
        markers: true,
        width: 2.2,
      })),
      hlines: [{ y: Math.log10(normed.bound), label: `gains × √${r.headDim} = ${normed.bound.toFixed(2)}` }],
      xTickLabels: xTicks,
      xLabel: 'q and k weights × s',
      yLabel: 'log₁₀ largest |logit|',
      height: 210,
      xPad: true,
      summary:
        `Line chart, log scale, of the largest |logit| against the q and k weight scale s (${r.scales.map((s) => `×${s}`).join(', ')}): ` +
        `${r.runs.map((run) => `${run.qkNorm === 'none' ? 'no QK-norm' : `${run.qkNorm} QK-norm`} ${run.maxLogit.map(formatNumber).join(', ')}`).join('; ')}; dashed line: gains × √${r.headDim} = ${normed.bound.toFixed(2)}.`,
    });
    linePlot(entBox.canvas, {
      series: r.runs.map((run, i) => ({
        label: run.qkNorm === 'none' ? 'no QK-norm' : `${run.qkNorm} QK-norm`,
        x: xs,
        y: run.entropy,
        color: PALETTE[i === 0 ? 1 : 0],
        markers: true,
        width: 2.2,
      })),
      hlines: [{ y: r.uniformEntropy, label: `uniform: ln ${r.tokens}` }],
      xTickLabels: xTicks,
      xLabel: 'q and k weights × s',
      yLabel: 'mean attention entropy (nats)',
      height: 190,
      includeZero: true,
      xPad: true,
      valueFormat: (x) => x.toFixed(3),
    });
  },

  layers(body, r) {
    const chart = plotBox('Accuracy of each trained model with one layer removed');
    chart.canvas.id = 'layers-chart';
    const L = r.rows[0]?.without.length ?? 0;
    const children = [
      h(
        'p',
        { class: 'caption' },
        `Token accuracy on ${r.inputs} random inputs of ${r.length} tokens (models/tasks.js), the full model and with each single layer skipped; chance is ${pct(r.chance)}. ` +
          `Blocks left to right: ${[...new Set(r.rows.map((x) => x.task))].join(', ')}; in each, the position plugins ${[...new Set(r.rows.map((x) => x.position))].join(', ')}.`,
      ),
      chart.box,
      h(
        'p',
        { class: 'caption', id: 'layers-verdict' },
        verdict(r.checks.identity, 'a skipped layer’s hidden state repeats the previous one, bit for bit', 'skipped layer changed the stream'),
        '; ',
        verdict(r.checks.everyLayerCounts, 'every removal costs accuracy', 'a removal helped'),
        '; ',
        verdict(
          r.checks.gracefulSomewhere && r.checks.notForAll,
          `${r.graceful} of ${r.removals.length} removals keep ≥ 75%, ${r.collapsed} fall to ≤ 25%`,
          'no contrast',
        ),
      ),
    ];
    let deepChart = null;
    if (r.deep) {
      deepChart = plotBox(`Output change of ${r.deep.label} with one layer removed`);
      deepChart.canvas.id = 'layers-pretrained-chart';
      children.push(
        h('h4', { id: 'layers-pretrained-title' }, `${r.deep.label} (${r.deep.family}, ${r.deep.layers} layers)`),
        deepChart.box,
        h(
          'p',
          { class: 'caption', id: 'layers-pretrained' },
          `1 − mean cosine between the token outputs with and without the layer, ${r.deep.sentences.length} sentences (${r.deep.tokens} tokens): ` +
            `${r.deep.change.map((c, l) => `layer ${l} ${c.toFixed(3)}`).join(', ')}; gentlest without layer ${r.deep.gentlest}, hardest without layer ${r.deep.hardest}; ${r.deep.gentle} of ${r.deep.layers} change it by ≤ 0.05.`,
        ),
      );
    } else
      children.push(h('p', { class: 'note', id: 'layers-pretrained-wait' }, 'Load a checkpoint in “Your model” (section 6) to measure its layers here too.'));
    fill(body, ...children);
    // a block of bars per task, named under it; a bar group per position plugin, by its first letter
    // when the names do not fit (then the key under the blocks says which is which)
    const blocks = r.rows.reduce((list, x, i) => {
      if (list.at(-1)?.label === x.task) list.at(-1).to = i + 1;
      else list.push({ label: x.task, from: i, to: i + 1 });
      return list;
    }, []);
    const positions = [...new Set(r.rows.map((x) => x.position))];
    barChart(chart.canvas, {
      groups: r.rows.map((x) => x.position),
      groupsShort: r.rows.map((x) => x.position[0]),
      groupsKey: positions.map((p) => `${p[0]} ${p}`).join(' · '),
      blocks,
      series: [
        { label: 'full model', values: r.rows.map((x) => x.full), color: '#7f7f7f' },
        ...Array.from({ length: L }, (_, l) => ({ label: `without layer ${l}`, values: r.rows.map((x) => x.without[l]), color: PALETTE[l] })),
      ],
      yRange: [0, 1],
      yTickFormat: pct,
      valueFormat: pct,
      yLabel: 'token accuracy',
      height: 240,
      hlines: [{ y: r.chance, label: `chance ${pct(r.chance)}` }],
      separators: blocks.slice(1).map((b) => b.from),
      tooltip: (g, k) => `${r.rows[g].name}: ${k === 0 ? 'full' : `without layer ${k - 1}`} ${pct(k === 0 ? r.rows[g].full : r.rows[g].without[k - 1])}`,
    });
    if (deepChart) {
      barChart(deepChart.canvas, {
        groups: r.deep.change.map((_, l) => `layer ${l}`),
        series: [{ label: '1 − cos(output, output without the layer)', values: r.deep.change, color: PALETTE[4] }],
        yRange: [0, Math.max(0.1, ...r.deep.change) * 1.1],
        valueFormat: (v) => v.toFixed(3),
        yLabel: 'output change',
        height: 190,
      });
    }
  },
};

// ------------------------------------------------------------------ the panel

export function mountExperiments(root, app) {
  const grid = root.querySelector('#experiments-grid');
  const total = root.querySelector('#experiments-total');
  const results = app.experimentResults;
  const cards = EXPERIMENTS.map((exp, i) => {
    const badge = h('span', { class: 'badge wait' }, '…');
    const summary = h('p', { class: 'summary' });
    const body = h('div', { class: 'exp-body' });
    const el = h(
      'article',
      { class: 'card experiment', id: `exp-${exp.id}`, dataset: { experiment: exp.id } },
      h('div', { class: 'card-head' }, h('h3', {}, `${i + 1}. ${exp.title}`), badge),
      h('p', { class: 'explain' }, exp.explanation),
      body,
      summary,
    );
    return { exp, el, badge, summary, body, options: {} };
  });
  fill(
    grid,
    cards.map((c) => c.el),
  );

  let lastKey = null,
    lastState = null;

  async function runCard(card, s) {
    const { exp } = card;
    let r;
    const t0 = performance.now();
    try {
      r = await exp.run({
        api: s.api,
        base: s.base,
        ids: s.ids,
        positions: s.plugins.position,
        trained: trainedSource,
        pretrained: app.pretrainedModel,
        ...card.options,
      });
    } catch (e) {
      r = { pass: false, summary: `error: ${errorText(e)}`, error: { code: e.code ?? 'INTERNAL', message: e.message } };
    }
    const ms = performance.now() - t0;
    results[exp.id] = { id: exp.id, title: exp.title, ms, ...r };
    card.el.dataset.pass = String(!!r.pass);
    card.badge.className = `badge ${r.pass ? 'pass' : 'fail'}`;
    card.badge.textContent = r.pass ? 'PASS' : 'FAIL';
    fill(
      card.summary,
      h('strong', {}, 'Result: '),
      r.summary,
      h('span', { class: 'timing' }, ` · computed in this page in ${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`),
    );
    if (r.error) fill(card.body, h('div', { class: 'errbox' }, h('span', { class: 'code' }, r.error.code), ' ', r.error.message));
    else RENDER[exp.id]?.(card.body, r, card, () => app.enqueue(() => runCard(card, lastState).then(showTotal)));
  }

  function showTotal() {
    const all = Object.values(results);
    const passed = all.filter((r) => r.pass).length;
    total.textContent = `${passed} of ${all.length} pass.`;
  }

  return {
    /** "Your model" loaded or cleared a checkpoint: the layer-removal card measures it (app.setPretrained). */
    pretrainedChanged() {
      const card = cards.find((c) => c.exp.id === 'layers');
      if (card && lastState) app.enqueue(() => runCard(card, lastState).then(showTotal));
    },
    async update(s) {
      if (!s.encoder) return;
      const key = JSON.stringify([s.base, s.ids, s.plugins]);
      if (key === lastKey) return;
      lastKey = key;
      lastState = s;
      for (const card of cards) await runCard(card, s);
      showTotal();
    },
  };
}
