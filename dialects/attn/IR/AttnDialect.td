//===- AttnDialect.td - attn dialect definition ------------*- tablegen -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_IR_ATTNDIALECT_TD
#define ATTN_IR_ATTNDIALECT_TD

include "mlir/IR/OpBase.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "A dialect that states attention variants completely.";
  let description = [{
    The `attn` dialect states an attention computation as one operation whose
    attributes and operands fix its meaning completely: where Q, K and V come
    from, which keys each query may read (causal with explicit alignment,
    sliding window, `kv_len` padding, boolean masks, additive bias, ALiBi),
    the logit soft cap, the normalization and head grouping (MHA, GQA, MQA).

    Lowering passes turn one such specification into several implementations
    (naive, fused online-softmax, decode) that all compute what
    `docs/Semantics.md` defines.
  }];
  let useDefaultAttributePrinterParser = 0;
  // The ops a score_mod or mask_mod region may contain.
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

#endif // ATTN_IR_ATTNDIALECT_TD
