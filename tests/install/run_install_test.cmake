# Installs the build into a fresh prefix, builds tests/install/consumer against it with
# find_package(tilejit), and runs the consumer (which compiles a kernel from the embedded templates).
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer -B ${WORK_DIR}/build -G Ninja
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
# The same program built without CMake, with only what pkg-config says (and the compiler's default
# standard: the flags must carry -std=c++20).
find_program(PKG_CONFIG NAMES pkg-config pkgconf REQUIRED)
file(GLOB_RECURSE pc_files ${WORK_DIR}/prefix/*/tilejit.pc)
if(NOT pc_files)
  message(FATAL_ERROR "no tilejit.pc under ${WORK_DIR}/prefix")
endif()
list(GET pc_files 0 pc_file)
get_filename_component(pc_dir ${pc_file} DIRECTORY)
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs tilejit RESULT_VARIABLE rc OUTPUT_VARIABLE pc_flags ERROR_VARIABLE err
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs tilejit failed (${rc}): ${err}")
endif()
message(STATUS "pkg-config tilejit: ${pc_flags}")
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
run(c++ -O1 ${SOURCE_DIR}/tests/install/consumer/main.cpp -o ${WORK_DIR}/consumer_pkgconfig ${pc_flags})

# Run both from an empty directory with no template directory set: the installed library is self-contained.
file(MAKE_DIRECTORY ${WORK_DIR}/run)
foreach(consumer ${WORK_DIR}/build/consumer ${WORK_DIR}/consumer_pkgconfig)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=TILEJIT_TEMPLATE_DIR TILEJIT_ARCH=sm_90a ${consumer}
                  WORKING_DIRECTORY ${WORK_DIR}/run RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "${consumer}: ${out}${err}")
  if(NOT rc EQUAL 0 OR NOT out MATCHES "compiled elementwise_" OR NOT out MATCHES "user kernel axpb<256> (compiled for sm_90a|launched)")
    message(FATAL_ERROR "consumer ${consumer} failed (${rc}): ${out}\n${err}")
  endif()
endforeach()
