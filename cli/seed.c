/* seed.c - placeholder until the owner of `xo seed` fills it in. */
#include "cmd.h"

int xo_cmd_seed(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return xo_usage_error("seed", "not built yet");
}
