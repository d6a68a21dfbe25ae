#!/usr/bin/env node
// npm run docs: the API reference, HTML made by TypeDoc from bindings/index.d.ts, in docs/api/
// (generated, not committed). `--out <dir>` writes it elsewhere (tests/docs-api.test.js).
//
// TypeDoc is a package of its own, docs/tools/ (own lockfile), installed here with `npm ci` when
// missing or older than its lockfile: TypeDoc runs on the TypeScript compiler API, which
// TypeScript 7 (the root's, that tests/types.test.js checks the types with) does not have, so
// docs/tools pins TypeDoc with the TypeScript 6 it supports. Any warning (an undocumented
// export, a broken {@link}, an unknown tag) fails the build: docs/tools/typedoc.json.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO = fileURLToPath(new URL('..', import.meta.url));
export const TOOLS = path.join(REPO, 'docs', 'tools');
const TYPEDOC = path.join(TOOLS, 'node_modules', 'typedoc', 'bin', 'typedoc');
const INSTALLED = path.join(TOOLS, 'node_modules', '.package-lock.json');

/** Whether docs/tools/node_modules is there and not older than docs/tools/package-lock.json. */
export const toolsInstalled = () =>
  existsSync(TYPEDOC) && existsSync(INSTALLED) && statSync(INSTALLED).mtimeMs >= statSync(path.join(TOOLS, 'package-lock.json')).mtimeMs;

/** `npm ci` in docs/tools when needed: {ok, output} (ok false with npm's message, e.g. without network). */
export function installTools({ quiet = false } = {}) {
  if (toolsInstalled()) return { ok: true, output: '' };
  if (!quiet) process.stderr.write('docs: npm ci --prefix docs/tools\n');
  const r = spawnSync('npm', ['ci', '--prefix', TOOLS, '--no-audit', '--no-fund', '--loglevel=error'], { encoding: 'utf8', timeout: 300_000 });
  return { ok: r.status === 0 && toolsInstalled(), output: `${r.error?.message ?? ''}${r.stdout ?? ''}${r.stderr ?? ''}` };
}

/** Runs TypeDoc: {status, output}; status 0 only without a warning. */
export function buildDocs({ out = path.join(REPO, 'docs', 'api') } = {}) {
  const r = spawnSync(process.execPath, [TYPEDOC, '--options', path.join(TOOLS, 'typedoc.json'), '--out', out], {
    cwd: REPO,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
  });
  return { status: r.status ?? 1, output: `${r.error?.message ?? ''}${r.stdout ?? ''}${r.stderr ?? ''}` };
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const args = process.argv.slice(2);
  if (!(args.length === 0 || (args.length === 2 && args[0] === '--out'))) {
    process.stderr.write('usage: node tools/docs.mjs [--out <dir>]\n');
    process.exit(2);
  }
  const install = installTools();
  if (!install.ok) {
    process.stderr.write(`docs: could not install docs/tools (npm ci):\n${install.output}`);
    process.exit(1);
  }
  const { status, output } = buildDocs(args.length ? { out: path.resolve(args[1]) } : {});
  process.stdout.write(output);
  process.exit(status);
}
