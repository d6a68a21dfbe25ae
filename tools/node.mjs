#!/usr/bin/env node
// node tools/node.mjs <node arguments...>: this Node again, with NODE_FLAGS in front
// (tools/node-flags.js), so that `npm test` and `npm run bench` run the relaxed-SIMD
// build on Node 20 and start at all on Node 22 and later. Exit code and signal pass through.
import { spawn } from 'node:child_process';
import { NODE_FLAGS } from './node-flags.js';

const child = spawn(process.execPath, [...NODE_FLAGS, ...process.argv.slice(2)], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  if (signal) process.kill(process.pid, signal);
  else process.exit(code ?? 1);
});
