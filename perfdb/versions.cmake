# versions.cmake - the code version of each unit of the build, written beside
# the binary after it is linked (a POST_BUILD step; docs/perf.md "Kernel
# versions"). A unit is a set of CMake targets (the core, one backend, the
# model library); its version hashes what the compiler actually read for every
# translation unit of those targets: each file named in the compiler's
# dependency file (the .c, every .inc and header, include/xo/ops.def, the
# generated cl_sources.c that carries the .cl text, system headers alike) by
# content, the TU's compile command (all flags), and the compiler's identity.
# Paths under the source and build trees are written relative to them, so two
# clones of one commit get one version.
#
# Usage: cmake -DBUILD_DIR=top/build -DSOURCE_DIR=top/src -DOUT=file
#              -DCOMPILER="GNU 12.2.0" -DUNITS="core=xo_core|cpu=xo_cpu|..."
# A unit lists targets (all their TUs) or target/source (that one TU),
# comma-separated: "runner=xo_perfdb/runner.c".
#              -P versions.cmake
# A unit whose TUs, commands or dependency files cannot all be read is written
# "unknown" (with the reason in OUT.why): a reader must never take two unknown
# versions for the same code. The script itself never fails the build.
cmake_minimum_required(VERSION 3.18)

set(manifest "# xo code versions: unit<TAB>version (perfdb/versions.cmake)\n# units ${UNITS}\n# compiler ${COMPILER}\n")
set(why "")
set(detail "")

# The compile_commands.json entries, read once: cmd_<i>, dir_<i>, n_entries.
set(n_entries 0)
set(global_reason "")
if(CMAKE_VERSION VERSION_LESS 3.19)
  set(global_reason "CMake ${CMAKE_VERSION} cannot read compile_commands.json (3.19 or later)")
elseif(NOT EXISTS "${BUILD_DIR}/compile_commands.json")
  set(global_reason "no compile_commands.json in ${BUILD_DIR}")
else()
  file(READ "${BUILD_DIR}/compile_commands.json" cc)
  string(JSON n ERROR_VARIABLE err LENGTH "${cc}")
  if(err)
    set(global_reason "compile_commands.json: ${err}")
  else()
    set(i 0)
    while(i LESS n)
      string(JSON cmd_${n_entries} ERROR_VARIABLE err GET "${cc}" ${i} command)
      string(JSON dir_${n_entries} ERROR_VARIABLE err2 GET "${cc}" ${i} directory)
      math(EXPR i "${i} + 1")
      if(NOT err AND NOT err2)
        math(EXPR n_entries "${n_entries} + 1")
      endif()
    endwhile()
  endif()
endif()

# The lines of one TU (object ${obj}, compiled by ${cmd} in ${dir}) into tu_text, or
# the reason it cannot be read into tu_reason. File hashes are kept in
# sha_<path> across TUs and units (the system headers repeat).
macro(tu_lines)
  set(tu_reason "")
  set(tu_text "")
  if(NOT EXISTS "${obj}.d")
    set(tu_reason "no dependency file ${obj}.d (a generator that keeps none?)")
  else()
    file(READ "${obj}.d" dep)
    # make syntax: "target: dep dep \<newline> dep ..."; paths with blanks
    # would be escaped and are not taken apart here
    string(REPLACE "\\\n" " " dep "${dep}")
    string(FIND "${dep}" ": " colon)
    if(colon LESS 0 OR dep MATCHES "\\\\ ")
      set(tu_reason "cannot parse ${obj}.d")
    else()
      math(EXPR colon "${colon} + 2")
      string(SUBSTRING "${dep}" ${colon} -1 dep)
      string(REGEX REPLACE "[ \t\r\n]+" ";" dep "${dep}")
      string(REPLACE "${BUILD_DIR}/" "@B/" ncmd "${cmd}")
      string(REPLACE "${SOURCE_DIR}/" "@S/" ncmd "${ncmd}")
      string(REPLACE "${BUILD_DIR}/" "@B/" nobj "${obj}")
      set(tu_text "tu ${nobj}\ncmd ${ncmd}\n")
      foreach(f IN LISTS dep)
        if(f STREQUAL "" OR NOT tu_reason STREQUAL "")
          continue()
        endif()
        if(NOT IS_ABSOLUTE "${f}")
          set(f "${dir}/${f}")
        endif()
        if(NOT DEFINED "sha_${f}")
          if(NOT EXISTS "${f}" OR IS_DIRECTORY "${f}")
            set(tu_reason "${obj}.d names ${f}, which cannot be read")
            continue()
          endif()
          file(SHA256 "${f}" "sha_${f}")
        endif()
        string(REPLACE "${BUILD_DIR}/" "@B/" nf "${f}")
        string(REPLACE "${SOURCE_DIR}/" "@S/" nf "${nf}")
        string(APPEND tu_text "file ${nf} ${sha_${f}}\n")
      endforeach()
    endif()
  endif()
endmacro()

# One unit ${unit}: the TUs of ${targets} ("target" all, "target/src.c" one).
macro(unit_version)
  set(lines "")
  set(reason "${global_reason}")
  set(ntu 0)
  set(e 0)
  while(e LESS n_entries AND reason STREQUAL "")
    set(cmd "${cmd_${e}}")
    set(dir "${dir_${e}}")
    math(EXPR e "${e} + 1")
    foreach(tgt IN LISTS targets)
      set(tu_re "[^ ]+")
      if(tgt MATCHES "^([^/]+)/(.+)$")
        set(tgt "${CMAKE_MATCH_1}")
        string(REPLACE "." "\\." tu_re "${CMAKE_MATCH_2}")
      endif()
      if(NOT cmd MATCHES " -o ([^ ]*CMakeFiles/${tgt}\\.dir/${tu_re}\\.o) ")
        continue()
      endif()
      set(obj "${CMAKE_MATCH_1}")
      if(NOT IS_ABSOLUTE "${obj}")
        set(obj "${dir}/${obj}")
      endif()
      tu_lines()
      if(NOT tu_reason STREQUAL "")
        set(reason "${tu_reason}")
        break()
      endif()
      list(APPEND lines "${tu_text}")
      math(EXPR ntu "${ntu} + 1")
    endforeach()
  endwhile()
  if(reason STREQUAL "" AND ntu EQUAL 0)
    set(reason "no translation unit of ${targets} in compile_commands.json")
  endif()
  set(ver "unknown")
  if(reason STREQUAL "")
    list(SORT lines)
    string(REPLACE ";" "" body "compiler ${COMPILER}\n${lines}")
    string(SHA256 h "${body}")
    string(SUBSTRING "${h}" 0 16 ver)
    string(APPEND detail "## ${unit}\n${body}")
  else()
    string(APPEND why "${unit}\t${reason}\n")
  endif()
  string(APPEND manifest "${unit}\t${ver}\n")
endmacro()

string(REPLACE "|" ";" units "${UNITS}")
foreach(u IN LISTS units)
  if(NOT u MATCHES "^([a-z]+)=(.+)$")
    continue()
  endif()
  set(unit "${CMAKE_MATCH_1}")
  string(REPLACE "," ";" targets "${CMAKE_MATCH_2}")
  unit_version()
endforeach()
# written via a temporary and a rename: a reader sees the old or the new
file(WRITE "${OUT}.why" "${why}")
file(WRITE "${OUT}.files" "${detail}")
file(WRITE "${OUT}.tmp" "${manifest}")
file(RENAME "${OUT}.tmp" "${OUT}")
