# Installs the build into a scratch prefix, then builds and runs
# tests/consumer twice: via find_package(dirmn) and via pkg-config.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed")
endif()
foreach(mode cmake pkgconfig)
  set(b ${WORK_DIR}/build-${mode})
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${b} -G ${GENERATOR}
                          -DCONSUMER_MODE=${mode} -DCMAKE_PREFIX_PATH=${prefix}
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configuring the ${mode} consumer failed")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${b} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "building the ${mode} consumer failed")
  endif()
  execute_process(COMMAND ${b}/consumer RESULT_VARIABLE rc OUTPUT_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the ${mode} consumer failed: ${out}")
  endif()
  message(STATUS "${mode} consumer: ${out}")
endforeach()
