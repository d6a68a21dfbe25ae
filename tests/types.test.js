// The hand-written types (bindings/index.d.ts, models/tasks.d.ts), as a user
// gets them from the packed tarballs: tests/types/*.ts compiled by
// `tsc --strict` (no skipLibCheck) in a browser project (lib ES2022 + DOM, no
// @types/node), a Node project (lib ES2022 + @types/node, no DOM) and one with
// lib esnext (`using`). Each `// @ts-expect-error` there is a mistake the types
// must refuse: tsc fails on one that compiles.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BIN, REPO, installPacked } from './packaging.js';

const TYPES = path.join(REPO, 'tests', 'types');

const PROJECTS = {
  browser: { lib: ['ES2022', 'DOM'], types: [], module: 'ESNext', moduleResolution: 'Bundler', files: ['api.ts', 'browser.ts', 'embeddings.ts'] },
  node: { lib: ['ES2022'], types: ['node'], typeRoots: [path.join(REPO, 'node_modules', '@types')], module: 'NodeNext', moduleResolution: 'NodeNext', files: ['api.ts', 'node.ts', 'models.ts', 'embeddings.ts'] },
  esnext: { lib: ['ESNext', 'DOM'], types: [], module: 'ESNext', moduleResolution: 'Bundler', files: ['api.ts', 'disposable.ts'] },
};

test('types: tsc --strict in a browser project, a Node project and with lib esnext, from the packed tarballs', { timeout: 180_000 }, async (t) => {
  const app = installPacked({ models: true, prefix: 'swapformer-types-' });
  t.after(app.cleanup);
  for (const f of readdirSync(TYPES)) copyFileSync(path.join(TYPES, f), path.join(app.dir, f));
  const version = spawnSync(BIN('tsc'), ['--version'], { encoding: 'utf8' }).stdout.trim();
  for (const [name, p] of Object.entries(PROJECTS)) {
    const { files, ...options } = p;
    const tsconfig = {
      compilerOptions: { strict: true, noEmit: true, target: 'ES2022', skipLibCheck: false, noUnusedLocals: false, exactOptionalPropertyTypes: false, ...options },
      files,
    };
    writeFileSync(path.join(app.dir, `tsconfig.${name}.json`), JSON.stringify(tsconfig, null, 2));
    const r = spawnSync(BIN('tsc'), ['-p', `tsconfig.${name}.json`], { cwd: app.dir, encoding: 'utf8' });
    assert.equal(r.status, 0, `tsc -p tsconfig.${name}.json (${version}):\n${r.stdout}${r.stderr}`);
    t.diagnostic(`${name}: lib ${options.lib.join(' + ')}${options.types.length ? ` + @types/${options.types.join(', ')}` : ''}, ${files.join(', ')}: no error (${version})`);
  }
  // the expected errors are real: the same file without its @ts-expect-error lines has one error per mark
  const marks = readdirSync(TYPES).flatMap((f) => [...(f.endsWith('.ts') ? readFileSync(path.join(TYPES, f), 'utf8') : '').matchAll(/^\s*\/\/ @ts-expect-error/gm)]).length;
  for (const f of ['api.ts', 'models.ts', 'embeddings.ts']) writeFileSync(path.join(app.dir, f), readFileSync(path.join(TYPES, f), 'utf8').replace(/\/\/ @ts-expect-error.*$/gm, ''));
  const r = spawnSync(BIN('tsc'), ['-p', 'tsconfig.node.json'], { cwd: app.dir, encoding: 'utf8' });
  const errors = r.stdout.split('\n').filter((l) => /error TS\d+/.test(l));
  assert.ok(errors.length >= marks, `${errors.length} errors without the marks, ${marks} marks:\n${r.stdout}`);
  t.diagnostic(`${marks} @ts-expect-error marks; without them tsc reports ${errors.length} errors`);
});

// Every value the package exports, and every public method and getter of its classes, is declared
// in bindings/index.d.ts: a function added to the bindings without its type fails here.
test('types: every export of bindings/index.js and every public member of Encoder, Pretrained and Tokenizer is declared in index.d.ts', async () => {
  const api = await import('../bindings/index.js');
  const dts = readFileSync(path.join(REPO, 'bindings', 'index.d.ts'), 'utf8');
  const declared = (name) => new RegExp(`^export (declare )?(function|class|const|let|type|interface|enum) ${name}\\b`, 'm').test(dts);
  const missing = Object.keys(api).filter((name) => !declared(name));
  const body = (cls) => {
    const start = dts.search(new RegExp(`^export (declare )?class ${cls}\\b`, 'm'));
    assert.ok(start >= 0, `class ${cls} is declared`);
    const end = dts.indexOf('\n}\n', start);
    return dts.slice(start, end);
  };
  for (const [cls, ctor] of [['Encoder', api.Encoder], ['Pretrained', api.Pretrained], ['Tokenizer', api.Tokenizer]]) {
    const text = body(cls);
    for (const name of Object.getOwnPropertyNames(ctor.prototype)) {
      if (name === 'constructor' || name.startsWith('_')) continue; // _name: internal, between the bindings' modules
      if (!new RegExp(`^\\s+(readonly |get |static |async )*\\*?${name}\\b[(<:?]`, 'm').test(text)) missing.push(`${cls}.${name}`);
    }
  }
  assert.deepEqual(missing, [], `declare these in bindings/index.d.ts: ${missing.join(', ')}`);
});
