// The command line as a user runs it: bin/swapformer.js in a child process
// (every run with a timeout, so a hang fails), its exit codes, its one-line
// errors, and what it writes, read back by independent readers: numpy (Debian's
// /usr/bin/python3) for .npy, Python's csv module writing the .csv inputs,
// apache-arrow and hyparquet for .arrow and .parquet; the vectors compared
// bit for bit with Pretrained.embed in this process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, appendFileSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadPretrained, loadModel } from '../bindings/index.js';
import { progress } from '../bin/cli/progress.js';
import { downloadProgress } from '../bin/cli/io.js';
import { npyHeader, float32Text } from '../bin/cli/outputs.js';
import { REPO, TIMEOUT, cli as runCli, killMidRun as killRun, oneLine } from './cli-run.js';

const FIX = path.join(REPO, 'tests/pretrained');
const MINILM = path.join(FIX, 'bert-minilm');
const PY = '/usr/bin/python3';
const tmp = mkdtempSync(path.join(tmpdir(), 'swapformer-cli-'));
const at = (f) => path.join(tmp, f);
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

/** Runs the CLI in the test folder: {status, stdout, stderr} (a timeout fails the test). */
const cli = (args, options = {}) => runCli(args, { cwd: tmp, ...options });

const python = (code, ...args) => {
  const r = spawnSync(PY, ['-c', code, ...args], { encoding: 'utf8', timeout: TIMEOUT });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
};
const numpy = spawnSync(PY, ['-c', 'import numpy'], { timeout: TIMEOUT }).status === 0;

const sha = (bytes) => createHash('sha256').update(bytes).digest('hex');
const bytesOf = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
const readJsonl = (f) =>
  readFileSync(f, 'utf8')
    .trimEnd()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

// texts that exercise the readers: commas, quotes, line breaks (csv), unicode, an empty one
const TEXTS = ['hello world', 'a text, with a comma', 'she said "hi" twice', 'two\nlines', 'café naïve 日本', '', '  padded  ', 'the last one'];

let model;
const embedIn = async (texts, options, load) => {
  const m = load ? await loadPretrained(MINILM, { threads: 1, ...load }) : (model ??= await loadPretrained(MINILM, { threads: 1 }));
  try {
    return m.embed(texts, options);
  } finally {
    if (load) m.dispose();
  }
};

test("usage: no arguments (exit 2), --help, --version, help <command>, every command's --help", async () => {
  const none = await cli([]);
  assert.equal(none.status, 2);
  assert.match(none.stderr, /^usage: swapformer <command>/);
  for (const c of ['convert', 'embed', 'info', 'serve', 'help']) assert.match(none.stderr, new RegExp(`\\n  ${c} `));
  assert.match(none.stderr, /0 done, 1 runtime error, 2 usage error, 130 interrupted/);
  const pkg = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8'));
  const [version, help, helpEmbed, embedHelp, convertHelp, infoHelp] = await Promise.all([
    cli(['--version']),
    cli(['--help']),
    cli(['help', 'embed']),
    cli(['embed', '--help']),
    cli(['convert', '-h']),
    cli(['info', '--help']),
  ]);
  assert.equal(version.status, 0);
  assert.equal(version.stdout.split('\n')[0], pkg.version);
  assert.match(version.stdout.split('\n')[1], /^backend: (native \S+ \(\d+ threads?; q8 .+\), \/\S+\.node|wasm (relaxed-simd|simd128) \(.*)$/);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^usage: swapformer <command>/);
  assert.equal(helpEmbed.status, 0);
  assert.equal(helpEmbed.stdout, embedHelp.stdout);
  for (const o of [
    '--output',
    '--format',
    '--field',
    '--column',
    '--id-field',
    '--prompt-name',
    '--prompt',
    '--dtype',
    '--threads',
    '--batch-size',
    '--[no-]normalize',
    '--dimensions',
    '--precision',
    '--max-length',
    '--resume',
    '--progress-every',
  ])
    assert.ok(embedHelp.stdout.includes(o), `embed --help lists ${o}`);
  assert.equal(convertHelp.status, 0);
  for (const o of ['--dtype f32|f16|q8|source', '--revision', '--hub-url', 'ONNX']) assert.ok(convertHelp.stdout.includes(o), `convert --help tells ${o}`);
  assert.match(convertHelp.stdout, /--revision R +for a Hub id: the branch, tag or commit/);
  assert.match(convertHelp.stdout, /--hub-url URL +for a Hub id: the Hub to read from/);
  assert.equal(infoHelp.status, 0);
  assert.match(infoHelp.stdout, /--json/);
});

test('usage errors exit 2 and name the mistake, with a "did you mean" where one is close', async () => {
  const cases = [
    [['embd'], /unknown command 'embd' \(did you mean embed\?\)/],
    [['help', 'infp'], /unknown command 'infp' \(did you mean info\?\)/],
    [['--verison'], /'--verison' is not a command.*did you mean --version\?/],
    [['convert', MINILM], /convert needs <out\.safetensors>/],
    [['convert', MINILM, 'x.safetensors', '--dtyp', 'f16'], /unknown option '--dtyp' for convert \(did you mean --dtype\?\)/],
    [['convert', MINILM, 'x.safetensors', '--dtype', 'f61'], /--dtype must be one of f32, f16, q8, source, got 'f61' \(did you mean f16\?\)/],
    [['convert', MINILM, 'x.safetensors', 'extra'], /convert takes 2 arguments, got 3: 'extra' is extra/],
    [['embed', MINILM, 'in.txt'], /embed needs --output <FILE>/],
    [['embed', MINILM, 'in.txt', '-o', 'x.npy', '--batch-size', '0'], /--batch-size must be an integer >= 1, got '0'/],
    [['embed', MINILM, 'in.txt', '-o', 'x.npy', '--threads', 'two'], /--threads must be an integer >= 1, got 'two'/],
    [['embed', MINILM, 'in.txt', '-o', 'x.npy', '--batchsize', '8'], /unknown option '--batchsize' for embed \(did you mean --batch-size\?\)/],
    [['embed', MINILM, 'in.txt', '-o', 'x.npy', '--no-resume'], /unknown option '--no-resume'/],
    [['embed', MINILM, 'in.txt', '-o', 'x.npy', '--precision', 'int4'], /--precision must be one of float32, int8, uint8, binary, ubinary/],
    [['embed', MINILM, 'in.txt', '-o', 'x.npy', '-o', 'y.npy'], /--output is given twice/],
    [['embed', MINILM, 'in.txt', '-o', 'x.npz'], /cannot tell the output format of 'x\.npz'/],
    [['embed', MINILM, 'in.dat', '-o', 'x.npy'], /cannot tell the format of 'in\.dat'.*--format/],
    [['embed', MINILM, 'in.txt', '-o', 'x.npy', '--field', 'body'], /--field is for \.jsonl input/],
    [['embed', MINILM, 'in.jsonl', '-o', 'x.npy', '--id-field', 'id'], /a \.npy holds the vectors alone/],
    [['convert', MINILM, 'x.bin'], /the output is a \.safetensors file, got 'x\.bin'/],
    [['info'], /info needs <model>/],
    [['info', MINILM, '--jsn'], /unknown option '--jsn' for info \(did you mean --json\?\)/],
  ];
  const results = await Promise.all(cases.map(([args]) => cli(args)));
  results.forEach((r, i) => {
    assert.equal(r.status, 2, `${cases[i][0].join(' ')}: exit 2\n${r.stderr}`);
    oneLine(r, cases[i][1]);
    assert.match(r.stderr, /\nusage: swapformer |\(swapformer help lists the commands\)/, 'the usage follows');
  });
});

test('runtime errors exit 1 as one line: missing files named, SwapformerErrors as "swapformer: CODE: message"', async () => {
  writeFileSync(at('ok.txt'), 'a\n');
  mkdirSync(at('adir'), { recursive: true });
  const cases = [
    [['embed', MINILM, at('missing.txt'), '-o', at('x.npy')], new RegExp(`${at('missing.txt')}: no such file or directory$`)],
    [['embed', MINILM, at('adir'), '--format', 'txt', '-o', at('x.npy')], new RegExp(`${at('adir')}: is a directory`)],
    [['embed', MINILM, at('ok.txt'), '-o', at('nodir/x.npy')], /nodir: no such directory \(for the output/],
    [
      ['embed', MINILM, at('ok.txt'), '-o', at('adir.npy'), '--prompt-name', 'nope'],
      /^swapformer: BAD_ARGUMENT: --prompt-name 'nope' is not one of this model's prompts/,
    ],
    [['embed', at('nomodel'), at('ok.txt'), '-o', at('x.npy')], /^swapformer: NOT_FOUND: source: no directory '.*nomodel'/],
    [['info', at('nomodel')], /^swapformer: NOT_FOUND: .*nomodel/],
    [['convert', at('nomodel'), at('x.safetensors')], /^swapformer: NOT_FOUND: .*nomodel/],
    [['convert', path.join(FIX, 'bert-pytorch-bin'), at('x.safetensors')], /^swapformer: UNSUPPORTED_MODEL: .*pytorch_model\.bin.*safe_serialization=True/],
    [['convert', path.join(MINILM, 'config.json'), at('x.safetensors')], /config\.json: is a file; the source is a model folder/],
    [
      ['convert', path.join(MINILM, 'model.safetensors'), at('x.safetensors')],
      /model\.safetensors: a \.safetensors file that swapformer convert did not write/,
    ],
  ];
  const results = await Promise.all(cases.map(([args]) => cli(args)));
  results.forEach((r, i) => {
    assert.equal(r.status, 1, `${cases[i][0].join(' ')}: exit 1\n${r.stderr}`);
    oneLine(r, cases[i][1]);
    assert.equal(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr}`);
  });
  assert.ok(!existsSync(at('x.safetensors')) && !existsSync(at('x.npy')), 'nothing written');
});

test('convert: f32 bit-identical; a converted file converted again (f16, q8, back from q8) as from the folder; an ONNX-only folder refused', async () => {
  const f32 = at('m-f32.safetensors'),
    f16 = at('m-f16.safetensors'),
    q8 = at('m-q8.safetensors');
  const again16 = at('again-f16.safetensors'),
    again8 = at('again-q8.safetensors'),
    q8q8 = at('q8-q8.safetensors'),
    back = at('q8-f32.safetensors');
  const runs = await Promise.all(
    [
      [MINILM, f32],
      [MINILM, f16, 'f16'],
      [MINILM, q8, 'q8'],
    ].map(([s, o, d]) => cli(['convert', s, o, ...(d ? ['--dtype', d] : [])])),
  );
  for (const r of runs) assert.equal(r.status, 0, r.stderr);
  assert.match(runs[0].stdout, /m-f32\.safetensors: bert \(2 layers, dModel 32, position learned\), .* MB, f32/);
  const again = await Promise.all(
    [
      [f32, again16, 'f16'],
      [f32, again8, 'q8'],
      [q8, q8q8, 'q8'],
      [q8, back, 'f32'],
    ].map(([s, o, d]) => cli(['convert', s, o, '--dtype', d])),
  );
  for (const r of again) assert.equal(r.status, 0, r.stderr);
  // the metadata and the tensors written again: the bytes of a conversion from the folder
  assert.ok(readFileSync(again16).equals(readFileSync(f16)), 'f32 file -> f16: the bytes of folder -> f16');
  assert.ok(readFileSync(again8).equals(readFileSync(q8)), 'f32 file -> q8: the bytes of folder -> q8');
  assert.ok(readFileSync(q8q8).equals(readFileSync(q8)), 'q8 file -> q8: unchanged');
  const texts = ['converted', 'and converted again'];
  const want = await embedIn(texts);
  const fromFile = await loadPretrained(f32, { threads: 1 });
  assert.deepEqual(bytesOf(fromFile.embed(texts).data), bytesOf(want.data), "f32 file: the folder's embeddings, bit for bit");
  fromFile.dispose();
  // q8 -> f32: the dequantized weights (what q8 holds) as float32
  const a = await loadModel(readFileSync(q8), { dtype: 'f32', threads: 1 }),
    b = await loadModel(readFileSync(back), { threads: 1 });
  assert.equal(b.dtype, 'f32');
  const wa = a.getWeights(),
    wb = b.getWeights();
  for (const k of Object.keys(wa)) assert.deepEqual(bytesOf(wb[k]), bytesOf(wa[k]), k);
  a.dispose();
  b.dispose();
  const p = await loadPretrained(back, { threads: 1 });
  assert.equal(p.embed(texts).shape[1], 32, 'q8 -> f32 keeps the tokenizer and the recipe');
  p.dispose();

  // ONNX weights only: refused, saying ONNX is not a source format and how to get safetensors
  const onnx = at('onnx-only');
  mkdirSync(path.join(onnx, 'onnx'), { recursive: true });
  for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json']) cpSync(path.join(MINILM, f), path.join(onnx, f));
  writeFileSync(path.join(onnx, 'onnx/model.onnx'), 'not really');
  const r = await cli(['convert', onnx, at('onnx.safetensors')]);
  assert.equal(r.status, 1);
  oneLine(r, /holds ONNX weights only \(onnx\/model\.onnx\): ONNX is not a source format.*safetensors.*safe_serialization=True/);
  assert.ok(!existsSync(at('onnx.safetensors')));
});

/** A .npy read by numpy: its shape, dtype, whether np.save writes the same bytes, and the sha256 of its data. */
function readNpy(file) {
  const out = python(
    `import numpy as np, io, hashlib, sys
a = np.load(sys.argv[1]); b = io.BytesIO(); np.save(b, a)
print(a.shape[0], a.shape[1], a.dtype.str, b.getvalue() == open(sys.argv[1], 'rb').read(), hashlib.sha256(a.tobytes()).hexdigest())`,
    file,
  );
  const [n, d, dtype, same, hash] = out.split(' ');
  return { shape: [Number(n), Number(d)], dtype, same: same === 'True', hash };
}

test(
  "embed: .txt, .jsonl, .csv (written by Python's csv module) and stdin, into .npy (read by numpy), .jsonl, .arrow, .parquet: the bits of Pretrained.embed",
  { skip: !numpy && 'no numpy in /usr/bin/python3 (apt-get install python3-numpy)' },
  async () => {
    const lineTexts = TEXTS.filter((t) => !t.includes('\n'));
    writeFileSync(at('in.txt'), `\uFEFF${lineTexts.join('\r\n')}\r\n`); // a BOM and CRLF: read as the lines
    writeFileSync(at('in.jsonl'), `${TEXTS.map((t, i) => JSON.stringify({ body: t, doc: `d${i}`, n: i })).join('\n')}\n\n`);
    python(
      `import csv, json, sys
with open(sys.argv[1], 'w', newline='') as f:
    w = csv.writer(f); w.writerow(['doc', 'text', 'other'])
    for i, t in enumerate(json.loads(sys.argv[2])): w.writerow([f'd{i}', t, 'x,"y"'])`,
      at('in.csv'),
      JSON.stringify(TEXTS),
    );
    const want = await embedIn(TEXTS),
      wantLines = await embedIn(lineTexts);
    const ids = TEXTS.map((_, i) => `d${i}`);
    const r = await Promise.all([
      cli(['embed', MINILM, at('in.txt'), '-o', at('txt.npy'), '-q']),
      cli(['embed', MINILM, at('in.jsonl'), '--field', 'body', '-o', at('jsonl.npy'), '-q']),
      cli(['embed', MINILM, at('in.csv'), '-o', at('csv.npy'), '-q']),
      cli(['embed', MINILM, at('in.csv'), '--column', '1', '--id-field', 'doc', '-o', at('csv.jsonl'), '-q']),
      cli(['embed', MINILM, '-', '--format', 'jsonl', '--field', 'body', '--id-field', 'n', '-o', at('stdin.jsonl'), '-q'], {
        input: readFileSync(at('in.jsonl')),
      }),
      cli(['embed', MINILM, '-', '-o', at('stdin.npy'), '-q'], { input: lineTexts.join('\n') }),
      cli(['embed', MINILM, at('in.jsonl'), '--field', 'body', '--id-field', 'doc', '-o', at('out.arrow'), '-q']),
      cli(['embed', MINILM, at('in.csv'), '--id-field', 'doc', '-o', at('out.parquet'), '-q']),
      cli(['embed', MINILM, at('in.txt'), '-o', at('txt.jsonl'), '-q']),
    ]);
    r.forEach((x) => assert.equal(x.status, 0, x.stderr));
    for (const [f, w] of [
      ['txt.npy', wantLines],
      ['jsonl.npy', want],
      ['csv.npy', want],
      ['stdin.npy', wantLines],
    ]) {
      const n = readNpy(at(f));
      assert.deepEqual(n.shape, w.shape, f);
      assert.equal(n.dtype, '<f4', f);
      assert.ok(n.same, `${f}: numpy's np.save writes the same bytes (header included)`);
      assert.equal(n.hash, sha(bytesOf(w.data)), `${f}: the data are embed's bytes`);
    }
    const jsonRows = (f) => readJsonl(at(f));
    for (const [f, w, wantIds] of [
      ['csv.jsonl', want, ids],
      ['stdin.jsonl', want, TEXTS.map((_, i) => i)],
      ['txt.jsonl', wantLines, lineTexts.map((_, i) => i)],
    ]) {
      const rows = jsonRows(f);
      assert.deepEqual(
        rows.map((x) => x.id),
        wantIds,
        `${f}: ids`,
      );
      assert.deepEqual(bytesOf(Float32Array.from(rows.flatMap((x) => x.embedding))), bytesOf(w.data), `${f}: the float32 values`);
    }
    const A = await import('apache-arrow');
    const t = A.tableFromIPC(readFileSync(at('out.arrow')));
    assert.equal(t.numRows, TEXTS.length);
    assert.match(t.schema.toString(), /id: Utf8, .*embedding: FixedSizeList\[32\]<Float32>/);
    assert.deepEqual(t.getChild('id').toArray(), ids);
    const emb = t.getChild('embedding');
    assert.deepEqual(bytesOf(new Float32Array(TEXTS.flatMap((_, i) => [...emb.get(i).toArray()]))), bytesOf(want.data));
    const { parquetReadObjects, asyncBufferFromFile } = await import('hyparquet');
    const pq = await parquetReadObjects({ file: await asyncBufferFromFile(at('out.parquet')) });
    assert.deepEqual(
      pq.map((x) => x.id),
      ids,
    );
    assert.deepEqual(bytesOf(Float32Array.from(pq.flatMap((x) => x.embedding))), bytesOf(want.data));
    for (const f of readdirSync(tmp)) assert.doesNotMatch(f, /\.partial|\.tmp$/, 'no partial or temporary file left');
  },
);

test(
  'embed options: --prompt-name, --prompt, --dimensions, --no-normalize, --max-length, --dtype q8, every --precision: the bits of Pretrained.embed with them',
  { skip: !numpy && 'no numpy' },
  async () => {
    const bge = path.join(FIX, 'bert-bge-mlm');
    writeFileSync(at('o.txt'), `${TEXTS.filter((t) => !t.includes('\n')).join('\n')}\n`);
    const texts = readFileSync(at('o.txt'), 'utf8').trimEnd().split('\n');
    const cases = [
      [bge, ['--prompt-name', 'query'], { promptName: 'query' }],
      [bge, ['--prompt', 'search: '], { prompt: 'search: ' }],
      [MINILM, ['--dimensions', '16', '--no-normalize'], { dimensions: 16, normalize: false }],
      [MINILM, ['--max-length', '4'], { maxLength: 4 }],
      [MINILM, ['--dtype', 'q8'], {}, { dtype: 'q8' }],
      ...['int8', 'uint8', 'binary', 'ubinary'].map((p) => [MINILM, ['--precision', p], { precision: p }]),
    ];
    const outs = cases.map((_, i) => at(`opt${i}.npy`));
    const runs = await Promise.all(cases.map(([m, args], i) => cli(['embed', m, at('o.txt'), '-o', outs[i], '-q', '--batch-size', '3', ...args])));
    for (let i = 0; i < cases.length; i++) {
      assert.equal(runs[i].status, 0, runs[i].stderr);
      const [m, , options, load] = cases[i];
      const p = await loadPretrained(m, { threads: 1, ...load });
      const w = p.embed(texts, options);
      p.dispose();
      const n = readNpy(outs[i]);
      assert.deepEqual(n.shape, w.shape, cases[i][1].join(' '));
      assert.equal(n.dtype, w.data instanceof Float32Array ? '<f4' : w.data instanceof Int8Array ? '|i1' : '|u1', cases[i][1].join(' '));
      assert.ok(n.same, `${cases[i][1].join(' ')}: numpy writes the same header`);
      assert.equal(n.hash, sha(bytesOf(w.data)), `${cases[i][1].join(' ')}: the bits of embed`);
    }
    // int8 into every format: one set of ranges over the whole corpus, whatever the output
    const w8 = await embedIn(texts, { precision: 'int8' });
    const r = await Promise.all(
      ['q.jsonl', 'q.parquet', 'q.arrow'].map((f) => cli(['embed', MINILM, at('o.txt'), '-o', at(f), '-q', '--precision', 'int8', '--batch-size', '2'])),
    );
    r.forEach((x) => assert.equal(x.status, 0, x.stderr));
    assert.deepEqual(Int8Array.from(readJsonl(at('q.jsonl')).flatMap((x) => x.embedding)), w8.data);
    const { parquetReadObjects, asyncBufferFromFile } = await import('hyparquet');
    assert.deepEqual(Int8Array.from((await parquetReadObjects({ file: await asyncBufferFromFile(at('q.parquet')) })).flatMap((x) => x.embedding)), w8.data);
    const A = await import('apache-arrow');
    const t = A.tableFromIPC(readFileSync(at('q.arrow')));
    assert.equal(t.numRows, texts.length);
    assert.deepEqual(new Int8Array(texts.flatMap((_, i) => [...t.getChild('embedding').get(i).toArray()])), w8.data);
  },
);

test('embed --threads 2 writes the bytes of --threads 1', async () => {
  const lines = Array.from({ length: 300 }, (_, i) => `text number ${i} ${'word '.repeat(i % 17)}`);
  writeFileSync(at('t.txt'), `${lines.join('\n')}\n`);
  const [one, two] = await Promise.all(
    [1, 2].map((n) => cli(['embed', path.join(FIX, 'nomic-embed'), at('t.txt'), '-o', at(`t${n}.npy`), '--threads', String(n), '-q'])),
  );
  assert.equal(one.status, 0, one.stderr);
  assert.equal(two.status, 0, two.stderr);
  assert.ok(readFileSync(at('t1.npy')).equals(readFileSync(at('t2.npy'))));
});

const killMidRun = (args, after, signal) => killRun(args, after, signal, { cwd: tmp });

test('embed --resume after SIGKILL or Ctrl-C (exit 130): the final file has the bytes of an uninterrupted run (.npy, .jsonl, int8 .parquet); a cut last record is dropped', async () => {
  const words = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'];
  const lines = Array.from({ length: 2000 }, (_, i) => Array.from({ length: 3 + (i % 13) }, (_, k) => words[(i * 7 + k * 3) % words.length]).join(' '));
  writeFileSync(at('big.txt'), `${lines.join('\n')}\n`);
  const formats = [
    ['r.npy', []],
    ['r.jsonl', []],
    ['r.parquet', ['--precision', 'int8']],
  ];
  const common = ['--threads', '1', '--batch-size', '16'];
  // uninterrupted runs, then killed runs resumed
  const full = await Promise.all(formats.map(([f, extra]) => cli(['embed', MINILM, at('big.txt'), '-o', at(`full-${f}`), '-q', ...common, ...extra])));
  full.forEach((x) => assert.equal(x.status, 0, x.stderr));
  await Promise.all(
    formats.map(async ([f, extra]) => {
      const out = at(f);
      const killed = await killMidRun(['embed', MINILM, at('big.txt'), '-o', out, '--progress-every', '300', ...common, ...extra], 300);
      assert.equal(killed.signal, 'SIGKILL', killed.stderr);
      assert.ok(!existsSync(out), `${f}: no output before the end`);
      assert.ok(statSync(`${out}.partial`).size > 0, `${f}: records in the partial file`);
      // a record cut by the kill: the resume drops it
      appendFileSync(`${out}.partial`, f.endsWith('.jsonl') ? '{"id":99999,"embedding":[0.1,0.2' : Buffer.alloc(50, 7));
      const again = await cli(['embed', MINILM, at('big.txt'), '-o', out, '--resume', ...common, ...extra]);
      assert.equal(again.status, 0, again.stderr);
      assert.match(again.stderr, /resuming: \d+ records already in/);
      assert.ok(readFileSync(out).equals(readFileSync(at(`full-${f}`))), `${f}: resumed = uninterrupted, byte for byte`);
      assert.ok(!existsSync(`${out}.partial`) && !existsSync(`${out}.partial.json`), `${f}: partial files removed`);
    }),
  );
  // Ctrl-C: the batch in progress finished, the partial files kept, exit 130; --resume completes the run
  const int = at('i.npy');
  const stopped = await killMidRun(['embed', MINILM, at('big.txt'), '-o', int, '--progress-every', '300', ...common], 300, 'SIGINT');
  assert.equal(stopped.status, 130, stopped.stderr);
  assert.match(stopped.stderr, /swapformer: interrupted \(SIGINT\): \d+ records in .*i\.npy\.partial; the same command with --resume continues\n$/);
  const n = Number(/: (\d+) records in/.exec(stopped.stderr)[1]);
  assert.equal(statSync(`${int}.partial`).size, 128 + n * 32 * 4, 'every record counted is whole in the partial file');
  const resumed = await cli(['embed', MINILM, at('big.txt'), '-o', int, '--resume', ...common]);
  assert.equal(resumed.status, 0, resumed.stderr);
  assert.ok(readFileSync(int).equals(readFileSync(at('full-r.npy'))), 'interrupted then resumed = uninterrupted');

  // a partial file is not overwritten without --resume, nor resumed with other settings
  const out = at('s.npy');
  const k = await killMidRun(['embed', MINILM, at('big.txt'), '-o', out, '--progress-every', '200', ...common], 200);
  assert.equal(k.signal, 'SIGKILL');
  const [fresh, other] = await Promise.all([
    cli(['embed', MINILM, at('big.txt'), '-o', out, ...common]),
    cli(['embed', MINILM, at('big.txt'), '-o', out, '--resume', '--dimensions', '8', ...common]),
  ]);
  assert.equal(fresh.status, 1);
  oneLine(fresh, /s\.npy\.partial exists: an interrupted run of this output; --resume continues it/);
  assert.equal(other.status, 1);
  oneLine(other, /--resume: .*s\.npy\.partial was written with dimensions = null, this run has 8/);
  // cut inside the npy header row count: resume of a complete output is nothing to do
  const done = await cli(['embed', MINILM, at('big.txt'), '-o', at('full-r.npy'), '--resume']);
  assert.equal(done.status, 0);
  assert.match(done.stderr, /complete \(no .*partial to resume\): nothing to do/);
  truncateSync(`${out}.partial`, 0);
  const badHeader = await cli(['embed', MINILM, at('big.txt'), '-o', out, '--resume', ...common]);
  assert.equal(badHeader.status, 1);
  oneLine(badHeader, /not the partial file of this run/);
});

test('embed --vectors sparse | colbert: JSON lines and Parquet (read by hyparquet) with the values of Pretrained.embed; --query, --max-active-dims; resumable; refusals', async () => {
  const R = (name) => path.join(REPO, 'tests/retrieval', name);
  const texts = ['the quick brown fox', 'what is a transformer?', '  hello world  ', 'café naïve'];
  writeFileSync(at('v.jsonl'), `${texts.map((t, i) => JSON.stringify({ text: t, id: i === 1 ? 'x"y' : 10 ** 18 + i })).join('\n')}\n`);
  writeFileSync(at('v.txt'), `${texts.join('\n')}\n`);
  const r = await Promise.all([
    cli(['embed', R('splade-bert'), at('v.txt'), '-o', at('sp.jsonl'), '-q']),
    cli(['embed', R('splade-bert'), at('v.jsonl'), '--id-field', 'id', '--max-active-dims', '3', '-o', at('sp.parquet'), '-q']),
    cli(['embed', R('colbert-pylate-bert'), at('v.txt'), '--query', '-o', at('cq.jsonl'), '-q']),
    cli(['embed', R('colbert-pylate-bert'), at('v.jsonl'), '--id-field', 'id', '-o', at('cd.parquet'), '-q']),
    cli(['embed', R('bge-m3'), at('v.txt'), '--vectors', 'sparse', '-o', at('m3.jsonl'), '-q']),
  ]);
  r.forEach((x) => assert.equal(x.status, 0, x.stderr));
  const splade = await loadPretrained(R('splade-bert'));
  const colbert = await loadPretrained(R('colbert-pylate-bert'));
  const m3 = await loadPretrained(R('bge-m3'));
  const f32 = (xs) => bytesOf(Float32Array.from(xs));
  const sameSparse = (got, want, f) =>
    got.forEach((row, i) => {
      assert.deepEqual(row.indices.map(Number), Array.from(want[i].indices), `${f} ${i}: indices`);
      assert.deepEqual(f32(row.values), bytesOf(want[i].values), `${f} ${i}: values`);
    });
  sameSparse(readJsonl(at('sp.jsonl')), splade.embed(texts), 'sp.jsonl');
  sameSparse(readJsonl(at('m3.jsonl')), m3.embed(texts, { output: 'sparse' }), 'm3.jsonl');
  const cq = readJsonl(at('cq.jsonl')),
    wantQ = colbert.embed(texts, { isQuery: true });
  cq.forEach((row, i) => assert.deepEqual(f32(row.embedding.flat()), bytesOf(wantQ[i].data), `cq.jsonl ${i}`));
  const { parquetReadObjects, asyncBufferFromFile } = await import('hyparquet');
  const sp = await parquetReadObjects({ file: await asyncBufferFromFile(at('sp.parquet')) });
  assert.deepEqual(
    sp.map((x) => x.id),
    texts.map((_, i) => (i === 1 ? '"x\\"y"' : String(10 ** 18 + i))),
    'ids of mixed kinds: their JSON text',
  );
  sameSparse(sp, splade.embed(texts, { maxActiveDims: 3 }), 'sp.parquet');
  const cd = await parquetReadObjects({ file: await asyncBufferFromFile(at('cd.parquet')) });
  const wantD = colbert.embed(texts, { isQuery: false });
  cd.forEach((row, i) => assert.deepEqual(f32(row.embedding.flat()), bytesOf(wantD[i].data), `cd.parquet ${i}`));
  // a killed run resumed: the bytes of an uninterrupted one
  const words = ['alpha', 'beta', 'gamma', 'delta', 'fox', 'dog', 'transformer', 'search'];
  writeFileSync(
    at('vb.txt'),
    `${Array.from({ length: 1500 }, (_, i) => Array.from({ length: 2 + (i % 9) }, (_, k) => words[(i * 5 + k) % 8]).join(' ')).join('\n')}\n`,
  );
  const common = ['--threads', '1', '--batch-size', '8'];
  const full = await cli(['embed', R('splade-bert'), at('vb.txt'), '-o', at('full-vb.jsonl'), '-q', ...common]);
  assert.equal(full.status, 0, full.stderr);
  const killed = await killMidRun(['embed', R('splade-bert'), at('vb.txt'), '-o', at('vb.jsonl'), '--progress-every', '200', ...common], 200);
  assert.equal(killed.signal, 'SIGKILL', killed.stderr);
  appendFileSync(at('vb.jsonl.partial'), '{"id":99999,"indices":[1,2');
  const again = await cli(['embed', R('splade-bert'), at('vb.txt'), '-o', at('vb.jsonl'), '--resume', ...common]);
  assert.equal(again.status, 0, again.stderr);
  assert.ok(readFileSync(at('vb.jsonl')).equals(readFileSync(at('full-vb.jsonl'))), 'resumed = uninterrupted, byte for byte');
  // refusals: usage errors before the model loads, or once it says what it gives
  const bad = await Promise.all([
    cli(['embed', R('splade-bert'), at('v.txt'), '--vectors', 'sparse', '-o', at('x.npy')]),
    cli(['embed', R('splade-bert'), at('v.txt'), '-o', at('x.arrow')]),
    cli(['embed', R('colbert-pylate-bert'), at('v.txt'), '--precision', 'int8', '-o', at('x.jsonl')]),
    cli(['embed', R('splade-bert'), at('v.txt'), '--query', '-o', at('x.jsonl')]),
    cli(['embed', MINILM, at('v.txt'), '--vectors', 'sparse', '-o', at('x.jsonl')]),
    cli(['embed', R('splade-bert'), at('v.txt'), '--vectors', 'colbert', '--max-active-dims', '3', '-o', at('x.jsonl')]),
  ]);
  assert.deepEqual(
    bad.map((x) => x.status),
    [2, 2, 2, 2, 1, 2],
  );
  assert.match(bad[0].stderr, /--vectors sparse has no fixed width: write \.jsonl or \.parquet, not \.npy/);
  assert.match(bad[1].stderr, /--vectors sparse has no fixed width/);
  assert.match(bad[2].stderr, /--precision applies to dense vectors, not to --vectors colbert/);
  assert.match(bad[3].stderr, /--query applies to ColBERT vectors; this model gives sparse vectors/);
  oneLine(bad[4], /--vectors sparse: this model gives dense vectors/);
  assert.match(bad[5].stderr, /--max-active-dims applies to --vectors sparse/);
  for (const m of [splade, colbert, m3]) m.dispose();
});

test('progress: plain lines every N texts without a terminal; on a terminal a bar with the rate and ETA', async () => {
  writeFileSync(at('p.txt'), `${Array.from({ length: 250 }, (_, i) => `line ${i}`).join('\n')}\n`);
  const r = await cli(['embed', MINILM, at('p.txt'), '-o', at('p.npy'), '--progress-every', '100', '--batch-size', '25']);
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stderr.trim().split('\n');
  assert.match(lines[0], /^embed: 100\/250 texts \(40\.0%\), [\d.]+ texts\/s, ETA \d+ s$/);
  assert.match(lines[1], /^embed: 200\/250 texts \(80\.0%\), [\d.]+ texts\/s, ETA \d+ s$/);
  assert.match(lines[2], /^embed: 250\/250 texts \(100\.0%\), [\d.]+ texts\/s, [\d.]+ s$/);
  assert.match(lines[3], /p\.npy: 250 records x 32 dimensions, float32$/);
  // stdin: no total, no ETA
  const s = await cli(['embed', MINILM, '-', '-o', at('ps.npy'), '--progress-every', '100', '--batch-size', '25'], { input: readFileSync(at('p.txt')) });
  assert.match(s.stderr, /^embed: 100 texts, [\d.]+ texts\/s\n/);
  // the terminal display, on a fake clock: redrawn in place, 2 texts/s, ETA m:ss
  let t = 0,
    written = '';
  const shown = progress({
    total: 100,
    stream: {
      isTTY: true,
      write: (x) => {
        written += x;
      },
    },
    now: () => t,
  });
  t = 10_000;
  shown.tick(20);
  assert.equal(written, '\r\x1b[2K[####................]  20.0%  20/100 texts  2.0 texts/s  ETA 0:40');
  t = 10_050;
  shown.tick(1);
  assert.equal(written.split('\r').length, 2, 'not redrawn within 100 ms');
  t = 50_000;
  shown.tick(79);
  shown.end();
  assert.match(written, /\[####################\] 100\.0% {2}100\/100 texts {2}2\.0 texts\/s {2}ETA 0:00\n$/);
});

test('info: family, task and labels, plugins, tokenizer, recipe, limits and what sets them, weights in f32 and q8', async () => {
  const dense = path.join(FIX, 'bert-dense-pairs');
  const q8file = at('dense-q8.safetensors');
  const [text, json, head, conv] = await Promise.all([
    cli(['info', dense]),
    cli(['info', dense, '--json']),
    cli(['info', path.join(REPO, 'tests/heads/bert-seq-3'), '--json']),
    cli(['convert', dense, q8file, '--dtype', 'q8']),
  ]);
  for (const r of [text, json, head, conv]) assert.equal(r.status, 0, r.stderr);
  const info = JSON.parse(json.stdout);
  assert.equal(info.family, 'bert');
  assert.equal(info.task, 'feature-extraction');
  assert.equal(info.labels, null);
  assert.deepEqual(info.config.position, { plugin: 'learned', options: { offset: 0 }, limit: 96 });
  assert.equal(info.config.relativeBias.plugin, 'none');
  assert.deepEqual([info.config.norm.plugin, info.config.norm.placement], ['layernorm', 'post']);
  assert.equal(info.config.activation, 'gelu_tanh'); // config.json hidden_act gelu_new
  assert.equal(info.config.head, null);
  assert.equal(info.tokenizer.kind, 'WordPiece');
  assert.equal(info.tokenizer.vocabSize, 173);
  assert.deepEqual(info.tokenizer.special.cls, { token: '[CLS]', id: 2 });
  assert.deepEqual(info.recipe.pooling, ['cls', 'max', 'mean']);
  assert.deepEqual(info.recipe.dense, [{ in: 96, out: 24, bias: true, activation: 'tanh' }]);
  assert.equal(info.recipe.normalize, true);
  assert.equal(info.recipe.similarity, 'cosine');
  const st = JSON.parse(readFileSync(path.join(dense, 'sentence_bert_config.json'), 'utf8'));
  assert.equal(info.limits.maxLength, st.max_seq_length);
  assert.deepEqual(info.limits.setBy, ['max_seq_length (sentence_bert_config.json)']);
  // weights: f32 = 4 bytes a parameter of the encoder; q8 = the tensors of the converter's q8 file
  const enc = await loadModel(readFileSync(q8file), { dtype: 'f32', threads: 1 });
  const params = Object.values(enc.weightShapes()).reduce((s, shape) => s + shape.reduce((a, b) => a * b, 1), 0);
  enc.dispose();
  assert.equal(info.weights.f32, 4 * params);
  const file = readFileSync(q8file);
  assert.equal(info.weights.q8, file.length - 8 - Number(file.readBigUInt64LE(0)));
  for (const [k, v] of [
    ['family', 'bert'],
    ['position', 'learned {"offset":0} (up to 96 tokens)'],
    ['kind', 'WordPiece, 173 tokens'],
    ['pooling', 'cls + max + mean'],
    ['dense', '96 -> 24, tanh'],
    ['maxLength', `${st.max_seq_length} tokens, set by max_seq_length (sentence_bert_config.json)`],
    ['q8', `${(info.weights.q8 / 1024).toFixed(1)} KB (${info.weights.q8} bytes`],
  ]) {
    assert.ok(
      text.stdout.split('\n').some((l) => l.trim().startsWith(k) && l.trim().slice(k.length).trimStart().startsWith(v) && /\S {2,}\S/.test(l)),
      `info shows ${k}: '${v}'\n${text.stdout}`,
    );
  }
  const h = JSON.parse(head.stdout);
  assert.equal(h.task, 'text-classification');
  assert.deepEqual(h.labels, ['negative', 'neutral', 'positive']);
  assert.equal(h.config.head.task, 'sequence');
});

test('.arrow / .parquet without their package: "npm install ..."; serve dispatched to bin/serve.js main(argv) when it exists', async () => {
  // the package as installed, without node_modules: no apache-arrow, no hyparquet-writer
  const copy = at('installed');
  for (const d of ['bin', 'bindings', 'dist'])
    cpSync(path.join(REPO, d), path.join(copy, d), { recursive: true, filter: (f) => !f.endsWith('serve.js') || f.includes('/cli/') });
  cpSync(path.join(REPO, 'package.json'), path.join(copy, 'package.json'));
  writeFileSync(at('n.txt'), 'a\n');
  const bin = path.join(copy, 'bin/swapformer.js');
  const [arrow, parquet, serve] = await Promise.all([
    cli(['embed', MINILM, at('n.txt'), '-o', at('n.arrow')], { bin, cwd: copy }),
    cli(['embed', MINILM, at('n.txt'), '-o', at('n.parquet')], { bin, cwd: copy }),
    cli(['serve', MINILM], { bin, cwd: copy }),
  ]);
  assert.equal(arrow.status, 1);
  oneLine(arrow, /writing \.arrow needs the apache-arrow package, which swapformer does not bring: npm install apache-arrow/);
  assert.equal(parquet.status, 1);
  oneLine(parquet, /npm install hyparquet-writer/);
  assert.equal(serve.status, 1);
  assert.equal(serve.stderr, 'swapformer: serve is not available in this build\n');
  writeFileSync(path.join(copy, 'bin/serve.js'), 'export async function main(argv) { console.log(JSON.stringify(argv)); return 7; }\n');
  const [served, help] = await Promise.all([cli(['serve', 'm', '--port', '1'], { bin, cwd: copy }), cli(['help', 'serve'], { bin, cwd: copy })]);
  assert.equal(served.status, 7);
  assert.equal(served.stdout, '["m","--port","1"]\n');
  assert.equal(help.stdout, '["--help"]\n');
});

test("the .npy header is numpy's (checked above against np.save); float32 text reads back to the same bits", () => {
  assert.equal(
    npyHeader('<f4', 3, 4).toString('latin1'),
    `\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }${' '.repeat(58)}\n`,
  );
  assert.equal(npyHeader('<f4', 10 ** 12, 384).length, 128, 'the same length whatever the row count');
  const values = new Float32Array([0.1, -0.5, 1e-30, 3.4e38, 1 / 3, -0, 0, 1.17549435e-38, 1.4e-45, 123456.789]);
  for (const v of values) {
    const text = float32Text(v);
    assert.ok(Object.is(Math.fround(JSON.parse(text)), v), `${v} -> ${text}`);
  }
  assert.equal(float32Text(Math.fround(0.1)), '0.1');
});

test('download progress off a terminal: one line per large file when it completes, even when a chunk before the end rounds to the same figures', () => {
  const lines = [];
  const p = downloadProgress({ isTTY: false, write: (x) => lines.push(x) });
  const total = Math.round(3.1 * 2 ** 20);
  p.update({ file: 'small.json', loaded: 10, total: 10 }); // under 1 MB: no line
  for (const loaded of [2 ** 20, Math.round(3.07 * 2 ** 20), total]) p.update({ file: 'model.safetensors', loaded, total }); // 3.07 of 3.1 prints as 3.1 / 3.1
  p.update({ file: 'model.safetensors', loaded: total, total }); // the closing event again: no second line
  p.done();
  assert.deepEqual(lines, ['  model.safetensors 3.1 / 3.1 MB\n']);
});
