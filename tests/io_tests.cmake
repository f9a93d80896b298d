# sw_runtime's io/ (runtime/io): PNG loading, ImageNet preprocessing, .npy files, weight stores,
# deterministic weights, label lists. Needs the sw_runtime target (runtime/CMakeLists.txt).
add_executable(io_test ${CMAKE_CURRENT_LIST_DIR}/io_test.cpp)
target_link_libraries(io_test PRIVATE sw_runtime PNG::PNG GTest::gtest_main)
target_compile_definitions(io_test PRIVATE
    SAMPLE_PNG="${PROJECT_SOURCE_DIR}/apps/data/sample.png"
    IMAGENET_CLASSES="${PROJECT_SOURCE_DIR}/apps/data/imagenet_classes.txt")
gtest_discover_tests(io_test DISCOVERY_TIMEOUT 60 PROPERTIES LABELS apps)
