// With lib esnext (Symbol.dispose, Disposable): `using` frees the encoder at the end of the block.
import { createEncoder } from 'swapformer';

export async function disposable(): Promise<void> {
  {
    using enc = await createEncoder({
      vocabSize: 10,
      dModel: 8,
      heads: 2,
      layers: 1,
      ffDim: 16,
      position: 'rope',
      norm: 'rmsnorm',
      normPlacement: 'pre',
      activation: 'gelu',
    });
    enc.forward([1, 2]);
    const d: Disposable = enc;
    void d;
  }
}
