/** \file
 * Shape inference against a reference we did not write: the ONNX test data of Debian's
 * libonnx-testdata. Each test folder holds model.onnx and test_data_set_0/output_K.pb, the
 * expected outputs as TensorProtos; every inferred graph output shape must equal the
 * expected output's dims.
 *
 * GraphOnnxData.Listed: node tests of the operators, which must import.
 * GraphOnnxData.Sweep: every model of data/node, data/pytorch-converted and
 * data/pytorch-operator; those the importer rejects (unsupported operators, types) are
 * counted and listed, every one it accepts must have the expected shapes.
 */
#include "graph/OnnxReader.h"
#include "graph/Passes.h"
#include "graph/ShapeInference.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#ifndef SW_ONNX_TEST_DATA
#define SW_ONNX_TEST_DATA "/usr/share/libonnx-testdata/data"
#endif

using namespace sw_graph;

namespace {

bool exists(const std::string &p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0;
}

std::vector<std::string> list_dir(const std::string &dir) {
    std::vector<std::string> r;
    if (DIR *d = opendir(dir.c_str())) {
        while (dirent *e = readdir(d)) {
            if (e->d_name[0] != '.')
                r.push_back(e->d_name);
        }
        closedir(d);
    }
    std::sort(r.begin(), r.end());
    return r;
}

/** Dims of test_data_set_0/output_<k>.pb; false if there is no such file. */
bool expected_dims(const std::string &dir, size_t k, std::vector<int64_t> &dims) {
    std::ifstream f(dir + "/test_data_set_0/output_" + std::to_string(k) + ".pb", std::ios::binary);
    if (!f)
        return false;
    std::stringstream s;
    s << f.rdbuf();
    onnx::TensorProto t;
    if (!t.ParseFromString(s.str()))
        return false;
    dims.assign(t.dims().begin(), t.dims().end());
    return true;
}

/** Imports dir/model.onnx and compares its output shapes; "" if they match, else why not.
 * Node tests give what real models hold as constants (Reshape's shape, axes, split sizes,
 * Clip's bounds) as graph inputs: int64 inputs and float scalars are frozen to the values of
 * test_data_set_0/input_K.pb first. */
std::string check_model(const std::string &dir, bool passes) {
    Graph g = read_onnx_file(dir + "/model.onnx");
    const std::vector<std::string> inputs = g.inputs;
    for (size_t k = 0; k < inputs.size(); k++) {
        const Tensor &t = g.tensor(inputs[k]);
        if (!(t.dtype == DType::Int64 || (t.has_shape && t.shape.empty())))
            continue;
        Tensor value =
            read_onnx_tensor_file(dir + "/test_data_set_0/input_" + std::to_string(k) + ".pb");
        value.name = inputs[k];
        g.tensors[inputs[k]] = value;
        g.inputs.erase(std::find(g.inputs.begin(), g.inputs.end(), inputs[k]));
    }
    infer_shapes(g);
    if (passes)
        run_passes(g);
    for (size_t k = 0; k < g.outputs.size(); k++) {
        std::vector<int64_t> want;
        if (!expected_dims(dir, k, want))
            return "no expected output " + std::to_string(k);
        const std::vector<int64_t> &got = g.tensor(g.outputs[k]).shape;
        if (got != want) {
            return "output '" + g.outputs[k] + "': inferred " + shape_string(got) + ", expected " +
                   shape_string(want);
        }
    }
    return "";
}

const char *const kListed[] = {
    "test_conv_with_autopad_same",
    "test_conv_with_strides_and_asymmetric_padding",
    "test_conv_with_strides_no_padding",
    "test_conv_with_strides_padding",
    "test_maxpool_2d_ceil",
    "test_maxpool_2d_pads",
    "test_maxpool_2d_same_lower",
    "test_maxpool_2d_same_upper",
    "test_maxpool_2d_strides",
    "test_maxpool_2d_dilations",
    "test_maxpool_2d_precomputed_pads",
    "test_maxpool_1d_default",
    "test_maxpool_3d_default",
    "test_averagepool_2d_ceil",
    "test_averagepool_2d_pads",
    "test_averagepool_2d_pads_count_include_pad",
    "test_averagepool_2d_same_lower",
    "test_averagepool_2d_precomputed_same_upper",
    "test_averagepool_2d_strides",
    "test_globalaveragepool",
    "test_batchnorm_example",
    "test_batchnorm_epsilon",
    "test_gemm_all_attributes",
    "test_gemm_transposeA",
    "test_gemm_transposeB",
    "test_gemm_default_scalar_bias",
    "test_gemm_default_no_bias",
    "test_matmul_2d",
    "test_matmul_3d",
    "test_matmul_4d",
    "test_reshape_negative_dim",
    "test_reshape_zero_and_negative_dim",
    "test_reshape_reordered_all_dims",
    "test_reshape_allowzero_reordered",
    "test_flatten_axis0",
    "test_flatten_axis3",
    "test_flatten_negative_axis1",
    "test_concat_2d_axis_1",
    "test_concat_3d_axis_negative_2",
    "test_transpose_default",
    "test_transpose_all_permutations_3",
    "test_split_equal_parts_2d",
    "test_split_variable_parts_default_axis",
    "test_softmax_axis_1",
    "test_softmax_default_axis",
    "test_lrn",
    "test_lrn_default",
    "test_relu",
    "test_sigmoid",
    "test_hardsigmoid",
    "test_hardsigmoid_default",
    "test_hardsigmoid_example",
    "test_hardswish",
    "test_hardswish_expanded",
    "test_leakyrelu",
    "test_clip_default_min",
    "test_clip_splitbounds",
    "test_add_bcast",
    "test_mul_bcast",
    "test_reduce_mean_keepdims_example",
    "test_reduce_mean_do_not_keepdims_random",
    "test_reduce_mean_negative_axes_keepdims_example",
    "test_reduce_mean_default_axes_keepdims_example",
    "test_dropout_default",
    "test_identity",
    "test_shape",
    "test_gather_0",
    "test_gather_2d_indices",
    "test_unsqueeze_three_axes",
    "test_unsqueeze_unsorted_axes",
    "test_squeeze_negative_axes",
};

class GraphOnnxData : public ::testing::TestWithParam<const char *> {};

} // namespace

TEST_P(GraphOnnxData, Listed) {
    const std::string dir = std::string(SW_ONNX_TEST_DATA) + "/node/" + GetParam();
    if (!exists(dir + "/model.onnx"))
        GTEST_SKIP() << "no " << dir << " (install libonnx-testdata)";
    for (bool passes : {false, true}) {
        try {
            EXPECT_EQ(check_model(dir, passes), "") << (passes ? "with" : "without") << " passes";
        } catch (const Error &e) {
            ADD_FAILURE() << e.what();
        }
    }
}

INSTANTIATE_TEST_SUITE_P(GraphNode, GraphOnnxData, ::testing::ValuesIn(kListed),
                         [](const auto &info) { return std::string(info.param).substr(5); });

TEST(GraphOnnxDataSweep, EveryAcceptedModelHasTheExpectedShapes) {
    int accepted = 0, rejected = 0;
    std::map<std::string, int> reasons;
    for (const char *kind : {"node", "pytorch-converted", "pytorch-operator"}) {
        const std::string root = std::string(SW_ONNX_TEST_DATA) + "/" + kind;
        for (const std::string &name : list_dir(root)) {
            const std::string dir = root + "/" + name;
            if (!exists(dir + "/model.onnx"))
                continue;
            try {
                const std::string r = check_model(dir, true);
                EXPECT_EQ(r, "") << dir;
                accepted++;
            } catch (const Error &e) {
                rejected++;
                std::string why = e.what();
                // "error: <file>: node ... (Op): what" -> the part after the operator.
                const size_t p = why.find("): ");
                reasons[p == std::string::npos ? why.substr(why.find(": ", 7) + 2)
                                               : why.substr(p + 3)]++;
            }
        }
    }
    if (accepted + rejected == 0)
        GTEST_SKIP() << "no ONNX test data in " << SW_ONNX_TEST_DATA;
    std::cout << "[ sweep    ] " << accepted << " models imported with the expected shapes, "
              << rejected << " rejected\n";
    std::vector<std::pair<int, std::string>> top;
    for (const auto &r : reasons)
        top.push_back({r.second, r.first});
    std::sort(top.rbegin(), top.rend());
    for (size_t i = 0; i < top.size() && i < 12; i++) {
        std::cout << "[ rejected ] " << top[i].first << " x " << top[i].second.substr(0, 150)
                  << "\n";
    }
    EXPECT_GT(accepted, 150);
}
