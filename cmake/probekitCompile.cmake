# probekit_compile(<target> <spec.d> [FORMAT header|json|gdb|markdown]
#                  [OUTPUT <file>] [OPTIONS <probekit compile flags>...])
#
# Runs `probekit compile` on <spec.d> as a build step of <target>: the output
# is regenerated when the spec (or probekit) changes and is built before the
# target's sources. FORMAT defaults to header; OUTPUT defaults to
# <target>_probes.h (.json, .gdb, .md), relative paths being in the current
# binary directory. A header's directory is added to the target's include
# path, so sources `#include "<target>_probes.h"`. OPTIONS are passed as they
# are (-I, -D, -x c++, --provider ...; see `probekit compile --help`).
# The stap and bpftrace formats name the built binary, so they are not a
# step of its own build: run `probekit compile --format stap --binary ...`
# after it.
function(probekit_compile target spec)
  cmake_parse_arguments(PARSE_ARGV 2 ARG "" "FORMAT;OUTPUT" "OPTIONS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "probekit_compile: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "probekit_compile: '${target}' is not a target (call it after add_executable or add_library)")
  endif()
  if(NOT ARG_FORMAT)
    set(ARG_FORMAT header)
  endif()
  set(suffixes header .h json .json gdb .gdb markdown .md)
  list(FIND suffixes "${ARG_FORMAT}" i)
  if(i EQUAL -1 OR ARG_FORMAT MATCHES "^\\.")
    message(FATAL_ERROR "probekit_compile: FORMAT must be header, json, gdb or markdown, not '${ARG_FORMAT}'")
  endif()
  math(EXPR i "${i} + 1")
  list(GET suffixes ${i} suffix)
  if(NOT ARG_OUTPUT)
    set(ARG_OUTPUT "${target}_probes${suffix}")
  endif()
  get_filename_component(spec "${spec}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  get_filename_component(output "${ARG_OUTPUT}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  get_filename_component(output_dir "${output}" DIRECTORY)
  get_filename_component(output_name "${output}" NAME)

  add_custom_command(
    OUTPUT "${output}"
    COMMAND probekit::cli compile --format ${ARG_FORMAT} ${ARG_OPTIONS} "${spec}" -o "${output}"
    DEPENDS "${spec}" probekit::cli
    COMMENT "probekit compile: ${output_name}"
    VERBATIM)
  target_sources(${target} PRIVATE "${output}")
  if(ARG_FORMAT STREQUAL "header")
    target_include_directories(${target} PRIVATE "${output_dir}")
  endif()
endfunction()
