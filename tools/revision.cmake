# Writes OUT (revision.h) with the git revision of SRC, run at every build by CMakeLists.txt.
# REV, when not empty, is used as given: a build without .git (a Docker build context, a
# release tarball) passes it in. The file is rewritten only when the revision changed, so an
# unchanged tree recompiles nothing.
if(NOT REV)
  # only SRC's own repository: sources unpacked inside another checkout (bench/run.sh's
  # git archive snapshots) must not report that checkout's revision
  execute_process(COMMAND git -C "${SRC}" rev-parse --show-toplevel
                  OUTPUT_VARIABLE top OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  get_filename_component(src_real "${SRC}" REALPATH)
  if(rc EQUAL 0 AND top)
    get_filename_component(top "${top}" REALPATH)
  endif()
  if(rc EQUAL 0 AND top STREQUAL src_real)
    execute_process(COMMAND git -C "${SRC}" describe --always --dirty --abbrev=12
                    OUTPUT_VARIABLE REV OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  endif()
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
