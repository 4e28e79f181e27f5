/*
 * version.c - `xo --version`: the project version (CMakeLists.txt) and the
 * git commit the binary was built from (cli/git_version.cmake, refreshed at
 * every build), plus the compiler.
 */
#include <stdio.h>

#include "cmd.h"
#include "xo_git_version.h"

const char *xo_cli_git_commit(void)
{
	return XO_GIT_COMMIT;
}

void xo_cli_print_version(void)
{
	printf("xo %s (commit %s, %s %s)\n", XO_PROJECT_VERSION, XO_GIT_COMMIT,
#ifdef __clang__
	       "clang",
#else
	       "gcc",
#endif
	       __VERSION__);
}
