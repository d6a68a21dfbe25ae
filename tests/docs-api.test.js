// The API reference (`npm run docs`, tools/docs.mjs): TypeDoc builds HTML from
// bindings/index.d.ts without one warning (docs/tools/typedoc.json: an export,
// member or option field without a doc comment, a broken {@link}, an unknown
// tag fail it), every runtime export has its page, and a missing comment does
// fail the build. TypeDoc is docs/tools' own package: installed by build.sh
// (CI) or here; without a registry to install it from, the test skips saying so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as swapformer from '../bindings/index.js';
import { TOOLS, installTools, buildDocs } from '../tools/docs.mjs';

const REPO = fileURLToPath(new URL('..', import.meta.url));
let installed; // installTools() once: {ok, output}
const tools = () => (installed ??= installTools({ quiet: true }));
const GROUPS = ['Encoder', 'Config', 'Pretrained', 'Embeddings and search', 'Tasks', 'Tokenizer', 'Errors', 'Runtime'];

/** The page TypeDoc writes for a runtime export, by what it is. */
const pageOf = (name, value) => (typeof value === 'function'
  ? (/^class\b/.test(Function.prototype.toString.call(value)) ? `classes/${name}.html` : `functions/${name}.html`)
  : `variables/${name}.html`);

test('docs: TypeDoc builds the API reference from bindings/index.d.ts with no warning, a page per export', { timeout: 240_000 }, (t) => {
  const install = tools();
  if (!install.ok) {
    t.skip(`docs/tools (TypeDoc) is not installed and \`npm ci --prefix docs/tools\` failed (no registry?): ${install.output.trim().split('\n')[0]}`);
    return;
  }
  const out = mkdtempSync(path.join(tmpdir(), 'swapformer-docs-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const started = performance.now();
  const r = buildDocs({ out });
  const seconds = (performance.now() - started) / 1000;
  assert.equal(r.status, 0, `typedoc failed:\n${r.output}`);
  assert.doesNotMatch(r.output, /\[(warning|error)\]/, r.output);

  const index = readFileSync(path.join(out, 'index.html'), 'utf8');
  const { version } = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8'));
  assert.match(index, new RegExp(`<title>swapformer - v${version.replace(/\./g, '\\.')}</title>`), 'the name and version of package.json');
  for (const g of GROUPS) assert.ok(index.includes(`>${g}</`), `index.html: the group ${g}`);
  // a runtime export without a declaration in index.d.ts has no page (TypeScript users could not import it)
  const missing = Object.entries(swapformer).map(([name, v]) => pageOf(name, v)).filter((p) => !existsSync(path.join(out, p)));
  assert.deepEqual(missing, [], 'runtime exports without a page: declare and document them in bindings/index.d.ts');
  // markdown turns a bare file name into a link to a website (README.md is a Moldovan domain): none
  const pages = readdirSync(out, { recursive: true }).filter((f) => f.endsWith('.html'));
  const http = pages.flatMap((f) => [...readFileSync(path.join(out, f), 'utf8').matchAll(/href="(http:[^"]*)"/g)].map((m) => `${f}: ${m[1]}`));
  assert.deepEqual(http, [], 'links made from bare names');
  t.diagnostic(`TypeDoc ${versionOf('typedoc')} on TypeScript ${versionOf('typescript')}: ${Object.keys(swapformer).length} exports, ${pages.length} pages, no warning, ${seconds.toFixed(1)} s`);
});

test('docs: a declaration without a doc comment fails the build (validation is on, warnings are errors)', { timeout: 240_000 }, (t) => {
  if (!tools().ok) {
    t.skip('docs/tools (TypeDoc) is not installed and could not be (no registry?)');
    return;
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'swapformer-docs-check-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // the last one-line comment of an interface member, removed
  const dts = readFileSync(path.join(REPO, 'bindings', 'index.d.ts'), 'utf8');
  const last = [...dts.matchAll(/\n  \/\*\*[^\n]*\*\/\n  (?:readonly )?(\w+)\??: /g)].at(-1);
  assert.ok(last, 'index.d.ts has a member with a one-line comment');
  const member = last[1];
  const stripped = dts.slice(0, last.index) + dts.slice(last.index).replace(/\n  \/\*\*[^\n]*\*\//, '');
  writeFileSync(path.join(dir, 'index.d.ts'), stripped);
  const tsconfig = JSON.parse(readFileSync(path.join(TOOLS, 'tsconfig.json'), 'utf8'));
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ ...tsconfig, files: ['index.d.ts'] }));
  writeFileSync(path.join(dir, 'package.json'), readFileSync(path.join(REPO, 'package.json'))); // the project's name and version
  writeFileSync(path.join(dir, 'typedoc.json'), JSON.stringify({ extends: [path.join(TOOLS, 'typedoc.json')], entryPoints: ['index.d.ts'], tsconfig: 'tsconfig.json', emit: 'none' }));
  const r = spawnSync(process.execPath, [path.join(TOOLS, 'node_modules', 'typedoc', 'bin', 'typedoc'), '--options', path.join(dir, 'typedoc.json')], {
    cwd: REPO, encoding: 'utf8', timeout: 120_000, env: { ...process.env, NO_COLOR: '1' },
  });
  assert.notEqual(r.status, 0, `typedoc passed without ${member}'s comment:\n${r.stdout}${r.stderr}`);
  assert.match(`${r.stdout}${r.stderr}`, new RegExp(`\\.${member} \\(Property\\).*does not have any documentation`));
  t.diagnostic(`without the comment of ${member}: typedoc exits ${r.status}`);
});

function versionOf(pkg) {
  return JSON.parse(readFileSync(path.join(TOOLS, 'node_modules', pkg, 'package.json'), 'utf8')).version;
}
