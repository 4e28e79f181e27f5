# the cost model, the split, the diagnosis rules, the
# crossover and the what-if search against hand-computed answers
# (suites/test_cost.c); `xo explain` on bad input (exit 2, one line) and a
# tiny real run; its --json fields (suites/cli/json_outputs.py explain).
add_executable(test_cost ${CMAKE_CURRENT_LIST_DIR}/test_cost.c)
target_link_libraries(test_cost PRIVATE xo_perfdb PkgConfig::CMOCKA m)
add_test(NAME explain.cost COMMAND test_cost)
set_tests_properties(explain.cost PROPERTIES LABELS "perfdb;quick" TIMEOUT 60)

set(XO_EXPLAIN_CASES
  "unknown_device|2|explain|--device|gpu9|--batch|1"
  "ref_device|2|explain|--device|ref|--batch|1"
  "batch_zero|2|explain|--batch|0"
  "batch_too_big|2|explain|--batch|1048577"
  "batch_not_number|2|explain|--batch|8x"
  "batch_not_increasing|2|explain|--batch|8|--batch|4"
  "missing_model|2|explain|--model|${CMAKE_CURRENT_BINARY_DIR}/no_such.model|--batch|1"
  "bad_model|2|explain|--model|${PROJECT_SOURCE_DIR}/suites/golden/seed/x.npy|--batch|1"
  "repeat_zero|2|explain|--repeat|0"
  "unknown_option|2|explain|--frobnicate|1"
  "budget_nan|2|explain|--budget|nan"
  "budget_too_small|2|explain|--budget|0.001"
  "tiny_run|0|explain|--device|cpu|--batch|1|--batch|8|--repeat|1|--budget|0.2"
  # an int32 input: explain's synthetic x must be ids in [0, input_dim) (it
  # drew floats, and the embedding refused them: exit 2)
  "ids_model|0|explain|--model|${PROJECT_SOURCE_DIR}/suites/golden/keras/lstm.keras|--device|cpu|--batch|4|--repeat|1|--budget|0.2"
  # a MultiHeadAttention: a line under each point names its parts
  "mha_model|0|explain|--model|${PROJECT_SOURCE_DIR}/suites/golden/mha_enc/model.model|--device|cpu|--batch|4|--repeat|1|--budget|0.2")
set(XO_CLI_MATCH_tiny_run "at batch 8 the cpu train step is")
set(XO_CLI_MATCH_ids_model "at batch 4 the cpu train step is")
set(XO_CLI_MATCH_mha_model "attention \\(2 heads, Tq 8 x Tk 8, dk 8, dv 8\\): GEMM-shaped, compute-bound at the GEMM rate: the 4 projections [^;]* Q K.T [^;]* P V [^;]*; memory-bound: the softmax [^;]*; head split/merge: none [^;]*; serial: 8 \\(sample, head\\) pairs, 56 small GEMM calls")
xo_add_cli_tests(explain.cli "perfdb;quick" ${XO_EXPLAIN_CASES})
if(Python3_Interpreter_FOUND)
  add_test(NAME explain.json
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli/json_outputs.py
                   $<TARGET_FILE:xo> explain ${PROJECT_SOURCE_DIR})
  set_tests_properties(explain.json PROPERTIES LABELS "perfdb;quick" TIMEOUT 120)
  # xo explain --json on a MultiHeadAttention: its parts per point
  add_test(NAME explain.attention
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli/explain_attention.py
                   $<TARGET_FILE:xo> ${PROJECT_SOURCE_DIR})
  set_tests_properties(explain.attention PROPERTIES LABELS "perfdb;quick" TIMEOUT 120)
  add_test(NAME explain.attention_cl
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli/explain_attention.py
                   $<TARGET_FILE:xo> ${PROJECT_SOURCE_DIR} cl)
  set_tests_properties(explain.attention_cl PROPERTIES LABELS "perfdb;quick;opencl" TIMEOUT 120
                       SKIP_RETURN_CODE 77)
endif()
