//===- KernelHost.cpp - host code and merge kernel of the GPU form ------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// The host side of the GPU form (sizes, checks, launches, the split-KV
// workspace chain), the split-KV merge kernel, and the entry points of
// KernelBuilder.h. The kernel body is in KernelBuilder.cpp.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "KernelEmitter.h"

#include "attn/Conversion/RuntimeChecks.h"
#include "attn/Schedule/LoweringChoice.h"

#include <limits>
#include <tuple>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_codegen;
using namespace mlir::attn::gpu_codegen::detail;

void KernelEmitter::emitHost(ValueRange inputs, Value outBuf, Value lseBuf) {
  // The buffer standing for each of the op's operands (inputs are in
  // operand order).
  auto bufferOf = [&](Value operand) -> Value {
    for (unsigned i = 0; operand && i < op->getNumOperands(); ++i)
      if (op->getOperand(i) == operand)
        return inputs[i];
    return Value();
  };
  q = bufferOf(op.getQuery());
  k = bufferOf(op.getKey());
  v = bufferOf(op.getValue());
  ptBuf = bufferOf(op.getPageTable());
  kvLenBuf = bufferOf(op.getKvLen());
  kScaleBuf = bufferOf(op.getKScale());
  // (With v_from_k, V is K's prefix and takes K's scales.)
  vScaleBuf = bufferOf(op.getValueScale());
  maskBuf = bufferOf(op.getMask());
  biasBuf = bufferOf(op.getBias());
  alibiBuf = bufferOf(op.getAlibiSlopes());
  sinkBuf = bufferOf(op.getSink());
  scaleBuf = bufferOf(op.getRuntimeScale());
  cuQBuf = bufferOf(op.getCuSeqlensQ());
  cuKBuf = bufferOf(op.getCuSeqlensK());
  for (Value input : op.getModInputs())
    modInputBufs.push_back(bufferOf(input));
  out = outBuf;
  lse = lseBuf;

  batch = dim(q, 0);
  hq = dim(q, 1);
  nq = dim(q, 2);
  hkv = dim(k, 1);
  nk = dim(k, 2);
  if (ptBuf) {
    // Paged K/V: k and v are pools of `pages` pages of S tokens; Nk is
    // max_pages * S.
    pageSize = nk;
    poolPages = dim(k, 0);
    nk = a.mul(memref::DimOp::create(b, loc, ptBuf, 1), pageSize);
  }
  // Sizes the types leave dynamic are checked here, by the rules and with
  // the messages of every form (emitRuntimeShapeChecks); static sizes are
  // the verifier's, and a spec without dynamic sizes calls no runtime
  // function.
  Value hkvNonZero = a.negate(a.eq(hkv, ci(0)));
  Value failed;
  bool anyDynamic = false;
  for (Value operand : op->getOperands())
    anyDynamic |= !cast<ShapedType>(operand.getType()).hasStaticShape();
  for (Type result : op->getResultTypes())
    anyDynamic |= !cast<ShapedType>(result).hasStaticShape();
  Value errors;
  if (anyDynamic || usesErrorWord())
    errors = buildErrorContext(
        b, loc, b.getBlock()->getParentOp()->getParentOfType<ModuleOp>());
  if (anyDynamic) {
    emitRuntimeShapeChecks(b, loc, op, errors,
                           [&](Value operand, int64_t d) -> Value {
                             unsigned i = 0;
                             for (; i < op->getNumOperands(); ++i)
                               if (op->getOperand(i) == operand)
                                 break;
                             return memref::DimOp::create(b, loc, inputs[i], d);
                           });
    // The output buffers (the caller's) must hold what the kernels write:
    // out is q's with Dv, lse q's [B, Hq, Nq].
    auto checkOut = [&](Value buf, int64_t which, int64_t d, Value want) {
      if (!cast<ShapedType>(op->getResult(which).getType()).isDynamicDim(d))
        return;
      Value got = memref::DimOp::create(b, loc, buf, d);
      emitRuntimeCheckInto(b, loc, errors, a.eq(got, want),
                           RuntimeCheck::OutputBufferDim,
                           {ci(which), got, ci(d), want});
    };
    for (int64_t l = 0; l < 4; ++l)
      checkOut(outBuf, 0, op.getPhysicalDim(l),
               l == 3 ? (op.getVFromK() ? ci(dv) : dim(v, 3)) : dim(q, l));
    if (lseBuf)
      for (int64_t l = 0; l < 3; ++l)
        checkOut(lseBuf, 1, l, dim(q, l));
    failed = buildHasFailedIn(b, loc, errors);
  }
  groups = divu(hq, a.max(hkv, ci(1)));
  Value rows = a.mul(nq, groups);
  if (cuQBuf) {
    // Ragged: the sequences' row tiles, at most ceil(Tq G / TQ) + S of them
    // (each sequence rounds up once); block x finds its (sequence, row tile)
    // in the offsets, blocks past the last tile do nothing.
    Value nQ = memref::DimOp::create(b, loc, cuQBuf, 0);
    if (cuKBuf) {
      Value nK = memref::DimOp::create(b, loc, cuKBuf, 0);
      emitRuntimeCheckInto(b, loc, errors, a.eq(nQ, nK),
                           RuntimeCheck::RaggedLengths, {nQ, nK});
    }
    emitRuntimeCheckInto(b, loc, errors, a.sle(ci(1), nQ),
                         RuntimeCheck::RaggedNoSequences, {nQ});
    Value failedNow = buildHasFailedIn(b, loc, errors);
    failed = failed ? a.either(failed, failedNow) : failedNow;
    numSeqs = a.max(a.sub(nQ, ci(1)), ci(0));
  }
  // The row tiles of the kernel being emitted (its tq).
  auto rowTiles = [&] {
    Value gx = a.ceilDiv(rows, ci(tq));
    return cuQBuf ? a.add(gx, numSeqs) : gx;
  };
  // Nothing is launched after a failed check.
  Value any = a.both(
      a.both(a.slt(ci(0), cuQBuf ? a.add(rows, numSeqs) : rows), hkvNonZero),
      a.slt(ci(0), batch));
  if (failed)
    any = a.both(any, a.negate(failed));
  auto ifOp = scf::IfOp::create(b, loc, any, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  // The most dynamic shared memory a kernel of the function takes.
  auto hostFn = b.getBlock()->getParentOp()->getParentOfType<func::FuncOp>();
  auto noteSharedBytes = [&](int64_t bytes) {
    auto prev = hostFn->getAttrOfType<IntegerAttr>("attn.gpu_shared_memory");
    if (!prev || prev.getInt() < bytes)
      hostFn->setAttr("attn.gpu_shared_memory", b.getI64IntegerAttr(bytes));
  };
  // The launches: split-KV or the row-tiled kernel, or either per call
  // when the query length is dynamic (then each branch is its own chain).
  auto emitLaunches = [&] {
    int64_t smemBytes = sharedBytes();
    noteSharedBytes(smemBytes);
    Value smem =
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), smemBytes);
    Value gx = rowTiles();
    // One stream-ordered chain (gpu-to-llvm lowers gpu.alloc and gpu.memcpy
    // in async form only) when the launch needs a workspace or an error word:
    // alloc, zero the word, kernels, copy the word back, dealloc, then wait.
    auto tokenType = gpu::AsyncTokenType::get(b.getContext());
    Value token;
    if (splitMode || usesErrorWord())
      token =
          gpu::WaitOp::create(b, loc, tokenType, ValueRange{}).getAsyncToken();
    if (usesErrorWord())
      errorWord = ErrorWord::begin(b, loc, token);
    if (cuQBuf) {
      // Rows outside every sequence: out = 0, lse = -inf (the kernel writes
      // the sequences' rows over them).
      for (auto [buf, value] :
           {std::pair<Value, double>{out, 0.0},
            {lse, -std::numeric_limits<double>::infinity()}}) {
        if (!buf)
          continue;
        Type elt = cast<MemRefType>(buf.getType()).getElementType();
        Value fill =
            arith::ConstantOp::create(b, loc, b.getFloatAttr(elt, value));
        token = gpu::MemsetOp::create(b, loc, tokenType, ValueRange{token}, buf,
                                      fill)
                    .getAsyncToken();
      }
    }
    if (usesTileMap()) {
      // The tile map, once per call, before the attention kernels.
      numRowTiles = gx;
      numKeyTiles = a.max(a.ceilDiv(nk, ci(tk)), ci(1));
      tileMapHeads = maskIgnoresHead() ? ci(1) : hkv;
      Value size =
          a.mul(a.mul(a.mul(batch, tileMapHeads), numRowTiles), numKeyTiles);
      auto alloc = gpu::AllocOp::create(
          b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type()),
          tokenType, ValueRange{token}, ValueRange{size}, ValueRange{},
          UnitAttr());
      tileMap = alloc.getMemref();
      OpBuilder::InsertionGuard g(b);
      auto launch = gpu::LaunchOp::create(
          b, loc, numRowTiles, tileMapHeads, batch, ci(kLanes * warps), ci(1),
          ci(1), Value(), tokenType, ValueRange{alloc.getAsyncToken()},
          TypeRange{}, TypeRange{}, Value(), Value(), Value(), kernelModule(),
          kernelName("tile_map"));
      token = launch.getAsyncToken();
      b.setInsertionPointToStart(&launch.getBody().front());
      emitTileMapKernel(launch);
      gpu::TerminatorOp::create(b, loc);
    }
    if (!splitMode) {
      OpBuilder::InsertionGuard g(b);
      auto launch = gpu::LaunchOp::create(
          b, loc, gx, hkv, batch, ci(kLanes * warps), ci(1), ci(1), smem,
          token ? Type(tokenType) : Type(),
          token ? ValueRange{token} : ValueRange{}, TypeRange{}, TypeRange{},
          Value(), Value(), Value(), kernelModule(), kernelName("attention"));
      if (token)
        token = launch.getAsyncToken();
      b.setInsertionPointToStart(&launch.getBody().front());
      emitKernel(launch);
      gpu::TerminatorOp::create(b, loc);
    } else {
      emitSplitLaunches(smem, token);
    }
    if (tileMap)
      token =
          gpu::DeallocOp::create(b, loc, tokenType, ValueRange{token}, tileMap)
              .getAsyncToken();
    if (usesErrorWord())
      errorWord.end(b, loc, token);
    if (token)
      gpu::WaitOp::create(b, loc, Type(), ValueRange{token});
    // The outputs after a failed check hold zeros, as on the CPU.
    if (usesErrorWord())
      emitZeroFill(b, loc, errorWord.report(b, loc, errors), {out, lse});
  };
  if (!splitPerCall) {
    emitLaunches();
    return;
  }
  // Rows of every (batch, K/V head) in one row tile of the split kernel
  // (16 rows per warp): split-KV.
  setRowFrags(1);
  auto choose =
      scf::IfOp::create(b, loc, a.eq(rowTiles(), ci(1)), /*withElse=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&choose.getThenRegion().front());
    splitMode = true;
    kernelSuffix = "_per_call";
    emitLaunches();
  }
  b.setInsertionPointToStart(&choose.getElseRegion().front());
  splitMode = false;
  kernelSuffix.clear();
  setRowFrags(rowFragsTiled);
  emitLaunches();
}

void KernelEmitter::emitSplitLaunches(Value smem, Value &token) {
  // Split-KV: S chunks of the key tiles (S from the grid the blocks need,
  // at most one per key tile), partial states in a workspace, a merge.
  Value maxSplits = a.max(a.ceilDiv(nk, ci(tk)), ci(1));
  Value want;
  if (splitsOpt > 0) {
    want = ci(splitsOpt);
  } else {
    // About kBlocksPerSm blocks per SM of the current device (the runtime's
    // attn_gpu_sm_count; kDefaultSmCount when it does not know).
    auto module = b.getBlock()->getParentOp()->getParentOfType<ModuleOp>();
    auto i32 = b.getI32Type();
    if (!SymbolTable::lookupSymbolIn(module, kGpuSmCountFn)) {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(module.getBody());
      func::FuncOp::create(b, loc, kGpuSmCountFn, b.getFunctionType({}, {i32}))
          .setPrivate();
    }
    Value count = func::CallOp::create(b, loc, kGpuSmCountFn, TypeRange{i32},
                                       ValueRange{})
                      .getResult(0);
    Value sms = arith::IndexCastOp::create(b, loc, b.getIndexType(), count);
    sms = a.select(a.slt(ci(0), sms), sms, ci(kDefaultSmCount));
    want = a.ceilDiv(a.mul(sms, ci(kBlocksPerSm)), a.mul(hkv, batch));
  }
  numSplits = a.min(a.max(want, ci(1)), maxSplits);
  if (splitsOpt <= 0) {
    // A chosen count: only as many chunks as chunks of ceil(tiles / S) of
    // the cache's Nk key tiles fill (6 wanted over 8 tiles: 4 of 2 tiles,
    // not 6 with 2 empty), the rule of the CPU's decode form. A fixed count
    // stays as given.
    ScheduleSpec spec = ScheduleSpec::forOp(op, TileSizes{tq, tk});
    TileRules<IRArith> rules(spec, a);
    numSplits = rules.filledSplits(maxSplits, numSplits);
  }
  Value wsSize = a.mul(wsRows(), ci(dv + 2));
  auto wsType = MemRefType::get({ShapedType::kDynamic}, f32);
  auto tokenType = gpu::AsyncTokenType::get(b.getContext());
  auto alloc =
      gpu::AllocOp::create(b, loc, wsType, tokenType, ValueRange{token},
                           ValueRange{wsSize}, ValueRange{}, UnitAttr());
  ws = alloc.getMemref();
  token = alloc.getAsyncToken();
  {
    OpBuilder::InsertionGuard g(b);
    auto launch = gpu::LaunchOp::create(
        b, loc, numSplits, hkv, batch, ci(kLanes * warps), ci(1), ci(1), smem,
        tokenType, ValueRange{token}, TypeRange{}, TypeRange{}, Value(),
        Value(), Value(), kernelModule(), kernelName("attention_split"));
    token = launch.getAsyncToken();
    b.setInsertionPointToStart(&launch.getBody().front());
    emitKernel(launch);
    gpu::TerminatorOp::create(b, loc);
  }
  {
    OpBuilder::InsertionGuard g(b);
    auto merge = gpu::LaunchOp::create(
        b, loc, ci(tq), hkv, batch, ci(dv), ci(1), ci(1), Value(), tokenType,
        ValueRange{token}, TypeRange{}, TypeRange{}, Value(), Value(), Value(),
        kernelModule(), kernelName("merge"));
    token = merge.getAsyncToken();
    b.setInsertionPointToStart(&merge.getBody().front());
    emitMerge(merge);
    gpu::TerminatorOp::create(b, loc);
  }
  token = gpu::DeallocOp::create(b, loc, tokenType, ValueRange{token}, ws)
              .getAsyncToken();
}

static constexpr int64_t kErrorWordSlots = 6;

ErrorWord ErrorWord::begin(OpBuilder &b, Location loc, Value &token) {
  IRArith a{b, loc};
  auto i64 = b.getI64Type();
  auto type = MemRefType::get({kErrorWordSlots}, i64);
  ErrorWord word;
  word.host = memref::AllocaOp::create(b, loc, type);
  Value zero = arith::ConstantIntOp::create(b, loc, i64, 0);
  for (int64_t i = 0; i < kErrorWordSlots; ++i)
    memref::StoreOp::create(b, loc, zero, word.host, ValueRange{a.c(i)});
  auto tokenType = gpu::AsyncTokenType::get(b.getContext());
  auto alloc = gpu::AllocOp::create(b, loc, type, tokenType, ValueRange{token},
                                    ValueRange{}, ValueRange{}, UnitAttr());
  word.device = alloc.getMemref();
  token = gpu::MemcpyOp::create(b, loc, tokenType,
                                ValueRange{alloc.getAsyncToken()}, word.device,
                                word.host)
              .getAsyncToken();
  return word;
}

void ErrorWord::end(OpBuilder &b, Location loc, Value &token) const {
  auto tokenType = gpu::AsyncTokenType::get(b.getContext());
  token =
      gpu::MemcpyOp::create(b, loc, tokenType, ValueRange{token}, host, device)
          .getAsyncToken();
  token = gpu::DeallocOp::create(b, loc, tokenType, ValueRange{token}, device)
              .getAsyncToken();
}

Value ErrorWord::report(OpBuilder &b, Location loc, Value errors) const {
  IRArith a{b, loc};
  auto load = [&](int64_t i) -> Value {
    return memref::LoadOp::create(b, loc, host, ValueRange{a.c(i)});
  };
  Value zero = arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0);
  Value bad =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, load(0), zero);
  emitRecordedCheckInto(b, loc, errors, bad, load(1),
                        {load(2), load(3), load(4), load(5)});
  return bad;
}

void gpu_codegen::detail::emitZeroFill(OpBuilder &b, Location loc, Value cond,
                                       ArrayRef<Value> bufs) {
  auto ifBad = scf::IfOp::create(b, loc, cond, /*withElse=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifBad.getThenRegion().front());
  auto tokenType = gpu::AsyncTokenType::get(b.getContext());
  Value token =
      gpu::WaitOp::create(b, loc, tokenType, ValueRange{}).getAsyncToken();
  for (Value buf : bufs) {
    if (!buf)
      continue;
    Type elt = cast<MemRefType>(buf.getType()).getElementType();
    Value zeroElt = arith::ConstantOp::create(b, loc, b.getZeroAttr(elt));
    token = gpu::MemsetOp::create(b, loc, tokenType, ValueRange{token}, buf,
                                  zeroElt)
                .getAsyncToken();
  }
  gpu::WaitOp::create(b, loc, Type(), ValueRange{token});
}

/// Records `check` with `args` in the error word `word` unless `ok` holds:
/// the thread that raises the count from 0 writes the check and its
/// operands (the first failure of the launch wins).
void gpu_codegen::detail::emitDeviceCheck(OpBuilder &b, Location loc,
                                          Value word, Value ok,
                                          RuntimeCheck check,
                                          ArrayRef<Value> args) {
  IRArith a{b, loc};
  auto i64 = b.getI64Type();
  auto ifBad = scf::IfOp::create(b, loc, a.negate(ok), /*withElse=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifBad.getThenRegion().front());
  Value one = arith::ConstantIntOp::create(b, loc, i64, 1);
  Value old = memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addi,
                                          one, word, ValueRange{a.c(0)});
  Value zero = arith::ConstantIntOp::create(b, loc, i64, 0);
  auto first = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, old, zero),
      /*withElse=*/false);
  b.setInsertionPointToStart(&first.getThenRegion().front());
  SmallVector<Value, 5> slots = {
      arith::ConstantIntOp::create(b, loc, i64, static_cast<int64_t>(check))};
  for (Value arg : args)
    slots.push_back(arg.getType().isIndex()
                        ? Value(arith::IndexCastOp::create(b, loc, i64, arg))
                        : arg);
  for (auto [i, v] : llvm::enumerate(slots))
    memref::StoreOp::create(b, loc, v, word, ValueRange{a.c(1 + i)});
}

Value KernelEmitter::clampedOffset(Value cu, Value i, Value lo, Value total) {
  Value e = memref::LoadOp::create(b, loc, cu, ValueRange{i});
  Value idx = arith::IndexCastOp::create(b, loc, b.getIndexType(), e);
  return a.min(a.max(idx, lo), total);
}

void KernelEmitter::emitRaggedOffsetChecks(const ModInputAccess &report,
                                           Value isFirstBlock) {
  auto ifFirst = scf::IfOp::create(b, loc, isFirstBlock, /*withElse=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  for (auto entry : {std::tuple<Value, Value, RuntimeCheck>{
                         cuQBuf, nq, RuntimeCheck::RaggedOffsetsQ},
                     {cuKBuf, nk, RuntimeCheck::RaggedOffsetsK}}) {
    // (Not a structured binding: the lambda below captures `cu`, which
    // C++17 does not allow for bindings; clang 14 refuses it.)
    Value cu = std::get<0>(entry), total = std::get<1>(entry);
    if (!cu)
      continue; // a paged ragged batch has no key offsets
    RuntimeCheck check = std::get<2>(entry);
    OpBuilder::InsertionGuard g2(b);
    Value n = memref::DimOp::create(b, loc, cu, 0);
    auto loop = scf::ForOp::create(b, loc, tid, n, ci(kLanes * warps));
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    auto at = [&](Value j) -> Value {
      Value e = memref::LoadOp::create(b, loc, cu, ValueRange{j});
      return arith::IndexCastOp::create(b, loc, b.getIndexType(), e);
    };
    Value cur = at(i);
    // The offset before (0 for the first), read at a clamped index.
    Value prev =
        a.select(a.eq(i, ci(0)), ci(0), at(a.max(a.sub(i, ci(1)), ci(0))));
    Value ok = a.both(a.sle(prev, cur), a.sle(cur, total));
    report.report(b, loc, ok, check, {i, cur, prev, total});
  }
}

void KernelEmitter::emitPageTableChecks(Value bb, Value kvLen,
                                        const ModInputAccess &report,
                                        Value isFirstBlock) {
  auto ifFirst = scf::IfOp::create(b, loc, isFirstBlock, /*withElse=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
  Value pages = a.ceilDiv(kvLen, a.max(pageSize, ci(1)));
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  auto loop = scf::ForOp::create(b, loc, tid, pages, ci(kLanes * warps));
  b.setInsertionPointToStart(loop.getBody());
  Value p = loop.getInductionVar();
  Value e = memref::LoadOp::create(b, loc, ptBuf, ValueRange{bb, p});
  Value idx = arith::IndexCastOp::create(b, loc, b.getIndexType(), e);
  Value ok = a.both(a.sle(ci(0), idx), a.slt(idx, poolPages));
  report.report(b, loc, ok, RuntimeCheck::PageTableEntry,
                {bb, p, idx, poolPages});
}

std::pair<SmallVector<Value>, Value>
KernelEmitter::pagedRow(Value bb, Value hk, Value key, Value valid) {
  Value page = divu(key, a.max(pageSize, ci(1)));
  Value row = remu(key, a.max(pageSize, ci(1)));
  // The entry, loaded only for rows the tile reads (entries past a
  // sequence's last page may hold anything, -1 by convention).
  auto load = scf::IfOp::create(b, loc, TypeRange{b.getIndexType()}, valid,
                                /*withElse=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&load.getThenRegion().front());
    Value e = memref::LoadOp::create(b, loc, ptBuf, ValueRange{bb, page});
    scf::YieldOp::create(
        b, loc,
        ValueRange{arith::IndexCastOp::create(b, loc, b.getIndexType(), e)});
    b.setInsertionPointToStart(&load.getElseRegion().front());
    scf::YieldOp::create(b, loc, ValueRange{ci(0)});
  }
  Value entry = load.getResult(0);
  Value ok = a.both(a.sle(ci(0), entry), a.slt(entry, poolPages));
  return {phys(a.select(ok, entry, ci(0)), hk, row, ci(0)), a.both(valid, ok)};
}

ModInputAccess KernelEmitter::kernelModInputAccess() {
  ModInputAccess access;
  access.inputs = modInputBufs;
  access.dim = [](OpBuilder &b, Location loc, Value m, int64_t d) -> Value {
    return memref::DimOp::create(b, loc, m, d);
  };
  access.read = [](OpBuilder &b, Location loc, Value m,
                   ValueRange idx) -> Value {
    return memref::LoadOp::create(b, loc, m, idx);
  };
  Value word = errorWord.device;
  access.report = [word](OpBuilder &b, Location loc, Value ok,
                         RuntimeCheck check, ArrayRef<Value> args) {
    emitDeviceCheck(b, loc, word, ok, check, args);
  };
  return access;
}

void KernelEmitter::emitMerge(gpu::LaunchOp launch) {
  Value row = launch.getBlockIds().x;
  Value hk = launch.getBlockIds().y;
  Value bb = launch.getBlockIds().z;
  Value col = launch.getThreadIds().x;
  auto inRows = scf::IfOp::create(b, loc, a.slt(row, a.mul(nq, groups)), false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&inRows.getThenRegion().front());
  Value i = divu(row, groups);
  Value h = a.add(a.mul(hk, groups), remu(row, groups));
  Value mBase = a.mul(wsRows(), ci(dv));
  Value lBase = a.add(mBase, wsRows());
  auto load = [&](Value idx) {
    return memref::LoadOp::create(b, loc, ws, ValueRange{idx}).getResult();
  };
  // M = max_s m_s.
  auto maxLoop = scf::ForOp::create(
      b, loc, ci(0), numSplits, ci(1),
      ValueRange{cf(-std::numeric_limits<double>::infinity())});
  {
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(maxLoop.getBody());
    Value ms =
        load(a.add(mBase, wsRow(bb, hk, maxLoop.getInductionVar(), row)));
    scf::YieldOp::create(b, loc,
                         ValueRange{arith::MaximumFOp::create(
                             b, loc, maxLoop.getRegionIterArgs()[0], ms)});
  }
  Value bigM = maxLoop.getResult(0);
  // Attention sinks: the sink's logit joins M and L as a part with no value.
  Value sink;
  if (sinkBuf) {
    sink = memref::LoadOp::create(b, loc, sinkBuf, ValueRange{h});
    bigM = arith::MaximumFOp::create(b, loc, bigM, sink);
  }
  // The shared merge (LogitBuilder.h): L = sum_s w_s l_s, then out = sum_s
  // (w_s l_s / L) (acc_s / l_s); sigmoid: out = sum_s acc_s.
  auto splitLoop = [&](ValueRange init,
                       llvm::function_ref<Value(Value r, Value acc)> step) {
    auto loop = scf::ForOp::create(b, loc, ci(0), numSplits, ci(1), init);
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(loop.getBody());
    Value r = wsRow(bb, hk, loop.getInductionVar(), row);
    scf::YieldOp::create(b, loc,
                         ValueRange{step(r, loop.getRegionIterArgs()[0])});
    return loop.getResult(0);
  };
  Value bigL =
      sigmoid ? Value()
              : splitLoop(ValueRange{cf(0.0)}, [&](Value r, Value sum) {
                  return buildMergeRowSum(b, loc, sum, load(a.add(mBase, r)),
                                          load(a.add(lBase, r)), bigM);
                });
  if (sink)
    bigL = buildMergeRowSum(b, loc, bigL, sink, cf(1.0), bigM);
  Value val = splitLoop(ValueRange{cf(0.0)}, [&](Value r, Value acc) {
    Value accS = load(a.add(a.mul(r, ci(dv)), col));
    if (sigmoid)
      return Value(arith::AddFOp::create(b, loc, acc, accS));
    Value ls = load(a.add(lBase, r));
    return buildMergeOutputStep(b, loc, acc, load(a.add(mBase, r)), ls,
                                buildNormalizedOutput(b, loc, accS, ls), bigM,
                                bigL);
  });
  Type outElem = cast<MemRefType>(out.getType()).getElementType();
  if (outElem != f32)
    val = arith::TruncFOp::create(b, loc, outElem, val);
  memref::StoreOp::create(b, loc, val, out, phys(bb, h, i, col));
  if (lse) {
    auto first = scf::IfOp::create(b, loc, a.eq(col, ci(0)), false);
    b.setInsertionPointToStart(&first.getThenRegion().front());
    memref::StoreOp::create(b, loc, buildLogSumExp(b, loc, bigM, bigL), lse,
                            ValueRange{bb, h, i});
  }
}

static InFlightDiagnostic gpuError(Operation *op, const Twine &msg) {
  return op->emitOpError("cannot be lowered to the GPU: ") << msg;
}

LogicalResult gpu_codegen::checkGpuFunctionShape(func::FuncOp fn,
                                                 Operation *op) {
  Block &body = fn.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (&body.front() != op || op->getNextNode() != ret ||
      ret.getOperands() != op->getResults())
    return gpuError(op, "the function must consist of this op alone, "
                        "returning its results in order");
  for (Value operand : op->getOperands())
    if (!isa<BlockArgument>(operand) ||
        cast<BlockArgument>(operand).getOwner() != &body)
      return gpuError(op, "every operand must be an argument of the function");
  return success();
}

LogicalResult gpu_codegen::checkGpuKernelOptions(Operation *op,
                                                 const GpuKernelOptions &opts) {
  if (opts.warps != 0 && opts.warps != 1 && opts.warps != 2 &&
      opts.warps != 4 && opts.warps != 8)
    return gpuError(op, "warps must be 1, 2, 4 or 8 (got ")
           << opts.warps << ")";
  if (opts.tileK < 16 || opts.tileK > 128 || opts.tileK % 16 != 0)
    return gpuError(op, "tile-k must be a multiple of 16 in [16, 128] (got ")
           << opts.tileK << ")";
  if (opts.warpRows != 0 && opts.warpRows != 16 && opts.warpRows != 32)
    return gpuError(op, "warp-rows must be 16 or 32 (got ")
           << opts.warpRows << ")";
  return success();
}

LogicalResult gpu_codegen::checkGpuSupported(func::FuncOp fn, AttentionOp op,
                                             const GpuKernelOptions &opts) {
  if (failed(checkGpuFunctionShape(fn, op)))
    return failure();
  return checkGpuOpSupported(op, opts);
}

LogicalResult gpu_codegen::checkGpuOpSupported(AttentionOp op,
                                               const GpuKernelOptions &opts) {
  auto fail = [&](const Twine &msg) { return gpuError(op, msg); };
  Type elem = cast<ShapedType>(op.getQuery().getType()).getElementType();
  // (The verifier makes q, k, v and out share one element type, except
  // quantized K/V, which the tile copies decode.)
  if (!elem.isF16() && !elem.isBF16() && !elem.isF32())
    return fail("q, k and v must be f16, bf16 or f32 (got ") << elem << ")";
  int64_t d = op.getHeadDimQK(), dv = op.getHeadDimV();
  for (int64_t x : {d, dv})
    if (ShapedType::isDynamic(x) || x % 16 != 0 || x > 256 || x == 0)
      return fail("head dimensions must be static multiples of 16 up to 256 "
                  "(got Dqk = ")
             << (ShapedType::isDynamic(d) ? -1 : d)
             << ", Dv = " << (ShapedType::isDynamic(dv) ? -1 : dv) << ")";
  return checkGpuKernelOptions(op, opts);
}

func::FuncOp gpu_codegen::detail::createHostFunction(
    OpBuilder &b, func::FuncOp fn, TypeRange results, int64_t warps,
    int64_t tileQ, const GpuKernelOptions &opts) {
  SmallVector<Type> inputs;
  for (Type t : fn.getArgumentTypes())
    inputs.push_back(toMemRef(t));
  for (Type t : results)
    inputs.push_back(toMemRef(t));
  auto hostFn = func::FuncOp::create(b, fn.getLoc(), fn.getName(),
                                     b.getFunctionType(inputs, {}));
  hostFn.setVisibility(fn.getVisibility());
  for (NamedAttribute attr : fn->getDiscardableAttrs())
    hostFn->setAttr(attr.getName(), attr.getValue());
  hostFn->setAttr("attn.gpu_kernel", b.getUnitAttr());
  LoweringChoice choice;
  choice.form = "gpu";
  choice.warps = warps;
  choice.tileQ = tileQ;
  choice.tileK = opts.tileK;
  choice.splits = opts.splits;
  recordLoweringChoice(hostFn, choice);
  b.setInsertionPointToStart(hostFn.addEntryBlock());
  return hostFn;
}

void gpu_codegen::detail::replaceWithHostFunction(func::FuncOp fn,
                                                  func::FuncOp hostFn) {
  fn->remove();
  hostFn.setName(fn.getName());
  fn->destroy();
}

LogicalResult gpu_codegen::buildGpuFunction(func::FuncOp fn, AttentionOp op,
                                            const GpuKernelOptions &opts) {
  Location loc = op.getLoc();
  OpBuilder b(fn);
  int64_t warps = chooseWarps(op, opts);
  func::FuncOp gpuFn =
      createHostFunction(b, fn, op->getResultTypes(), warps,
                         warps * chooseWarpRows(op, opts), opts);
  Block *entry = &gpuFn.front();

  // The op's operands, in operand order, as the new arguments.
  SmallVector<Value> operands;
  for (Value operand : op->getOperands())
    operands.push_back(
        entry->getArgument(cast<BlockArgument>(operand).getArgNumber()));
  unsigned numIn = fn.getNumArguments();
  Value outBuf = entry->getArgument(numIn);
  Value lseBuf = op.getLse() ? entry->getArgument(numIn + 1) : Value();

  KernelEmitter emitter(b, loc, op, warps, opts.tileK, opts.splits,
                        chooseWarpRows(op, opts));
  emitter.fnName = fn.getName().str();
  emitter.wgmmaOpt = opts.wgmma;
  emitter.emitHost(operands, outBuf, lseBuf);
  emitter.recordWgmma(gpuFn);
  func::ReturnOp::create(b, loc);
  replaceWithHostFunction(fn, gpuFn);
  return success();
}
