/*
 * main.c - the `xo` command: dispatches to the subcommands of DESIGN section 8.
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "xo.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{"devices", xo_cmd_devices, "list backends and devices found, with versions"},
	{"check", xo_cmd_check, "check ops of a backend against the reference"},
	{"seed", xo_cmd_seed, "run the seed experiment on each device"},
	{"predict", xo_cmd_predict, "predict with a model and weights"},
	{"train", xo_cmd_train, "train a model and save its best weights"},
	{"perf", xo_cmd_perf, "record, compare, detect, report, advise"},
	{"bench", xo_cmd_bench, "benchmark a backend on the seed workloads"},
	{"summary", xo_cmd_summary, "a model's layers, output shapes and parameters (Keras)"},
	{"probe", xo_cmd_probe, "launch latency, transfers, FMA peak, memory bandwidth per device"},
	{"explain", xo_cmd_explain, "measured vs predicted step time per batch size, and why"},
	{"import", xo_cmd_import, "a Keras .keras/.h5 model as a spec and .npy weights"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: xo COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n`xo COMMAND --help` for a command's options; `xo --version`.\n");
}

int main(int argc, char **argv)
{
	xo_cli_build_commit_register();
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		xo_cli_print_version();
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	xo_error(XO_EINVAL, "xo: unknown command '%s' (try `xo --help`)", argv[1]);
	fprintf(stderr, "%s\n", xo_last_error());
	return 2;
}
