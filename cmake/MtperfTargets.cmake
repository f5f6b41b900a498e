# Common settings for every mtperf target: warnings, include root.
function(mtperf_target target)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  if(MTPERF_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# mtperf_library(name SOURCES ... DEPS ...): a static library rooted at the source tree.
function(mtperf_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  mtperf_target(${name})
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
