// The command line under careless and hostile use: an output that is the
// input (or a file convert reads), ids past 2^53, --resume after the input or
// the weights changed, invalid UTF-8 deep in a corpus, a model file that would
// not load, leaked file handles, a row cut by a kill. Each runs
// bin/swapformer.js in a child process; what it writes is read back by
// independent readers (Python's json module, apache-arrow, hyparquet) and
// compared with an uninterrupted run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadPretrained } from '../bindings/index.js';
import { progress } from '../bin/cli/progress.js';
import { REPO, TIMEOUT, cli as runCli, killMidRun as killRun, oneLine } from './cli-run.js';

const FIX = path.join(REPO, 'tests/pretrained');
const MINILM = path.join(FIX, 'bert-minilm');
const PY = '/usr/bin/python3';
const tmp = mkdtempSync(path.join(tmpdir(), 'swapformer-cli-hard-'));
const at = (f) => path.join(tmp, f);
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

const cli = (args, options = {}) => runCli(args, { cwd: tmp, ...options });
const killMidRun = (args, after, signal, options = {}) => killRun(args, after, signal, { cwd: tmp, ...options });
const sha = (bytes) => createHash('sha256').update(bytes).digest('hex');
const python = (code, ...args) => {
  const r = spawnSync(PY, ['-c', code, ...args], { encoding: 'utf8', timeout: TIMEOUT });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
};
/** The sha256 of every file under a folder, by relative path. */
const hashes = (dir) =>
  Object.fromEntries(
    readdirSync(dir, { recursive: true })
      .filter((f) => statSync(path.join(dir, f)).isFile())
      .map((f) => [f, sha(readFileSync(path.join(dir, f)))]),
  );

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'];
const corpus = (n, salt = 0) =>
  Array.from({ length: n }, (_, i) => Array.from({ length: 3 + (i % 13) }, (_, k) => WORDS[(i * 7 + k * 3 + salt) % 8]).join(' '));

test('embed refuses an output that is its input (the same path, a relative path, a symlink, a hard link, a partial file, stdin redirected from it): exit 2 before the model loads, naming both', async () => {
  const input = at('corpus.jsonl');
  writeFileSync(
    input,
    `${corpus(5)
      .map((t, i) => JSON.stringify({ text: t, id: i }))
      .join('\n')}\n`,
  );
  const before = readFileSync(input);
  mkdirSync(at('sub'));
  symlinkSync(input, at('link.jsonl'));
  linkSync(input, at('hard.jsonl'));
  linkSync(input, at('x.npy.partial'));
  linkSync(input, at('y.parquet.partial.ids'));
  const noModel = at('no-such-model'); // never loaded: a load would fail first, with exit 1
  const cases = [
    [['embed', noModel, input, '-o', input], {}, /the output .*corpus\.jsonl is the input .*corpus\.jsonl: embed would overwrite its own input/],
    [['embed', noModel, 'corpus.jsonl', '-o', './sub/../corpus.jsonl'], {}, /the output \.\/sub\/\.\.\/corpus\.jsonl is the input corpus\.jsonl/],
    [['embed', noModel, input, '-o', at('link.jsonl')], {}, /the output .*link\.jsonl is the input .*corpus\.jsonl/],
    [['embed', noModel, at('hard.jsonl'), '-o', input, '--id-field', 'id'], {}, /the output .*corpus\.jsonl is the input .*hard\.jsonl/],
    [
      ['embed', noModel, input, '-o', at('x.npy'), '--resume'],
      {},
      /the output .*x\.npy keeps its partial records in .*x\.npy\.partial, which is the input .*corpus\.jsonl/,
    ],
    [['embed', noModel, input, '-o', at('y.parquet'), '--id-field', 'id'], {}, /y\.parquet\.partial\.ids, which is the input/],
    [['embed', noModel, '-', '--format', 'jsonl', '-o', input], { stdinFile: input }, /the output .*corpus\.jsonl is the input \(standard input reads it\)/],
  ];
  const runs = await Promise.all(cases.map(([args, options]) => cli(args, options)));
  runs.forEach((r, i) => {
    assert.equal(r.status, 2, `${cases[i][0].join(' ')}\n${r.stderr}`);
    oneLine(r, cases[i][2]);
    assert.match(r.stderr, /\nusage: swapformer embed /);
  });
  assert.ok(readFileSync(input).equals(before), 'the input is untouched');
  assert.ok(!existsSync(at('corpus.jsonl.partial')) && !existsSync(at('x.npy.partial.json')), 'nothing written beside the output');
});

test('convert refuses an output that is a file it reads (the source file, a file of the source folder, by symlink or hard link): exit 2 before anything is read', async () => {
  const src = at('m');
  cpSync(MINILM, src, { recursive: true });
  const before = hashes(src);
  linkSync(path.join(src, 'tokenizer.json'), at('hard.safetensors'));
  symlinkSync(path.join(src, '1_Pooling/config.json'), at('pooling.safetensors'));
  // a folder whose config.json is not JSON: a read would fail first, with exit 1
  const broken = at('broken');
  cpSync(MINILM, broken, { recursive: true });
  writeFileSync(path.join(broken, 'config.json'), '{');
  const converted = at('converted.safetensors');
  assert.equal((await cli(['convert', MINILM, converted])).status, 0);
  const convertedBytes = readFileSync(converted);
  symlinkSync(converted, at('converted-link.safetensors'));
  const cases = [
    [
      [src, path.join(src, 'model.safetensors')],
      /the output .*m\/model\.safetensors is a file of the source folder .*m: convert would overwrite what it reads/,
    ],
    [[src, at('hard.safetensors')], /the output .*hard\.safetensors is a file of the source folder .*m \(the same file as .*m\/tokenizer\.json\)/],
    [[src, at('pooling.safetensors')], /pooling\.safetensors is a file of the source folder .*\(the same file as .*m\/1_Pooling\/config\.json\)/],
    [[broken, path.join(broken, 'model.safetensors')], /the output .*broken\/model\.safetensors is a file of the source folder/],
    [[converted, at('converted-link.safetensors'), '--dtype', 'f16'], /the output .*converted-link\.safetensors is the source .*converted\.safetensors/],
  ];
  const runs = await Promise.all(cases.map(([args]) => cli(['convert', ...args])));
  runs.forEach((r, i) => {
    assert.equal(r.status, 2, `${cases[i][0].join(' ')}\n${r.stderr}`);
    oneLine(r, cases[i][1]);
  });
  assert.deepEqual(hashes(src), before, 'every file of the source folder untouched');
  assert.ok(readFileSync(converted).equals(convertedBytes), 'the converted source untouched');
  // a new file in the folder is no file it reads
  const inside = await cli(['convert', src, path.join(src, 'out.safetensors')]);
  assert.equal(inside.status, 0, inside.stderr);
});

test('convert never writes a file that would not load: hidden_size 1e300, 5 heads for width 32, layer_norm_eps -1 refused as loadPretrained refuses them', async () => {
  const cases = [
    ['hidden_size', 1e300, /config\.dModel must be an integer in \[1, \d+\], got 1e300/],
    ['num_attention_heads', 5, /config\.dModel \(32\) must be divisible by config\.heads \(5\)/],
    ['layer_norm_eps', -1, /config\.eps must be a number in \(0, 1\], got -1/],
  ];
  await Promise.all(
    cases.map(async ([key, value, re]) => {
      const dir = at(`bad-${key}`);
      cpSync(MINILM, dir, { recursive: true });
      const config = JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8'));
      writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ ...config, [key]: value }));
      // the library's loader refuses the folder: the file would not load either
      await assert.rejects(loadPretrained(dir, { threads: 1 }), (e) => e.code === 'UNSUPPORTED_MODEL' && re.test(e.message));
      const out = at(`bad-${key}.safetensors`);
      writeFileSync(out, 'an older file, kept');
      const r = await cli(['convert', dir, out]);
      assert.equal(r.status, 1, `${key}: ${r.stdout}${r.stderr}`);
      oneLine(r, new RegExp(`^swapformer: UNSUPPORTED_MODEL: .*bad-${key}: the checkpoint does not fit the bert layout swapformer knows: ${re.source}`));
      assert.equal(readFileSync(out, 'utf8'), 'an older file, kept', `${key}: the output untouched`);
    }),
  );
  assert.deepEqual(
    readdirSync(tmp).filter((f) => f.endsWith('.tmp')),
    [],
    'no temporary file left',
  );
});

/** The id of each line of a JSON Lines file as Python's json module reads it, and its source text in the line. */
function pythonIds(file) {
  const out = python(
    `import json, sys
for line in open(sys.argv[1], encoding='utf-8'):
    if line.strip(): print(json.dumps([repr(json.loads(line)['id']), type(json.loads(line)['id']).__name__]))`,
    file,
  );
  return out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

test('ids come back as the input wrote them: integers past 2^53 exact in .jsonl (read by Python), int64 in .arrow and .parquet; past int64, fractions and mixes as text; never two ids merged', async () => {
  const big = ['1234567890123456781', '1234567890123456782', '1234567890123456783', '-9223372036854775808', '9223372036854775807', '0', '42'];
  const odd = ['9223372036854775808', '18446744073709551617', '1e3', '1.50', '-0', '12345678901234567890123'];
  const mixed = ['"5"', '5', '"a"', '1234567890123456789'];
  const write = (name, ids) =>
    writeFileSync(at(name), `${ids.map((id, i) => `{"text": ${JSON.stringify(corpus(ids.length)[i])}, "n": {"deep": [1, "}"]}, "id": ${id}}`).join('\n')}\n`);
  write('big.jsonl', big);
  write('odd.jsonl', odd);
  write('mixed.jsonl', mixed);
  writeFileSync(at('ids.csv'), 'id,text\n007,first text\n1234567890123456781,second text\n1234567890123456782,third\n');
  const outs = [
    ['big.jsonl', 'big.jsonl.jsonl'],
    ['big.jsonl', 'big-int8.jsonl', ['--precision', 'int8']],
    ['big.jsonl', 'big.arrow'],
    ['big.jsonl', 'big.parquet'],
    ['odd.jsonl', 'odd.jsonl.jsonl'],
    ['odd.jsonl', 'odd.arrow'],
    ['odd.jsonl', 'odd.parquet'],
    ['mixed.jsonl', 'mixed.jsonl.jsonl'],
    ['mixed.jsonl', 'mixed.arrow'],
    ['ids.csv', 'csv.jsonl'],
    ['ids.csv', 'csv.parquet'],
  ];
  const runs = await Promise.all(
    outs.map(([i, o, extra = []]) => cli(['embed', MINILM, at(i), '--id-field', 'id', '-o', at(o), '-q', '--batch-size', '2', ...extra])),
  );
  runs.forEach((r, k) => assert.equal(r.status, 0, `${outs[k][1]}: ${r.stderr}`));

  // JSON Lines: Python reads the same id from the output as from the input (exact integers), written with the same text
  for (const [input, output, written] of [
    ['big.jsonl', 'big.jsonl.jsonl', big],
    ['big.jsonl', 'big-int8.jsonl', big],
    ['odd.jsonl', 'odd.jsonl.jsonl', odd],
    ['mixed.jsonl', 'mixed.jsonl.jsonl', mixed],
  ]) {
    assert.deepEqual(pythonIds(at(output)), pythonIds(at(input)), `${output}: the ids Python reads`);
    const lines = readFileSync(at(output), 'utf8').trimEnd().split('\n');
    assert.deepEqual(
      lines.map((l) => /^\{"id":(.*?),"embedding":/.exec(l)[1]),
      written,
      `${output}: each id written as the input wrote it`,
    );
  }
  assert.deepEqual(
    pythonIds(at('big.jsonl.jsonl')).map(([v]) => v),
    big,
    'Python reads the big integers exactly',
  );

  const A = await import('apache-arrow');
  const { parquetReadObjects, asyncBufferFromFile } = await import('hyparquet');
  const arrowIds = (f) => {
    const t = A.tableFromIPC(readFileSync(at(f)));
    return { type: String(t.schema.fields[0].type), ids: [...t.getChild('id').toArray()] };
  };
  const parquetIds = async (f) => (await parquetReadObjects({ file: await asyncBufferFromFile(at(f)) })).map((x) => x.id);
  assert.deepEqual(arrowIds('big.arrow'), { type: 'Int64', ids: big.map(BigInt) });
  assert.deepEqual(await parquetIds('big.parquet'), big.map(BigInt));
  // past int64, with an exponent, a fraction or -0: the text of each, every one distinct
  assert.deepEqual(arrowIds('odd.arrow'), { type: 'Utf8', ids: odd });
  assert.deepEqual(await parquetIds('odd.parquet'), odd);
  // strings and numbers mixed: each id's JSON text, so that "5" and 5 stay two ids
  assert.deepEqual(arrowIds('mixed.arrow'), { type: 'Utf8', ids: mixed });
  // CSV ids are text as written
  assert.deepEqual(
    readFileSync(at('csv.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l).id),
    ['007', '1234567890123456781', '1234567890123456782'],
  );
  assert.deepEqual(await parquetIds('csv.parquet'), ['007', '1234567890123456781', '1234567890123456782']);
});

test('invalid UTF-8 is reported at its own line and byte, past the first 64 KB read (.txt, .jsonl, .csv with a quoted line break, stdin, a sequence cut at the end)', async () => {
  const lines = Array.from({ length: 6000 }, (_, i) => `line ${i + 1} holds a few words to fill the reads`);
  const bad = (format, text) => {
    const parts = lines.map((l, i) => Buffer.from(i === 4999 ? text : format === 'jsonl' ? JSON.stringify({ text: l }) : l));
    const offset = parts.slice(0, 4999).reduce((s, p) => s + p.length + 1, 0) + parts[4999].indexOf(0xff);
    return { bytes: Buffer.concat(parts.flatMap((p) => [p, Buffer.from('\n')])), offset };
  };
  const txt = bad('txt', Buffer.from([...Buffer.from('ok so '), 0xff, ...Buffer.from(' bad')]));
  writeFileSync(at('bad.txt'), txt.bytes);
  const jsonl = bad('jsonl', Buffer.from([...Buffer.from('{"text": "ok '), 0xff, ...Buffer.from('"}')]));
  writeFileSync(at('bad.jsonl'), jsonl.bytes);
  // csv: a header, then a quoted field with a line break on line 2-3: the bad byte is on line 5003
  const csvHead = Buffer.from('text\n"two\nlines"\n');
  writeFileSync(at('bad.csv'), Buffer.concat([csvHead, txt.bytes]));
  writeFileSync(at('cut.txt'), Buffer.concat([Buffer.from('fine\ncaf'), Buffer.from([0xc3])]));
  const [t, j, c, s, cut] = await Promise.all([
    cli(['embed', MINILM, at('bad.txt'), '-o', at('u1.npy')]),
    cli(['embed', MINILM, at('bad.jsonl'), '-o', at('u2.npy')]),
    cli(['embed', MINILM, at('bad.csv'), '-o', at('u3.npy')]),
    cli(['embed', MINILM, '-', '-o', at('u4.npy'), '-q'], { input: txt.bytes }),
    cli(['embed', MINILM, at('cut.txt'), '-o', at('u5.npy')]),
  ]);
  for (const r of [t, j, c, s, cut]) assert.equal(r.status, 1, r.stderr);
  oneLine(t, new RegExp(`bad\\.txt:5000: not valid UTF-8 \\(byte ${txt.offset} of the input`));
  oneLine(j, new RegExp(`bad\\.jsonl:5000: not valid UTF-8 \\(byte ${jsonl.offset} of the input`));
  oneLine(c, new RegExp(`bad\\.csv:5003: not valid UTF-8 \\(byte ${txt.offset + csvHead.length} of the input`));
  oneLine(s, new RegExp(`<stdin>:5000: not valid UTF-8 \\(byte ${txt.offset} of the input`));
  oneLine(cut, /cut\.txt:2: not valid UTF-8 \(byte 8 of the input/);
  // the line and byte Python's decoder names
  const py = JSON.parse(
    python(
      `import json, sys
b = open(sys.argv[1], 'rb').read()
try: b.decode('utf-8')
except UnicodeDecodeError as e: print(json.dumps([b.count(b'\\n', 0, e.start) + 1, e.start]))`,
      at('bad.txt'),
    ),
  );
  assert.deepEqual(py, [5000, txt.offset]);
});

test('embed --resume refuses an input regenerated after a kill (its size or time), one changed in place with the same size and time (its digest), other stdin, or replaced weights; unchanged, it resumes to the bytes of an uninterrupted run', async () => {
  const common = ['--threads', '1', '--batch-size', '16'];
  const text = `${corpus(2000).join('\n')}\n`;
  const model = at('model');
  cpSync(MINILM, model, { recursive: true });
  const T0 = 1_700_000_000; // whole seconds: a time set again is the same time
  const setup = (name) => {
    writeFileSync(at(name), text);
    utimesSync(at(name), T0, T0);
  };
  for (const n of ['regen.txt', 'inplace.txt', 'weights.txt']) setup(n);
  const full = await cli(['embed', MINILM, at('regen.txt'), '-o', at('full.npy'), '-q', ...common]);
  assert.equal(full.status, 0, full.stderr);
  utimesSync(at('regen.txt'), T0, T0);
  const killed = await Promise.all([
    killMidRun(['embed', MINILM, at('regen.txt'), '-o', at('regen.npy'), '--progress-every', '300', ...common], 300),
    killMidRun(['embed', MINILM, at('inplace.txt'), '-o', at('inplace.npy'), '--progress-every', '300', ...common], 300),
    killMidRun(['embed', model, at('weights.txt'), '-o', at('weights.npy'), '--progress-every', '300', ...common], 300),
    killMidRun(['embed', MINILM, '-', '-o', at('stdin.npy'), '--progress-every', '300', ...common], 300, 'SIGKILL', { input: text }),
  ]);
  for (const k of killed) assert.equal(k.signal, 'SIGKILL', k.stderr);

  // regenerated: the same path and number of lines, other texts, written later
  writeFileSync(at('regen.txt'), `${corpus(2000, 1).join('\n')}\n`);
  // changed in place: two letters of the first line swapped, the size and the time as they were
  writeFileSync(at('inplace.txt'), text.replace('alpha', 'lapha'));
  utimesSync(at('inplace.txt'), T0, T0);
  // the weights: one float of the last layer's output projection changed in model.safetensors, its size kept
  const weights = path.join(model, 'model.safetensors');
  const original = readFileSync(weights);
  const changed = Buffer.from(original);
  const headerLength = Number(original.readBigUInt64LE(0));
  const [begin] = JSON.parse(original.subarray(8, 8 + headerLength))['encoder.layer.1.output.dense.weight'].data_offsets;
  changed.writeFloatLE(changed.readFloatLE(8 + headerLength + begin) + 0.5, 8 + headerLength + begin);
  writeFileSync(weights, changed);
  const otherStdin = text.replace('alpha', 'lapha');
  const [regen, inplace, swapped, stdin] = await Promise.all([
    cli(['embed', MINILM, at('regen.txt'), '-o', at('regen.npy'), '--resume', ...common]),
    cli(['embed', MINILM, at('inplace.txt'), '-o', at('inplace.npy'), '--resume', ...common]),
    cli(['embed', model, at('weights.txt'), '-o', at('weights.npy'), '--resume', ...common]),
    cli(['embed', MINILM, '-', '-o', at('stdin.npy'), '--resume', ...common], { input: otherStdin }),
  ]);
  for (const r of [regen, inplace, swapped, stdin]) assert.equal(r.status, 1, r.stderr);
  oneLine(
    regen,
    /--resume: .*regen\.txt changed since .*regen\.npy\.partial was started \((its size was \d+ bytes, now \d+|it was modified at .*, now at .*)\)/,
  );
  oneLine(
    inplace,
    /--resume: the first \d+ records of .*inplace\.txt are not the ones .*inplace\.npy\.partial was made from \(the SHA-256 of their \d+ bytes differs\)/,
  );
  oneLine(
    swapped,
    /--resume: the model's weights changed since .*weights\.npy\.partial was started \(their SHA-256 was [0-9a-f]{12}\.\.\., now [0-9a-f]{12}\.\.\.\)/,
  );
  oneLine(stdin, /--resume: the first \d+ records of <stdin> are not the ones .*stdin\.npy\.partial was made from/);
  for (const f of ['regen', 'inplace', 'weights', 'stdin']) assert.ok(!existsSync(at(`${f}.npy`)), `${f}: no output`);

  // as they were (the weights' file written again, so its time is new): each resumes to the uninterrupted bytes
  writeFileSync(weights, original);
  writeFileSync(at('inplace.txt'), text);
  utimesSync(at('inplace.txt'), T0, T0);
  const again = await Promise.all([
    cli(['embed', MINILM, at('inplace.txt'), '-o', at('inplace.npy'), '--resume', ...common]),
    cli(['embed', model, at('weights.txt'), '-o', at('weights.npy'), '--resume', ...common]),
    cli(['embed', MINILM, '-', '-o', at('stdin.npy'), '--resume', ...common], { input: text }),
  ]);
  for (const r of again) {
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /resuming: \d+ records already in/);
  }
  for (const f of ['inplace', 'weights', 'stdin'])
    assert.ok(readFileSync(at(`${f}.npy`)).equals(readFileSync(at('full.npy'))), `${f}: resumed = uninterrupted`);
});

test('--resume drops a row cut by the kill, whatever share of its 128 bytes was written (1, 65, 127), even when the checkpoint of that row was written', async () => {
  const lines = corpus(3000);
  writeFileSync(at('cut.txt'), `${lines.join('\n')}\n`);
  const common = ['--threads', '1', '--batch-size', '1'];
  const [full, stopped] = await Promise.all([
    cli(['embed', MINILM, at('cut.txt'), '-o', at('cut-full.npy'), '-q', ...common]),
    killMidRun(['embed', MINILM, at('cut.txt'), '-o', at('cut.npy'), '--progress-every', '50', ...common], 100, 'SIGINT'),
  ]);
  assert.equal(full.status, 0, full.stderr);
  assert.equal(stopped.status, 130, stopped.stderr);
  const n = Number(/: (\d+) records in/.exec(stopped.stderr)[1]);
  assert.equal(statSync(at('cut.npy.partial')).size, 128 + n * 128);
  // the state of a kill inside the next row's write: its checkpoint line written first (records n + 1, the
  // input bytes of the first n + 1 lines and their SHA-256), then part of its row
  const bytes = Buffer.byteLength(lines.slice(0, n + 1).join('\n')) + 1;
  const checkpoint = `${JSON.stringify({ records: n + 1, bytes, sha256: sha(readFileSync(at('cut.txt')).subarray(0, bytes)) })}\n`;
  await Promise.all(
    [1, 65, 127].map(async (cut) => {
      const out = at(`cut${cut}.npy`);
      for (const suffix of ['.partial', '.partial.json', '.partial.input']) cpSync(at(`cut.npy${suffix}`), `${out}${suffix}`);
      appendFileSync(`${out}.partial.input`, checkpoint);
      appendFileSync(`${out}.partial`, Buffer.alloc(cut, 0x7f));
      const r = await cli(['embed', MINILM, at('cut.txt'), '-o', out, '--resume', ...common]);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stderr, new RegExp(`resuming: ${n} records already in`), `${cut} bytes of a row: dropped`);
      assert.ok(readFileSync(out).equals(readFileSync(at('cut-full.npy'))), `${cut} bytes of a row: resumed = uninterrupted`);
    }),
  );
});

test('embed --resume --id-field into .parquet closes every file handle (no DEP0137 when the garbage is collected)', async () => {
  const input = at('handles.jsonl');
  writeFileSync(
    input,
    `${corpus(3000)
      .map((t, i) => JSON.stringify({ text: t, id: `d${i}` }))
      .join('\n')}\n`,
  );
  const args = ['embed', MINILM, input, '--id-field', 'id', '-o', at('handles.parquet'), '--threads', '1', '--batch-size', '4'];
  const stopped = await killMidRun([...args, '--progress-every', '100'], 300, 'SIGINT');
  assert.equal(stopped.status, 130, stopped.stderr);
  // the command in a process that collects its garbage after the run, then lists the descriptors still open on the output's files
  const runner = at('gc-run.mjs');
  writeFileSync(
    runner,
    `import { readdirSync, readlinkSync } from 'node:fs';
const { run } = await import(${JSON.stringify(pathToFileURL(path.join(REPO, 'bin/cli/main.js')).href)});
const code = await run(process.argv.slice(2));
const open = () => readdirSync('/proc/self/fd').map((fd) => { try { return readlinkSync('/proc/self/fd/' + fd); } catch { return ''; } }).filter((f) => f.includes('handles.'));
const left = open();
for (let i = 0; i < 3; i++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 50)); }
process.stdout.write(JSON.stringify(left));
process.exitCode = code;
`,
  );
  const r = await cli([...args, '--resume', '-q'], { bin: runner, nodeFlags: ['--expose-gc', '--trace-deprecation', '--trace-warnings'] });
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /DEP0137|Closing file descriptor/, r.stderr);
  if (existsSync('/proc/self/fd')) assert.deepEqual(JSON.parse(r.stdout), [], 'no descriptor open on the input or the output after the run');
  const { parquetReadObjects, asyncBufferFromFile } = await import('hyparquet');
  const rows = await parquetReadObjects({ file: await asyncBufferFromFile(at('handles.parquet')) });
  assert.deepEqual(
    rows.map((x) => x.id),
    Array.from({ length: 3000 }, (_, i) => `d${i}`),
  );
});

test('counts in words (1 text, 1 record, 1 token type); the bar full only when done, its last frame drawn once; --dimensions checked with the flag named', async () => {
  writeFileSync(at('one.txt'), 'just one\n');
  const [one, tooWide, packed, info] = await Promise.all([
    cli(['embed', MINILM, at('one.txt'), '-o', at('one.npy')]),
    cli(['embed', MINILM, at('one.txt'), '-o', at('wide.npy'), '--dimensions', '1000']),
    cli(['embed', at('no-such-model'), at('one.txt'), '-o', at('packed.npy'), '--dimensions', '12', '--precision', 'binary']),
    cli(['info', path.join(FIX, 'roberta-bpe')]),
  ]);
  assert.equal(one.status, 0, one.stderr);
  assert.match(one.stderr, /^embed: 1\/1 text \(100\.0%\), [\d.]+ texts\/s, [\d.]+ s\n.*one\.npy: 1 record x 32 dimensions, float32\n$/);
  assert.equal(tooWide.status, 2);
  oneLine(tooWide, /^swapformer: --dimensions 1000 is more than the model's 32 dimensions$/);
  assert.doesNotMatch(tooWide.stderr, /options\./);
  assert.equal(packed.status, 2, 'checked before the model loads');
  oneLine(packed, /--precision binary packs 8 dimensions a byte: --dimensions 12 is not a multiple of 8/);
  assert.equal(info.status, 0, info.stderr);
  assert.match(info.stdout, /size +2 layers, dModel 32, 4 heads, ffDim 64, vocab \d+, 1 token type\n/);

  let t = 0,
    written = '';
  const stream = {
    isTTY: true,
    write: (x) => {
      written += x;
    },
  };
  const bar = progress({ total: 1000, stream, now: () => t });
  t = 1000;
  bar.tick(976);
  assert.match(written, /\[###################\.\] {2}97\.6% {2}976\/1000 texts/, 'not full at 97.6%');
  t = 2000;
  bar.tick(23);
  assert.match(written, /\[###################\.\] {2}99\.9% {2}999\/1000 texts/, '99.9%, not 100.0%');
  t = 3000;
  bar.tick(1);
  bar.end();
  assert.equal(written.match(/100\.0%/g).length, 1, 'the last frame drawn once');
  assert.match(written, /\[####################\] 100\.0% {2}1000\/1000 texts .*\n$/);
  written = '';
  const single = progress({ total: 1, stream, now: () => t });
  t = 4000;
  single.tick(1);
  single.end();
  assert.match(written, /1\/1 text {2}[\d.]+ texts\/s/);
});
