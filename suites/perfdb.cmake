# The perf store and its statistics (suites/test_perfdb.c): migration from
# schema version 1, Mann-Whitney U and summaries against SciPy/NumPy values,
# step detection (planted steps found, none in noise), kill -9 mid-write, two
# concurrent writers, foreign files refused. Then `xo perf` itself on bad
# input: exit 2 with a reason.
add_executable(test_perfdb ${CMAKE_CURRENT_LIST_DIR}/test_perfdb.c)
target_link_libraries(test_perfdb PRIVATE xo_perfdb PkgConfig::CMOCKA m)
add_test(NAME perfdb COMMAND test_perfdb)
set_tests_properties(perfdb PROPERTIES LABELS "perfdb;quick" TIMEOUT 120)

# `xo perf` on files that are not a perf store, and on bad usage: exit 2 and
# a one-line reason naming the cause.
set(XO_PERFDB_CLI_DIR ${CMAKE_CURRENT_BINARY_DIR}/perfdb_cli)
file(MAKE_DIRECTORY ${XO_PERFDB_CLI_DIR})
# Each test gets its own directory: ctest runs them in parallel, and each
# writes err.txt and its own stores there.
function(xo_perfdb_cli_test name script)
  file(MAKE_DIRECTORY ${XO_PERFDB_CLI_DIR}/${name})
  add_test(NAME perfdb.cli.${name}
           COMMAND sh -c "${script}"
           WORKING_DIRECTORY ${XO_PERFDB_CLI_DIR}/${name})
  set_tests_properties(perfdb.cli.${name} PROPERTIES LABELS "perfdb;quick" TIMEOUT 60)
endfunction()
set(XO $<TARGET_FILE:xo>)
xo_perfdb_cli_test(corrupt
  "printf 'not a database, just text\\n%.0s' $(seq 100) > corrupt.sqlite; ${XO} perf compare --db corrupt.sqlite run:1 2> err.txt; rc=$?; cat err.txt; test $rc -eq 2 && grep -q 'not a SQLite database' err.txt")
xo_perfdb_cli_test(foreign
  "rm -f foreign.sqlite; sqlite3 foreign.sqlite 'CREATE TABLE t(x)' && ${XO} perf detect --db foreign.sqlite 2> err.txt; rc=$?; cat err.txt; test $rc -eq 2 && grep -q 'another program' err.txt")
xo_perfdb_cli_test(usage
  "${XO} perf compare 2> err.txt; a=$?; ${XO} perf record --samples 3 2>> err.txt; b=$?; ${XO} perf record --filter '(' --list 2>> err.txt; c=$?; ${XO} perf frobnicate 2>> err.txt; d=$?; cat err.txt; test $a -eq 2 -a $b -eq 2 -a $c -eq 2 -a $d -eq 2")
# A missing --db is refused by the readers and not created (a typo must not
# leave an empty store behind); a zero-byte file is an empty store: no run 1.
xo_perfdb_cli_test(empty
  "rm -f empty.sqlite* missing.sqlite*; ${XO} perf compare --db missing.sqlite run:1 2> err.txt; a=$?; test ! -e missing.sqlite || exit 1; : > empty.sqlite; ${XO} perf compare --db empty.sqlite run:1 2>> err.txt; b=$?; cat err.txt; test $a -eq 2 -a $b -eq 2 && grep -q 'no such database' err.txt && grep -q 'no run 1' err.txt")
# An option the subcommand does not use, and a --device that does not open:
# exit 2, and the latter leaves no run row behind.
xo_perfdb_cli_test(badopts
  "rm -f bad.sqlite*; : > bad.sqlite; ${XO} perf compare --quick --db bad.sqlite run:1 2> err.txt; a=$?; ${XO} perf record --db bad.sqlite --device gpu9 --no-progress 2>> err.txt; b=$?; cat err.txt; test $a -eq 2 -a $b -eq 2 && grep -q 'does not take --quick' err.txt && grep -q 'gpu9' err.txt && test $(sqlite3 bad.sqlite 'SELECT count(*) FROM runs') -eq 0")
# End to end on the real backends, kept small (ref relu only): record twice,
# compare and detect (0 or 1: timing may differ, the format may not), import a
# peer, advise, and a report when gnuplot is there.
xo_perfdb_cli_test(roundtrip
  "set -e; rm -rf rt.sqlite* rt_report; for i in 1 2; do ${XO} perf record --db rt.sqlite --filter '^op/relu/fwd/.*/ref$' --no-progress; done; set +e; ${XO} perf compare --db rt.sqlite run:1 > cmp.txt; rc=$?; cat cmp.txt; test $rc -le 1 && grep -q 'op/relu/fwd/n512_l27_c16/ref' cmp.txt || exit 1; ${XO} perf detect --db rt.sqlite; test $? -le 1 || exit 1; printf '{\"results\":[{\"benchmark\":\"predict\",\"batch\":8,\"samples_s\":[1e-4,1.1e-4]}]}' > peer.json; ${XO} perf import --db rt.sqlite --peer testpeer --json peer.json || exit 1; test $(sqlite3 rt.sqlite 'SELECT count(*) FROM runs WHERE state = \"complete\"') -eq 3 || exit 1; if command -v gnuplot >/dev/null; then ${XO} perf report --db rt.sqlite --out rt_report && test -s rt_report/index.html && test -s rt_report/hist_op_relu_fwd_n512_l27_c16.png || exit 1; fi")

# The regression loop (compare by commit, git revisions, lowered
# verdicts, ref and peers apart, --json) on synthetic stores.
add_executable(test_perf_workflow ${CMAKE_CURRENT_LIST_DIR}/test_perf_workflow.c)
target_link_libraries(test_perf_workflow PRIVATE xo_perfdb PkgConfig::CMOCKA m)
add_test(NAME perf_workflow COMMAND test_perf_workflow)
set_tests_properties(perf_workflow PROPERTIES LABELS "perfdb;quick" TIMEOUT 120)
# Code versions (perfdb/versions.cmake, docs/perf.md "Kernel versions"): an
# unknown version never lowers an alarm (test_perf_versions.c); each kind of
# file that builds a unit changes exactly that unit's version, docs and tests
# none, on a small CMake project built for real and on xo's own build
# (suites/perf_versions.sh).
add_executable(test_perf_versions ${CMAKE_CURRENT_LIST_DIR}/test_perf_versions.c)
target_link_libraries(test_perf_versions PRIVATE xo_perfdb PkgConfig::CMOCKA m)
add_test(NAME perf_versions COMMAND test_perf_versions)
set_tests_properties(perf_versions PROPERTIES LABELS "perfdb;quick" TIMEOUT 60)
add_test(NAME perf_versions.tiny COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/perf_versions.sh tiny
         ${PROJECT_SOURCE_DIR}/perfdb/versions.cmake)
add_test(NAME perf_versions.real COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/perf_versions.sh real
         $<TARGET_FILE:xo> ${PROJECT_SOURCE_DIR})
set_tests_properties(perf_versions.tiny perf_versions.real PROPERTIES LABELS "perfdb;quick"
                     TIMEOUT 60)
# a peer name built to break out of gnuplot's quotes (quote,
# system(), backquotes, a macro '@') reaches the report; nothing may run.
# Fails on the code that pasted names into the gnuplot script.
xo_perfdb_cli_test(report_injection
  "bash ${CMAKE_CURRENT_SOURCE_DIR}/perfdb_inject.sh ${XO}")
# The report's --out: a symlink, a file and a
# non-empty directory no report wrote are refused (exit 2, left as they were);
# a report replaces its own earlier output; a failing report leaves --out
# untouched and no temporary sibling; a quote and ';' in the path run nothing.
xo_perfdb_cli_test(report_out
  "command -v gnuplot >/dev/null || exit 0; rm -rf ro.sqlite* empty.sqlite* link target file foreign good good.* \"a'b;touch PWN\" PWN; ${XO} perf record --db ro.sqlite --filter '^op/relu/fwd/.*/ref$' --no-progress >/dev/null || exit 1; mkdir target; ln -s target link; ${XO} perf report --db ro.sqlite --out link 2> err.txt; a=$?; : > file; ${XO} perf report --db ro.sqlite --out file 2>> err.txt; b=$?; mkdir foreign; echo keep > foreign/x; ${XO} perf report --db ro.sqlite --out foreign 2>> err.txt; c=$?; cat err.txt; test $a -eq 2 -a $b -eq 2 -a $c -eq 2 || exit 1; grep -q 'symbolic link' err.txt && grep -q 'not a directory' err.txt && grep -q 'non-empty directory' err.txt || exit 1; test -z \"$(ls target)\" -a ! -s file -a \"$(cat foreign/x)\" = keep -a \"$(ls foreign)\" = x || exit 1; ${XO} perf report --db ro.sqlite --out good/ && ${XO} perf report --db ro.sqlite --out good && test -f good/.xo-perf-report -a -s good/index.html || exit 1; : > empty.sqlite; ${XO} perf report --db empty.sqlite --out good; test $? -eq 2 -a -s good/index.html || exit 1; test -z \"$(ls -d good.* 2>/dev/null)\" || exit 1; ${XO} perf report --db ro.sqlite --out \"a'b;touch PWN\" && test -s \"a'b;touch PWN/index.html\" -a ! -e PWN")
# advise and report work for every recorded model (a
# list of the models when --model is not given), advise --json parses (with
# its diagnosis sentences), and a
# PoCL cl device is labelled as OpenCL on the CPU in the plots.
xo_perfdb_cli_test(models
  "rm -rf m.sqlite* rep; cp ${CMAKE_SOURCE_DIR}/models/seed.model tiny.model; for m in ${CMAKE_SOURCE_DIR}/models/seed.model tiny.model; do ${XO} perf record --db m.sqlite --model $m --filter '^model/.*/predict/b(1|8)/(cpu|cl)$' --quick --no-progress >/dev/null || exit 1; done; ${XO} perf advise --db m.sqlite > adv.txt || exit 1; cat adv.txt; grep -q 'models in the store: seed tiny' adv.txt && grep -q '==== model tiny' adv.txt || exit 1; ${XO} perf advise --db m.sqlite --model tiny --json > adv.json || exit 1; python3 -c 'import json,sys; d=json.load(open(\"adv.json\")); m=d[\"models\"][0]; sys.exit(0 if m[\"model\"] == \"tiny\" and m[\"diagnosis\"] and all(x.startswith(\"at batch \") for x in m[\"diagnosis\"]) else 1)' || exit 1; command -v gnuplot >/dev/null || exit 0; ${XO} perf report --db m.sqlite --out rep > /dev/null || exit 1; grep -q 'Answer for tiny,' rep/index.html || exit 1; if ${XO} devices | grep -q '^cl .*PoCL'; then grep -q \"cl_label = 'cl: OpenCL on the CPU (PoCL)'\" rep/plots.gp || exit 1; fi")
# --json of record --list, compare and detect is JSON
# (python3 parses it); continuous refuses what git does not know and
# a comparison of a commit with itself, exit 2, before building anything.
xo_perfdb_cli_test(json
  "rm -rf j.sqlite*; ${XO} perf record --list --json --quick --device cpu > list.json && python3 -c 'import json; d=json.load(open(\"list.json\")); assert d and all(\"name\" in b and \"version\" in b for b in d)' || exit 1; for i in 1 2; do ${XO} perf record --db j.sqlite --filter '^op/relu/fwd/.*/ref$' --no-progress > /dev/null || exit 1; done; ${XO} perf compare --db j.sqlite --json run:1 run:2 > cmp.json; test $? -le 1 || exit 1; ${XO} perf detect --db j.sqlite --json > det.json; test $? -le 1 || exit 1; python3 -c 'import json; c=json.load(open(\"cmp.json\")); d=json.load(open(\"det.json\")); assert c[\"results\"][0][\"benchmark\"] == \"op/relu/fwd/n512_l27_c16/ref\" and c[\"results\"][0][\"section\"] == \"ref\" and \"changes\" in d' || exit 1; XO_SOURCE_DIR=${CMAKE_SOURCE_DIR} ${XO} perf continuous --db j.sqlite no-such-revision 2> err.txt; a=$?; XO_SOURCE_DIR=${CMAKE_SOURCE_DIR} ${XO} perf continuous --db j.sqlite -x 2>> err.txt; b=$?; cat err.txt; test $a -eq 2 -a $b -eq 2 && grep -q no-such-revision err.txt")

# Git revisions end to end (label nightly: it builds two revisions): `xo perf
# continuous HEAD~1 HEAD` on one small benchmark, 2 rounds: both commits are
# recorded in alternating runs (base 1, 3; head 2, 4), the comparison names
# them, exit 0 or 1, and the temporary clones are gone afterwards. Skipped
# without git history (a tarball or a shallow clone).
add_test(NAME perfdb.continuous
         COMMAND sh -c "git -C ${CMAKE_SOURCE_DIR} rev-parse --verify -q HEAD~1 >/dev/null || exit 0; rm -rf c.sqlite* tmp; mkdir tmp; TMPDIR=$PWD/tmp XO_SOURCE_DIR=${CMAKE_SOURCE_DIR} ${XO} perf continuous --db c.sqlite --rounds 2 --device ref --filter '^op/relu/fwd/.*/ref$' HEAD~1 HEAD > out.txt 2> err.txt; rc=$?; cat err.txt out.txt; test $rc -le 1 && grep -q 'record runs pooled: run:1 run:3' out.txt && grep -q 'record runs pooled: run:2 run:4' out.txt && test -z \"$(ls tmp)\""
         WORKING_DIRECTORY ${XO_PERFDB_CLI_DIR})
set_tests_properties(perfdb.continuous PROPERTIES LABELS "perfdb;nightly" TIMEOUT 1500)
# Hostile and careless input, suites/perfdb_cli.sh: schema versions
# outside the migration table, a read-only store, --db that is not a file,
# NaN options and bad --model specs, every number and string of a peer
# import, and a write that fails mid-run (writefail). Each: exit 2, one line
# naming the cause, nothing changed.
foreach(case schema nullstate nullname readonly notafile options import bisect writefail)
  file(MAKE_DIRECTORY ${XO_PERFDB_CLI_DIR}/${case})
  add_test(NAME perfdb.cli.${case}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/perfdb_cli.sh ${case} $<TARGET_FILE:xo>
                   ${PROJECT_SOURCE_DIR}
           WORKING_DIRECTORY ${XO_PERFDB_CLI_DIR}/${case})
  set_tests_properties(perfdb.cli.${case} PROPERTIES LABELS "perfdb;quick" TIMEOUT 120)
endforeach()
# A run belongs to the commit the binary was built from, not to the one the
# source tree has checked out when it runs (suites/perf_build_commit.sh).
add_test(NAME perfdb.cli.build_commit
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/perf_build_commit.sh $<TARGET_FILE:xo>
                 ${PROJECT_SOURCE_DIR})
set_tests_properties(perfdb.cli.build_commit PROPERTIES LABELS "perfdb;quick" TIMEOUT 120)
# No shell anywhere: every program is run from an argument vector
# (perfdb/proc.h). Comment lines do not count.
add_test(NAME lint.noshell
         COMMAND sh -c "! grep -rn --include=*.c -E '(^|[^_[:alnum:]])(system|popen)[[:space:]]*\\(' core reference kernels cl model perfdb cli suites fuzz | grep -v -E '^[^:]+:[0-9]+:[[:space:]]*(/[*]|[*]|//)'"
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(lint.noshell PROPERTIES LABELS "quick" TIMEOUT 30)
# No tracker references in source: comments state contracts and reasons
# (suites/lint_noissue.sh names each FILE:LINE); .selftest shows the guard
# fails on a planted reference and skips build trees.
add_test(NAME lint.noissue
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/lint_noissue.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(lint.noissue PROPERTIES LABELS "quick" TIMEOUT 30)
add_test(NAME lint.noissue.selftest
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/lint_noissue.sh --self-test)
set_tests_properties(lint.noissue.selftest PROPERTIES LABELS "quick" TIMEOUT 30)
# No pipe into an early-exiting reader (grep -q, head) in a pipefail script:
# the writer's SIGPIPE fails the pipeline at random (suites/lint_pipefail.sh
# names each FILE:LINE); .selftest plants four and a clean set.
add_test(NAME lint.pipefail
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/lint_pipefail.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(lint.pipefail PROPERTIES LABELS "quick" TIMEOUT 30)
add_test(NAME lint.pipefail.selftest
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/lint_pipefail.sh --self-test)
set_tests_properties(lint.pipefail.selftest PROPERTIES LABELS "quick" TIMEOUT 30)
# perfdb's shape: no new read of the store outside query.c
# (suites/lint_perfdb_shape.py names each file; cycles and function length
# are lint.layers'); .selftest plants a read and expects it found.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME lint.perfdb_shape
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/lint_perfdb_shape.py
                   ${PROJECT_SOURCE_DIR})
  set_tests_properties(lint.perfdb_shape PROPERTIES LABELS "quick" TIMEOUT 30)
  add_test(NAME lint.perfdb_shape.selftest
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/lint_perfdb_shape.py
                   --self-test)
  set_tests_properties(lint.perfdb_shape.selftest PROPERTIES LABELS "quick" TIMEOUT 30)
endif()
# the mutation stage's figure is stored like any other and the
# report shows it (table mutation_runs as ci/mutate.sh --db writes it; the
# row's missed list is escaped in the HTML).
xo_perfdb_cli_test(report_mutation
  "command -v gnuplot >/dev/null || exit 0; rm -rf mu.sqlite* rep; ${XO} perf record --db mu.sqlite --filter '^op/relu/fwd/.*/ref$' --no-progress >/dev/null || exit 1; sqlite3 mu.sqlite \"CREATE TABLE mutation_runs(id INTEGER PRIMARY KEY, date TEXT NOT NULL, sha TEXT NOT NULL, dirty INTEGER NOT NULL, caught INTEGER NOT NULL, total INTEGER NOT NULL, equivalent INTEGER NOT NULL, errors INTEGER NOT NULL, missed TEXT, seconds INTEGER, mutants INTEGER NOT NULL, mutants_all INTEGER NOT NULL); INSERT INTO mutation_runs VALUES(NULL, '2026-11-25T18:00:00Z', 'abc123', 0, 52, 53, 5, 0, 'k-<b>x', 900, 58, 58)\" || exit 1; ${XO} perf report --db mu.sqlite --out rep >/dev/null || exit 1; grep -q 'Suite power' rep/index.html && grep -q '<td>52/53</td>' rep/index.html && grep -q 'k-&lt;b&gt;x' rep/index.html")
# the report that answers first, and advise, on a synthetic
# store with known answers (faster device per batch, crossover interval from
# the CI curves, split bars that add up, grouped history, with and without
# table probes). Without gnuplot the report cases skip.
add_executable(test_perf_report ${CMAKE_CURRENT_LIST_DIR}/test_perf_report.c)
target_link_libraries(test_perf_report PRIVATE xo_perfdb PkgConfig::CMOCKA m)
target_compile_definitions(test_perf_report PRIVATE
                           XO_TEST_SCRIPTS_DIR="${PROJECT_SOURCE_DIR}/scripts")
add_test(NAME perf_report COMMAND test_perf_report)
set_tests_properties(perf_report PROPERTIES LABELS "perfdb;quick" TIMEOUT 120
                     ENVIRONMENT "XO_SOURCE_DIR=${PROJECT_SOURCE_DIR}")

# detect at fleet size and in commit-graph order (suites/test_perf_detect.c):
# the fast step fit against the exhaustive one on random series, a
# 20 000-point fit, equal-date commits recorded out of graph order, a
# docs-only commit never blamed. About 5 s on 2 busy cores.
add_executable(test_perf_detect ${CMAKE_CURRENT_LIST_DIR}/test_perf_detect.c)
target_link_libraries(test_perf_detect PRIVATE xo_perfdb PkgConfig::CMOCKA m)
target_compile_definitions(test_perf_detect PRIVATE
                           XO_TEST_SCRIPTS_DIR="${PROJECT_SOURCE_DIR}/scripts")
add_test(NAME perf_detect COMMAND test_perf_detect)
set_tests_properties(perf_detect PROPERTIES LABELS "perfdb;quick" TIMEOUT 120)

# The same store suites on PostgreSQL: suites/pg_cluster.sh starts a
# throwaway server on a Unix socket and hands the suites its URI (XO_TEST_PG);
# every store is then a schema of that database. Skipped, with the reason,
# where no server can be started, unless XO_REQUIRE_POSTGRES=1 (ci/test.sh,
# which runs them with the other quick suites). Each test has a cluster of
# its own (a fresh temporary directory, a Unix socket, no TCP port), so they
# run in parallel with anything; a cluster start takes about 3 s.
foreach(suite perf_workflow perf_detect)
  add_test(NAME ${suite}.pg COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/pg_cluster.sh
           $<TARGET_FILE:test_${suite}>)
  set_tests_properties(${suite}.pg PROPERTIES LABELS "perfdb;postgres;quick" TIMEOUT 600
                       SKIP_RETURN_CODE 77 ENVIRONMENT "XO_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endforeach()
# The two long store suites run on PostgreSQL as a few groups of cases, each
# a ctest with its own cluster (XO_TEST_CASES, suites/case_pick.h), so no one
# test holds a whole suite for half a minute and more under load. The last
# group of each is "the rest" (XO_TEST_CASES=!the others), so a case added to
# a suite runs there without being listed. Times quiet, cluster included:
# perfdb.pg.kill_mid_write 14 s, .concurrent 13 s, .detect 10 s, .rest 11 s;
# perf_report.pg.advise 9 s, .answer 12 s, .probes 8 s, .rest 8 s (two to
# three times that with the other helpers' builds on the 2 cores).
function(xo_pg_groups suite)
  set(listed "")
  foreach(group ${ARGN})
    string(REPLACE ":" ";" parts "${group}")
    list(GET parts 0 name)
    list(GET parts 1 cases)
    list(APPEND listed "${cases}")
    xo_pg_group(${suite} ${name} "${cases}")
  endforeach()
  string(REPLACE ";" "," listed "${listed}")
  xo_pg_group(${suite} rest "!${listed}")
endfunction()
function(xo_pg_group suite name cases)
  add_test(NAME ${suite}.pg.${name} COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/pg_cluster.sh
           $<TARGET_FILE:test_${suite}>)
  set_tests_properties(${suite}.pg.${name} PROPERTIES LABELS "perfdb;postgres;quick"
                       TIMEOUT 120 SKIP_RETURN_CODE 77
                       ENVIRONMENT "XO_SOURCE_DIR=${PROJECT_SOURCE_DIR};XO_TEST_CASES=${cases}")
endfunction()
xo_pg_groups(perfdb
  "kill_mid_write:test_kill_mid_write"
  "concurrent:test_concurrent_writers,test_concurrent_fresh_open"
  "detect:test_detect_planted_and_noise,test_accept_starts_baseline,test_detect_run_to_run_noise,test_detect_counts,test_detect_scans_bounded")
xo_pg_groups(perf_report
  "advise:test_advise_known_answer,test_crossover_edges,test_crossover_twice,test_crossover_follows_table"
  "answer:test_report_answer_first,test_split_adds_up,test_history_grouped"
  "probes:test_probes_with_and_without,test_report_compare_verdicts")
# A group naming no case of its suite fails (exit 2, one line), never runs
# nothing; a named case runs alone.
add_test(NAME perfdb.case_pick
         COMMAND sh -c "XO_TEST_CASES=test_welch_known,test_no_such_case \"$0\" 2>err; \
                        [ $? = 2 ] && grep -q \"'test_no_such_case' is no case\" err || exit 1; \
                        XO_TEST_CASES=test_welch_known \"$0\" >out 2>&1 || exit 1; \
                        grep -q '1 test(s) run' out && ! grep -q test_summary_known out"
                 $<TARGET_FILE:test_perfdb>
         WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(perfdb.case_pick PROPERTIES LABELS "perfdb;quick" TIMEOUT 30)
add_test(NAME perfdb.pg.cli COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/pg_cluster.sh
         sh ${CMAKE_CURRENT_LIST_DIR}/perfdb_pg_cli.sh $<TARGET_FILE:xo>)
set_tests_properties(perfdb.pg.cli PROPERTIES LABELS "perfdb;postgres;quick" TIMEOUT 600
                     SKIP_RETURN_CODE 77)

# The scale check's history generator (ci/nightly.sh perf-scale stage).
add_executable(perf_gen ${CMAKE_CURRENT_LIST_DIR}/perf_gen.c)
target_link_libraries(perf_gen PRIVATE xo_perfdb m)
# Instruction counts for real: two records under callgrind
# of one build agree within 0.5% and compare calls every series SAME;
# skipped (77) without valgrind. ~10 s on the 2-core VM.
# Not in a sanitizer build: valgrind cannot run an ASan binary (its shadow
# memory), and record refuses to try (runner.c).
if(NOT XO_SANITIZE)
  file(MAKE_DIRECTORY ${XO_PERFDB_CLI_DIR}/counts)
  add_test(NAME perfdb.counts
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/perfdb_counts.sh $<TARGET_FILE:xo>
           WORKING_DIRECTORY ${XO_PERFDB_CLI_DIR}/counts)
  set_tests_properties(perfdb.counts PROPERTIES LABELS "perfdb;quick" TIMEOUT 300
                       SKIP_RETURN_CODE 77)
endif()
# Across a schema bump: continuous and bisect let each
# revision's xo record into its own store and merge the runs; import-db reads
# an older store through a migrated copy and leaves it unchanged. The older
# xo is a stand-in script writing schema version 1 (suites/perf_schema_bump.sh),
# so each case takes seconds.
foreach(case import bisect continuous noisy_bad unknown noisy_good busy)
  file(MAKE_DIRECTORY ${XO_PERFDB_CLI_DIR}/schema_bump_${case})
  add_test(NAME perfdb.schema_bump.${case}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/perf_schema_bump.sh ${case}
                   $<TARGET_FILE:xo> ${PROJECT_SOURCE_DIR}
           WORKING_DIRECTORY ${XO_PERFDB_CLI_DIR}/schema_bump_${case})
  set_tests_properties(perfdb.schema_bump.${case} PROPERTIES LABELS "perfdb;quick" TIMEOUT 120
                       SKIP_RETURN_CODE 77)
endforeach()
# One metric per reader and one decision rule (perfdb/verdict.c): a store
# holding times and instruction counts answers as its times alone; compare,
# continuous, bisect and detect give the same samples the same verdict, and
# load (a long right tail within a run) is judged on the run minima.
add_executable(test_perf_verdict ${CMAKE_CURRENT_LIST_DIR}/test_perf_verdict.c)
target_link_libraries(test_perf_verdict PRIVATE xo_perfdb PkgConfig::CMOCKA m)
target_compile_definitions(test_perf_verdict PRIVATE
                           XO_TEST_SCRIPTS_DIR="${PROJECT_SOURCE_DIR}/scripts")
add_test(NAME perf_verdict COMMAND test_perf_verdict)
set_tests_properties(perf_verdict PROPERTIES LABELS "perfdb;quick" TIMEOUT 60
                     ENVIRONMENT "XO_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
add_test(NAME perf_verdict.pg COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/pg_cluster.sh
         $<TARGET_FILE:test_perf_verdict>)
set_tests_properties(perf_verdict.pg PROPERTIES LABELS "perfdb;postgres;quick" TIMEOUT 600
                     SKIP_RETURN_CODE 77 ENVIRONMENT "XO_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
# Which runs each reader takes when a commit holds several complete runs and
# an incomplete one, and verdicts over a noisy base (test_perf_select.c).
add_executable(test_perf_select ${CMAKE_CURRENT_LIST_DIR}/test_perf_select.c)
target_link_libraries(test_perf_select PRIVATE xo_perfdb PkgConfig::CMOCKA m)
target_compile_definitions(test_perf_select PRIVATE
                           XO_TEST_SCRIPTS_DIR="${PROJECT_SOURCE_DIR}/scripts")
add_test(NAME perf_select COMMAND test_perf_select)
set_tests_properties(perf_select PROPERTIES LABELS "perfdb;quick" TIMEOUT 60
                     ENVIRONMENT "XO_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
add_test(NAME perf_select.pg COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/pg_cluster.sh
         $<TARGET_FILE:test_perf_select>)
set_tests_properties(perf_select.pg PROPERTIES LABELS "perfdb;postgres" TIMEOUT 600
                     SKIP_RETURN_CODE 77 ENVIRONMENT "XO_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
