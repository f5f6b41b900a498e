# The one list of transports. Each transports/<folder>/CMakeLists.txt declares its transports
# with mtperf_transport(); transports/CMakeLists.txt then calls mtperf_transport_lists(), which
# writes everything that lists transports from those declarations (a transport declared
# TEST_ONLY, under tests/transports/, is left out of these; mtperf_test_registry() below makes
# the test build's registry with it):
#   generated/transports/api/transport_list.hpp  the default transport and every declared name
#   generated/transports/transport_list.cpp      transports() and transports_not_compiled()
#   generated/bindings/engine_list.hpp           the engine types the workload is instantiated over
#   transport_names.txt                          the declared names, one a line (ci/layers.sh)
# all under the build folder. Nothing else names a transport.

set(MTPERF_GENERATED_DIR ${PROJECT_BINARY_DIR}/generated)

# mtperf_transport(NAME name SUMMARY text
#                  ENTRY function ENTRY_HEADER header
#                  ENGINE type ENGINE_HEADER header
#                  LIBS targets...
#                  [DEFAULT] [TEST_ONLY] [ENABLED bool MISSING text])
#   NAME          what -T takes: lower case, digits, '_'
#   SUMMARY       the line `mtperf transports` prints
#   ENTRY         the C++ function (namespace mtperf) returning its `const TransportEntry&`:
#                 caps, options, probe and factory (name, summary and default come from here)
#   ENTRY_HEADER  the header declaring ENTRY, from the source root
#   ENGINE        the engine type its Transport hosts (EngineHost<ENGINE>), from namespace mtperf;
#                 bindings/ instantiates the workload over each ENGINE declared
#   ENGINE_HEADER the header declaring ENGINE, from the source root
#   LIBS          the libraries holding ENTRY and ENGINE
#   DEFAULT       the transport a test takes without -T (exactly one declaration says so)
#   TEST_ONLY     declared under tests/transports/<folder>/: never in the product's lists, only
#                 in the test registry (mtperf_test_registry()), for the tests that link it
#   ENABLED       false: declared but not compiled in (its library was not found); MISSING says
#                 why and how to get it, after "not compiled in: "
function(mtperf_transport)
  cmake_parse_arguments(T "DEFAULT;TEST_ONLY" "NAME;SUMMARY;ENTRY;ENTRY_HEADER;ENGINE;ENGINE_HEADER;ENABLED;MISSING"
    "LIBS" ${ARGN})
  set(where "mtperf_transport() in ${CMAKE_CURRENT_LIST_FILE}")
  if(T_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${where}: unknown arguments: ${T_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT T_NAME MATCHES "^[a-z][a-z0-9_]*$")
    message(FATAL_ERROR "${where}: NAME '${T_NAME}' must be lower case letters, digits and '_'")
  endif()
  get_property(names GLOBAL PROPERTY MTPERF_TRANSPORTS)
  if(T_NAME IN_LIST names)
    message(FATAL_ERROR "${where}: transport '${T_NAME}' is declared twice")
  endif()
  if(NOT DEFINED T_ENABLED)
    set(T_ENABLED ON)
  endif()
  foreach(field SUMMARY ENTRY ENTRY_HEADER ENGINE ENGINE_HEADER LIBS)
    if(NOT T_${field})
      message(FATAL_ERROR "${where}: transport '${T_NAME}' has no ${field}")
    endif()
  endforeach()
  foreach(header ${T_ENTRY_HEADER} ${T_ENGINE_HEADER})
    if(NOT EXISTS ${PROJECT_SOURCE_DIR}/${header})
      message(FATAL_ERROR "${where}: transport '${T_NAME}': ${header} does not exist")
    endif()
  endforeach()
  if(NOT T_ENABLED AND NOT T_MISSING)
    message(FATAL_ERROR "${where}: transport '${T_NAME}' may be left out but has no MISSING")
  endif()
  # The first folder under transports/ (tests/transports/ for a test-only one): its tests are
  # tests/transports/<folder>/.
  set(root ${PROJECT_SOURCE_DIR}/transports)
  if(T_TEST_ONLY)
    set(root ${PROJECT_SOURCE_DIR}/tests/transports)
    if(T_DEFAULT)
      message(FATAL_ERROR "${where}: the test-only transport '${T_NAME}' cannot be the DEFAULT")
    endif()
  endif()
  file(RELATIVE_PATH rel ${root} ${CMAKE_CURRENT_SOURCE_DIR})
  if(rel MATCHES "^\\.\\.")
    message(FATAL_ERROR "${where}: a transport is declared under ${root}/")
  endif()
  string(REGEX REPLACE "/.*" "" folder "${rel}")
  set_property(GLOBAL APPEND PROPERTY MTPERF_TRANSPORTS ${T_NAME})
  foreach(field SUMMARY ENTRY ENTRY_HEADER ENGINE ENGINE_HEADER LIBS ENABLED MISSING DEFAULT
          TEST_ONLY)
    set_property(GLOBAL PROPERTY MTPERF_TRANSPORT_${T_NAME}_${field} "${T_${field}}")
  endforeach()
  set_property(GLOBAL PROPERTY MTPERF_TRANSPORT_${T_NAME}_FOLDER ${folder})
endfunction()

# A CMake string as a C++ string literal.
function(mtperf_cxx_literal out text)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  set(${out} "\"${text}\"" PARENT_SCOPE)
endfunction()

# mtperf_transport_lists(LIBS_VAR FOLDERS_VAR): writes the generated files (above) from the
# product's declarations (not the TEST_ONLY ones) and sets LIBS_VAR to the libraries of the
# transports compiled in, FOLDERS_VAR to their folders.
function(mtperf_transport_lists libs_var folders_var)
  get_property(declared GLOBAL PROPERTY MTPERF_TRANSPORTS)
  set(names "")
  foreach(name ${declared})
    get_property(test_only GLOBAL PROPERTY MTPERF_TRANSPORT_${name}_TEST_ONLY)
    if(NOT test_only)
      list(APPEND names ${name})
    endif()
  endforeach()
  mtperf_write_transport_lists("${names}" ${MTPERF_GENERATED_DIR} ON libs folders)
  list(JOIN names "\n" names_text)
  file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/transport_names.txt CONTENT "${names_text}\n")
  set(${libs_var} ${libs} PARENT_SCOPE)
  set(${folders_var} ${folders} PARENT_SCOPE)
  set_property(GLOBAL PROPERTY MTPERF_TRANSPORT_FOLDERS ${folders})
endfunction()

# mtperf_test_registry(TARGET): an OBJECT library of the registry and the workload bindings over
# every transport declared, the TEST_ONLY ones included (their lists under generated/tests/). A
# test executable that links TARGET has these objects in itself, and they take the place of the
# product's registry and bindings (a linker takes an executable's own definitions first), so
# transports() and run_worker() there serve the test transports too. Called once every test
# transport folder has been added.
function(mtperf_test_registry target)
  get_property(names GLOBAL PROPERTY MTPERF_TRANSPORTS)
  set(dir ${MTPERF_GENERATED_DIR}/tests)
  mtperf_write_transport_lists("${names}" ${dir} OFF libs folders)
  add_library(${target} OBJECT ${PROJECT_SOURCE_DIR}/transports/registry.cpp
    ${dir}/transports/transport_list.cpp ${PROJECT_SOURCE_DIR}/bindings/workers.cpp)
  # BEFORE: this list's bindings/engine_list.hpp, not the product's.
  target_include_directories(${target} BEFORE PRIVATE ${dir})
  target_link_libraries(${target} PUBLIC ${libs} mtperf_workloads)
  mtperf_target(${target})
endfunction()

# mtperf_write_transport_lists(NAMES DIR WITH_HEADER LIBS_VAR FOLDERS_VAR): the generated lists of
# the transports NAMES under DIR; the header of names and default (transport_list.hpp) only
# WITH_HEADER, since every part of the build sees the product's.
function(mtperf_write_transport_lists names dir with_header libs_var folders_var)
  set(default "")
  set(libs "")
  set(folders "")
  set(engines "")
  set(engine_headers "")
  set(entry_headers "")
  set(entries "")
  set(missing "")
  set(all_names "")
  foreach(name ${names})
    foreach(field SUMMARY ENTRY ENTRY_HEADER ENGINE ENGINE_HEADER LIBS ENABLED MISSING DEFAULT FOLDER)
      get_property(${field} GLOBAL PROPERTY MTPERF_TRANSPORT_${name}_${field})
    endforeach()
    string(APPEND all_names "    \"${name}\",\n")
    if(DEFAULT)
      if(default)
        message(FATAL_ERROR "mtperf_transport(): both '${default}' and '${name}' say DEFAULT")
      endif()
      if(NOT ENABLED)
        message(FATAL_ERROR "mtperf_transport(): the DEFAULT transport '${name}' is left out")
      endif()
      set(default ${name})
    endif()
    if(NOT ENABLED)
      mtperf_cxx_literal(why "not compiled in: ${MISSING}")
      string(APPEND missing "      {\"${name}\", ${why}},\n")
      continue()
    endif()
    foreach(lib ${LIBS})
      if(NOT TARGET ${lib})
        message(FATAL_ERROR "mtperf_transport(): transport '${name}' names LIBS ${lib}, which no "
          "folder builds")
      endif()
    endforeach()
    list(APPEND libs ${LIBS})
    list(APPEND folders ${FOLDER})
    list(APPEND engines ${ENGINE})
    list(APPEND engine_headers ${ENGINE_HEADER})
    list(APPEND entry_headers ${ENTRY_HEADER})
    mtperf_cxx_literal(summary "${SUMMARY}")
    if(DEFAULT)
      set(is_default true)
    else()
      set(is_default false)
    endif()
    string(APPEND entries
      "      declared(${ENTRY}(), \"${name}\",\n               ${summary},\n"
      "               ${is_default}),\n")
  endforeach()
  if(NOT default)
    message(FATAL_ERROR "mtperf_transport(): no transport says DEFAULT")
  endif()
  foreach(var libs folders engines engine_headers entry_headers)
    list(REMOVE_DUPLICATES ${var})
  endforeach()

  set(banner "// Generated by CMake from the mtperf_transport() declarations in transports/*/\n// (cmake/MtperfTransport.cmake). Do not edit: change the declaration.")

  if(with_header)
    file(CONFIGURE OUTPUT ${dir}/transports/api/transport_list.hpp @ONLY CONTENT
"#pragma once
${banner}
#include <string_view>

namespace mtperf {

// The transport a test takes without -T: the declaration that says DEFAULT.
inline constexpr std::string_view kDefaultTransport = \"${default}\";

// Every transport declared in this source tree, compiled in or not, in declaration order.
inline constexpr std::string_view kDeclaredTransports[] = {
${all_names}};

}  // namespace mtperf
")
  endif()

  set(includes "")
  foreach(h ${entry_headers})
    string(APPEND includes "#include \"${h}\"\n")
  endforeach()
  file(CONFIGURE OUTPUT ${dir}/transports/transport_list.cpp @ONLY CONTENT
"${banner}
#include \"transports/api/registry.hpp\"

${includes}
namespace mtperf {
namespace {

// The entry as its folder builds it, with what its declaration says.
TransportEntry declared(const TransportEntry& e, std::string_view name, std::string_view summary,
                        bool is_default) {
  TransportEntry out = e;
  out.name = name;
  out.summary = summary;
  out.is_default = is_default;
  return out;
}

}  // namespace

std::span<const TransportEntry> transports() {
  static const std::vector<TransportEntry> all{
${entries}  };
  return all;
}

std::vector<std::pair<std::string, std::string>> transports_not_compiled() {
  return {
${missing}  };
}

}  // namespace mtperf
")

  set(includes "")
  foreach(h ${engine_headers})
    string(APPEND includes "#include \"${h}\"\n")
  endforeach()
  list(JOIN engines ", " engine_types)
  file(CONFIGURE OUTPUT ${dir}/bindings/engine_list.hpp @ONLY CONTENT
"#pragma once
${banner}
#include <tuple>

${includes}
namespace mtperf {

// The engine type of every transport compiled in, once each: bindings/workers.cpp instantiates
// the workload over each (a type list; never constructed).
using CompiledEngines = std::tuple<${engine_types}>;

}  // namespace mtperf
")

  set(${libs_var} ${libs} PARENT_SCOPE)
  set(${folders_var} ${folders} PARENT_SCOPE)
endfunction()
