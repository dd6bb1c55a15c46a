#ifndef UTIL_GUARD_H
#define UTIL_GUARD_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sum of n values. */
int sum(const int *v, size_t n);

typedef struct buffer {
    char *data;
    size_t len;
} buffer_t;

static inline size_t buffer_len(const buffer_t *b) {
    return b->len;
}

#ifdef __cplusplus
}
#endif

#endif
