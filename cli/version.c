/*
 * version.c - `xo --version`: the project version (CMakeLists.txt) and the
 * git commit the binary was built from (cli/git_version.cmake, refreshed at
 * every build), plus the compiler. The same commit is handed to perfdb at
 * start: the runs this binary records belong to it.
 */
#include <stdio.h>

#include "cmd.h"
#include "perfdb.h"
#include "xo_git_version.h"

void xo_cli_build_commit_register(void)
{
	xo_perf_build_commit_set(XO_GIT_SHA, XO_GIT_DIRTY_HASH);
}

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
