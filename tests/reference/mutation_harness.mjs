// What a mutation script needs around its list of mutations (used by
// heads_mutations.mjs): a linked git worktree only (it edits sources in place),
// every mutation's text in its file exactly once before anything runs, the
// mutant written, and the files restored, also on Ctrl-C.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

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
      if (n !== 1) { console.error(`${m.id}: '${from.slice(0, 70)}' occurs ${n} times in ${m.file}: update the mutation`); process.exit(1); }
    }
  }
  const restore = () => { for (const [f, s] of originals) writeFileSync(f, s); };
  const apply = (m) => writeFileSync(m.file, m.edits.reduce((src, [from, to]) => src.replace(from, () => to), originals.get(m.file)));
  process.on('SIGINT', () => { restore(); onInterrupt(); process.exit(130); });
  return { apply, restore };
}
