// Running bin/swapformer.js in a child process for the command-line tests
// (cli.test.js, cli-hardening.test.js): every run with a timeout, so a hang fails.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_FLAGS } from '../tools/node-flags.js';

export const REPO = fileURLToPath(new URL('..', import.meta.url));
export const BIN = path.join(REPO, 'bin/swapformer.js');
export const TIMEOUT = 30_000;

/**
 * Runs the CLI: {status, signal, stdout, stderr} (a timeout fails the test).
 * input: standard input's bytes (a pipe), or stdinFile: a file standard input
 * is redirected from (< file); nodeFlags: more flags for Node.
 */
export function cli(args, { input, stdinFile, cwd, bin = BIN, env, nodeFlags = [] } = {}) {
  return new Promise((resolve, reject) => {
    const fd = stdinFile === undefined ? null : openSync(stdinFile, 'r');
    const child = spawn(process.execPath, [...NODE_FLAGS, ...nodeFlags, bin, ...args], {
      cwd,
      env: { ...process.env, ...env },
      stdio: [fd ?? 'pipe', 'pipe', 'pipe'],
    });
    if (fd !== null) closeSync(fd);
    let stdout = '',
      stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`swapformer ${args.join(' ')}: no exit within ${TIMEOUT} ms`));
    }, TIMEOUT);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
    if (fd === null) {
      child.stdin.on('error', () => {}); // a run that exits before reading its input
      child.stdin.end(input ?? '');
    }
  });
}

/** One line on stderr, "swapformer: ...", naming what it should, with no stack trace or raw errno. */
export function oneLine(r, re) {
  const lines = r.stderr.trim().split('\n');
  assert.match(lines[0], /^swapformer: /, r.stderr);
  assert.match(lines[0], re, r.stderr);
  assert.doesNotMatch(r.stderr, /\n\s+at |ENOENT|EISDIR|Error:/, `no stack trace or raw error code: ${r.stderr}`);
}

/**
 * Runs embed and sends it `signal` (SIGKILL) once its progress shows `after`
 * records written (give it --progress-every); resolves when it has exited.
 */
export function killMidRun(args, after, signal = 'SIGKILL', { cwd, input } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...NODE_FLAGS, BIN, ...args], { cwd });
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no progress line within ${TIMEOUT} ms: ${stderr}`));
    }, TIMEOUT);
    child.stderr.on('data', (d) => {
      stderr += d;
      const m = [...stderr.matchAll(/embed: (\d+)[/ ]/g)].at(-1); // the last progress line
      if (m && Number(m[1]) >= after && !child.signalled) {
        child.signalled = true;
        child.kill(signal);
      }
    });
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stderr });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(input ?? '');
  });
}
