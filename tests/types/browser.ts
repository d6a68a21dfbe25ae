// Browser-only uses (lib DOM): a fetched model, configure with compiled modules.
import { configure, loadModel } from 'swapformer';

export async function browser(): Promise<void> {
  const [simd, relaxed] = await Promise.all([
    WebAssembly.compileStreaming(fetch('/assets/swapformer.wasm')),
    WebAssembly.compileStreaming(fetch('/assets/swapformer-relaxed.wasm')),
  ]);
  configure({ wasmPaths: { simd, relaxed } });
  configure({ wasmPaths: new URL('./assets/', location.href) });
  const enc = await loadModel(await (await fetch('/model.safetensors')).arrayBuffer());
  document.body.textContent = String(enc.forward([1, 2, 3]).shape);
  enc.dispose();
}
