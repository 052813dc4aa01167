# Installing Kiln as a CMake package: `cmake --install build --prefix P`, then in a user's project
#   find_package(kiln REQUIRED)            # CMAKE_PREFIX_PATH=P
#   target_link_libraries(app PRIVATE kiln::kiln)
# installs the public headers (include/kiln/), the static library of every layer below the tools
# and kilnConfig.cmake, which finds what those libraries link (docs/api.md, "Installing"):
#  * the CUDA toolkit (find_dependency(CUDAToolkit)): cuda.h for the runtime's headers, nvJitLink;
#  * the PTX compiler library, libnvptxcompiler_static.a, which Kiln links to assemble sm_90a with
#    setmaxnreg honoured: it comes from a pip wheel here (nvidia-nvptxcompiler), whose place
#    changes with the Python environment, so the package carries its own copy, of the version
#    Kiln was built and tested with, in lib/kiln/ (KILN_NVPTXCOMPILER_DIR overrides it).
include(CMakePackageConfigHelpers)

set(KILN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)
get_property(kiln_layers GLOBAL PROPERTY KILN_LAYERS)
list(REMOVE_ITEM kiln_layers driver)  # what the tools share: not part of the API
list(TRANSFORM kiln_layers PREPEND kiln_ OUTPUT_VARIABLE kiln_layer_targets)

install(TARGETS kiln_common kiln_public ${kiln_layer_targets} EXPORT kilnTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT devel)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kiln DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT devel)
install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION ${KILN_INSTALL_CMAKEDIR} COMPONENT devel)

set(KILN_HAVE_NVPTXCOMPILER OFF)
if(KILN_NVPTXCOMPILER_LIB AND KILN_NVPTXCOMPILER_INCLUDE)
  set(KILN_HAVE_NVPTXCOMPILER ON)
  install(FILES ${KILN_NVPTXCOMPILER_LIB} DESTINATION ${CMAKE_INSTALL_LIBDIR}/kiln COMPONENT devel)
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/kilnConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/kilnConfig.cmake
                              INSTALL_DESTINATION ${KILN_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/kilnConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/kilnConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/kilnConfigVersion.cmake
        DESTINATION ${KILN_INSTALL_CMAKEDIR} COMPONENT devel)
