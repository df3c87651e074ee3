//===- OmpDynamicSchedule.cpp - schedule(dynamic) for omp.wsloop ----------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/OpenMP/OpenMPDialect.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNOMPDYNAMICSCHEDULE
#include "attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
struct AttnOmpDynamicSchedulePass
    : public attn::impl::AttnOmpDynamicScheduleBase<
          AttnOmpDynamicSchedulePass> {
  void runOnOperation() override {
    getOperation()->walk([](omp::WsloopOp loop) {
      if (!loop.getScheduleKind())
        loop.setScheduleKind(omp::ClauseScheduleKind::Dynamic);
    });
  }
};
} // namespace
