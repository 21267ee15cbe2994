/*
 * key.c — owns the box key file (DIR/box.key) and key files given to
 * cacheboxctl. It must never write a secret anywhere but the key file,
 * never log one, and never load a file group or others could read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/hex.h"
#include "nostr/key.h"
#include "nostr/secp.h"

/* 64 hex digits and a newline: the whole file. */
#define KEY_FILE_BYTES	65

int
key_from_secret(struct nostr_key *key, const uint8_t seckey[32])
{
	const secp256k1_context	*ctx;
	secp256k1_xonly_pubkey	 xpk;

	if ((ctx = nostr_secp()) == NULL)
		return -1;
	if (!secp256k1_keypair_create(ctx, &key->keypair, seckey))
		return -1;
	if (!secp256k1_keypair_xonly_pub(ctx, &xpk, NULL, &key->keypair) ||
	    !secp256k1_xonly_pubkey_serialize(ctx, key->pubkey, &xpk)) {
		key_clear(key);
		return -1;
	}
	memcpy(key->seckey, seckey, sizeof(key->seckey));
	return 0;
}

void
key_clear(struct nostr_key *key)
{
	/* volatile so the wipe is not optimised away before free/exit. */
	volatile uint8_t	*p = (volatile uint8_t *)key;
	size_t			 i;

	for (i = 0; i < sizeof(*key); i++)
		p[i] = 0;
}

/* Read the whole (small) file behind fd into text; its length, or -1. */
static ssize_t
key_read_all(int fd, char *text, size_t size)
{
	size_t	 got = 0;
	ssize_t	 r;

	while (got < size) {
		r = read(fd, text + got, size - got);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* Check mode and content of the open key file fd; fill key. */
static int
key_load_fd(int fd, const char *path, struct nostr_key *key, char *err,
    size_t errlen)
{
	struct stat	st;
	char		text[KEY_FILE_BYTES + 2];
	uint8_t		sk[32];
	ssize_t		n;
	int		rc;

	if (fstat(fd, &st) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		return -1;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		snprintf(err, errlen, "%s: mode %03o lets group or others "
		    "access the secret key; run chmod 600 %s",
		    path, (unsigned)(st.st_mode & 0777), path);
		return -1;
	}
	if ((n = key_read_all(fd, text, sizeof(text))) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!((n == 64) || (n == KEY_FILE_BYTES && text[64] == '\n')) ||
	    hex_decode(text, 64, sk, sizeof(sk)) == -1) {
		snprintf(err, errlen, "%s: expected 64 lowercase hex digits "
		    "and a newline", path);
		return -1;
	}
	rc = key_from_secret(key, sk);
	memset(text, 0, sizeof(text));
	memset(sk, 0, sizeof(sk));
	if (rc == -1)
		snprintf(err, errlen, "%s: not a valid secp256k1 secret key",
		    path);
	return rc;
}

int
key_load_file(const char *path, struct nostr_key *key, char *err,
    size_t errlen)
{
	int	fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	rc = key_load_fd(fd, path, key, err, errlen);
	close(fd);
	return rc;
}

/* Write all of text to fd. 0, or -1 (errno set). */
static int
key_write_all(int fd, const char *text, size_t len)
{
	ssize_t	r;

	while (len > 0) {
		r = write(fd, text, len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			return -1;
		text += r;
		len -= (size_t)r;
	}
	return 0;
}

/* fsync the directory so a rename into it survives power loss. */
static int
key_sync_dir(const char *dir)
{
	int	fd, rc;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/* Draw a fresh valid secret key. 0, or -1. */
static int
key_generate(struct nostr_key *key)
{
	uint8_t	sk[32];
	int	tries;

	/* A random 256-bit value is invalid with probability ~2^-128. */
	for (tries = 0; tries < 8; tries++) {
		if (nostr_random(sk, sizeof(sk)) == -1)
			return -1;
		if (key_from_secret(key, sk) == 0) {
			memset(sk, 0, sizeof(sk));
			return 0;
		}
	}
	return -1;
}

/*
 * Write key to path via tmp. The sequence matters on an SD card that can
 * lose power at any moment: a half-written box.key would be refused at the
 * next start (bad content) and the box would have no identity. So the
 * secret goes to a temporary file first, which is fsynced before it is
 * renamed over the final name (rename is atomic: after a crash the name
 * holds either nothing or the whole key), and the directory is fsynced so
 * the rename itself is on disk before we start signing with the key.
 */
static int
key_write_new(const char *dir, const char *path, const char *tmp,
    const struct nostr_key *key, char *err, size_t errlen)
{
	char	text[KEY_FILE_BYTES + 1];
	int	fd;

	(void)hex_encode(key->seckey, sizeof(key->seckey), text, sizeof(text));
	text[64] = '\n';
	/* A temporary file left by a crash is garbage: start afresh. */
	if (unlink(tmp) == -1 && errno != ENOENT) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (fd == -1) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	if (key_write_all(fd, text, KEY_FILE_BYTES) == -1 || fsync(fd) == -1) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		memset(text, 0, sizeof(text));
		close(fd);
		unlink(tmp);
		return -1;
	}
	memset(text, 0, sizeof(text));
	close(fd);
	if (rename(tmp, path) == -1) {
		snprintf(err, errlen, "rename %s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	if (key_sync_dir(dir) == -1) {
		snprintf(err, errlen, "fsync %s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

int
key_load_or_create(const char *dir, struct nostr_key *key, char *err,
    size_t errlen)
{
	char	path[4096], tmp[4096 + 32];
	int	n;

	n = snprintf(path, sizeof(path), "%s/%s", dir, KEY_FILE_NAME);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		snprintf(err, errlen, "%s: path too long", dir);
		return -1;
	}
	if (access(path, F_OK) == 0 || errno != ENOENT)
		return key_load_file(path, key, err, errlen);
	(void)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	if (key_generate(key) == -1) {
		snprintf(err, errlen, "cannot generate a key: %s",
		    strerror(errno));
		return -1;
	}
	if (key_write_new(dir, path, tmp, key, err, errlen) == -1) {
		key_clear(key);
		return -1;
	}
	return 0;
}
