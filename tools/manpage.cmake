# Writes OUT (mskmock.1) from BIN --man, run by CMakeLists.txt after the binary is linked.
execute_process(COMMAND "${BIN}" --man OUTPUT_FILE "${OUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${BIN} --man failed: ${rc}")
endif()
