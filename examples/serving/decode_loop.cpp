//===- decode_loop.cpp - a decode loop over a paged KV cache --------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// A serving-style decode loop: compiles paged_decode_step.mlir (append one
// token per sequence to the paged cache, then attend) for a device (the CPU,
// the GPU or the GPU emulator, through the Runner) and runs it step after
// step, the way a serving engine drives a model layer:
//
//   - the page pool starts shuffled: sequences get their pages from a free
//     list in random order, and a new page only when a sequence's length
//     reaches a page boundary;
//   - the sequences start at different lengths (empty, one token short of a
//     page boundary, exactly on one, in the middle of a page);
//   - after every step the output is compared with the independent f64
//     reference run on the dense history of each sequence (every K and V row
//     appended so far, kept here in plain arrays).
//
//   attn-paged-decode-loop SPEC [--device=cpu|gpu|gpu-emulate]
//                          [--form=naive|fused|decode] [--steps=N]
//
// Prints one line per step; exits 1 at the first step that does not match.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/HostTensor.h"
#include "attn/Execution/Runner.h"
#include "attn/IR/AttnDialect.h"
#include "attn/Reference/Reference.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace mlir;
using namespace mlir::attn;
namespace cl = llvm::cl;

static cl::opt<std::string> specPath(cl::Positional, cl::Required,
                                     cl::desc("<paged_decode_step.mlir>"));
static cl::opt<std::string> form("form", cl::init("decode"),
                                 cl::desc("naive, fused or decode"));
static cl::opt<int> steps("steps", cl::init(24), cl::desc("decode steps"));
static cl::opt<std::string>
    device("device", cl::init("cpu"),
           cl::desc("cpu, gpu or gpu-emulate (the GPU form: --form is "
                    "the CPU's)"));

namespace {
// The sizes of paged_decode_step.mlir.
constexpr int64_t B = 4, Hq = 8, Hkv = 2, D = 64, S = 16, Pages = 64,
                  MaxPages = 16;

/// Offset of (page, head, row, d) in a [Pages, Hkv, S, D] pool.
int64_t poolAt(int64_t page, int64_t h, int64_t row, int64_t d) {
  return ((page * Hkv + h) * S + row) * D + d;
}
} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "paged KV cache decode loop\n");
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<AttnDialect>();
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(specPath.getValue(), &ctx);
  if (!module)
    return 1;
  RunnerOptions opts;
  auto dev = parseRunDevice(device);
  if (!dev) {
    llvm::errs() << "attn-paged-decode-loop: "
                 << llvm::toString(dev.takeError()) << "\n";
    return 1;
  }
  opts.device = *dev;
  if (llvm::Error err = opts.cpu.setForm(form)) {
    llvm::errs() << "attn-paged-decode-loop: " << llvm::toString(std::move(err))
                 << "\n";
    return 1;
  }
  opts.cpu.splits = 3;
  opts.gpu.splits = 3;
  auto runner = Runner::create(*module, "step", opts);
  if (!runner) {
    llvm::errs() << "compile: " << llvm::toString(runner.takeError()) << "\n";
    return 1;
  }
  // The GPU forms stage f32 inputs as bf16: their error is bf16's.
  double tolerance = *dev == RunDevice::Cpu ? 1e-4 : 2e-2;

  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> uni(-1, 1);
  HostTensor kPool, vPool, table, lens, q, kn, vn;
  kPool.resize(ElementKind::F32, {Pages, Hkv, S, D});
  vPool.resize(ElementKind::F32, {Pages, Hkv, S, D});
  table.resize(ElementKind::I32, {B, MaxPages});
  lens.resize(ElementKind::I32, {B});
  q.resize(ElementKind::F32, {B, Hq, 1, D});
  kn.resize(ElementKind::F32, {B, Hkv, 1, D});
  vn.resize(ElementKind::F32, {B, Hkv, 1, D});
  // Garbage everywhere the sequences do not own: never read.
  for (HostTensor *pool : {&kPool, &vPool})
    for (int64_t i = 0; i < pool->numElements(); ++i)
      pool->set(i, 1e30);
  for (int64_t i = 0; i < table.numElements(); ++i)
    table.set(i, -1);
  std::vector<int64_t> freePages(Pages);
  std::iota(freePages.begin(), freePages.end(), 0);
  std::shuffle(freePages.begin(), freePages.end(), rng);

  // Dense history per sequence: [b][h][token][d].
  std::vector<std::vector<std::vector<double>>> kHist(B), vHist(B);
  for (int64_t b = 0; b < B; ++b)
    kHist[b].assign(Hkv, {}), vHist[b].assign(Hkv, {});
  auto appendHost = [&](int64_t b, const std::vector<double> &k,
                        const std::vector<double> &v) {
    int64_t pos = lens.getInt(b);
    if (pos % S == 0) { // a new page from the free list
      table.set(b * MaxPages + pos / S, static_cast<double>(freePages.back()));
      freePages.pop_back();
    }
    for (int64_t h = 0; h < Hkv; ++h)
      for (int64_t d = 0; d < D; ++d) {
        kHist[b][h].push_back(k[h * D + d]);
        vHist[b][h].push_back(v[h * D + d]);
      }
  };
  // Prefill: sequences of 0, 15, 16 and 40 tokens.
  const int64_t start[B] = {0, S - 1, S, 40};
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < start[b]; ++t) {
      std::vector<double> k(Hkv * D), v(Hkv * D);
      for (double &x : k)
        x = uni(rng);
      for (double &x : v)
        x = uni(rng);
      appendHost(b, k, v);
      int64_t page = table.getInt(b * MaxPages + t / S);
      for (int64_t h = 0; h < Hkv; ++h)
        for (int64_t d = 0; d < D; ++d) {
          kPool.set(poolAt(page, h, t % S, d), k[h * D + d]);
          vPool.set(poolAt(page, h, t % S, d), v[h * D + d]);
        }
      lens.set(b, static_cast<double>(t + 1));
    }
  }

  double worst = 0;
  for (int step = 0; step < steps; ++step) {
    // The new token of every sequence; its page (if it starts one) is in the
    // table before the kernel runs.
    for (int64_t i = 0; i < q.numElements(); ++i)
      q.set(i, uni(rng));
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> k(Hkv * D), v(Hkv * D);
      for (int64_t i = 0; i < Hkv * D; ++i) {
        k[i] = uni(rng);
        v[i] = uni(rng);
        kn.set(b * Hkv * D + i, k[i]);
        vn.set(b * Hkv * D + i, v[i]);
      }
      appendHost(b, k, v);
    }
    // The compiled step may update its arguments in place (the caches, as
    // intended, but also the lengths it increments): it gets a copy of them.
    HostTensor lensArg = lens;
    std::vector<HostTensor> outs;
    llvm::Error callErr =
        (*runner)->bind({&q, &kn, &vn, &kPool, &vPool, &table, &lensArg});
    if (!callErr)
      callErr = (*runner)->run();
    if (!callErr)
      callErr = (*runner)->fetch(outs);
    if (callErr) {
      llvm::errs() << "step " << step << ": "
                   << llvm::toString(std::move(callErr)) << "\n";
      return 1;
    }
    kPool = std::move(outs[1]);
    vPool = std::move(outs[2]);
    for (int64_t b = 0; b < B; ++b)
      lens.set(b, static_cast<double>(lens.getInt(b) + 1));

    // The reference on the dense history.
    int64_t nk = 0;
    for (int64_t b = 0; b < B; ++b)
      nk = std::max<int64_t>(nk, lens.getInt(b));
    ::attn::ref::Tensor rq, rk, rv;
    rq.shape = {B, Hq, 1, D};
    for (int64_t i = 0; i < q.numElements(); ++i)
      rq.data.push_back(q.get(i));
    rk.shape = rv.shape = {B, Hkv, nk, D};
    rk.data.assign(B * Hkv * nk * D, 0.0);
    rv.data.assign(B * Hkv * nk * D, 0.0);
    std::vector<int64_t> kvLen(B);
    for (int64_t b = 0; b < B; ++b) {
      kvLen[b] = lens.getInt(b);
      for (int64_t h = 0; h < Hkv; ++h)
        for (size_t i = 0; i < kHist[b][h].size(); ++i) {
          rk.data[(b * Hkv + h) * nk * D + i] = kHist[b][h][i];
          rv.data[(b * Hkv + h) * nk * D + i] = vHist[b][h][i];
        }
    }
    ::attn::ref::Spec spec;
    spec.causal = ::attn::ref::Causal::BottomRight;
    ::attn::ref::Inputs in;
    in.q = &rq;
    in.k = &rk;
    in.v = &rv;
    in.kvLen = &kvLen;
    ::attn::ref::Outputs expected;
    std::string msg = ::attn::ref::attention(spec, in, expected);
    if (!msg.empty()) {
      llvm::errs() << "reference: " << msg << "\n";
      return 1;
    }
    double err = 0;
    for (int64_t i = 0; i < outs[0].numElements(); ++i)
      err = std::max(err, std::abs(outs[0].get(i) - expected.out.data[i]));
    worst = std::max(worst, err);
    bool ok = err <= tolerance;
    llvm::outs() << "step " << step << ": kv_len";
    for (int64_t b = 0; b < B; ++b)
      llvm::outs() << " " << kvLen[b];
    llvm::outs() << llvm::format(", max abs err %.2e ", err)
                 << (ok ? "ok" : "MISMATCH") << "\n";
    if (!ok)
      return 1;
  }
  llvm::outs() << "all " << steps << " steps match the reference (device "
               << device << ", form " << form << ", max abs err "
               << llvm::format("%.2e", worst) << ")\n";
  return 0;
}
