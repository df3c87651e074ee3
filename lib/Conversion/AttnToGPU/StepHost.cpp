//===- StepHost.cpp - functions of several ops on the GPU (serving steps) -===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// A function that is more than one attn.attention returning its results,
// such as the serving step examples/serving/paged_decode_step.mlir:
// attn.kv_cache_append writes the new tokens' K/V rows into the caches
// (dense or paged), elementwise arith ops compute small tensors (kv_len + 1),
// and one attn.attention reads the updated caches. Its GPU form is one host
// function that runs the ops in program order on the caller's device
// buffers, each op's result in the out-parameter the function returns it in
// or in a temporary device buffer.
//
// kv_cache_append: the result buffer receives the cache (a device copy,
// skipped when the caller passes the cache's own buffer as the result: the
// in-place update a serving loop wants), then one kernel writes the rows.
// Every block checks every position and page table entry before it writes
// anything, so after a failed check nothing is written, as on the CPU; the
// check is reported through the launch's error word with the CPU's message.
// Blocks own one head each and write the batch entries in order, so writes
// that land on the same row end as on the CPU (the later entry wins).
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "KernelEmitter.h"

#include "attn/Conversion/Dequant.h"
#include "attn/Conversion/RuntimeChecks.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_codegen;
using namespace mlir::attn::gpu_codegen::detail;

/// Threads per block of the append and elementwise kernels.
static constexpr int64_t kStepThreads = 128;

static InFlightDiagnostic gpuError(Operation *op, const Twine &msg) {
  return op->emitOpError("cannot be lowered to the GPU: ") << msg;
}

/// An elementwise arith op on ranked tensors of rank >= 1.
static bool isTensorElementwise(Operation *op) {
  if (!isa<arith::ArithDialect>(op->getDialect()) ||
      !op->hasTrait<OpTrait::Elementwise>() || op->getNumResults() != 1)
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return type && type.getRank() >= 1;
}

/// A splat tensor constant (what an elementwise op's operand may be).
static std::optional<TypedAttr> splatConstant(Value v) {
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  if (!cst)
    return std::nullopt;
  auto dense = dyn_cast<SplatElementsAttr>(cst.getValue());
  if (!dense)
    return std::nullopt;
  return dense.getSplatValue<TypedAttr>();
}

bool gpu_codegen::isGpuStepFunction(func::FuncOp fn) {
  if (fn.isExternal())
    return false;
  bool attnOp = false, projected = false, append = false;
  int64_t ops = 0;
  for (Operation &op : fn.getBody().front().without_terminator()) {
    ++ops;
    attnOp |= isa<AttnDialect>(op.getDialect());
    projected |= isa<ProjectedAttentionOp>(op);
    append |= isa<KvCacheAppendOp>(op);
  }
  return attnOp && !projected && (append || ops > 1);
}

LogicalResult gpu_codegen::checkGpuStepSupported(func::FuncOp fn,
                                                 const GpuKernelOptions &opts) {
  Block &body = fn.getBody().front();
  AttentionOp attention;
  for (Operation &op : body.without_terminator()) {
    if (auto att = dyn_cast<AttentionOp>(op)) {
      if (attention)
        return gpuError(att, "a function of several ops takes one "
                             "attn.attention (the first is at ")
               << attention.getLoc() << ")";
      attention = att;
      if (failed(checkGpuOpSupported(att, opts)))
        return failure();
      continue;
    }
    if (isa<KvCacheAppendOp>(op) || isTensorElementwise(&op))
      continue;
    if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
      bool ok =
          !isa<ShapedType>(cst.getType()) ||
          (splatConstant(cst) && llvm::all_of(cst->getUsers(), [](auto *u) {
             return isTensorElementwise(u);
           }));
      if (!ok)
        return gpuError(&op, "a tensor constant in a function of several ops "
                             "must be a splat operand of elementwise ops");
      continue;
    }
    return gpuError(&op, "a function of several ops may hold "
                         "attn.kv_cache_append, one attn.attention and "
                         "elementwise arith ops on tensors");
  }
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  llvm::SmallPtrSet<Value, 4> seen;
  for (Value v : ret.getOperands()) {
    Operation *def = v.getDefiningOp();
    if (!def || isa<arith::ConstantOp>(def))
      return gpuError(ret, "a function of several ops must return results of "
                           "its ops (not arguments or constants)");
    if (!seen.insert(v).second)
      return gpuError(ret, "a function of several ops must return each value "
                           "once");
  }
  return success();
}

namespace {

/// Builds the host function of a step function.
class StepBuilder {
public:
  StepBuilder(OpBuilder &b, func::FuncOp fn, const GpuKernelOptions &opts)
      : b(b), loc(fn.getLoc()), fn(fn), opts(opts), a{b, loc} {}

  LogicalResult build();

private:
  Value ci(int64_t v) { return a.c(v); }
  Value divu(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value remu(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
  Value dim(Value buf, int64_t d) {
    return memref::DimOp::create(b, loc, buf, d);
  }
  /// The device buffer of a value of the original function.
  Value bufferOf(Value v) { return buffers.lookup(v); }
  /// The buffer an op's result lives in: the out-parameter it is returned
  /// in, or a new device buffer with the dynamic sizes `dims` gives.
  Value resultBuffer(Value result, function_ref<Value(int64_t)> dims);
  /// Out-parameters of dynamic sizes: checked against the sizes the inputs
  /// give (`want(d)`), with the message of the attention's output checks.
  void checkOutputDims(Value result, Value buf,
                       function_ref<Value(int64_t)> want);

  void emitAppend(KvCacheAppendOp op);
  void emitElementwise(Operation *op);
  void emitAttention(AttentionOp op);
  /// A one-dimensional launch of `blocks` x kStepThreads threads named
  /// <fn>_<what>, synchronous; `body` builds the kernel at its start.
  void launch(Value blocks, StringRef what, Value &token,
              function_ref<void(gpu::LaunchOp)> body);

  OpBuilder &b;
  Location loc;
  func::FuncOp fn;
  const GpuKernelOptions &opts;
  IRArith a;
  IRMapping buffers;
  /// Which function result (out-parameter) each returned value is.
  llvm::DenseMap<Value, unsigned> returned;
  SmallVector<Value> temporaries, attentionOutputs;
  Value errors;
  unsigned kernelCount = 0;
};

} // namespace

Value StepBuilder::resultBuffer(Value result,
                                function_ref<Value(int64_t)> dims) {
  if (returned.count(result))
    return buffers.lookup(result);
  auto type = toMemRef(result.getType());
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dyn.push_back(dims(d));
  // (gpu-to-llvm lowers gpu.alloc in async form only.)
  auto tokenType = gpu::AsyncTokenType::get(b.getContext());
  Value t =
      gpu::WaitOp::create(b, loc, tokenType, ValueRange{}).getAsyncToken();
  auto alloc = gpu::AllocOp::create(b, loc, type, tokenType, ValueRange{t}, dyn,
                                    ValueRange{}, UnitAttr());
  gpu::WaitOp::create(b, loc, Type(), ValueRange{alloc.getAsyncToken()});
  temporaries.push_back(alloc.getMemref());
  buffers.map(result, alloc.getMemref());
  return alloc.getMemref();
}

void StepBuilder::checkOutputDims(Value result, Value buf,
                                  function_ref<Value(int64_t)> want) {
  auto type = cast<ShapedType>(result.getType());
  auto it = returned.find(result);
  if (it == returned.end())
    return;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d))
      continue;
    Value got = dim(buf, d), expect = want(d);
    emitRuntimeCheckInto(b, loc, errors, a.eq(got, expect),
                         RuntimeCheck::OutputBufferDim,
                         {ci(it->second), got, ci(d), expect});
  }
}

void StepBuilder::launch(Value blocks, StringRef what, Value &token,
                         function_ref<void(gpu::LaunchOp)> body) {
  auto tokenType = gpu::AsyncTokenType::get(b.getContext());
  auto ctx = b.getContext();
  std::string name = (fn.getName() + "_" + what).str();
  OpBuilder::InsertionGuard g(b);
  auto op = gpu::LaunchOp::create(
      b, loc, blocks, ci(1), ci(1), ci(kStepThreads), ci(1), ci(1), Value(),
      tokenType, ValueRange{token}, TypeRange{}, TypeRange{}, Value(), Value(),
      Value(), FlatSymbolRefAttr::get(ctx, (fn.getName() + "_kernels").str()),
      FlatSymbolRefAttr::get(ctx, name));
  token = op.getAsyncToken();
  b.setInsertionPointToStart(&op.getBody().front());
  body(op);
  b.setInsertionPointToEnd(&op.getBody().front());
  gpu::TerminatorOp::create(b, loc);
}

void StepBuilder::emitAppend(KvCacheAppendOp op) {
  bool bhnd = op.getLayout() == Layout::bhnd;
  int64_t hDim = bhnd ? 1 : 2, nDim = bhnd ? 2 : 1;
  Value cache = bufferOf(op.getCache()), update = bufferOf(op.getUpdate());
  Value positions = bufferOf(op.getPositions());
  Value table = op.getPageTable() ? bufferOf(op.getPageTable()) : Value();
  Value result =
      resultBuffer(op.getResult(), [&](int64_t d) { return dim(cache, d); });
  // A quantized cache: its scales, and the buffer of the scales after the
  // append (per-token scales gain the new rows'; per-page ones are copied).
  Value scales = op.getScales() ? bufferOf(op.getScales()) : Value();
  Value newScales;
  bool perToken = false;
  if (scales) {
    newScales = resultBuffer(op.getNewScales(),
                             [&](int64_t d) { return dim(scales, d); });
    perToken = cast<MemRefType>(scales.getType()).getRank() == 3;
  }

  // Sizes the types leave dynamic; the result is the cache as it was when
  // this or an earlier check fails (the writes are skipped then, as on the
  // CPU), so the cache is copied into the result whenever their sizes agree
  // (unless they are one buffer).
  emitAppendSizeChecks(b, loc, op, errors, [&](Value operand, int64_t d) {
    return dim(bufferOf(operand), d);
  });
  checkOutputDims(op.getResult(), result,
                  [&](int64_t d) { return dim(cache, d); });
  if (scales)
    checkOutputDims(op.getNewScales(), newScales,
                    [&](int64_t d) { return dim(scales, d); });
  auto idx = [&](Value buf) -> Value {
    return memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buf);
  };
  auto tokenType = gpu::AsyncTokenType::get(b.getContext());
  // `to` starts as a copy of `from` (unless they are one buffer) whenever
  // their sizes agree.
  auto copyInto = [&](Value resultValue, Value to, Value from) {
    Value sameSizes = a.cb(true);
    auto resultType = cast<ShapedType>(resultValue.getType());
    for (int64_t d = 0; d < resultType.getRank(); ++d)
      if (resultType.isDynamicDim(d))
        sameSizes = a.both(sameSizes, a.eq(dim(to, d), dim(from, d)));
    auto ifCopy = scf::IfOp::create(
        b, loc, a.both(sameSizes, a.negate(a.eq(idx(to), idx(from)))),
        /*withElse=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifCopy.getThenRegion().front());
    Value t =
        gpu::WaitOp::create(b, loc, tokenType, ValueRange{}).getAsyncToken();
    t = gpu::MemcpyOp::create(b, loc, tokenType, ValueRange{t}, to, from)
            .getAsyncToken();
    gpu::WaitOp::create(b, loc, Type(), ValueRange{t});
  };
  copyInto(op.getResult(), result, cache);
  if (scales)
    copyInto(op.getNewScales(), newScales, scales);

  auto ifOk = scf::IfOp::create(
      b, loc, a.negate(buildHasFailedIn(b, loc, errors)), /*withElse=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifOk.getThenRegion().front());
  Value batch = dim(update, 0), heads = dim(update, hDim),
        rows = dim(update, nDim), width = dim(update, 3);
  Value pageSize, pages, capacity;
  if (table) {
    pageSize = dim(cache, nDim);
    pages = dim(cache, 0);
    capacity = a.mul(dim(table, 1), pageSize);
  } else {
    capacity = dim(cache, nDim);
  }
  Value token =
      gpu::WaitOp::create(b, loc, tokenType, ValueRange{}).getAsyncToken();
  ErrorWord word = ErrorWord::begin(b, loc, token);
  std::string what = "append" + std::to_string(kernelCount++);
  // One block per head (at least one, so that the checks run).
  launch(a.max(heads, ci(1)), what, token, [&](gpu::LaunchOp l) {
    Value h = l.getBlockIds().x, tid = l.getThreadIds().x;
    Value reporter = a.both(a.eq(h, ci(0)), a.eq(tid, ci(0)));
    auto position = [&](Value bi) -> Value {
      Value p = memref::LoadOp::create(b, loc, positions, ValueRange{bi});
      return arith::IndexCastOp::create(b, loc, b.getIndexType(), p);
    };
    auto report = [&](Value ok, RuntimeCheck check, ArrayRef<Value> args) {
      auto ifRep = scf::IfOp::create(b, loc, reporter, /*withElse=*/false);
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(&ifRep.getThenRegion().front());
      emitDeviceCheck(b, loc, word.device, ok, check, args);
    };
    auto entryOf = [&](Value bi, Value slot) -> Value {
      Value e = memref::LoadOp::create(b, loc, table, ValueRange{bi, slot});
      return arith::IndexCastOp::create(b, loc, b.getIndexType(), e);
    };
    // Every thread finds the verdict over all writes (the CPU's checks, in
    // its order: the first failure in batch order is reported).
    auto verdict =
        scf::ForOp::create(b, loc, ci(0), batch, ci(1), ValueRange{a.cb(true)});
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(verdict.getBody());
      Value bi = verdict.getInductionVar();
      Value p = position(bi);
      Value end = a.add(p, rows);
      Value okPos = a.both(a.sle(ci(0), p),
                           a.both(a.sle(p, capacity), a.sle(end, capacity)));
      report(okPos,
             table ? RuntimeCheck::AppendPastTable
                   : RuntimeCheck::AppendPastCache,
             {bi, p, rows, capacity});
      Value ok = a.both(verdict.getRegionIterArgs()[0], okPos);
      if (table) {
        // The page table slots the rows go to, read only where the
        // positions are in the table.
        Value first = a.select(okPos, divu(p, pageSize), ci(0));
        Value last =
            a.select(a.both(okPos, a.slt(ci(0), rows)),
                     a.add(divu(a.sub(end, ci(1)), pageSize), ci(1)), first);
        auto slots =
            scf::ForOp::create(b, loc, first, last, ci(1), ValueRange{ok});
        OpBuilder::InsertionGuard g3(b);
        b.setInsertionPointToStart(slots.getBody());
        Value slot = slots.getInductionVar();
        Value page = entryOf(bi, slot);
        Value inPool = a.both(a.sle(ci(0), page), a.slt(page, pages));
        report(inPool, RuntimeCheck::AppendPageEntry, {bi, slot, page, pages});
        scf::YieldOp::create(
            b, loc, ValueRange{a.both(slots.getRegionIterArgs()[0], inPool)});
        b.setInsertionPointAfter(slots);
        ok = slots.getResult(0);
      }
      scf::YieldOp::create(b, loc, ValueRange{ok});
    }
    auto ifWrite =
        scf::IfOp::create(b, loc, a.both(verdict.getResult(0), a.slt(h, heads)),
                          /*withElse=*/false);
    b.setInsertionPointToStart(&ifWrite.getThenRegion().front());
    auto perEntry = scf::ForOp::create(b, loc, ci(0), batch, ci(1));
    b.setInsertionPointToStart(perEntry.getBody());
    Value bi = perEntry.getInductionVar();
    Value p = position(bi);
    auto at = [&](Value bb, Value n, Value dd) {
      return bhnd ? SmallVector<Value>{bb, h, n, dd}
                  : SmallVector<Value>{bb, n, h, dd};
    };
    // Where the row of new token t goes: (batch entry or page, row).
    auto placeOf = [&](Value t) -> std::pair<Value, Value> {
      Value pos = a.add(p, t);
      if (table)
        return {entryOf(bi, divu(pos, pageSize)), remu(pos, pageSize)};
      return {bi, pos};
    };
    if (scales) {
      // Quantized: one thread per row, which finds the row's scale (per
      // token: max_d |x| / qmax, 1 for a zero row; per page: the caller's)
      // and writes round(x / scale), and per token the scale beside it.
      Type elt = cast<MemRefType>(cache.getType()).getElementType();
      Type f32 = b.getF32Type();
      auto cf = [&](double x) -> Value {
        return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(x));
      };
      auto load = [&](Value t, Value dd) -> Value {
        Value x = memref::LoadOp::create(b, loc, update, at(bi, t, dd));
        return x.getType() == f32 ? x : arith::ExtFOp::create(b, loc, f32, x);
      };
      auto rowLoop = scf::ForOp::create(b, loc, tid, rows, ci(kStepThreads));
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(rowLoop.getBody());
      Value t = rowLoop.getInductionVar();
      auto [block, row] = placeOf(t);
      Value scale;
      if (perToken) {
        auto amax = scf::ForOp::create(b, loc, ci(0), width, ci(1),
                                       ValueRange{cf(0.0)});
        {
          OpBuilder::InsertionGuard g3(b);
          b.setInsertionPointToStart(amax.getBody());
          Value x =
              math::AbsFOp::create(b, loc, load(t, amax.getInductionVar()));
          scf::YieldOp::create(b, loc,
                               ValueRange{arith::MaximumFOp::create(
                                   b, loc, amax.getRegionIterArgs()[0], x)});
        }
        Value m = amax.getResult(0);
        Value isZero =
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, cf(0));
        scale = arith::SelectOp::create(
            b, loc, isZero, cf(1.0),
            arith::DivFOp::create(b, loc, m, cf(quantizedMax(elt))));
        memref::StoreOp::create(
            b, loc, scale, newScales,
            scaleIndex(newScales, op.getLayout(), block, h, row));
      } else {
        scale = memref::LoadOp::create(
            b, loc, scales, scaleIndex(scales, op.getLayout(), block, h, row));
      }
      auto cols = scf::ForOp::create(b, loc, ci(0), width, ci(1));
      b.setInsertionPointToStart(cols.getBody());
      Value dd = cols.getInductionVar();
      Value y = arith::DivFOp::create(b, loc, load(t, dd), scale);
      memref::StoreOp::create(b, loc, encodeQuantized(b, loc, y, elt), result,
                              at(block, row, dd));
    } else {
      // One thread per element.
      auto elems =
          scf::ForOp::create(b, loc, tid, a.mul(rows, width), ci(kStepThreads));
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(elems.getBody());
      Value e = elems.getInductionVar();
      Value t = divu(e, width), dd = remu(e, width);
      Value x = memref::LoadOp::create(b, loc, update, at(bi, t, dd));
      auto [block, row] = placeOf(t);
      memref::StoreOp::create(b, loc, x, result, at(block, row, dd));
    }
    // The next entry's writes after this one's (rows both write end as
    // on the CPU).
    gpu::BarrierOp::create(b, loc);
  });
  word.end(b, loc, token);
  gpu::WaitOp::create(b, loc, Type(), ValueRange{token});
  word.report(b, loc, errors);
}

void StepBuilder::emitElementwise(Operation *op) {
  Value res = op->getResult(0);
  auto type = cast<RankedTensorType>(res.getType());
  // A buffer operand gives the dynamic sizes (splat constants are static).
  Value like;
  for (Value v : op->getOperands())
    if (!splatConstant(v) && !like)
      like = bufferOf(v);
  auto dims = [&](int64_t d) -> Value {
    return type.isDynamicDim(d) ? dim(like, d) : ci(type.getDimSize(d));
  };
  Value result = resultBuffer(res, dims);
  checkOutputDims(res, result, dims);
  Value n = ci(1);
  for (int64_t d = 0; d < type.getRank(); ++d)
    n = a.mul(n, dims(d));
  auto flat = [&](Value buf) -> Value {
    if (cast<MemRefType>(buf.getType()).getRank() == 1)
      return buf;
    ReassociationIndices all;
    for (int64_t d = 0; d < type.getRank(); ++d)
      all.push_back(d);
    return memref::CollapseShapeOp::create(b, loc, buf,
                                           ArrayRef<ReassociationIndices>{all});
  };
  SmallVector<Value> flatOperands;
  for (Value v : op->getOperands())
    flatOperands.push_back(splatConstant(v) ? Value() : flat(bufferOf(v)));
  Value flatResult = flat(result);
  auto ifOk = scf::IfOp::create(
      b, loc, a.negate(buildHasFailedIn(b, loc, errors)), /*withElse=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifOk.getThenRegion().front());
  auto tokenType = gpu::AsyncTokenType::get(b.getContext());
  Value token =
      gpu::WaitOp::create(b, loc, tokenType, ValueRange{}).getAsyncToken();
  std::string what = "elementwise" + std::to_string(kernelCount++);
  launch(a.max(a.ceilDiv(n, ci(kStepThreads)), ci(1)), what, token,
         [&](gpu::LaunchOp l) {
           Value i = a.add(a.mul(l.getBlockIds().x, ci(kStepThreads)),
                           l.getThreadIds().x);
           auto inRange = scf::IfOp::create(b, loc, a.slt(i, n), false);
           b.setInsertionPointToStart(&inRange.getThenRegion().front());
           SmallVector<Value> scalars;
           for (auto [v, buf] : llvm::zip(op->getOperands(), flatOperands)) {
             if (auto splat = splatConstant(v))
               scalars.push_back(arith::ConstantOp::create(b, loc, *splat));
             else
               scalars.push_back(
                   memref::LoadOp::create(b, loc, buf, ValueRange{i}));
           }
           Operation *scalar = b.clone(*op);
           scalar->setOperands(scalars);
           scalar->getResult(0).setType(type.getElementType());
           memref::StoreOp::create(b, loc, scalar->getResult(0), flatResult,
                                   ValueRange{i});
         });
  gpu::WaitOp::create(b, loc, Type(), ValueRange{token});
}

void StepBuilder::emitAttention(AttentionOp op) {
  // Work after a failed check of an earlier op is skipped (its outputs are
  // zeroed at the end), as on the CPU.
  Value q = bufferOf(op.getQuery()), v = bufferOf(op.getValue());
  bool bnhd = op.getLayout() == Layout::bnhd;
  Value out = resultBuffer(op.getOut(), [&](int64_t d) {
    // (Latent attention: Dv is the attribute's, v is k.)
    if (d == 3 && op.getVFromK())
      return Value(arith::ConstantIndexOp::create(b, loc, op.getHeadDimV()));
    return d == 3 ? dim(v, 3) : dim(q, d);
  });
  Value lse;
  if (op.getLse()) {
    lse = resultBuffer(op.getLse(), [&](int64_t d) {
      int64_t qd[3] = {0, bnhd ? 2 : 1, bnhd ? 1 : 2};
      return dim(q, qd[d]);
    });
  }
  attentionOutputs.push_back(out);
  if (lse)
    attentionOutputs.push_back(lse);
  SmallVector<Value> inputs;
  for (Value operand : op->getOperands())
    inputs.push_back(bufferOf(operand));
  auto ifOk = scf::IfOp::create(
      b, loc, a.negate(buildHasFailedIn(b, loc, errors)), /*withElse=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifOk.getThenRegion().front());
  KernelEmitter emitter(b, op.getLoc(), op, chooseWarps(op, opts), opts.tileK,
                        opts.splits, chooseWarpRows(op, opts));
  emitter.fnName = fn.getName().str();
  emitter.wgmmaOpt = opts.wgmma;
  emitter.emitHost(inputs, out, lse);
  emitter.recordWgmma(ifOk->getParentOfType<func::FuncOp>());
}

LogicalResult StepBuilder::build() {
  Block &body = fn.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  AttentionOp attention;
  for (Operation &op : body.without_terminator())
    if (auto att = dyn_cast<AttentionOp>(op))
      attention = att;
  int64_t warps = attention ? chooseWarps(attention, opts) : 4;
  int64_t warpRows = attention ? chooseWarpRows(attention, opts) : 16;
  func::FuncOp hostFn = createHostFunction(b, fn, ret.getOperandTypes(), warps,
                                           warps * warpRows, opts);
  Block *entry = &hostFn.front();
  for (BlockArgument arg : body.getArguments())
    buffers.map(arg, entry->getArgument(arg.getArgNumber()));
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    returned[v] = i;
    buffers.map(v, entry->getArgument(fn.getNumArguments() + i));
  }
  errors = buildErrorContext(b, loc, fn->getParentOfType<ModuleOp>());
  for (Operation &op : body.without_terminator()) {
    if (auto append = dyn_cast<KvCacheAppendOp>(op))
      emitAppend(append);
    else if (auto att = dyn_cast<AttentionOp>(op))
      emitAttention(att);
    else if (isTensorElementwise(&op))
      emitElementwise(&op);
  }
  // After a failed check, the attention outputs hold zeros.
  emitZeroFill(b, loc, buildHasFailedIn(b, loc, errors), attentionOutputs);
  auto tokenType = gpu::AsyncTokenType::get(b.getContext());
  if (!temporaries.empty()) {
    Value t =
        gpu::WaitOp::create(b, loc, tokenType, ValueRange{}).getAsyncToken();
    for (Value buf : temporaries)
      t = gpu::DeallocOp::create(b, loc, tokenType, ValueRange{t}, buf)
              .getAsyncToken();
    gpu::WaitOp::create(b, loc, Type(), ValueRange{t});
  }
  func::ReturnOp::create(b, loc);
  replaceWithHostFunction(fn, hostFn);
  return success();
}

LogicalResult gpu_codegen::buildGpuStepFunction(func::FuncOp fn,
                                                const GpuKernelOptions &opts) {
  OpBuilder b(fn);
  StepBuilder builder(b, fn, opts);
  return builder.build();
}
