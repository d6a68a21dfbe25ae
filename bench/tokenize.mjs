// Time and peak memory of tokenizing one long text: 1 MB and 10 MB of English (the Debian
// licence texts repeated) and of mixed text (accents, CJK, emoji: tests/tokenizers/corpus.json
// repeated), with bert-base-uncased's WordPiece and gpt2's byte-level BPE:
//
//   node bench/tokenize.mjs [--runs 3]
//
// Each measurement is a fresh child process (tests/tokenizers/measure.mjs: its peak RSS is the
// process's own, the runtime and the vocabulary included), with the young generation pinned at
// 16 MB as Node 20 sizes it (newer Nodes size it from the machine's memory). Medians of the runs;
// the rows are a markdown table for bench/RESULTS.md.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const i = process.argv.indexOf('--runs');
const RUNS = i > 0 ? Number(process.argv[i + 1]) : 3;
if (!Number.isInteger(RUNS) || RUNS < 1) {
  console.error('usage: node bench/tokenize.mjs [--runs N] (N: an integer, at least 1)');
  process.exit(2);
}
const MEASURE = fileURLToPath(new URL('../tests/tokenizers/measure.mjs', import.meta.url));
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

function measure(args) {
  const r = spawnSync(process.execPath, ['--max-semi-space-size=16', MEASURE, ...args], { encoding: 'utf8', timeout: 300_000 });
  if (r.status !== 0) throw new Error(`measure ${args.join(' ')}: ${r.error ?? r.stderr}`);
  return JSON.parse(r.stdout);
}

console.log(`Node ${process.version}; medians of ${RUNS} fresh processes each\n`);
console.log('| tokenizer | text | characters | tokens | encode | chars/s | peak RSS (process) | RSS before encode |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|');
for (const fixture of ['bert', 'gpt2']) {
  for (const kind of ['english', 'mixed']) {
    for (const mb of ['1', '10']) {
      const runs = Array.from({ length: RUNS }, () => measure([fixture, mb, kind]));
      const ms = median(runs.map((r) => r.encodeMs)),
        peak = median(runs.map((r) => r.peakRssMB)),
        before = median(runs.map((r) => r.rssBeforeMB));
      const { chars, tokens } = runs[0];
      console.log(
        `| ${fixture === 'bert' ? 'bert-base-uncased (WordPiece)' : 'gpt2 (byte-level BPE)'} | ${mb} MB ${kind} | ${chars.toLocaleString('en')} | ${tokens.toLocaleString('en')} | ` +
          `${(ms / 1000).toFixed(2)} s | ${(((chars / ms) * 1000) / 1e6).toFixed(2)} M | ${peak} MB | ${before} MB |`,
      );
    }
  }
}
