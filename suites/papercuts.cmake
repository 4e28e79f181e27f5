# Papercuts and self-description: figures that can be
# true (the FMA peak of `xo bench`), machine-readable output (--json,
# --version, --list), Keras defaults and required keys in `xo check`,
# `xo summary`, and the install rule. Label quick.

# The FMA peak loop of every ISA level against an independent loop.
add_executable(test_peak ${CMAKE_CURRENT_LIST_DIR}/test_peak.c)
target_link_libraries(test_peak PRIVATE xo_lib PkgConfig::CMOCKA)
add_test(NAME peak.loop COMMAND test_peak)
set_tests_properties(peak.loop PROPERTIES LABELS "quick" TIMEOUT 120)

find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND AND NOT XO_SANITIZE)
  # `xo bench --json`: no kernel above the measured peak without a reason
  # (not under the sanitizers, where timings mean nothing).
  add_test(NAME peak.bench
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli/bench_peak.py $<TARGET_FILE:xo>)
  set_tests_properties(peak.bench PROPERTIES LABELS "quick" TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()

# `xo check`: Keras's required keys are required (exit 2 naming the key),
# repro lines print Keras's values (the stride the op uses) and the CPU ISA,
# --list shows every op's keys with Keras's defaults.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/papercuts_no_kernel_size.txt
     "relu batch=2 len=3 ch=2\nconv1d batch=2 len=9 ch=2 filters=3  # kernel_size forgotten\n")
set(XO_PAPERCUT_CASES
  "conv1d_no_kernel_size|2|check|--op|conv1d|len=29|ch=1|filters=16"
  "conv1d_no_filters|2|check|--op|conv1d|len=29|ch=1|kernel_size=3"
  "dense_no_units|2|check|--op|dense|ch=8"
  "dropout_no_rate|2|check|--op|dropout|ch=8"
  "shapes_no_kernel_size|2|check|--shapes|${CMAKE_CURRENT_BINARY_DIR}/papercuts_no_kernel_size.txt"
  "repro_pool_stride|0|check|--op|max_pooling1d|batch=4|len=12|ch=3|pool_size=3|--dir|fwd|--mode|exact"
  "repro_conv_stride|0|check|--op|conv1d|len=9|ch=2|filters=2|kernel_size=3|--dir|fwd|--mode|exact"
  "list|0|check|--list"
  "version|0|--version"
  "summary_seed|0|summary|--model|${PROJECT_SOURCE_DIR}/models/seed.model"
  "summary_no_model|2|summary"
  "summary_missing|2|summary|--model|/nonexistent/seed.model"
  "summary_bad_spec|2|summary|--model|${CMAKE_CURRENT_BINARY_DIR}/papercuts_no_kernel_size.txt"
  "summary_multi|0|summary|--model|${PROJECT_SOURCE_DIR}/suites/golden/keras/multi.keras"
  "summary_mha_mask|0|summary|--model|${PROJECT_SOURCE_DIR}/suites/golden/keras/mha_mask.keras"
  "summary_norm_given|0|summary|--model|${PROJECT_SOURCE_DIR}/suites/golden/keras/norm_given.keras"
  "summary_norm_adapted|0|summary|--model|${PROJECT_SOURCE_DIR}/suites/golden/keras/norm_mlp.keras"
)
set(XO_CLI_MATCH_repro_pool_stride
    "PASSED  XO_CPU_ISA=[a-z0-9]+ xo check --op max_pooling1d .* strides=3 padding=valid pool_size=3\n")
set(XO_CLI_MATCH_repro_conv_stride
    "PASSED  XO_CPU_ISA=[a-z0-9]+ xo check --op conv1d .* kernel_size=3 strides=1 ")
set(XO_CLI_MATCH_list
    "conv1d +fwd,bwd .*filters=REQUIRED kernel_size=REQUIRED strides=1 .*max_pooling1d +fwd,bwd .*strides=pool_size padding=valid pool_size=2\n.*units=REQUIRED.*rate=REQUIRED")
# From a git checkout the commit is a sha; from a tarball it says unknown.
if(EXISTS ${PROJECT_SOURCE_DIR}/.git)
  set(XO_CLI_MATCH_version "^xo [0-9]+[.][0-9]+[.][0-9]+ [(]commit [0-9a-f]+(-dirty)?, ")
else()
  set(XO_CLI_MATCH_version "^xo [0-9]+[.][0-9]+[.][0-9]+ [(]commit unknown, ")
endif()
set(XO_CLI_MATCH_summary_seed
    "conv1d [(]Conv1D[)] +[(]None, 27, 16[)] +64 .*max_pooling1d_1 [(]MaxPooling1D[)] +[(]None, 2, 32[)] +0 .*dense_1 [(]Dense[)] +[(]None, 12[)] +396 .*Total params: 4,108\nTrainable params: 4,108\nNon-trainable params: 0\nActivation memory per sample: 2[.]25 KB to predict [(]3[.]80 KB unshared[)], 5[.]67 KB to train [(]7[.]59 KB unshared[)]\n")
# a Functional of three inputs: every InputLayer listed, in Keras's order
set(XO_CLI_MATCH_summary_multi
    "seq [(]InputLayer[)] +[(]None, 6, 3[)] +0 +-\n\n tail [(]InputLayer[)] +[(]None, 4, 3[)] +0 +-\n\n flat [(]InputLayer[)] +[(]None, 5[)] +0 +-\n.*concatenate [(]Concatenate[)] +[(]None, 10, 3[)] +0 +conv1d, tail\n")
# MultiHeadAttention's attention_mask input: connected third, as Keras lists it
set(XO_CLI_MATCH_summary_mha_mask
    "multi_head_attention [(]MultiHeadAttention[)]\n +[(]None, 6, 8[)] +288 +dense, dense, mask\n")
# Normalization's parameters as Keras counts them (Keras 3.15.1's summary of
# the same files): none when given its mean and variance (constants), mean,
# variance and the int32 count when adapted (6 + 6 + 1)
set(XO_CLI_MATCH_summary_norm_given
    "normalization_2 [(]Normalization[)] +[(]None, 5[)] +0 .*Total params: 18\nTrainable params: 18\nNon-trainable params: 0\n")
set(XO_CLI_MATCH_summary_norm_adapted
    "normalization [(]Normalization[)] +[(]None, 6[)] +13 .*Total params: 96\nTrainable params: 83\nNon-trainable params: 13\n")
xo_add_cli_tests(papercuts quick ${XO_PAPERCUT_CASES})

if(Python3_Interpreter_FOUND)
  # --json outputs parse (python3 -m json.tool) and carry their fields.
  foreach(what check check-shapes list devices summary version)
    add_test(NAME papercuts.json_${what}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli/json_outputs.py
                     $<TARGET_FILE:xo> ${what} ${PROJECT_SOURCE_DIR})
    set_tests_properties(papercuts.json_${what} PROPERTIES LABELS "quick" TIMEOUT 120)
  endforeach()
endif()

if(Python3_Interpreter_FOUND)
  # Bad input names what was found (missing key, key the op does not take,
  # unknown op with the list, file:line), exit 2, one line.
  add_test(NAME papercuts.errors
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli/errors.py $<TARGET_FILE:xo>)
  set_tests_properties(papercuts.errors PROPERTIES LABELS "quick" TIMEOUT 120)
  # `xo seed`: medians over repeats with a 95% interval, a device against itself.
  add_test(NAME papercuts.seed_ci
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli/seed_ci.py $<TARGET_FILE:xo>)
  set_tests_properties(papercuts.seed_ci PROPERTIES LABELS "quick" TIMEOUT 300)
  # `xo seed --model FILE [--data X Y]` and `xo perf record --model FILE`.
  add_test(NAME papercuts.seed_model
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli/seed_model.py $<TARGET_FILE:xo>
                   ${PROJECT_SOURCE_DIR})
  set_tests_properties(papercuts.seed_model PROPERTIES LABELS "quick" TIMEOUT 300)
  # `xo bench --layers`: the GEMM-shaped layers of a model timed alone.
  add_test(NAME papercuts.bench_layers
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli/bench_layers.py
                   $<TARGET_FILE:xo> ${PROJECT_SOURCE_DIR})
  set_tests_properties(papercuts.bench_layers PROPERTIES LABELS "quick" TIMEOUT 300)
  # `xo bench --layers` on a MultiHeadAttention: its projections, the
  # scores / softmax / weighted sum steps and the whole op (JSON and text).
  foreach(mode json text)
    add_test(NAME papercuts.bench_attention_${mode}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli/bench_attention.py
                     $<TARGET_FILE:xo> ${PROJECT_SOURCE_DIR} ${mode})
    set_tests_properties(papercuts.bench_attention_${mode} PROPERTIES LABELS "quick" TIMEOUT 300)
  endforeach()
  # What the perf commands say: a model the store lacks (exit 2, the models it
  # has), the report's heading, record --model alone, --device gpu, no GPU
  # here in words, explain's progress (suites/cli/perf_words.py).
  add_test(NAME papercuts.perf_words
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli/perf_words.py
                   $<TARGET_FILE:xo> ${PROJECT_SOURCE_DIR})
  set_tests_properties(papercuts.perf_words PROPERTIES LABELS "quick" TIMEOUT 300)
  if(XO_SANITIZE)
    # ASan's shadow memory and redzones are not the experiment's: no RSS bound
    set_tests_properties(papercuts.seed_model PROPERTIES ENVIRONMENT "XO_TEST_SANITIZED=1")
  endif()
endif()

if(Python3_Interpreter_FOUND)
  # README and docs/ stand alone: every file they name is in the tree, one
  # build directory, how to put xo on the PATH.
  add_test(NAME papercuts.docs
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli/docs_links.py
                   ${PROJECT_SOURCE_DIR})
  set_tests_properties(papercuts.docs PROPERTIES LABELS "quick" TIMEOUT 60)
endif()

# `cmake --install build --prefix P` then `P/bin/xo --version` runs.
add_test(NAME papercuts.install
         COMMAND ${CMAKE_COMMAND} -DBUILD=${CMAKE_BINARY_DIR}
                 -DPREFIX=${CMAKE_CURRENT_BINARY_DIR}/install_test_prefix
                 -P ${CMAKE_CURRENT_LIST_DIR}/cli/install_test.cmake)
set_tests_properties(papercuts.install PROPERTIES LABELS "quick" TIMEOUT 120)

# ci/nightly.sh's bookkeeping (suites/ci_nightly_job.sh): a killed stage, a
# spent budget or a missing build still end with report/index.html and the
# answer; rotation days; the bench line's column names.
add_test(NAME ci.nightly_job
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/ci_nightly_job.sh ${PROJECT_BINARY_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/ci_nightly_job)
set_tests_properties(ci.nightly_job PROPERTIES LABELS "quick" TIMEOUT 120)
