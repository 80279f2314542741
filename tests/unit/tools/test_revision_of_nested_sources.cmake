# Regression: bench/run.sh builds `git archive` snapshots unpacked inside this checkout, and
# their --version reported this checkout's revision. Sources that are not the top of their
# own git work tree get "unknown revision" (or the MSKMOCK_REVISION passed in).
#   cmake -DROOT=<source dir> -DWORK=<scratch dir> -P test_revision_of_nested_sources.cmake
set(src "${WORK}/nested-src")
file(REMOVE_RECURSE "${src}")
file(MAKE_DIRECTORY "${src}")
execute_process(COMMAND ${CMAKE_COMMAND} -DSRC=${src} -DOUT=${src}/revision.h -DREV=
                        -P ${ROOT}/tools/revision.cmake RESULT_VARIABLE rc)
file(READ "${src}/revision.h" got)
if(NOT rc EQUAL 0 OR NOT got MATCHES "\"unknown revision\"")
  message(FATAL_ERROR "nested sources got: ${got}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -DSRC=${src} -DOUT=${src}/revision.h -DREV=abc1234
                        -P ${ROOT}/tools/revision.cmake RESULT_VARIABLE rc)
file(READ "${src}/revision.h" got)
if(NOT got MATCHES "\"abc1234\"")
  message(FATAL_ERROR "a given revision got: ${got}")
endif()
file(REMOVE_RECURSE "${src}")
