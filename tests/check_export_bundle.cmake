# cmake -DBUNDLE=<export dir> -DWORK=<scratch dir> -DFUNCTIONS=<fn1,fn2,...> -DCC=<gcc>
#       -DEMULATOR_INCLUDE=<dir> -P check_export_bundle.cmake
# Checks an add_sw_export bundle (test sunway_export_bundle):
#  1. its Makefile, dry run (make -n), builds every function's MPE object with
#     `sw5cc -host -std=gnu99` and CPE object with `sw5cc -slave -msimd -std=gnu99`, and
#     archives all of them; `make app` links the bundle's main.c and every
#     <fn>.example.c with -lm_slave (MAIN= and EXAMPLES= for a user's own program);
#  2. the bundle builds with the host C compiler in place of sw5cc
#     (make HOSTCC=gcc SLAVECC=gcc CPPFLAGS="-DATHREAD_EMULATOR -I<emulator include>"),
#     i.e. -std=gnu99 against the emulator's copies of athread.h / slave.h / simd.h, and the
#     library holds every object.
foreach (v BUNDLE WORK FUNCTIONS CC EMULATOR_INCLUDE)
    if (NOT ${v})
        message(FATAL_ERROR "check_export_bundle.cmake: ${v} is required")
    endif ()
endforeach ()
string(REPLACE "," ";" FUNCTIONS "${FUNCTIONS}")
find_program(MAKE_PROGRAM NAMES make gmake REQUIRED)

file(REMOVE_RECURSE "${WORK}")
file(COPY "${BUNDLE}/" DESTINATION "${WORK}")
file(READ "${WORK}/Makefile" makefile)
foreach (needle "-lm_slave" "sw5cc -hybrid" "\napp:" "-std=gnu99")
    string(FIND "${makefile}" "${needle}" at)
    if (at EQUAL -1)
        message(FATAL_ERROR "the bundle's Makefile lacks '${needle}':\n${makefile}")
    endif ()
endforeach ()
string(FIND "${makefile}" "ATHREAD_EMULATOR" at)
if (NOT at EQUAL -1)
    message(FATAL_ERROR "the bundle's Makefile mentions the emulator:\n${makefile}")
endif ()

# 1. Dry run with the real toolchain's commands.
execute_process(COMMAND "${MAKE_PROGRAM}" -n WORKING_DIRECTORY "${WORK}"
                OUTPUT_VARIABLE dry ERROR_VARIABLE dry_err RESULT_VARIABLE rc)
if (NOT rc EQUAL 0)
    message(FATAL_ERROR "make -n failed (${rc}):\n${dry}${dry_err}")
endif ()
foreach (fn IN LISTS FUNCTIONS)
    foreach (pair "mpe;sw5cc -host -std=gnu99 " "cpe;sw5cc -slave -msimd -std=gnu99 ")
        list(GET pair 0 side)
        list(GET pair 1 cc)
        string(REGEX MATCH "${cc}[^\n]* -c ${fn}\\.${side}\\.c -o ${fn}\\.${side}\\.o" line "${dry}")
        if (NOT line)
            message(FATAL_ERROR "make -n does not build ${fn}.${side}.o with '${cc}':\n${dry}")
        endif ()
    endforeach ()
    string(REGEX MATCH "ar rcs libsunway_layers.a[^\n]* ${fn}\\.mpe\\.o ${fn}\\.cpe\\.o" line "${dry}")
    if (NOT line)
        message(FATAL_ERROR "make -n does not archive ${fn}'s objects:\n${dry}")
    endif ()
endforeach ()
# The example program: the bundle's main.c and every function's example.
set(examples "")
foreach (fn IN LISTS FUNCTIONS)
    string(APPEND examples " ${fn}.example.o")
endforeach ()
execute_process(COMMAND "${MAKE_PROGRAM}" -n app WORKING_DIRECTORY "${WORK}"
                OUTPUT_VARIABLE dry ERROR_VARIABLE dry_err RESULT_VARIABLE rc)
string(FIND "${dry}" "sw5cc -hybrid main.o${examples} libsunway_layers.a -o app -lm_slave" at)
if (NOT rc EQUAL 0 OR at EQUAL -1)
    message(FATAL_ERROR "make -n app does not link main.o and the examples with sw5cc -hybrid ... -lm_slave (${rc}):\n${dry}${dry_err}")
endif ()
# A user's own program instead of the example.
file(WRITE "${WORK}/mine.c" "int main(void) { return 0; }\n")
execute_process(COMMAND "${MAKE_PROGRAM}" -n app MAIN=mine.o EXAMPLES= WORKING_DIRECTORY "${WORK}"
                OUTPUT_VARIABLE dry ERROR_VARIABLE dry_err RESULT_VARIABLE rc)
string(FIND "${dry}" "sw5cc -hybrid mine.o  libsunway_layers.a -o app -lm_slave" at)
if (at EQUAL -1)
    message(FATAL_ERROR "make -n app MAIN=mine.o EXAMPLES= does not link mine.o alone:\n${dry}${dry_err}")
endif ()
message(STATUS "make -n: every function's MPE and CPE object built with the sw5cc flags")

# 2. Build it with the host compiler against the emulator's headers.
execute_process(COMMAND "${MAKE_PROGRAM}" "HOSTCC=${CC}" "SLAVECC=${CC}"
                        "CPPFLAGS=-DATHREAD_EMULATOR -I${EMULATOR_INCLUDE}"
                WORKING_DIRECTORY "${WORK}" OUTPUT_VARIABLE build ERROR_VARIABLE build_err
                RESULT_VARIABLE rc)
if (NOT rc EQUAL 0)
    message(FATAL_ERROR "building the bundle with ${CC} failed (${rc}):\n${build}${build_err}")
endif ()
foreach (flag "-std=gnu99" "-DATHREAD_EMULATOR")
    string(FIND "${build}" "${flag}" at)
    if (at EQUAL -1)
        message(FATAL_ERROR "the build did not use ${flag}:\n${build}")
    endif ()
endforeach ()
execute_process(COMMAND ar t libsunway_layers.a WORKING_DIRECTORY "${WORK}"
                OUTPUT_VARIABLE members RESULT_VARIABLE rc)
foreach (fn IN LISTS FUNCTIONS)
    foreach (side mpe cpe)
        string(FIND "${members}" "${fn}.${side}.o" at)
        if (NOT rc EQUAL 0 OR at EQUAL -1)
            message(FATAL_ERROR "libsunway_layers.a lacks ${fn}.${side}.o:\n${members}")
        endif ()
    endforeach ()
endforeach ()
message(STATUS "the bundle builds with ${CC} -std=gnu99 against ${EMULATOR_INCLUDE}")
