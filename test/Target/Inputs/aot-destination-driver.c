// Calls an ahead-of-time compiled attn spec with dynamic sizes through its C
// interface: its result is a destination the caller allocates (q, k, v, then
// the output, as rank-4 memref descriptors; attn-results-to-destinations).
// A call with the right sizes is compared with an f64 reference written from
// docs/semantics.md (GQA, causal with bottom-right alignment); a call whose
// output is one query row short must fail its run-time check
// (ATTN_STATUS_SHAPE_MISMATCH) and write nothing past the caller's buffer.
#include "aot-common.h"
#include "attn-c/Kernel.h"

int main(void) {
  fillInputs();
  Memref4 mq = wrap(&q[0][0][0][0], B, HQ, NQ, D);
  Memref4 mk = wrap(&k[0][0][0][0], B, HKV, NK, D);
  Memref4 mv = wrap(&v[0][0][0][0], B, HKV, NK, D);
  Memref4 mo = wrap(&out[0][0][0][0], B, HQ, NQ, D);
  attn_rt_clear_error();
  _mlir_ciface_aot(&mq, &mk, &mv, &mo);
  attn_status_t status = attn_rt_take_error();
  printf("call: %s\n", attn_status_name(status));

  double maxErr = maxError();
  printf("aot: max abs err %.3g: %s\n", maxErr,
         maxErr <= 1e-5 ? "ok" : "MISMATCH");

  // An output one query row short, at the start of a buffer of canaries:
  // the kernel refuses it, fills what the caller gave it with zeros, and
  // writes nothing past it.
  enum { SHORT = B * HQ * (NQ - 1) * D };
  static float guarded[B * HQ * NQ * D];
  for (size_t i = 0; i < sizeof guarded / 4; ++i)
    guarded[i] = 7.0f;
  Memref4 shortOut = wrap(guarded, B, HQ, NQ - 1, D);
  attn_rt_clear_error();
  _mlir_ciface_aot(&mq, &mk, &mv, &shortOut);
  status = attn_rt_take_error();
  printf("short output: %s: %s\n", attn_status_name(status), attn_last_error());
  int zeros = 1, canaries = 1;
  for (int i = 0; i < SHORT; ++i)
    zeros &= guarded[i] == 0.0f;
  for (size_t i = SHORT; i < sizeof guarded / 4; ++i)
    canaries &= guarded[i] == 7.0f;
  printf("short output: zeros %s, canaries %s\n", zeros ? "ok" : "MISMATCH",
         canaries ? "intact" : "OVERWRITTEN");
  return maxErr <= 1e-5 && status == ATTN_STATUS_SHAPE_MISMATCH && zeros &&
                 canaries
             ? 0
             : 1;
}
