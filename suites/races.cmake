# The OpenCL kernels under Oclgrind (label `races`, a stage of ci/test.sh):
# data races, divergent barriers and out-of-bounds accesses fail a test, and
# uninitialized reads where Oclgrind's check is sound (docs/opencl.md). PoCL
# hides all of these: it runs a work-group as a loop on one core.
#
# Launch shapes: Oclgrind's device gets the tuning table's default row (64-wide
# groups, one group per dw/db output, 64 work-items per sample in the fused
# network); XO_CL_TUNE forces the nvidia row (256-wide reductions, 16x16
# tiles, 128 work-items per sample) with a 48 KiB local-memory limit, the
# smallest of the GPUs the row is for, and PoCL's own row. Small shapes and
# a few samples: Oclgrind interprets every work-item.
if(XO_OPENCL)
  set(XO_RACES_DIR ${CMAKE_CURRENT_BINARY_DIR}/races)
  file(MAKE_DIRECTORY ${XO_RACES_DIR})
  set(XO_RACES ${CMAKE_CURRENT_LIST_DIR}/races.sh)
  set(XO_RACES_GPU "XO_CL_TUNE=wg=256,red_wg=256,tile=16,softmax_row_max=64,dw_wg=1,dw_chunk=0,net_wg=128,rnn_nb=8")
  set(XO_RACES_POCL "XO_CL_TUNE=wg=1024,red_wg=64,tile=8,softmax_row_max=256,dw_wg=0,dw_chunk=16,net_wg=1,rnn_nb=0")
  set(XO_RACES_48K --local-mem-size 49152)
  set(XO_G ${PROJECT_SOURCE_DIR}/suites/golden)

  function(xo_add_race_test name env)
    add_test(NAME races.${name} COMMAND bash ${XO_RACES} $<TARGET_FILE:xo> ${name} ${ARGN}
             WORKING_DIRECTORY ${XO_RACES_DIR})
    set_tests_properties(races.${name} PROPERTIES LABELS "races;opencl" TIMEOUT 900)
    if(env)
      set_tests_properties(races.${name} PROPERTIES ENVIRONMENT "${env}")
    endif()
  endfunction()

  # The cl suite (device limits, views at odd offsets, kernel variants) and
  # every op of the quick shapes, on each row's launch shapes.
  xo_add_race_test(cl "" --data-races -- $<TARGET_FILE:test_cl>)

  # The quick shapes go to Oclgrind in parts, a test each, so that -j
  # balances them and none runs for minutes under load: the ops that take
  # most of Oclgrind's time a part of their own (gru's 8 lines 14 s of CPU
  # on the default row, conv1d's 87 7 s), the two slowest of them (gru,
  # conv2d: up to 100 s of wall time each on the gpu and pocl rows at a load
  # of 12) in two halves, alternate lines, the pooling ops one part, all
  # other ops one. Every case line of quick.txt lands in exactly one part,
  # in its order, and `xo check` seeds each case from --seed alone, so the
  # parts check what the whole file did. Configure fails if a line were lost.
  set(XO_QUICK_SHAPES ${PROJECT_SOURCE_DIR}/suites/shapes/quick.txt)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${XO_QUICK_SHAPES})
  file(STRINGS ${XO_QUICK_SHAPES} xo_quick_lines REGEX "^[a-z]")
  set(XO_RACES_PARTS conv1d conv2d.1 conv2d.2 gru.1 gru.2 lstm pool rest)
  foreach(part ${XO_RACES_PARTS})
    set(xo_part_${part} "")
  endforeach()
  set(xo_parted 0)
  set(xo_half_conv2d 1)
  set(xo_half_gru 1)
  foreach(line IN LISTS xo_quick_lines)
    string(REGEX MATCH "^[a-z0-9_]+" op "${line}")
    if(op MATCHES "^(conv2d|gru)$")
      set(part ${op}.${xo_half_${op}})
      math(EXPR xo_half_${op} "3 - ${xo_half_${op}}")
    elseif(op MATCHES "^(conv1d|lstm)$")
      set(part ${op})
    elseif(op MATCHES "pooling")
      set(part pool)
    else()
      set(part rest)
    endif()
    string(APPEND xo_part_${part} "${line}\n")
    math(EXPR xo_parted "${xo_parted} + 1")
  endforeach()
  list(LENGTH xo_quick_lines xo_quick_n)
  if(NOT xo_parted EQUAL xo_quick_n OR xo_quick_n EQUAL 0)
    message(FATAL_ERROR "races: ${xo_parted} of ${xo_quick_n} quick.txt lines in a part")
  endif()
  set(xo_part_files "")
  foreach(part ${XO_RACES_PARTS})
    list(APPEND xo_part_files ${XO_RACES_DIR}/quick-${part}.txt)
    if(xo_part_${part} STREQUAL "")
      message(FATAL_ERROR "races: no quick.txt line for part ${part}")
    endif()
    file(WRITE ${XO_RACES_DIR}/quick-${part}.txt "${xo_part_${part}}")
  endforeach()

  # The parts as written are quick.txt's case lines, each once (a part file
  # edited or left stale by hand fails here, not silently in the races stage).
  add_test(NAME races.parts
           COMMAND bash -c "diff <(sort -- \"\${@:2}\") <(grep -E '^[a-z]' -- \"\$1\" | sort)"
                   _ ${XO_QUICK_SHAPES} ${xo_part_files})
  set_tests_properties(races.parts PROPERTIES LABELS "quick" TIMEOUT 30)

  # Each part on each row: CI (label races) runs line i of a part on the row
  # whose index is i mod 3 (default 0, gpu 1, pocl 2), so every line runs
  # under Oclgrind once and every row sees a third of every part's lines,
  # tails and threaded shapes among them; the other two thirds of a row
  # (races.ops.ROW.PART.rest, label nightly) run in the nightly's weekly
  # long-tests stage (ci/nightly.sh). Together they are every line on every
  # row, which races.parts checks below. The split keeps the races stage
  # within CI's share of its 10 minutes: two thirds a row took 208 s of the
  # stage's wall time on an AVX2-only 2-core EPYC, the whole cross ~8 s of
  # Oclgrind CPU a test, 24 tests, on 2 quiet cores.
  set(xo_row_index 0)
  set(xo_row_files "")
  foreach(row default gpu pocl)
    set(env "")
    set(extra "")
    if(row STREQUAL "gpu")
      set(env "${XO_RACES_GPU}")
      set(extra ${XO_RACES_48K})
    elseif(row STREQUAL "pocl")
      set(env "${XO_RACES_POCL}")
    endif()
    foreach(part ${XO_RACES_PARTS})
      string(REGEX REPLACE "\n$" "" xo_lines "${xo_part_${part}}")
      string(REPLACE "\n" ";" xo_lines "${xo_lines}")
      set(xo_ci "")
      set(xo_rest "")
      set(i 0)
      foreach(line IN LISTS xo_lines)
        math(EXPR r "${i} % 3")
        if(r EQUAL xo_row_index)
          string(APPEND xo_ci "${line}\n")
        else()
          string(APPEND xo_rest "${line}\n")
        endif()
        math(EXPR i "${i} + 1")
      endforeach()
      file(WRITE ${XO_RACES_DIR}/quick-${part}-${row}.txt "${xo_ci}")
      file(WRITE ${XO_RACES_DIR}/quick-${part}-${row}-rest.txt "${xo_rest}")
      list(APPEND xo_row_files ${XO_RACES_DIR}/quick-${part}-${row}.txt
                               ${XO_RACES_DIR}/quick-${part}-${row}-rest.txt)
      # a part of fewer than three lines leaves a row nothing in CI
      if(NOT xo_ci STREQUAL "")
        xo_add_race_test(ops.${row}.${part} "${env}" --data-races ${extra} --
                         $<TARGET_FILE:xo> check --shapes ${XO_RACES_DIR}/quick-${part}-${row}.txt
                         --backend cl)
      endif()
      if(NOT xo_rest STREQUAL "")
        xo_add_race_test(ops.${row}.${part}.rest "${env}" --data-races ${extra} --
                         $<TARGET_FILE:xo> check --shapes
                         ${XO_RACES_DIR}/quick-${part}-${row}-rest.txt --backend cl)
        set_tests_properties(races.ops.${row}.${part}.rest PROPERTIES LABELS "nightly;opencl")
      endif()
    endforeach()
    math(EXPR xo_row_index "${xo_row_index} + 1")
  endforeach()
  # Each row's two files are its parts' lines, each once: quick.txt whole.
  foreach(row default gpu pocl)
    set(xo_this_row "")
    foreach(part ${XO_RACES_PARTS})
      list(APPEND xo_this_row ${XO_RACES_DIR}/quick-${part}-${row}.txt
                              ${XO_RACES_DIR}/quick-${part}-${row}-rest.txt)
    endforeach()
    add_test(NAME races.parts.${row}
             COMMAND bash -c "diff <(sort -- \"\${@:2}\") <(grep -E '^[a-z]' -- \"\$1\" | sort)"
                     _ ${XO_QUICK_SHAPES} ${xo_this_row})
    set_tests_properties(races.parts.${row} PROPERTIES LABELS "quick" TIMEOUT 30)
  endforeach()

  # The tiled recurrent kernels at the edges of their tiles
  # (suites/shapes/rnn_tiles.txt): the nvidia row's launch shapes with 48 KiB
  # (256-wide groups, tiles of up to 8 samples), and 32-wide groups with
  # tiles of up to 4 (units not a multiple of the group). quick.txt's
  # recurrent lines run above on every row too.
  set(XO_RNN_TILES ${PROJECT_SOURCE_DIR}/suites/shapes/rnn_tiles.txt)
  xo_add_race_test(rnn.gpu "${XO_RACES_GPU}" --data-races ${XO_RACES_48K} --
                   $<TARGET_FILE:xo> check --shapes ${XO_RNN_TILES} --backend cl)
  xo_add_race_test(rnn.tiles "XO_CL_TUNE=rnn_nb=4,wg=32" --data-races --
                   $<TARGET_FILE:xo> check --shapes ${XO_RNN_TILES} --backend cl)

  # The fused whole-network kernels (XO_FUSE=require: never op by op without
  # failing), training with partial batches and validation, and predict, on
  # a few samples of the golden fixtures; uninitialized reads checked too.
  # -cl-opt-disable: Oclgrind 21.10's uninitialized-value plugin stops on
  # the `freeze` instruction clang's optimizer emits.
  set(XO_RACES_NET_OPTS --data-races --uninitialized --build-options -cl-opt-disable)
  foreach(model seed mixed_a mixed_b)
    foreach(row default gpu)
      if(row STREQUAL "gpu" AND NOT model STREQUAL "seed")
        continue()
      endif()
      set(env "XO_FUSE=require")
      set(extra "")
      if(row STREQUAL "gpu")
        set(env "XO_FUSE=require;${XO_RACES_GPU}")
        set(extra ${XO_RACES_48K})
      endif()
      set(t ${model}_${row})
      xo_add_race_test(net.${t} "${env}" ${XO_RACES_NET_OPTS} ${extra} --
        bash ${CMAKE_CURRENT_LIST_DIR}/races_net.sh $<TARGET_FILE:xo> ${XO_G}/${model} ${t})
      # CI keeps the seed on the default row and the graph below on the gpu
      # row (its convolutions, pools, dense layers and dropout, and more, on
      # 128 work-items a sample); the seed on the gpu row and mixed_a/b's
      # strides, dilations and same paddings (30 + 24 s of the stage) run
      # in the nightly's weekly long-tests stage
      if(NOT t STREQUAL "seed_default")
        set_tests_properties(races.net.${t} PROPERTIES LABELS "nightly;opencl")
      endif()
    endforeach()
  endforeach()
  # A graph on the fused kernels: suites/races_graph.model (residual_cnn's
  # block, an Add whose input fans out, the gradients' term scratch and
  # sums, then a global average pooling head and a flatten + dropout head
  # joined by an Add) on the seed's data, on the gpu row only (128
  # work-items a sample share the local buffers, so a missing barrier is a
  # race there; the default row's one work-item per sample runs the same
  # code, which model.fused_graphs checks on PoCL): ~45 s of Oclgrind, the
  # races stage's budget.
  xo_add_race_test(net.graph_gpu "XO_FUSE=require;${XO_RACES_GPU}" ${XO_RACES_NET_OPTS}
    ${XO_RACES_48K} --
    bash ${CMAKE_CURRENT_LIST_DIR}/races_net.sh $<TARGET_FILE:xo> ${XO_G}/seed graph_gpu
         ${CMAKE_CURRENT_LIST_DIR}/races_graph.model)
endif()
