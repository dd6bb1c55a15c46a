#include <stdio.h>
#include "util/foo.h"
#define MAX 10

/* Doc. */
static int add(int a, int b) {
    return a + b;
}

struct point {
    int x, y;
};

typedef struct {
    int a;
} thing_t;

enum color { RED, GREEN };

#ifdef FOO
int guarded(void) { return 1; }
#endif

int proto(int);
int *ptrfn(char **argv)
{
    return 0;
}
