// The command line: the command named first, its arguments parsed against its
// declaration (args.js), errors printed as one line with an exit code (errors.js).
// Each command is a module loaded when it runs (its `spec` and `run`), so
// that `swapformer --help` loads nothing else.
import { existsSync } from 'node:fs';
import { UsageError, parse, help, wantsHelp, didYouMean } from './args.js';
import { EXIT, Interrupted, report } from './errors.js';
import { version, backendLine } from './io.js';
import { runtimeInfo } from '../../bindings/index.js';

const COMMANDS = {
  convert: { summary: 'write a Hugging Face checkpoint (or a converted file) as one swapformer model file', load: () => import('./convert.js') },
  embed: { summary: 'embed a corpus (.txt, .jsonl, .csv or stdin) into .jsonl, .npy, .arrow or .parquet', load: () => import('./embed.js') },
  info: { summary: 'what a model is: family, task, plugins, tokenizer, recipe, limits, sizes', load: () => import('./info.js') },
  serve: { summary: 'an HTTP server over a model: the TEI and OpenAI embedding APIs' },
  help: { summary: 'the help of a command: swapformer help <command>' },
};

const SERVE = new URL('../serve.js', import.meta.url);

export function mainUsage() {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return [
    'usage: swapformer <command> [arguments] [options]',
    '',
    'commands:',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width + 2)}${c.summary}`),
    '',
    "swapformer <command> --help (or swapformer help <command>) gives a command's arguments and options;",
    'swapformer --version prints the version.',
    '',
    'exit codes: 0 done, 1 runtime error, 2 usage error, 130 interrupted (SIGINT), 143 terminated (SIGTERM)',
  ].join('\n');
}

const unknownCommand = (name) => new UsageError(`unknown command '${name}'${didYouMean(name, Object.keys(COMMANDS))}`);

/** `swapformer serve ...`: bin/serve.js's main(argv) where the file exists (it returns the exit code). */
async function serve(argv) {
  if (!existsSync(SERVE)) {
    process.stderr.write('swapformer: serve is not available in this build\n');
    return EXIT.ERROR;
  }
  const { main } = await import(SERVE.href);
  return await main(argv);
}

/** Runs the command line argv (without node and the script): the exit code. */
export async function run(argv, { signal } = {}) {
  const debug = process.env.SWAPFORMER_DEBUG === '1';
  try {
    const [name, ...rest] = argv;
    if (name === undefined) {
      process.stderr.write(`${mainUsage()}\n`);
      return EXIT.USAGE;
    }
    if (name === '--version' || name === '-V' || name === 'version') {
      // the version, then what runs the core (scripts read the first line)
      process.stdout.write(`${version()}\nbackend: ${backendLine(await runtimeInfo())}\n`);
      return EXIT.OK;
    }
    if (name === '--help' || name === '-h') {
      process.stdout.write(`${mainUsage()}\n`);
      return EXIT.OK;
    }
    if (name === 'help') {
      if (rest.length === 0) {
        process.stdout.write(`${mainUsage()}\n`);
        return EXIT.OK;
      }
      if (rest.length > 1) throw new UsageError(`help takes one command, got '${rest.join("' '")}'`);
      if (rest[0] === 'serve') return await serve(['--help']);
      if (!Object.hasOwn(COMMANDS, rest[0]) || !COMMANDS[rest[0]].load) throw unknownCommand(rest[0]);
      process.stdout.write(`${help((await COMMANDS[rest[0]].load()).spec)}\n`);
      return EXIT.OK;
    }
    if (name.startsWith('-')) throw new UsageError(`'${name}' is not a command: the command comes first${didYouMean(name, ['--help', '--version'])}`);
    if (!Object.hasOwn(COMMANDS, name)) throw unknownCommand(name);
    if (name === 'serve') return await serve(rest);
    const command = await COMMANDS[name].load();
    if (wantsHelp(rest)) {
      process.stdout.write(`${help(command.spec)}\n`);
      return EXIT.OK;
    }
    return (await command.run(parse(rest, command.spec), { signal })) ?? EXIT.OK;
  } catch (e) {
    // stopped by a signal: whatever the call in progress threw (a download's NETWORK 'aborted'...), the exit code says interrupted
    return report(signal?.aborted && !(e instanceof UsageError) ? signal.reason : e, { debug });
  }
}

/** Ctrl-C / SIGTERM: an AbortSignal the commands watch (they stop cleanly, keeping the work done); twice: exit at once. */
export function interruptSignal() {
  const controller = new AbortController();
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.on(sig, () => {
      if (controller.signal.aborted) process.exit(sig === 'SIGTERM' ? EXIT.TERMINATED : EXIT.INTERRUPTED);
      controller.abort(new Interrupted(sig));
    });
  }
  return controller.signal;
}
