# Common settings for every mtperf target: warnings, include root, sanitizers.

# MTPERF_SANITIZE: sanitizers for every mtperf target (libraries, tests, the mtperf binary and
# the benchmarks), as -fsanitize takes them: "address,undefined" or "thread"; empty = none.
# Any report is fatal (-fno-sanitize-recover=all), so a UBSan finding fails the test that met it.
set(MTPERF_SANITIZE "" CACHE STRING "Sanitizers for every mtperf target (address,undefined or thread)")

# mtperf_sanitize(target): the MTPERF_SANITIZE flags on one target (compile, and link for
# executables). mtperf_target() calls it; targets built otherwise call it themselves.
function(mtperf_sanitize target)
  if(NOT MTPERF_SANITIZE)
    return()
  endif()
  target_compile_options(${target} PRIVATE -fsanitize=${MTPERF_SANITIZE}
    -fno-sanitize-recover=all -fno-omit-frame-pointer)
  # GCC's instrumentation makes -Wmaybe-uninitialized report values that are initialized (in
  # libstdc++'s <regex>, among others); the plain build keeps the warning.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-maybe-uninitialized)
  endif()
  target_link_options(${target} PRIVATE -fsanitize=${MTPERF_SANITIZE})
  # Tests leave out their speed floors: an instrumented build is several times slower.
  target_compile_definitions(${target} PRIVATE MTPERF_SANITIZED=1)
endfunction()

function(mtperf_target target)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  if(MTPERF_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  # In a unity build each source is included into one file, so gcc takes a source's own class
  # that holds a type of its anonymous namespace for a header's, and warns (-Wsubobject-linkage).
  if(CMAKE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
  endif()
  mtperf_sanitize(${target})
endfunction()

# MTPERF_SHARED_LIBS: the libraries as shared objects. The sanitized builds take them: each of
# their ~100 test executables then holds only its own code, not a copy of every library it links
# (an ASan test executable is ~24 MB with static libraries), which keeps a CI run's disk use to a
# few GB. The plain build stays static: the data path calls across libraries, and a shared
# library's calls go through the PLT.
option(MTPERF_SHARED_LIBS "Build the mtperf libraries as shared objects" OFF)
if(MTPERF_SHARED_LIBS)
  set(MTPERF_LIBRARY_TYPE SHARED)
else()
  set(MTPERF_LIBRARY_TYPE STATIC)
endif()

# MTPERF_PCH: precompiled headers (cmake/pch/), for the sanitized builds, where parsing the
# standard library, {fmt}, nlohmann/json and Catch2 again in every source is a third of an -O0
# compile (measured with clang: 10.1 s against 7.2 s for one source). A library of two sources or
# more compiles its own; every test executable reuses one (mtperf_pch_tests, tests/).
option(MTPERF_PCH "Precompile the common headers (cmake/pch/)" OFF)

# mtperf_pch(target): the library's precompiled header, under MTPERF_PCH.
function(mtperf_pch target)
  get_target_property(srcs ${target} SOURCES)
  list(LENGTH srcs n)
  if(MTPERF_PCH AND n GREATER 1)
    target_precompile_headers(${target} PRIVATE ${PROJECT_SOURCE_DIR}/cmake/pch/common.hpp)
  endif()
endfunction()

# mtperf_library(name SOURCES ... DEPS ...): a library rooted at the source tree (static unless
# MTPERF_SHARED_LIBS).
function(mtperf_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} ${MTPERF_LIBRARY_TYPE} ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  mtperf_target(${name})
  mtperf_pch(${name})
endfunction()

# mtperf_folder_library(name DEPS ...): a library of every *.cpp in the calling folder.
function(mtperf_folder_library name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  if(srcs)
    mtperf_library(${name} SOURCES ${srcs} DEPS ${ARG_DEPS})
  else()
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name} INTERFACE ${ARG_DEPS})
  endif()
endfunction()
