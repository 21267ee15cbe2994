/* cacheboxctl — placeholder until the foundation lands. */
#include <stdio.h>

int
main(void)
{
	printf("cacheboxctl %s\n", CACHEBOX_VERSION);
	return 0;
}
