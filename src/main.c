/* cacheboxd — placeholder until the foundation lands. */
#include <stdio.h>

int
main(void)
{
	printf("cacheboxd %s\n", CACHEBOX_VERSION);
	return 0;
}
