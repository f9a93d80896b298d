# cmake -DEXIT=<status> -DREGEX=<regex> [-DWORKDIR=<dir>] -P expect_output.cmake -- <command> [args...]
# Runs the command and fails unless it exits with <status> and its output (stdout and stderr
# together) matches <regex>. The CLI tests of cli_tests.cmake use it: CTest's
# PASS_REGULAR_EXPRESSION alone ignores the exit status.
set(cmd "")
set(seen_separator OFF)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach (i RANGE 1 ${last})
    if (seen_separator)
        list(APPEND cmd "${CMAKE_ARGV${i}}")
    elseif (CMAKE_ARGV${i} STREQUAL "--")
        set(seen_separator ON)
    endif ()
endforeach ()
if (NOT cmd)
    message(FATAL_ERROR "expect_output.cmake: no command after --")
endif ()
if (NOT WORKDIR)
    set(WORKDIR "${CMAKE_CURRENT_BINARY_DIR}")
endif ()
execute_process(COMMAND ${cmd} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out
                WORKING_DIRECTORY "${WORKDIR}")
if (NOT "${status}" STREQUAL "${EXIT}")
    message(FATAL_ERROR "exit status ${status}, expected ${EXIT}; output:\n${out}")
endif ()
if (NOT out MATCHES "${REGEX}")
    message(FATAL_ERROR "output does not match '${REGEX}':\n${out}")
endif ()
message(STATUS "exit ${status}, output matches '${REGEX}'")
