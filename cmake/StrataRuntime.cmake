# What every runtime library (base, VM, HAL, hal module, drivers, C API)
# shares: its warnings, and the switches an embedder may use to make the
# runtime smaller (docs/embedding.md, "Size"). A full build keeps every
# feature; the switches only take away.
option(STRATA_STATUS_MESSAGES "Errors carry messages naming expected and actual values (OFF: codes only)" ON)
option(STRATA_TRACING "The runtime can report to a tracer (run-module --trace); OFF compiles the reporting away" ON)
option(STRATA_SIZE_OPTIMIZED
  "Build the runtime libraries for size: no C++ exceptions (running out of memory ends the process) and no RTTI, each function in its own section for the linker to drop, link-time optimization" OFF)

# Definitions that change what inline code in the headers does apply to the
# whole build, so every object agrees.
if(NOT STRATA_STATUS_MESSAGES)
  add_compile_definitions(STRATA_STATUS_MESSAGES=0)
endif()
if(NOT STRATA_TRACING)
  add_compile_definitions(STRATA_TRACING=0)
endif()
if(STRATA_SIZE_OPTIMIZED)
  include(CheckIPOSupported)
  check_ipo_supported(RESULT _strata_ipo OUTPUT _strata_ipo_error LANGUAGES CXX)
  if(NOT _strata_ipo)
    message(FATAL_ERROR "STRATA_SIZE_OPTIMIZED needs link-time optimization, which this toolchain lacks: ${_strata_ipo_error}")
  endif()
  include(CheckLinkerFlag)
  check_linker_flag(CXX "-Wl,-z,pack-relative-relocs" _strata_relr)
  # clang's LTO objects need lld to link, in the library and in every
  # program that links the runtime's archives.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    add_link_options(-fuse-ld=lld)
  endif()
endif()

# strata_runtime_library(TARGET): the warnings of the runtime and, with
# STRATA_SIZE_OPTIMIZED, its size options.
function(strata_runtime_library target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  if(NOT STRATA_STATUS_MESSAGES)
    # Without messages the error constructors drop their arguments unread, so
    # what only a message used is left unused on purpose.
    target_compile_options(${target} PRIVATE -Wno-unused-variable -Wno-unused-function
                                             $<$<CXX_COMPILER_ID:Clang>:-Wno-unused-private-field>)
  endif()
  if(STRATA_SIZE_OPTIMIZED)
    target_compile_options(${target} PRIVATE -fno-exceptions -fno-rtti -fno-asynchronous-unwind-tables
                                             -ffunction-sections -fdata-sections)
    set_target_properties(${target} PROPERTIES INTERPROCEDURAL_OPTIMIZATION ON
                                               CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
    get_target_property(_type ${target} TYPE)
    if(_type STREQUAL "SHARED_LIBRARY" OR _type STREQUAL "EXECUTABLE")
      target_link_options(${target} PRIVATE -Wl,--gc-sections -Wl,-O1)
      # Relative relocations (vtables, the handler and op tables) packed as
      # RELR: a bitmap instead of 24 bytes each.
      if(_strata_relr)
        target_link_options(${target} PRIVATE -Wl,-z,pack-relative-relocs)
      endif()
      if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
        # Identical functions folded into one; repeated instruction sequences
        # outlined into shared functions (the machine outliner, which AArch64
        # runs at -Oz anyway and x86-64 only when asked).
        target_link_options(${target} PRIVATE -Wl,--icf=all -Wl,-mllvm,-enable-machine-outliner=always)
      endif()
    endif()
  endif()
endfunction()
