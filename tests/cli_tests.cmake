# Command-line tests (issue 12): the exit status and the message of the generator driver,
# the autoschedule CLI, conv2d_demo and the benchmark tools on bad options, --help, the
# host-only warning, and the CMake helpers' refusal of misspelt keywords.
#
# add_cli_test(<name> LABEL <area> EXIT <status> REGEX <regex> [FILES <path:text>...]
#              COMMAND <command> [args...])
#   Passes when the command exits with <status>, its output matches <regex> and each FILES
#   entry names a file (removed before the run) that then contains <text>
#   (expect_output.cmake). LABEL: its CTest label (tests/CMakeLists.txt lists them).
function(add_cli_test NAME)
    cmake_parse_arguments(A "" "LABEL;EXIT;REGEX" "FILES;COMMAND" ${ARGN})
    if (A_UNPARSED_ARGUMENTS OR NOT A_LABEL OR NOT DEFINED A_EXIT OR NOT A_COMMAND)
        message(FATAL_ERROR "add_cli_test(${NAME}): give LABEL, EXIT, REGEX and COMMAND")
    endif ()
    # An executable target first: its path (add_test only maps a target named first).
    list(GET A_COMMAND 0 exe)
    if (TARGET ${exe})
        list(POP_FRONT A_COMMAND)
        list(PREPEND A_COMMAND "$<TARGET_FILE:${exe}>")
    endif ()
    string(REPLACE ";" "|" files "${A_FILES}")
    add_test(NAME ${NAME}
             COMMAND ${CMAKE_COMMAND} -DEXIT=${A_EXIT} "-DREGEX=${A_REGEX}" "-DFILES=${files}"
                     "-DWORKDIR=${CMAKE_CURRENT_BINARY_DIR}"
                     -P "${CMAKE_CURRENT_LIST_DIR}/expect_output.cmake" -- ${A_COMMAND})
    set_tests_properties(${NAME} PROPERTIES LABELS ${A_LABEL})
endfunction()

# The generator driver (target_sw/SunwayGenGen.cpp).
set(gen_out "${CMAKE_CURRENT_BINARY_DIR}/driver_cli_out")
file(MAKE_DIRECTORY "${gen_out}")
add_cli_test(driver_unknown_target LABEL apps EXIT 1 REGEX "error: unknown target 'x86-64-nosuch'"
             COMMAND layers.generator -g relu -o "${gen_out}" target=x86-64-nosuch)
add_cli_test(driver_unknown_sunway_target LABEL apps EXIT 1 REGEX "error: unknown Sunway target 'sw9'"
             COMMAND layers.generator -g relu -o "${gen_out}" target=sw9)
add_cli_test(driver_help LABEL apps EXIT 0 REGEX "usage: GENERATOR -g NAME"
             COMMAND layers.generator --help)
# schedule=cpu: Halide's CPU schedule, no loop over the CPEs.
add_cli_test(driver_host_only_warning LABEL apps EXIT 0 REGEX "warning: softmax_cpu has no CPE kernel"
             COMMAND layers.generator -g softmax -f softmax_cpu -o "${gen_out}" target=sw26010 schedule=cpu)

# The CMake helpers on a misspelt keyword (tests/cmake_helpers/CMakeLists.txt).
function(add_helper_test CASE REGEX)
    add_cli_test(sw_helpers_${CASE} LABEL apps EXIT 1 REGEX "${REGEX}"
                 COMMAND ${CMAKE_COMMAND} -S "${CMAKE_CURRENT_LIST_DIR}/cmake_helpers"
                         -B "${CMAKE_CURRENT_BINARY_DIR}/cmake_helpers_${CASE}"
                         "-DSW_HELPERS=${PROJECT_SOURCE_DIR}/cmake/SunwayHelpers.cmake" -DCASE=${CASE})
endfunction()
add_helper_test(keyword_before_params "add_sw_library\\(layer\\): unknown argument 'MACHNE'")
add_helper_test(keyword_after_params "add_sw_library\\(layer\\): PARAMS entry 'MACHNE' is not name=value")
add_helper_test(unknown_machine "add_sw_library\\(layer\\): unknown MACHINE 'sw9'")
add_helper_test(generator_keyword "add_sw_generator\\(gen\\): unknown argument 'SOURCE'")
add_helper_test(export_keyword "add_sw_export\\(bundle\\): unknown argument 'LIBRARY'")

# The autoschedule CLI (apps/autoschedule.cpp). The example's generator
# (examples/user_layer, a plain Halide::Generator without a `machine` parameter) stands for a
# generator executable of another project.
add_sw_generator(example.generator SOURCES "${PROJECT_SOURCE_DIR}/examples/user_layer/scaled_residual_generator.cpp")
set(example_layer -g scaled_residual batch=2 channels=5 height=7 width=12)
add_cli_test(autoschedule_help LABEL autoscheduler EXIT 0 REGEX "Usage: autoschedule .*--generator.*--tune"
             COMMAND autoschedule --help)
add_cli_test(autoschedule_unknown_option LABEL autoscheduler EXIT 1 REGEX "error: The following argument was not expected: --frobnicate"
             COMMAND autoschedule -g relu --frobnicate)
add_cli_test(autoschedule_not_name_value LABEL autoscheduler EXIT 1 REGEX "error: params: 'channels' is not name=value"
             COMMAND autoschedule -g relu channels)
add_cli_test(autoschedule_halide_error_without_prefix LABEL autoscheduler EXIT 1
             REGEX "(^|\n)error: Generator relu has no GeneratorParam named: channels"
             COMMAND autoschedule -g relu channels=3)
add_cli_test(autoschedule_tune_range LABEL autoscheduler EXIT 1 REGEX "error: --tune: .*0 to 1000"
             COMMAND autoschedule -g relu --tune 5000)
add_cli_test(autoschedule_missing_generator_file LABEL autoscheduler EXIT 1 REGEX "error: --generator: File does not exist: /nonexistent/gen"
             COMMAND autoschedule --generator /nonexistent/gen -g relu)
add_cli_test(autoschedule_generator_without_name LABEL autoscheduler EXIT 1 REGEX "error: --generator requires -g"
             COMMAND autoschedule --generator $<TARGET_FILE:example.generator>)
add_cli_test(autoschedule_generator_unknown_name LABEL autoscheduler EXIT 1
             REGEX "error: .*example.generator failed \\(exit status 1\\): unknown generator 'nosuch'. this executable has: scaled_residual"
             COMMAND autoschedule --generator $<TARGET_FILE:example.generator> -g nosuch)
add_cli_test(autoschedule_generator LABEL autoscheduler EXIT 0
             REGEX "scaled_residual on sw26010: tile .*predicted: [0-9.]+ ms.*if no P0/P1 pairing: [0-9.]+ ms, [0-9.]+ GFLOPS. unpaired/paired [1-9][0-9.]*.*lowered: LDM peak [1-9][0-9]* of 57344 bytes per CPE.*gpu_blocks.*1 CPE kernel"
             COMMAND autoschedule --generator $<TARGET_FILE:example.generator> ${example_layer})
add_cli_test(autoschedule_generator_tune LABEL autoscheduler EXIT 0
             REGEX "\\[tune 2/2\\] .* emulator [0-9.]+ ms.*tuning: kept plan [12] of 2"
             COMMAND autoschedule --generator $<TARGET_FILE:example.generator> ${example_layer} --tune 2)
add_cli_test(autoschedule_generator_pro LABEL autoscheduler EXIT 0 REGEX "LDM peak [1-9][0-9]* of 229376 bytes per CPE"
             COMMAND autoschedule --generator $<TARGET_FILE:example.generator> ${example_layer} --machine sw26010-pro)
add_cli_test(autoschedule_output_is_directory LABEL autoscheduler EXIT 1 REGEX "error: -o .*: is a directory"
             COMMAND autoschedule -g relu -o "${CMAKE_CURRENT_BINARY_DIR}")
add_cli_test(autoschedule_output_unwritable LABEL autoscheduler EXIT 1 REGEX "error: -o /nonexistent/dir/s.h: cannot be written"
             COMMAND autoschedule -g relu -o /nonexistent/dir/s.h)
add_cli_test(autoschedule_net_output_not_directory LABEL autoscheduler EXIT 1 REGEX "error: -o /dev/null: not a writable directory"
             COMMAND autoschedule --net alexnet -o /dev/null)
add_cli_test(autoschedule_net_parameters LABEL autoscheduler EXIT 1 REGEX "error: --net takes no generator parameters"
             COMMAND autoschedule --net alexnet batch=2)
# --net --tune 1 -o DIR: every distinct layer built and run on the emulator (AlexNet: 14,
# about 30 s), one header per layer, each an apply_schedule_<layer>.
set(net_out "${CMAKE_CURRENT_BINARY_DIR}/autoschedule_net_headers")
add_cli_test(autoschedule_net_tune_headers LABEL autoscheduler EXIT 0
             REGEX "conv1: tuning: kept plan 1 of 1 \\(emulator [0-9.]+ ms\\).*fc8: tuning: kept plan 1 of 1.*prob: tuning: kept plan 1 of 1.*total: predicted .*wrote 14 schedule headers to"
             FILES "${net_out}/conv1.schedule.h:apply_schedule_conv1" "${net_out}/fc8.schedule.h:apply_schedule_fc8"
             COMMAND autoschedule --net alexnet --tune 1 -o "${net_out}")
set_tests_properties(autoschedule_net_tune_headers PROPERTIES TIMEOUT 300)

# conv2d_demo: no options but --help.
add_cli_test(conv2d_demo_help LABEL apps EXIT 0 REGEX "Usage: conv2d_demo" COMMAND conv2d_demo --help)
add_cli_test(conv2d_demo_unexpected_argument LABEL apps EXIT 1 REGEX "error: The following argument was not expected: extra"
             COMMAND conv2d_demo extra)

# The job model on a chip of each machine (dist/JobModel.h): SW26010's four core groups per
# node, the SW26010-Pro's six (one MPI rank each): 1 node = 6 ranks, 6 images at once.
add_cli_test(mpi_projection_sw26010 LABEL mpi EXIT 0
             REGEX "4 core groups per node.*     1      4        4 "
             COMMAND mpi_projection --per-image-ms 10 --max-nodes 2)
add_cli_test(mpi_projection_pro LABEL mpi EXIT 0
             REGEX "6 core groups per node.*     1      6        6 "
             COMMAND mpi_projection --per-image-ms 10 --machine sw26010-pro --max-nodes 2)
