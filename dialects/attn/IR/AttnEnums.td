//===- AttnEnums.td - attn dialect enums -------------------*- tablegen -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_IR_ATTNENUMS_TD
#define ATTN_IR_ATTNENUMS_TD

include "mlir/IR/EnumAttr.td"

def Attn_Layout : I32EnumAttr<"Layout",
    "physical dimension order of q, k, v and out", [
      I32EnumAttrCase<"bhnd", 0>,
      I32EnumAttrCase<"bnhd", 1>,
    ]> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    `bhnd` is `[B, H, N, D]` (the seed's and PyTorch's order); `bnhd` is
    `[B, N, H, D]` (FlashAttention's order, and what a head split of a
    projected `[B, N, H*D]` tensor gives without a transpose).
  }];
}

def Attn_CausalAlign : I32EnumAttr<"CausalAlign",
    "alignment of the causal diagonal", [
      I32EnumAttrCase<"top_left", 0>,
      I32EnumAttrCase<"bottom_right", 1>,
    ]> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    `top_left`: query `i` sits at position `p(i) = i` (PyTorch SDPA's
    `is_causal`). `bottom_right`: queries are the newest tokens,
    `p(i) = i + kv_len[b] - Nq` (FlashAttention, decoding with a KV cache).
    The alignment also places the sliding window and ALiBi distances.
  }];
}

def Attn_Normalization : I32EnumAttr<"Normalization",
    "how logits become weights", [
      I32EnumAttrCase<"softmax", 0>,
      I32EnumAttrCase<"sigmoid", 1>,
    ]> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    `softmax`: max-subtracted row softmax over the allowed keys; a row with
    no allowed key gives `out = 0`, `lse = -inf`.
    `sigmoid`: elementwise `sigmoid(s)` weights with no row sum; masked keys
    weigh 0, so a row with no allowed key gives `out = 0`. It has no `lse`.
  }];
}

#endif // ATTN_IR_ATTNENUMS_TD
