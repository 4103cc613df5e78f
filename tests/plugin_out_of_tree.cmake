# Installs the plugin header alone into a fresh prefix, builds examples/plugins as a project of
# its own against it (as a plugin author's CI would), and checks the plugin it built with
# spmdsim conform. -DBUILD_DIR, -DSOURCE_DIR, -DWORK_DIR, -DSPMDSIM.
file(REMOVE_RECURSE ${WORK_DIR})
include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)
run_step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
         --component plugin_abi)
run_step("configure" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/plugins -B ${WORK_DIR}/build
         -G Ninja -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release)
run_step("build" ${CMAKE_COMMAND} --build ${WORK_DIR}/build --target thread_ring)
run_step("conform" ${SPMDSIM} conform --backend-plugin ${WORK_DIR}/build/libthread_ring.so
         ${SOURCE_DIR}/tests/conformance/cases)
