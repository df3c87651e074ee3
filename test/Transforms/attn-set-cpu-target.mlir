// REQUIRES: x86_64-host
// RUN: attn-opt %s --attn-set-cpu-target="target-cpu=znver3" | FileCheck %s --check-prefix=NAMED
// RUN: attn-opt %s --attn-set-cpu-target="target-cpu=haswell target-features='+avx512f, -fma'" | FileCheck %s --check-prefix=FEATURES
// RUN: attn-opt %s --attn-set-cpu-target | FileCheck %s --check-prefix=HOST
// RUN: not attn-opt %s --attn-set-cpu-target="target-cpu=bogus" 2>&1 | FileCheck %s --check-prefix=BADCPU
// RUN: not attn-opt %s --attn-set-cpu-target="target-cpu=haswell target-features=+nosuchfeature" 2>&1 | FileCheck %s --check-prefix=BADFEATURE
// RUN: not attn-opt %s --attn-set-cpu-target="target-features=avx2" 2>&1 | FileCheck %s --check-prefix=NOSIGN

// The CPU the lowering chose its register tiles for is stamped on every
// function with a body (LLVM's optimizer and back end read it per function),
// the triple on the module; declarations are left alone.

// NAMED: module attributes {llvm.target_triple = "{{.+}}"}
// NAMED: llvm.func @f() attributes {target_cpu = "znver3", target_features = #llvm.target_features<[]>}
// NAMED: llvm.func @external()
// NAMED-NOT: target_cpu

// Features as given, blanks removed.
// FEATURES: llvm.func @f() attributes {target_cpu = "haswell", target_features = #llvm.target_features<["+avx512f", "-fma"]>}

// Without options: the host's CPU name and every feature the host reports.
// HOST: llvm.func @f() attributes {target_cpu = "{{.+}}", target_features = #llvm.target_features<["{{[+-]}}{{.+}}

// BADCPU: error: attn: unknown target CPU 'bogus'
// BADFEATURE: error: attn: unknown target feature '+nosuchfeature'
// NOSIGN: error: attn: target feature 'avx2' must start with '+' or '-'
module {
  llvm.func @f() {
    llvm.return
  }
  llvm.func @external()
}
