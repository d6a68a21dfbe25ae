// The native backend's numbers on one kernel variant, in a process of its own (SWAPFORMER_ISA picks
// the variant; the native backend is required): every golden case against PyTorch within the golden
// tolerance, with 1 and 2 threads bit for bit; the q8 reference cases against the emulation of the
// variant's scheme (tests/reference/q8_reference.py: u7 or u8 activations). Prints one JSON line:
// {isa, q8, worst, cases}; exits 1 on the first failure. tests/native.test.js runs it once per
// variant this CPU runs; ./build.sh test runs it on the arm64 addon under qemu-user.
//
//   SWAPFORMER_ISA=avx2 node tests/native/variant-check.mjs
import { readFileSync } from 'node:fs';
import { loadModel, runtimeInfo } from '../../bindings/index.js';
import { golden, readFixture, assertClose, assertBitIdentical, goldenTolerance } from '../helpers.js';

process.env.SWAPFORMER_BACKEND = 'native';
const info = await runtimeInfo();
const ref = JSON.parse(readFileSync(new URL('../fixtures/q8/reference.json', import.meta.url), 'utf8'));
const scheme = info.q8Amax === 127 ? 'relaxed' : 'simd128'; // the emulation's u7 and u8 cases
let worst = 0,
  cases = 0;
for (const c of golden.cases) {
  const o = { ...(c.typeIds && { typeIds: c.typeIds }), ...(c.skipLayers && { skipLayers: c.skipLayers }) };
  const one = await loadModel(readFixture(c.file), { threads: 1 });
  const out = one.forward(c.ids, { ...o, outputAttentions: !!c.attentions });
  worst = Math.max(worst, assertClose(out.data, c.expected, goldenTolerance(c), c.name));
  if (c.logits) assertClose(out.logits.data, c.logits.data, goldenTolerance(c), `${c.name}: logits`);
  const two = await loadModel(readFixture(c.file), { threads: 2 });
  assertBitIdentical(two.forward(c.ids, o).data, out.data, `${c.name}: 2 threads`);
  one.dispose();
  two.dispose();
  cases++;
}
for (const c of ref.cases) {
  const e = await loadModel(readFixture(c.file), { dtype: 'q8', threads: 2 });
  const out = e.forward(c.ids);
  assertClose(out.data, c.builds[scheme].output, 1e-5, `${c.name}: q8`);
  if (c.builds[scheme].logits) assertClose(out.logits.data, c.builds[scheme].logits.data ?? c.builds[scheme].logits, 1e-5, `${c.name}: q8 logits`);
  e.dispose();
  cases++;
}
console.log(JSON.stringify({ isa: info.isa, q8: info.q8Kernel, worst, cases }));
