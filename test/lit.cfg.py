# -*- Python -*-
import os
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "Inputs",
                   "Consumers"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%attn_src_root", config.attn_src_root))
config.substitutions.append(("%mlir_lib_dir", config.mlir_lib_dir))
# The fake CUDA driver of the GPU runtime's tests (test/GPURuntime).
config.substitutions.append(
    ("%fake_cuda", os.path.join(config.attn_obj_root, "lib", "libattn_fake_cuda.so")))
config.substitutions.append(("%attn_lib_dir", os.path.join(config.attn_obj_root, "lib")))
config.substitutions.append(("%attn_tools_dir", config.attn_tools_dir))
config.substitutions.append(
    ("%capi_devices",
     os.path.join(config.attn_obj_root, "test", "CAPI", "capi-devices")))
config.substitutions.append(
    ("%call_gpu_kernel",
     os.path.join(config.attn_obj_root, "test", "GPURuntime", "call-gpu-kernel")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.attn_tools_dir, config.llvm_tools_dir]
tools = ["attn-opt", "attn-run", "mlir-opt", "mlir-runner", "mlir-translate", "opt", "llc", "llvm-nm", "attn-compile",
         "attn-gpu-info", "attn-paged-decode-loop"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# A C compiler for the ahead-of-time tests (test/Target/aot-*.mlir): they link
# an object compiled from a spec into a small C driver.
import shutil
for cc in ("cc", "gcc", "clang"):
    path = shutil.which(cc)
    if path:
        config.available_features.add("host-cc")
        config.substitutions.append(("%host_cc", path))
        break

# Tests that name x86-64 CPUs for the JIT (test/Execution/target-cpu.mlir).
import platform
if platform.machine() in ("x86_64", "AMD64"):
    config.available_features.add("x86_64-host")
    # Tests that run AVX-512 instructions (an AVX2-only host, AMD Zen 3,
    # cannot): from the kernel's CPU flags.
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            flags = next((l.split(":", 1)[1].split() for l in cpuinfo
                          if l.startswith("flags")), [])
        if "avx512f" in flags:
            config.available_features.add("avx512-host")
        # Tests that must take the AMX tile products (Sapphire Rapids and
        # later): the kernel grants the state on request (Linux 5.16+).
        if "amx_tile" in flags and "amx_bf16" in flags:
            config.available_features.add("amx-host")
    except OSError:
        pass

# Tests that generate AArch64 code (test/Target/aarch64-*, the AArch64 cases of
# test/Compile) need LLVM's AArch64 backend: Debian's LLVM builds every target,
# an LLVM built for X86 alone does not.
import re
import subprocess
try:
    llc_targets = subprocess.run(
        [os.path.join(config.llvm_tools_dir, "llc"), "--version"],
        capture_output=True, text=True, check=False).stdout
    if re.search(r"^\s+aarch64\s", llc_targets, re.M):
        config.available_features.add("aarch64-registered-target")
except OSError:
    pass

# AArch64 kernels run under qemu-aarch64 (test/Target/aarch64-*.test): Debian's
# cross compiler and C library, and qemu-user, which scripts/install-deps.sh
# installs.
if (shutil.which("aarch64-linux-gnu-g++") and shutil.which("aarch64-linux-gnu-gcc")
        and shutil.which("qemu-aarch64")
        and os.path.exists("/usr/aarch64-linux-gnu/lib/libc.so.6")):
    config.available_features.add("aarch64-cross")

# The CUDA toolkit (ptxas, libdevice) for the GPU pipeline's PTX tests
# (test/GPU): without it they are UNSUPPORTED.
cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
ptxas = shutil.which("ptxas") or os.path.join(cuda_home, "bin", "ptxas")
if os.path.exists(ptxas) and os.path.exists(
        os.path.join(os.path.dirname(os.path.dirname(ptxas)), "nvvm", "libdevice",
                     "libdevice.10.bc")):
    config.available_features.add("cuda-toolkit")
    config.substitutions.append(("%ptxas", ptxas))
config.substitutions.append(("%python", sys.executable if "sys" in dir() else "python3"))
# nvdisasm (PyPI's nvidia-cuda-nvdisasm, installed by scripts/install-tools.sh
# into .venv-tools) for the SASS checks: $ATTN_NVDISASM, PATH, then the venv.
import glob
nvdisasm = os.environ.get("ATTN_NVDISASM") or shutil.which("nvdisasm")
if not nvdisasm:
    found = sorted(glob.glob(os.path.join(
        config.attn_src_root, ".venv-tools", "lib", "python3*", "site-packages",
        "nvidia", "cu*", "bin", "nvdisasm")))
    nvdisasm = found[-1] if found else None
if nvdisasm and os.path.exists(nvdisasm):
    config.available_features.add("nvdisasm")
    config.substitutions.append(("%nvdisasm", nvdisasm))
# The GPU kernel sweep (test/unittests/GPUEmulator), which can dump its specs.
config.substitutions.append(
    ("%gpu_sweep", os.path.join(config.attn_obj_root, "test", "unittests",
                                "AttnGPUKernelSweepTests")))
# Sanitizer builds (scripts/sanitize.sh): tests that load the project's
# instrumented libraries into an uninstrumented program (python3) cannot run.
if getattr(config, "attn_sanitize", ""):
    config.available_features.add("sanitizer")
