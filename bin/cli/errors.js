// How the command line reports what went wrong: one line on stderr, an exit
// code a script can test (README "Command line"):
//   0 done, 1 a runtime error (a file, a model, the network), 2 a usage
//   error (the command line itself), 130 interrupted (Ctrl-C: SIGINT), 143
//   terminated (SIGTERM).
import { UsageError, usage } from './args.js';

export const EXIT = Object.freeze({ OK: 0, ERROR: 1, USAGE: 2, INTERRUPTED: 130, TERMINATED: 143 });

/** A runtime error of the CLI's own (a bad input line, a partial file that does not match): exit 1, the message alone. */
export class CliError extends Error {
  constructor(message) {
    super(message);
    this.name = 'CliError';
  }
}

/** The run was stopped by a signal: the work so far is kept (exit 130 / 143). */
export class Interrupted extends Error {
  constructor(signal) {
    super(`interrupted (${signal})`);
    this.name = 'Interrupted';
    this.signal = signal;
  }
}

// Node's file-system errors, said in words (the path is printed with them)
const FILE_ERRORS = {
  ENOENT: 'no such file or directory', EISDIR: 'is a directory, not a file', ENOTDIR: 'a part of the path is not a directory',
  EACCES: 'permission denied', EPERM: 'operation not permitted', EEXIST: 'already exists', ENOSPC: 'no space left on device',
  EROFS: 'read-only file system', EMFILE: 'too many open files', ENAMETOOLONG: 'file name too long', ELOOP: 'too many symbolic links',
  EFBIG: 'file too large', EIO: 'input/output error', EBUSY: 'resource busy', EINVAL: 'invalid argument', EPIPE: 'broken pipe',
};

/** A file-system error as one line naming the path ("out.npy: no space left on device"), or null for any other error. */
export function fileErrorLine(e) {
  if (!e || typeof e.code !== 'string' || !Object.hasOwn(FILE_ERRORS, e.code)) return null;
  return `${e.path ?? e.dest ?? ''}${e.path || e.dest ? ': ' : ''}${FILE_ERRORS[e.code]}`;
}

/** Prints e on stderr as one line (usage errors with their usage line) and returns the exit code. */
export function report(e, { debug = false } = {}) {
  const say = (line) => process.stderr.write(`swapformer: ${line}\n`);
  if (e instanceof UsageError) {
    say(e.message);
    if (e.spec) process.stderr.write(`${usage(e.spec)}\n(swapformer help ${e.spec.name} lists the options)\n`);
    else process.stderr.write("(swapformer help lists the commands)\n");
    return EXIT.USAGE;
  }
  if (e instanceof Interrupted) {
    if (!e.reported) say(e.message); // embed reports its own, with what --resume continues
    return e.signal === 'SIGTERM' ? EXIT.TERMINATED : EXIT.INTERRUPTED;
  }
  if (e?.name === 'SwapformerError' && typeof e.code === 'string') say(`${e.code}: ${e.message}`); // (not imported: a usage error loads no library)
  else if (e instanceof CliError) say(e.message);
  else if (fileErrorLine(e)) say(fileErrorLine(e));
  else say(`${e?.message ?? String(e)}${debug && e?.stack ? `\n${e.stack}` : ''}`);
  return EXIT.ERROR;
}
