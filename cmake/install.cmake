# multifit as a C++ library: `cmake --install` (component development) lays out
#   include/multifit/<layer>/...h           every layer's headers (#include "study/runner.h")
#   lib/libmf_*.a                            every layer's static library
#   lib/cmake/multifit/                      the package: find_package(multifit), target multifit::multifit
# examples/cpp/ is a program built against it; tests/install/check.sh builds and runs it.
include(CMakePackageConfigHelpers)

# multifit::multifit: everything, through the study layer (which links every layer below it).
add_library(mf_multifit INTERFACE)
target_link_libraries(mf_multifit INTERFACE mf_study)
set_target_properties(mf_multifit PROPERTIES EXPORT_NAME multifit)
add_library(multifit::multifit ALIAS mf_multifit)

set(mf_layer_libraries mf_runtime mf_kernels mf_data mf_backend_cpu mf_hostexec mf_backends mf_nn mf_study)
if(MULTIFIT_CUDA)
  list(APPEND mf_layer_libraries mf_cuda)
endif()
install(TARGETS ${mf_layer_libraries} mf_multifit EXPORT multifitTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development)

# The headers of every layer below the command line (target/ has no library of its own: its code is
# compiled into mf_hostexec and mf_cuda, but the cuda backend's headers include it).
install(DIRECTORY runtime target kernels data backends nn study
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/multifit COMPONENT development
        FILES_MATCHING PATTERN "*.h")

set(mf_package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/multifit)
install(EXPORT multifitTargets NAMESPACE multifit:: DESTINATION ${mf_package_dir} COMPONENT development)
configure_package_config_file(cmake/multifitConfig.cmake.in ${PROJECT_BINARY_DIR}/multifitConfig.cmake
                              INSTALL_DESTINATION ${mf_package_dir})
# 0.x: a minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/multifitConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/multifitConfig.cmake ${PROJECT_BINARY_DIR}/multifitConfigVersion.cmake
        DESTINATION ${mf_package_dir} COMPONENT development)
