/*
 * cmd_data.h — the commands of the relay endpoint and of the ways data
 * leaves and enters the box: the connected relay clients, import (a
 * command, and the control socket's streaming form of it that cacheboxctl
 * import uses), and the online backup, to a file or for the page's
 * download (ui/download.h). Export needs no command: cacheboxctl
 * reads the database itself (store_open_readonly).
 */
#ifndef CACHEBOX_UI_CMD_DATA_H
#define CACHEBOX_UI_CMD_DATA_H

#include <cjson/cJSON.h>

#include "ui/commands.h"

struct app;
struct ctlsock_stream;

cJSON	*cmd_clients(struct app *, const cJSON *args, enum cmd_origin);
cJSON	*cmd_import(struct app *, const cJSON *args, enum cmd_origin);
cJSON	*cmd_backup(struct app *, const cJSON *args, enum cmd_origin);
cJSON	*cmd_backup_status(struct app *, const cJSON *args, enum cmd_origin);
/*
 * Begin a copy for download: the backup's state (backup status) with
 * "download", the path with the one-time ticket that fetches the copy
 * once it is done (GET DOWNLOAD_API_PATH?ticket=...).
 */
cJSON	*cmd_backup_download(struct app *, const cJSON *args, enum cmd_origin);

/* The control socket's streaming commands (import), for app. */
void	 cmd_data_stream_ops(struct app *, struct ctlsock_stream *ops);

#endif
