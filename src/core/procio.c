/*
 * procio.c — bytes written to storage, from /proc/PID/io (see procio.h).
 */
#include <stdio.h>

#include "core/procio.h"

int64_t
procio_write_bytes(const char *path)
{
	FILE		*f;
	char		 line[128];
	long long	 v, written = -1, cancelled = 0;

	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "write_bytes: %lld", &v) == 1)
			written = v;
		else if (sscanf(line, "cancelled_write_bytes: %lld", &v) == 1)
			cancelled = v;
	}
	fclose(f);
	if (written < 0)
		return -1;
	return written > cancelled ? (int64_t)(written - cancelled) : 0;
}
