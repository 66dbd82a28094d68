# Compiles one GLSL compute kernel to SPIR-V 1.6 for Vulkan 1.3, names its
# entry point after the kernel (glslc calls every GLSL entry point "main"),
# and validates the result.
#
# usage: cmake -DGLSLC=... -DSPIRV_DIS=... -DSPIRV_AS=... -DSPIRV_VAL=...
#              -DSOURCE=<name.comp> -DNAME=<name> -DOUTPUT=<name.spv> -P spirv.cmake
foreach(var GLSLC SPIRV_DIS SPIRV_AS SPIRV_VAL SOURCE NAME OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "spirv.cmake: -D${var}=... is required")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "spirv.cmake: ${ARGN} failed (${result}):\n${out}${err}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

run(${GLSLC} --target-env=vulkan1.3 -fshader-stage=compute -O -o ${OUTPUT}.main.spv ${SOURCE})
run(${SPIRV_DIS} --raw-id ${OUTPUT}.main.spv)
string(REGEX REPLACE "(OpEntryPoint GLCompute %[0-9]+ )\"main\"" "\\1\"${NAME}\"" renamed "${run_output}")
if(renamed STREQUAL run_output)
  message(FATAL_ERROR "spirv.cmake: ${SOURCE} has no GLCompute entry point named main")
endif()
file(WRITE ${OUTPUT}.spvasm "${renamed}")
run(${SPIRV_AS} --target-env vulkan1.3 -o ${OUTPUT} ${OUTPUT}.spvasm)
run(${SPIRV_VAL} --target-env vulkan1.3 ${OUTPUT})
