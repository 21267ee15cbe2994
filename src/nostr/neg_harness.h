/*
 * neg_harness.h — the negentropy reference implementations' conformance
 * line protocol, so that the C codec can be driven by the same test
 * drivers as theirs (`cacheboxctl negentropy harness`).
 *
 * Input, one command per line (blank lines ignored):
 *   item,<created_at>,<64 hex digits>   add one item to the set
 *   seal                                 sort the set; no items after it
 *   initiate                             become the initiator, send the first message
 *   msg,<hex>                            reconcile a message from the peer
 * A process that receives msg without having initiated is the responder.
 * Output, one line each:
 *   have,<id>   need,<id>   (initiator: ids only this side / the peer has)
 *   msg,<hex>               (the message to relay to the peer)
 *   done                    (initiator: reconciliation complete)
 * Output is flushed after every msg and done line, so a driver can read
 * them as they come. The first bad line or refused message ends the run.
 */
#ifndef CACHEBOX_NOSTR_NEG_HARNESS_H
#define CACHEBOX_NOSTR_NEG_HARNESS_H

#include <stddef.h>
#include <stdio.h>

/*
 * Speak the protocol on in/out with the given frame-size limit (bytes,
 * 0 = none) until in ends. Returns 0 at the end of input, or 1 after the
 * first error, which is described on err ("line N: reason").
 */
int	neg_harness_run(FILE *in, FILE *out, FILE *err, size_t frame_limit);

#endif
