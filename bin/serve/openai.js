// OpenAI's embeddings API (openai/openai-node src/resources/embeddings.ts),
// as TEI serves it (router/src/http/server.rs openai_embed), on /v1/embeddings
// and /embeddings: input a string, strings, token ids or arrays of token ids;
// model and user accepted and ignored (one model is served); dimensions;
// encoding_format float or base64, the little-endian float32 bytes, which the
// openai SDK asks for when its caller names no format (lib/embeddings.ts) and
// decodes itself; always normalized, truncated as --auto-truncate says; usage
// counts the tokens embedded. Errors: {"error": {message, type, param, code}},
// the shape the SDK reads.
import { endianness } from 'node:os';
import { own, shape, optionalString } from './body.js';
import { embedInputs, dimensionsOf, embedTexts } from './tei.js';
import { record, checkBatchSize } from './infer.js';

const LITTLE = endianness() === 'LE';

/** A vector's float32 bytes, little-endian, in base64. */
function base64(v) {
  if (LITTLE) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
  const bytes = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) bytes.writeFloatLE(v[i], i * 4);
  return bytes.toString('base64');
}

/** POST /v1/embeddings. */
export async function embeddings(svc, body, call) {
  const { texts, single } = embedInputs(svc, body, 'input');
  const format = own(body, 'encoding_format') ?? 'float';
  if (format !== 'float' && format !== 'base64') throw shape('encoding_format', `must be "float" or "base64", got ${JSON.stringify(format)}`);
  optionalString(body, 'model');
  optionalString(body, 'user');
  const dimensions = dimensionsOf(svc, body);
  svc.metrics.count('te_request_count', { method: single ? 'single' : 'batch' });
  if (!single) checkBatchSize(svc, texts.length, 'input');
  const { results, meta } = await embedTexts(svc, call, texts, { normalize: true, dimensions, promptName: undefined, truncate: svc.options.autoTruncate });
  svc.metrics.count('te_request_success', { method: single ? 'single' : 'batch' });
  const data = results.map((v, index) => ({ object: 'embedding', embedding: format === 'base64' ? base64(v) : Array.from(v), index }));
  return {
    json: { object: 'list', data, model: svc.options.servedModelName, usage: { prompt_tokens: meta.tokens, total_tokens: meta.tokens } },
    headers: record(svc, meta),
  };
}
