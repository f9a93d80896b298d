# CMake helpers of the Sunway target, in the spirit of Halide's add_halide_generator and
# add_halide_library.
#
# add_sw_generator(<target> [SOURCES <generator sources...>] [OBJECTS <object libraries...>])
#   An executable holding the generators and the Sunway driver (target_sw/SunwayGenGen.cpp).
#   OBJECTS links generators already compiled into OBJECT libraries (e.g. layer_generators,
#   generators/CMakeLists.txt), so that other executables can link the same objects.
#
# add_sw_library(<target> FROM <generator executable> GENERATOR <name>
#                [FUNCTION_NAME <fn>] [MACHINE sw26010|sw26010-pro] [AUTOSCHEDULER <name>]
#                [PARAMS <name=value>...])
#   Runs the generator for the Sunway machine and builds the generated MPE and CPE sources
#   into a static library linked against the athread emulator. Also writes
#   <build>/<target>.gen/ with FUNCTION.{h,mpe.c,cpe.c,sw_args.h,stmt,sw_report.txt}.
#   AUTOSCHEDULER <name> schedules the generator with that autoscheduler instead of its own
#   schedules: the generator runs with `-p $<TARGET_FILE:HalideSunway::autoschedule> -s <name>
#   auto_schedule=true` (the plugin of autoscheduler/, which registers "Sunway" and is told
#   the machine's CPEs and LDM bytes by the driver), is re-run when the plugin changes, and
#   also writes FUNCTION.schedule.h, the schedule the autoscheduler chose, as C++ source.
#   MACHINE is passed to the generator as target=; the driver sets the generator's `machine`
#   GeneratorParam from it only if the generator declares one (it is optional).
#   A misspelt keyword is an error: before PARAMS it is an unknown argument, after it a
#   PARAMS entry that is not name=value.
#
# add_sw_export(<target> LIBRARIES <sw libraries...>)
#   A target that gathers the generated sources of those libraries (each function's .h,
#   .mpe.c, .cpe.c, .sw_args.h, .sw_report.txt and .example.c), HalideRuntime.h, and writes
#   a Makefile for the real Sunway toolchain (sw5cc), an example main.c and a README.md in
#   <build>/<target>/ (cmake/WriteSunwayMakefile.cmake): every function's MPE file with
#   `sw5cc -host -std=gnu99`, its CPE file with `sw5cc -slave -msimd -std=gnu99`, all
#   archived into libsunway_layers.a; `make app` links main.c and the examples with
#   `sw5cc -hybrid ... -lm_slave`. Not built by sw5cc here (no Sunway machine or sw5cc on
#   this machine); the tests sunway_export_bundle and export_example_test build it with gcc
#   against the emulator, as its README.md says.
#
# The helpers use the namespaced targets HalideSunway::generator_driver, ::sunway_target,
# ::emulator and ::autoschedule: ALIAS targets in this project's build, imported targets
# after find_package(HalideSunway) (cmake/HalideSunwayPackage.cmake).
#
# The generated MPE and CPE files are compiled as gnu99, as with sw5cc: the athread.h of
# the real toolchain (and of the emulator) does not compile as strict ISO C.

# This file's directory, for the scripts it runs (it may be included from another project).
set(SW_HELPERS_DIR "${CMAKE_CURRENT_LIST_DIR}" CACHE INTERNAL "cmake/ of the Sunway target")

# Each helper stops the configuration on an argument it does not know (a misspelt keyword),
# as Halide's add_halide_library does.
function(_sw_check_arguments FN TARGET PREFIX)
    if (${PREFIX}_UNPARSED_ARGUMENTS)
        list(GET ${PREFIX}_UNPARSED_ARGUMENTS 0 first)
        message(FATAL_ERROR "${FN}(${TARGET}): unknown argument '${first}' (a misspelt keyword?)")
    endif ()
endfunction()

# Halide's imported targets are local to the directory that found them: a project that adds
# this one with add_subdirectory (or includes the helpers) finds Halide where it calls them.
macro(_sw_find_halide)
    if (NOT TARGET Halide::Halide OR NOT TARGET Halide::Runtime)
        find_package(Halide REQUIRED)
    endif ()
endmacro()

# The target a custom command depends on: an imported target (the installed package) by its
# file, a target of this build by its real name (DEPENDS does not take ALIAS names).
function(_sw_dependency OUT TARGET)
    get_target_property(imported ${TARGET} IMPORTED)
    get_target_property(aliased ${TARGET} ALIASED_TARGET)
    if (imported)
        set(${OUT} "$<TARGET_FILE:${TARGET}>" PARENT_SCOPE)
    elseif (aliased)
        set(${OUT} "${aliased}" PARENT_SCOPE)
    else ()
        set(${OUT} "${TARGET}" PARENT_SCOPE)
    endif ()
endfunction()

function(add_sw_generator TARGET)
    cmake_parse_arguments(ARG "" "" "SOURCES;OBJECTS" ${ARGN})
    _sw_check_arguments(add_sw_generator ${TARGET} ARG)
    _sw_find_halide()
    set(objects "")
    foreach (lib IN LISTS ARG_OBJECTS)
        list(APPEND objects $<TARGET_OBJECTS:${lib}>)
    endforeach ()
    add_executable(${TARGET} ${ARG_SOURCES} ${objects})
    # The autoscheduler plugin (-p) takes the Sunway passes from the executable.
    set_target_properties(${TARGET} PROPERTIES ENABLE_EXPORTS ON)
    target_link_libraries(${TARGET} PRIVATE ${ARG_OBJECTS} HalideSunway::generator_driver
                          HalideSunway::sunway_target Halide::Halide ${CMAKE_DL_LIBS})
endfunction()

function(add_sw_library TARGET)
    cmake_parse_arguments(ARG "" "FROM;GENERATOR;FUNCTION_NAME;MACHINE;AUTOSCHEDULER" "PARAMS" ${ARGN})
    _sw_check_arguments(add_sw_library ${TARGET} ARG)
    if (NOT ARG_FROM OR NOT ARG_GENERATOR)
        message(FATAL_ERROR "add_sw_library(${TARGET}): FROM and GENERATOR are required")
    endif ()
    # PARAMS takes the rest of the arguments: a misspelt keyword after it would end up here.
    foreach (p IN LISTS ARG_PARAMS)
        if (NOT p MATCHES "^[A-Za-z_][A-Za-z0-9_.]*=")
            message(FATAL_ERROR "add_sw_library(${TARGET}): PARAMS entry '${p}' is not name=value "
                                "(a misspelt keyword?)")
        endif ()
    endforeach ()
    if (NOT ARG_FUNCTION_NAME)
        set(ARG_FUNCTION_NAME ${TARGET})
    endif ()
    if (NOT ARG_MACHINE)
        set(ARG_MACHINE sw26010)
    elseif (NOT ARG_MACHINE MATCHES "^(sw26010|sw26010-pro)$")
        message(FATAL_ERROR "add_sw_library(${TARGET}): unknown MACHINE '${ARG_MACHINE}' (sw26010 or sw26010-pro)")
    endif ()
    _sw_find_halide()
    set(dir "${CMAKE_CURRENT_BINARY_DIR}/${TARGET}.gen")
    set(fn "${ARG_FUNCTION_NAME}")
    set(outputs "${dir}/${fn}.h" "${dir}/${fn}.mpe.c" "${dir}/${fn}.cpe.c" "${dir}/${fn}.sw_args.h"
                "${dir}/${fn}.stmt" "${dir}/${fn}.sw_report.txt" "${dir}/${fn}.example.c")
    set(emit mpe,cpe,h,stmt,report,example)
    set(deps ${ARG_FROM})
    set(autoschedule "")
    set(schedule_note "")
    if (ARG_AUTOSCHEDULER)
        if (NOT TARGET HalideSunway::autoschedule)
            message(FATAL_ERROR "add_sw_library(${TARGET}): AUTOSCHEDULER needs the autoscheduler "
                                "plugin HalideSunway::autoschedule (autoscheduler/), which is not defined")
        endif ()
        set(autoschedule -p $<TARGET_FILE:HalideSunway::autoschedule> -s ${ARG_AUTOSCHEDULER} auto_schedule=true)
        set(emit ${emit},schedule)
        _sw_dependency(plugin HalideSunway::autoschedule)
        list(APPEND deps ${plugin})
        list(APPEND outputs "${dir}/${fn}.schedule.h")
        set(schedule_note ", autoscheduled by ${ARG_AUTOSCHEDULER}")
    endif ()
    # The driver passes target= on as the generator's `machine` parameter when the generator
    # declares one, and warns when the pipeline has no CPE kernel (host-only code).
    add_custom_command(
        OUTPUT ${outputs}
        COMMAND ${CMAKE_COMMAND} -E make_directory "${dir}"
        COMMAND ${ARG_FROM} -g ${ARG_GENERATOR} -f ${fn} -o "${dir}" -e ${emit} ${autoschedule}
                target=${ARG_MACHINE} ${ARG_PARAMS}
        DEPENDS ${deps}
        COMMENT "Generating Sunway code for ${fn} (${ARG_GENERATOR} on ${ARG_MACHINE}${schedule_note})"
        VERBATIM)
    add_library(${TARGET} STATIC "${dir}/${fn}.mpe.c" "${dir}/${fn}.cpe.c")
    set_target_properties(${TARGET} PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS ON)
    target_include_directories(${TARGET} PUBLIC "${dir}")
    if (ARG_MACHINE STREQUAL "sw26010-pro")
        # The Pro's headers; its MPE and CPE sides told apart as swgcc -mhost / -mslave do.
        set_source_files_properties("${dir}/${fn}.mpe.c" PROPERTIES COMPILE_DEFINITIONS __sw_host__)
        # -Wno-psabi: on x86 without AVX GCC notes that the emulated floatv8 (32 bytes) passed
        # or returned by value changes the ABI; the generated helpers and their callers share
        # one translation unit (the JIT checks the same way).
        set_source_files_properties("${dir}/${fn}.cpe.c" PROPERTIES COMPILE_DEFINITIONS __sw_slave__
                                    COMPILE_OPTIONS -Wno-psabi)
        target_link_libraries(${TARGET} PUBLIC HalideSunway::emulator_pro Halide::Runtime m)
    else ()
        target_link_libraries(${TARGET} PUBLIC HalideSunway::emulator Halide::Runtime m)
    endif ()
    set_property(TARGET ${TARGET} PROPERTY SW_GENERATED_DIR "${dir}")
    set_property(TARGET ${TARGET} PROPERTY SW_FUNCTION_NAME "${fn}")
    set_property(TARGET ${TARGET} PROPERTY SW_MACHINE "${ARG_MACHINE}")
endfunction()

function(add_sw_export TARGET)
    cmake_parse_arguments(ARG "" "" "LIBRARIES" ${ARGN})
    _sw_check_arguments(add_sw_export ${TARGET} ARG)
    _sw_find_halide()
    set(out "${CMAKE_CURRENT_BINARY_DIR}/${TARGET}")
    set(commands COMMAND ${CMAKE_COMMAND} -E make_directory "${out}")
    set(deps "")
    set(names "")
    set(machines "")
    foreach (lib IN LISTS ARG_LIBRARIES)
        get_property(dir TARGET ${lib} PROPERTY SW_GENERATED_DIR)
        get_property(fn TARGET ${lib} PROPERTY SW_FUNCTION_NAME)
        get_property(machine TARGET ${lib} PROPERTY SW_MACHINE)
        list(APPEND machines ${machine})
        foreach (ext h mpe.c cpe.c sw_args.h sw_report.txt example.c)
            list(APPEND commands COMMAND ${CMAKE_COMMAND} -E copy "${dir}/${fn}.${ext}" "${out}/")
            list(APPEND deps "${dir}/${fn}.${ext}")
        endforeach ()
        list(APPEND names ${fn})
    endforeach ()
    get_target_property(runtime_inc Halide::Runtime INTERFACE_INCLUDE_DIRECTORIES)
    list(APPEND commands COMMAND ${CMAKE_COMMAND} -E copy "${runtime_inc}/HalideRuntime.h" "${out}/")
    # A list would become several COMMAND arguments (only the first one reaching -DFUNCTIONS):
    # pass the names comma-separated.
    string(REPLACE ";" "," functions "${names}")
    string(REPLACE ";" "," machines "${machines}")
    list(APPEND commands COMMAND ${CMAKE_COMMAND} "-DOUT=${out}" "-DFUNCTIONS=${functions}"
         "-DMACHINES=${machines}"
         "-DEMULATOR_INCLUDE=$<JOIN:$<TARGET_PROPERTY:HalideSunway::emulator,INTERFACE_INCLUDE_DIRECTORIES>, -I>"
         "-DEMULATOR_LIBRARY=$<TARGET_FILE:HalideSunway::emulator>"
         -P "${SW_HELPERS_DIR}/WriteSunwayMakefile.cmake")
    add_custom_target(${TARGET} ALL ${commands} DEPENDS ${deps} ${ARG_LIBRARIES}
                      COMMENT "Exporting Sunway sources to ${out}" VERBATIM)
endfunction()
