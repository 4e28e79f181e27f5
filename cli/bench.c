/* bench.c - placeholder until the owner of `xo bench` fills it in. */
#include "cmd.h"

int xo_cmd_bench(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return xo_usage_error("bench", "not built yet");
}
