# Writes OUT (revision.h) with the git revision of SRC, run at every build by CMakeLists.txt.
# REV, when not empty, is used as given: a build without .git (a Docker build context, a
# release tarball) passes it in. The file is rewritten only when the revision changed, so an
# unchanged tree recompiles nothing.
if(NOT REV)
  execute_process(COMMAND git -C "${SRC}" describe --always --dirty --abbrev=12
                  OUTPUT_VARIABLE REV OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT REV)
    set(REV "unknown revision")
  endif()
endif()
set(text "#define MSKMOCK_REVISION \"${REV}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE "${OUT}" "${text}")
endif()
