/*
 * queue.h — <sys/queue.h> and the one macro glibc's copy lacks:
 * TAILQ_FOREACH_SAFE, a walk that may remove (and free) the element it
 * stands on. Include this instead of <sys/queue.h>.
 */
#ifndef CACHEBOX_CORE_QUEUE_H
#define CACHEBOX_CORE_QUEUE_H

#include <sys/queue.h>

#ifndef TAILQ_FOREACH_SAFE
#define TAILQ_FOREACH_SAFE(var, head, field, tvar)			\
	for ((var) = TAILQ_FIRST(head);					\
	    (var) != NULL && ((tvar) = TAILQ_NEXT(var, field), 1);	\
	    (var) = (tvar))
#endif

#endif
