# Install rules and the CMake package (find_package(Attn)), in two
# components:
#   Runtime   libattn_runtime, libattn_gpu_runtime, attn-c/Kernel.h,
#             attn-c/Gpu.h, attn-gpu-info, the package config: what a
#             program linking attn-compile'd kernels needs (no MLIR, no
#             CUDA toolkit).
#   Compiler  attn-compile, attn-opt, attn-run, libattn_compiler (the C API),
#             attn-c/Compiler.h, attn_add_kernel_library (AttnKernels.cmake).
# Targets: Attn::Runtime, Attn::GPURuntime, Attn::Compiler.
include(CMakePackageConfigHelpers)
set(ATTN_VERSION 0.1.0)
set(ATTN_CMAKE_DIR lib/cmake/Attn)

set_target_properties(AttnRuntime PROPERTIES EXPORT_NAME Runtime)
set_target_properties(AttnGPURuntime PROPERTIES EXPORT_NAME GPURuntime)
set_target_properties(AttnCAPI PROPERTIES EXPORT_NAME Compiler)
# Installed binaries find the project's libraries next to them and MLIR's
# where it was linked from.
foreach(t AttnCAPI attn-compile attn-opt attn-run attn-gpu-info AttnRuntime)
  set_target_properties(${t} PROPERTIES
    INSTALL_RPATH "\$ORIGIN/../lib"
    INSTALL_RPATH_USE_LINK_PATH TRUE)
endforeach()

install(TARGETS AttnRuntime AttnGPURuntime EXPORT AttnRuntimeTargets
  LIBRARY DESTINATION lib COMPONENT Runtime NAMELINK_COMPONENT Runtime)
install(TARGETS attn-gpu-info RUNTIME DESTINATION bin COMPONENT Runtime)
install(FILES include/attn-c/Kernel.h include/attn-c/Gpu.h
  DESTINATION include/attn-c COMPONENT Runtime)
install(EXPORT AttnRuntimeTargets NAMESPACE Attn::
  DESTINATION ${ATTN_CMAKE_DIR} COMPONENT Runtime)

install(TARGETS AttnCAPI EXPORT AttnCompilerTargets
  LIBRARY DESTINATION lib COMPONENT Compiler NAMELINK_COMPONENT Compiler)
install(TARGETS attn-compile attn-opt attn-run
  RUNTIME DESTINATION bin COMPONENT Compiler)
install(FILES include/attn-c/Compiler.h
  DESTINATION include/attn-c COMPONENT Compiler)
install(EXPORT AttnCompilerTargets NAMESPACE Attn::
  DESTINATION ${ATTN_CMAKE_DIR} COMPONENT Compiler)
install(FILES cmake/AttnKernels.cmake
  DESTINATION ${ATTN_CMAKE_DIR} COMPONENT Compiler)

configure_package_config_file(cmake/AttnConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/AttnConfig.cmake
  INSTALL_DESTINATION ${ATTN_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/AttnConfigVersion.cmake
  VERSION ${ATTN_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/AttnConfig.cmake
  ${CMAKE_BINARY_DIR}/cmake/AttnConfigVersion.cmake
  DESTINATION ${ATTN_CMAKE_DIR} COMPONENT Runtime)

# The Python package (ctypes; finds the libraries in ../../ relative to
# itself, i.e. <prefix>/lib).
install(DIRECTORY python/attn DESTINATION lib/python COMPONENT Runtime
  FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
