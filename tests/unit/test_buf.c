/*
 * test_buf.c — every bound of struct buf: max, failed appends leaving the
 * buffer unchanged, printf that would not fit, reads and skips past the
 * end, compact and consume moving the cursor.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/buf.h"

/* The buffer holds exactly the bytes s (and a NUL after them). */
static void
assert_contents(const struct buf *b, const char *s)
{
	assert_int_equal(b->len, strlen(s));
	assert_string_equal(buf_cstr(b), s);
	assert_true(b->len <= b->cap || b->data == NULL);
	assert_true(b->len <= b->max);
	assert_true(b->pos <= b->len);
}

static void
test_init_empty(void **state)
{
	struct buf	b;

	buf_init(&b, 16);
	assert_null(b.data);
	assert_int_equal(b.max, 16);
	assert_string_equal(buf_cstr(&b), "");
	assert_int_equal(buf_avail(&b), 0);
	assert_int_equal(*buf_rptr(&b), 0);
	buf_free(&b);
	assert_null(b.data);
	assert_int_equal(b.max, 16);
}

static void
test_append_up_to_max(void **state)
{
	struct buf	b;

	buf_init(&b, 8);
	assert_int_equal(buf_append(&b, "abcd", 4), 0);
	assert_int_equal(buf_append(&b, "efgh", 4), 0);
	assert_contents(&b, "abcdefgh");
	assert_int_equal(buf_append(&b, "i", 1), -1);
	assert_int_equal(buf_putc(&b, 'i'), -1);
	assert_int_equal(buf_puts(&b, "i"), -1);
	assert_contents(&b, "abcdefgh");
	assert_int_equal(buf_append(&b, "", 0), 0);
	assert_int_equal(buf_reserve(&b, 0), 0);
	assert_int_equal(buf_reserve(&b, 1), -1);
	buf_free(&b);
}

static void
test_append_fail_leaves_unchanged(void **state)
{
	struct buf	b;

	buf_init(&b, 10);
	assert_int_equal(buf_puts(&b, "hello"), 0);
	assert_int_equal(buf_skip(&b, 2), 0);
	/* 5 + 6 > 10: nothing of it may land. */
	assert_int_equal(buf_append(&b, "world!", 6), -1);
	assert_contents(&b, "hello");
	assert_int_equal(b.pos, 2);
	/* Exactly filling it works. */
	assert_int_equal(buf_append(&b, "world", 5), 0);
	assert_contents(&b, "helloworld");
	buf_free(&b);
}

static void
test_reserve_huge(void **state)
{
	struct buf	b;

	buf_init(&b, SIZE_MAX);
	assert_int_equal(buf_puts(&b, "x"), 0);
	/* len + n would wrap around: refused, not allocated. */
	assert_int_equal(buf_reserve(&b, SIZE_MAX), -1);
	assert_contents(&b, "x");
	buf_free(&b);
}

static void
test_grow_many(void **state)
{
	struct buf	b;
	int		i;

	buf_init(&b, 1000);
	for (i = 0; i < 1000; i++)
		assert_int_equal(buf_putc(&b, 'a' + i % 26), 0);
	assert_int_equal(b.len, 1000);
	assert_true(b.cap <= 1000);
	assert_int_equal(buf_putc(&b, 'z'), -1);
	assert_int_equal(b.data[999], 'a' + 999 % 26);
	assert_int_equal(b.data[1000], '\0');
	buf_free(&b);
}

static void
test_printf(void **state)
{
	struct buf	b;

	buf_init(&b, 12);
	assert_int_equal(buf_printf(&b, "%d-%s", 42, "ab"), 0);
	assert_contents(&b, "42-ab");
	/* 5 + 8 = 13 > 12: refused whole. */
	assert_int_equal(buf_printf(&b, "%08d", 7), -1);
	assert_contents(&b, "42-ab");
	/* 5 + 7 = 12 fits exactly, NUL beyond len. */
	assert_int_equal(buf_printf(&b, "%07d", 7), 0);
	assert_contents(&b, "42-ab0000007");
	assert_int_equal(buf_printf(&b, "%s", ""), 0);
	assert_int_equal(buf_printf(&b, "x"), -1);
	assert_contents(&b, "42-ab0000007");
	buf_free(&b);
}

static void
test_printf_first_too_long(void **state)
{
	struct buf	b;

	buf_init(&b, 3);
	assert_int_equal(buf_printf(&b, "%s", "abcd"), -1);
	assert_contents(&b, "");
	assert_int_equal(buf_printf(&b, "%s", "abc"), 0);
	assert_contents(&b, "abc");
	buf_free(&b);
}

static void
test_read_skip_bounds(void **state)
{
	struct buf	b;
	char		out[8];

	buf_init(&b, 64);
	assert_int_equal(buf_puts(&b, "abcdef"), 0);
	assert_int_equal(buf_read(&b, out, 2), 0);
	assert_memory_equal(out, "ab", 2);
	assert_int_equal(buf_avail(&b), 4);
	assert_memory_equal(buf_rptr(&b), "cdef", 4);
	memset(out, 'X', sizeof(out));
	assert_int_equal(buf_read(&b, out, 5), -1);
	assert_int_equal(out[0], 'X');
	assert_int_equal(b.pos, 2);
	assert_int_equal(buf_skip(&b, 5), -1);
	assert_int_equal(b.pos, 2);
	assert_int_equal(buf_skip(&b, 4), 0);
	assert_int_equal(buf_avail(&b), 0);
	assert_int_equal(buf_skip(&b, 1), -1);
	assert_int_equal(buf_read(&b, out, 1), -1);
	assert_int_equal(buf_read(&b, out, 0), 0);
	assert_int_equal(buf_skip(&b, SIZE_MAX), -1);
	buf_free(&b);
}

static void
test_compact(void **state)
{
	struct buf	b;

	buf_init(&b, 6);
	assert_int_equal(buf_puts(&b, "abcdef"), 0);
	assert_int_equal(buf_skip(&b, 4), 0);
	assert_int_equal(buf_putc(&b, 'g'), -1);
	buf_compact(&b);
	assert_int_equal(b.pos, 0);
	assert_contents(&b, "ef");
	/* The room freed by compact can be used again. */
	assert_int_equal(buf_puts(&b, "ghij"), 0);
	assert_contents(&b, "efghij");
	buf_compact(&b);
	assert_contents(&b, "efghij");
	buf_free(&b);
}

static void
test_consume(void **state)
{
	struct buf	b;

	buf_init(&b, 16);
	assert_int_equal(buf_puts(&b, "0123456789"), 0);
	assert_int_equal(buf_skip(&b, 6), 0);
	buf_consume(&b, 4);
	assert_contents(&b, "456789");
	assert_int_equal(b.pos, 2);
	assert_memory_equal(buf_rptr(&b), "6789", 4);
	/* Consuming past pos brings pos to 0. */
	buf_consume(&b, 3);
	assert_contents(&b, "789");
	assert_int_equal(b.pos, 0);
	/* More than len is clamped to len. */
	buf_consume(&b, 99);
	assert_contents(&b, "");
	assert_int_equal(b.pos, 0);
	buf_free(&b);
}

static void
test_reset(void **state)
{
	struct buf	b;

	buf_init(&b, 4);
	assert_int_equal(buf_puts(&b, "abcd"), 0);
	assert_int_equal(buf_skip(&b, 1), 0);
	buf_reset(&b);
	assert_contents(&b, "");
	assert_int_equal(b.pos, 0);
	assert_non_null(b.data);
	assert_int_equal(buf_puts(&b, "wxyz"), 0);
	assert_contents(&b, "wxyz");
	buf_free(&b);
}

static void
test_binary_nul(void **state)
{
	struct buf	b;
	uint8_t		out[3];

	buf_init(&b, 8);
	assert_int_equal(buf_append(&b, "a\0b", 3), 0);
	assert_int_equal(b.len, 3);
	assert_int_equal(buf_read(&b, out, 3), 0);
	assert_memory_equal(out, "a\0b", 3);
	assert_int_equal(buf_putc(&b, 0x1ff), 0);
	assert_int_equal(b.data[3], 0xff);
	buf_free(&b);
}

static void
test_zero_max(void **state)
{
	struct buf	b;

	buf_init(&b, 0);
	assert_int_equal(buf_putc(&b, 'a'), -1);
	assert_int_equal(buf_printf(&b, "%s", "a"), -1);
	assert_int_equal(buf_append(&b, "", 0), 0);
	assert_string_equal(buf_cstr(&b), "");
	buf_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_empty),
		cmocka_unit_test(test_append_up_to_max),
		cmocka_unit_test(test_append_fail_leaves_unchanged),
		cmocka_unit_test(test_reserve_huge),
		cmocka_unit_test(test_grow_many),
		cmocka_unit_test(test_printf),
		cmocka_unit_test(test_printf_first_too_long),
		cmocka_unit_test(test_read_skip_bounds),
		cmocka_unit_test(test_compact),
		cmocka_unit_test(test_consume),
		cmocka_unit_test(test_reset),
		cmocka_unit_test(test_binary_nul),
		cmocka_unit_test(test_zero_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
