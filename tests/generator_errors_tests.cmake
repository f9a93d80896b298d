# Generator parameters that cannot hurt us (issue 12, item 5), through the driver: absurd
# sizes are `error: <generator>: <param>=<value> is larger than ...` at once, Halide's own
# errors read `error: <what>` (not `error: Error: ...`), and a dense layer of 400,000,000
# input features is scheduled in well under the timeout (the schedules scanned every divisor
# candidate of an extent; now O(sqrt(n))). Uses add_cli_test of cli_tests.cmake.
set(gen_err_out "${CMAKE_CURRENT_BINARY_DIR}/generator_errors_out")
file(MAKE_DIRECTORY "${gen_err_out}")
add_cli_test(generator_extent_too_large LABEL apps EXIT 1
             REGEX "error: conv2d: height=2147483647 is larger than 536870911"
             COMMAND layers.generator -g conv2d -o "${gen_err_out}" target=sw26010 height=2147483647)
add_cli_test(generator_window_too_large LABEL apps EXIT 1
             REGEX "error: pool: stride=2147483647 is larger than 4096"
             COMMAND layers.generator -g pool -o "${gen_err_out}" target=sw26010 stride=2147483647)
add_cli_test(generator_halide_error_without_prefix LABEL apps EXIT 1
             REGEX "(^|\n)error: Generator dense has no GeneratorParam named: nosuch"
             COMMAND layers.generator -g dense -o "${gen_err_out}" target=sw26010 nosuch=1)
add_cli_test(generator_dense_huge_in_features LABEL apps EXIT 0 REGEX ".*"
             COMMAND layers.generator -g dense -f dense_huge -o "${gen_err_out}" target=sw26010
                     in_features=400000000 out_features=1)
set_tests_properties(generator_extent_too_large generator_window_too_large generator_halide_error_without_prefix
                     generator_dense_huge_in_features PROPERTIES TIMEOUT 20)
