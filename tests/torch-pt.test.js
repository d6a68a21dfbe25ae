// bindings/pretrained/torch-pt.js: torch.save's zip archives of a state dict,
// read without executing anything. Real files written by PyTorch (bge-m3's
// heads in tests/retrieval/, torch 1.13, protocol 2) read back equal to their
// safetensors twins; then hostile archives and pickles, crafted and random,
// are refused as BAD_FILE naming what is wrong, fast, and never run code
// (a GLOBAL is a name compared with a list, nothing is looked up or called).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, cpSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readTorchStateDict } from '../bindings/pretrained/torch-pt.js';
import { parseSafetensors } from '../bindings/pretrained/safetensors.js';
import { loadPretrained } from '../bindings/index.js';
import { SwapformerError } from '../bindings/utils/errors.js';

const ROOT = fileURLToPath(new URL('./retrieval/', import.meta.url));
const pt = (name) => new Uint8Array(readFileSync(path.join(ROOT, 'bge-m3', `${name}.pt`)));

/** A zip archive of stored entries (method 0), as torch.save writes (no data alignment: the reader needs none). */
function zip(entries, { method = 0, flags = 0 } = {}) {
  const enc = new TextEncoder();
  const parts = [],
    central = [];
  let at = 0;
  for (const [name, data] of entries) {
    const n = enc.encode(name);
    const local = new Uint8Array(30 + n.length);
    const dv = new DataView(local.buffer);
    dv.setUint32(0, 0x04034b50, true);
    dv.setUint16(6, flags, true);
    dv.setUint16(8, method, true);
    dv.setUint32(18, data.length, true);
    dv.setUint32(22, data.length, true);
    dv.setUint16(26, n.length, true);
    local.set(n, 30);
    const cd = new Uint8Array(46 + n.length);
    const cv = new DataView(cd.buffer);
    cv.setUint32(0, 0x02014b50, true);
    cv.setUint16(8, flags, true);
    cv.setUint16(10, method, true);
    cv.setUint32(20, data.length, true);
    cv.setUint32(24, data.length, true);
    cv.setUint16(28, n.length, true);
    cv.setUint32(42, at, true);
    cd.set(n, 46);
    parts.push(local, data);
    central.push(cd);
    at += local.length + data.length;
  }
  const cdSize = central.reduce((s, c) => s + c.length, 0);
  const end = new Uint8Array(22);
  const ev = new DataView(end.buffer);
  ev.setUint32(0, 0x06054b50, true);
  ev.setUint16(8, entries.length, true);
  ev.setUint16(10, entries.length, true);
  ev.setUint32(12, cdSize, true);
  ev.setUint32(16, at, true);
  const out = new Uint8Array(at + cdSize + 22);
  let o = 0;
  for (const p of [...parts, ...central, end]) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

// pickle building blocks (protocol 2)
const b = (...xs) =>
  Uint8Array.from(xs.flatMap((x) => (typeof x === 'string' ? [...x].map((c) => c.charCodeAt(0)) : Array.isArray(x) || x instanceof Uint8Array ? [...x] : [x])));
const u32 = (n) => [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, (n >>> 24) & 255];
const str = (s) => b('X', u32(s.length), s);
const GLOBAL = (m, n) => b('c', `${m}\n${n}\n`);
const PROTO = b(0x80, 2);
/** A state dict {name: a float32 tensor of `numel` values in storage `key`} as torch.save pickles it. */
function statePickle(tensors, { storage = 'FloatStorage', size, stride, offset = 0 } = {}) {
  const items = tensors.map(([name, key, numel]) =>
    b(
      str(name),
      GLOBAL('torch._utils', '_rebuild_tensor_v2'),
      '(',
      '(',
      str('storage'),
      GLOBAL('torch', storage),
      str(key),
      str('cpu'),
      'J',
      u32(numel),
      't',
      'Q',
      'J',
      u32(offset),
      '(',
      'J',
      u32(size ?? numel),
      't',
      '(',
      'J',
      u32(stride ?? 1),
      't',
      0x89,
      GLOBAL('collections', 'OrderedDict'),
      ')',
      'R',
      't',
      'R',
    ),
  );
  return b(PROTO, GLOBAL('collections', 'OrderedDict'), ')', 'R', '(', ...items, 'u', '.');
}
const f32 = (...v) => new Uint8Array(Float32Array.from(v).buffer);
/** Bytes `part` repeated n times (a long pickle without a spread of 100000 arguments). */
const rep = (part, n) => {
  const p = b(part),
    out = new Uint8Array(p.length * n);
  for (let i = 0; i < n; i++) out.set(p, i * p.length);
  return out;
};
const archive = (pkl, data = [['0', f32(1, 2, 3)]], extra = []) => zip([['a/data.pkl', pkl], ...data.map(([k, v]) => [`a/data/${k}`, v]), ...extra]);

function refused(bytes, re, where) {
  const t0 = performance.now();
  assert.throws(
    () => readTorchStateDict(bytes, 'x.pt'),
    (e) => e instanceof SwapformerError && e.code === 'BAD_FILE' && (!re || re.test(e.message)),
    `${where}: BAD_FILE ${re}`,
  );
  assert.ok(performance.now() - t0 < 2000, `${where}: refused fast`);
}

test('torch.save state dicts (bge-m3 heads, torch 1.13) read equal to their safetensors twins', () => {
  for (const name of ['colbert_linear', 'sparse_linear']) {
    const got = readTorchStateDict(pt(name), `${name}.pt`);
    const twin = parseSafetensors(new Uint8Array(readFileSync(path.join(ROOT, 'bge-m3-safetensors', `${name}.safetensors`))), name).tensors;
    assert.deepEqual([...got.keys()].sort(), ['bias', 'weight']);
    for (const [k, t] of got) {
      assert.equal(t.dtype, 'F32');
      assert.deepEqual(t.shape, twin.get(k).shape);
      assert.deepEqual(Array.from(t.bytes), Array.from(twin.get(k).bytes), `${name}.${k}: the same bytes`);
    }
  }
});

test('a state dict built here: views of one storage, float16, parameters', () => {
  const m = readTorchStateDict(archive(statePickle([['w', '0', 3]])), 'x.pt');
  assert.deepEqual(m.get('w').shape, [3]);
  assert.deepEqual(Array.from(new Float32Array(m.get('w').bytes.slice().buffer)), [1, 2, 3]);
  const view = readTorchStateDict(archive(statePickle([['v', '0', 3]], { size: 2, offset: 1 })), 'x.pt');
  assert.deepEqual(Array.from(new Float32Array(view.get('v').bytes.slice().buffer)), [2, 3], 'offset 1, two values');
  const half = readTorchStateDict(archive(statePickle([['h', '0', 2]], { storage: 'HalfStorage' }), [['0', Uint8Array.of(0, 60, 0, 64)]]), 'x.pt');
  assert.equal(half.get('h').dtype, 'F16');
});

test('hostile pickles are refused by name, nothing called', () => {
  const reduceCall = (m, n) => b(PROTO, GLOBAL(m, n), '(', str('echo pwned'), 't', 'R', '.');
  for (const [m, n] of [
    ['os', 'system'],
    ['posix', 'system'],
    ['builtins', 'eval'],
    ['__builtin__', 'exec'],
    ['subprocess', 'Popen'],
    ['torch', 'load'],
    ['torch._utils', '_rebuild_qtensor'],
    ['collections', 'OrderedDict\nos'],
  ])
    refused(archive(reduceCall(m, n)), /not part of a state dict|opcode/, `${m}.${n}`);
  refused(archive(b(PROTO, str('os'), str('system'), 0x93, '.')), /os\.system/, 'STACK_GLOBAL os.system');
  for (const [op, what] of [
    ['i', 'INST'],
    ['o', 'OBJ'],
    [0x81, 'NEWOBJ'],
    ['G', 'BINFLOAT'],
    [']', 'EMPTY_LIST'],
    ['e', 'APPENDS'],
    ['S', 'STRING'],
    [0x82, 'EXT1'],
  ])
    refused(archive(b(PROTO, op, '.')), /opcode 0x[0-9a-f]+ .* not one a state dict/, what);
  refused(archive(b(PROTO, GLOBAL('collections', 'OrderedDict'), '(', str('x'), 't', 'R', '.')), /OrderedDict with arguments/, 'OrderedDict(x)');
  refused(archive(b(PROTO, GLOBAL('torch._utils', '_rebuild_tensor_v2'), ')', 'R', '.')), /6 or 7 arguments/, 'a tensor without arguments');
  assert.equal(readTorchStateDict(archive(b(PROTO, '}', '.')), 'x.pt').size, 0, 'an empty state dict is one');
});

test('resource and structure attacks are bounded', () => {
  refused(archive(b(PROTO, rep('(', 100000), '.')), /MARKs/, '100000 MARKs');
  refused(archive(b(PROTO, rep(')', 5000), '.')), /nests deeper/, '5000 tuples on the stack');
  refused(archive(b(PROTO, 'X', u32(0xffffffff), '.')), /a string of \d+ bytes/, 'a 4 GB string');
  const memo = new Uint8Array(70000 * 5);
  for (let i = 0; i < 70000; i++) memo.set(b('r', u32(i)), i * 5);
  refused(archive(b(PROTO, ')', memo, '.')), /memoizes more than/, '70000 memo entries');
  refused(archive(b(PROTO, 0x8a, 200, ...new Array(200).fill(1), '.')), /LONG1 of 200 bytes/, 'a 200-byte integer');
  refused(archive(b(PROTO, 'h', 7, '.')), /memo 7, which was never set/, 'a memo never set');
  refused(archive(b(PROTO, 'u', '.')), /closes a MARK/, 'SETITEMS without a MARK');
  refused(archive(b(PROTO, 'R')), /pops an empty stack|ends in the middle/, 'REDUCE on an empty stack');
  refused(archive(b(PROTO, ')')), /ends in the middle/, 'no STOP');
  refused(archive(b(0x80, 9, '.')), /protocol 9/, 'protocol 9');
  refused(archive(b(PROTO, ')', '.')), /not a dict of tensors/, 'a tuple at the top');
  refused(archive(b(PROTO, '}', str('k'), 'K', 1, 's', '.')), /not name -> tensor/, 'an int in the state dict');
});

test('storages and tensors are checked against the archive', () => {
  refused(archive(statePickle([['w', '0', 4]])), /12 bytes for 4 F32 values/, 'a storage larger than its record');
  refused(archive(statePickle([['w', '1', 3]])), /no record a\/data\/1/, 'a storage record missing');
  refused(archive(statePickle([['w', '0', 3]], { size: 3, offset: 2 })), /runs past its storage/, 'a tensor past its storage');
  refused(archive(statePickle([['w', '0', 3]], { storage: 'LongStorage' })), /not part of a state dict/, 'an int64 storage');
  refused(archive(statePickle([['w', '0', 3]], { storage: 'IntStorage' })), /not part of a state dict/, 'an int32 storage');
  refused(archive(statePickle([['w', '0', 3]]), undefined, [['a/byteorder', new TextEncoder().encode('big')]]), /big-endian/, 'big-endian');
  refused(archive(statePickle([['w', '0', 3]]), undefined, [['a/constants.pkl', b('.')]]), /TorchScript/, 'TorchScript');
  refused(
    zip([
      ['a/data.pkl', statePickle([['w', '0', 3]])],
      ['b/data/0', f32(1, 2, 3)],
    ]),
    /outside a\//,
    'a record outside the folder',
  );
  refused(zip([['data.pkl', statePickle([['w', '0', 3]])]]), /in no folder/, 'no folder');
  refused(zip([['a/x', b('.')]]), /no a\/data.pkl/, 'no data.pkl');
});

test('broken zip archives are refused', () => {
  const good = archive(statePickle([['w', '0', 3]]));
  refused(zip([['a/data.pkl', b('.')]], { method: 8 }), /compressed \(method 8\)/, 'deflated');
  refused(zip([['a/data.pkl', b('.')]], { flags: 1 }), /encrypted/, 'encrypted');
  refused(good.subarray(0, good.length - 30), /no end of central directory|damaged/, 'cut');
  refused(Uint8Array.of(0x80, 2, 0x7d, 0x2e), /not a zip archive/, 'a legacy raw pickle');
  refused(new Uint8Array(0), /not a zip archive/, 'empty');
  const z64 = good.slice();
  new DataView(z64.buffer).setUint32(z64.length - 6, 0xffffffff, true);
  refused(z64, /zip64/, 'zip64 markers');
  const past = good.slice();
  new DataView(past.buffer).setUint32(past.length - 10, 0x7fffffff, true);
  refused(past, /central directory runs past/, 'central directory size past the end');
  const dup = zip([
    ['a/data.pkl', b('.')],
    ['a/data.pkl', b('.')],
  ]);
  refused(dup, /appears twice/, 'a name twice');
});

test('random mutations of a real .pt: a state dict or BAD_FILE, never a crash or a hang (3000 cases)', () => {
  const base = pt('colbert_linear');
  let seed = 12345;
  const rand = (n) => (seed = (seed * 1103515245 + 12345) >>> 0) % n;
  let ok = 0,
    bad = 0;
  const t0 = performance.now();
  for (let i = 0; i < 3000; i++) {
    let bytes = base.slice();
    const kind = rand(4);
    if (kind === 0) for (let k = 0, n = 1 + rand(8); k < n; k++) bytes[rand(bytes.length)] = rand(256);
    else if (kind === 1) bytes = bytes.subarray(0, rand(bytes.length));
    else if (kind === 2) {
      const at = rand(bytes.length);
      bytes = Uint8Array.from([...bytes.subarray(0, at), ...Array.from({ length: 1 + rand(16) }, () => rand(256)), ...bytes.subarray(at)]);
    } else {
      const at = rand(bytes.length);
      bytes[at] = [0x80, 0x63, 0x52, 0x51, 0x28, 0x74, 0x2e, 0x71, 0x68, 0x58][rand(10)];
    }
    try {
      const m = readTorchStateDict(bytes, 'm.pt');
      for (const t of m.values()) assert.equal(t.bytes.length, t.shape.reduce((a, d) => a * d, 1) * 4);
      ok++;
    } catch (e) {
      assert.ok(e instanceof SwapformerError && e.code === 'BAD_FILE', `mutation ${i}: ${e}`);
      bad++;
    }
  }
  // most single-byte changes land in the tensors' data (still a state dict); cuts and structure bytes do not
  assert.ok(ok > 100 && bad > 100 && performance.now() - t0 < 30000, `${ok} read, ${bad} refused`);
});

test('loadPretrained names the hostile head file of a bge-m3 folder, and loads the folder once it is fixed', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sf-m3-'));
  try {
    cpSync(path.join(ROOT, 'bge-m3'), dir, { recursive: true });
    writeFileSync(path.join(dir, 'sparse_linear.pt'), archive(b(PROTO, GLOBAL('os', 'system'), '(', str('touch /tmp/pwned'), 't', 'R', '.')));
    await assert.rejects(loadPretrained(dir), (e) => e.code === 'BAD_FILE' && /sparse_linear\.pt: data\.pkl names os\.system/.test(e.message));
    cpSync(path.join(ROOT, 'bge-m3', 'sparse_linear.pt'), path.join(dir, 'sparse_linear.pt'));
    const m = await loadPretrained(dir);
    assert.equal(m.retrieval.kind, 'bge-m3');
    m.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
