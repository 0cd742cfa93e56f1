# Shared helpers for strait's CMake files.

# Warnings for strait's own targets (never for third-party code).
function(strait_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
      -Wold-style-cast -Wcast-align -Woverloaded-virtual>)
  if(STRAIT_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
endfunction()

# The allocator of strait's programs (the CLI, benchmarks): tcmalloc where configured.
function(strait_allocator target)
  if(STRAIT_HAVE_TCMALLOC)
    target_link_libraries(${target} PRIVATE PkgConfig::TCMALLOC)
  endif()
endfunction()

# strait_library(<name> SOURCES ... DEPS ...): a static library strait_<name>
# with alias strait::<name>, include root at the repository top. Installed (cmake
# --install) as strait::<name> of the strait package, with the folder's headers under
# include/strait/<folder> (detail/ too: public headers include some).
function(strait_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(strait_${name} STATIC ${ARG_SOURCES})
  add_library(strait::${name} ALIAS strait_${name})
  target_include_directories(strait_${name} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
                                                   $<INSTALL_INTERFACE:${STRAIT_INSTALL_INCLUDEDIR}>)
  target_link_libraries(strait_${name} PUBLIC ${ARG_DEPS})
  strait_warnings(strait_${name})
  strait_install_library(strait_${name} ${name})
endfunction()

# strait_install_library(<target> <name>): installs <target> as strait::<name>, and the
# headers of the folder that defines it.
function(strait_install_library target name)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  install(TARGETS ${target} EXPORT strait-targets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  file(RELATIVE_PATH folder ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/ DESTINATION ${STRAIT_INSTALL_INCLUDEDIR}/${folder}
          FILES_MATCHING PATTERN "*.hpp" PATTERN "*.cuh")
endfunction()

# strait_test(<name> SOURCES ... DEPS ... [LABELS ...]): one gtest binary per library.
function(strait_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name}_test ${ARG_SOURCES})
  target_link_libraries(${name}_test PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name}_test PRIVATE STRAIT_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  strait_warnings(${name}_test)
  set_target_properties(${name}_test PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  gtest_discover_tests(${name}_test
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    PROPERTIES LABELS "${name};${ARG_LABELS}"
    DISCOVERY_TIMEOUT 60)
endfunction()

# strait_position_independent(<target>): the strait libraries <target> links, transitively,
# are built as position-independent code, so that a shared object (the Python module) can
# hold them; the CLI links the same objects. -fno-semantic-interposition keeps the inlining
# and direct calls that -fPIC alone would give up for interposable functions.
function(strait_position_independent target)
  get_target_property(deps ${target} LINK_LIBRARIES)
  get_target_property(interface_deps ${target} INTERFACE_LINK_LIBRARIES)
  foreach(dep ${deps} ${interface_deps})
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" dep "${dep}")
    if(NOT dep MATCHES "^strait(::|_)" OR NOT TARGET ${dep})
      continue()
    endif()
    get_target_property(aliased ${dep} ALIASED_TARGET)
    if(aliased)
      set(dep ${aliased})
    endif()
    get_target_property(done ${dep} POSITION_INDEPENDENT_CODE)
    get_target_property(type ${dep} TYPE)
    if(done OR NOT type MATCHES "^(STATIC_LIBRARY|INTERFACE_LIBRARY)$")
      continue()
    endif()
    if(type STREQUAL "STATIC_LIBRARY")
      set_target_properties(${dep} PROPERTIES POSITION_INDEPENDENT_CODE ON)
      target_compile_options(${dep} PRIVATE
        $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU,Clang>>:-fno-semantic-interposition>)
    else()
      # Marks the interface library as visited (the property means nothing on it).
      set_target_properties(${dep} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    endif()
    strait_position_independent(${dep})
  endforeach()
endfunction()
