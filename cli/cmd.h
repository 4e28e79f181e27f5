/*
 * cmd.h - the `xo` subcommands. Each returns the process exit code:
 * 0 success, 1 a check or regression failed, 2 bad usage or bad input
 * (after printing one line to stderr).
 */
#ifndef XO_CLI_CMD_H
#define XO_CLI_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "xo.h"

int xo_cmd_devices(int argc, char **argv);
int xo_cmd_check(int argc, char **argv);
int xo_cmd_seed(int argc, char **argv);
int xo_cmd_predict(int argc, char **argv);
int xo_cmd_train(int argc, char **argv);
int xo_cmd_perf(int argc, char **argv);
int xo_cmd_bench(int argc, char **argv);
int xo_cmd_summary(int argc, char **argv);
int xo_cmd_probe(int argc, char **argv);
int xo_cmd_explain(int argc, char **argv);
int xo_cmd_import(int argc, char **argv);

/* The probe of device (xo_backend_probe, budget_s seconds) run in a child
 * `xo probe --device D --json` (cli/probe_child.c, no shell), so its memory
 * (the triad's arrays exceed the LLC) is not the caller's peak RSS;
 * *child_rss_mb (may be NULL) the child's peak. XO_OK or a status with a
 * message naming the child's failure. */
enum xo_status xo_cli_probe_child(const char *device, double budget_s, struct xo_probe *out,
                                  double *child_rss_mb);

/* `xo --version` (cli/version.c): version, git commit, compiler. */
void xo_cli_print_version(void);
const char *xo_cli_git_commit(void);
/* Hands the build's commit (sha, and the diff hash of a dirty build) to
 * perfdb (xo_perf_build_commit_set); main calls it first. */
void xo_cli_build_commit_register(void);

/* True (having printed one line, "xo CMD: ...", to stderr) when spec asks
 * for a GPU by name ("gpu", "gpu:..."): there is no such device; the line
 * says whether --device cl is a GPU here, and what to install when it is not.
 * The caller returns 2. */
bool xo_cli_gpu_requested(const char *cmd, const char *spec);

/* Prints "xo CMD: message" to stderr and returns 2. */
int xo_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Option values (cli/util.c): true when s is a whole decimal number, all of
 * it, in min..max (i64; a leading '-' allowed) or in 0..UINT64_MAX (u64, no
 * sign), stored in *out. */
bool xo_cli_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);
bool xo_cli_parse_u64(const char *s, uint64_t *out);

/* Prints s as a JSON string to stdout (f): quoted, with quotes, backslashes
 * and control characters escaped. */
void xo_cli_json_string(const char *s);
void xo_cli_json_fstring(FILE *f, const char *s);
/* Prints a canonical "key=value ..." line (xo_params_format) as a JSON
 * object: numbers as numbers, the rest as strings. */
void xo_cli_json_params(FILE *f, const char *line);
/* Prints v as a JSON number when it is one in JSON's syntax, else as a
 * JSON string. */
void xo_cli_json_value(FILE *f, const char *v);

/* The CPU's model name from /proc/cpuinfo ("unknown" when not found). */
void xo_cli_cpu_model(char *buf, size_t size);

/* Labels for a model of classes outputs (cli/util.c): one-hot y[n][classes]
 * float32 (checked, *out = y->data), or class ids y[n] (float32 whole
 * numbers, int32 or int64; range-checked, *out a new one-hot array the caller
 * frees). Anything else: one line "xo CMD: PATH: ..." and 2; need is the
 * one-hot check's reason (xo_labels_check_one_hot; NULL: categorical's). */
struct xo_npy;
struct xo_model;
int xo_cli_labels_one_hot(const char *cmd, const struct xo_npy *y, int64_t n, int64_t classes,
                          const char *path, const char *need, float **out);
/* The labels train takes for model m's loss, as y[n][xo_model_label_width]
 * floats (*out is y->data or malloc'd): categorical as
 * xo_cli_labels_one_hot; sparse_categorical_crossentropy class ids (n,) or
 * (n, 1), int32/int64 or whole float32, each in 0..classes-1; binary and
 * mean_squared_error float32 (n, classes) (or (n,) for one output; int
 * arrays converted), checked by xo_model_check_labels. 0 or exit status 2. */
int xo_cli_labels(const char *cmd, const struct xo_npy *y, int64_t n, const struct xo_model *m,
                  const char *path, float **out);

/* The samples in a for model input k: its first axis when the rest of its
 * shape is the input's own ((len, ch), (h, w, ch) or (features)) or the
 * flat (n, size); -1 otherwise (the one rule of predict, train and seed).
 * A file of the right size in another shape is refused, not reinterpreted. */
int64_t xo_cli_input_rows(const struct xo_npy *a, const struct xo_model *m, int k);
/* "y.npy: shape (40, 5) does not match the model input (34 values per
 * sample, first axis = samples); want (n, 17, 2) or (n, 34)": the message
 * (after "xo CMD: ") for a that xo_cli_input_rows refused. */
int xo_cli_input_mismatch(const char *cmd, const char *path, const struct xo_npy *a,
                          const struct xo_model *m, int k);

/* An array of no values (a 0 anywhere in its shape: NumPy writes and
 * loads them): refused for every input and label file (predict, train,
 * seed), one line "xo CMD: PATH: shape (0, 4) is an empty array ..." and
 * 2; else 0. */
int xo_cli_npy_empty(const char *cmd, const char *path, const struct xo_npy *a);

/* The most --input (--x) files a command takes: one per model input. */
#define XO_CLI_INPUTS_MAX 8
/* The input files paths[] of a model whose inputs are in[0..nin), read
 * into parts[0..nin) and checked against them before the model is opened
 * (so a wrong file costs no model memory): one file per input (np, which
 * may exceed XO_CLI_INPUTS_MAX, is only counted when it is not nin), each
 * of its input's shape (xo_cli_input_rows' rule), with samples, all with
 * the same samples. Anything else: one line "xo CMD: ..." and 2 (parts
 * freed); else 0. */
struct xo_input_spec;
int xo_cli_inputs_read(const char *cmd, const struct xo_input_spec *in, int nin,
                       const char *const *paths, int np, struct xo_npy *parts);
/* xo_cli_inputs_read against the inputs of the model file model, read
 * (its architecture only: nothing allocated for it) and parsed here; their
 * count in *nin. 0, or 2 having said why. */
int xo_cli_inputs_read_model(const char *cmd, const char *model, const char *const *paths,
                             int np, struct xo_npy *parts, int *nin);
/* parts (nread of them, from xo_cli_inputs_read) checked against the
 * opened model m (as many inputs, int ids, finite values) and made its x:
 * the one file as it is, or several joined per sample as
 * xo_cli_inputs_join joins them. parts are freed. 0, or 2 having said
 * why. */
int xo_cli_inputs_take(const char *cmd, const struct xo_model *m, const char *const *paths,
                       int nread, struct xo_npy *parts, struct xo_npy *x);
/* The x of a model of several inputs from its np files paths[] (one per
 * model input, in the model's order), each read, checked against its
 * input (its shape, int ids refused, finite values) and against the
 * others (the same samples): one array x[n][xo_model_input_size], each
 * sample the inputs' samples one after the other, as the model takes
 * them. Anything else: one line "xo CMD: ..." and 2; else 0. */
int xo_cli_inputs_join(const char *cmd, const struct xo_model *m, const char *const *paths,
                       int np, struct xo_npy *x);

#endif
