# Command-line tests (issue 12): the exit status and the message of the generator driver,
# the autoschedule CLI, conv2d_demo and the benchmark tools on bad options, --help, the
# host-only warning, and the CMake helpers' refusal of misspelt keywords.
#
# add_cli_test(<name> EXIT <status> REGEX <regex> COMMAND <command> [args...])
#   Passes when the command exits with <status> and its output matches <regex>
#   (expect_output.cmake).
function(add_cli_test NAME)
    cmake_parse_arguments(A "" "EXIT;REGEX" "COMMAND" ${ARGN})
    if (A_UNPARSED_ARGUMENTS OR NOT DEFINED A_EXIT OR NOT A_COMMAND)
        message(FATAL_ERROR "add_cli_test(${NAME}): give EXIT, REGEX and COMMAND")
    endif ()
    # An executable target first: its path (add_test only maps a target named first).
    list(GET A_COMMAND 0 exe)
    if (TARGET ${exe})
        list(POP_FRONT A_COMMAND)
        list(PREPEND A_COMMAND "$<TARGET_FILE:${exe}>")
    endif ()
    add_test(NAME ${NAME}
             COMMAND ${CMAKE_COMMAND} -DEXIT=${A_EXIT} "-DREGEX=${A_REGEX}"
                     "-DWORKDIR=${CMAKE_CURRENT_BINARY_DIR}"
                     -P "${CMAKE_CURRENT_LIST_DIR}/expect_output.cmake" -- ${A_COMMAND})
endfunction()

# The generator driver (target_sw/SunwayGenGen.cpp).
set(gen_out "${CMAKE_CURRENT_BINARY_DIR}/driver_cli_out")
file(MAKE_DIRECTORY "${gen_out}")
add_cli_test(driver_unknown_target EXIT 1 REGEX "error: unknown target 'x86-64-nosuch'"
             COMMAND layers.generator -g relu -o "${gen_out}" target=x86-64-nosuch)
add_cli_test(driver_unknown_sunway_target EXIT 1 REGEX "error: unknown Sunway target 'sw9'"
             COMMAND layers.generator -g relu -o "${gen_out}" target=sw9)
add_cli_test(driver_help EXIT 0 REGEX "usage: GENERATOR -g NAME"
             COMMAND layers.generator --help)
# schedule=cpu: Halide's CPU schedule, no loop over the CPEs.
add_cli_test(driver_host_only_warning EXIT 0 REGEX "warning: softmax_cpu has no CPE kernel"
             COMMAND layers.generator -g softmax -f softmax_cpu -o "${gen_out}" target=sw26010 schedule=cpu)

# The CMake helpers on a misspelt keyword (tests/cmake_helpers/CMakeLists.txt).
function(add_helper_test CASE REGEX)
    add_cli_test(sw_helpers_${CASE} EXIT 1 REGEX "${REGEX}"
                 COMMAND ${CMAKE_COMMAND} -S "${CMAKE_CURRENT_LIST_DIR}/cmake_helpers"
                         -B "${CMAKE_CURRENT_BINARY_DIR}/cmake_helpers_${CASE}"
                         "-DSW_HELPERS=${PROJECT_SOURCE_DIR}/cmake/SunwayHelpers.cmake" -DCASE=${CASE})
endfunction()
add_helper_test(keyword_before_params "add_sw_library\\(layer\\): unknown argument 'MACHNE'")
add_helper_test(keyword_after_params "add_sw_library\\(layer\\): PARAMS entry 'MACHNE' is not name=value")
add_helper_test(unknown_machine "add_sw_library\\(layer\\): unknown MACHINE 'sw9'")
add_helper_test(generator_keyword "add_sw_generator\\(gen\\): unknown argument 'SOURCE'")
add_helper_test(export_keyword "add_sw_export\\(bundle\\): unknown argument 'LIBRARY'")
