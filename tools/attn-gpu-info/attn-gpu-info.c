/*===- attn-gpu-info.c - what the GPU runtime sees ------------------------===*\
|*                                                                            *|
|* Part of the attn project.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * Prints the CUDA devices libattn_gpu_runtime finds, one line each, and
 * exits 0; without a usable GPU prints why on stderr and exits 1.
 */

#include "attn-c/Gpu.h"

#include <stdio.h>

int main(int argc, char **argv) {
  (void)argv;
  if (argc > 1) {
    fprintf(stderr, "usage: attn-gpu-info (no arguments; the environment "
                    "variable ATTN_CUDA_DRIVER names the driver library)\n");
    return 2;
  }
  if (!attn_gpu_available()) {
    fprintf(stderr, "attn-gpu-info: no GPU: %s\n",
            attn_gpu_unavailable_reason());
    return 1;
  }
  int n = attn_gpu_device_count();
  for (int d = 0; d < n; ++d) {
    attn_gpu_device_info_t info;
    if (attn_gpu_device_info(d, &info)) {
      fprintf(stderr, "attn-gpu-info: device %d: %s\n", d,
              attn_gpu_take_error());
      return 1;
    }
    printf("device %d: %s, sm_%d%d, %d SMs, %d MHz, %.1f GiB, "
           "%d KiB shared memory per block, %.0f GB/s memory bandwidth "
           "(driver figures)\n",
           d, info.name, info.compute_capability_major,
           info.compute_capability_minor, info.sm_count, info.clock_khz / 1000,
           info.total_memory_bytes / (1024.0 * 1024.0 * 1024.0),
           info.max_shared_memory_per_block_optin / 1024,
           info.memory_bandwidth_gbs);
  }
  return 0;
}
