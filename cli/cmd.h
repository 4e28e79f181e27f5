/*
 * cmd.h - the `xo` subcommands. Each returns the process exit code:
 * 0 success, 1 a check or regression failed, 2 bad usage or bad input
 * (after printing one line to stderr).
 */
#ifndef XO_CLI_CMD_H
#define XO_CLI_CMD_H

#include <stdbool.h>
#include <stdint.h>

int xo_cmd_devices(int argc, char **argv);
int xo_cmd_check(int argc, char **argv);
int xo_cmd_seed(int argc, char **argv);
int xo_cmd_predict(int argc, char **argv);
int xo_cmd_train(int argc, char **argv);
int xo_cmd_perf(int argc, char **argv);
int xo_cmd_bench(int argc, char **argv);

/* Prints "xo CMD: message" to stderr and returns 2. */
int xo_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Option values (cli/util.c): true when s is a whole decimal number, all of
 * it, in min..max (i64; a leading '-' allowed) or in 0..UINT64_MAX (u64, no
 * sign), stored in *out. */
bool xo_cli_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);
bool xo_cli_parse_u64(const char *s, uint64_t *out);

/* Prints s as a JSON string to stdout: quoted, with quotes, backslashes and
 * control characters escaped. */
void xo_cli_json_string(const char *s);

#endif
