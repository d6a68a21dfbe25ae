// The examples and links of README.md and docs/**/*.md (docs/api/, which is generated, excepted).
//
// Examples. Every fenced block whose info string is js, javascript, mjs, ts or typescript runs as
// an ES module in its own child Node process (process.execPath with tools/node-flags.js's flags),
// at most two at once, each with a timeout, in an empty temporary working directory. It imports
// the package by its name: the program is written under tests/out/ (inside the repository, whose
// package.json has "name" and "exports"), so `import ... from 'swapformer'` is Node's package
// self-reference and resolves to this checkout, and the other bare names (openai,
// swapformer-models...) resolve through the repository's node_modules. Top-level await works.
// Every block is first type-checked against bindings/index.d.ts (the package's "types") by the
// project's tsc (--strict, module NodeNext, lib ES2022 + DOM, @types/node; all blocks in one run;
// js blocks with checkJs, so a call the types refuse fails as it would in a user's editor), the
// skipped ones too; a program with type errors fails without running. A ts block's emitted
// JavaScript then runs with source maps, so errors point at the Markdown lines.
// A program passes when it finishes and its process exits by itself within a few seconds of its
// last statement (an example that leaves a server, a timer or a worker open would hang a user's
// script). What a block prints is not checked unless an output block follows it (below).
//
// Hub ids. Each child gets HF_ENDPOINT pointing at its own local stand-in of the Hub
// (tests/hub-server.js) and a fresh, empty HF_HUB_CACHE / HF_HOME (every other HF_* variable
// removed). The stand-in serves, for each Hub id of tests/docs-hub-ids.json, the fixture folder
// given there (a tiny random checkpoint of the same family, layout and head: outputs are not the
// real model's). An example that asks the stand-in for any other id fails, naming the id and
// listing the mapped ones: add the id there, with the closest fixture of tests/pretrained/ or
// tests/heads/.
//
// Markers: an HTML comment on the line just above the opening fence (several: one per line,
// stacked directly above it, no blank line between):
//
//   <!-- example: skip — the reason -->   not run (still type-checked); the reason is required
//                                         (say where the code is tested instead, if it is). Any
//                                         separator or none: —, -, :
//   <!-- example: untyped — the reason --> not type-checked (still run, unless also skipped): for
//                                         a fragment that cannot compile alone, or a diff of the
//                                         types themselves; the reason is required. On any block
//                                         of a chain it applies to the whole program. Use sparingly
//   <!-- example: continues -->           the block runs after the previous runnable block of the
//                                         same file, concatenated into one program (so it may use
//                                         its variables; do not repeat its imports)
//   <!-- example: throws BAD_ARGUMENT --> the program must fail with an error whose code is that
//                                         SwapformerError code (one of ERROR_CODES); it passes then
//   <!-- example: output -->              above a block of another language (```text) placed right
//                                         after a runnable block (the last of its chain): the
//                                         program's stdout must match it, loosely: whitespace runs
//                                         and blank lines ignored; a number matches a number within
//                                         half a unit of its last written digit (0.99 matches
//                                         0.9912); `...` matches any text within a line, and a line
//                                         of just `...` any number of lines
//
// A marker that is misspelt, not directly above a fence, on a block it does not apply to, or a
// skip without a reason fails the markers test. Browser-only code is marked skip (the page is
// exercised by tests/browser.test.js); there is no browser mode here.
//
// Links. Every relative link and image ([text](target), ![alt](src), [id]: target, <a href>,
// <img src>) outside code must name a file or folder that exists in the repository; `/path` is
// from the repository root. A #anchor, in the same file or in another .md file, must match one of
// its headings by GitHub's slug rules (lowercase; characters other than letters, marks, digits,
// '_', '-' and spaces dropped; each space becomes '-'; the 2nd, 3rd... heading with the same slug
// gets -1, -2...) or an <a name|id>. A link to this repository's files on GitHub
// (https://github.com/swapformer/swapformer/blob/main/path, from package.json's repository; the
// README links so to files outside the npm tarball) is checked the same way, as /path. Other
// absolute http(s) and other scheme links are not fetched.
//
// Installs and versions: a package an example imports, other than swapformer and Node's built-ins,
// must be installed by an `npm install <name>` written in the same file; a version pinned as
// swapformer@x.y.z (a CDN URL) must be package.json's.
//
// Self-tests: tests/docs-samples/ holds Markdown that exercises every marker and every failure
// the runner must report (a wrong output, a wrong code, a type error, an unmapped Hub id, a hang,
// a broken link, a bad anchor, a skip without a reason...); the tests at the end check that each
// is reported, so the checker can fail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES } from '../bindings/index.js';
import { NODE_FLAGS } from '../tools/node-flags.js';
import { startHub } from './hub-server.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const SAMPLES = path.join(REPO, 'tests', 'docs-samples');
const OUT = path.join(REPO, 'tests', 'out');
const TSC = path.join(REPO, 'node_modules', '.bin', 'tsc');
const HUB_IDS_FILE = 'tests/docs-hub-ids.json';
const HUB_IDS = JSON.parse(readFileSync(path.join(REPO, HUB_IDS_FILE), 'utf8')).ids;
// links to this repository's own files on GitHub (README.md must use them for files that are not
// in the npm tarball, tests/package.test.js): checked as repository paths
const REPO_URL = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8'))
  .repository.url.replace(/^git\+/, '')
  .replace(/\.git$/, '');
const REPO_BLOB = new RegExp(`^${REPO_URL.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/(?:blob|tree)/main(/[^?#]*)?(.*)$`);
const HUB_REPOS = Object.fromEntries(Object.entries(HUB_IDS).map(([id, dir]) => [id, path.join(REPO, dir)]));

const RUNNABLE = { js: 'js', javascript: 'js', mjs: 'js', ts: 'ts', typescript: 'ts' };
const MARKER_NAMES = ['skip', 'untyped', 'continues', 'throws', 'output'];
const PARALLEL = 2;
const TIMEOUT_MS = 30_000;
const LINGER_MS = 3_000;
const CAPTURE = 64 * 1024; // bytes kept of a child's stdout / stderr

// ---------------------------------------------------------------------------
// Markdown: fences, markers, prose

/** README.md and docs/**\/*.md under root (docs/api/, generated, and node_modules skipped), as paths relative to root. */
function docFiles(root) {
  const out = existsSync(path.join(root, 'README.md')) ? ['README.md'] : [];
  const walk = (rel) => {
    const entries = readdirSync(path.join(root, rel), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of entries) {
      const r = `${rel}/${e.name}`;
      if (e.isDirectory() && r !== 'docs/api' && e.name !== 'node_modules') walk(r);
      else if (e.isFile() && e.name.endsWith('.md')) out.push(r);
    }
  };
  if (existsSync(path.join(root, 'docs'))) walk('docs');
  return out;
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)[^`]*$/;
const MARKER_LIKE = /^\s*<!--\s*example\b/; // a marker is a line of its own (an inline mention is not one)
const MARKER = /^\s*<!--\s*example:\s*([A-Za-z-]*)(.*?)-->\s*$/;

/** Parses one marker comment into {name, arg, line} or a problem string. */
function parseMarker(text, line) {
  const m = MARKER.exec(text);
  if (!m) return `malformed marker (expected <!-- example: ${MARKER_NAMES.join('|')} ... -->)`;
  const name = m[1].toLowerCase();
  const arg = m[2]
    .trim()
    .replace(/^[—–:-]+/, '')
    .trim();
  if (!MARKER_NAMES.includes(name)) return `unknown marker '${m[1]}' (known: ${MARKER_NAMES.join(', ')})`;
  if ((name === 'skip' || name === 'untyped') && !/\p{L}/u.test(arg)) return `${name} without a reason (<!-- example: ${name} — why -->)`;
  if ((name === 'continues' || name === 'output') && arg) return `'${name}' takes no argument (got '${arg}')`;
  if (name === 'throws' && !ERROR_CODES.includes(arg)) return `throws needs a SwapformerError code (got '${arg}'; one of ${ERROR_CODES.join(', ')})`;
  return { name, arg, line };
}

/**
 * Splits a Markdown text into its fenced blocks ({line, info, lang, body, markers}), the prose
 * (the lines with every fence blanked, for links and headings) and the marker problems.
 */
function parseMarkdown(text) {
  const lines = text.split(/\r?\n/);
  const prose = lines.slice();
  const fences = [],
    problems = [];
  let pending = []; // markers met since the last other line
  const stray = () => {
    for (const m of pending) problems.push({ line: m.line, message: 'marker not directly above a fence (no blank line between)' });
    pending = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) {
      if (MARKER_LIKE.test(lines[i])) {
        const m = parseMarker(lines[i], i + 1);
        if (typeof m === 'string') problems.push({ line: i + 1, message: m });
        else pending.push(m);
      } else stray();
      continue;
    }
    const [, indent, fence, info] = open;
    const close = new RegExp(`^\\s*${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    let j = i + 1;
    while (j < lines.length && !close.test(lines[j])) j++;
    const dedent = new RegExp(`^ {0,${indent.length}}`);
    const body = lines
      .slice(i + 1, j)
      .map((l) => l.replace(dedent, ''))
      .join('\n');
    const lang = RUNNABLE[info.toLowerCase()] ?? null;
    fences.push({ line: i + 1, info: info.toLowerCase(), lang, body, markers: pending });
    pending = [];
    for (let k = i; k <= j && k < lines.length; k++) prose[k] = '';
    i = j;
  }
  stray();
  return { fences, prose, problems };
}

/** One Markdown file: {rel, abs, root, fences, prose, problems}. */
function loadDoc(root, rel) {
  const abs = path.join(root, rel);
  return { rel: path.relative(REPO, abs).split(path.sep).join('/'), abs, root, ...parseMarkdown(readFileSync(abs, 'utf8')) };
}

/**
 * The programs of a file: a runnable block, or a chain of blocks joined by `continues`, each
 * {file, lang, blocks, throws, output, skip, untyped} (a skipped block is a program of its own,
 * type-checked and not run; skip and untyped are the markers' reasons, or null); the skipped
 * blocks {file, line, lang, reason}; and the problems of misplaced markers (added to doc.problems).
 */
function programsOf(doc) {
  const programs = [],
    skipped = [];
  let last = null; // the last runnable block's program, or {skipped: line}
  let previous = null; // the program of the fence just before, if it was runnable
  const problem = (line, message) => doc.problems.push({ line, message });
  for (const f of doc.fences) {
    const mk = {};
    for (const m of f.markers) {
      if (Object.hasOwn(mk, m.name)) problem(m.line, `a second '${m.name}' marker on the block at line ${f.line}`);
      mk[m.name] = m;
    }
    if (!f.lang) {
      for (const m of f.markers.filter((x) => x.name !== 'output'))
        problem(m.line, `'${m.name}' on a \`\`\`${f.info || '(no language)'} block, which is never run`);
      if (mk.output) {
        if (!previous) problem(mk.output.line, 'an output block must come right after a runnable block');
        else if (previous.output) problem(mk.output.line, `a second output block for the program at line ${previous.blocks[0].line}`);
        else previous.output = { line: f.line, text: f.body };
      }
      previous = null;
      continue;
    }
    previous = null;
    if (mk.output) problem(mk.output.line, `'output' on a runnable block (it goes on the \`\`\`text block after it)`);
    if (mk.skip) {
      if (f.markers.some((m) => m.name !== 'skip' && m.name !== 'untyped')) problem(mk.skip.line, 'skip takes no other marker than untyped');
      programs.push({ file: doc.rel, lang: f.lang, blocks: [f], throws: null, output: null, skip: mk.skip.arg, untyped: mk.untyped?.arg ?? null });
      skipped.push({ file: doc.rel, line: f.line, lang: f.lang, reason: mk.skip.arg });
      last = { skipped: f.line };
      continue;
    }
    if (mk.continues) {
      const why = !last
        ? 'there is no runnable block before it in this file'
        : last.skipped
          ? `the block it continues (line ${last.skipped}) is skipped`
          : last.lang !== f.lang
            ? `it is ${f.lang} and the block before is ${last.lang}`
            : last.throws
              ? 'the block before is expected to throw, so nothing after it runs'
              : last.output
                ? 'the block before has its output checked (the output block goes after the last block of a chain)'
                : null;
      if (why) {
        problem(mk.continues.line, `'continues' cannot apply: ${why}`);
        last = { skipped: f.line };
        continue;
      }
      last.blocks.push(f);
      if (mk.throws) last.throws = mk.throws.arg;
      if (mk.untyped) last.untyped ??= mk.untyped.arg;
      previous = last;
      continue;
    }
    const p = { file: doc.rel, lang: f.lang, blocks: [f], throws: mk.throws?.arg ?? null, output: null, skip: null, untyped: mk.untyped?.arg ?? null };
    programs.push(p);
    last = previous = p;
  }
  return { programs, skipped };
}

/** A program's source and, per line of it, the Markdown line it comes from. */
function sourceOf(p) {
  const lineMap = [];
  for (const b of p.blocks) b.body.split('\n').forEach((_, k) => lineMap.push(b.line + 1 + k));
  return { source: `${p.blocks.map((b) => b.body).join('\n')}\n`, lineMap };
}

const labelOf = (p) =>
  `${p.file}:${p.blocks[0].line}${
    p.blocks.length > 1
      ? ` (+ ${p.blocks
          .slice(1)
          .map((b) => b.line)
          .join(', ')})`
      : ''
  } ${p.lang}`;

// ---------------------------------------------------------------------------
// Output comparison

const NUMBER = /-?\d+(?:\.\d+)?(?:e[+-]?\d+)?/i;

/** Whether one line of output matches one line of the output block (see the header). */
function lineMatches(actual, expected) {
  const parts = expected.split(new RegExp(`(\\.\\.\\.|${NUMBER.source})`, 'i'));
  const numbers = [];
  const re = parts
    .map((s, k) => {
      if (k % 2 === 0) return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      if (s === '...') return '.*?';
      numbers.push(s);
      return `(${NUMBER.source})`;
    })
    .join('');
  const m = new RegExp(`^${re}$`, 'i').exec(actual);
  if (!m) return false;
  return numbers.every((s, k) => {
    const decimals = /\.(\d+)/.exec(s.split(/e/i)[0])?.[1].length ?? 0;
    const exp = Number(/e([+-]?\d+)/i.exec(s)?.[1] ?? 0);
    return Math.abs(Number(m[k + 1]) - Number(s)) <= 0.5 * 10 ** (exp - decimals) * (1 + 1e-9);
  });
}

/** null when the output matches the output block, else a message. */
function compareOutput(actual, expected) {
  const norm = (s) =>
    s
      .split(/\r?\n/)
      .map((l) => l.trim().replace(/\s+/g, ' '))
      .filter(Boolean);
  const a = norm(actual),
    e = norm(expected);
  const match = (i, j) => {
    if (j === e.length) return i === a.length;
    if (e[j] === '...') {
      for (let k = i; k <= a.length; k++) if (match(k, j + 1)) return true;
      return false;
    }
    return i < a.length && lineMatches(a[i], e[j]) && match(i + 1, j + 1);
  };
  if (match(0, 0)) return null;
  const cap = (l) => (l.length > 40 ? [...l.slice(0, 40), `... (${l.length} lines)`] : l);
  return `stdout does not match the output block.\n--- expected:\n${cap(e).join('\n')}\n--- stdout:\n${cap(a).join('\n')}`;
}

// ---------------------------------------------------------------------------
// Running

/** The child that runs one program: imports it, reports how it ended in a JSON file. */
const DRIVER = `import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
const [program, out, linger] = process.argv.slice(2);
let reported = false;
const report = (r) => { if (!reported) { reported = true; writeFileSync(out, JSON.stringify(r)); } };
const failed = (phase) => (e) => {
  report({ ok: false, phase, name: e?.name ?? typeof e, code: e?.code ?? null, message: String(e?.message ?? e), stack: String(e?.stack ?? e) });
  process.exit(1);
};
process.on('uncaughtException', failed('uncaught exception'));
process.on('unhandledRejection', failed('unhandled rejection'));
process.on('exit', (code) => report(code === 0 ? { ok: true } : { ok: false, phase: 'exit', message: \`exit code \${code}\${code === 13 ? ' (a top-level await that never settles)' : ''}\` }));
try {
  await import(pathToFileURL(program).href);
} catch (e) {
  failed('threw')(e);
}
setTimeout(() => { report({ ok: false, lingered: true }); process.exit(1); }, Number(linger)).unref();
`;

/** Runs a command: {code, signal, stdout, stderr, timedOut, ms}. */
function run(cmd, args, { cwd, env = process.env, timeoutMs }) {
  return new Promise((resolve) => {
    const started = Date.now();
    // its own process group, so that a timeout also ends what it started (which holds the pipes open)
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const out = { stdout: '', stderr: '' };
    for (const k of ['stdout', 'stderr']) {
      child[k].setEncoding('utf8');
      child[k].on('data', (d) => {
        if (out[k].length < CAPTURE) out[k] += d;
      });
    }
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, ...out, timedOut, ms: Date.now() - started });
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      resolve({ code: null, signal: null, stdout: '', stderr: String(e), timedOut, ms: 0 });
    });
  });
}

/** The environment of a child: the Hub is the stand-in, the hub cache fresh, no HF_* of ours. */
function childEnv(hubUrl, cacheDir) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(HF_|HUGGING_FACE_|HUGGINGFACE_|TRANSFORMERS_)/.test(k) && k !== 'NODE_TEST_CONTEXT') env[k] = v;
  }
  return { ...env, HF_ENDPOINT: hubUrl, HF_HUB_CACHE: cacheDir, HF_HOME: cacheDir, NO_COLOR: '1' };
}

/** Replaces a program file's path:line in a text by the Markdown file:line. */
function toMarkdownLines(text, file, p, lineMap) {
  const esc = file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return String(text).replace(
    new RegExp(`(?:file://)?${esc}:(\\d+)(?::\\d+)?`, 'g'),
    (_, l) => `${p.file}:${lineMap[Number(l) - 1] ?? `?(program line ${l})`}`,
  );
}

/** The ids the stand-in was asked for and does not know (401 RepoNotFound; one-segment legacy ids 404). */
function unknownIds(requests) {
  const ids = new Set();
  for (const r of requests) {
    const m = /^\/([^/]+)\/([^/]+)\/resolve\//.exec(r.path);
    if (m && r.status === 401) ids.add(`${decodeURIComponent(m[1])}/${decodeURIComponent(m[2])}`);
    const legacy = /^\/([^/]+)\/resolve\//.exec(r.path);
    if (legacy && r.status === 404) ids.add(decodeURIComponent(legacy[1]));
  }
  return [...ids];
}

/** Type-checks every program in one tsc run (js ones with checkJs) and emits the ts ones: Map program -> [diagnostics]. */
async function typeCheck(progs, work) {
  const tsconfig = {
    compilerOptions: {
      strict: true,
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2022', 'DOM'],
      types: ['node'],
      allowJs: true,
      checkJs: true,
      typeRoots: [path.join(REPO, 'node_modules', '@types')],
      skipLibCheck: true,
      outDir: 'js',
      rootDir: '.',
      sourceMap: true,
      noEmitOnError: false,
    },
    files: progs.map((p) => path.basename(p.source)),
  };
  writeFileSync(path.join(work, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
  const r = await run(TSC, ['-p', 'tsconfig.json', '--pretty', 'false'], { cwd: work, timeoutMs: 120_000 });
  const byFile = new Map(progs.map((p) => [path.basename(p.source), p]));
  const errors = new Map();
  let list = null; // the diagnostics of the program the last one was about
  for (const line of `${r.stdout}\n${r.stderr}`.split('\n')) {
    const m = /^(p\d+\.(?:ts|mjs))\((\d+),(\d+)\): (.*)$/.exec(line);
    if (m && byFile.has(m[1])) {
      const p = byFile.get(m[1]);
      list = errors.get(p) ?? [];
      errors.set(p, list);
      list.push(`${p.file}:${p.lineMap[Number(m[2]) - 1]}:${m[3]} ${m[4]}`);
    } else if (list && /^\s/.test(line) && line.trim()) list[list.length - 1] += `\n${line}`;
    else list = null;
  }
  if (r.code !== 0 && errors.size === 0) for (const p of progs) errors.set(p, [`tsc failed (code ${r.code}):\n${r.stdout}${r.stderr}`]);
  return errors;
}

/** Runs one program in a child with its own Hub stand-in and cache; resolves to a result. */
async function runOne(p, work, { timeoutMs, lingerMs }) {
  const home = mkdtempSync(path.join(tmpdir(), 'swapformer-docs-'));
  const cwd = path.join(home, 'cwd');
  mkdirSync(cwd);
  const resultFile = path.join(home, 'result.json');
  const hub = await startHub({ repos: HUB_REPOS });
  try {
    const entry = p.lang === 'ts' ? path.join(work, 'js', path.basename(p.tsFile).replace(/\.ts$/, '.js')) : p.jsFile;
    const flags = [...NODE_FLAGS, ...(p.lang === 'ts' ? ['--enable-source-maps'] : [])];
    const r = await run(process.execPath, [...flags, path.join(work, 'driver.mjs'), entry, resultFile, String(lingerMs)], {
      cwd,
      env: childEnv(hub.url, path.join(home, 'hf')),
      timeoutMs,
    });
    const result = existsSync(resultFile) ? JSON.parse(readFileSync(resultFile, 'utf8')) : null;
    return judge(p, r, result, unknownIds(hub.requests), { timeoutMs, lingerMs });
  } finally {
    await hub.close();
    rmSync(home, { recursive: true, force: true });
  }
}

/** A program's outcome: {program, label, status: 'pass' | 'fail', message, ms, stdout}. */
function judge(p, r, result, unknown, { timeoutMs, lingerMs }) {
  const where = (text) => toMarkdownLines(text, p.lang === 'ts' ? p.tsFile : p.jsFile, p, p.lineMap);
  // name, code and message, then the stack's frames (the stack's own first lines repeat the message)
  const described = (x) => {
    const frames = String(x.stack ?? '')
      .split('\n')
      .filter((l) => /^\s+at /.test(l))
      .slice(0, 8);
    return [`${x.name}${x.code ? ` ${x.code}` : ''}: ${x.message}`, ...frames.map(where)].join('\n');
  };
  let problem = null;
  if (r.timedOut) problem = `did not finish within ${timeoutMs / 1000} s (killed)`;
  else if (!result) problem = `the child ended (code ${r.code}, signal ${r.signal}) without a result`;
  else if (result.lingered)
    problem = `finished, but its process did not exit within ${lingerMs / 1000} s of the last statement: something is left open (a server, a timer, a worker, an encoder not disposed?)`;
  else if (p.throws) {
    if (result.ok) problem = `expected an error with code ${p.throws}; the example finished without one`;
    else if (result.code !== p.throws) problem = `expected an error with code ${p.throws}, got ${result.phase === 'exit' ? result.message : described(result)}`;
  } else if (!result.ok) problem = result.phase === 'exit' ? result.message : `${result.phase}: ${described(result)}`;
  if (!problem && p.output) {
    const diff = compareOutput(r.stdout, p.output.text);
    if (diff) problem = `${diff}\n(output block at ${p.file}:${p.output.line})`;
  }
  if (unknown.length && !p.throws) {
    problem = `${problem ?? 'the example finished'}\nHub id(s) with no fixture: ${unknown.join(', ')}. Add each to ${HUB_IDS_FILE} with the closest fixture of tests/pretrained/ or tests/heads/. Mapped: ${Object.keys(HUB_IDS).join(', ')}`;
  }
  const stderr = where(r.stderr).trim();
  const message = problem && `${problem}${stderr ? `\n--- stderr:\n${stderr.split('\n').slice(-30).join('\n')}` : ''}`;
  return { program: p, label: labelOf(p), status: problem ? 'fail' : 'pass', message, ms: r.ms, stdout: r.stdout };
}

/** Runs every function of items, at most `limit` at once, keeping the order of the results. */
async function pool(items, limit, fn) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** Type-checks programs (but the untyped ones, in one tsc run), then runs those that passed (but the skipped ones); resolves to their results, in order. */
async function runPrograms(programs, { timeoutMs = TIMEOUT_MS, lingerMs = LINGER_MS } = {}) {
  mkdirSync(OUT, { recursive: true });
  // inside the package, so that 'swapformer' is its self-reference; tests/out/ is git-ignored
  const work = mkdtempSync(path.join(OUT, 'docs-'));
  try {
    writeFileSync(path.join(work, 'driver.mjs'), DRIVER);
    programs.forEach((p, i) => {
      const { source, lineMap } = sourceOf(p);
      p.lineMap = lineMap;
      const file = path.join(work, `p${i}.${p.lang === 'ts' ? 'ts' : 'mjs'}`);
      writeFileSync(file, source);
      p.source = file;
      if (p.lang === 'ts') p.tsFile = file;
      else p.jsFile = file;
    });
    const typed = programs.filter((p) => !p.untyped);
    const typeErrors = typed.length ? await typeCheck(typed, work) : new Map();
    return await pool(programs, PARALLEL, (p) =>
      typeErrors.has(p)
        ? { program: p, label: labelOf(p), status: 'fail', message: `type errors (bindings/index.d.ts):\n${typeErrors.get(p).join('\n')}`, ms: 0, stdout: '' }
        : p.skip
          ? { program: p, label: labelOf(p), status: 'skip', message: null, ms: 0, stdout: '' }
          : runOne(p, work, { timeoutMs, lingerMs }),
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------
// Links and anchors

/** GitHub's heading slugs (github-slugger's rules): a function text -> unique slug. */
function slugger() {
  const seen = new Map();
  return (text) => {
    const base = text
      .toLowerCase()
      .replace(/[^\p{Alphabetic}\p{M}\p{Nd}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    let slug = base;
    while (seen.has(slug)) {
      seen.set(base, seen.get(base) + 1);
      slug = `${base}-${seen.get(base)}`;
    }
    seen.set(slug, 0);
    return slug;
  };
}

/** A heading's plain text as GitHub renders it (links, images, code, emphasis and tags reduced to their text). */
function headingText(raw) {
  return raw
    .replace(/\\([!-/:-@[-`{-~])/g, '$1')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\[[^\]]*\]/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/(^|[^\p{L}\p{N}])_{1,2}([^_]+?)_{1,2}(?=[^\p{L}\p{N}]|$)/gu, '$1$2')
    .trim();
}

/** The anchors of a Markdown file: heading slugs (ATX and setext) and <a name|id>. */
function anchorsOf(prose) {
  const slug = slugger();
  const anchors = new Set();
  prose.forEach((line, i) => {
    const atx = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line);
    const prev = prose[i - 1];
    if (atx) anchors.add(slug(headingText(atx[1] ?? '')));
    else if (/^ {0,3}(=+|-+)[ \t]*$/.test(line) && prev && prev.trim() && !/^\s*([#>|]|[-*+] |\d+[.)] )/.test(prev) && !/^ {0,3}(=+|-+)[ \t]*$/.test(prev)) {
      anchors.add(slug(headingText(prev)));
    }
    for (const m of line.matchAll(/<a\s[^>]*\b(?:name|id)\s*=\s*["']([^"']+)["']/gi)) anchors.add(m[1]);
  });
  return anchors;
}

/** The link targets of a file's prose (code spans and HTML comments removed): [{line, target}]. */
function linksOf(prose) {
  const text = prose
    .join('\n')
    .replace(/<!--[\s\S]*?-->/g, (s) => s.replace(/[^\n]/g, ' '))
    .replace(/(`+)(?!`)[\s\S]*?[^`]\1(?!`)/g, (s) => s.replace(/[^\n]/g, ' '));
  const lineAt = (index) => text.slice(0, index).split('\n').length;
  const out = [];
  const add = (index, target) => out.push({ line: lineAt(index), target: target.replace(/^<|>$/g, '') });
  for (const m of text.matchAll(/\]\(\s*(<[^>\n]*>|[^\s)]+)[^)\n]*\)/g)) add(m.index, m[1]);
  for (const m of text.matchAll(/^ {0,3}\[[^\]\n]+\]:[ \t]*(<[^>\n]*>|\S+)/gm)) add(m.index, m[1]);
  for (const m of text.matchAll(/<(?:a|img|source)\b[^>]*?\s(?:href|src)\s*=\s*(?:"([^"]*)"|'([^']*)')/gi)) add(m.index, m[1] ?? m[2]);
  return out;
}

/** Problems with the relative links and anchors of the docs: [{file, line, message}]. */
function checkLinks(docs) {
  const problems = [];
  const anchorCache = new Map();
  const anchors = (abs) => {
    if (!anchorCache.has(abs)) {
      const doc = docs.find((d) => d.abs === abs);
      anchorCache.set(abs, anchorsOf(doc ? doc.prose : parseMarkdown(readFileSync(abs, 'utf8')).prose));
    }
    return anchorCache.get(abs);
  };
  for (const doc of docs) {
    for (const { line, target: written } of linksOf(doc.prose).sort((a, b) => a.line - b.line)) {
      const bad = (message) => problems.push({ file: doc.rel, line, message: `'${written}': ${message}` });
      const own = REPO_BLOB.exec(written);
      const target = own ? `${own[1] || '/'}${own[2]}` : written;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // absolute: not fetched
      const hash = target.indexOf('#');
      const filePart = (hash < 0 ? target : target.slice(0, hash)).replace(/\?.*$/, '');
      const anchor = hash < 0 ? null : target.slice(hash + 1);
      let decoded;
      try {
        decoded = decodeURIComponent(filePart);
      } catch {
        bad('not a valid URL path');
        continue;
      }
      const abs = filePart === '' ? doc.abs : decoded.startsWith('/') ? path.join(REPO, decoded) : path.resolve(path.dirname(doc.abs), decoded);
      if (path.relative(REPO, abs).startsWith('..')) {
        bad('points outside the repository');
        continue;
      }
      if (!existsSync(abs)) {
        bad(`no such file or folder (${path.relative(REPO, abs)})`);
        continue;
      }
      if (!anchor || !statSync(abs).isFile()) continue;
      if (!abs.endsWith('.md')) continue; // #L10 and the like in source files: GitHub's, not checked
      let slug;
      try {
        slug = decodeURIComponent(anchor);
      } catch {
        slug = anchor;
      }
      if (!anchors(abs).has(slug)) {
        const near = [...anchors(abs)].filter((a) => a.includes(slug) || slug.includes(a)).slice(0, 5);
        bad(`no heading with the anchor #${slug} in ${path.relative(REPO, abs)}${near.length ? ` (near: ${near.map((a) => `#${a}`).join(', ')})` : ''}`);
      }
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------
// Everything for one set of files

/** Parses files (relative to root) into docs, programs, skipped blocks and marker problems. */
function collect(root, files) {
  const docs = files.map((f) => loadDoc(root, f));
  const programs = [],
    skipped = [];
  for (const d of docs) {
    const r = programsOf(d);
    programs.push(...r.programs);
    skipped.push(...r.skipped);
  }
  const markerProblems = docs.flatMap((d) => d.problems.map((x) => ({ file: d.rel, ...x })).sort((a, b) => a.line - b.line));
  return { docs, programs, skipped, markerProblems };
}

const formatProblem = (x) => `${x.file}:${x.line}: ${x.message}`;

// ---------------------------------------------------------------------------
// The project's docs

const project = collect(REPO, docFiles(REPO));

test('docs: every Hub id of tests/docs-hub-ids.json maps to a fixture folder with a config.json', () => {
  for (const [id, dir] of Object.entries(HUB_IDS)) {
    assert.match(id, /^[\w.-]+\/[\w.-]+$/, `${id}: the stand-in serves owner/name ids`);
    assert.ok(existsSync(path.join(REPO, dir, 'config.json')), `${id}: ${dir}/config.json`);
  }
});

test("docs: a version pinned in a URL or command (swapformer@x.y.z) is package.json's", () => {
  const { version } = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8'));
  const pins = project.docs.flatMap((d) =>
    readFileSync(d.abs, 'utf8')
      .split('\n')
      .flatMap((line, i) => [...line.matchAll(/\bswapformer(?:-models)?@(\d+\.\d+\.\d+[\w.-]*)/g)].map((m) => ({ file: d.rel, line: i + 1, version: m[1] }))),
  );
  assert.ok(pins.length > 0, 'deployment.md pins the version in its CDN URLs');
  const stale = pins.filter((p) => p.version !== version).map((p) => `${p.file}:${p.line}: swapformer@${p.version}, the package is ${version}`);
  assert.deepEqual(stale, [], stale.join('\n'));
});

test("docs: a package an example imports (other than swapformer and Node's) is installed with npm install in the same file", () => {
  const missing = [];
  for (const d of project.docs) {
    const text = readFileSync(d.abs, 'utf8');
    const installed = new Set([...text.matchAll(/\bnpm (?:install|i)\b([^\n`]*)/g)].flatMap((m) => m[1].trim().split(/\s+/)));
    for (const f of d.fences.filter((x) => x.lang)) {
      const specifiers = [...f.body.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+|import\.meta\.resolve\(\s*)'([^'./][^']*)'/g)].map((m) => m[1]);
      for (const spec of specifiers) {
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
        if (name === 'swapformer' || spec.startsWith('node:') || /^https?:/.test(spec)) continue;
        if (!installed.has(name)) missing.push(`${d.rel}:${f.line}: imports '${spec}': say \`npm install ${name}\` in the file`);
      }
    }
  }
  assert.deepEqual(missing, [], missing.join('\n'));
});

test('docs: markers, relative links and anchors of README.md and docs/', () => {
  const problems = [...project.markerProblems, ...checkLinks(project.docs)].map(formatProblem);
  assert.deepEqual(problems, [], problems.join('\n'));
});

test('docs: every example of README.md and docs/ type-checks and runs', { timeout: 300_000 }, async (t) => {
  const started = Date.now();
  const results = await runPrograms(project.programs);
  const rows = results
    .slice()
    .sort((a, b) => (a.program.file === b.program.file ? a.program.blocks[0].line - b.program.blocks[0].line : a.program.file < b.program.file ? -1 : 1));
  for (const r of rows) {
    const typed = r.program.untyped ? 'not type-checked' : 'type-checked';
    if (r.status === 'skip') await t.test(`${r.label} (${typed}, not run)`, { skip: r.program.skip }, () => {});
    else
      await t.test(`${r.label} (${typed}, ${(r.ms / 1000).toFixed(1)} s)`, () => {
        if (r.status === 'fail') assert.fail(r.message);
      });
  }
  const count = (st) => results.filter((r) => r.status === st).length;
  const untyped = project.programs.filter((p) => p.untyped).length;
  t.diagnostic(
    `${project.docs.length} files, ${results.length} programs (${project.programs.reduce((n, p) => n + p.blocks.length, 0)} blocks): ${count('pass')} pass, ${count('fail')} fail; ${count('skip')} type-checked only (skipped); ${untyped} not type-checked; ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
});

// ---------------------------------------------------------------------------
// Self-tests on tests/docs-samples/

test('docs runner: README.md and docs/**/*.md are walked, docs/api/ is not', () => {
  assert.deepEqual(docFiles(path.join(SAMPLES, 'tree')), ['README.md', 'docs/guide.md', 'docs/more/deep.md']);
});

test('docs runner: GitHub heading slugs (github-slugger test/fixtures.json cases)', () => {
  const cases = [
    // [heading text, slug], in this order (duplicates count)
    ['alpha', 'alpha'],
    ['alpha', 'alpha-1'],
    ['bravoCharlieDelta', 'bravocharliedelta'],
    ['echo', 'echo'],
    ['echo', 'echo-1'],
    ['echo 1', 'echo-1-1'],
    ['echo-1', 'echo-1-2'],
    ['echo', 'echo-2'],
    ['foxtrot-1', 'foxtrot-1'],
    ['foxtrot', 'foxtrot'],
    ['foxtrot', 'foxtrot-2'],
    ['heading with a - dash', 'heading-with-a---dash'],
    ['heading with an _ underscore', 'heading-with-an-_-underscore'],
    ['heading with a period.txt', 'heading-with-a-periodtxt'],
    ['exchange.bind_headers(exchange, routing [, bindCallback])', 'exchangebind_headersexchange-routing--bindcallback'],
    ['apostrophe’s should be trimmed', 'apostrophes-should-be-trimmed'],
    ['I ♥ unicode', 'i--unicode'],
    ['en–dash', 'endash'],
    ['😄 unicode emoji', '-unicode-emoji'],
    ['😄-😄 unicode emoji', '--unicode-emoji'],
    ['😄_😄 unicode emoji', '_-unicode-emoji'],
    [':smile: - a gemoji', 'smile---a-gemoji'],
    ['Привет non-latin 你好', 'привет-non-latin-你好'],
    [':ok_hand: :hatched_chick: Two in a row', 'ok_hand-hatched_chick-two-in-a-row'],
    ['__proto__', '__proto__'],
    ['__proto__', '__proto__-1'],
    ['hasOwnProperty', 'hasownproperty'],
  ];
  const slug = slugger();
  assert.deepEqual(
    cases.map(([text]) => slug(text)),
    cases.map(([, s]) => s),
  );
  // Markdown in headings is reduced to the rendered text first
  assert.equal(slugger()(headingText('`loadPretrained(source, options)` and [links](x.md) _too_')), 'loadpretrainedsource-options-and-links-too');
});

test('docs runner: loose output comparison', () => {
  assert.equal(compareOutput('[2, 384]\n0.9912  ok\n', '[2, 384]\n0.99 ok'), null);
  assert.match(compareOutput('0.98\n', '0.99'), /does not match/);
  assert.equal(compareOutput('a\nb\nc\nlast 1e-7\n', 'a\n...\nlast 0.0000001'), null);
  assert.equal(compareOutput('label: POSITIVE score 0.73\n', 'label: ... score ...'), null);
  assert.match(compareOutput('a\n', 'a\nb'), /does not match/);
  assert.equal(compareOutput('  x   y \n\n', 'x y'), null);
});

test('docs runner: marker mistakes are reported (tests/docs-samples/markers.md)', () => {
  const { markerProblems, programs, skipped } = collect(SAMPLES, ['markers.md']);
  const got = markerProblems.map((x) => `${x.line}: ${x.message}`);
  const want = [
    [/'continues' cannot apply: there is no runnable block before it/],
    [/skip without a reason/],
    [/unknown marker 'skp'/],
    [/marker not directly above a fence/],
    [/throws needs a SwapformerError code \(got 'NOT_A_CODE'/],
    [/'continues' takes no argument/],
    [/'skip' on a ```sh block, which is never run/],
    [/an output block must come right after a runnable block/],
    [/'output' on a runnable block/],
    [/'continues' cannot apply: the block it continues \(line \d+\) is skipped/],
    [/malformed marker/],
    [/untyped without a reason/],
  ];
  assert.equal(got.length, want.length, got.join('\n'));
  want.forEach(([re], i) => assert.match(got[i], re, got.join('\n')));
  assert.deepEqual(
    skipped.map((s) => s.reason),
    ['runs in a browser page (tests/browser.test.js)'],
  );
  assert.ok(programs.length >= 1);
});

test('docs runner: broken links and bad anchors are reported (tests/docs-samples/links.md)', () => {
  const { docs } = collect(SAMPLES, ['links.md', 'examples.md']);
  const got = checkLinks(docs).map((x) => `${x.file.replace('tests/docs-samples/', '')}:${x.line}: ${x.message}`);
  const want = [
    /^links.md:\d+: 'missing\.md': no such file or folder/,
    /^links.md:\d+: 'img\/none\.png': no such file or folder/,
    /^links.md:\d+: '#no-such-heading': no heading with the anchor #no-such-heading in tests\/docs-samples\/links\.md/,
    /^links.md:\d+: 'examples\.md#nope': no heading with the anchor #nope/,
    /^links.md:\d+: '#same-2': no heading with the anchor #same-2/,
    /^links.md:\d+: '\.\.\/\.\.\/\.\.\/outside\.md': points outside the repository/,
    /^links.md:\d+: 'gone\.md': no such file or folder/,
    /^links.md:\d+: 'https:\/\/github\.com\/swapformer\/swapformer\/tree\/main\/docs\/no-such-guide\.md': no such file or folder \(docs\/no-such-guide\.md\)/,
    /^links.md:\d+: 'https:\/\/github\.com\/swapformer\/swapformer\/blob\/main\/README\.md#no-such-section': no heading with the anchor #no-such-section in README\.md/,
    /^links.md:\d+: 'nowhere\.md': no such file or folder/,
  ];
  assert.equal(got.length, want.length, got.join('\n'));
  want.forEach((re, i) => assert.match(got[i], re, got.join('\n')));
});

test('docs runner: samples pass and fail as they should (tests/docs-samples/examples.md)', { timeout: 120_000 }, async () => {
  const { programs, skipped, markerProblems } = collect(SAMPLES, ['examples.md']);
  assert.deepEqual(markerProblems, []);
  const results = await runPrograms(programs, { lingerMs: 1000 });
  const byCase = Object.fromEntries(results.map((r) => [/\/\/ case: (\S+)/.exec(r.program.blocks[0].body)?.[1] ?? r.label, r]));
  const expected = {
    plain: ['pass'],
    'output-ok': ['pass'],
    'output-differs': ['fail', /stdout does not match the output block[\s\S]*--- expected:\nshape 2 x 3[\s\S]*--- stdout:\nshape \[1,4,8\]/],
    chain: ['pass'],
    'throws-ok': ['pass'],
    'throws-other-code': ['fail', /expected an error with code BAD_ARGUMENT, got SwapformerError BAD_CONFIG: config\.normPlacement/],
    'throws-nothing': ['fail', /expected an error with code NOT_FOUND; the example finished without one/],
    fails: ['fail', /threw: Error: this example is broken\n\s+at .*tests\/docs-samples\/examples\.md:\d+/],
    'hub-mapped': ['pass'],
    'hub-unmapped': [
      'fail',
      /Hub id\(s\) with no fixture: nobody\/no-such-model\. Add each to tests\/docs-hub-ids\.json .* Mapped: sentence-transformers\/all-MiniLM-L6-v2, /s,
    ],
    'ts-ok': ['pass'],
    'ts-type-error': ['fail', /type errors \(bindings\/index\.d\.ts\):\ntests\/docs-samples\/examples\.md:\d+:\d+ error TS2322/],
    'ts-runtime-error': ['fail', /threw: SwapformerError BAD_TOKEN: [\s\S]*\(tests\/docs-samples\/examples\.md:139\)/],
    'js-type-error': [
      'fail',
      /type errors \(bindings\/index\.d\.ts\):\ntests\/docs-samples\/examples\.md:\d+:\d+ error TS2345: .*Types of property 'norm' are incompatible/s,
    ],
    untyped: ['pass'],
    'skip-ok': ['skip'],
    'skip-type-error': ['fail', /type errors \(bindings\/index\.d\.ts\):\ntests\/docs-samples\/examples\.md:\d+:\d+ error TS2531: Object is possibly 'null'/],
    'skip-untyped': ['skip'],
    lingers: ['fail', /did not exit within 1 s of the last statement/],
    unhandled: ['fail', /unhandled rejection: .*nobody awaited this/s],
  };
  assert.deepEqual(Object.keys(byCase).sort(), Object.keys(expected).sort());
  for (const [name, [status, re]] of Object.entries(expected)) {
    const r = byCase[name];
    assert.equal(r.status, status, `${name} (${r.label}): ${r.message}`);
    if (re) assert.match(r.message, re, `${name}: ${r.message}`);
  }
  assert.equal(byCase.chain.program.blocks.length, 3, 'continues joins three blocks');
  assert.deepEqual(
    skipped.map((s) => s.reason),
    ['needs a browser page (runs in tests/browser.test.js)', 'a browser page, never run, still type-checked', 'never run, and not type-checked either'],
  );
  assert.equal(byCase['skip-ok'].ms, 0, 'a skipped block is not run');
});

test(
  'docs runner: an example that never finishes is killed at the timeout, with what it started (tests/docs-samples/hang.md)',
  { timeout: 90_000 },
  async () => {
    const { programs } = collect(SAMPLES, ['hang.md']);
    const [r] = await runPrograms(programs, { timeoutMs: 3000 });
    assert.equal(r.status, 'fail');
    assert.match(r.message, /did not finish within 3 s \(killed\)/);
    assert.ok(r.ms < 10_000, `the process it started is ended too (${r.ms} ms)`);
  },
);
