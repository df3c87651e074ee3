//===- BarrierTest.cpp - named barriers and setmaxnreg on the emulator ----===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// What warp-specialized kernels use besides mbarriers: a producer warp that
// writes shared memory and arrives at a named barrier (bar.arrive), a
// consumer warp that waits at it (bar.sync) and reads; the errors (a wait
// that can never complete, counts that are not whole warps, the race the
// barrier prevents when it is left out); and setmaxnreg: warpgroup-aligned,
// monotonic per direction, within the SM's register file.
//
//===----------------------------------------------------------------------===//

#include "EmulatorTestUtil.h"

using namespace emutest;

namespace {

struct NamedCase {
  bool consumerFirst = false; // the consumer's branch runs first (lockstep)
  bool noBarrier = false;
  int count = 64;
};

/// Warp 0 writes s[i] = 3 i and arrives at barrier 1; warp 1 waits at it
/// and copies s to `out`.
std::string runNamed(const NamedCase &c, std::vector<int32_t> &out) {
  std::string producer = R"(
        %v = arith.index_cast %tx : index to i32
        %v3 = arith.muli %v, %c3 : i32
        memref.store %v3, %s[%tx] : memref<32xi32, #gpu.address_space<workgroup>>
$ARRIVE
)";
  std::string consumer = R"(
$SYNC
        %lane = arith.subi %tx, %c32 : index
        %x = memref.load %s[%lane] : memref<32xi32, #gpu.address_space<workgroup>>
        memref.store %x, %out[%lane] : memref<32xi32>
)";
  std::string body = R"(
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %c3 = arith.constant 3 : i32
      %id = arith.constant 1 : i32
      %n = arith.constant $COUNT : i32
      %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %s = memref.view %raw[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32xi32, #gpu.address_space<workgroup>>
      %w = arith.divui %tx, %c32 : index
      %first = arith.cmpi eq, %w, $FIRSTWARP : index
      scf.if %first {
$THEN
      } else {
$ELSE
      }
)";
  body = subst(body, {{"THEN", c.consumerFirst ? consumer : producer},
                      {"ELSE", c.consumerFirst ? producer : consumer},
                      {"FIRSTWARP", c.consumerFirst ? "%c1" : "%c0"}});
  body = subst(body,
               {{"ARRIVE", c.noBarrier ? ""
                                       : "        nvvm.barrier.arrive id = %id "
                                         "number_of_threads = %n"},
                {"SYNC", c.noBarrier ? ""
                                     : "        nvvm.barrier id = %id "
                                       "number_of_threads = %n"},
                {"COUNT", std::to_string(c.count)}});
  std::string text = "  func.func @k(%out: memref<32xi32>) {\n"
                     "    %shm = arith.constant 128 : i32\n" +
                     launch(64, body, "dynamic_shared_memory_size %shm") +
                     "    return\n  }\n";
  out.assign(32, -1);
  return run(text, "k", {buf(out, {32})});
}

/// A block of `threads`: warpgroup 0 runs `first`, the others `rest`.
std::string runRegs(int threads, const std::string &first,
                    const std::string &rest, int split = 128) {
  std::string body = R"(
      %csplit = arith.constant $SPLIT : index
      %isFirst = arith.cmpi ult, %tx, %csplit : index
      scf.if %isFirst {
$FIRST
      } else {
$REST
      }
)";
  body = subst(
      body,
      {{"FIRST", first}, {"REST", rest}, {"SPLIT", std::to_string(split)}});
  std::string text =
      "  func.func @k() {\n" + launch(threads, body) + "    return\n  }\n";
  return run(text, "k", {});
}

std::string setRegs(const std::string &action, int n) {
  return "        nvvm.setmaxregister " + action + " " + std::to_string(n) +
         "\n";
}

} // namespace

TEST(GPUEmulatorNamedBarrier, ProducerArrivesConsumerWaits) {
  std::vector<int32_t> out;
  ASSERT_EQ(runNamed(NamedCase(), out), "");
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(out[i], 3 * i) << i;
}

// Without the barrier the consumer reads what the producer wrote in the
// same interval: the race the barrier is there to prevent.
TEST(GPUEmulatorNamedBarrier, LeavingItOutIsARace) {
  std::vector<int32_t> out;
  NamedCase c;
  c.noBarrier = true;
  std::string err = runNamed(c, out);
  EXPECT_NE(err.find("wrote since the last barrier"), std::string::npos) << err;
}

TEST(GPUEmulatorNamedBarrier, AWaitThatCannotCompleteIsADeadlock) {
  std::vector<int32_t> out;
  NamedCase c;
  c.consumerFirst = true;
  std::string err = runNamed(c, out);
  EXPECT_NE(err.find("deadlock: named barrier 1 waits for 64 threads and 32 "
                     "have arrived"),
            std::string::npos)
      << err;
}

TEST(GPUEmulatorNamedBarrier, CountsMustBeWholeWarps) {
  std::vector<int32_t> out;
  NamedCase c;
  c.count = 48;
  std::string err = runNamed(c, out);
  EXPECT_NE(err.find("must be a positive multiple of 32"), std::string::npos)
      << err;
}

// FlashAttention-3's split: the producer warpgroup gives registers up, two
// consumer warpgroups take them (24 + 240 + 240 registers x 128 threads fit
// the 65536 of an SM).
TEST(GPUEmulatorSetMaxNReg, ProducerGivesConsumersTake) {
  EXPECT_EQ(runRegs(384, setRegs("decrease", 24), setRegs("increase", 240)),
            "");
}

TEST(GPUEmulatorSetMaxNReg, OverTheRegisterFileIsADeadlock) {
  std::string err =
      runRegs(384, setRegs("decrease", 40), setRegs("increase", 240));
  EXPECT_NE(err.find("(40 + 240 + 240) x 128 threads = 66560 exceed the SM's "
                     "65536 registers"),
            std::string::npos)
      << err;
}

TEST(GPUEmulatorSetMaxNReg, PartOfAWarpgroupIsReported) {
  std::string err =
      runRegs(256, setRegs("decrease", 24), setRegs("increase", 240), 64);
  EXPECT_NE(err.find("executed by 64 of the 128 threads of warpgroup 0"),
            std::string::npos)
      << err;
}

TEST(GPUEmulatorSetMaxNReg, AnIncreaseThatLowersIsReported) {
  std::string err =
      runRegs(256, setRegs("decrease", 40) + setRegs("increase", 32),
              setRegs("increase", 200));
  EXPECT_NE(err.find("setmaxnreg.inc to 32 registers from 40"),
            std::string::npos)
      << err;
}
