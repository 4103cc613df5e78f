# Installs the build into a fresh prefix, then configures, builds and runs examples/downstream
# against it, as a user's own project would (README, "Use it from your CMake project"; the
# testing kit's example, docs/testing.md).
# -DBUILD_DIR, -DSOURCE_DIR, -DWORK_DIR.
file(REMOVE_RECURSE ${WORK_DIR})
include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)
run_step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
run_step("configure" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/downstream -B ${WORK_DIR}/build
         -G Ninja -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release)
run_step("build" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run_step("run" ${WORK_DIR}/build/psum_on_the_simulator)
run_step("property tests" ${WORK_DIR}/build/property_test_your_collectives)
