/* perf.c - placeholder until the owner of `xo perf` fills it in. */
#include "cmd.h"

int xo_cmd_perf(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return xo_usage_error("perf", "not built yet");
}
