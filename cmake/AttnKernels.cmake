# attn_add_kernel_library(<name> SPECS <spec.mlir>...
#                         [PREFIX <prefix>] [FORM naive|fused|decode]
#                         [TARGET_CPU <cpu>] [TARGET_FEATURES <features>]
#                         [SEQUENTIAL] [OPTIONS <attn-compile options>...])
#
# Compiles the spec files with attn-compile into one static library target
# <name> (all their public functions, symbols prefixed with <prefix>,
# default "<name>_"), with the generated header <name>.h on its include
# path. Linking <name> links Attn::Runtime (and libomp unless SEQUENTIAL).
# The compiler is ATTN_COMPILE_EXECUTABLE (set by find_package(Attn
# COMPONENTS Compiler), or the in-tree tool).
function(attn_add_kernel_library name)
  cmake_parse_arguments(ARG "SEQUENTIAL"
    "PREFIX;FORM;TARGET_CPU;TARGET_FEATURES" "SPECS;OPTIONS" ${ARGN})
  if(NOT ARG_SPECS)
    message(FATAL_ERROR "attn_add_kernel_library(${name}): no SPECS")
  endif()
  if(NOT ATTN_COMPILE_EXECUTABLE)
    message(FATAL_ERROR "attn_add_kernel_library(${name}): "
      "ATTN_COMPILE_EXECUTABLE is not set (find_package(Attn COMPONENTS Compiler))")
  endif()
  if(NOT DEFINED ARG_PREFIX)
    set(ARG_PREFIX "${name}_")
  endif()
  # The object links with the project's C toolchain, or its C++ one in a
  # C++-only project.
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if("C" IN_LIST languages)
    set(lang C)
  elseif("CXX" IN_LIST languages)
    set(lang CXX)
  else()
    message(FATAL_ERROR "attn_add_kernel_library(${name}): the project "
      "enables neither C nor CXX (project(... LANGUAGES C) or CXX)")
  endif()
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/attn_kernels/${name}")
  set(obj "${dir}/${name}${CMAKE_${lang}_OUTPUT_EXTENSION}")
  set(header "${dir}/${name}.h")
  set(args --emit=obj -o "${obj}" "--header=${header}" "--prefix=${ARG_PREFIX}")
  if(ARG_FORM)
    list(APPEND args "--form=${ARG_FORM}")
  endif()
  if(ARG_TARGET_CPU)
    list(APPEND args "--target-cpu=${ARG_TARGET_CPU}")
  endif()
  if(ARG_TARGET_FEATURES)
    list(APPEND args "--target-features=${ARG_TARGET_FEATURES}")
  endif()
  if(ARG_SEQUENTIAL)
    list(APPEND args --parallel=false)
  endif()
  set(specs)
  foreach(spec IN LISTS ARG_SPECS)
    get_filename_component(spec "${spec}" ABSOLUTE)
    list(APPEND specs "${spec}")
  endforeach()
  file(MAKE_DIRECTORY "${dir}")
  add_custom_command(OUTPUT "${obj}" "${header}"
    COMMAND ${ATTN_COMPILE_EXECUTABLE} ${specs} ${args} ${ARG_OPTIONS}
    DEPENDS ${specs} ${ATTN_COMPILE_DEPENDS}
    COMMENT "attn-compile ${name}"
    VERBATIM)
  set_source_files_properties("${obj}" PROPERTIES
    EXTERNAL_OBJECT TRUE GENERATED TRUE)
  add_library(${name} STATIC "${obj}" "${header}")
  set_target_properties(${name} PROPERTIES LINKER_LANGUAGE ${lang})
  target_include_directories(${name} PUBLIC "${dir}")
  target_link_libraries(${name} PUBLIC ${ATTN_RUNTIME_TARGET})
  if(NOT ARG_SEQUENTIAL)
    if(NOT ATTN_OPENMP_LIBRARY)
      message(FATAL_ERROR "attn_add_kernel_library(${name}): the kernels "
        "run on OpenMP threads and need LLVM's libomp (Debian: "
        "libomp-22-dev), or pass SEQUENTIAL")
    endif()
    target_link_libraries(${name} PUBLIC "${ATTN_OPENMP_LIBRARY}")
  endif()
  target_link_libraries(${name} PUBLIC m)
endfunction()
