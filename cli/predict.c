/* predict.c - placeholder until the owner of `xo predict` fills it in. */
#include "cmd.h"

int xo_cmd_predict(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return xo_usage_error("predict", "not built yet");
}
