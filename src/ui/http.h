/*
 * http.h — the status page, the JSON API and /metrics over HTTP, served by
 * libmicrohttpd on the daemon's loop (no thread of its own).
 *
 *	GET  /, /<asset>		the status page (src/ui/www, embedded)
 *	GET  /api/<command path>	a read command; arguments in the query
 *	POST /api/<command path>	a mutating command; a JSON object body
 *					and Authorization: Bearer <admin.token>
 *	POST /api/setup			the first run: {"code", "token"} sets the
 *					admin token while none is set, with the
 *					setup code shown at the box (firstrun.h)
 *	GET  /api/backup/file?ticket=T	the copy `backup download` made, once,
 *					for the holder of its ticket (download.h)
 *	GET  /metrics			Prometheus text, built from the status
 */
#ifndef CACHEBOX_UI_HTTP_H
#define CACHEBOX_UI_HTTP_H

#include <stddef.h>
#include <stdint.h>

struct app;
struct http;

/*
 * Listen on listen ("host:port" or "[v6]:port"; port 0 picks a free one)
 * and serve from app->loop. The port in use is logged and written to
 * DIR/http.port (DIR is app->state_dir). The server adds an "http"
 * section to the status: the address it listens on, connections open,
 * and what the front door and the deadlines refused. NULL with a message
 * in err.
 */
struct http	*http_start(struct app *, const char *listen, char *err,
		    size_t errlen);
/* Stop listening, close every connection, remove DIR/http.port. NULL is fine. */
void		 http_free(struct http *);
/* The port listened on. */
uint16_t	 http_port(const struct http *);


#endif
