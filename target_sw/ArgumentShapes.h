/** \file
 * The shapes a Sunway function was generated for, read back from the lowered host code,
 * and the C text that documents them: the argument comments of the public header, the
 * plain `float *` entry point beside the `halide_buffer_t` one, and the example program of
 * an export bundle.
 *
 * A generator fixes a buffer's shape with dim(i).set_min/set_extent/set_stride; Halide
 * turns each into an assertion of the host body ("halide_error_constraint_violated" with
 * the field, e.g. "input.extent.0", and its value). Those constants are the shape.
 */
#ifndef SW_ARGUMENT_SHAPES_H
#define SW_ARGUMENT_SHAPES_H

#include "target_sw/SwModule.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sw {

/** One dimension of a buffer argument, Halide order (dim 0 innermost). */
struct ShapeDim {
    int64_t min = 0, extent = -1, stride = -1; ///< -1: not fixed by the generator
};

/** One argument of the function, in signature order. */
struct ArgumentShape {
    std::string name; ///< as in the C signature (non-identifier characters become '_')
    bool is_buffer = false, is_output = false;
    Halide::Type type;          ///< element type of a buffer, type of a scalar
    std::vector<ShapeDim> dims; ///< buffers only
    /** Every extent fixed; strides not fixed are taken dense (the next dim's stride is
     *  this dim's stride times its extent), as the entry point builds them. */
    bool fixed() const;
    int64_t elements() const; ///< fixed() only
};

/** The arguments of \p f with the constants its host body asserts. */
std::vector<ArgumentShape> argument_shapes(const SwFunction &f);

/** Whether the plain-float entry point exists: every buffer is float32 with a fixed shape. */
bool has_f32_entry(const std::vector<ArgumentShape> &args);

/** ASCII upper case: the prefix of the header's macros (CONV2D_VGG_INPUT_ELEMENTS). */
std::string upper_case(const std::string &s);

/** "float32", "int32", "uint8" ... */
std::string type_name(const Halide::Type &t);

/** The comment block of the header documenting every argument, the machine and the
 *  athread ownership, and (when has_f32_entry) the macros <FN>_<ARG>_ELEMENTS. */
std::string header_documentation(const SwFunction &f, const std::vector<ArgumentShape> &args);

/** Declaration (no ';') of the entry point int <fn>_f32(const float *in..., float *out...). */
std::string f32_signature(const SwFunction &f, const std::vector<ArgumentShape> &args);
/** Its C99 definition: dense halide_buffer_t structs of the generated shapes. */
std::string f32_definition(const SwFunction &f, const std::vector<ArgumentShape> &args);

/** Whether the example can call the function: has_f32_entry and no scalar argument. */
bool has_example(const std::vector<ArgumentShape> &args);

/** <fn>.example.c: int <fn>_example(void), which fills the inputs with the documented
 *  deterministic values, calls <fn>_f32, prints the output checksum and returns 0 (or 1
 *  when the call fails or the output is not finite). Without has_example, one that says
 *  so and returns 0. */
std::string generate_example_source(const SwFunction &f, const std::string &header);

} // namespace sw

#endif
