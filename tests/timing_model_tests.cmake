# \file
# Tests of the emulator's SW26010 timing model; include() this from tests/CMakeLists.txt
# (needs the athread_emu target and GTest). The kernels and their runs are benchlib/'s
# (library sw_benchlib), shared with the calibration benchmark apps/bench/model_calibration.
include(GoogleTest)
add_executable(timing_model_test ${CMAKE_CURRENT_LIST_DIR}/timing_model_test.cpp)
target_compile_features(timing_model_test PRIVATE cxx_std_17)
target_compile_options(timing_model_test PRIVATE -Wall -Wextra)
target_include_directories(timing_model_test PRIVATE "${PROJECT_SOURCE_DIR}")  # target_sw/Machine.h
target_link_libraries(timing_model_test PRIVATE sw_benchlib athread_emu GTest::gtest_main)
gtest_discover_tests(timing_model_test DISCOVERY_TIMEOUT 60 PROPERTIES LABELS emulator TIMEOUT 300)
