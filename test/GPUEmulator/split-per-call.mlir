// A GPU kernel of dynamic query length chooses split-KV per call: the host
// launches the split-KV kernels (attention_split_per_call, then the merge)
// when the rows of every (batch, K/V head), Nq x G, fit one row tile (64
// rows with 4 warps), and the row-tiled kernel otherwise; one compiled
// kernel serves decode steps and prefill. Each call is checked against the
// f64 reference on the warp-level emulator; the launch count shows which
// path ran. (GQA with G = 2, bottom-right causal, kv_len and a window.)
// RUN: attn-run %s --device=gpu-emulate --size Nq=1,Nk=300 --verify --reps=0 | FileCheck %s --check-prefixes=SPLIT,OK
// RUN: attn-run %s --device=gpu-emulate --size Nq=32,Nk=300 --verify --reps=0 | FileCheck %s --check-prefixes=SPLIT,OK
// RUN: attn-run %s --device=gpu-emulate --size Nq=33,Nk=300 --verify --reps=0 | FileCheck %s --check-prefixes=ONE,OK
// RUN: attn-run %s --device=gpu-emulate --size Nq=150,Nk=300 --verify --reps=0 | FileCheck %s --check-prefixes=ONE,OK
// --gpu-splits=0: never split.
// RUN: attn-run %s --device=gpu-emulate --gpu-splits=0 --size Nq=1,Nk=300 --verify --reps=0 | FileCheck %s --check-prefixes=ONE,OK
// SPLIT: emulate: {{.*}} (2 launches,
// ONE: emulate: {{.*}} (1 launch,
// OK: out: f32 [2, 4, {{[0-9]+}}, 32] {{.*}} [ok
// OK: lse: f32 [2, 4, {{[0-9]+}}] {{.*}} [ok

// The host function holds both: an scf.if on the row-tile count over the
// split-KV chain and the row-tiled launch.
// RUN: attn-run %s --device=gpu-emulate --print-gpu-ir --size Nq=1,Nk=8 --reps=0 | FileCheck %s --check-prefix=IR
// IR:      %[[FITS:.+]] = arith.cmpi eq, %{{.+}}, %c1{{.*}} : index
// IR-NEXT: scf.if %[[FITS]] {
// IR:        gpu.launch async {{.*}} function(@f_attention_split_per_call)
// IR:        gpu.launch async {{.*}} function(@f_merge_per_call)
// IR:      } else {
// IR:        gpu.launch {{.*}} function(@f_attention)
func.func @f(%q: tensor<2x4x?x32xf32>, %k: tensor<2x2x?x32xf32>,
             %v: tensor<2x2x?x32xf32>, %l: tensor<2xi32>)
    -> (tensor<2x4x?x32xf32>, tensor<2x4x?xf32>) {
  %o, %lse = attn.attention q(%q : tensor<2x4x?x32xf32>)
      k(%k : tensor<2x2x?x32xf32>) v(%v : tensor<2x2x?x32xf32>)
      kv_len(%l : tensor<2xi32>) causal(bottom_right) window_left(200)
      -> tensor<2x4x?x32xf32>, tensor<2x4x?xf32>
  return %o, %lse : tensor<2x4x?x32xf32>, tensor<2x4x?xf32>
}
