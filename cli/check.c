/* check.c - placeholder until the owner of `xo check` fills it in. */
#include "cmd.h"

int xo_cmd_check(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return xo_usage_error("check", "not built yet");
}
