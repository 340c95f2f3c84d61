# refgate_embed_crawler_patterns(PACKAGE OUT_VAR): adds the build step that converts the crawler
# patterns of the npm package installed at PACKAGE (crawler_patterns.cmake) and compiles them into
# a C++ file (embed_text.cmake) defining refgate::embedded_crawler_patterns(); sets OUT_VAR to
# that file. Included by src/domain and by the fuzz project.
set(REFGATE_CRAWLER_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

function(refgate_embed_crawler_patterns package out_var)
  set(dir ${REFGATE_CRAWLER_CMAKE_DIR})
  set(text ${CMAKE_CURRENT_BINARY_DIR}/generated/crawler_patterns.txt)
  set(cpp ${CMAKE_CURRENT_BINARY_DIR}/generated/crawler_patterns_data.cpp)
  add_custom_command(
    OUTPUT ${text} ${cpp}
    COMMAND ${CMAKE_COMMAND} -DPACKAGE=${package} -DOUT=${text} -P ${dir}/crawler_patterns.cmake
    COMMAND ${CMAKE_COMMAND} -DIN=${text} -DOUT=${cpp} -DFUNCTION=refgate::embedded_crawler_patterns
            -DHEADER=refgate/domain/click_classifier.hpp -P ${dir}/embed_text.cmake
    DEPENDS ${package}/crawler-user-agents.json ${package}/package.json
            ${dir}/crawler_patterns.cmake ${dir}/embed_text.cmake
    COMMENT "Converting and embedding the crawler patterns"
    VERBATIM)
  set(${out_var} ${cpp} PARENT_SCOPE)
endfunction()
