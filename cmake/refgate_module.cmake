# refgate_module(<name> SOURCES ... [USES modules/targets...] [PRIVATE_USES ...])
#
# One library per module. Its public headers live in include/<name>/refgate/<name>/ and only that
# root is exported, so a module sees the headers of the modules it USES and of nothing else: an
# include of a higher layer's header fails to compile. Sources and private headers live in
# src/<name>/.
function(refgate_module name)
  cmake_parse_arguments(M "" "" "SOURCES;USES;PRIVATE_USES" ${ARGN})
  add_library(refgate_${name} ${M_SOURCES})
  add_library(refgate::${name} ALIAS refgate_${name})
  target_include_directories(refgate_${name}
    PUBLIC ${PROJECT_SOURCE_DIR}/include/${name}
    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_features(refgate_${name} PUBLIC cxx_std_20)
  target_link_libraries(refgate_${name} PUBLIC ${M_USES} PRIVATE refgate_warnings ${M_PRIVATE_USES})
endfunction()
