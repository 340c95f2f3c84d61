# Writes a C++ file whose function FUNCTION (declared in HEADER) returns the text of IN, as a raw
# string literal. Usage:
#   cmake -DIN=file.txt -DOUT=file.cpp -DFUNCTION=ns::name -DHEADER=ns/header.hpp -P embed_text.cmake
foreach(arg IN ITEMS IN OUT FUNCTION HEADER)
  if(NOT DEFINED ${arg})
    message(FATAL_ERROR "embed_text.cmake: -D${arg}=... is required")
  endif()
endforeach()

file(READ ${IN} text)
set(delimiter "refgate_text")
string(FIND "${text}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "embed_text.cmake: ${IN} contains the raw string delimiter )${delimiter}\"")
endif()
file(RELATIVE_PATH source ${CMAKE_CURRENT_LIST_DIR}/.. ${IN})

set(body "// Generated from ${source} by cmake/embed_text.cmake; do not edit.\n")
string(APPEND body "#include \"${HEADER}\"\n\n")
# The qualified name only compiles when HEADER declares the function with this signature.
string(APPEND body "std::string_view ${FUNCTION}() {\n")
string(APPEND body "    return R\"${delimiter}(${text})${delimiter}\";\n}\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
