# The networks, layer by layer, as generator invocations.
#
# sw_network(<prefix> NET alexnet|vgg19|vgg16 [CHANNEL_DIV d] [INPUT s] [BATCH n] [CLASSES k]
#            [SCHEDULES sunway baseline auto ...])
#   Builds one Sunway library per layer and schedule (function <prefix>_<layer>_<schedule>)
#   and a library <prefix> that links them all and defines
#     const sw_net::NetworkTable &<prefix>_table();   (runtime/net/network.h)
#   with each layer's name, generator, parameters and functions.
#   CHANNEL_DIV and INPUT make reduced configurations (channel counts divided, smaller
#   input) for tests; the defaults are the published networks.
#   A schedule is a generator's `schedule=` (sunway, baseline), or `auto`: the layer
#   scheduled by the Sunway autoscheduler (add_sw_library's AUTOSCHEDULER Sunway, the
#   sw_autoschedule plugin of autoscheduler/).

function(_sw_layer name kind params)
    set(SW_NET_LAYERS ${SW_NET_LAYERS} "${name}|${kind}|${params}" PARENT_SCOPE)
endfunction()

# Output size of a convolution or pooling window along one axis (floor mode).
function(_sw_out_size var size kernel stride pad)
    math(EXPR out "(${size} + 2 * ${pad} - ${kernel}) / ${stride} + 1")
    set(${var} ${out} PARENT_SCOPE)
endfunction()

# The classifier both networks end with: FC flat->fc, ReLU, FC fc->fc, ReLU, FC fc->classes,
# softmax. (Dropout is the identity at inference.)
macro(_sw_classifier flat fc classes b)
    _sw_layer(fc6 dense "${b} in_features=${flat} out_features=${fc} relu=true")
    _sw_layer(fc7 dense "${b} in_features=${fc} out_features=${fc} relu=true")
    _sw_layer(fc8 dense "${b} in_features=${fc} out_features=${classes} relu=false")
    _sw_layer(prob softmax "${b} classes=${classes}")
endmacro()

function(_sw_alexnet div input batch classes)
    set(SW_NET_LAYERS "")
    math(EXPR c1 "96 / ${div}")
    math(EXPR c2 "256 / ${div}")
    math(EXPR c3 "384 / ${div}")
    math(EXPR fc "4096 / ${div}")
    set(b "batch=${batch}")
    _sw_out_size(s1 ${input} 11 4 0)
    _sw_layer(conv1 conv2d "${b} in_channels=3 out_channels=${c1} height=${input} width=${input} kernel=11 stride=4 pad=0 relu=true")
    _sw_layer(norm1 lrn "${b} channels=${c1} height=${s1} width=${s1} size=5 alpha=0.0001 beta=0.75 k=1")
    _sw_out_size(p1 ${s1} 3 2 0)
    _sw_layer(pool1 pool "${b} channels=${c1} height=${s1} width=${s1} kernel=3 stride=2 type=max")
    _sw_layer(conv2 conv2d "${b} in_channels=${c1} out_channels=${c2} height=${p1} width=${p1} kernel=5 stride=1 pad=2 groups=2 relu=true")
    _sw_layer(norm2 lrn "${b} channels=${c2} height=${p1} width=${p1} size=5 alpha=0.0001 beta=0.75 k=1")
    _sw_out_size(p2 ${p1} 3 2 0)
    _sw_layer(pool2 pool "${b} channels=${c2} height=${p1} width=${p1} kernel=3 stride=2 type=max")
    _sw_layer(conv3 conv2d "${b} in_channels=${c2} out_channels=${c3} height=${p2} width=${p2} kernel=3 stride=1 pad=1 relu=true")
    _sw_layer(conv4 conv2d "${b} in_channels=${c3} out_channels=${c3} height=${p2} width=${p2} kernel=3 stride=1 pad=1 groups=2 relu=true")
    _sw_layer(conv5 conv2d "${b} in_channels=${c3} out_channels=${c2} height=${p2} width=${p2} kernel=3 stride=1 pad=1 groups=2 relu=true")
    _sw_out_size(p5 ${p2} 3 2 0)
    _sw_layer(pool5 pool "${b} channels=${c2} height=${p2} width=${p2} kernel=3 stride=2 type=max")
    math(EXPR flat "${c2} * ${p5} * ${p5}")
    _sw_classifier(${flat} ${fc} ${classes} "${b}")
    set(SW_NET_LAYERS ${SW_NET_LAYERS} PARENT_SCOPE)
endfunction()

# VGG-16 (D) and VGG-19 (E) of Simonyan and Zisserman: 3x3 convolutions, pad 1, ReLU,
# 2x2 max pooling, three fully connected layers.
function(_sw_vgg depth div input batch classes)
    set(SW_NET_LAYERS "")
    if (depth EQUAL 16)
        set(blocks "2;2;3;3;3")
    else ()
        set(blocks "2;2;4;4;4")
    endif ()
    set(widths "64;128;256;512;512")
    set(b "batch=${batch}")
    set(size ${input})
    set(in_c 3)
    foreach (stage RANGE 4)
        list(GET blocks ${stage} convs)
        list(GET widths ${stage} width)
        math(EXPR width "${width} / ${div}")
        math(EXPR s "${stage} + 1")
        foreach (i RANGE 1 ${convs})
            _sw_layer(conv${s}_${i} conv2d "${b} in_channels=${in_c} out_channels=${width} height=${size} width=${size} kernel=3 stride=1 pad=1 relu=true")
            set(in_c ${width})
        endforeach ()
        _sw_layer(pool${s} pool "${b} channels=${in_c} height=${size} width=${size} kernel=2 stride=2 type=max")
        math(EXPR size "${size} / 2")
    endforeach ()
    math(EXPR flat "${in_c} * ${size} * ${size}")
    math(EXPR fc "4096 / ${div}")
    _sw_classifier(${flat} ${fc} ${classes} "${b}")
    set(SW_NET_LAYERS ${SW_NET_LAYERS} PARENT_SCOPE)
endfunction()

function(sw_network PREFIX)
    cmake_parse_arguments(A "" "NET;CHANNEL_DIV;INPUT;BATCH;CLASSES;MACHINE" "SCHEDULES" ${ARGN})
    if (NOT A_CHANNEL_DIV)
        set(A_CHANNEL_DIV 1)
    endif ()
    if (NOT A_BATCH)
        set(A_BATCH 1)
    endif ()
    if (NOT A_CLASSES)
        set(A_CLASSES 1000)
    endif ()
    if (NOT A_SCHEDULES)
        set(A_SCHEDULES sunway baseline)
    endif ()
    if (NOT A_MACHINE)
        set(A_MACHINE sw26010)
    endif ()
    if (A_NET STREQUAL "alexnet")
        if (NOT A_INPUT)
            set(A_INPUT 227)
        endif ()
        _sw_alexnet(${A_CHANNEL_DIV} ${A_INPUT} ${A_BATCH} ${A_CLASSES})
    elseif (A_NET STREQUAL "vgg19" OR A_NET STREQUAL "vgg16")
        if (NOT A_INPUT)
            set(A_INPUT 224)
        endif ()
        string(SUBSTRING ${A_NET} 3 2 depth)
        _sw_vgg(${depth} ${A_CHANNEL_DIV} ${A_INPUT} ${A_BATCH} ${A_CLASSES})
    else ()
        message(FATAL_ERROR "sw_network: unknown NET '${A_NET}' (alexnet, vgg16, vgg19)")
    endif ()

    set(decls "")
    set(rows "")
    foreach (entry IN LISTS SW_NET_LAYERS)
        string(REPLACE "|" ";" parts "${entry}")
        list(GET parts 0 name)
        list(GET parts 1 kind)
        list(GET parts 2 params)
        separate_arguments(param_list UNIX_COMMAND "${params}")
        if (kind STREQUAL "conv2d" OR kind STREQUAL "dense")
            set(nargs 4)
        else ()
            set(nargs 2)
        endif ()
        set(fns "")
        foreach (schedule IN LISTS A_SCHEDULES)
            set(fn ${PREFIX}_${name}_${schedule})
            if (schedule STREQUAL "auto")
                add_sw_library(${fn} FROM layers.generator GENERATOR ${kind} MACHINE ${A_MACHINE}
                               AUTOSCHEDULER Sunway PARAMS ${param_list})
            else ()
                add_sw_library(${fn} FROM layers.generator GENERATOR ${kind} MACHINE ${A_MACHINE}
                               PARAMS ${param_list} schedule=${schedule})
            endif ()
            list(APPEND libs ${fn})
            string(APPEND decls "SW_DECLARE(${fn}, ${nargs})\n")
            string(APPEND fns ", ${fn}")
        endforeach ()
        string(APPEND rows "    {\"${name}\", \"${kind}\", \"${params}\", {${fns}}},\n")
    endforeach ()
    string(REPLACE ";" "\", \"" schedule_names "${A_SCHEDULES}")
    string(REPLACE "{, " "{" rows "${rows}")
    file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/${PREFIX}.table.cpp"
"// The layer table of ${PREFIX} (${A_NET}); generated by cmake/SunwayNetworks.cmake.
#include \"runtime/net/network.h\"
#include \"HalideRuntime.h\"

#define SW_DECLARE(fn, nargs) extern \"C\" int fn(SW_ARGS_##nargs);
#define SW_ARGS_2 halide_buffer_t *, halide_buffer_t *
#define SW_ARGS_4 halide_buffer_t *, halide_buffer_t *, halide_buffer_t *, halide_buffer_t *
${decls}
const sw_net::NetworkTable &${PREFIX}_table() {
    static const sw_net::NetworkTable table{\"${A_NET}\", {\"${schedule_names}\"}, {
${rows}    }};
    return table;
}
")
    add_library(${PREFIX} STATIC "${CMAKE_CURRENT_BINARY_DIR}/${PREFIX}.table.cpp")
    target_include_directories(${PREFIX} PRIVATE "${PROJECT_SOURCE_DIR}")
    target_link_libraries(${PREFIX} PUBLIC sw_network ${libs})
endfunction()
