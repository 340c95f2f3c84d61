# Converts the common-password list of the pinned npm package @zxcvbn-ts/language-common
# (installed by `npm ci` in src/admin/passwords) into the text the console's password policy
# embeds: a first line naming the package, version and license, then one password per line in
# ASCII lower case, most common first (the package's order). Usage:
#   cmake -DPACKAGE=.../node_modules/@zxcvbn-ts/language-common -DOUT=common_passwords.txt -P common_passwords.cmake
#   cmake -DOUT=common_passwords.txt -P common_passwords.cmake     (no PACKAGE: an empty list)
# Fails with a message naming the file when the package is missing or its content does not parse.
if(NOT DEFINED OUT)
  message(FATAL_ERROR "common_passwords.cmake: -DOUT=... is required")
endif()

# -DREFGATE_PASSWORD_LIST=OFF: no list, so the policy checks length, name and repetition only.
if(NOT DEFINED PACKAGE OR PACKAGE STREQUAL "")
  file(WRITE ${OUT}.tmp "")
  file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
  return()
endif()

set(manifest ${PACKAGE}/package.json)
set(data ${PACKAGE}/src/passwords.json)
foreach(file IN ITEMS ${manifest} ${data})
  if(NOT EXISTS ${file})
    message(FATAL_ERROR "The common-password list is missing (${file}): run `npm ci` in "
                        "src/admin/passwords (deploy/local/run.sh and test.sh do).")
  endif()
endforeach()

file(READ ${manifest} manifest_text)
foreach(key IN ITEMS name version license)
  string(JSON package_${key} ERROR_VARIABLE error GET "${manifest_text}" ${key})
  if(error)
    message(FATAL_ERROR "${manifest} does not parse or has no '${key}': ${error}")
  endif()
endforeach()

# The file is one JSON array of plain strings: ["123456","password",...]. Parsing it entry by
# entry with string(JSON) would take minutes, and CMake lists cannot hold entries with ';' or
# brackets, so the array is rewritten as text: a layout this cannot read (an escape, a string
# with a quote) fails the build rather than embedding a wrong list.
file(READ ${data} text)
string(STRIP "${text}" text)
if(NOT text MATCHES "^\\[\"" OR NOT text MATCHES "\"\\]$")
  message(FATAL_ERROR "${data}: expected a JSON array of strings on one line")
endif()
if(text MATCHES "[\\\\\n\r]")
  message(FATAL_ERROR "${data}: an entry holds an escape or a line break; the file's layout "
                      "changed, so the list cannot be converted as text.")
endif()
string(LENGTH "${text}" length)
math(EXPR inner "${length} - 4")
string(SUBSTRING "${text}" 2 ${inner} text)
string(REPLACE "\",\"" "\n" lines "${text}")
if(lines MATCHES "\"" OR lines MATCHES "\n\n")
  message(FATAL_ERROR "${data}: an entry holds a quote or is empty; the file's layout changed")
endif()
# Entries are compared in ASCII lower case (the list is lower case already).
string(TOLOWER "${lines}" lines)
string(LENGTH "${text}" before)
string(LENGTH "${lines}" after)
math(EXPR count "(${before} - ${after}) / 2 + 1")
if(count LESS 1000)
  message(FATAL_ERROR "${data}: only ${count} entries; expected a list of tens of thousands")
endif()

string(CONCAT body
  "npm package ${package_name} ${package_version} (license: ${package_license}), ${count} "
  "passwords, most common first; pinned in src/admin/passwords/package-lock.json\n"
  "${lines}\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
