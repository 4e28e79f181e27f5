/*
 * cmd.h - the `xo` subcommands. Each returns the process exit code:
 * 0 success, 1 a check or regression failed, 2 bad usage or bad input
 * (after printing one line to stderr).
 */
#ifndef XO_CLI_CMD_H
#define XO_CLI_CMD_H

int xo_cmd_devices(int argc, char **argv);
int xo_cmd_check(int argc, char **argv);
int xo_cmd_seed(int argc, char **argv);
int xo_cmd_predict(int argc, char **argv);
int xo_cmd_train(int argc, char **argv);
int xo_cmd_perf(int argc, char **argv);
int xo_cmd_bench(int argc, char **argv);

/* Prints "xo CMD: message" to stderr and returns 2. */
int xo_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
