//===- MBarrierTest.cpp - nvgpu.mbarrier.* on the emulator ----------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// Hopper's shared-memory barriers as the PTX ISA defines them (phases,
// parity, expected arrivals, transaction counts), and the errors the
// emulator reports instead of hanging: a wait that can never complete (a
// deadlock, with what the phase still expects), arrivals before init or
// beyond what the phase expects.
//
//===----------------------------------------------------------------------===//

#include "EmulatorTestUtil.h"

using namespace emutest;

namespace {

const char *kKernel = R"(
  func.func @k(%out: memref<32xi32>) {
$LAUNCH
    return
  }
)";

const char *kPrologue = R"(
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %c32 = arith.constant 32 : index
      %c1000 = arith.constant 1000 : index
      %false = arith.constant false
      %true = arith.constant true
      %bars = nvgpu.mbarrier.create -> !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
      %first = arith.cmpi eq, %tx, %c0 : index
)";

/// Runs $BODY in one block of 32 threads after the prologue (barriers
/// %bars: 2); thread t writes `out[t]` where the body stores it.
std::string runBody(const std::string &body, std::vector<int32_t> &out) {
  out.assign(32, -1);
  std::string text =
      subst(kKernel, {{"LAUNCH", launch(32, std::string(kPrologue) + body)}});
  return run(text, "k", {buf(out, {32})});
}

const char *kType =
    "!nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, "
    "num_barriers = 2>";

std::string withType(std::string body) { return subst(body, {{"T", kType}}); }

} // namespace

// 32 arrivals complete phase 0 (parity 0), then phase 1 (parity 1); a wait
// for the parity of the phase before the current one returns at once.
TEST(GPUEmulatorMBarrier, ArrivalsCompletePhasesInTurn) {
  std::vector<int32_t> out;
  std::string err = runBody(withType(R"(
      nvgpu.mbarrier.init %bars[%c0], %c32, predicate = %first : $T
      gpu.barrier
      %t0 = nvgpu.mbarrier.arrive %bars[%c0] : $T -> !nvgpu.mbarrier.token
      nvgpu.mbarrier.try_wait.parity %bars[%c0], %false, %c1000 : $T
      %done0 = nvgpu.mbarrier.test.wait %bars[%c0], %t0 : $T, !nvgpu.mbarrier.token
      %t1 = nvgpu.mbarrier.arrive %bars[%c0] : $T -> !nvgpu.mbarrier.token
      nvgpu.mbarrier.try_wait.parity %bars[%c0], %true, %c1000 : $T
      nvgpu.mbarrier.try_wait.parity %bars[%c0], %true, %c1000 : $T
      %d = arith.extui %done0 : i1 to i32
      memref.store %d, %out[%tx] : memref<32xi32>
)"),
                            out);
  ASSERT_EQ(err, "");
  for (int32_t v : out)
    EXPECT_EQ(v, 1);
}

// Half the threads arrive: the phase stays open (test.wait is false), and
// a blocking wait on it is a deadlock naming what the phase still expects.
TEST(GPUEmulatorMBarrier, MissingArrivalsAreADeadlock) {
  std::vector<int32_t> out;
  std::string err = runBody(withType(R"(
      nvgpu.mbarrier.init %bars[%c1], %c32, predicate = %first : $T
      gpu.barrier
      %low = arith.cmpi ult, %tx, %c16 : index
      scf.if %low {
        %t = nvgpu.mbarrier.arrive %bars[%c1] : $T -> !nvgpu.mbarrier.token
        %done = nvgpu.mbarrier.test.wait %bars[%c1], %t : $T, !nvgpu.mbarrier.token
        %d = arith.extui %done : i1 to i32
        memref.store %d, %out[%tx] : memref<32xi32>
      }
      nvgpu.mbarrier.try_wait.parity %bars[%c1], %false, %c1000 : $T
)"),
                            out);
  EXPECT_NE(err.find("deadlock"), std::string::npos) << err;
  EXPECT_NE(err.find("mbarrier 1 (phase 0, 16 of 32 arrivals pending, 0 "
                     "transaction bytes pending)"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("every thread of the block is waiting"), std::string::npos)
      << err;
  for (int t = 0; t < 16; ++t)
    EXPECT_EQ(out[t], 0);
}

// expect_tx announces bytes that no asynchronous copy delivers: the phase
// cannot complete although every thread arrived.
TEST(GPUEmulatorMBarrier, ExpectedBytesThatNeverCome) {
  std::vector<int32_t> out;
  std::string err = runBody(withType(R"(
      nvgpu.mbarrier.init %bars[%c0], %c32, predicate = %first : $T
      gpu.barrier
      %c4096 = arith.constant 4096 : index
      nvgpu.mbarrier.arrive.expect_tx %bars[%c0], %c4096, predicate = %first : $T
      %rest = arith.cmpi ne, %tx, %c0 : index
      scf.if %rest {
        %t = nvgpu.mbarrier.arrive %bars[%c0] : $T -> !nvgpu.mbarrier.token
      }
      nvgpu.mbarrier.try_wait.parity %bars[%c0], %false, %c1000 : $T
)"),
                            out);
  EXPECT_NE(err.find("deadlock"), std::string::npos) << err;
  EXPECT_NE(err.find("0 of 32 arrivals pending, 4096 transaction bytes "
                     "pending"),
            std::string::npos)
      << err;
}

// A wait inside a branch that the other threads would release from outside
// it: the emulator says why it cannot run that.
TEST(GPUEmulatorMBarrier, WaitInADivergentBranchIsNamed) {
  std::vector<int32_t> out;
  std::string err = runBody(withType(R"(
      nvgpu.mbarrier.init %bars[%c0], %c16, predicate = %first : $T
      gpu.barrier
      %low = arith.cmpi ult, %tx, %c16 : index
      scf.if %low {
        nvgpu.mbarrier.try_wait.parity %bars[%c0], %false, %c1000 : $T
      } else {
        %t = nvgpu.mbarrier.arrive %bars[%c0] : $T -> !nvgpu.mbarrier.token
      }
)"),
                            out);
  EXPECT_NE(err.find("deadlock"), std::string::npos) << err;
  EXPECT_NE(err.find("on another branch"), std::string::npos) << err;
}

TEST(GPUEmulatorMBarrier, ArrivalErrors) {
  std::vector<int32_t> out;
  // Before init.
  std::string err = runBody(withType(R"(
      %t = nvgpu.mbarrier.arrive %bars[%c0] : $T -> !nvgpu.mbarrier.token
)"),
                            out);
  EXPECT_NE(err.find("arrive on mbarrier 0 before nvgpu.mbarrier.init"),
            std::string::npos)
      << err;
  // A phase expecting 16 arrivals, and an arrival counting 32.
  err = runBody(withType(R"(
      nvgpu.mbarrier.init %bars[%c0], %c16, predicate = %first : $T
      gpu.barrier
      %t = nvgpu.mbarrier.arrive.nocomplete %bars[%c0], %c32 : $T -> !nvgpu.mbarrier.token
)"),
                out);
  EXPECT_NE(err.find("more arrivals than the phase expects"), std::string::npos)
      << err;
  // arrive.nocomplete that would complete the phase.
  err = runBody(withType(R"(
      nvgpu.mbarrier.init %bars[%c0], %c1, predicate = %first : $T
      gpu.barrier
      scf.if %first {
        %t = nvgpu.mbarrier.arrive.nocomplete %bars[%c0], %c1 : $T -> !nvgpu.mbarrier.token
      }
)"),
                out);
  EXPECT_NE(err.find("arrive.nocomplete would complete"), std::string::npos)
      << err;
  // An index outside the group.
  err = runBody(withType(R"(
      %c2 = arith.constant 2 : index
      nvgpu.mbarrier.init %bars[%c2], %c32, predicate = %first : $T
)"),
                out);
  EXPECT_NE(err.find("mbarrier index 2 out of the group's 2"),
            std::string::npos)
      << err;
}
