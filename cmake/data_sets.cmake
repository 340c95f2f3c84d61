# refgate_embed_data_set(NAME KIND PACKAGE FUNCTION HEADER OUT_VAR [INPUT...]): adds the build
# step that converts the data package at PACKAGE (a directory under third_party/node_modules, or
# "-" for none) with `refgate_data KIND` (src/tools/data_convert.cpp) into generated/NAME.txt, and
# compiles that text into generated/NAME_data.cpp, whose FUNCTION (declared in HEADER) returns it
# (embed_text.cmake); sets OUT_VAR to the C++ file. INPUT: the package's files the step reads.
# Used by src/domain, src/admin and the fuzz project, which each define the refgate_data target.
set(REFGATE_DATA_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

function(refgate_embed_data_set name kind package function header out_var)
  set(text ${CMAKE_CURRENT_BINARY_DIR}/generated/${name}.txt)
  set(cpp ${CMAKE_CURRENT_BINARY_DIR}/generated/${name}_data.cpp)
  add_custom_command(
    OUTPUT ${text} ${cpp}
    COMMAND refgate_data ${kind} ${package} ${text}
    COMMAND ${CMAKE_COMMAND} -DIN=${text} -DOUT=${cpp} -DFUNCTION=${function} -DHEADER=${header}
            -P ${REFGATE_DATA_CMAKE_DIR}/embed_text.cmake
    DEPENDS refgate_data ${ARGN} ${REFGATE_DATA_CMAKE_DIR}/embed_text.cmake
    COMMENT "Converting and embedding ${name}"
    VERBATIM)
  set(${out_var} ${cpp} PARENT_SCOPE)
endfunction()
