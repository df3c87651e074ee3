//===- attn-opt.cpp - attn optimizer driver -------------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// An mlir-opt for the attn dialect: the attn dialect and passes, plus every
// upstream dialect and pass a user chains after them.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"
#include "attn/IR/AttnOps.h"
#include "attn/Pipelines/GpuPipeline.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::attn::registerAttnPasses();
  mlir::attn::registerAttnConversionPasses();
  mlir::attn::registerAttnPipelines();
  mlir::attn::registerAttnGpuPipeline();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::attn::registerGpuCodegen(registry);
  registry.insert<mlir::attn::AttnDialect>();

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "attn optimizer driver\n", registry));
}
