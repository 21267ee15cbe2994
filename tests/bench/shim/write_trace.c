/*
 * write_trace.c — an LD_PRELOAD library for tests/bench/write_ratio.sh:
 * counts every byte a process hands to write(2) and pwrite64(2), by file,
 * and for a SQLite database by page, so a bench can say which table or
 * index the bytes were written for. It changes nothing it intercepts:
 * each call goes on to the C library's function unchanged.
 *
 * What it knows of SQLite's files (WAL mode, the unix VFS, which writes a
 * WAL frame as two calls: the 24-byte frame header, then the page):
 *   NAME-wal  a 24-byte write is a frame header: its first 4 bytes are the
 *             page number (big-endian), bytes 4..7 the database size after
 *             a commit (non-zero only in a transaction's last frame); the
 *             page write that follows is charged to that page number.
 *             A 32-byte write at offset 0 is the WAL header.
 *   NAME      (the database, opened as *.db) a checkpoint writes whole
 *             pages: offset / length + 1 is the page number.
 * Anything else (the log, a port file, a key file) is counted by path.
 * The -shm file is mmap()ed by SQLite and never written through write():
 * its dirty pages appear only in /proc's write_bytes.
 *
 * At exit (a destructor, after the program closed its database, i.e. after
 * the close's checkpoint) it appends to $WRITE_TRACE_OUT (a child run with
 * the same environment, as cacheboxd's checkpoint process, appends its
 * own lines, which a reader adds up):
 *   io KEY VALUE                 the process's /proc/self/io at that moment
 *   wal_commits N                transactions committed into the WAL
 *   wal_header BYTES             WAL headers written (one per WAL restart)
 *   wal PAGE BYTES FRAMES        per page, frame headers included
 *   frames PAGE[+] ...           every WAL frame in order, "+" marking a
 *                                transaction's last (its commit)
 *   db PAGE BYTES WRITES         per page, checkpoint writes
 *   file PATH BYTES              everything else
 *   fsync PATH N                 fsync/fdatasync calls per file
 * Single-threaded use is assumed (cacheboxd has one thread).
 */
#define _GNU_SOURCE
/* It defines pwrite and pwrite64 both: neither may be renamed to the other. */
#undef _FILE_OFFSET_BITS

#include <sys/types.h>
#include <sys/uio.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WT_FDS		1024	/* descriptors whose file is remembered */
#define WT_FILES	64	/* distinct other files counted */
#define WT_PATH		512	/* bytes of a path */
#define WAL_FRAME_HDR	24
#define WAL_HDR		32

enum wt_kind { WT_UNKNOWN, WT_DB, WT_WAL, WT_OTHER };

struct wt_fd {
	enum wt_kind	 kind;
	int		 file;		/* index in files[] */
	uint32_t	 frame_pgno;	/* WAL: page of the last frame header */
	off_t		 frame_off;	/* WAL: where its page goes */
};

struct wt_file {
	char		 path[WT_PATH];
	uint64_t	 bytes;
	uint64_t	 fsyncs;
};

struct wt_pages {
	uint64_t	*bytes;
	uint64_t	*count;
	size_t		 n;
};

static struct wt_fd	 fds[WT_FDS];
static struct wt_file	 files[WT_FILES];
static int		 nfiles;
static struct wt_pages	 wal_pages, db_pages;
static uint64_t		 wal_commits, wal_header;
static uint32_t		*frame_log;	/* page << 1 | commit, in order */
static size_t		 frame_n, frame_cap;

static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off64_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static int (*real_close)(int);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);

static void
wt_resolve(void)
{
	if (real_write != NULL)
		return;
	real_write = (ssize_t (*)(int, const void *, size_t))
	    dlsym(RTLD_NEXT, "write");
	real_pwrite64 = (ssize_t (*)(int, const void *, size_t, off64_t))
	    dlsym(RTLD_NEXT, "pwrite64");
	real_writev = (ssize_t (*)(int, const struct iovec *, int))
	    dlsym(RTLD_NEXT, "writev");
	real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
}

static int
wt_file_index(const char *path)
{
	int	i;

	for (i = 0; i < nfiles; i++)
		if (strcmp(files[i].path, path) == 0)
			return i;
	if (nfiles == WT_FILES)
		return WT_FILES - 1;	/* the last slot takes the rest */
	snprintf(files[nfiles].path, sizeof(files[nfiles].path), "%s", path);
	return nfiles++;
}

static int
wt_ends(const char *s, const char *suffix)
{
	size_t	ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

/* What fd is: a regular file's path decides; sockets and pipes are not counted. */
static struct wt_fd *
wt_fd(int fd)
{
	char		 link[64], path[WT_PATH];
	ssize_t		 n;
	struct wt_fd	*f;

	if (fd < 0 || fd >= WT_FDS)
		return NULL;
	f = &fds[fd];
	if (f->kind != WT_UNKNOWN)
		return f;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if ((n = readlink(link, path, sizeof(path) - 1)) <= 0)
		return NULL;
	path[n] = '\0';
	if (path[0] != '/')
		return NULL;	/* socket:[..], pipe:[..], anon_inode */
	f->kind = wt_ends(path, "-wal") ? WT_WAL : wt_ends(path, ".db") ?
	    WT_DB : WT_OTHER;
	f->file = wt_file_index(path);
	return f;
}

static void
wt_page_add(struct wt_pages *p, uint32_t pgno, uint64_t bytes)
{
	size_t	 n;

	if (pgno >= p->n) {
		n = p->n ? p->n : 1024;
		while (n <= pgno)
			n *= 2;
		p->bytes = realloc(p->bytes, n * sizeof(*p->bytes));
		p->count = realloc(p->count, n * sizeof(*p->count));
		if (p->bytes == NULL || p->count == NULL)
			abort();
		memset(p->bytes + p->n, 0, (n - p->n) * sizeof(*p->bytes));
		memset(p->count + p->n, 0, (n - p->n) * sizeof(*p->count));
		p->n = n;
	}
	p->bytes[pgno] += bytes;
	p->count[pgno]++;
}

static void
wt_frame_log(uint32_t pgno, int commit)
{
	if (frame_n == frame_cap) {
		frame_cap = frame_cap ? 2 * frame_cap : 4096;
		if ((frame_log = realloc(frame_log, frame_cap *
		    sizeof(*frame_log))) == NULL)
			abort();
	}
	frame_log[frame_n++] = pgno << 1 | (commit ? 1 : 0);
}

static void
wt_note(int fd, const void *buf, size_t len, off64_t off, int positioned)
{
	struct wt_fd		*f;
	const unsigned char	*b = buf;
	uint32_t		 pgno, commit;

	if ((f = wt_fd(fd)) == NULL)
		return;
	files[f->file].bytes += len;
	if (f->kind == WT_WAL && positioned) {
		if (off == 0 && len == WAL_HDR) {
			wal_header += len;
			return;
		}
		if (len == WAL_FRAME_HDR) {
			pgno = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
			    (uint32_t)b[2] << 8 | b[3];
			commit = (uint32_t)b[4] << 24 | (uint32_t)b[5] << 16 |
			    (uint32_t)b[6] << 8 | b[7];
			if (commit != 0)
				wal_commits++;
			wt_frame_log(pgno, commit != 0);
			f->frame_pgno = pgno;
			f->frame_off = off + WAL_FRAME_HDR;
			wt_page_add(&wal_pages, pgno, len);
			return;
		}
		if (off == f->frame_off && f->frame_pgno != 0) {
			wal_pages.bytes[f->frame_pgno] += len;
			f->frame_pgno = 0;
			return;
		}
		wt_page_add(&wal_pages, 0, len);	/* unexpected: page 0 */
	} else if (f->kind == WT_DB && positioned && len >= 512 &&
	    (len & (len - 1)) == 0 && off % (off64_t)len == 0)
		wt_page_add(&db_pages, (uint32_t)(off / (off64_t)len + 1), len);
	else if (f->kind == WT_DB)
		wt_page_add(&db_pages, 0, len);
}

ssize_t
write(int fd, const void *buf, size_t len)
{
	ssize_t	n;

	wt_resolve();
	if ((n = real_write(fd, buf, len)) > 0)
		wt_note(fd, buf, (size_t)n, 0, 0);
	return n;
}

ssize_t
writev(int fd, const struct iovec *iov, int cnt)
{
	ssize_t	n;

	wt_resolve();
	if ((n = real_writev(fd, iov, cnt)) > 0)
		wt_note(fd, NULL, (size_t)n, 0, 0);
	return n;
}

ssize_t
pwrite64(int fd, const void *buf, size_t len, off64_t off)
{
	ssize_t	n;

	wt_resolve();
	if ((n = real_pwrite64(fd, buf, len, off)) > 0)
		wt_note(fd, buf, (size_t)n, off, 1);
	return n;
}

ssize_t
pwrite(int fd, const void *buf, size_t len, off_t off)
{
	return pwrite64(fd, buf, len, off);
}

int
close(int fd)
{
	wt_resolve();
	if (fd >= 0 && fd < WT_FDS)
		memset(&fds[fd], 0, sizeof(fds[fd]));
	return real_close(fd);
}

static void
wt_sync(int fd)
{
	struct wt_fd	*f;

	if ((f = wt_fd(fd)) != NULL)
		files[f->file].fsyncs++;
}

int
fsync(int fd)
{
	wt_resolve();
	wt_sync(fd);
	return real_fsync(fd);
}

int
fdatasync(int fd)
{
	wt_resolve();
	wt_sync(fd);
	return real_fdatasync(fd);
}

static void
wt_dump_pages(FILE *out, const char *name, const struct wt_pages *p)
{
	size_t	i;

	for (i = 0; i < p->n; i++)
		if (p->count[i] != 0)
			fprintf(out, "%s %zu %llu %llu\n", name, i,
			    (unsigned long long)p->bytes[i],
			    (unsigned long long)p->count[i]);
}

__attribute__((destructor)) static void
wt_dump(void)
{
	const char	*path = getenv("WRITE_TRACE_OUT");
	char		 line[256];
	FILE		*io, *out;
	int		 i;

	if (path == NULL || (out = fopen(path, "a")) == NULL)
		return;
	if ((io = fopen("/proc/self/io", "r")) != NULL) {
		while (fgets(line, sizeof(line), io) != NULL) {
			char		key[64];
			unsigned long long v;

			if (sscanf(line, "%63[^:]: %llu", key, &v) == 2)
				fprintf(out, "io %s %llu\n", key, v);
		}
		fclose(io);
	}
	fprintf(out, "wal_commits %llu\nwal_header %llu\n",
	    (unsigned long long)wal_commits, (unsigned long long)wal_header);
	wt_dump_pages(out, "wal", &wal_pages);
	wt_dump_pages(out, "db", &db_pages);
	fputs("frames", out);
	for (size_t k = 0; k < frame_n; k++)
		fprintf(out, " %u%s", frame_log[k] >> 1,
		    frame_log[k] & 1 ? "+" : "");
	fputs("\n", out);
	for (i = 0; i < nfiles; i++) {
		fprintf(out, "file %s %llu\n", files[i].path,
		    (unsigned long long)files[i].bytes);
		if (files[i].fsyncs != 0)
			fprintf(out, "fsync %s %llu\n", files[i].path,
			    (unsigned long long)files[i].fsyncs);
	}
	fclose(out);
}
