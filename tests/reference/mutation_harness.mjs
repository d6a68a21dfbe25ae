// What a mutation script needs around its list of mutations (used by
// heads_mutations.mjs and the others): a linked git worktree only (it edits sources in place),
// every mutation's text in its file exactly once before anything runs, the
// mutant written, and the files restored, also on Ctrl-C.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { NODE_FLAGS } from '../../tools/node-flags.js';

export const sh = (cmd, args, opts = {}) => spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 28, ...opts });

/** Exits unless this checkout is a linked worktree (git worktree add), never the main one. */
export function requireLinkedWorktree(script, edits) {
  const gitDir = sh('git', ['rev-parse', '--absolute-git-dir']).stdout.trim();
  const commonDir = resolve(sh('git', ['rev-parse', '--git-common-dir']).stdout.trim());
  if (!gitDir || gitDir === commonDir) {
    console.error(`${script} edits ${edits}: run it in a linked worktree (git worktree add /tmp/mut HEAD), not in the main checkout`);
    process.exit(1);
  }
}

/**
 * The mutations `{id, file, edits: [[old, new], ...]}` ready to apply:
 * exits when an old text is not in its file exactly once. apply(m) writes
 * the mutant, restore() every file as it was; onInterrupt runs before a
 * Ctrl-C exit (after the restore).
 */
export function prepare(mutations, onInterrupt = () => {}) {
  const originals = new Map();
  for (const m of mutations) if (!originals.has(m.file)) originals.set(m.file, readFileSync(m.file, 'utf8'));
  for (const m of mutations) {
    for (const [from] of m.edits) {
      const n = originals.get(m.file).split(from).length - 1;
      if (n !== 1) {
        console.error(`${m.id}: '${from.slice(0, 70)}' occurs ${n} times in ${m.file}: update the mutation`);
        process.exit(1);
      }
    }
  }
  const restore = () => {
    for (const [f, s] of originals) writeFileSync(f, s);
  };
  const apply = (m) =>
    writeFileSync(
      m.file,
      m.edits.reduce((src, [from, to]) => src.replace(from, () => to), originals.get(m.file)),
    );
  process.on('SIGINT', () => {
    restore();
    onInterrupt();
    process.exit(130);
  });
  return { apply, restore };
}

/**
 * The whole run of a mutation script that rebuilds with ./build.sh: the
 * unmutated build and tests must pass; then each mutation (those named by
 * --only a,b), rebuilt when it edits C, must make `tests` fail. Prints a line
 * per mutation and exits 1 when one is missed.
 */
export function runMutations(mutations, { script, tests, env = process.env, timeout = 600_000, idWidth = 26 }) {
  requireLinkedWorktree(script, 'core/, plugins/ and bindings/');
  const onlyArg = process.argv.indexOf('--only');
  const only = onlyArg > 0 ? process.argv[onlyArg + 1].split(',') : null;
  const isC = (file) => /\.c$/.test(file);
  const build = () => {
    const r = sh('./build.sh', []);
    return r.status === 0 ? null : `${r.stdout}${r.stderr}`.trim().split('\n').slice(-10).join('\n');
  };
  const runTest = () => {
    const r = sh(process.execPath, [...NODE_FLAGS, '--test', '--test-reporter=tap', ...tests], { timeout, env });
    return { status: r.status, failed: [...r.stdout.matchAll(/^\s*not ok \d+ - (.*)$/gm)].map((m) => m[1]) };
  };
  const selected = mutations.filter((m) => !only || only.includes(m.id));
  const { apply, restore } = prepare(selected, build);
  let err = build();
  if (err) {
    console.error(`the unmutated build fails:\n${err}`);
    process.exit(1);
  }
  const base = runTest();
  if (base.status !== 0) {
    console.error(`the unmutated tests fail: ${base.failed.join('; ')}`);
    process.exit(1);
  }
  let missed = 0;
  try {
    for (const [i, m] of selected.entries()) {
      apply(m);
      err = isC(m.file) ? build() : null;
      const r = err ? { status: 0, failed: [] } : runTest();
      restore();
      if (isC(m.file) && !isC(selected[i + 1]?.file ?? '')) build(); // the next C mutant rebuilds anyway
      const caught = !err && r.status !== 0;
      if (!caught) missed++;
      console.log(
        `${err ? 'BUILD FAILED' : caught ? 'caught' : 'MISSED'}  ${m.id.padEnd(idWidth)} ${m.what}${caught ? `  <- ${r.failed.join(' | ').slice(0, 300)}` : ''}${err ? `\n${err}` : ''}`,
      );
    }
  } finally {
    restore();
  }
  console.log(`${selected.length - missed}/${selected.length} mutations caught`);
  process.exit(missed ? 1 : 0);
}
