# The package HalideSunway, installed by `cmake --install <build> --prefix <dir>`:
#   lib/                        libsw_target.a, libsw_gengen.a (the generator driver's main()),
#                               libathread_emu.a, libsw_autoschedule.so (the autoscheduler plugin)
#   include/halide_sunway/      target_sw/*.h, schedules/ScheduleSupport.h, emulator/ (athread.h,
#                               slave.h, simd.h, athread_emu.h; sw26010-pro/ the Pro's)
#   lib/cmake/HalideSunway/     HalideSunwayConfig.cmake (+ version file), the exported targets
#                               and the helpers (SunwayHelpers.cmake: add_sw_generator,
#                               add_sw_library, add_sw_export; WriteSunwayMakefile.cmake)
# A user's project then does
#   find_package(HalideSunway REQUIRED)      # finds Halide 14 and Threads too
#   add_sw_generator(my.generator SOURCES my_generator.cpp)
#   add_sw_library(my_layer FROM my.generator GENERATOR my_layer PARAMS ...)
# Targets (the same names in this build, as ALIAS targets, so the helpers work in both):
#   HalideSunway::sunway_target     the Sunway lowering and code generators (Halide::Halide)
#   HalideSunway::generator_driver  the generator driver (main of every generator executable)
#   HalideSunway::emulator          the athread emulator (the generated code links it)
#   HalideSunway::emulator_pro      the same with the SW26010-Pro's headers first
#                                   (emulator/sw26010-pro: crts.h, slave.h, athread.h, simd.h)
#   HalideSunway::autoschedule      the autoscheduler plugin (MODULE; -p of a generator)
include(CMakePackageConfigHelpers)

set(SW_PACKAGE_TARGETS sw_target sw_gengen athread_emu athread_emu_pro sw_autoschedule)
set(SW_PACKAGE_NAMES sunway_target generator_driver emulator emulator_pro autoschedule)
foreach (target name IN ZIP_LISTS SW_PACKAGE_TARGETS SW_PACKAGE_NAMES)
    add_library(HalideSunway::${name} ALIAS ${target})
    set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
endforeach ()

set(SW_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/HalideSunway")
install(TARGETS ${SW_PACKAGE_TARGETS} EXPORT HalideSunwayTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}")
install(EXPORT HalideSunwayTargets NAMESPACE HalideSunway:: DESTINATION "${SW_INSTALL_CMAKEDIR}")

install(DIRECTORY "${PROJECT_SOURCE_DIR}/target_sw/" DESTINATION "${SW_INSTALL_INCLUDEDIR}/target_sw"
        FILES_MATCHING PATTERN "*.h" PATTERN "emulator" EXCLUDE)
install(FILES "${PROJECT_SOURCE_DIR}/schedules/ScheduleSupport.h" DESTINATION "${SW_INSTALL_INCLUDEDIR}/schedules")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/target_sw/emulator/include/" DESTINATION "${SW_INSTALL_INCLUDEDIR}/emulator")

configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/HalideSunwayConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/HalideSunwayConfig.cmake"
                              INSTALL_DESTINATION "${SW_INSTALL_CMAKEDIR}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/HalideSunwayConfigVersion.cmake"
                                 VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/HalideSunwayConfig.cmake"
              "${PROJECT_BINARY_DIR}/HalideSunwayConfigVersion.cmake"
              "${CMAKE_CURRENT_LIST_DIR}/SunwayHelpers.cmake"
              "${CMAKE_CURRENT_LIST_DIR}/WriteSunwayMakefile.cmake"
        DESTINATION "${SW_INSTALL_CMAKEDIR}")
