/*
 * test_dns.c — dns_set_servers(): the lists it refuses, and that a list it
 * takes really sends the queries there: a UDP socket of this test on
 * 127.0.0.1 (and ::1 when the host has it) plays the server, answers A
 * with 10.1.2.3 and AAAA with nothing, and the resolution must come back
 * with exactly that address and the asked port.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "net/dns.h"

struct fixture {
	struct loop	*loop;
	struct dns	*dns;
};

struct result {
	bool		done;
	char		err[64];
	size_t		n;
	char		addr[INET6_ADDRSTRLEN];
	uint16_t	port;
};

static int
setup(void **state)
{
	static struct fixture	f;

	if ((f.loop = loop_new()) == NULL || (f.dns = dns_new(f.loop)) == NULL)
		return -1;
	*state = &f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture	*f = *state;

	dns_free(f->dns);
	loop_free(f->loop);
	return 0;
}

static void
test_refused(void **state)
{
	struct fixture		*f = *state;
	static const char *const bad[] = {
		"localhost", "dns.example:53", "1.2.3.4:0", "1.2.3.4:65536",
		"1.2.3.4:", "1.2.3.4:5x", "[::1", "[::1]53", "[::1]:",
		"[127.0.0.1]:53", "256.1.1.1", "1.1.1.1,,2.2.2.2", ",1.1.1.1",
		"1.1.1.1,", "1,2,3,4,5,6,7,8,9",
		("1.1.1.1,2.2.2.2,3.3.3.3,4.4.4.4,5.5.5.5,6.6.6.6,7.7.7.7,"
		    "8.8.8.8,9.9.9.9"),
	};
	size_t			 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (dns_set_servers(f->dns, bad[i]) != -1)
			fail_msg("'%s' accepted", bad[i]);
	assert_int_equal(dns_set_servers(f->dns, NULL), 0);
	assert_int_equal(dns_set_servers(f->dns, ""), 0);
	assert_int_equal(dns_set_servers(f->dns, "1.1.1.1,2.2.2.2,3.3.3.3,"
	    "4.4.4.4,5.5.5.5,6.6.6.6,7.7.7.7,8.8.8.8"), 0);
	assert_int_equal(dns_set_servers(f->dns,
	    " 10.0.0.1 , [2001:db8::53]:1053,::1,[fe80::1],9.9.9.9:53"), 0);
}

static void
on_resolved(const struct dns_addrs *a, const char *err, void *arg)
{
	struct result	*r = arg;

	r->done = true;
	if (a == NULL) {
		snprintf(r->err, sizeof(r->err), "%s", err);
		return;
	}
	r->n = a->n;
	if (a->addr[0].ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)&a->addr[0];

		inet_ntop(AF_INET, &sin->sin_addr, r->addr, sizeof(r->addr));
		r->port = ntohs(sin->sin_port);
	}
}

/*
 * Answer one query waiting on fd: the question echoed, then for wantname
 * (in wire form) and type A one record 10.1.2.3 (TTL 5 s), for its other
 * types no record, for any other name (a search-domain try) NXDOMAIN.
 * 1 when answered, 0 when nothing was there, -1 on a malformed query.
 */
static int
serve_one(int fd, const char *wantname)
{
	uint8_t			 q[512], out[600];
	struct sockaddr_storage	 from;
	socklen_t		 fromlen = sizeof(from);
	ssize_t			 n;
	size_t			 qend = 12, rrlen = 0;
	bool			 ours;
	static const uint8_t	 rr[] = { 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 5,
	    0, 4, 10, 1, 2, 3 };

	n = recvfrom(fd, q, sizeof(q), MSG_DONTWAIT, (void *)&from, &fromlen);
	if (n < 0)
		return 0;
	while (qend < (size_t)n && q[qend] != 0)
		qend += 1 + (size_t)q[qend];
	qend += 1 + 4;			/* root label, type, class */
	if (qend > (size_t)n)
		return -1;
	ours = qend - 17 == strlen(wantname) &&
	    memcmp(q + 12, wantname, strlen(wantname)) == 0;
	memcpy(out, q, qend);
	out[2] = 0x81;			/* response, recursion desired */
	out[3] = ours ? 0x80 : 0x83;	/* recursion available; NXDOMAIN */
	memset(out + 6, 0, 6);
	if (ours && q[qend - 3] == 1) {	/* type A */
		out[7] = 1;
		memcpy(out + qend, rr, sizeof(rr));
		rrlen = sizeof(rr);
	}
	if (sendto(fd, out, qend + rrlen, 0, (void *)&from, fromlen) < 0)
		return -1;
	return ours ? 1 : 2;
}

/* A UDP socket on the loopback address of family af; -1 if none. */
static int
udp_server(int af, uint16_t *port)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len = sizeof(ss);
	int			 fd;

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = (sa_family_t)af;
	if (af == AF_INET)
		((struct sockaddr_in *)&ss)->sin_addr.s_addr =
		    htonl(INADDR_LOOPBACK);
	else
		((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_loopback;
	if ((fd = socket(af, SOCK_DGRAM, 0)) == -1)
		return -1;
	if (bind(fd, (void *)&ss, af == AF_INET ? sizeof(struct sockaddr_in) :
	    sizeof(struct sockaddr_in6)) == -1 ||
	    getsockname(fd, (void *)&ss, &len) == -1) {
		close(fd);
		return -1;
	}
	*port = ntohs(af == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
	    ((struct sockaddr_in6 *)&ss)->sin6_port);
	return fd;
}

/* Resolve stub.test through the server list servers answered on fd. */
static void
resolve_through(struct fixture *f, int fd, const char *servers)
{
	struct result	 r = { 0 };
	int		 i, answered = 0, rc;

	assert_int_equal(dns_set_servers(f->dns, servers), 0);
	assert_non_null(dns_resolve(f->dns, "stub.test", 4711, on_resolved,
	    &r));
	for (i = 0; i < 300 && !r.done; i++) {	/* up to ~3 s */
		loop_run_once(f->loop, 10);
		while ((rc = serve_one(fd, "\4stub\4test")) > 0)
			answered += rc == 1;
		assert_int_not_equal(rc, -1);
	}
	assert_true(r.done);
	assert_string_equal(r.err, "");
	assert_true(answered >= 2);		/* A and AAAA, both here */
	assert_int_equal(r.n, 1);
	assert_string_equal(r.addr, "10.1.2.3");
	assert_int_equal(r.port, 4711);
}

static void
test_queries_go_to_v4_server(void **state)
{
	char		 list[64];
	uint16_t	 port = 0;
	int		 fd = udp_server(AF_INET, &port);

	assert_int_not_equal(fd, -1);
	/* An unused first entry would only add a timeout: list ours alone. */
	snprintf(list, sizeof(list), " 127.0.0.1:%u ", port);
	resolve_through(*state, fd, list);
	close(fd);
}

static void
test_queries_go_to_v6_server(void **state)
{
	char		 list[64];
	uint16_t	 port = 0;
	int		 fd = udp_server(AF_INET6, &port);

	if (fd == -1)
		skip();		/* no ::1 on this host */
	snprintf(list, sizeof(list), "[::1]:%u", port);
	resolve_through(*state, fd, list);
	close(fd);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_refused),
		T(test_queries_go_to_v4_server),
		T(test_queries_go_to_v6_server),
	};
#undef T

	log_init(NULL, LOG_LEVEL_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
