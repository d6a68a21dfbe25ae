#!/usr/bin/env node
// swapformer's command line: convert, embed, info, serve (README "Command line").
//
//   npx swapformer <command> [arguments] [options]
//   npx swapformer help <command>
//
// The commands call the public API (loadPretrained, Pretrained.embedStream,
// ...) as any user does; bin/cli/ holds the parser, the readers and writers
// of corpora and embeddings, and the progress display.
import { run, interruptSignal } from './cli/main.js';

process.exitCode = await run(process.argv.slice(2), { signal: interruptSignal() });
