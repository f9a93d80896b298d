# \file
# The ONNX conformance node tests (Debian's libonnx-testdata) of Conv, MaxPool, AveragePool,
# Gemm, Relu, Softmax and LRN on the emulated SW26010; include() this from
# tests/CMakeLists.txt (needs the targets layers.generator and athread_emu, GTest and
# Halide). Each case builds its layer at run time (jit/jit_layer.h): the
# generated library takes the athread symbols from the test executable, which therefore
# links the emulator as a whole archive and exports its symbols.
#
# Needs Debian's libonnx-dev and libprotobuf-dev (the ONNX protobuf classes) and
# libonnx-testdata (the data, found at ONNX_NODE_TEST_DIR).
include(GoogleTest)

find_package(Protobuf)
find_package(ONNX CONFIG)
set(ONNX_NODE_TEST_DIR "/usr/share/libonnx-testdata/data/node"
    CACHE PATH "the data/node folder of the ONNX test data (Debian: libonnx-testdata)")

if (NOT Protobuf_FOUND OR NOT TARGET onnx_proto)
    message(WARNING "ONNX node tests disabled: install libonnx-dev and libprotobuf-dev")
    return()
endif ()
if (NOT EXISTS "${ONNX_NODE_TEST_DIR}/test_relu/model.onnx")
    message(WARNING "ONNX node test data not found in ${ONNX_NODE_TEST_DIR} (install "
                    "libonnx-testdata); onnx_node_test will only report it")
endif ()

add_executable(onnx_node_test ${CMAKE_CURRENT_LIST_DIR}/onnx_node_test.cpp)
target_compile_definitions(onnx_node_test PRIVATE
    LAYERS_GENERATOR="$<TARGET_FILE:layers.generator>"
    ONNX_NODE_TEST_DIR="${ONNX_NODE_TEST_DIR}")
target_link_libraries(onnx_node_test PRIVATE onnx_proto Halide::Runtime GTest::gtest_main ${CMAKE_DL_LIBS})
# The node -> layer mapping is the importer's (graph/Lowering.h).
target_link_libraries(onnx_node_test PRIVATE sw_graph)
target_include_directories(onnx_node_test PRIVATE "${PROJECT_SOURCE_DIR}")
# Run-time layer builds (generator, cc on the generated C, dlopen): jit/jit_layer.h.
target_link_libraries(onnx_node_test PRIVATE sw_jit)
# The JIT-built layers resolve athread_* from here.
if (CMAKE_VERSION VERSION_LESS 3.24)
    target_link_libraries(onnx_node_test PRIVATE
        -Wl,--whole-archive $<TARGET_FILE:athread_emu> -Wl,--no-whole-archive athread_emu)
else ()
    target_link_libraries(onnx_node_test PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,athread_emu>")
endif ()
set_target_properties(onnx_node_test PROPERTIES ENABLE_EXPORTS ON)
# Built before the tests run; a rebuilt generator is picked up at run time.
add_dependencies(onnx_node_test layers.generator)
gtest_discover_tests(onnx_node_test DISCOVERY_TIMEOUT 120 PROPERTIES LABELS graph TIMEOUT 300)
