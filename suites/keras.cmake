# Keras model files (model/keras.c): suites/test_keras.c
# against the fixtures Keras itself wrote (suites/golden/keras/, made by
# scripts/make_keras_files.py), and xo's written files loaded by Keras where
# a Keras venv exists (skipped with the reason otherwise; ci/test.sh and the
# nightly make the venv, ci/lib.sh xo_keras_python, and pass it in
# XO_KERAS_PYTHON, so CI never skips it: ci/skips.tsv does not list it).
find_package(PkgConfig REQUIRED)
pkg_check_modules(XO_T_HDF5 REQUIRED IMPORTED_TARGET hdf5)
pkg_check_modules(XO_T_LIBZIP REQUIRED IMPORTED_TARGET libzip)
add_executable(test_keras ${CMAKE_CURRENT_LIST_DIR}/test_keras.c)
target_include_directories(test_keras PRIVATE ${PROJECT_SOURCE_DIR}/model)
target_compile_definitions(test_keras PRIVATE
  XO_KERAS_DIR="${PROJECT_SOURCE_DIR}/suites/golden/keras")
target_link_libraries(test_keras PRIVATE xo_model xo_lib PkgConfig::CMOCKA
                      PkgConfig::XO_T_HDF5 PkgConfig::XO_T_LIBZIP m)
add_test(NAME keras COMMAND test_keras)
set_tests_properties(keras PROPERTIES LABELS "model;quick" TIMEOUT 300)
# Keras loads what xo writes (suites/keras_load.py), in three groups of its
# parts, a test each. Each group starts one Python with Keras and JAX (2-3 s
# quiet, ~10 s loaded) and each part takes 0.5-1 s more (xo trains twice,
# Keras loads three models and predicts) once JAX's compilation cache in the
# venv holds the part's executables (suites/keras_load.py; the first run
# after a Keras or model change compiles them, 2-4 s a part), so a group is
# ~10 s quiet: few groups spend few start-ups, and three keep each well
# inside its timeout on a loaded machine and let -j2 balance them. The
# groups together are every part; a new part joins the shortest group.
foreach(group "seed,bn,lstm,gru,cnn2d,acts2,acts3,dwconv,dwconv1d,sepconv,sepconv1d,name_clash,mask_cat,mask_cat1,mask_merge,leaky,compiled_logits,norm_inv" "cnn_bn,compiled,bn_fresh,pad1d,resize1d,resize2d,td,bidir,convt,convt1d,mha_mask,mha_pad,mha_bool,mha_pad_mask,msk_rnn,elu,keepdims,elu_neg" "ln,ln2d,d3,d3_2d,permute,permute2d,repeat,reshape,graph,multi,mha,mask,mask_res,mask_rnn,mask_bidir,msk_bidir,rescale,norm_mlp,norm_conv,norm_given,keepdims2d,mask_kd")
  string(REPLACE "," "_" gname "${group}")
  add_test(NAME keras.load_in_keras.${gname}
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/keras_load.py $<TARGET_FILE:xo>
            ${PROJECT_SOURCE_DIR}/suites/golden/keras ${CMAKE_CURRENT_BINARY_DIR}/keras_load
            ${group})
  set_tests_properties(keras.load_in_keras.${gname} PROPERTIES LABELS "model;quick" TIMEOUT 300
    SKIP_RETURN_CODE 77)
endforeach()
add_test(NAME keras.train_from_file_weights
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/keras_cli.py $<TARGET_FILE:xo>
          ${PROJECT_SOURCE_DIR}/suites/golden/keras ${CMAKE_CURRENT_BINARY_DIR}/keras_cli)
set_tests_properties(keras.train_from_file_weights PROPERTIES LABELS "model;quick" TIMEOUT 120)

# Keras files from strangers (model/h5read.c): hostile HDF5 files written by
# libhdf5 itself (attributes of the wrong shape, external storage and links,
# virtual datasets, a huge config over a tiny file, NaN and float64 weights,
# a reader that crashes or hangs, corrupt files, a model without weights).
add_executable(test_keras_hostile ${CMAKE_CURRENT_LIST_DIR}/test_keras_hostile.c)
target_include_directories(test_keras_hostile PRIVATE ${PROJECT_SOURCE_DIR}/model)
target_compile_definitions(test_keras_hostile PRIVATE
  XO_KERAS_DIR="${PROJECT_SOURCE_DIR}/suites/golden/keras"
  XO_FUZZ_REGRESS="${PROJECT_SOURCE_DIR}/fuzz/regress")
target_link_libraries(test_keras_hostile PRIVATE xo_model xo_lib PkgConfig::CMOCKA
                      PkgConfig::XO_T_HDF5 PkgConfig::XO_T_LIBZIP m)
add_test(NAME keras.hostile COMMAND test_keras_hostile)
set_tests_properties(keras.hostile PROPERTIES LABELS "model;quick" TIMEOUT 300)

# The config.json xo writes, field by field against Keras's own for the same
# model, every layer kind xo exports with non-default arguments, both
# directions (suites/test_keras_config.c; fixtures suites/golden/keras_config/,
# made by scripts/make_keras_configs.py from real Keras).
pkg_check_modules(XO_T_JANSSON REQUIRED IMPORTED_TARGET jansson)
add_executable(test_keras_config ${CMAKE_CURRENT_LIST_DIR}/test_keras_config.c)
target_include_directories(test_keras_config PRIVATE ${PROJECT_SOURCE_DIR}/model)
target_compile_definitions(test_keras_config PRIVATE
  XO_KERAS_CONFIG_DIR="${PROJECT_SOURCE_DIR}/suites/golden/keras_config")
target_link_libraries(test_keras_config PRIVATE xo_model xo_lib PkgConfig::CMOCKA
                      PkgConfig::XO_T_JANSSON PkgConfig::XO_T_LIBZIP m)
add_test(NAME keras.config_fields COMMAND test_keras_config)
set_tests_properties(keras.config_fields PROPERTIES LABELS "model;quick" TIMEOUT 60)
