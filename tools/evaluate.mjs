// The trained models' accuracy table, through swapformer's own forward pass.
//
//   node tools/evaluate.mjs [--count N] [--mlm-only]     (npm run evaluate)
//
// For every model in models/index.json: token and sequence accuracy on fresh
// random inputs at the training length (T = 32 tokens with the markers), 2x
// and 4x that; the same weights with the position plugin swapped to 'none'
// (the ablation: an order-dependent task must collapse); and, for RoPE, the
// context-extension variants (positionOptions.scaling linear / ntk / yarn with
// factor = T / 32) at 2x and 4x. Learned positions at 2x and 4x are refused
// with SEQUENCE_TOO_LONG: reported as such, never as a number.
// Then the masked-LM BERT (models/wordnet-bert, tools/evaluate-mlm.mjs): its
// fill-mask accuracy on the held-out sentences with its learned positions,
// without them, and with other plugins swapped in ("mlm" in results.json).
// Writes models/RESULTS.md and models/results.json (read by the demo).
import { readFileSync, writeFileSync } from 'node:fs';
import { createEncoder, loadModel } from '../bindings/index.js';
import { accuracy, sampleInputs, TASKS } from '../models/tasks.js';
import { evaluateMlm } from './evaluate-mlm.mjs';

const MODELS = new URL('../models/', import.meta.url);

export function ropeVariants(T, trainT) {
  const factor = T / trainT;
  return {
    linear: { type: 'linear', factor },
    ntk: { type: 'ntk', factor },
    yarn: { type: 'yarn', factor, originalMaxLen: trainT },
  };
}

async function measure(encoder, task, T, count, seed, symbols) {
  try {
    return accuracy(encoder, task, sampleInputs(count, T, symbols, seed));
  } catch (e) {
    if (e.code === 'SEQUENCE_TOO_LONG') return { refused: e.code, message: e.message };
    throw e;
  }
}

/** Evaluates every model (or those whose name is in only); count inputs per length. */
export async function evaluate({ count = 256, only } = {}) {
  const index = JSON.parse(readFileSync(new URL('index.json', MODELS), 'utf8'));
  const trainT = index.trainLengths.max, lengths = [trainT, 2 * trainT, 4 * trainT];
  const symbols = index.symbols.tokens.length;
  const rows = [];
  for (const m of index.models) {
    if (only && !only.includes(m.name)) continue;
    const enc = await loadModel(readFileSync(new URL(m.file, MODELS)));
    const seed = (k) => 1000 * TASKS.indexOf(m.task) + k; // the same inputs for every plugin of a task
    const row = { name: m.name, task: m.task, position: m.position, norm: m.norm, normPlacement: m.normPlacement, accuracy: {} };
    for (const T of lengths) row.accuracy[T] = await measure(enc, m.task, T, count, seed(T), symbols);
    // ablation: the same weights, no positions
    const weights = enc.getWeights();
    delete weights['embed.positions'];
    const ablated = await createEncoder({ ...enc.config, position: 'none', positionOptions: {} }, { weights });
    row.ablatedToNone = await measure(ablated, m.task, trainT, count, seed(trainT), symbols);
    ablated.dispose();
    if (m.position === 'rope') {
      row.ropeScaling = {};
      for (const T of lengths.slice(1))
        for (const [type, scaling] of Object.entries(ropeVariants(T, trainT))) {
          const scaled = await createEncoder({ ...enc.config, positionOptions: { ...enc.config.positionOptions, scaling } }, { weights });
          (row.ropeScaling[type] ??= {})[T] = await measure(scaled, m.task, T, count, seed(T), symbols);
          scaled.dispose();
        }
    }
    enc.dispose();
    rows.push(row);
  }
  return { trainT, lengths, count, rows };
}

const pct = (a) => (a.refused ? 'SEQUENCE_TOO_LONG' : `${(100 * a.token).toFixed(1)}% (${(100 * a.sequence).toFixed(0)}%)`);

export function markdown({ trainT, lengths, count, rows, mlm }) {
  const out = [];
  out.push('# Trained models: accuracy through swapformer', '');
  out.push(`Written by \`npm run evaluate\` (tools/evaluate.mjs), through swapformer's own forward pass; do not edit by hand.`);
  out.push(`Per-token accuracy over the content positions of ${count} fresh random inputs per cell, and in brackets the fraction of`);
  out.push(`inputs entirely right. Lengths count the '^' and '$' markers; training used lengths 8..${trainT}. "ablated" runs the same`);
  out.push(`weights with position 'none'. Learned positions have no row past maxLen = ${trainT}: longer inputs are refused.`, '');
  out.push(`| model | norm | ${lengths.map((T, i) => `T=${T}${i ? ` (${T / trainT}x)` : ' (1x)'}`).join(' | ')} | ablated to none, T=${trainT} |`);
  out.push(`| :-- | :-- |${lengths.map(() => ' --: |').join('')} --: |`);
  for (const r of rows) {
    out.push(`| ${r.name} | ${r.normPlacement}-${r.norm} | ${lengths.map((T) => pct(r.accuracy[T])).join(' | ')} | ${pct(r.ablatedToNone)} |`);
  }
  const rope = rows.filter((r) => r.ropeScaling);
  if (rope.length) {
    out.push('', '## RoPE context extension on the same weights', '');
    out.push(`positionOptions.scaling with factor = T / ${trainT}; yarn with originalMaxLen ${trainT} and betaFast 32, betaSlow 1.`, '');
    const ext = lengths.slice(1);
    out.push(`| model | scaling | ${ext.map((T) => `T=${T} (${T / trainT}x)`).join(' | ')} |`);
    out.push(`| :-- | :-- |${ext.map(() => ' --: |').join('')}`);
    for (const r of rope) {
      out.push(`| ${r.name} | none | ${ext.map((T) => pct(r.accuracy[T])).join(' | ')} |`);
      for (const [type, byT] of Object.entries(r.ropeScaling)) out.push(`| ${r.name} | ${type} | ${ext.map((T) => pct(byT[T])).join(' | ')} |`);
    }
  }
  if (mlm) out.push('', ...mlmMarkdown(mlm));
  return out.join('\n') + '\n';
}

/** The masked-LM section: accuracy per variant, then the word-order examples' best tokens. */
function mlmMarkdown(mlm) {
  const p1 = (x) => `${(100 * x).toFixed(1)}%`;
  const out = [`## Masked-LM BERT (${mlm.name}): fill-mask on held-out sentences`, ''];
  out.push(`${mlm.items} held-out WordNet segments (synsets never trained on); ${mlm.how}; the same weights with each position`);
  out.push(`scheme (Pretrained.withConfig). Always answering the most common word ('${mlm.baseline.token}') gets ${p1(mlm.baseline.top1)}.`, '');
  out.push('| positions | top-1 | top-5 |', '| :-- | --: | --: |');
  for (const v of Object.values(mlm.variants)) out.push(`| ${v.label} | ${p1(v.top1)} | ${p1(v.top5)} |`);
  out.push('', 'Word order: the best three tokens at the mask (probabilities), per variant.', '');
  const names = Object.keys(mlm.variants);
  out.push(`| text | ${names.map((k) => mlm.variants[k].label).join(' | ')} |`, `| :-- |${names.map(() => ' :-- |').join('')}`);
  for (const ex of mlm.examples) {
    ex.texts.forEach((text, i) => out.push(`| \`${text}\` | ${names.map((k) => ex.variants[k][i].map((b) => `${b.token} ${b.score.toFixed(2)}`).join(', ')).join(' | ')} |`));
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const i = process.argv.indexOf('--count'), count = i > 0 ? Number(process.argv[i + 1]) : 256;
  const t0 = performance.now();
  // --mlm-only: measure the masked-LM BERT again and keep the other rows as they are
  const result = process.argv.includes('--mlm-only')
    ? { ...JSON.parse(readFileSync(new URL('results.json', MODELS), 'utf8')), mlm: await evaluateMlm() }
    : { ...(await evaluate({ count })), mlm: await evaluateMlm() };
  writeFileSync(new URL('results.json', MODELS), JSON.stringify(result, null, 1) + '\n');
  const md = markdown(result);
  writeFileSync(new URL('RESULTS.md', MODELS), md);
  process.stdout.write(md);
  console.log(`\n(${((performance.now() - t0) / 1000).toFixed(1)} s; wrote models/RESULTS.md and models/results.json)`);
}
