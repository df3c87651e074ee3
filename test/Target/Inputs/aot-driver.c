// Calls an ahead-of-time compiled attn spec through its C interface with
// out-params (q, k, v, then the output, as rank-4 memref descriptors) and
// compares the output with an f64 reference written from
// docs/semantics.md: GQA, causal with bottom-right alignment.
#include "aot-common.h"

int main(void) {
  fillInputs();
  Memref4 mq = wrap(&q[0][0][0][0], B, HQ, NQ, D);
  Memref4 mk = wrap(&k[0][0][0][0], B, HKV, NK, D);
  Memref4 mv = wrap(&v[0][0][0][0], B, HKV, NK, D);
  Memref4 mo = wrap(&out[0][0][0][0], B, HQ, NQ, D);
  _mlir_ciface_aot(&mq, &mk, &mv, &mo);

  double maxErr = maxError();
  printf("aot: max abs err %.3g: %s\n", maxErr,
         maxErr <= 1e-5 ? "ok" : "MISMATCH");
  return maxErr <= 1e-5 ? 0 : 1;
}
