# The one list of transports. Each transports/<folder>/CMakeLists.txt declares its transports
# with mtperf_transport(); transports/CMakeLists.txt then calls mtperf_transport_lists(), which
# writes everything that lists transports from those declarations:
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
#                  [DEFAULT] [ENABLED bool MISSING text])
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
#   ENABLED       false: declared but not compiled in (its library was not found); MISSING says
#                 why and how to get it, after "not compiled in: "
function(mtperf_transport)
  cmake_parse_arguments(T "DEFAULT" "NAME;SUMMARY;ENTRY;ENTRY_HEADER;ENGINE;ENGINE_HEADER;ENABLED;MISSING"
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
  # The first folder under transports/: its tests are tests/transports/<folder>/.
  file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR}/transports ${CMAKE_CURRENT_SOURCE_DIR})
  string(REGEX REPLACE "/.*" "" folder "${rel}")
  set_property(GLOBAL APPEND PROPERTY MTPERF_TRANSPORTS ${T_NAME})
  foreach(field SUMMARY ENTRY ENTRY_HEADER ENGINE ENGINE_HEADER LIBS ENABLED MISSING DEFAULT)
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

# mtperf_transport_lists(LIBS_VAR FOLDERS_VAR): writes the generated files (above) and sets
# LIBS_VAR to the libraries of the transports compiled in, FOLDERS_VAR to their folders.
function(mtperf_transport_lists libs_var folders_var)
  get_property(names GLOBAL PROPERTY MTPERF_TRANSPORTS)
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

  file(CONFIGURE OUTPUT ${MTPERF_GENERATED_DIR}/transports/api/transport_list.hpp @ONLY CONTENT
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

  set(includes "")
  foreach(h ${entry_headers})
    string(APPEND includes "#include \"${h}\"\n")
  endforeach()
  file(CONFIGURE OUTPUT ${MTPERF_GENERATED_DIR}/transports/transport_list.cpp @ONLY CONTENT
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
  file(CONFIGURE OUTPUT ${MTPERF_GENERATED_DIR}/bindings/engine_list.hpp @ONLY CONTENT
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

  list(JOIN names "\n" names_text)
  file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/transport_names.txt CONTENT "${names_text}\n")

  set(${libs_var} ${libs} PARENT_SCOPE)
  set(${folders_var} ${folders} PARENT_SCOPE)
  set_property(GLOBAL PROPERTY MTPERF_TRANSPORT_FOLDERS ${folders})
endfunction()
