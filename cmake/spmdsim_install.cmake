# `cmake --install`: the libraries as one CMake package, spmdsim (find_package(spmdsim CONFIG)),
# with namespaced targets (spmdsim::reference, ::sim, ...; spmdsim::spmdsim links them all, and
# spmdsim::testing, the property-testing kit, is a component of its own because it needs
# RapidCheck: find_package(spmdsim CONFIG REQUIRED COMPONENTS testing)), their
# headers under include/spmdsim (`#include "sim/machine.h"`), and the flags bit-exactness needs
# on every target that uses them: the headers' templates fold in the user's translation units.
include(CMakePackageConfigHelpers)

set(spmd_installed_libraries spmd_reference spmd_support spmd_topology spmd_cost_model
    spmd_collectives spmd_sim spmd_hlo)
foreach(library ${spmd_installed_libraries})
  string(REPLACE "spmd_" "" export_name ${library})
  set_target_properties(${library} PROPERTIES EXPORT_NAME ${export_name})
endforeach()
target_compile_options(spmd_reference INTERFACE
                       $<INSTALL_INTERFACE:$<$<COMPILE_LANGUAGE:CXX>:-ffp-contract=off;-fno-fast-math>>)
target_compile_features(spmd_reference INTERFACE cxx_std_20)
# A sanitized build (SPMD_SANITIZE, docs/sanitizers.md) installs instrumented libraries: the
# programs that link them need the sanitizer runtimes too.
if(SPMD_SANITIZE)
  target_link_options(spmd_reference INTERFACE $<INSTALL_INTERFACE:${spmd_sanitize_flags}>)
endif()

add_library(spmd_package INTERFACE)
set_target_properties(spmd_package PROPERTIES EXPORT_NAME spmdsim)
target_link_libraries(spmd_package INTERFACE ${spmd_installed_libraries})

install(TARGETS ${spmd_installed_libraries} spmd_package EXPORT spmdsimTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(SPMD_TESTS)  # the kit is built with the tests (CMakeLists.txt at the top)
  set_target_properties(spmd_testing PROPERTIES EXPORT_NAME testing)
  install(TARGETS spmd_testing EXPORT spmdsimTestingTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(TARGETS spmdsim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(folder reference support topology cost_model collectives sim hlo testing)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${folder} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/spmdsim
          FILES_MATCHING PATTERN "*.h")
endforeach()

set(spmd_package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/spmdsim)
install(EXPORT spmdsimTargets NAMESPACE spmdsim:: DESTINATION ${spmd_package_dir})
if(SPMD_TESTS)
  install(EXPORT spmdsimTestingTargets NAMESPACE spmdsim:: DESTINATION ${spmd_package_dir})
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/spmdsimConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/spmdsimConfig.cmake
                              INSTALL_DESTINATION ${spmd_package_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/spmdsimConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/spmdsimConfig.cmake
              ${PROJECT_BINARY_DIR}/spmdsimConfigVersion.cmake
        DESTINATION ${spmd_package_dir})

# The collective library plugin ABI: one C header, all a plugin author needs (docs/backends.md).
# Its own component, so that `cmake --install build --component plugin_abi` installs it alone.
install(FILES ${PROJECT_SOURCE_DIR}/backends/plugin/spmdsim_plugin.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/spmdsim/backends/plugin COMPONENT plugin_abi)
