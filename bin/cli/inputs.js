// Corpora for `swapformer embed`, read as a stream of records {text, id}
// whatever their size:
//   .txt    a text a line (an empty line is an empty text; CRLF and a BOM are fine)
//   .jsonl  a JSON object a line, the text in a string field (blank lines skipped)
//   .csv    RFC 4180: a header row, fields separated by commas, "quoted" with ""
//           for a quote (quoted fields may hold commas and line breaks)
//   -       standard input, in the --format given (default txt)
// Every error names the file and the line. Read as untrusted: UTF-8 checked,
// fields taken as own properties only, a record capped at MAX_RECORD characters.
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

/** Decoded text chunks of a file or of stdin, UTF-8 checked (a BOM dropped). */
async function* textChunks(file, label) {
  const stream = file === '-' ? process.stdin : createReadStream(file);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let lines = 1;
  const decode = (chunk, stream) => {
    try {
      return decoder.decode(chunk, { stream });
    } catch {
      throw new CliError(`${label}:${lines}: not valid UTF-8`);
    }
  };
  for await (const chunk of stream) {
    const s = decode(chunk, true);
    for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) lines++;
    yield s;
  }
  const tail = decode(undefined, false);
  if (tail) yield tail;
}

const tooLong = (label, line) => new CliError(`${label}:${line}: a record longer than ${MAX_RECORD / 2 ** 20} MiB characters`);

/** Lines of text (without their \n or \r\n), numbered from 1. */
async function* lines(file, label) {
  let rest = '', n = 0;
  for await (const s of textChunks(file, label)) {
    rest += s;
    let start = 0;
    for (let i = rest.indexOf('\n'); i >= 0; i = rest.indexOf('\n', start)) {
      const end = i > start && rest.charCodeAt(i - 1) === 13 ? i - 1 : i;
      yield { line: ++n, text: rest.slice(start, end) };
      start = i + 1;
    }
    rest = rest.slice(start);
    if (rest.length > MAX_RECORD) throw tooLong(label, n + 1);
  }
  if (rest.length) yield { line: n + 1, text: rest.endsWith('\r') ? rest.slice(0, -1) : rest };
}

/**
 * RFC 4180 rows: {line (where the row starts), fields}. A quote opens a field
 * only at its start; inside, "" is a quote; after the closing quote only a
 * comma or a line end may follow. Line ends: CRLF, LF or a lone CR. Blank rows are skipped.
 */
export async function* csvRows(chunks, label) {
  let fields = [], field = '', quoted = false, closed = false, content = false, line = 1, rowLine = 1, skipLF = false;
  const endRow = () => {
    fields.push(field);
    const row = { line: rowLine, fields };
    [fields, field, closed, content] = [[], '', false, false];
    return row;
  };
  for await (const s of chunks) {
    let i = 0;
    while (i < s.length) {
      if (skipLF) { // the \n of a \r\n
        skipLF = false;
        if (s.charCodeAt(i) === 10) { i++; continue; }
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
      if (closed && c === '"') { // "" inside a quoted field
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
        if (field !== '') throw new CliError(`${label}:${line}: a quote inside an unquoted field (RFC 4180: quote the whole field, and write a quote in it as "")`);
        [quoted, content] = [true, true];
        i++;
      } else { // plain characters up to the next separator, line end or quote
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

/** A record's id from a JSON object or a CSV row: a string or a finite number. */
function readId(value, where, name) {
  if (typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))) return value;
  throw new CliError(`${where}: the id field '${name}' must be a string or a number, got ${value === null ? 'null' : typeof value}`);
}

async function* txtRecords(file, label) {
  for await (const { text } of lines(file, label)) yield { text };
}

async function* jsonlRecords(file, label, { field, idField }) {
  for await (const { line, text } of lines(file, label)) {
    if (text.trim() === '') continue;
    const where = `${label}:${line}`;
    let obj;
    try {
      obj = JSON.parse(text);
    } catch (e) {
      throw new CliError(`${where}: not valid JSON (${e.message})`);
    }
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw new CliError(`${where}: a JSON object a line, got ${Array.isArray(obj) ? 'an array' : obj === null ? 'null' : typeof obj}`);
    if (!Object.hasOwn(obj, field)) throw new CliError(`${where}: no field '${field}'${didYouMean(field, Object.keys(obj), (k) => `--field ${k}`)}`);
    const t = obj[field];
    if (typeof t !== 'string') throw new CliError(`${where}: field '${field}' must be a string, got ${t === null ? 'null' : Array.isArray(t) ? 'an array' : typeof t}`);
    if (idField === undefined) yield { text: t };
    else if (!Object.hasOwn(obj, idField)) throw new CliError(`${where}: no id field '${idField}'${didYouMean(idField, Object.keys(obj), (k) => `--id-field ${k}`)}`);
    else yield { text: t, id: readId(obj[idField], where, idField) };
  }
}

/** The index of a CSV column named by --column (a header name, or a 0-based index), checked against the header. */
function columnIndex(header, wanted, label, option) {
  if (/^\d+$/.test(wanted)) {
    const k = Number(wanted);
    if (k >= header.length) throw new CliError(`${label}: ${option} ${wanted}: the rows have ${header.length} column${header.length === 1 ? '' : 's'} (indices from 0)`);
    return k;
  }
  const k = header.indexOf(wanted);
  if (k < 0) throw new CliError(`${label}: no column '${wanted}' in the header (${header.map((h) => `'${h}'`).join(', ')})${didYouMean(wanted, header, (h) => `${option} ${h}`)}`);
  return k;
}

async function* csvRecords(file, label, { column, idField }) {
  let header = null, col = -1, idCol = -1;
  for await (const { line, fields } of csvRows(textChunks(file, label), label)) {
    if (header === null) {
      header = fields;
      if (column === undefined) { // 'text', else the only column
        col = header.indexOf('text');
        if (col < 0 && header.length === 1) col = 0;
        if (col < 0) throw new CliError(`${label}: no column 'text' in the header (${header.map((h) => `'${h}'`).join(', ')}): give --column <name or 0-based index>`);
      } else col = columnIndex(header, column, label, '--column');
      if (idField !== undefined) idCol = columnIndex(header, idField, label, '--id-field');
      continue;
    }
    if (fields.length !== header.length) throw new CliError(`${label}:${line}: ${fields.length} field${fields.length === 1 ? '' : 's'}, the header has ${header.length} (RFC 4180: every row has as many)`);
    yield idCol < 0 ? { text: fields[col] } : { text: fields[col], id: fields[idCol] };
  }
}

/** The records {text, id?} of an input: an async iterator, errors naming file:line. */
export function readRecords(file, { format, field = 'text', column, idField }) {
  const label = file === '-' ? '<stdin>' : file;
  if (format === 'txt') return txtRecords(file, label);
  if (format === 'jsonl') return jsonlRecords(file, label, { field, idField });
  return csvRecords(file, label, { column, idField });
}
