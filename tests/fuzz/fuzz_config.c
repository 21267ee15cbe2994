/*
 * fuzz_config.c — the configuration surface a user (or a file on the SD
 * card) reaches: the bytes as a whole "key = value" file read by
 * config_load_file, as every line given to config_set_arg (--set), and
 * as a value checked by the validator of every key in the table. A value
 * that validates must be stored, and must read back.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "core/config.h"
#include "core/limits.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static char	fuzz_path[64];

static void
fuzz_cleanup(void)
{
	if (fuzz_path[0] != '\0')
		unlink(fuzz_path);
}

static void
fuzz_file(struct config *cfg, const uint8_t *data, size_t size)
{
	FILE	*fp;
	char	 err[512];

	if (fuzz_path[0] == '\0') {
		int fd;

		snprintf(fuzz_path, sizeof(fuzz_path), "/tmp/fuzz_config.XXXXXX");
		if ((fd = mkstemp(fuzz_path)) == -1)
			abort();
		close(fd);
		atexit(fuzz_cleanup);
	}
	if ((fp = fopen(fuzz_path, "wb")) == NULL)
		abort();
	if (size > 0 && fwrite(data, 1, size, fp) != size)
		abort();
	if (fclose(fp) != 0)
		abort();
	(void)config_load_file(cfg, fuzz_path, err, sizeof(err));
}

static void
fuzz_values(struct config *cfg, const char *s)
{
	const struct cfg_def	*d;
	char			 err[512];

	for (d = config_table(); d->name != NULL; d++) {
		if (config_validate(d->name, s, err, sizeof(err)) != 0)
			continue;
		if (config_set(cfg, d->name, s, CFG_SRC_CLI, err,
		    sizeof(err)) != 0)
			abort();	/* validated, then refused */
		if (config_get(cfg, d->name) == NULL)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config	*cfg;
	char		*s, *line, *save = NULL;
	char		 err[512];

	if ((cfg = config_new()) == NULL)
		return 0;
	fuzz_file(cfg, data, size);
	if ((s = malloc(size + 1)) != NULL) {
		memcpy(s, data, size);
		s[size] = '\0';
		fuzz_values(cfg, s);
		for (line = strtok_r(s, "\n", &save); line != NULL;
		    line = strtok_r(NULL, "\n", &save))
			(void)config_set_arg(cfg, line, err, sizeof(err));
		free(s);
	}
	config_free(cfg);
	return 0;
}
