/*
 * procio.h — what the kernel says a process wrote to storage, for the
 * write budget of the status document and the checkpoint process's reply.
 */
#ifndef CACHEBOX_CORE_PROCIO_H
#define CACHEBOX_CORE_PROCIO_H

#include <stdint.h>

/*
 * Bytes the process path describes (a /proc/PID/io) caused to be written
 * to storage: write_bytes less cancelled_write_bytes (dirty pages dropped
 * before they reached the disk, as a truncated file's). -1 when the file
 * is absent or has no write_bytes line (a kernel built without task I/O
 * accounting).
 */
int64_t	procio_write_bytes(const char *path);

#endif
