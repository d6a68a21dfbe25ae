// Where `swapformer embed` puts its vectors, and how a run survives a kill.
//
// Records are written to <out>.partial as they are computed, whole records at
// a time, and <out> appears only at the end, complete (a rename): a killed run
// leaves <out> as it was and a partial file that --resume continues from.
//   <out>.partial       .jsonl (float32, binary, ubinary): the JSON lines themselves;
//                       anything else: a .npy of the rows (float32, or the packed
//                       bits), its header's row count written at the end
//   <out>.partial.ids   the --id-field values, each id's JSON text a line (formats with an id column)
//   <out>.partial.json  the run's settings, the input's size and time, the model's
//                       weights' digest: --resume refuses other ones
//   <out>.partial.input a checkpoint a batch: the records written so far and
//                       the SHA-256 of the input bytes they were made from
// At the end: .jsonl renamed; .npy its header rewritten, renamed; int8 / uint8
// (ranges over the whole corpus), .arrow and .parquet written from the
// partial rows into a new temporary file renamed over <out>. On resume, a
// record cut by the kill (a line without its \n, a row short of its bytes) is
// dropped, and the records are cut to the last checkpoint they all reach.
import { createWriteStream } from 'node:fs';
import { open, rename, rm, readFile, writeFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { quantizeEmbeddings } from '../../bindings/index.js';
import { CliError } from './errors.js';
import { count, tempBeside } from './io.js';

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

/** One JSON line: {"id": id, "embedding": [...]} (id: the JSON text of the id). */
function jsonLine(id, row, float) {
  const values = new Array(row.length);
  for (let i = 0; i < row.length; i++) values[i] = float ? float32Text(row[i]) : String(row[i]);
  return `{"id":${id},"embedding":[${values.join(',')}]}\n`;
}

const floats = (row) => Array.from(row, float32Text).join(',');

/** A sparse vector's line: {"id", "indices": [...], "values": [...]}; a ColBERT text's: {"id", "embedding": [[...], ...]}. */
function vectorLine(id, v, record) {
  if (record === 'sparse') return `{"id":${id},"indices":[${Array.from(v.indices).join(',')}],"values":[${floats(v.values)}]}\n`;
  const [n, d] = v.shape,
    rows = new Array(n);
  for (let i = 0; i < n; i++) rows[i] = `[${floats(v.data.subarray(i * d, (i + 1) * d))}]`;
  return `{"id":${id},"embedding":[${rows.join(',')}]}\n`;
}

/** The JSON text of a line's id (written first by vectorLine: a number, or a string with its escapes). */
function idText(line) {
  const from = 6; // {"id":
  if (line[from] !== '"') return line.slice(from, line.indexOf(',', from));
  let i = from + 1;
  while (line[i] !== '"') i += line[i] === '\\' ? 2 : 1;
  return line.slice(from, i + 1);
}

// ------------------------------------------------------------------ the partial files

/** Complete lines at the start of a file: {count, bytes, last} (a last line without \n not counted), reading in chunks. */
async function completeLines(file) {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(1 << 20);
    let count = 0,
      bytes = 0,
      at = 0,
      last = '';
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, at);
      if (bytesRead === 0) break;
      for (let i = buf.indexOf(10, 0); i >= 0 && i < bytesRead; i = buf.indexOf(10, i + 1)) {
        count++;
        bytes = at + i + 1;
      }
      at += bytesRead;
    }
    if (count > 0) {
      // the last complete line, read back to check it is JSON (a partial file we wrote)
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

/** The complete lines of a file, in order: {text, end} (end: the byte offset past its \n); a last line without \n left out. */
async function* linesOf(file) {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(1 << 20);
    let at = 0,
      parts = [];
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, at);
      if (bytesRead === 0) return;
      let start = 0;
      for (let i = buf.indexOf(10); i >= 0 && i < bytesRead; i = buf.indexOf(10, start)) {
        yield { text: Buffer.concat([...parts, buf.subarray(start, i)]).toString('utf8'), end: at + i + 1 };
        [parts, start] = [[], i + 1];
      }
      if (start < bytesRead) parts.push(Buffer.from(buf.subarray(start, bytesRead)));
      at += bytesRead;
    }
  } finally {
    await fh.close();
  }
}

/** The byte length of the first `count` lines of a file. */
async function linesPrefix(file, lines) {
  if (lines === 0) return 0;
  let seen = 0;
  for await (const { end } of linesOf(file)) if (++seen === lines) return end;
  throw new CliError(`${file}: fewer than ${count(lines, 'line')}`);
}

/** A file of JSON lines (the .jsonl partial, the ids, the checkpoints): whole lines appended; on resume, its complete lines. */
class LinesFile {
  constructor(file) {
    this.file = file;
  }

  async create() {
    this.fh = await open(this.file, 'w');
  }

  /** The complete lines (a last line cut by a kill not counted); 0 when the file is missing. */
  async count() {
    if (!(await stat(this.file).catch(() => null))) return 0;
    const { count, last } = await completeLines(this.file);
    if (count > 0) {
      try {
        JSON.parse(last);
      } catch {
        throw new CliError(`${this.file}: its last complete line is not JSON: not a partial file of swapformer embed`);
      }
    }
    return count;
  }

  /** Cut to its first `count` lines, then opened to append. */
  async resumeAt(count) {
    const bytes = (await stat(this.file).catch(() => null)) ? await linesPrefix(this.file, count) : 0;
    this.fh = await open(this.file, 'a');
    await this.fh.truncate(bytes);
  }

  async append(text) {
    await this.fh.write(text);
  }

  async close() {
    if (!this.fh) return;
    const fh = this.fh;
    this.fh = null;
    await fh.sync().catch(() => {});
    await fh.close();
  }
}

/** A .npy partial file: its header (row count 0 until the end), then whole rows appended. */
class RowsFile {
  constructor(file, descr, cols) {
    Object.assign(this, { file, descr, cols, rowBytes: cols * ITEM[descr], header: npyHeader(descr, 0, cols), rows: 0 });
  }

  async create() {
    this.fh = await open(this.file, 'w');
    await this.fh.write(this.header);
  }

  /** The whole rows in the file (a row cut by a kill not counted), its header checked. */
  async count() {
    const fh = await open(this.file, 'r');
    try {
      const head = Buffer.alloc(this.header.length);
      await fh.read(head, 0, head.length, 0);
      const h = readNpyHeader(head);
      if (!h || h.length !== this.header.length || h.descr !== this.descr || h.cols !== this.cols) {
        throw new CliError(
          `${this.file}: not the partial file of this run (its header says ${h ? `${h.descr} x ${h.cols}` : 'it is no .npy'}, the run writes ${this.descr} x ${this.cols})`,
        );
      }
      const { size } = await fh.stat();
      return Math.floor((size - h.length) / this.rowBytes);
    } finally {
      await fh.close();
    }
  }

  /** Cut to its first `count` rows, then opened to append. */
  async resumeAt(count) {
    this.fh = await open(this.file, 'a');
    await this.fh.truncate(this.header.length + count * this.rowBytes);
    this.rows = count;
  }

  async append(bytes) {
    await this.fh.write(bytes);
    this.rows += bytes.length / this.rowBytes;
  }

  async close() {
    if (!this.fh) return;
    const fh = this.fh;
    this.fh = null;
    await fh.sync().catch(() => {});
    await fh.close();
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

/** The ids file's lines (each id's JSON text) in order, in chunks of the sizes given. */
async function* idChunks(file, sizes) {
  const lines = linesOf(file);
  try {
    for await (const n of sizes) {
      const ids = [];
      while (ids.length < n) {
        const { value, done } = await lines.next();
        if (done) throw new CliError(`${file}: fewer ids than rows`);
        ids.push(value.text);
      }
      yield ids;
    }
  } finally {
    await lines.return();
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

const INT64_MIN = -(2n ** 63n),
  INT64_MAX = 2n ** 63n - 1n;
/** Whether an id's JSON text is an integer an int64 column holds as it is written (no -0, no leading zero, no exponent). */
const isInt64 = (text) => /^(0|-?[1-9]\d{0,18})$/.test(text) && BigInt(text) >= INT64_MIN && BigInt(text) <= INT64_MAX;

/**
 * The column the ids go into, from their JSON texts (the ids file): 'int64'
 * when every id is an integer that fits; else 'text' when they are all
 * strings or all numbers (a string's value, a number's text as the input wrote
 * it); else (strings and numbers mixed) 'json', each id's JSON text, so that
 * the number 5 and the string "5" stay two ids.
 */
async function idKind(file, rows) {
  let ints = true,
    strings = true,
    numbers = true;
  for await (const ids of idChunks(file, chunkSizes(rows))) {
    for (const t of ids) {
      const string = t.startsWith('"');
      strings &&= string;
      numbers &&= !string;
      ints &&= !string && isInt64(t);
    }
  }
  return ints ? 'int64' : strings || numbers ? 'text' : 'json';
}

/** An id's value in a column of its kind (see idKind). */
const idValue = (text, kind) => (kind === 'int64' ? BigInt(text) : kind === 'text' && text.startsWith('"') ? JSON.parse(text) : text);

async function arrowWriter(out, { precision, cols, ids }) {
  const A = await optionalPackage('apache-arrow', 'arrow');
  const valueType = precision === 'float32' ? new A.Float32() : precision === 'int8' || precision === 'binary' ? new A.Int8() : new A.Uint8();
  const embType = new A.FixedSizeList(cols, new A.Field('item', valueType, false));
  const idType = ids === 'int64' ? new A.Int64() : new A.Utf8();
  const schema = new A.Schema([new A.Field('id', idType, false), new A.Field('embedding', embType, false)]);
  const writer = new A.RecordBatchFileWriter();
  const stream = createWriteStream(out, { flags: 'wx' });
  const closed = new Promise((resolve, reject) => {
    stream.on('close', resolve);
    stream.on('error', reject);
  });
  writer.pipe(stream);
  let written = false;
  const self = {
    write(idList, data, n) {
      written = true;
      const child = A.makeData({ type: valueType, data, length: n * cols, nullCount: 0 });
      const emb = A.makeData({ type: embType, length: n, nullCount: 0, child });
      const values = idList.map((t) => idValue(t, ids));
      const id =
        ids === 'int64'
          ? A.makeData({ type: new A.Int64(), data: BigInt64Array.from(values), length: n, nullCount: 0 })
          : A.vectorFromArray(values, new A.Utf8()).data[0];
      writer.write(new A.RecordBatch(schema, A.makeData({ type: new A.Struct(schema.fields), length: n, nullCount: 0, children: [id, emb] })));
    },
    async finish() {
      if (!written) self.write([], new valueType.ArrayType(0), 0); // an empty corpus: the schema, no rows
      writer.finish();
      await closed;
    },
    async abort() {
      stream.destroy();
      await closed.catch(() => {});
    },
  };
  return self;
}

async function parquetWriter(out, { precision, ids }) {
  const P = await optionalPackage('hyparquet-writer', 'parquet');
  const element =
    precision === 'float32' ? { type: 'FLOAT' } : { type: 'INT32', converted_type: precision === 'int8' || precision === 'binary' ? 'INT_8' : 'UINT_8' };
  const schema = [
    { name: 'root', num_children: 2 },
    ids === 'int64'
      ? { name: 'id', type: 'INT64', repetition_type: 'REQUIRED' }
      : { name: 'id', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
    { name: 'embedding', repetition_type: 'REQUIRED', num_children: 1, converted_type: 'LIST' },
    { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    { name: 'element', ...element, repetition_type: 'REQUIRED' },
  ];
  await writeFile(out, '', { flag: 'wx' });
  // fileWriter appends with writeFileSync: no descriptor stays open between writes
  const writer = new P.ParquetWriter({ writer: P.fileWriter(out), schema, createdBy: 'swapformer embed' });
  return {
    write(idList, data, n, cols) {
      const rows = new Array(n);
      for (let r = 0; r < n; r++) rows[r] = Array.from(data.subarray(r * cols, (r + 1) * cols));
      writer.write({
        columnData: [
          { name: 'id', data: idList.map((t) => idValue(t, ids)) },
          { name: 'embedding', data: rows },
        ],
        rowGroupSize: n,
      });
    },
    async finish() {
      writer.finish();
    },
    async abort() {},
  };
}

/** Parquet of sparse vectors (id, indices: list<int32>, values: list<float>) or ColBERT's (id, embedding: list<list<float>>). */
async function parquetVectorsWriter(out, { record, ids }) {
  const P = await optionalPackage('hyparquet-writer', 'parquet');
  const list = (name, element) => [
    { name, repetition_type: 'REQUIRED', num_children: 1, converted_type: 'LIST' },
    { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    element,
  ];
  const id =
    ids === 'int64'
      ? { name: 'id', type: 'INT64', repetition_type: 'REQUIRED' }
      : { name: 'id', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' };
  const schema =
    record === 'sparse'
      ? [
          { name: 'root', num_children: 3 },
          id,
          ...list('indices', { name: 'element', type: 'INT32', repetition_type: 'REQUIRED' }),
          ...list('values', { name: 'element', type: 'FLOAT', repetition_type: 'REQUIRED' }),
        ]
      : [
          { name: 'root', num_children: 2 },
          id,
          ...list('embedding', { name: 'element', repetition_type: 'REQUIRED', num_children: 1, converted_type: 'LIST' }),
          { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
          { name: 'element', type: 'FLOAT', repetition_type: 'REQUIRED' },
        ];
  await writeFile(out, '', { flag: 'wx' });
  const writer = new P.ParquetWriter({ writer: P.fileWriter(out), schema, createdBy: 'swapformer embed' });
  return {
    // rows: [{id (JSON text), v (the parsed line)}]
    write(rows) {
      const idData = rows.map((r) => idValue(r.id, ids));
      const columnData =
        record === 'sparse'
          ? [
              { name: 'id', data: idData },
              { name: 'indices', data: rows.map((r) => r.v.indices) },
              { name: 'values', data: rows.map((r) => r.v.values) },
            ]
          : [
              { name: 'id', data: idData },
              { name: 'embedding', data: rows.map((r) => r.v.embedding) },
            ];
      writer.write({ columnData, rowGroupSize: rows.length });
    },
    async finish() {
      writer.finish();
    },
    async abort() {},
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
    async abort() {
      await fh.close();
    },
  };
}

async function npyWriter(out, { precision, cols, rows }) {
  const fh = await open(out, 'wx');
  await fh.write(npyHeader(DESCR[precision], rows, cols)).catch(async (e) => {
    await fh.close();
    throw e;
  });
  return {
    async write(_ids, data) {
      await fh.write(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    },
    async finish() {
      await fh.sync();
      await fh.close();
    },
    async abort() {
      await fh.close();
    },
  };
}

// ------------------------------------------------------------------ the sink

/** The SHA-256 of no bytes: the input digest of a run that has consumed nothing. */
export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** The files a run writes beside <out>: the partial records, their ids, the settings, the checkpoints of the input consumed. */
export const partialFiles = (out) => ({
  partial: `${out}.partial`,
  ids: `${out}.partial.ids`,
  settings: `${out}.partial.json`,
  checkpoints: `${out}.partial.input`,
});

/** The settings a partial output was written with (<out>.partial.json), or null when there is no partial output. */
export async function savedSettings(out) {
  const files = partialFiles(out);
  if (!(await stat(files.partial).catch(() => null))) return null;
  try {
    return JSON.parse(await readFile(files.settings, 'utf8'));
  } catch {
    throw new CliError(`${files.settings}: missing or not JSON: cannot tell what ${files.partial} was written with (delete both to start over)`);
  }
}

/**
 * The output of one embed run: open() (fresh, or --resume: the records
 * already there), add(ids, embeddings, consumed) per batch, finish() (the
 * complete <out>), or close() on an interruption (the partial files kept).
 *   settings: what makes the output (compared on --resume)
 *   precision: the final one; the partial rows are float32 for int8 / uint8
 * Before a batch's records, a checkpoint line goes to <out>.partial.input:
 * {"records", "bytes", "sha256"}, the records the partial output holds after
 * the batch and the input bytes they were made from (the prefix of the input
 * and its SHA-256). On resume the records are cut to the last checkpoint
 * they all reach, which says what of the input they were made from.
 */
export class Sink {
  constructor(out, { format, precision, cols, withIds, settings, record = 'dense' }) {
    const packed = precision === 'binary' || precision === 'ubinary';
    Object.assign(this, { out, format, precision, cols, withIds, settings, record, files: partialFiles(out) });
    // JSON lines: the records of sparse and ColBERT vectors (any width), and dense jsonl; renamed at the end when jsonl
    this.lines = record !== 'dense' || (format === 'jsonl' && !['int8', 'uint8'].includes(precision));
    this.direct = this.lines && format === 'jsonl';
    this.rowsPrecision = packed ? (precision === 'binary' ? 'int8' : 'uint8') : 'float32';
    this.idsApart = withIds && !this.lines && format !== 'npy'; // ids kept beside the rows
    this.file = this.lines ? new LinesFile(this.files.partial) : new RowsFile(this.files.partial, DESCR[this.rowsPrecision], cols);
    this.ids = this.idsApart ? new LinesFile(this.files.ids) : null;
    this.checkpoints = new LinesFile(this.files.checkpoints);
    this.count = 0;
  }

  /**
   * Opens the partial files: {records, bytes, sha256}, the records they hold
   * already (0 unless resuming) and the input bytes those were made from.
   */
  async open({ resume }) {
    const { partial, settings } = this.files;
    const exists = Boolean(await stat(partial).catch(() => null));
    if (!resume && exists) throw new CliError(`${partial} exists: an interrupted run of this output; --resume continues it, or delete it to start over`);
    try {
      if (resume && exists) return await this.#resume(await savedSettings(this.out));
      await writeFile(settings, `${JSON.stringify(this.settings, null, 2)}\n`);
      await this.file.create();
      await this.ids?.create();
      await this.checkpoints.create();
      return { records: 0, bytes: 0, sha256: EMPTY_SHA256 };
    } catch (e) {
      await this.close();
      throw e;
    }
  }

  async #resume(saved) {
    const differ = Object.keys({ ...saved, ...this.settings }).filter((k) => JSON.stringify(saved[k]) !== JSON.stringify(this.settings[k]));
    if (differ.length) {
      const k = differ[0];
      throw new CliError(
        `--resume: ${this.files.partial} was written with ${k} = ${JSON.stringify(saved[k])}, this run has ${JSON.stringify(this.settings[k])}: run with the same settings, or delete ${this.files.partial} to start over`,
      );
    }
    // the whole records of every file (a record cut by the kill left out), then the last checkpoint they all reach
    let whole = await this.file.count();
    if (this.ids) whole = Math.min(whole, await this.ids.count());
    let at = { records: 0, bytes: 0, sha256: EMPTY_SHA256 },
      lines = 0;
    if (await stat(this.files.checkpoints).catch(() => null)) {
      for await (const { text } of linesOf(this.files.checkpoints)) {
        let c;
        try {
          c = JSON.parse(text);
        } catch {
          throw new CliError(`${this.files.checkpoints}: a line is not JSON: not a partial file of swapformer embed`);
        }
        if (!(Number.isSafeInteger(c?.records) && Number.isSafeInteger(c.bytes) && /^[0-9a-f]{64}$/.test(c.sha256)))
          throw new CliError(`${this.files.checkpoints}: not a checkpoint of swapformer embed: ${text.slice(0, 80)}`);
        if (c.records > whole) break;
        at = { records: c.records, bytes: c.bytes, sha256: c.sha256 };
        lines++;
      }
    }
    await this.file.resumeAt(at.records);
    await this.ids?.resumeAt(at.records);
    await this.checkpoints.resumeAt(lines);
    this.count = at.records;
    return at;
  }

  /**
   * A batch's records: ids (the JSON text of each id: the input's, or the
   * record numbers), {data, shape: [n, cols]}, and consumed: {bytes, sha256},
   * the input bytes read up to the batch's last record.
   */
  async add(ids, embeddings, consumed) {
    const n = this.record === 'dense' ? embeddings.shape[0] : embeddings.length;
    await this.checkpoints.append(`${JSON.stringify({ records: this.count + n, bytes: consumed.bytes, sha256: consumed.sha256 })}\n`);
    if (this.record !== 'dense') {
      let text = '';
      for (let r = 0; r < n; r++) text += vectorLine(ids[r], embeddings[r], this.record);
      await this.file.append(text);
      this.count += n;
      return;
    }
    const { data } = embeddings;
    if (this.direct) {
      let text = '';
      const float = this.precision === 'float32';
      for (let r = 0; r < n; r++) text += jsonLine(ids[r], data.subarray(r * this.cols, (r + 1) * this.cols), float);
      await this.file.append(text);
    } else {
      await this.file.append(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
      if (this.ids) await this.ids.append(ids.map((v) => `${v}\n`).join(''));
    }
    this.count += n;
  }

  /** Interrupted: the partial files flushed, closed and kept for --resume. */
  async close() {
    await this.file.close();
    await this.ids?.close();
    await this.checkpoints.close();
  }

  /** The complete output at <out> (renamed over it), the partial files removed. */
  async finish() {
    await this.close();
    if (this.direct) {
      await rename(this.files.partial, this.out);
    } else if (this.record !== 'dense') {
      await this.#convertLines();
      await rm(this.files.partial, { force: true });
    } else if (this.format === 'npy' && !['int8', 'uint8'].includes(this.precision)) {
      // the rows are the output's
      await this.file.seal();
      await rename(this.files.partial, this.out);
    } else {
      await this.#convert();
      await rm(this.files.partial, { force: true });
    }
    for (const f of [this.files.ids, this.files.checkpoints, this.files.settings]) await rm(f, { force: true });
  }

  // the partial rows -> the output format (int8 / uint8 quantized with the ranges of every row), in chunks
  async #convert() {
    const rows = this.file.rows,
      cols = this.cols;
    const quantize = ['int8', 'uint8'].includes(this.precision);
    let ranges = null;
    if (quantize && rows > 0) ranges = await this.#ranges();
    const stored = quantize ? this.precision : this.precision === 'float32' ? 'float32' : this.rowsPrecision;
    const tmp = tempBeside(this.out);
    const ids = this.idsApart ? await idKind(this.files.ids, rows) : 'int64';
    const make = { jsonl: linesWriter, npy: npyWriter, arrow: arrowWriter, parquet: parquetWriter }[this.format];
    let writer = null;
    try {
      writer = await make(tmp, { precision: this.format === 'jsonl' ? this.precision : stored, cols, rows, ids, float: this.precision === 'float32' });
      const chunks = [];
      for await (const c of this.file.chunks()) chunks.push(c.rows); // sizes first: the ids are read in the same chunks
      const idIt = this.idsApart ? idChunks(this.files.ids, chunks) : null;
      let at = 0;
      try {
        for await (const c of this.file.chunks()) {
          let values = this.#view(c.data, this.rowsPrecision);
          if (quantize) values = (await quantizeEmbeddings({ data: values, shape: [c.rows, cols] }, this.precision, { ranges })).data;
          const idList = idIt ? (await idIt.next()).value : Array.from({ length: c.rows }, (_, k) => String(at + k));
          await writer.write(idList, values, c.rows, cols);
          at += c.rows;
        }
      } finally {
        await idIt?.return();
      }
      await writer.finish();
      writer = null;
      await rename(tmp, this.out);
    } catch (e) {
      await writer?.abort().catch(() => {});
      await rm(tmp, { force: true });
      throw e;
    }
  }

  // the partial JSON lines of sparse or ColBERT vectors -> Parquet, in row groups of 4096 records
  async #convertLines() {
    let ints = true,
      strings = true,
      numbers = true;
    for await (const { text } of linesOf(this.files.partial)) {
      const t = idText(text),
        string = t.startsWith('"');
      strings &&= string;
      numbers &&= !string;
      ints &&= !string && isInt64(t);
    }
    const ids = ints ? 'int64' : strings || numbers ? 'text' : 'json';
    const tmp = tempBeside(this.out);
    let writer = null;
    try {
      writer = await parquetVectorsWriter(tmp, { record: this.record, ids });
      let rows = [];
      for await (const { text } of linesOf(this.files.partial)) {
        rows.push({ id: idText(text), v: JSON.parse(text) });
        if (rows.length === 4096) {
          writer.write(rows);
          rows = [];
        }
      }
      if (rows.length) writer.write(rows);
      await writer.finish();
      writer = null;
      await rename(tmp, this.out);
    } catch (e) {
      await writer?.abort().catch(() => {});
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
    const cols = this.cols,
      lo = new Float32Array(cols).fill(Infinity),
      hi = new Float32Array(cols).fill(-Infinity);
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
