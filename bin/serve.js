#!/usr/bin/env node
// swapformer serve: a Hugging Face encoder behind Text Embeddings Inference's
// HTTP API and OpenAI's embeddings API (README "Server").
//
//   swapformer serve <model> [--port 8080] [--host 127.0.0.1] [--threads N] [--dtype f32|q8] ...
//
// main(argv) parses its own flags (argv: what follows `serve`; a leading
// 'serve' is skipped), loads the model, listens, and on SIGTERM or SIGINT
// drains (no new connection, every request received answered) and resolves
// to the exit code: 0 after a full drain, 1 if --shutdown-timeout cut it
// short or the model did not load, 2 for bad flags (reported as the other
// commands report theirs: bin/cli/args.js, errors.js). The HTTP layer is
// bin/serve/ (router.js over engine.js, the one file that calls the library).
import { readFileSync, realpathSync } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { loadPretrained, SwapformerError } from '../bindings/index.js';
import { UsageError, didYouMean } from './cli/args.js';
import { report } from './cli/errors.js';
import { downloadProgress } from './cli/io.js';
import { Engine } from './serve/engine.js';
import { createServer } from './serve/router.js';

export const USAGE = `usage: swapformer serve <model> [options]

  <model>   a Hugging Face model folder, its URL, a Hub id (owner/name),
            or a file written by \`swapformer convert\`

  --host H                       address to listen on (default 127.0.0.1)
  --port N                       port (default 8080; 0: any free port)
  --threads N                    threads per forward pass (default: the physical cores natively, else at most 8)
  --dtype f32|q8                 weights as loaded (default: the file's)
  --max-length N                 longest input in tokens (default: the model's)
  --revision R, --hub-url URL    for a Hub id
  --max-concurrent-requests N    inputs in flight before 429 (default 512)
  --max-batch-tokens N           padded tokens per batch: longest x inputs (default 16384)
  --max-batch-requests N         inputs per batch (default: no limit; 1: no batching)
  --max-client-batch-size N      inputs per request before 422 (default 32)
  --auto-truncate [true|false]   truncate inputs past the longest (default true; false: 422)
  --payload-limit BYTES          request body limit before 413 (default 2000000)
  --body-timeout MS              time for a request's headers and body before 408 (default 10000)
  --shutdown-timeout MS          time to finish in-flight requests on SIGTERM (default 30000)
  --api-key KEY                  require Authorization: Bearer KEY (or SWAPFORMER_API_KEY;
                                 an empty key is refused); /health and /metrics stay public
  --served-model-name NAME       the model name in answers (default: <model>)
  -q, --quiet                    no loading line, download progress or shutdown lines
                                 (the line saying where it listens stays)

Routes: POST /embed /predict /rerank /tokenize /decode /v1/embeddings /embeddings,
GET (and HEAD) /info /health /metrics.`;

/** What the command line's reports need (args.js's usage line: "usage: swapformer serve <model> [options]"). */
const SPEC = { name: 'serve', args: [{ name: 'model' }], options: [{ name: 'port', value: 'N' }] };

const DEFAULTS = {
  host: '127.0.0.1',
  port: 8080,
  maxConcurrentRequests: 512,
  maxBatchTokens: 16384,
  maxBatchRequests: Infinity,
  maxClientBatchSize: 32,
  autoTruncate: true,
  payloadLimit: 2_000_000,
  bodyTimeout: 10_000,
  shutdownTimeout: 30_000,
};

/** --flag -> [option, reader]. */
const FLAGS = {
  '--host': ['host', String],
  '--port': ['port', (v) => count(v, '--port', 0, 65535)],
  '--threads': ['threads', (v) => count(v, '--threads', 1, 64)],
  '--dtype': ['dtype', (v) => oneOf(v, '--dtype', ['f32', 'q8'])],
  '--max-length': ['maxLength', (v) => count(v, '--max-length', 2)],
  '--revision': ['revision', String],
  '--hub-url': ['hubUrl', String],
  '--max-concurrent-requests': ['maxConcurrentRequests', (v) => count(v, '--max-concurrent-requests', 1)],
  '--max-batch-tokens': ['maxBatchTokens', (v) => count(v, '--max-batch-tokens', 1)],
  '--max-batch-requests': ['maxBatchRequests', (v) => count(v, '--max-batch-requests', 1)],
  '--max-client-batch-size': ['maxClientBatchSize', (v) => count(v, '--max-client-batch-size', 1)],
  '--payload-limit': ['payloadLimit', (v) => count(v, '--payload-limit', 1)],
  '--body-timeout': ['bodyTimeout', (v) => count(v, '--body-timeout', 1)],
  '--shutdown-timeout': ['shutdownTimeout', (v) => count(v, '--shutdown-timeout', 0)],
  '--api-key': ['apiKey', (v) => apiKey(v, '--api-key')],
  '--served-model-name': ['servedModelName', String],
};
const NAMES = [...Object.keys(FLAGS), '--auto-truncate', '--quiet', '--help'];

const usageError = (message) => new UsageError(message, SPEC);

function count(v, flag, min, max = Number.MAX_SAFE_INTEGER) {
  const n = /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw usageError(`${flag} must be an integer in [${min}, ${max}], got '${v}'`);
  return n;
}

function oneOf(v, flag, values) {
  if (!values.includes(v)) throw usageError(`${flag} must be one of ${values.join(', ')}, got '${v}'${didYouMean(v, values)}`);
  return v;
}

/**
 * An API key (source: the flag or the variable that gave it). An empty one
 * would turn the check off, and one with a space at an end or a character
 * outside printable ASCII could never be sent (HTTP trims a header's value):
 * both are usage errors, the server never starts open or locked by mistake.
 */
function apiKey(v, source) {
  const unset = source === '--api-key' ? 'leave --api-key out' : `unset ${source}`;
  if (v.trim() === '') throw usageError(`${source} is empty: give a key (or ${unset} to serve without one)`);
  if (!/^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(v))
    throw usageError(`${source} must be printable ASCII without a space at either end: a client could not send it in a header`);
  return v;
}

/** The options of argv (throws a UsageError naming the flag); env: SWAPFORMER_API_KEY. */
export function parseArgs(argv, env = process.env) {
  const args = argv[0] === 'serve' ? argv.slice(1) : argv;
  const o = { ...DEFAULTS, quiet: false };
  const positional = [],
    seen = new Set();
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--help' || a === '-h') return { help: true };
    const [flag, inline] = a.startsWith('--') && a.includes('=') ? a.split(/=(.*)/s, 2) : [a, undefined];
    if (a.startsWith('-') && a !== '-') {
      const name = flag === '-q' ? '--quiet' : flag;
      if (seen.has(name)) throw usageError(`${name} is given twice`);
      seen.add(name);
    }
    if (flag === '--auto-truncate') {
      // TEI's: a bare flag is true
      const v = inline ?? (['true', 'false'].includes(args[i + 1]) ? args[++i] : 'true');
      o.autoTruncate = oneOf(v, '--auto-truncate', ['true', 'false']) === 'true';
    } else if (flag === '-q' || flag === '--quiet') {
      if (inline !== undefined) throw usageError(`${flag} takes no value, got '${a}'`);
      o.quiet = true;
    } else if (Object.hasOwn(FLAGS, flag)) {
      const v = inline ?? args[++i];
      if (v === undefined) throw usageError(`${flag} needs a value`);
      const [key, read] = FLAGS[flag];
      o[key] = read(v);
    } else if (a.startsWith('-') && a !== '-') throw usageError(`unknown option '${flag}' for serve${didYouMean(flag, NAMES)}`);
    else positional.push(a);
  }
  if (positional.length === 0) throw usageError('serve needs <model>');
  if (positional.length > 1) {
    const extra = positional.slice(1);
    throw usageError(
      `serve takes 1 argument, got ${positional.length}: '${extra.join("' '")}' is extra${extra.length === 1 ? didYouMean(extra[0], NAMES) : ''}`,
    );
  }
  if (o.apiKey === undefined && env.SWAPFORMER_API_KEY !== undefined) o.apiKey = apiKey(env.SWAPFORMER_API_KEY, 'SWAPFORMER_API_KEY');
  o.model = positional[0];
  o.servedModelName ??= o.model;
  return o;
}

const VERSION = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

/**
 * The model, with its longest input within --max-batch-tokens as TEI keeps it
 * (router/src/lib.rs): longer than a batch, it is cut to one batch with
 * --auto-truncate, else the server does not start.
 */
async function load(o) {
  const options = { threads: o.threads, dtype: o.dtype, maxLength: o.maxLength, revision: o.revision, hubUrl: o.hubUrl };
  for (const k of Object.keys(options)) if (options[k] === undefined) delete options[k];
  const downloads = o.quiet ? null : downloadProgress();
  const model = await loadPretrained(o.model, downloads ? { ...options, onProgress: downloads.update } : options);
  downloads?.done();
  if (model.maxLength <= o.maxBatchTokens) return model;
  const longest = model.maxLength;
  model.dispose();
  if (!o.autoTruncate)
    throw new Error(`the longest input (${longest} tokens) exceeds --max-batch-tokens ${o.maxBatchTokens}: raise --max-batch-tokens, or allow --auto-truncate`);
  return loadPretrained(o.model, { ...options, maxLength: o.maxBatchTokens });
}

const listen = (server, port, host) =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address());
    });
  });

/** listen's error, with what to try. */
function listenError(e, host, port) {
  const hint =
    e.code === 'EADDRINUSE'
      ? `port ${port} is in use: try another --port, or --port 0 for any free port`
      : e.code === 'EACCES' && port < 1024
        ? `ports below 1024 need privileges: try --port ${port + 8000}`
        : e.code === 'EADDRNOTAVAIL'
          ? `${host} is not an address of this machine: check --host`
          : e.message;
  return new Error(`cannot listen on ${host}:${port}: ${hint}`, { cause: e });
}

/** Fails early, before the model loads (a download may take minutes), when the port cannot be listened on. */
async function checkPort(host, port) {
  if (port === 0) return;
  const probe = net.createServer();
  try {
    await listen(probe, port, host);
  } catch (e) {
    throw listenError(e, host, port);
  }
  await new Promise((resolve) => probe.close(resolve));
}

/** Resolves on the first SIGTERM or SIGINT (the handlers removed after). */
function shutdownSignal() {
  return new Promise((resolve) => {
    const on = (signal) => {
      process.off('SIGTERM', on);
      process.off('SIGINT', on);
      resolve(signal);
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
  });
}

/**
 * Loads the model and listens (options: parseArgs's): {url, server, svc,
 * engine, model, stop(timeoutMs) -> whether every request was answered}.
 * Used by main and, in-process, by tests/serve.test.js.
 */
export async function startServer(o) {
  await checkPort(o.host, o.port);
  let model, server, svc, drain;
  try {
    model = await load(o);
    const engine = new Engine(model, { maxInputLength: model.maxLength, autoTruncate: o.autoTruncate });
    await engine.warmUp();
    ({ server, svc, drain } = createServer(engine, { ...o, modelId: o.model, version: VERSION }));
  } catch (e) {
    model?.dispose();
    throw e;
  }
  const { engine } = svc;
  let address;
  try {
    address = await listen(server, o.port, o.host);
  } catch (e) {
    model.dispose();
    throw listenError(e, o.host, o.port);
  }
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const stop = async (timeoutMs = o.shutdownTimeout) => {
    const answered = await drain(timeoutMs);
    model.dispose();
    return answered;
  };
  return { url: `http://${host}:${address.port}`, server, svc, engine, model, stop };
}

export async function main(argv = process.argv.slice(2)) {
  let o;
  try {
    o = parseArgs(argv);
  } catch (e) {
    return report(e); // one line, the usage line and where the options are listed: exit 2
  }
  if (o.help) {
    console.log(USAGE);
    return 0;
  }
  const say = (line) => {
    if (!o.quiet) console.log(`swapformer serve: ${line}`);
  };
  if (!o.quiet) console.error(`swapformer serve: loading ${o.model}`);
  let s;
  try {
    s = await startServer(o);
  } catch (e) {
    console.error(`swapformer serve: ${o.model}: ${e instanceof SwapformerError ? `${e.code}: ` : ''}${e.message}`);
    return 1;
  }
  const stop = shutdownSignal();
  const { kind, dtype, maxInputLength } = s.engine;
  console.log(`swapformer serve: ${o.quiet ? '' : `${o.model} (${kind}, ${dtype}, max input ${maxInputLength} tokens) `}listening on ${s.url}`);
  const signal = await stop;
  say(`${signal}: draining`);
  const answered = await s.stop(o.shutdownTimeout);
  if (answered) say('every request answered; stopped');
  else console.error(`swapformer serve: --shutdown-timeout ${o.shutdownTimeout} ms passed: connections cut; stopped`);
  return answered ? 0 : 1;
}

/** Whether this file is the process's script (node bin/serve.js), not a module imported by the CLI. */
const isScript = () => {
  try {
    return !!process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
};
if (isScript()) process.exitCode = await main();
