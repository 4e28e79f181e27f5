/* train.c - placeholder until the owner of `xo train` fills it in. */
#include "cmd.h"

int xo_cmd_train(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return xo_usage_error("train", "not built yet");
}
