// Entry point: checks that the browser can run SIMD WebAssembly before
// loading anything else, then starts the app. Kept free of modern syntax so
// that an old browser still gets the message instead of a blank page.

// (module (func (result v128) i32.const 0 i8x16.splat i8x16.popcnt)):
// validates only where the SIMD proposal is implemented.
var SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);

function wasmSupport() {
  if (typeof WebAssembly !== 'object' || typeof WebAssembly.validate !== 'function') {
    return 'This browser has no WebAssembly at all (or it is switched off).';
  }
  // ?nosimd simulates a browser without SIMD, to check this message.
  if (new URLSearchParams(location.search).has('nosimd')) {
    return 'SIMD support was switched off for this visit (?nosimd in the address).';
  }
  try {
    if (!WebAssembly.validate(SIMD_PROBE)) return 'Its WebAssembly lacks the SIMD extension (v128 instructions).';
  } catch (e) {
    return 'Its WebAssembly lacks the SIMD extension (v128 instructions).';
  }
  return '';
}

function showUnsupported(reason, title) {
  if (title) document.querySelector('#unsupported h2').textContent = title;
  document.getElementById('unsupported-reason').textContent = reason;
  document.getElementById('unsupported').hidden = false;
  document.getElementById('app').hidden = true;
  document.body.dataset.ready = 'true';
  document.body.dataset.unsupported = 'true';
}

var reason = wasmSupport();
if (reason) {
  showUnsupported(reason);
} else {
  import('./app.js')
    .then(function (m) {
      return m.start();
    })
    .catch(function (e) {
      showUnsupported('The demo failed to start: ' + (e && e.message ? e.message : e), 'swapformer could not start');
    });
}
