# Compiles each of MODELS into SEEDS/<name>.smod and writes its kernels to
# ELF_SEEDS (the fuzz targets' seeds).
foreach(model IN LISTS MODELS)
  get_filename_component(name ${model} NAME_WE)
  execute_process(COMMAND ${COMPILE} ${model} -o ${SEEDS}/${name}.smod --dump-executables=${ELF_SEEDS}/${name}
                  RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "compile-module ${model} failed (${result})")
  endif()
endforeach()
