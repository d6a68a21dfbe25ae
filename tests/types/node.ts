// Node-only uses (@types/node, no DOM): a Buffer is a Uint8Array; the wasm from a file URL.
import { readFileSync } from 'node:fs';
import { createEncoder, loadModel, configure } from 'swapformer';

export async function node(): Promise<void> {
  configure({ wasmPaths: new URL('./node_modules/swapformer/dist/', import.meta.url) });
  const enc = await loadModel(readFileSync('model.safetensors'));
  const { data } = enc.forward([[1, 2], [3]]);
  process.stdout.write(`${data.length}\n`);
  const other = await createEncoder({ ...enc.config, norm: 'layernorm' }, { wasm: readFileSync('swapformer.wasm') });
  enc.dispose();
  other.dispose();
}
