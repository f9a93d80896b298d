# \file
# Tests of the emulator's SW26010 timing model; include() this from tests/CMakeLists.txt
# (needs the athread_emu target and GTest). The CPE kernels are checked as strict C99.
include(GoogleTest)
# Also linked by apps/bench/model_calibration (the calibration benchmark runs the same kernels).
add_library(timing_model_test_kernels OBJECT ${CMAKE_CURRENT_LIST_DIR}/timing_model_kernels.c
                                             ${CMAKE_CURRENT_LIST_DIR}/timing_model_dma_kernels.c)
set_target_properties(timing_model_test_kernels PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON
                                                           C_EXTENSIONS OFF)
target_compile_options(timing_model_test_kernels PRIVATE -pedantic-errors -Wall -Wextra -Werror)
target_link_libraries(timing_model_test_kernels PRIVATE athread_emu)

# The runs of those kernels (tests/timing_model_runs.h), shared with model_calibration too.
add_library(timing_model_runs OBJECT ${CMAKE_CURRENT_LIST_DIR}/timing_model_runs.cpp)
target_compile_features(timing_model_runs PRIVATE cxx_std_17)
target_compile_options(timing_model_runs PRIVATE -Wall -Wextra)
target_link_libraries(timing_model_runs PUBLIC timing_model_test_kernels athread_emu)

add_executable(timing_model_test ${CMAKE_CURRENT_LIST_DIR}/timing_model_test.cpp)
target_compile_features(timing_model_test PRIVATE cxx_std_17)
target_compile_options(timing_model_test PRIVATE -Wall -Wextra)
target_include_directories(timing_model_test PRIVATE "${CMAKE_CURRENT_LIST_DIR}/..")  # target_sw/Machine.h
target_link_libraries(timing_model_test PRIVATE timing_model_runs timing_model_test_kernels athread_emu
                                                GTest::gtest_main)
gtest_discover_tests(timing_model_test DISCOVERY_TIMEOUT 60 PROPERTIES LABELS emulator TIMEOUT 300)
