// attn-run --target-cpu / --target-features: the JIT generates code for the
// chosen CPU (its register tiles and vector width; LLVM's target machine for
// it), which runs here when this host has every feature the CPU implies. Any
// x86-64 host with AVX2 and FMA runs both haswell and the x86-64 baseline.
// REQUIRES: x86_64-host
//
// RUN: attn-run %s --target-cpu=haswell --verify --reps=1 --report=%t.haswell.json | FileCheck %s --check-prefix=HASWELL
// HASWELL:      compile:
// HASWELL-NEXT: target: haswell (AVX2+FMA, 16 x 256-bit vector registers)
// HASWELL-NEXT: lowering: form fused, tiles {{[0-9]+}} x {{[0-9]+}}, register tile 6 x 16 (256-bit)
// HASWELL:      out: f32 [1, 2, 37, 16] {{.*}} [ok
// RUN: FileCheck %s --check-prefix=REPORT < %t.haswell.json
// REPORT:      "target": {
// REPORT-NEXT:   "cpu": "haswell",
// REPORT-NEXT:   "isa": "AVX2+FMA",
// REPORT-NEXT:   "features": ""
// REPORT-NEXT: },
//
// RUN: attn-run %s --target-cpu=x86-64 --verify --reps=1 | FileCheck %s --check-prefix=BASELINE
// BASELINE:      compile:
// BASELINE-NEXT: target: x86-64 (SSE2, 16 x 128-bit vector registers)
// BASELINE:      out: f32 [1, 2, 37, 16] {{.*}} [ok
//
// Features over the CPU's own, in every form.
// RUN: attn-run %s --target-cpu=haswell --target-features=-avx2,-fma --form=naive --verify --reps=1 | FileCheck %s --check-prefix=NOAVX2
// RUN: attn-run %s --target-cpu=haswell --target-features=-avx2,-fma --form=decode --verify --reps=1 | FileCheck %s --check-prefix=NOAVX2
// NOAVX2: target: haswell (AVX, 16 x 256-bit vector registers)
// NOAVX2-NEXT: lowering: form {{naive|decode}}
// NOAVX2: out: f32 [1, 2, 37, 16] {{.*}} [ok
//
// Without the options: the host.
// RUN: attn-run %s --reps=1 | FileCheck %s --check-prefix=HOST
// HOST: target: {{.*}}, host)
//
// RUN: not attn-run %s --target-cpu=nosuchcpu 2>&1 | FileCheck %s --check-prefix=UNKNOWN-CPU
// UNKNOWN-CPU: attn-run: error: compilation failed: unknown target CPU 'nosuchcpu' for {{.*}} (LLVM names such as haswell
// UNKNOWN-CPU-NOT: compile:
//
// RUN: not attn-run %s --target-cpu=haswell --target-features=avx2 2>&1 | FileCheck %s --check-prefix=NO-SIGN
// NO-SIGN: attn-run: error: compilation failed: target feature 'avx2' must start with '+' or '-' (for example +avx2,-avx512f)
//
// RUN: not attn-run %s --target-features=+nosuchfeature 2>&1 | FileCheck %s --check-prefix=UNKNOWN-FEATURE
// UNKNOWN-FEATURE: attn-run: error: compilation failed: unknown target feature '+nosuchfeature' for
//
// Code for a CPU with instructions this host lacks is refused before it is
// generated, not run into an illegal instruction. AVX10.2 (Diamond Rapids) is
// missing on the hosts this runs on (Sapphire / Emerald Rapids, Zen 3 / 4);
// test/unittests/CpuTargetTest.cpp checks featuresMissingOnHost on any host.
// RUN: not attn-run %s --target-features=+avx10.2 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: attn-run: error: compilation failed: cannot run code for target CPU '{{.+}}' with features '+avx10.2' on this host ({{.+}}), which lacks: {{.*}}avx10.2
//
// The same instructions for another operating system do not run here
// either; a triple of this architecture that names no system (x86_64) or
// another spelling of this one (x86_64-linux-gnu) does.
// RUN: not attn-run %s --target-triple=x86_64-pc-windows-msvc 2>&1 | FileCheck %s --check-prefix=OTHEROS
// OTHEROS: attn-run: error: compilation failed: cannot run code for target CPU '{{.*}}' of x86_64-pc-windows-msvc on this host ({{.*}}), which lacks: operating system windows
// RUN: attn-run %s --target-triple=x86_64 --verify --reps=1 | FileCheck %s --check-prefix=SAMEOS
// RUN: attn-run %s --target-triple=x86_64-linux-gnu --verify --reps=1 | FileCheck %s --check-prefix=SAMEOS
// SAMEOS: out: f32 [1, 2, 37, 16] {{.*}} [ok

func.func @f(%q: tensor<1x2x37x16xf32>, %k: tensor<1x1x45x16xf32>,
             %v: tensor<1x1x45x16xf32>) -> tensor<1x2x37x16xf32> {
  %out = attn.attention q(%q : tensor<1x2x37x16xf32>) k(%k : tensor<1x1x45x16xf32>)
      v(%v : tensor<1x1x45x16xf32>) causal(bottom_right) -> tensor<1x2x37x16xf32>
  return %out : tensor<1x2x37x16xf32>
}
