// Corpora for `swapformer embed`, read as a stream of records {text, id}
// whatever their size:
//   .txt    a text a line (an empty line is an empty text; CRLF and a BOM are fine)
//   .jsonl  a JSON object a line, the text in a string field (blank lines skipped)
//   .csv    RFC 4180: a header row, fields separated by commas, "quoted" with ""
//           for a quote (quoted fields may hold commas and line breaks)
//   -       standard input, in the --format given (default txt)
// Every error names the file and the line (a UTF-8 error its byte too). Read
// as untrusted: UTF-8 checked, fields taken as own properties only, a record
// capped at MAX_RECORD characters.
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { CliError } from './errors.js';
import { didYouMean } from './args.js';

export const INPUT_FORMATS = ['txt', 'jsonl', 'csv'];
const EXTENSIONS = { '.txt': 'txt', '.jsonl': 'jsonl', '.ndjson': 'jsonl', '.csv': 'csv' };
export const MAX_RECORD = 16 * 2 ** 20; // characters: far past any model's length, short of a runaway line

/** The input's format: --format, else its extension. null when neither tells. */
export function inputFormat(file, given) {
  if (given) return given;
  if (file === '-') return 'txt';
  return EXTENSIONS[path.extname(file).toLowerCase()] ?? null;
}

/** The offset of the first byte of `bytes` that does not start (or continue) a valid UTF-8 sequence, or -1. */
export function invalidUtf8At(bytes) {
  for (let i = 0; i < bytes.length;) {
    const c = bytes[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    const n = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : 0;
    if (n === 0) return i;
    // the second byte's range excludes overlong forms, surrogates and code points past U+10FFFF
    const lo = c === 0xe0 ? 0xa0 : c === 0xf0 ? 0x90 : 0x80,
      hi = c === 0xed ? 0x9f : c === 0xf4 ? 0x8f : 0xbf;
    if (!(bytes[i + 1] >= lo && bytes[i + 1] <= hi)) return i;
    for (let k = 2; k <= n; k++) if (i + k >= bytes.length || (bytes[i + k] & 0xc0) !== 0x80) return i;
    i += n + 1;
  }
  return -1;
}

const tooLong = (label, line) => new CliError(`${label}:${line}: a record longer than ${MAX_RECORD / 2 ** 20} MiB characters`);

/**
 * The lines of a file or of stdin, split on their bytes and decoded one at a
 * time: {line (from 1), text (without its \n, a \r kept), newline (whether a
 * \n ended it), end (the byte offset just past it)}. UTF-8 is checked a line
 * at a time, so an error names its own line and byte; a BOM at the start is
 * dropped. onBytes(chunk) sees every byte read, in order (the resume digest).
 */
async function* lines(file, label, onBytes) {
  const stream = file === '-' ? process.stdin : createReadStream(file);
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }); // a U+FEFF inside the text is kept
  let n = 0,
    at = 0, // the offset of the line being read
    parts = [],
    partsLength = 0;
  const line = (bytes, newline) => {
    n++;
    let text;
    try {
      text = utf8.decode(bytes);
    } catch {
      throw new CliError(`${label}:${n}: not valid UTF-8 (byte ${at + invalidUtf8At(bytes)} of the input, counted from 0)`);
    }
    if (n === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.length > MAX_RECORD) throw tooLong(label, n);
    at += bytes.length + (newline ? 1 : 0);
    return { line: n, text, newline, end: at };
  };
  for await (const chunk of stream) {
    onBytes?.(chunk);
    let start = 0;
    for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, i);
      yield line(parts.length ? Buffer.concat([...parts, piece]) : piece, true);
      [parts, partsLength, start] = [[], 0, i + 1];
    }
    if (start < chunk.length) {
      parts.push(chunk.subarray(start));
      partsLength += chunk.length - start;
      // every UTF-16 unit takes at least one byte and at most three: more than 3 x MAX_RECORD bytes is too long
      if (partsLength > 3 * MAX_RECORD) throw tooLong(label, n + 1);
    }
  }
  if (partsLength) yield line(Buffer.concat(parts), false);
}

/**
 * RFC 4180 rows: {line (where the row starts), fields}. A quote opens a field
 * only at its start; inside, "" is a quote; after the closing quote only a
 * comma or a line end may follow. Line ends: CRLF, LF or a lone CR. Blank rows are skipped.
 */
export async function* csvRows(chunks, label) {
  let fields = [],
    field = '',
    quoted = false,
    closed = false,
    content = false,
    line = 1,
    rowLine = 1,
    skipLF = false;
  const endRow = () => {
    fields.push(field);
    const row = { line: rowLine, fields };
    [fields, field, closed, content] = [[], '', false, false];
    return row;
  };
  for await (const s of chunks) {
    let i = 0;
    while (i < s.length) {
      if (skipLF) {
        // the \n of a \r\n
        skipLF = false;
        if (s.charCodeAt(i) === 10) {
          i++;
          continue;
        }
      }
      if (quoted) {
        const q = s.indexOf('"', i);
        const piece = q < 0 ? s.slice(i) : s.slice(i, q);
        for (let k = piece.indexOf('\n'); k >= 0; k = piece.indexOf('\n', k + 1)) line++;
        field += piece;
        if (field.length > MAX_RECORD) throw tooLong(label, rowLine);
        if (q < 0) break;
        [quoted, closed] = [false, true];
        i = q + 1;
        continue;
      }
      const c = s[i];
      if (closed && c === '"') {
        // "" inside a quoted field
        field += '"';
        [quoted, closed] = [true, false];
        i++;
      } else if (c === ',') {
        fields.push(field);
        [field, closed, content] = ['', false, true];
        i++;
      } else if (c === '\n' || c === '\r') {
        if (content) yield endRow(); // else a blank line
        line++;
        rowLine = line;
        skipLF = c === '\r';
        i++;
      } else if (closed) {
        throw new CliError(`${label}:${line}: '${c}' after the closing quote of a field (RFC 4180: a quoted field ends at a comma or a line end)`);
      } else if (c === '"') {
        if (field !== '')
          throw new CliError(`${label}:${line}: a quote inside an unquoted field (RFC 4180: quote the whole field, and write a quote in it as "")`);
        [quoted, content] = [true, true];
        i++;
      } else {
        // plain characters up to the next separator, line end or quote
        let j = i + 1;
        while (j < s.length) {
          const d = s.charCodeAt(j);
          if (d === 44 || d === 10 || d === 13 || d === 34) break;
          j++;
        }
        field += s.slice(i, j);
        if (field.length > MAX_RECORD) throw tooLong(label, rowLine);
        content = true;
        i = j;
      }
    }
  }
  if (quoted) throw new CliError(`${label}:${rowLine}: a quoted field is not closed before the end of the input`);
  if (content) yield endRow();
}

const isSpace = (c) => c === 32 || c === 9 || c === 10 || c === 13;

/** The end of the JSON string token starting at i (its opening quote). */
function stringEnd(text, i) {
  for (let j = i + 1; ; j++) {
    const c = text.charCodeAt(j);
    if (c === 92) j++;
    else if (c === 34) return j + 1;
  }
}

/** The end of the JSON value starting at i: a string, an object or array (brackets counted outside strings), a number or a literal. */
function valueEnd(text, i) {
  const c = text.charCodeAt(i);
  if (c === 34) return stringEnd(text, i);
  if (c !== 123 && c !== 91) {
    let j = i;
    while (j < text.length && !isSpace(text.charCodeAt(j)) && text[j] !== ',' && text[j] !== '}' && text[j] !== ']') j++;
    return j;
  }
  let depth = 0;
  for (let j = i; ; j++) {
    const d = text.charCodeAt(j);
    if (d === 34) j = stringEnd(text, j) - 1;
    else if (d === 123 || d === 91) depth++;
    else if ((d === 125 || d === 93) && --depth === 0) return j + 1;
  }
}

/**
 * The source text of member `name` of the JSON object `text` (text that
 * JSON.parse accepted), the last one when a name repeats (as JSON.parse keeps
 * it). JSON.parse reads a number into a double, rounding integers past 2^53
 * (1234567890123456781 and ...82 both become 1234567890123456800); the id
 * keeps the number as it is written. (JSON.parse's reviver sees the source
 * text only from Node 21: this scan works on every Node.)
 */
export function memberSource(text, name) {
  let i = text.indexOf('{') + 1,
    found = null;
  for (;;) {
    while (isSpace(text.charCodeAt(i)) || text[i] === ',') i++;
    if (text[i] !== '"') return found;
    const keyEnd = stringEnd(text, i);
    const key = JSON.parse(text.slice(i, keyEnd));
    i = keyEnd;
    while (isSpace(text.charCodeAt(i)) || text[i] === ':') i++;
    const end = valueEnd(text, i);
    if (key === name) found = text.slice(i, end);
    i = end;
  }
}

/**
 * A record's id as the JSON text written for it: a string's JSON, or a
 * number's text as the input wrote it (source: the member's source text).
 */
function readId(value, where, name, source) {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' && Number.isFinite(value)) return source;
  throw new CliError(`${where}: the id field '${name}' must be a string or a number, got ${value === null ? 'null' : typeof value}`);
}

async function* txtRecords(file, label, onBytes) {
  for await (const { text, end } of lines(file, label, onBytes)) yield { text: text.endsWith('\r') ? text.slice(0, -1) : text, end };
}

async function* jsonlRecords(file, label, { field, idField }, onBytes) {
  for await (const { line, text, end } of lines(file, label, onBytes)) {
    if (text.trim() === '') continue;
    const where = `${label}:${line}`;
    let obj;
    try {
      obj = JSON.parse(text);
    } catch (e) {
      throw new CliError(`${where}: not valid JSON (${e.message})`);
    }
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj))
      throw new CliError(`${where}: a JSON object a line, got ${Array.isArray(obj) ? 'an array' : obj === null ? 'null' : typeof obj}`);
    if (!Object.hasOwn(obj, field)) throw new CliError(`${where}: no field '${field}'${didYouMean(field, Object.keys(obj), (k) => `--field ${k}`)}`);
    const t = obj[field];
    if (typeof t !== 'string')
      throw new CliError(`${where}: field '${field}' must be a string, got ${t === null ? 'null' : Array.isArray(t) ? 'an array' : typeof t}`);
    if (idField === undefined) yield { text: t, end };
    else if (!Object.hasOwn(obj, idField))
      throw new CliError(`${where}: no id field '${idField}'${didYouMean(idField, Object.keys(obj), (k) => `--id-field ${k}`)}`);
    else {
      const v = obj[idField];
      yield { text: t, id: readId(v, where, idField, typeof v === 'number' ? memberSource(text, idField) : null), end };
    }
  }
}

/** The index of a CSV column named by --column (a header name, or a 0-based index), checked against the header. */
function columnIndex(header, wanted, label, option) {
  if (/^\d+$/.test(wanted)) {
    const k = Number(wanted);
    if (k >= header.length)
      throw new CliError(`${label}: ${option} ${wanted}: the rows have ${header.length} column${header.length === 1 ? '' : 's'} (indices from 0)`);
    return k;
  }
  const k = header.indexOf(wanted);
  if (k < 0)
    throw new CliError(
      `${label}: no column '${wanted}' in the header (${header.map((h) => `'${h}'`).join(', ')})${didYouMean(wanted, header, (h) => `${option} ${h}`)}`,
    );
  return k;
}

async function* csvRecords(file, label, { column, idField }, onBytes) {
  let header = null,
    col = -1,
    idCol = -1;
  // the rows read from the lines (a row's line break is the end of the line that holds it)
  let end = 0;
  async function* chunks() {
    for await (const l of lines(file, label, onBytes)) {
      end = l.end;
      yield l.newline ? `${l.text}\n` : l.text;
    }
  }
  for await (const { line, fields } of csvRows(chunks(), label)) {
    if (header === null) {
      header = fields;
      if (column === undefined) {
        // 'text', else the only column
        col = header.indexOf('text');
        if (col < 0 && header.length === 1) col = 0;
        if (col < 0)
          throw new CliError(`${label}: no column 'text' in the header (${header.map((h) => `'${h}'`).join(', ')}): give --column <name or 0-based index>`);
      } else col = columnIndex(header, column, label, '--column');
      if (idField !== undefined) idCol = columnIndex(header, idField, label, '--id-field');
      continue;
    }
    if (fields.length !== header.length)
      throw new CliError(
        `${label}:${line}: ${fields.length} field${fields.length === 1 ? '' : 's'}, the header has ${header.length} (RFC 4180: every row has as many)`,
      );
    yield idCol < 0 ? { text: fields[col], end } : { text: fields[col], id: JSON.stringify(fields[idCol]), end };
  }
}

/**
 * The records of an input: an async iterator of {text, id?, end}, errors
 * naming file:line. id: the JSON text written for the record's id (a string's
 * JSON; a number as the input wrote it); end: the byte offset of the input
 * just past the record. onBytes(chunk) sees every byte read, in order.
 */
export function readRecords(file, { format, field = 'text', column, idField }, onBytes) {
  const label = file === '-' ? '<stdin>' : file;
  if (format === 'txt') return txtRecords(file, label, onBytes);
  if (format === 'jsonl') return jsonlRecords(file, label, { field, idField }, onBytes);
  return csvRecords(file, label, { column, idField }, onBytes);
}
