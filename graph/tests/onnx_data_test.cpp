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
#include <cmath>
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

/** Node tests of operators the importer folds on constants (shape arithmetic, masks): every
 * input frozen to test_data_set_0's values, the output must come out folded and equal the
 * expected one (relative 1e-6: float Pow folds in double). */
const char *const kFolded[] = {
    "test_mod_mixed_sign_int64",
    "test_mod_mixed_sign_int32",
    "test_mod_int64_fmod",
    "test_mod_broadcast",
    "test_mod_mixed_sign_float32",
    "test_not_2d",
    "test_not_3d",
    "test_not_4d",
    "test_scatternd",
    "test_pow",
    "test_pow_bcast_array",
    "test_pow_types_float32_int64",
    "test_pow_types_int64_int64",
    "test_equal",
    "test_where_example",
    "test_range_float_type_positive_delta",
    "test_range_int32_type_negative_delta",
};

class GraphOnnxFold : public ::testing::TestWithParam<const char *> {};

} // namespace

TEST_P(GraphOnnxFold, FoldedValuesMatch) {
    const std::string dir = std::string(SW_ONNX_TEST_DATA) + "/node/" + GetParam();
    if (!exists(dir + "/model.onnx"))
        GTEST_SKIP() << "no " << dir << " (install libonnx-testdata)";
    // The inputs become initializers (of any type the reader takes as a constant: bool and
    // int32 inputs are refused, constants of those types are read as int64).
    onnx::ModelProto m;
    {
        std::ifstream f(dir + "/model.onnx", std::ios::binary);
        ASSERT_TRUE(f && m.ParseFromIstream(&f));
    }
    onnx::GraphProto *gp = m.mutable_graph();
    for (int k = 0; k < gp->input_size(); k++) {
        std::ifstream f(dir + "/test_data_set_0/input_" + std::to_string(k) + ".pb",
                        std::ios::binary);
        onnx::TensorProto *t = gp->add_initializer();
        ASSERT_TRUE(f && t->ParseFromIstream(&f));
        t->set_name(gp->input(k).name());
    }
    gp->clear_input();
    for (int k = 0; k < gp->output_size(); k++) {
        // bool and int32 outputs: declared float (the reader's check), compared as inferred.
        auto *tt = gp->mutable_output(k)->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    }
    Graph g = read_onnx_bytes(m.SerializeAsString(), "model.onnx");
    infer_shapes(g);
    ASSERT_EQ(g.outputs.size(), 1u);
    const Tensor &got = g.tensor(g.outputs[0]);
    ASSERT_TRUE(got.is_constant) << "not folded";
    const Tensor want = read_onnx_tensor_file(dir + "/test_data_set_0/output_0.pb");
    ASSERT_EQ(got.shape, want.shape);
    ASSERT_EQ(got.dtype, want.dtype);
    if (want.dtype == DType::Float32) {
        ASSERT_EQ(got.f32.size(), want.f32.size());
        for (size_t e = 0; e < want.f32.size(); e++)
            EXPECT_NEAR(got.f32[e], want.f32[e], 1e-6 * std::max(1.f, std::fabs(want.f32[e])))
                << "element " << e;
    } else {
        EXPECT_EQ(got.i64, want.i64);
    }
}

INSTANTIATE_TEST_SUITE_P(GraphNode, GraphOnnxFold, ::testing::ValuesIn(kFolded),
                         [](const auto &info) { return std::string(info.param).substr(5); });

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
