/*
 * devices.c - `xo devices [--json]`: every backend compiled in, and whether
 * it opens here, with its description (device, driver, versions).
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "xo.h"

int xo_cmd_devices(int argc, char **argv)
{
	bool json = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "--help")) {
			printf("usage: xo devices [--json]\n");
			return 0;
		} else
			return xo_usage_error("devices", "unknown option '%s'", argv[i]);
	}
	if (json)
		printf("[");
	for (int i = 0; i < xo_backend_count(); i++) {
		const char *kind = xo_backend_kind(i);
		struct xo_backend *be = NULL;
		enum xo_status st = xo_backend_open(kind, &be);
		const char *what = st ? xo_last_error() : xo_backend_describe(be);

		if (json) {
			printf("%s{\"device\":", i ? "," : "");
			xo_cli_json_string(kind);
			printf(",\"available\":%s,\"description\":", st ? "false" : "true");
			xo_cli_json_string(what);
			printf("}");
		} else {
			printf("%-4s %-11s %s\n", kind, st ? "unavailable" : "available", what);
		}
		xo_backend_close(be);
	}
	if (json)
		printf("]\n");
	return 0;
}
