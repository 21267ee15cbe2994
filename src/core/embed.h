/*
 * embed.h — files compiled into the binary by toolchain/cmake/embed.cmake:
 * the SQLite migrations, the web status page and the Postgres uplink DDL.
 * Tables end with a zeroed entry and are sorted by name. The data are
 * NUL-terminated (len excludes it).
 */
#ifndef CACHEBOX_CORE_EMBED_H
#define CACHEBOX_CORE_EMBED_H

#include <stddef.h>

struct embed_file {
	const char		*name;
	const unsigned char	*data;
	size_t			 len;
};

extern const struct embed_file store_migration_files[];
extern const struct embed_file ui_www_files[];
extern const struct embed_file uplink_pg_sql_files[];

#endif
