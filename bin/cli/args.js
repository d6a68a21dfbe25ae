// The command line's argument parser: each command declares its arguments
// and options (a plain object, `spec`), and parse() reads argv against it;
// help() prints the same declaration. Hand-written because the package has no
// runtime dependency: `npm install swapformer` brings the library alone, and
// the CLI must not pull a parser into every user's tree.
//
//   spec = {name, summary, args: [{name, help, optional?}], options: [{name,
//           short?, value? (a placeholder: the option takes a value), choices?,
//           int?: {min}, negatable? (--no-name), default?, help}], details?, examples?}
//   parse(argv, spec) -> {args: {name: value}, options: {camelName: value}}

/** A mistake in the command line: printed with the usage, exit code 2. */
export class UsageError extends Error {
  constructor(message, spec) {
    super(message);
    this.name = 'UsageError';
    this.spec = spec;
  }
}

import { distance } from '../../bindings/utils/options.js';

const camel = (s) => s.replace(/-([a-z])/g, (_, c) => c.toUpperCase());

/** The candidate closest to `word` when it is close enough to be a slip (a third of its length, at least 1), else null. */
export function closest(word, candidates) {
  let best = null, bestD = Infinity;
  for (const c of candidates) {
    const dist = distance(word, c);
    if (dist < bestD || (dist === bestD && c.startsWith(word))) [best, bestD] = [c, dist];
  }
  return best !== null && (bestD <= Math.max(1, Math.floor(word.length / 3)) || best.startsWith(word)) ? best : null;
}

/** " (did you mean X?)" or "". */
export const didYouMean = (word, candidates, show = (c) => c) => {
  const c = closest(word, candidates);
  return c === null ? '' : ` (did you mean ${show(c)}?)`;
};

/** An option's value read from its text: choices, integers, or the text itself. */
function readValue(opt, text, spec) {
  const flag = `--${opt.name}`;
  if (opt.choices) {
    if (!opt.choices.includes(text)) throw new UsageError(`${flag} must be one of ${opt.choices.join(', ')}, got '${text}'${didYouMean(text, opt.choices)}`, spec);
    return text;
  }
  if (opt.int) {
    const min = opt.int.min ?? 0;
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text)) || Number(text) < min) throw new UsageError(`${flag} must be an integer >= ${min}, got '${text}'`, spec);
    return Number(text);
  }
  if (text === '') throw new UsageError(`${flag} needs a value`, spec);
  return text;
}

/** Reads argv against spec: {args, options}; a UsageError naming what is wrong. */
export function parse(argv, spec) {
  const options = {}, positional = [], seen = new Set();
  const byName = new Map(), byShort = new Map();
  for (const o of spec.options ?? []) {
    byName.set(o.name, o);
    if (o.short) byShort.set(o.short, o);
    if (o.default !== undefined) options[camel(o.name)] = o.default;
  }
  const names = [...byName.values()].flatMap((o) => [`--${o.name}`, ...(o.negatable ? [`--no-${o.name}`] : [])]);
  let onlyPositional = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (onlyPositional || a === '-' || !a.startsWith('-')) {
      positional.push(a);
      continue;
    }
    if (a === '--') {
      onlyPositional = true;
      continue;
    }
    let opt, inline, negated = false, flag;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      flag = eq < 0 ? a : a.slice(0, eq);
      inline = eq < 0 ? undefined : a.slice(eq + 1);
      const name = flag.slice(2);
      opt = byName.get(name);
      if (!opt && name.startsWith('no-') && byName.get(name.slice(3))?.negatable) [opt, negated] = [byName.get(name.slice(3)), true];
    } else {
      flag = a.slice(0, 2);
      inline = a.length > 2 ? a.slice(2) : undefined;
      opt = byShort.get(a.slice(1, 2));
    }
    if (!opt) throw new UsageError(`unknown option '${flag}' for ${spec.name}${didYouMean(flag, names)}`, spec);
    const key = camel(opt.name);
    if (seen.has(key)) throw new UsageError(`--${opt.name} is given twice`, spec);
    seen.add(key);
    if (!opt.value) {
      if (inline !== undefined) throw new UsageError(`${flag} takes no value, got '${a}'`, spec);
      options[key] = !negated;
      continue;
    }
    if (negated) throw new UsageError(`unknown option '${flag}' for ${spec.name}`, spec);
    let text = inline;
    if (text === undefined) {
      if (i + 1 >= argv.length) throw new UsageError(`${flag} needs a value (${opt.value})`, spec);
      text = argv[++i];
    }
    options[key] = readValue(opt, text, spec);
  }
  const declared = spec.args ?? [];
  const required = declared.filter((d) => !d.optional);
  if (positional.length < required.length) {
    const missing = required.slice(positional.length).map((d) => `<${d.name}>`).join(' ');
    throw new UsageError(`${spec.name} needs ${missing}`, spec);
  }
  if (positional.length > declared.length) {
    const extra = positional.slice(declared.length);
    const hint = extra.length === 1 ? didYouMean(extra[0], names) : '';
    throw new UsageError(`${spec.name} takes ${declared.length} argument${declared.length === 1 ? '' : 's'}, got ${positional.length}: '${extra.join("' '")}' is extra${hint}`, spec);
  }
  const args = {};
  declared.forEach((d, k) => { args[camel(d.name.replace(/\.[a-z]+$/, ''))] = positional[k]; });
  for (const o of spec.options ?? []) if (o.required && options[camel(o.name)] === undefined) throw new UsageError(`${spec.name} needs --${o.name} <${o.value}>`, spec);
  return { args, options };
}

/** The usage line of a command. */
export function usage(spec) {
  const args = (spec.args ?? []).map((d) => (d.optional ? `[<${d.name}>]` : `<${d.name}>`));
  const required = (spec.options ?? []).filter((o) => o.required).map((o) => `${o.short ? `-${o.short}` : `--${o.name}`} <${o.value}>`);
  return `usage: swapformer ${spec.name} ${[...args, ...required].join(' ')}${(spec.options ?? []).some((o) => !o.required) ? ' [options]' : ''}`;
}

/** Lines of two columns, the first padded to the widest (wrapped help continues under the second). */
function columns(rows, indent = 2) {
  const width = Math.min(28, Math.max(...rows.map(([a]) => a.length)));
  return rows.map(([a, b]) => {
    const pad = ' '.repeat(indent);
    const lines = b.split('\n');
    const head = a.length > width ? `${pad}${a}\n${pad}${' '.repeat(width + 2)}` : `${pad}${a.padEnd(width + 2)}`;
    return head + lines.join(`\n${pad}${' '.repeat(width + 2)}`);
  }).join('\n');
}

/** The --help text of a command. */
export function help(spec) {
  const parts = [usage(spec), '', spec.summary];
  if (spec.args?.length) parts.push('', 'arguments:', columns(spec.args.map((d) => [`<${d.name}>`, d.help])));
  const opts = [...(spec.options ?? []), { name: 'help', short: 'h', help: 'this help' }];
  parts.push('', 'options:', columns(opts.map((o) => {
    const flag = `${o.short ? `-${o.short}, ` : ''}--${o.negatable ? `[no-]${o.name}` : o.name}${o.value ? ` ${o.value}` : ''}`;
    return [flag, `${o.help}${o.default !== undefined && o.value ? ` (default: ${o.default})` : ''}`];
  })));
  if (spec.details) parts.push('', spec.details);
  if (spec.examples?.length) parts.push('', 'examples:', ...spec.examples.map((e) => `  ${e}`));
  return parts.join('\n');
}

/** Whether argv asks for help (-h or --help before any "--"). */
export const wantsHelp = (argv) => {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '-h' || a === '--help') return true;
  }
  return false;
};
