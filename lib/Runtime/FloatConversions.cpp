//===- FloatConversions.cpp - conversions the code generator calls -------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// LLVM lowers an f32 -> bf16 truncation to a call of `__truncsfbf2` on CPUs
// without a bf16 conversion instruction (AVX2, AVX-512 without BF16, Armv8.0
// without BF16). compiler-rt and libgcc from GCC 13 on define it; GCC 12's
// libgcc (Debian 12's) does not, so a bf16 kernel library built for such a
// CPU would not load. The runtime, which every kernel library links, defines
// it with compiler-rt's meaning: round to nearest even, NaN stays a quiet
// NaN of the same sign, overflow rounds to infinity. (JIT-compiled kernels
// find MLIR's in libmlir_float16_utils instead.)
//
// The result is a bf16 in the register where the target's calling
// convention returns half-precision values (x86-64: xmm0; AArch64: h0, the
// low half of s0), which is where LLVM expects a bfloat result. It travels
// in the low 16 bits of a float, as in MLIR's own definition: compilers
// without a 16-bit floating type (clang 14 on x86-64, which the fuzz build
// uses) return a float in the same register.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstring>

#define ATTN_RT_EXPORT __attribute__((visibility("default")))

#if defined(__x86_64__) || defined(__aarch64__)
extern "C" ATTN_RT_EXPORT float __truncsfbf2(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  uint32_t r;
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    r = (bits >> 16) | 0x40u; // a quiet NaN
  else
    r = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  float out;
  std::memcpy(&out, &r, sizeof(out));
  return out;
}
#endif
