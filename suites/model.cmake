# The model runtime (suites/test_model.c): spec parser and .npy reader
# against malformed input, every backend against the golden fixtures of an
# independent framework (suites/golden/, made by scripts/make_golden.py),
# the same seeded run on every backend, checkpoints, batching. cl is skipped
# with its reason when no OpenCL device opens, unless XO_REQUIRE_OPENCL=1.
add_executable(test_model ${CMAKE_CURRENT_LIST_DIR}/test_model.c)
target_include_directories(test_model PRIVATE ${PROJECT_SOURCE_DIR}/model)
target_compile_definitions(test_model PRIVATE
  XO_GOLDEN_DIR="${PROJECT_SOURCE_DIR}/suites/golden"
  XO_MODELS_DIR="${PROJECT_SOURCE_DIR}/models")
target_link_libraries(test_model PRIVATE xo_model xo_lib PkgConfig::CMOCKA m)
add_test(NAME model COMMAND test_model)
set_tests_properties(model PROPERTIES LABELS "model;quick" TIMEOUT 300)
# The same suite with the cl backend on the nvidia tuning row's launch shapes
# (PoCL's own row runs the fused network kernels one work-item per sample and
# the dw sums in chunks; a GPU runs work-groups per sample and per output), so
# the kernels a GPU would run are checked on every push too.
add_test(NAME model.cl_gpu_row COMMAND test_model)
set_tests_properties(model.cl_gpu_row PROPERTIES LABELS "model;quick;opencl" TIMEOUT 300
  ENVIRONMENT "XO_CL_TUNE=wg=256,red_wg=256,tile=16,softmax_row_max=64,dw_wg=1,dw_chunk=0,net_wg=128,rnn_nb=8")

# The commands (DESIGN section 8): they work on the golden fixtures, and every
# bad input exits 2 with exactly one line on stderr.
set(XO_G ${PROJECT_SOURCE_DIR}/suites/golden)
set(XO_CLI_CASES
  "predict_golden|0|predict|--model|${XO_G}/mixed_a/model.model|--weights|${XO_G}/mixed_a/weights|--input|${XO_G}/mixed_a/x.npy|--output|${CMAKE_CURRENT_BINARY_DIR}/model_cli_pred.npy|--device|ref"
  "train_golden|0|train|--model|${XO_G}/mixed_a/model.model|--weights|${XO_G}/mixed_a/weights|--x|${XO_G}/mixed_a/x_train.npy|--y|${XO_G}/mixed_a/y_train.npy|--save|${CMAKE_CURRENT_BINARY_DIR}/model_cli_trained|--epochs|3|--batch-size|16|--no-shuffle|--device|ref"
  "seed_cpu_1epoch|0|seed|--device|cpu|--epochs|1|--json"
  "bad_spec|2|predict|--model|${XO_G}/seed/x.npy|--weights|${XO_G}/seed/weights|--input|${XO_G}/seed/x.npy|--output|${CMAKE_CURRENT_BINARY_DIR}/model_cli_bad.npy"
  "bad_npy|2|predict|--model|${XO_G}/seed/model.model|--weights|${XO_G}/seed/weights|--input|${XO_G}/seed/model.model|--output|${CMAKE_CURRENT_BINARY_DIR}/model_cli_bad.npy"
  "shape_mismatch|2|predict|--model|${XO_G}/seed/model.model|--weights|${XO_G}/seed/weights|--input|${XO_G}/seed/y_train.npy|--output|${CMAKE_CURRENT_BINARY_DIR}/model_cli_bad.npy"
  "weights_mismatch|2|predict|--model|${XO_G}/seed/model.model|--weights|${XO_G}/mixed_a/weights|--input|${XO_G}/seed/x.npy|--output|${CMAKE_CURRENT_BINARY_DIR}/model_cli_bad.npy"
  "missing_file|2|predict|--model|${XO_G}/seed/model.model|--weights|${XO_G}/seed/weights|--input|/nonexistent/x.npy|--output|${CMAKE_CURRENT_BINARY_DIR}/model_cli_bad.npy"
  "unknown_device|2|predict|--model|${XO_G}/seed/model.model|--weights|${XO_G}/seed/weights|--input|${XO_G}/seed/x.npy|--output|${CMAKE_CURRENT_BINARY_DIR}/model_cli_bad.npy|--device|tpu"
  "epochs_zero|2|train|--model|${XO_G}/seed/model.model|--x|${XO_G}/seed/x_train.npy|--y|${XO_G}/seed/y_train.npy|--save|${CMAKE_CURRENT_BINARY_DIR}/model_cli_bad|--epochs|0"
  "split_too_big|2|train|--model|${XO_G}/seed/model.model|--x|${XO_G}/seed/x_train.npy|--y|${XO_G}/seed/y_train.npy|--save|${CMAKE_CURRENT_BINARY_DIR}/model_cli_bad|--validation-split|1.5"
  "labels_mismatch|2|train|--model|${XO_G}/seed/model.model|--x|${XO_G}/seed/x_train.npy|--y|${XO_G}/seed/x.npy|--save|${CMAKE_CURRENT_BINARY_DIR}/model_cli_bad"
  "save_is_file|2|train|--model|${XO_G}/seed/model.model|--x|${XO_G}/seed/x_train.npy|--y|${XO_G}/seed/y_train.npy|--save|${XO_G}/seed/model.model|--epochs|1"
  "input_is_dir|2|predict|--model|${XO_G}/seed/model.model|--weights|${XO_G}/seed/weights|--input|${XO_G}/seed|--output|${CMAKE_CURRENT_BINARY_DIR}/model_cli_bad.npy"
  "model_is_dir|2|predict|--model|${XO_G}/seed|--weights|${XO_G}/seed/weights|--input|${XO_G}/seed/x.npy|--output|${CMAKE_CURRENT_BINARY_DIR}/model_cli_bad.npy"
  "batch_size_zero|2|train|--model|${XO_G}/seed/model.model|--x|${XO_G}/seed/x_train.npy|--y|${XO_G}/seed/y_train.npy|--save|${CMAKE_CURRENT_BINARY_DIR}/model_cli_bad|--batch-size|0"
  "seed_bad_epochs|2|seed|--epochs|0"
  "seed_device_does_not_open|2|seed|--device|ref|--device|cl:9:9"
  "seed_unknown_device|2|seed|--device|tpu"
  "seed_db_not_sqlite|2|seed|--device|ref|--db|${XO_G}/seed/x.npy"
  "seed_db_stores|0|seed|--device|cpu|--epochs|1|--db|${CMAKE_CURRENT_BINARY_DIR}/model_cli_seed.sqlite"
  "train_batch_size|0|train|--model|${XO_G}/mixed_a/model.model|--weights|${XO_G}/mixed_a/weights|--x|${XO_G}/mixed_a/x_train.npy|--y|${XO_G}/mixed_a/y_train.npy|--save|${CMAKE_CURRENT_BINARY_DIR}/model_cli_b4|--epochs|1|--batch-size|4|--no-shuffle|--device|ref"
)
# --batch-size is the fit's batch: mixed_a's 40 training rows in 10 steps of
# 4 (the default 32 would make 2)
set(XO_CLI_MATCH_train_batch_size "10/10 - ")
xo_add_cli_tests(model.cli "model;quick" ${XO_CLI_CASES})

# The .npy files the project writes, read by an independent reader (NumPy,
# python3-numpy in ci/lib.sh): format 1.0 headers, (n,) for 1-D shapes,
# 64-byte alignment, values bit for bit. Without NumPy it FAILS, not skips.
add_executable(npy_emit ${CMAKE_CURRENT_LIST_DIR}/npy_emit.c)
target_link_libraries(npy_emit PRIVATE xo_model xo_lib m)
add_test(NAME model.npy_numpy
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/npy_numpy.py $<TARGET_FILE:npy_emit>
          ${CMAKE_CURRENT_BINARY_DIR}/npy_numpy)
set_tests_properties(model.npy_numpy PROPERTIES LABELS "model;quick")

# The training-step comparisons again on 3 cpu threads (not a power of two,
# not the default 2): the fused step's tiles and the op path's batches are
# split into uneven parts (suites/shapes/threads.txt does the same per op).
add_test(NAME model.t3 COMMAND test_model --steps)
set_tests_properties(model.t3 PROPERTIES LABELS "model;quick" TIMEOUT 300
  ENVIRONMENT "XO_THREADS=3")

# Graphs on the fused paths: cpu's and cl's fused paths against their op
# paths on residual graphs (predictions bit-identical, training steps within
# check_steps's bounds); then the graph models of models/ (residual and
# concatenate) trained and
# predicted by `xo explain` with XO_FUSE=require on 3 threads (uneven tile
# parts, partial tiles at batch 3 and 40), so a graph that fell back to op
# by op fails.
add_test(NAME model.fused_graphs COMMAND test_model --fused-graphs)
set_tests_properties(model.fused_graphs PROPERTIES LABELS "model;quick" TIMEOUT 60)
# cl's graph kernels on the nvidia row's launch shapes (as model.cl_gpu_row)
add_test(NAME model.fused_graphs.cl_gpu_row COMMAND test_model --fused-graphs)
set_tests_properties(model.fused_graphs.cl_gpu_row PROPERTIES LABELS "model;quick;opencl"
  TIMEOUT 60
  ENVIRONMENT "XO_CL_TUNE=wg=256,red_wg=256,tile=16,softmax_row_max=64,dw_wg=1,dw_chunk=0,net_wg=128,rnn_nb=8")
foreach(g residual_cnn residual_mlp concat_cnn)
  add_test(NAME model.fused_graph_require.${g}
    COMMAND $<TARGET_FILE:xo> explain --model ${PROJECT_SOURCE_DIR}/models/${g}.model
            --device cpu --batch 3 --batch 40 --repeat 1 --budget 0.05 --no-progress)
  set_tests_properties(model.fused_graph_require.${g} PROPERTIES LABELS "model;quick"
    TIMEOUT 60 ENVIRONMENT "XO_FUSE=require;XO_THREADS=3")
endforeach()

# Rank-3 samples on the command line: x as (n, H, W, C).
add_test(NAME model.cli.rank3_npy
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/rank3_cli.py $<TARGET_FILE:xo>
          ${CMAKE_CURRENT_BINARY_DIR}/rank3_cli)
set_tests_properties(model.cli.rank3_npy PROPERTIES LABELS "model;quick")

# The embedding layer and int32 model inputs
# (suites/test_embed_layer.c): spec lines and refusals, ids checked where they
# enter, training on every backend against ref, unused table rows untouched,
# the layer's cost and fingerprint.
add_executable(test_embed_layer ${CMAKE_CURRENT_LIST_DIR}/test_embed_layer.c)
target_include_directories(test_embed_layer PRIVATE ${PROJECT_SOURCE_DIR}/model
                           ${PROJECT_SOURCE_DIR}/perfdb)
target_link_libraries(test_embed_layer PRIVATE xo_perfdb xo_model xo_lib PkgConfig::CMOCKA m)
add_test(NAME model.embedding COMMAND test_embed_layer)
set_tests_properties(model.embedding PROPERTIES LABELS "model;quick" TIMEOUT 120)

# The cpu lstm kernels compute each sample alone (suites/test_rnn_rows.c):
# y, ws and dx of a sample in a threaded batch of 13 equal its batch-1 run
# bit for bit (a tile that mixed rows would pass the bounds against ref).
add_executable(test_rnn_rows ${CMAKE_CURRENT_LIST_DIR}/test_rnn_rows.c)
target_link_libraries(test_rnn_rows PRIVATE xo_lib PkgConfig::CMOCKA m)
add_test(NAME ops.cpu.lstm.rows COMMAND test_rnn_rows)
set_tests_properties(ops.cpu.lstm.rows PROPERTIES LABELS "quick" TIMEOUT 120)
add_test(NAME ops.cpu.gru.rows COMMAND test_rnn_rows gru)
set_tests_properties(ops.cpu.gru.rows PROPERTIES LABELS "quick" TIMEOUT 120)

# The inference form of the recurrent ops (suites/test_rnn_infer.c): y of a
# forward without ws (predict, evaluate, validation) is the same bits as
# with one, on ref, cpu at every ISA level and cl (general and tiled).
add_executable(test_rnn_infer ${CMAKE_CURRENT_LIST_DIR}/test_rnn_infer.c)
target_link_libraries(test_rnn_infer PRIVATE xo_lib PkgConfig::CMOCKA m)
add_test(NAME ops.rnn.infer COMMAND test_rnn_infer)
set_tests_properties(ops.rnn.infer PROPERTIES LABELS "quick;opencl" TIMEOUT 120)

# The lstm cell's own sigmoid and tanh (kernels/cpu_kernels.inc vsigmoid_gate,
# vtanh_gate) against double at every ISA level: a dense sample of the
# floats in quick, every float nightly (suites/test_gates.c says why).
add_executable(test_gates ${CMAKE_CURRENT_LIST_DIR}/test_gates.c)
target_link_libraries(test_gates PRIVATE xo_lib PkgConfig::CMOCKA m)
# Under the sanitizers the sweep is ~10x slower (26 s at -O1) and looks for
# undefined behaviour of code that is the same for every input, so the
# sanitized build takes every 6101st pattern (odd and prime: ~700k inputs,
# ~1400 in every exponent of both signs; the special classes in full).
if(XO_SANITIZE)
  set(XO_GATES_STRIDE 6101)
else()
  set(XO_GATES_STRIDE 61)
endif()
add_test(NAME ops.cpu.lstm.gates COMMAND test_gates ${XO_GATES_STRIDE})
set_tests_properties(ops.cpu.lstm.gates PROPERTIES LABELS "quick" TIMEOUT 300)
add_test(NAME ops.cpu.lstm.gates_all COMMAND test_gates 1)
set_tests_properties(ops.cpu.lstm.gates_all PROPERTIES LABELS "nightly;sharded" TIMEOUT 1800)
# ci/nightly.sh runs gates_all in seven shards, one a night (XO_TEST_SHARD):
# a shard starts at K x STRIDE and steps N x STRIDE; a malformed shard is
# refused (exit 2), never read as the whole sweep.
add_test(NAME ops.cpu.lstm.gates_shard
         COMMAND sh -c "XO_TEST_SHARD=6/7 $<TARGET_FILE:test_gates> 4099 > gates_shard.txt || exit 1; grep -q 'shard 6/7: bit patterns 24594, 53287,' gates_shard.txt || exit 1; XO_TEST_SHARD=7/7 $<TARGET_FILE:test_gates> 4099; test $? -eq 2 || exit 1; XO_TEST_SHARD=1/x $<TARGET_FILE:test_gates> 4099; test $? -eq 2")
set_tests_properties(ops.cpu.lstm.gates_shard PROPERTIES LABELS "quick" TIMEOUT 120)

# The runtime at the edges (suites/test_model_edges.c), on every backend:
# BatchNormalization with scale/center off from a fresh init against a hand
# step in double; embedding ids at and around input_dim alone in a call;
# predict with chunking off, chunk 1 and chunks that do not divide the batch.
pkg_check_modules(XO_TE_HDF5 REQUIRED IMPORTED_TARGET hdf5)
add_executable(test_model_edges ${CMAKE_CURRENT_LIST_DIR}/test_model_edges.c)
target_include_directories(test_model_edges PRIVATE ${PROJECT_SOURCE_DIR}/model)
target_link_libraries(test_model_edges PRIVATE xo_model xo_lib PkgConfig::CMOCKA
                      PkgConfig::XO_TE_HDF5 m)
add_test(NAME model.bn_fresh COMMAND test_model_edges bn)
add_test(NAME model.embedding_ids COMMAND test_model_edges ids)
add_test(NAME model.predict_chunk_off COMMAND test_model_edges chunk)
set_tests_properties(model.bn_fresh model.embedding_ids model.predict_chunk_off
  PROPERTIES LABELS "model;quick;opencl" TIMEOUT 60)
# The layer kinds' list (include/xo/layers.def) against the parser, the
# name lookups, the ops and the fused paths' kinds; no backend opened.
add_test(NAME model.layer_kinds COMMAND test_model_edges kinds)
set_tests_properties(model.layer_kinds PROPERTIES LABELS "model;quick" TIMEOUT 30)
# Each kind's table entries (its runtime family, its Keras class row) on a
# one-layer model: the variables cover the parameters, and the .keras file
# reads back as the same kind and bits.
add_test(NAME model.layer_tables COMMAND test_model_edges tables)
set_tests_properties(model.layer_tables PROPERTIES LABELS "model;quick" TIMEOUT 60)
# The same ids through the command line, each alone in x, on every device:
# exit 0 in range, exit 2 with one line naming the id out of range, and the
# output file and save target left as they were.
add_test(NAME model.cli.embedding_ids
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/embed_ids_cli.py $<TARGET_FILE:xo>
          ${CMAKE_CURRENT_BINARY_DIR}/embed_ids_cli)
set_tests_properties(model.cli.embedding_ids PROPERTIES LABELS "model;quick;opencl" TIMEOUT 60)
# bn and ids again with the cl backend on the nvidia tuning row's launch
# shapes (as model.cl_gpu_row): the kernels a GPU would run.
add_test(NAME model.bn_fresh.cl_gpu_row COMMAND test_model_edges bn)
add_test(NAME model.embedding_ids.cl_gpu_row COMMAND test_model_edges ids)
set_tests_properties(model.bn_fresh.cl_gpu_row model.embedding_ids.cl_gpu_row
  PROPERTIES LABELS "model;quick;opencl" TIMEOUT 60
  ENVIRONMENT "XO_CL_TUNE=wg=256,red_wg=256,tile=16,softmax_row_max=64,dw_wg=1,dw_chunk=0,net_wg=128,rnn_nb=8")

# The memory plan (suites/test_memplan.c): buffers shared by liveness give
# the same bits as a buffer per tensor (XO_MODEL_SHARE=0) on every backend,
# predict and two epochs of fit, for a chain, a residual CNN, a multi-input
# net, a transformer block, Bidirectional RNNs and views; a deep chain's
# inference holds two slots and the bound is on the planned bytes.
add_executable(test_memplan ${CMAKE_CURRENT_LIST_DIR}/test_memplan.c)
target_include_directories(test_memplan PRIVATE ${PROJECT_SOURCE_DIR}/model)
target_link_libraries(test_memplan PRIVATE xo_model xo_lib PkgConfig::CMOCKA m)
add_test(NAME model.memplan COMMAND test_memplan)
set_tests_properties(model.memplan PROPERTIES LABELS "model;quick" TIMEOUT 120)

# NaN and Inf as Keras on JAX gives them (suites/test_nonfinite.c): the max
# pools, Maximum/Minimum, the losses whose float32 sums overflow, the fused
# conv1d + max_pooling1d path; ref, cpu at every ISA level, cl.
add_executable(test_nonfinite ${CMAKE_CURRENT_LIST_DIR}/test_nonfinite.c)
target_link_libraries(test_nonfinite PRIVATE xo_model xo_lib PkgConfig::CMOCKA m)
add_test(NAME ops.nonfinite.keras COMMAND test_nonfinite)
set_tests_properties(ops.nonfinite.keras PROPERTIES LABELS "quick;opencl" TIMEOUT 60)
