# The oracle checked (DESIGN section 5): the reference backward pass of every
# op against central finite differences in double, the ref backend's float path
# against its double math, hand-worked forward values; and the Philox
# known-answer vectors behind dropout masks and initialisation.
add_executable(test_gradcheck ${CMAKE_CURRENT_LIST_DIR}/test_gradcheck.c)
target_include_directories(test_gradcheck PRIVATE ${PROJECT_SOURCE_DIR}/reference)
target_link_libraries(test_gradcheck PRIVATE xo_lib PkgConfig::CMOCKA m)
add_test(NAME gradcheck COMMAND test_gradcheck)
set_tests_properties(gradcheck PROPERTIES LABELS "gradcheck;quick" TIMEOUT 300)

add_executable(test_philox ${CMAKE_CURRENT_LIST_DIR}/test_philox.c)
target_link_libraries(test_philox PRIVATE xo_model xo_lib PkgConfig::CMOCKA)
add_test(NAME philox COMMAND test_philox)
set_tests_properties(philox PROPERTIES LABELS "gradcheck;quick" TIMEOUT 60)
