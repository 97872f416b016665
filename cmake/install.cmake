# Packaging: what `cmake --install` puts under the prefix.
#
#   include/accel/*.h                       public headers
#   lib/libaccel.so.0.1.0 (+ .so.0, .so)    the core, SONAME libaccel.so.<major>
#   lib/libaccel_*.so                       plugins (ACCEL_PLUGIN_PATH=<prefix>/lib finds them)
#   bin/accel                               the command-line tool
#   lib/cmake/accelhooks/                   find_package(accelhooks CONFIG): accelhooks::accel
#   lib/pkgconfig/accelhooks.pc             pkg-config --cflags --libs accelhooks
#   share/doc/accelhooks/                   for a vendor, laid out as in the repository:
#     README.md, docs/                        the documentation
#     examples/out_of_tree_backend/           the worked example (copy it to start a backend)
#     examples/framework_tour/main.cpp        the README's framework tour
#     backends/openreg/                       the reference backend (docs/openreg.md's tour)
#     conformance/src/                        the contract cases (failure messages name them)
#
# Everything is relocatable: `cmake --install build --prefix /elsewhere` gives
# a working tree (the CMake package and the .pc file find their prefix from
# their own location; binaries use $ORIGIN rpaths).
#
# Components: "runtime" (library, plugins, tool) and "development" (headers,
# the namelink, CMake package, pkg-config file).
include(CMakePackageConfigHelpers)

set(ACCEL_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/accelhooks
    CACHE STRING "Where the accelhooks CMake package is installed (relative to the prefix)")
# Plugins go next to libaccel.so by default: openreg is also a library that
# programs link, the installed `accel` tool looks in bin/../lib, and a scan
# of lib/ only picks files named libaccel_*.so.
set(ACCEL_INSTALL_PLUGINDIR ${CMAKE_INSTALL_LIBDIR}
    CACHE STRING "Where backend plugins are installed (relative to the prefix)")
set(ACCEL_INSTALL_PKGCONFIGDIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig
    CACHE STRING "Where accelhooks.pc is installed (relative to the prefix)")

# ---- the core ----
# The plugin API (accel/plugin_abi.h) the installed headers speak, "1.3".
file(STRINGS ${PROJECT_SOURCE_DIR}/include/accel/plugin_abi.h accel_abi_lines
  REGEX "#define ACCEL_PLUGIN_ABI_(MAJOR|MINOR) [0-9]+")
if(NOT accel_abi_lines MATCHES "ACCEL_PLUGIN_ABI_MAJOR ([0-9]+);.*ACCEL_PLUGIN_ABI_MINOR ([0-9]+)")
  message(FATAL_ERROR "cannot read ACCEL_PLUGIN_ABI_MAJOR and _MINOR from "
                      "include/accel/plugin_abi.h")
endif()
set(ACCEL_PLUGIN_ABI_VERSION ${CMAKE_MATCH_1}.${CMAKE_MATCH_2})
install(TARGETS accel EXPORT accelhooksTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    COMPONENT runtime
    NAMELINK_COMPONENT development
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS accel_plugin_headers EXPORT accelhooksTargets)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/accel
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT development
  FILES_MATCHING PATTERN "*.h")

# ---- plugins ----
# In a plugin directory of its own, a plugin finds libaccel.so through its rpath.
file(RELATIVE_PATH accel_plugin_to_libdir
  /prefix/${ACCEL_INSTALL_PLUGINDIR} /prefix/${CMAKE_INSTALL_LIBDIR})
foreach(plugin IN ITEMS accel_openreg_plugin accel_cuda_plugin accel_opencl_plugin)
  if(NOT TARGET ${plugin})
    continue()
  endif()
  if(accel_plugin_to_libdir)
    set_target_properties(${plugin} PROPERTIES
      INSTALL_RPATH "$ORIGIN/${accel_plugin_to_libdir}:$ORIGIN")
  endif()
endforeach()
if(TARGET accel_cuda_plugin)
  install(TARGETS accel_cuda_plugin LIBRARY DESTINATION ${ACCEL_INSTALL_PLUGINDIR} COMPONENT runtime)
endif()
if(TARGET accel_opencl)
  # OpenCL, as openreg: the plugin, and the API programs link
  # (accelhooks::accel_opencl, a static library over the core and the plugin).
  install(TARGETS accel_opencl_plugin accel_opencl EXPORT accelhooksTargets
    LIBRARY DESTINATION ${ACCEL_INSTALL_PLUGINDIR} COMPONENT runtime
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/backends/opencl/include/accel
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development FILES_MATCHING PATTERN "*.h")
endif()
if(TARGET accel_openreg)
  # openreg is also an API that programs link: accelhooks::accel_openreg, a
  # static library over the core and the plugin (which it links).
  install(TARGETS accel_openreg_plugin accel_openreg EXPORT accelhooksTargets
    LIBRARY DESTINATION ${ACCEL_INSTALL_PLUGINDIR} COMPONENT runtime
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/backends/openreg/include/accel
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    COMPONENT development
    FILES_MATCHING PATTERN "*.h")
endif()

# ---- the conformance suite ----
# A static library that carries GoogleTest, exported on its own so that
# find_package(accelhooks) does not need GoogleTest unless the component
# `conformance` is asked for.
if(TARGET accel_conformance)
  install(TARGETS accel_conformance EXPORT accelhooksConformanceTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/conformance/include/accel
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    COMPONENT development
    FILES_MATCHING PATTERN "*.h")
  install(EXPORT accelhooksConformanceTargets
    NAMESPACE accelhooks::
    FILE accelhooksConformanceTargets.cmake
    DESTINATION ${ACCEL_INSTALL_CMAKEDIR}
    COMPONENT development)
endif()

# ---- for vendors: documentation, the worked example, the openreg tour ----
# Installed with the same layout as the repository, so that the docs'
# relative links and paths (docs/writing-a-backend.md -> examples/...) hold
# in the installed copy too.
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR}
  COMPONENT development)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
  COMPONENT development)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/out_of_tree_backend
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT development)
# The README's framework tour: the source it quotes (built in-tree only).
install(FILES ${PROJECT_SOURCE_DIR}/examples/framework_tour/main.cpp
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples/framework_tour COMPONENT development)
if(TARGET accel_openreg)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/backends/openreg/
    DESTINATION ${CMAKE_INSTALL_DOCDIR}/backends/openreg COMPONENT development)
endif()
# The conformance cases: accel_conformance names its files by these installed
# paths (conformance/CMakeLists.txt), so a failure's file:line can be opened.
if(TARGET accel_conformance)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/conformance/src/
    DESTINATION ${CMAKE_INSTALL_DOCDIR}/conformance/src COMPONENT development)
endif()

# ---- the tool ----
# Every executable defined in tools/ (the `accel` tool; the core library owns
# the target name `accel`, so the tool's target has OUTPUT_NAME accel).
get_property(accel_subdirs DIRECTORY ${PROJECT_SOURCE_DIR} PROPERTY SUBDIRECTORIES)
if("${PROJECT_SOURCE_DIR}/tools" IN_LIST accel_subdirs)
  get_property(accel_tool_targets DIRECTORY ${PROJECT_SOURCE_DIR}/tools PROPERTY BUILDSYSTEM_TARGETS)
  foreach(tool IN LISTS accel_tool_targets)
    get_target_property(tool_type ${tool} TYPE)
    if(tool_type STREQUAL "EXECUTABLE")
      install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
    endif()
  endforeach()
endif()

# ---- the CMake package ----
install(EXPORT accelhooksTargets
  NAMESPACE accelhooks::
  FILE accelhooksTargets.cmake
  DESTINATION ${ACCEL_INSTALL_CMAKEDIR}
  COMPONENT development)
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/accelhooksConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/accelhooksConfig.cmake
  INSTALL_DESTINATION ${ACCEL_INSTALL_CMAKEDIR}
  PATH_VARS ACCEL_INSTALL_PLUGINDIR CMAKE_INSTALL_INCLUDEDIR)
# 0.x: a minor release may break the API (see docs/plugins.md), so only the
# same major.minor satisfies a request; from 1.0 on, SameMajorVersion.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(accel_version_compatibility SameMinorVersion)
else()
  set(accel_version_compatibility SameMajorVersion)
endif()
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/accelhooksConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY ${accel_version_compatibility})
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/accelhooksConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/accelhooksConfigVersion.cmake
  DESTINATION ${ACCEL_INSTALL_CMAKEDIR}
  COMPONENT development)

# ---- pkg-config ----
# The prefix is written relative to the .pc file's own directory, so that the
# file stays right when the install is moved or installed with --prefix.
file(RELATIVE_PATH accel_pc_prefix_from_pcfiledir
  /prefix/${ACCEL_INSTALL_PKGCONFIGDIR} /prefix)
string(REGEX REPLACE "/$" "" accel_pc_prefix_from_pcfiledir "${accel_pc_prefix_from_pcfiledir}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/accelhooks.pc.in
  ${PROJECT_BINARY_DIR}/cmake/accelhooks.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cmake/accelhooks.pc
  DESTINATION ${ACCEL_INSTALL_PKGCONFIGDIR}
  COMPONENT development)
