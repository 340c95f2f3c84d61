# Passed as -DCMAKE_PROJECT_INCLUDE by tests/bench/run.sh to build refgate_micro_bench in a build
# directory of its own without editing the top-level CMakeLists.txt. It runs at the end of the
# top level's project(), before src/ is added; that is fine because target names in
# target_link_libraries are resolved when the build system is generated.
# Not needed (and not used by run.sh) once the top level has the REFGATE_BUILD_BENCH option.
add_subdirectory(${CMAKE_CURRENT_LIST_DIR} ${CMAKE_BINARY_DIR}/tests/bench)
