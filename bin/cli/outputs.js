// Where `swapformer embed` puts its vectors, and how a run survives a kill.
//
// Records are written to <out>.partial as they are computed, whole records at
// a time, and <out> appears only at the end, complete (a rename): a killed run
// leaves <out> as it was and a partial file that --resume continues from.
//   <out>.partial       .jsonl (float32, binary, ubinary): the JSON lines themselves;
//                       anything else: a .npy of the rows (float32, or the packed
//                       bits), its header's row count written at the end
//   <out>.partial.ids   the --id-field values, a JSON value a line (formats with an id column)
//   <out>.partial.json  the run's settings: --resume refuses other ones
// At the end: .jsonl renamed; .npy its header rewritten, renamed; int8 / uint8
// (ranges over the whole corpus), .arrow and .parquet written from the
// partial rows into a temporary file renamed over <out>. On resume, a last
// record cut by the kill (a line without its \n, a row short of its bytes) is dropped.
import { createWriteStream } from 'node:fs';
import { open, rename, rm, readFile, writeFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { quantizeEmbeddings } from '../../bindings/index.js';
import { CliError } from './errors.js';
import { tempBeside } from './io.js';

export const OUTPUT_FORMATS = ['jsonl', 'npy', 'arrow', 'parquet'];
const EXTENSIONS = { '.jsonl': 'jsonl', '.ndjson': 'jsonl', '.npy': 'npy', '.arrow': 'arrow', '.parquet': 'parquet' };
export const outputFormat = (file) => EXTENSIONS[path.extname(file).toLowerCase()] ?? null;

// ------------------------------------------------------------------ .npy

const DESCR = { float32: '<f4', int8: '|i1', uint8: '|u1' };
const ITEM = { '<f4': 4, '|i1': 1, '|u1': 1 };

/**
 * The .npy v1.0 header numpy (1.24) writes for a C-order array of this dtype
 * and shape [rows, cols], byte for byte: the dict's repr, 21 - digits(rows)
 * spaces of room for the row count to grow (numpy's GROWTH_AXIS_MAX_DIGITS),
 * then spaces and a newline to a multiple of 64 bytes. Its length does not
 * depend on rows, so the count is rewritten in place at the end.
 */
export function npyHeader(descr, rows, cols) {
  let dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${rows}, ${cols}), }`;
  dict += ' '.repeat(Math.max(0, 21 - String(rows).length));
  const hlen = dict.length + 1;
  const pad = 64 - ((8 + 2 + hlen) % 64);
  const text = `${dict}${' '.repeat(pad)}\n`;
  const out = Buffer.alloc(10 + text.length);
  out.write('\x93NUMPY', 0, 'latin1');
  out[6] = 1;
  out[7] = 0;
  out.writeUInt16LE(text.length, 8);
  out.write(text, 10, 'latin1');
  return out;
}

/** The dtype, columns and header length of a .npy file we wrote (null when it is not one). */
function readNpyHeader(buf) {
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY' || buf[6] !== 1) return null;
  const length = 10 + buf.readUInt16LE(8);
  const m = /^\{'descr': '([<|][a-z]\d)', 'fortran_order': False, 'shape': \((\d+), (\d+)\), \}/.exec(buf.toString('latin1', 10, Math.min(length, buf.length)));
  return m && Object.hasOwn(ITEM, m[1]) ? { descr: m[1], rows: Number(m[2]), cols: Number(m[3]), length } : null;
}

// ------------------------------------------------------------------ values

/**
 * A float32 as the shortest decimal that reads back to the same float32
 * (numpy's repr of a float32): 0.1f is 0.1, not 0.10000000149011612.
 * JSON.parse then Math.fround (or numpy's float32) gives the same bits.
 */
export function float32Text(x) {
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  for (let p = 6; p < 9; p++) {
    const s = Number(x.toPrecision(p));
    if (Math.fround(s) === x) return String(s);
  }
  return String(Number(x.toPrecision(9)));
}

/** One JSON line: {"id": id, "embedding": [...]}. */
function jsonLine(id, row, float) {
  const values = new Array(row.length);
  for (let i = 0; i < row.length; i++) values[i] = float ? float32Text(row[i]) : String(row[i]);
  return `{"id":${JSON.stringify(id)},"embedding":[${values.join(',')}]}\n`;
}

// ------------------------------------------------------------------ the partial files

/** Complete lines at the start of a file: {count, bytes} (a last line without \n not counted), reading in chunks. */
async function completeLines(file) {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(1 << 20);
    let count = 0, bytes = 0, at = 0, last = '';
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, at);
      if (bytesRead === 0) break;
      for (let i = buf.indexOf(10, 0); i >= 0 && i < bytesRead; i = buf.indexOf(10, i + 1)) {
        count++;
        bytes = at + i + 1;
      }
      at += bytesRead;
    }
    if (count > 0) { // the last complete line, read back to check it is JSON (a partial file we wrote)
      const start = Math.max(0, bytes - (1 << 22));
      const tail = Buffer.alloc(bytes - start);
      await fh.read(tail, 0, tail.length, start);
      const text = tail.toString('utf8').slice(0, -1);
      last = text.slice(text.lastIndexOf('\n') + 1);
    }
    return { count, bytes, last };
  } finally {
    await fh.close();
  }
}

/** A JSON-lines partial file: whole lines appended; on resume, complete lines counted and a cut last line dropped. */
class LinesFile {
  constructor(file) { this.file = file; }

  async create() {
    this.fh = await open(this.file, 'w');
    return 0;
  }

  async resume() {
    const { count, bytes, last } = await completeLines(this.file);
    if (count > 0) {
      try {
        JSON.parse(last);
      } catch {
        throw new CliError(`${this.file}: its last complete line is not JSON: not a partial file of swapformer embed`);
      }
    }
    this.fh = await open(this.file, 'r+');
    await this.fh.truncate(bytes);
    await this.fh.close();
    this.fh = await open(this.file, 'a');
    return count;
  }

  async append(text) { await this.fh.write(text); }

  async close() {
    if (!this.fh) return;
    await this.fh.sync().catch(() => {});
    await this.fh.close();
    this.fh = null;
  }
}

/** A .npy partial file: its header (row count 0 until the end), then whole rows appended. */
class RowsFile {
  constructor(file, descr, cols) {
    Object.assign(this, { file, descr, cols, rowBytes: cols * ITEM[descr], header: npyHeader(descr, 0, cols) });
  }

  async create() {
    this.fh = await open(this.file, 'w');
    await this.fh.write(this.header);
    this.rows = 0;
    return 0;
  }

  async resume() {
    const fh = await open(this.file, 'r+');
    try {
      const head = Buffer.alloc(this.header.length);
      await fh.read(head, 0, head.length, 0);
      const h = readNpyHeader(head);
      if (!h || h.length !== this.header.length || h.descr !== this.descr || h.cols !== this.cols) {
        throw new CliError(`${this.file}: not the partial file of this run (its header says ${h ? `${h.descr} x ${h.cols}` : 'it is no .npy'}, the run writes ${this.descr} x ${this.cols})`);
      }
      const { size } = await fh.stat();
      this.rows = Math.floor((size - h.length) / this.rowBytes);
      await fh.truncate(h.length + this.rows * this.rowBytes);
    } finally {
      await fh.close();
    }
    this.fh = await open(this.file, 'a');
    return this.rows;
  }

  async append(bytes) {
    await this.fh.write(bytes);
    this.rows += bytes.length / this.rowBytes;
  }

  async close() {
    if (!this.fh) return;
    await this.fh.sync().catch(() => {});
    await this.fh.close();
    this.fh = null;
  }

  /** The header's row count set to the rows written (in place: the same length). */
  async seal() {
    const fh = await open(this.file, 'r+');
    try {
      await fh.write(npyHeader(this.descr, this.rows, this.cols), 0, this.header.length, 0);
      await fh.sync();
    } finally {
      await fh.close();
    }
  }

  /** The rows in chunks of about `bytes` bytes, read back from the file: {rows, data (a Buffer)}. */
  async *chunks(bytes = 8 << 20) {
    const per = Math.max(1, Math.floor(bytes / this.rowBytes));
    const fh = await open(this.file, 'r');
    try {
      for (let r = 0; r < this.rows; r += per) {
        const n = Math.min(per, this.rows - r);
        const buf = Buffer.alloc(n * this.rowBytes);
        await fh.read(buf, 0, buf.length, this.header.length + r * this.rowBytes);
        yield { rows: n, data: buf };
      }
    } finally {
      await fh.close();
    }
  }
}

/** The ids file's values in order, in chunks of the sizes given (JSON values, a line each). */
async function* idChunks(file, sizes) {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(1 << 20), decoder = new TextDecoder();
    const pending = [];
    let rest = '', at = 0;
    for await (const n of sizes) {
      while (pending.length < n) {
        const { bytesRead } = await fh.read(buf, 0, buf.length, at);
        if (bytesRead === 0) throw new CliError(`${file}: fewer ids than rows`);
        at += bytesRead;
        const parts = (rest + decoder.decode(buf.subarray(0, bytesRead), { stream: true })).split('\n');
        rest = parts.pop();
        for (const p of parts) pending.push(JSON.parse(p));
      }
      yield pending.splice(0, n);
    }
  } finally {
    await fh.close();
  }
}

/** Sizes of chunks that cover `rows`. */
function* chunkSizes(rows, per = 65536) {
  for (let r = 0; r < rows; r += per) yield Math.min(per, rows - r);
}

// ------------------------------------------------------------------ libraries for .arrow and .parquet

/**
 * A package the CLI needs for one output format, imported only then: from
 * swapformer's own node_modules, else from the working directory's (a
 * project that installed it beside a global swapformer).
 */
async function optionalPackage(name, format) {
  try {
    return await import(name);
  } catch (e) {
    if (e?.code !== 'ERR_MODULE_NOT_FOUND') throw e;
  }
  try {
    return await import(pathToFileURL(createRequire(path.join(process.cwd(), 'noop.js')).resolve(name)).href);
  } catch {
    throw new CliError(`writing .${format} needs the ${name} package, which swapformer does not bring: npm install ${name}`);
  }
}

/** Throws now, before any embedding, when the package an output format is written with is missing. */
export async function checkOutputLibrary(format) {
  if (format === 'arrow') await optionalPackage('apache-arrow', 'arrow');
  if (format === 'parquet') await optionalPackage('hyparquet-writer', 'parquet');
}

/** Whether the ids are all integers (an int64 column) or else strings (numbers as their JSON text). */
async function idKind(file, rows) {
  for await (const ids of idChunks(file, chunkSizes(rows))) if (!ids.every((v) => Number.isSafeInteger(v))) return 'string';
  return 'int';
}

async function arrowWriter(out, { precision, cols, ids }) {
  const A = await optionalPackage('apache-arrow', 'arrow');
  const valueType = precision === 'float32' ? new A.Float32() : precision === 'int8' || precision === 'binary' ? new A.Int8() : new A.Uint8();
  const embType = new A.FixedSizeList(cols, new A.Field('item', valueType, false));
  const idType = ids === 'string' ? new A.Utf8() : new A.Int64();
  const schema = new A.Schema([new A.Field('id', idType, false), new A.Field('embedding', embType, false)]);
  const writer = new A.RecordBatchFileWriter();
  const stream = createWriteStream(out, { flags: 'wx' });
  const closed = new Promise((resolve, reject) => { stream.on('close', resolve); stream.on('error', reject); });
  writer.pipe(stream);
  let written = false;
  const self = {
    write(idList, data, n) {
      written = true;
      const child = A.makeData({ type: valueType, data, length: n * cols, nullCount: 0 });
      const emb = A.makeData({ type: embType, length: n, nullCount: 0, child });
      const id = ids === 'string' ? A.vectorFromArray(idList.map(String), new A.Utf8()).data[0]
        : A.makeData({ type: new A.Int64(), data: BigInt64Array.from(idList, BigInt), length: n, nullCount: 0 });
      writer.write(new A.RecordBatch(schema, A.makeData({ type: new A.Struct(schema.fields), length: n, nullCount: 0, children: [id, emb] })));
    },
    async finish() {
      if (!written) self.write([], new valueType.ArrayType(0), 0); // an empty corpus: the schema, no rows
      writer.finish();
      await closed;
    },
  };
  return self;
}

async function parquetWriter(out, { precision, ids }) {
  const P = await optionalPackage('hyparquet-writer', 'parquet');
  const element = precision === 'float32' ? { type: 'FLOAT' } : { type: 'INT32', converted_type: precision === 'int8' || precision === 'binary' ? 'INT_8' : 'UINT_8' };
  const schema = [
    { name: 'root', num_children: 2 },
    ids === 'string' ? { name: 'id', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' } : { name: 'id', type: 'INT64', repetition_type: 'REQUIRED' },
    { name: 'embedding', repetition_type: 'REQUIRED', num_children: 1, converted_type: 'LIST' },
    { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    { name: 'element', ...element, repetition_type: 'REQUIRED' },
  ];
  await writeFile(out, '', { flag: 'wx' });
  const writer = new P.ParquetWriter({ writer: P.fileWriter(out), schema, createdBy: 'swapformer embed' });
  return {
    write(idList, data, n, cols) {
      const rows = new Array(n);
      for (let r = 0; r < n; r++) rows[r] = Array.from(data.subarray(r * cols, (r + 1) * cols));
      const id = ids === 'string' ? idList.map(String) : idList.map(BigInt);
      writer.write({ columnData: [{ name: 'id', data: id }, { name: 'embedding', data: rows }], rowGroupSize: n });
    },
    async finish() { writer.finish(); },
  };
}

async function linesWriter(out, { float }) {
  const fh = await open(out, 'wx');
  return {
    async write(idList, data, n, cols) {
      let text = '';
      for (let r = 0; r < n; r++) text += jsonLine(idList[r], data.subarray(r * cols, (r + 1) * cols), float);
      await fh.write(text);
    },
    async finish() {
      await fh.sync();
      await fh.close();
    },
  };
}

async function npyWriter(out, { precision, cols, rows }) {
  const fh = await open(out, 'wx');
  await fh.write(npyHeader(DESCR[precision], rows, cols));
  return {
    async write(_ids, data) { await fh.write(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)); },
    async finish() {
      await fh.sync();
      await fh.close();
    },
  };
}

// ------------------------------------------------------------------ the sink

/**
 * The output of one embed run: open() (fresh, or --resume: the records
 * already there), add(ids, embeddings) per batch, finish() (the complete
 * <out>), or close() on an interruption (the partial files kept).
 *   settings: what makes the output (compared on --resume)
 *   precision: the final one; the partial rows are float32 for int8 / uint8
 */
export class Sink {
  constructor(out, { format, precision, cols, withIds, settings }) {
    const packed = precision === 'binary' || precision === 'ubinary';
    Object.assign(this, { out, format, precision, cols, withIds, settings });
    this.partial = `${out}.partial`;
    this.idsFile = `${out}.partial.ids`;
    this.settingsFile = `${out}.partial.json`;
    this.direct = format === 'jsonl' && !['int8', 'uint8'].includes(precision); // lines written as they are, renamed at the end
    this.rowsPrecision = packed ? (precision === 'binary' ? 'int8' : 'uint8') : 'float32';
    this.idsApart = withIds && !this.direct && format !== 'npy'; // ids kept beside the rows
    this.file = this.direct ? new LinesFile(this.partial) : new RowsFile(this.partial, DESCR[this.rowsPrecision], cols);
    this.count = 0;
  }

  /** Opens the partial files: the number of records they already hold (0 unless resuming). */
  async open({ resume }) {
    const exists = async (f) => Boolean(await stat(f).catch(() => null));
    if (resume && await exists(this.partial)) {
      let saved;
      try {
        saved = JSON.parse(await readFile(this.settingsFile, 'utf8'));
      } catch {
        throw new CliError(`${this.settingsFile}: missing or not JSON: cannot tell what ${this.partial} was written with (delete both to start over)`);
      }
      const differ = Object.keys({ ...saved, ...this.settings }).filter((k) => JSON.stringify(saved[k]) !== JSON.stringify(this.settings[k]));
      if (differ.length) {
        const k = differ[0];
        throw new CliError(`--resume: ${this.partial} was written with ${k} = ${JSON.stringify(saved[k])}, this run has ${JSON.stringify(this.settings[k])}: run with the same settings, or delete ${this.partial} to start over`);
      }
      let count = await this.file.resume();
      if (this.idsApart) {
        const ids = await exists(this.idsFile) ? await new LinesFile(this.idsFile).resume() : 0;
        count = Math.min(count, ids);
        await this.#truncateTo(count);
      }
      this.count = count;
      return count;
    }
    if (!resume && await exists(this.partial)) {
      throw new CliError(`${this.partial} exists: an interrupted run of this output; --resume continues it, or delete it to start over`);
    }
    await writeFile(this.settingsFile, `${JSON.stringify(this.settings, null, 2)}\n`);
    await this.file.create();
    if (this.idsApart) {
      this.ids = new LinesFile(this.idsFile);
      await this.ids.create();
    }
    return 0;
  }

  // rows and ids cut to the same count (a kill between the two writes)
  async #truncateTo(count) {
    await this.file.close();
    const fh = await open(this.partial, 'r+');
    await fh.truncate(this.file.header.length + count * this.file.rowBytes);
    await fh.close();
    this.file.rows = count;
    this.file.fh = await open(this.partial, 'a');
    const { bytes } = await linesPrefix(this.idsFile, count);
    const ih = await open(this.idsFile, 'r+');
    await ih.truncate(bytes);
    await ih.close();
    this.ids = new LinesFile(this.idsFile);
    this.ids.fh = await open(this.idsFile, 'a');
  }

  /** A batch's records: ids (their ids: the input's, or record numbers) and {data, shape: [n, cols]}. */
  async add(ids, { data, shape }) {
    const [n] = shape;
    if (this.direct) {
      let text = '';
      const float = this.precision === 'float32';
      for (let r = 0; r < n; r++) text += jsonLine(ids[r], data.subarray(r * this.cols, (r + 1) * this.cols), float);
      await this.file.append(text);
    } else {
      await this.file.append(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
      if (this.idsApart) await this.ids.append(ids.map((v) => `${JSON.stringify(v)}\n`).join(''));
    }
    this.count += n;
  }

  /** Interrupted: the partial files flushed and kept for --resume. */
  async close() {
    await this.file.close();
    await this.ids?.close();
  }

  /** The complete output at <out> (renamed over it), the partial files removed. */
  async finish() {
    await this.close();
    if (this.direct) {
      await rename(this.partial, this.out);
    } else if (this.format === 'npy' && !['int8', 'uint8'].includes(this.precision)) { // the rows are the output's
      await this.file.seal();
      await rename(this.partial, this.out);
    } else {
      await this.#convert();
      await rm(this.partial, { force: true });
    }
    await rm(this.idsFile, { force: true });
    await rm(this.settingsFile, { force: true });
  }

  // the partial rows -> the output format (int8 / uint8 quantized with the ranges of every row), in chunks
  async #convert() {
    const rows = this.file.rows, cols = this.cols;
    const quantize = ['int8', 'uint8'].includes(this.precision);
    let ranges = null;
    if (quantize && rows > 0) ranges = await this.#ranges();
    const stored = quantize ? this.precision : this.precision === 'float32' ? 'float32' : this.rowsPrecision;
    const tmp = tempBeside(this.out);
    const ids = this.idsApart ? await idKind(this.idsFile, rows) : 'int';
    const make = { jsonl: linesWriter, npy: npyWriter, arrow: arrowWriter, parquet: parquetWriter }[this.format];
    try {
      const writer = await make(tmp, { precision: this.format === 'jsonl' ? this.precision : stored, cols, rows, ids, float: this.precision === 'float32' });
      const chunks = [];
      for await (const c of this.file.chunks()) chunks.push(c.rows); // sizes first: the ids are read in the same chunks
      const idIt = this.idsApart ? idChunks(this.idsFile, chunks) : null;
      let at = 0;
      for await (const c of this.file.chunks()) {
        let values = this.#view(c.data, this.rowsPrecision);
        if (quantize) values = (await quantizeEmbeddings({ data: values, shape: [c.rows, cols] }, this.precision, { ranges })).data;
        const idList = idIt ? (await idIt.next()).value : Array.from({ length: c.rows }, (_, k) => at + k);
        await writer.write(idList, values, c.rows, cols);
        at += c.rows;
      }
      await writer.finish();
      await rename(tmp, this.out);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
  }

  #view(buf, precision) {
    const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
    return precision === 'float32' ? new Float32Array(ab) : precision === 'int8' ? new Int8Array(ab) : new Uint8Array(ab);
  }

  // per-dimension minima and maxima of every float32 row: {data, shape: [2, cols]} (quantize_embeddings' ranges)
  async #ranges() {
    const cols = this.cols, lo = new Float32Array(cols).fill(Infinity), hi = new Float32Array(cols).fill(-Infinity);
    for await (const c of this.file.chunks()) {
      const v = this.#view(c.data, 'float32');
      for (let r = 0; r < c.rows; r++) {
        for (let d = 0; d < cols; d++) {
          const x = v[r * cols + d];
          if (x < lo[d]) lo[d] = x;
          if (x > hi[d]) hi[d] = x;
        }
      }
    }
    const data = new Float32Array(2 * cols);
    data.set(lo);
    data.set(hi, cols);
    return { data, shape: [2, cols] };
  }
}

/** The byte length of the first `count` lines of a file. */
async function linesPrefix(file, count) {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(1 << 20);
    let seen = 0, at = 0;
    if (count === 0) return { bytes: 0 };
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, at);
      if (bytesRead === 0) return { bytes: at };
      for (let i = buf.indexOf(10, 0); i >= 0 && i < bytesRead; i = buf.indexOf(10, i + 1)) {
        if (++seen === count) return { bytes: at + i + 1 };
      }
      at += bytesRead;
    }
  } finally {
    await fh.close();
  }
}
