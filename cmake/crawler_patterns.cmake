# Converts the crawler patterns of the pinned npm package crawler-user-agents (installed by
# `npm ci` in src/domain/agents) into the click classifier's pattern text: one `bot-regex` line
# per pattern, with the package's name, version and license in the header. Usage:
#   cmake -DPACKAGE=.../node_modules/crawler-user-agents -DOUT=crawler_patterns.txt -P crawler_patterns.cmake
# Fails with a message naming the file when the package is missing or its content does not parse.
foreach(arg IN ITEMS PACKAGE OUT)
  if(NOT DEFINED ${arg})
    message(FATAL_ERROR "crawler_patterns.cmake: -D${arg}=... is required")
  endif()
endforeach()

set(manifest ${PACKAGE}/package.json)
set(data ${PACKAGE}/crawler-user-agents.json)
foreach(file IN ITEMS ${manifest} ${data})
  if(NOT EXISTS ${file})
    message(FATAL_ERROR "The crawler patterns are missing (${file}): run `npm ci` in "
                        "src/domain/agents (deploy/local/run.sh and test.sh do).")
  endif()
endforeach()

file(READ ${manifest} manifest_text)
foreach(key IN ITEMS name version license)
  string(JSON package_${key} ERROR_VARIABLE error GET "${manifest_text}" ${key})
  if(error)
    message(FATAL_ERROR "${manifest} does not parse or has no '${key}': ${error}")
  endif()
endforeach()

file(READ ${data} data_text)
string(JSON count ERROR_VARIABLE error LENGTH "${data_text}")
if(error OR count EQUAL 0)
  message(FATAL_ERROR "${data} does not parse as a JSON array of patterns: ${error}")
endif()

# Parsing the whole document once per entry would take minutes, so each entry's `"pattern": ...`
# line is parsed alone; the count check catches a change of layout.
file(STRINGS ${data} lines REGEX "^[ \t]*\"pattern\"[ \t]*:")
string(CONCAT body
  "# Crawler patterns of the npm package ${package_name} ${package_version} (license: "
  "${package_license}),\n# converted at build time by cmake/crawler_patterns.cmake; pinned in "
  "src/domain/agents/package-lock.json.\n")
set(found 0)
foreach(line IN LISTS lines)
  string(REGEX REPLACE ",[ \t]*$" "" member "${line}")
  string(JSON pattern ERROR_VARIABLE error GET "{${member}}" pattern)
  if(error OR pattern STREQUAL "" OR pattern MATCHES "[\r\n]")
    message(FATAL_ERROR "${data}: a pattern does not parse: ${line} ${error}")
  endif()
  string(APPEND body "bot-regex ${pattern}\n")
  math(EXPR found "${found} + 1")
endforeach()
if(NOT found EQUAL count)
  message(FATAL_ERROR "${data}: found ${found} \"pattern\" lines for ${count} entries; the file's "
                      "layout changed, so the patterns cannot be read one by one.")
endif()

file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
