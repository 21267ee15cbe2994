/*
 * idfetch.h — the pace of an exact-id fetch (a REQ naming event ids) on
 * one relay, as pure functions: how many ids one REQ asks, and what the
 * answer settles.
 *
 * A relay answers a REQ with at most its page size, whatever the filter:
 * a silent cap of 137 answers 137 of 163 ids asked and then EOSE. That is
 * not a failure: the ids it did not reach are asked again at once, and
 * the relay's cap is learned from the answer (it sent that many in one
 * answer, so it sends at least that many), so later REQs ask at most that
 * many. Only ids a relay was asked within its cap and did not send are
 * missing (they go to recovery, with its backoff).
 */
#ifndef CACHEBOX_SYNC_IDFETCH_H
#define CACHEBOX_SYNC_IDFETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Ids to ask in the next REQ when `left` are still to ask: at most most,
 * at most the relay's learned cap (0: none learnt yet) and its NIP-11
 * max_limit (0: none advertised). At least 1 when left > 0.
 */
size_t		 idfetch_chunk(size_t left, size_t most, int64_t cap,
		    int64_t max_limit);

enum idfetch_end {
	IDFETCH_SETTLED = 0,	/* every asked id came, or the rest are
				 * missing: the relay sent all it has */
	IDFETCH_CAPPED,		/* the relay stopped at its cap: ask the
				 * rest again at once */
	IDFETCH_FAILED,		/* no EOSE (closed, timed out): the rest
				 * are missing */
};

/*
 * A REQ that asked `asked` ids ended (eose: with EOSE) with `arrived` of
 * them stored. *cap is the relay's learned cap (0: none); an answer with
 * EOSE raises it to arrived when that is larger and the answer was short
 * (or a cap was known already). CAPPED when the answer
 * stopped short at or above the cap (or some came and no cap is known):
 * the ids not sent were never reached. SETTLED when all came, or the
 * answer was below the cap (or empty): the ids not sent are missing.
 */
enum idfetch_end idfetch_settle(size_t asked, size_t arrived, bool eose,
		    int64_t *cap);

#endif
