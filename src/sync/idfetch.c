/*
 * idfetch.c — the pace of an exact-id fetch on one relay (idfetch.h): the
 * size of one REQ and what its answer settles. No state, no I/O;
 * test_idfetch.c holds it to every rule.
 */
#include "sync/idfetch.h"

size_t
idfetch_chunk(size_t left, size_t most, int64_t cap, int64_t max_limit)
{
	size_t	n = left < most ? left : most;

	if (cap > 0 && (uint64_t)cap < n)
		n = (size_t)cap;
	if (max_limit > 0 && (uint64_t)max_limit < n)
		n = (size_t)max_limit;
	return n == 0 && left > 0 ? 1 : n;
}

enum idfetch_end
idfetch_settle(size_t asked, size_t arrived, bool eose, int64_t *cap)
{
	if (!eose)
		return arrived >= asked ? IDFETCH_SETTLED : IDFETCH_FAILED;
	/*
	 * One answer of arrived events: the relay's cap is at least that.
	 * All asked came: that proves no cap, and learning it would only
	 * shrink the next REQs.
	 */
	if (arrived > 0 && (int64_t)arrived > *cap &&
	    (*cap > 0 || arrived < asked))
		*cap = (int64_t)arrived;
	if (arrived >= asked || arrived == 0)
		return IDFETCH_SETTLED;
	/* Short but not empty: a cap unless below the one proven. */
	return (int64_t)arrived >= *cap ? IDFETCH_CAPPED : IDFETCH_SETTLED;
}
