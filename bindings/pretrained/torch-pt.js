// A PyTorch state dict saved by torch.save (a .pt / .bin zip archive), read
// without executing anything: the zip's stored records, and the pickle of
// data.pkl interpreted as data. For bge-m3's colbert_linear.pt and
// sparse_linear.pt, which ship only in this format.
//
// Why this is safe: pickle's danger is GLOBAL + REDUCE reaching an arbitrary
// callable. Here a GLOBAL is a pair of names compared with a short list, and
// REDUCE only builds the few shapes a state dict has (an OrderedDict, a tensor
// from its storage, a parameter); nothing is looked up, imported or called.
// What remains are resource and confusion risks, bounded below: sizes, counts,
// depths and string lengths capped, every offset inside the file, every tensor
// inside its storage, contiguous, little-endian, float.
//
// Layouts (pytorch torch/serialization.py _save and _load, caffe2/serialize
// inline_container.cc; shared/reference/retrieval-and-qa.md section 5):
//   <archive>/data.pkl      the pickle (protocol 2; 3-5 accepted)
//   <archive>/data/<key>    each storage's raw bytes
//   <archive>/byteorder     'little' (absent: little), <archive>/version, .data/..., ignored
//   every record stored (zip method 0), one folder prefix for all of them.
// Refused: compressed or encrypted entries, zip64, TorchScript archives
// (constants.pkl, code/), big-endian data, the legacy non-zip format, any
// opcode or GLOBAL outside the lists, anything at the top but str -> tensor.
import { SwapformerError } from '../utils/errors.js';

const LIMITS = {
  entries: 4096, // zip records
  pickle: 64 << 20, // bytes of data.pkl
  stack: 4096, // items on the stack
  marks: 64, // open MARKs
  memo: 1 << 16, // memo entries
  string: 1 << 16, // UTF-8 bytes of a string
  tensors: 4096,
  ndim: 8,
};

/** torch.<T>Storage -> [dtype, bytes per element]. */
const STORAGES = { FloatStorage: ['F32', 4], HalfStorage: ['F16', 2], BFloat16Storage: ['BF16', 2], DoubleStorage: ['F64', 8] };

/** The GLOBALs a state dict uses, and nothing else (module\nname). */
const GLOBALS = new Set([
  'collections\nOrderedDict',
  'torch._utils\n_rebuild_tensor_v2',
  'torch._utils\n_rebuild_parameter',
  ...Object.keys(STORAGES).map((s) => `torch\n${s}`),
]);

const utf8 = new TextDecoder('utf-8', { fatal: true });

// ------------------------------------------------------------------ zip

/** The stored records of a zip archive: Map name -> Uint8Array (views of bytes). */
function zipRecords(bytes, bad) {
  const n = bytes.length;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, n);
  if (n < 22 || dv.getUint32(0, true) !== 0x04034b50) bad('not a zip archive (torch.save has written zip archives since PyTorch 1.6: load and save it again)');
  let eocd = -1;
  for (let i = n - 22; i >= Math.max(0, n - 22 - 0xffff); i--) {
    if (dv.getUint32(i, true) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) bad('no end of central directory: a truncated zip archive');
  const count = dv.getUint16(eocd + 10, true),
    size = dv.getUint32(eocd + 12, true),
    at0 = dv.getUint32(eocd + 16, true);
  if (count === 0xffff || size === 0xffffffff || at0 === 0xffffffff) bad('a zip64 archive (over 4 GB): not a small head');
  if (count > LIMITS.entries) bad(`${count} records: more than ${LIMITS.entries}`);
  if (at0 + size > eocd) bad('the central directory runs past its end');
  const records = new Map();
  let at = at0;
  for (let i = 0; i < count; i++) {
    if (at + 46 > eocd || dv.getUint32(at, true) !== 0x02014b50) bad(`central directory entry ${i} is damaged`);
    const flags = dv.getUint16(at + 8, true),
      method = dv.getUint16(at + 10, true),
      csize = dv.getUint32(at + 20, true),
      usize = dv.getUint32(at + 24, true),
      nlen = dv.getUint16(at + 28, true),
      elen = dv.getUint16(at + 30, true),
      clen = dv.getUint16(at + 32, true),
      local = dv.getUint32(at + 42, true);
    if (at + 46 + nlen > eocd) bad(`central directory entry ${i} runs past its end`);
    let name;
    try {
      name = utf8.decode(bytes.subarray(at + 46, at + 46 + nlen));
    } catch {
      bad(`record ${i} has a name that is not UTF-8`);
    }
    if (flags & 1) bad(`${name} is encrypted`);
    if (method !== 0 || csize !== usize) bad(`${name} is compressed (method ${method}): torch.save stores its records`);
    if (records.has(name)) bad(`${name} appears twice`);
    if (local + 30 > n || dv.getUint32(local, true) !== 0x04034b50) bad(`${name}: its local header is missing`);
    const start = local + 30 + dv.getUint16(local + 26, true) + dv.getUint16(local + 28, true);
    if (start + usize > n) bad(`${name} runs past the end of the file`);
    records.set(name, bytes.subarray(start, start + usize));
    at += 46 + nlen + elen + clen;
  }
  return records;
}

// ------------------------------------------------------------------ pickle

const MARK = Symbol('mark');
const isInt = (v) => typeof v === 'number' && Number.isSafeInteger(v);

/**
 * Interprets a state dict's pickle: returns Map name -> {storage, offset,
 * size, stride}. persistent(pid) resolves a BINPERSID tuple to a storage.
 */
function unpickle(p, bad, persistent) {
  const dv = new DataView(p.buffer, p.byteOffset, p.length);
  const stack = [],
    marks = [],
    memo = new Map();
  let at = 0,
    tensors = 0;
  const need = (k) => {
    if (at + k > p.length) bad('data.pkl ends in the middle of an opcode');
  };
  const push = (v) => {
    if (stack.length >= LIMITS.stack) bad(`data.pkl nests deeper than ${LIMITS.stack} items`);
    stack.push(v);
  };
  const pop = () => {
    if (!stack.length || stack[stack.length - 1] === MARK) bad('data.pkl pops an empty stack');
    return stack.pop();
  };
  const popMark = () => {
    if (!marks.length) bad('data.pkl closes a MARK it never opened');
    const m = marks.pop();
    const items = stack.splice(m);
    items.shift(); // the MARK itself
    if (items.includes(MARK)) bad('data.pkl mixes MARKs');
    return items;
  };
  const string = (len) => {
    if (len > LIMITS.string) bad(`a string of ${len} bytes in data.pkl`);
    need(len);
    let s;
    try {
      s = utf8.decode(p.subarray(at, at + len));
    } catch {
      bad('a string in data.pkl is not UTF-8');
    }
    at += len;
    return s;
  };
  const line = () => {
    const end = p.indexOf(10, at);
    if (end < 0 || end - at > 256) bad('a GLOBAL of data.pkl is not two short lines');
    const s = string(end - at);
    at++;
    return s;
  };
  const global = (module, name) => {
    const key = `${module}\n${name}`;
    if (!GLOBALS.has(key)) bad(`data.pkl names ${module}.${name}, which is not part of a state dict of tensors (nothing is ever called)`);
    return { global: key };
  };
  const put = (i) => {
    if (memo.size >= LIMITS.memo && !memo.has(i)) bad(`data.pkl memoizes more than ${LIMITS.memo} values`);
    if (!stack.length) bad('data.pkl memoizes an empty stack');
    memo.set(i, stack[stack.length - 1]);
  };
  const get = (i) => {
    if (!memo.has(i)) bad(`data.pkl reads memo ${i}, which was never set`);
    push(memo.get(i));
  };
  const isDict = (v) => v instanceof Map;
  const tuple = (v, n, what) => {
    if (!Array.isArray(v) || (n !== undefined && v.length !== n)) bad(`data.pkl: ${what} is not a tuple${n === undefined ? '' : ` of ${n}`}`);
    return v;
  };
  for (;;) {
    need(1);
    const op = p[at++];
    switch (op) {
      case 0x80: // PROTO
        need(1);
        if (p[at] < 2 || p[at] > 5) bad(`pickle protocol ${p[at]}: torch.save writes 2`);
        at++;
        break;
      case 0x95: // FRAME (protocol 4): a length we do not need
        need(8);
        at += 8;
        break;
      case 0x63: // GLOBAL
        push(global(line(), line()));
        break;
      case 0x93: {
        // STACK_GLOBAL
        const name = pop(),
          module = pop();
        if (typeof module !== 'string' || typeof name !== 'string') bad('STACK_GLOBAL without two strings');
        push(global(module, name));
        break;
      }
      case 0x71: // BINPUT
        need(1);
        put(p[at++]);
        break;
      case 0x72: // LONG_BINPUT
        need(4);
        put(dv.getUint32(at, true));
        at += 4;
        break;
      case 0x94: // MEMOIZE
        put(memo.size);
        break;
      case 0x68: // BINGET
        need(1);
        get(p[at++]);
        break;
      case 0x6a: // LONG_BINGET
        need(4);
        get(dv.getUint32(at, true));
        at += 4;
        break;
      case 0x29: // EMPTY_TUPLE
        push([]);
        break;
      case 0x7d: // EMPTY_DICT
        push(new Map());
        break;
      case 0x28: // MARK
        if (marks.length >= LIMITS.marks) bad(`data.pkl opens more than ${LIMITS.marks} MARKs`);
        marks.push(stack.length);
        push(MARK);
        break;
      case 0x74: // TUPLE
        push(popMark());
        break;
      case 0x85: // TUPLE1
        push([pop()]);
        break;
      case 0x86: {
        // TUPLE2
        const b = pop();
        push([pop(), b]);
        break;
      }
      case 0x87: {
        // TUPLE3
        const c = pop(),
          b = pop();
        push([pop(), b, c]);
        break;
      }
      case 0x58: // BINUNICODE
        need(4);
        at += 4;
        push(string(dv.getUint32(at - 4, true)));
        break;
      case 0x8c: // SHORT_BINUNICODE
        need(1);
        at++;
        push(string(p[at - 1]));
        break;
      case 0x4b: // BININT1
        need(1);
        push(p[at++]);
        break;
      case 0x4d: // BININT2
        need(2);
        push(dv.getUint16(at, true));
        at += 2;
        break;
      case 0x4a: // BININT
        need(4);
        push(dv.getInt32(at, true));
        at += 4;
        break;
      case 0x8a: {
        // LONG1: n little-endian two's complement bytes
        need(1);
        const len = p[at++];
        if (len > 8) bad(`a LONG1 of ${len} bytes in data.pkl`);
        need(len);
        let v = 0n;
        for (let i = len - 1; i >= 0; i--) v = (v << 8n) | BigInt(p[at + i]);
        if (len && p[at + len - 1] & 0x80) v -= 1n << BigInt(8 * len);
        at += len;
        if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < -BigInt(Number.MAX_SAFE_INTEGER)) bad('an integer past 2^53 in data.pkl');
        push(Number(v));
        break;
      }
      case 0x88: // NEWTRUE
        push(true);
        break;
      case 0x89: // NEWFALSE
        push(false);
        break;
      case 0x4e: // NONE
        push(null);
        break;
      case 0x51: // BINPERSID
        push(persistent(pop()));
        break;
      case 0x52: {
        // REDUCE: only the three constructions of a state dict, each built here, nothing called
        const args = tuple(pop(), undefined, 'the arguments of REDUCE');
        const fn = pop();
        if (fn?.global === 'collections\nOrderedDict') {
          if (args.length) bad('OrderedDict with arguments');
          push(new Map());
        } else if (fn?.global === 'torch._utils\n_rebuild_tensor_v2') {
          if (args.length !== 6 && args.length !== 7) bad('_rebuild_tensor_v2 takes 6 or 7 arguments');
          const [storage, offset, size, stride, requiresGrad, hooks] = args;
          if (!storage?.storage) bad('a tensor whose storage is not a persistent storage');
          if (!isInt(offset) || offset < 0) bad('a tensor with a bad storage offset');
          tuple(size, undefined, 'a size');
          tuple(stride, size.length, 'a stride');
          if (size.length > LIMITS.ndim || ![...size, ...stride].every((d) => isInt(d) && d >= 0)) bad('a tensor with a bad size or stride');
          if (typeof requiresGrad !== 'boolean' || !isDict(hooks) || hooks.size) bad('a tensor with backward hooks or a bad requires_grad');
          if (++tensors > LIMITS.tensors) bad(`more than ${LIMITS.tensors} tensors`);
          push({ tensor: { storage: storage.storage, offset, size: size.slice(), stride: stride.slice() } });
        } else if (fn?.global === 'torch._utils\n_rebuild_parameter') {
          if (args.length !== 3 || !args[0]?.tensor || typeof args[1] !== 'boolean' || !isDict(args[2]))
            bad('_rebuild_parameter takes (tensor, requires_grad, hooks)');
          push(args[0]);
        } else bad('REDUCE of something other than OrderedDict, _rebuild_tensor_v2 or _rebuild_parameter');
        break;
      }
      case 0x62: {
        // BUILD: an OrderedDict's state (its _metadata), dropped
        const state = pop();
        if (!isDict(stack[stack.length - 1]) || !(isDict(state) || state === null)) bad('BUILD on something other than an OrderedDict');
        break;
      }
      case 0x73: {
        // SETITEM
        const v = pop(),
          k = pop();
        const d = stack[stack.length - 1];
        if (!isDict(d)) bad('SETITEM on something other than a dict');
        d.set(k, v);
        break;
      }
      case 0x75: {
        // SETITEMS
        const items = popMark();
        const d = stack[stack.length - 1];
        if (!isDict(d) || items.length % 2) bad('SETITEMS on something other than a dict');
        for (let i = 0; i < items.length; i += 2) d.set(items[i], items[i + 1]);
        break;
      }
      case 0x2e: {
        // STOP
        const top = pop();
        if (stack.length) bad('data.pkl leaves more than one value');
        if (!isDict(top)) bad('the top of data.pkl is not a dict of tensors (a state dict)');
        const out = new Map();
        for (const [k, v] of top) {
          if (typeof k !== 'string' || !v?.tensor) bad(`the entry ${JSON.stringify(String(k))} of the state dict is not name -> tensor`);
          out.set(k, v.tensor);
        }
        return out;
      }
      default:
        bad(`opcode 0x${op.toString(16)} at byte ${at - 1} of data.pkl is not one a state dict of tensors uses`);
    }
  }
}

/**
 * A state dict of float tensors from a torch.save zip archive (`file` names it
 * in messages): Map name -> {dtype, shape, bytes} (views of `bytes`), as
 * safetensors.js gives them. BAD_FILE for anything else.
 */
export function readTorchStateDict(bytes, file) {
  const bad = (why) => {
    throw new SwapformerError('BAD_FILE', `${file}: ${why}`);
  };
  if (!(bytes instanceof Uint8Array)) bad('must be bytes');
  const records = zipRecords(bytes, bad);
  const names = [...records.keys()];
  if (!names.length) bad('an empty zip archive');
  const slash = names[0].indexOf('/');
  if (slash <= 0) bad('its first record is in no folder: not a torch.save archive');
  const prefix = names[0].slice(0, slash + 1);
  for (const n of names) {
    if (!n.startsWith(prefix)) bad(`the record ${n} is outside ${prefix}`);
    const rest = n.slice(prefix.length);
    if (rest === 'constants.pkl' || rest.startsWith('code/')) bad('a TorchScript archive (torch.jit.save), not a state dict');
  }
  const pkl = records.get(`${prefix}data.pkl`);
  if (!pkl) bad(`no ${prefix}data.pkl`);
  if (pkl.length > LIMITS.pickle) bad(`data.pkl has ${pkl.length} bytes`);
  const order = records.get(`${prefix}byteorder`);
  if (order && new TextDecoder().decode(order) !== 'little') bad('its tensors are big-endian');
  const storages = new Map();
  const persistent = (pid) => {
    if (!Array.isArray(pid) || pid.length !== 5 || pid[0] !== 'storage') bad("a persistent id other than ('storage', type, key, location, numel)");
    const [, type, key, , numel] = pid;
    const kind = type?.global?.startsWith('torch\n') ? STORAGES[type.global.slice(6)] : undefined;
    if (!kind) bad('a storage that is not float32, float16, bfloat16 or float64');
    if (typeof key !== 'string' || !/^\d{1,9}$/.test(key) || !isInt(numel) || numel < 0) bad('a storage with a bad key or size');
    if (storages.has(key)) {
      const s = storages.get(key);
      if (s.dtype !== kind[0] || s.numel !== numel) bad(`storage ${key} is described twice, differently`);
      return { storage: s };
    }
    const data = records.get(`${prefix}data/${key}`);
    if (!data) bad(`no record ${prefix}data/${key}`);
    if (data.length !== numel * kind[1]) bad(`storage ${key}: ${data.length} bytes for ${numel} ${kind[0]} values`);
    const s = { dtype: kind[0], size: kind[1], numel, data };
    storages.set(key, s);
    return { storage: s };
  };
  const tensors = unpickle(pkl, bad, persistent);
  const out = new Map();
  for (const [name, t] of tensors) {
    const n = t.size.reduce((a, d) => a * d, 1);
    let expect = 1;
    for (let i = t.size.length - 1; i >= 0; i--) {
      if (t.size[i] !== 1 && t.stride[i] !== expect) bad(`${name}: not a contiguous row-major tensor (size [${t.size}], stride [${t.stride}])`);
      expect *= t.size[i];
    }
    if (t.offset + n > t.storage.numel) bad(`${name}: [${t.size}] at offset ${t.offset} runs past its storage of ${t.storage.numel}`);
    out.set(name, { dtype: t.storage.dtype, shape: t.size, bytes: t.storage.data.subarray(t.offset * t.storage.size, (t.offset + n) * t.storage.size) });
  }
  return out;
}
