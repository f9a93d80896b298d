# \file
# Tests of the athread emulator; include() this from tests/CMakeLists.txt (needs the
# athread_emu target and GTest). The CPE kernels are checked as strict C99 so that they
# stay valid input for the real slave compiler.
include(GoogleTest)
add_library(emulator_test_kernels OBJECT ${CMAKE_CURRENT_LIST_DIR}/emulator_kernels.c)
set_target_properties(emulator_test_kernels PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON
                                                       C_EXTENSIONS OFF)
target_compile_options(emulator_test_kernels PRIVATE -pedantic-errors -Wall -Wextra -Werror)
target_link_libraries(emulator_test_kernels PRIVATE athread_emu)

add_executable(emulator_test ${CMAKE_CURRENT_LIST_DIR}/emulator_test.cpp)
target_compile_features(emulator_test PRIVATE cxx_std_17)
target_compile_options(emulator_test PRIVATE -Wall -Wextra)
target_link_libraries(emulator_test PRIVATE emulator_test_kernels athread_emu GTest::gtest_main)
gtest_discover_tests(emulator_test DISCOVERY_TIMEOUT 60 PROPERTIES LABELS emulator)

# The emulator's headers against the sw5cc headers they mirror (typed SIMD intrinsics,
# what slave.h and athread.h declare): compiles small C files with the C compiler.
add_executable(emulator_headers_test ${CMAKE_CURRENT_LIST_DIR}/emulator_headers_test.cpp)
target_compile_features(emulator_headers_test PRIVATE cxx_std_17)
target_compile_options(emulator_headers_test PRIVATE -Wall -Wextra)
target_compile_definitions(emulator_headers_test PRIVATE
    C_COMPILER="${CMAKE_C_COMPILER}"
    EMULATOR_INCLUDE="${PROJECT_SOURCE_DIR}/target_sw/emulator/include")
target_link_libraries(emulator_headers_test PRIVATE GTest::gtest_main)
gtest_discover_tests(emulator_headers_test DISCOVERY_TIMEOUT 60 PROPERTIES LABELS emulator)

# The emulator on the SW26010-Pro: CPE kernels built against include/sw26010-pro as GNU C
# with -D__sw_slave__ (what swgcc -mslave defines), the host test with the Pro's athread.h.
add_library(emulator_pro_test_kernels OBJECT ${CMAKE_CURRENT_LIST_DIR}/emulator_pro_kernels.c)
set_target_properties(emulator_pro_test_kernels PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON
                                                           C_EXTENSIONS ON)
target_compile_definitions(emulator_pro_test_kernels PRIVATE __sw_slave__)
target_compile_options(emulator_pro_test_kernels PRIVATE -Wall -Wextra -Werror)
target_link_libraries(emulator_pro_test_kernels PRIVATE athread_emu_pro)

add_executable(emulator_pro_test ${CMAKE_CURRENT_LIST_DIR}/emulator_pro_test.cpp)
target_compile_features(emulator_pro_test PRIVATE cxx_std_17)
target_compile_options(emulator_pro_test PRIVATE -Wall -Wextra)
target_compile_definitions(emulator_pro_test PRIVATE __sw_host__)
target_link_libraries(emulator_pro_test PRIVATE emulator_pro_test_kernels athread_emu_pro
                                                GTest::gtest_main)
gtest_discover_tests(emulator_pro_test DISCOVERY_TIMEOUT 60 PROPERTIES LABELS emulator)
