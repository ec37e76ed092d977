#define _GNU_SOURCE
#include <string.h>
#include "CByteSearch.h"

const void *fg_memmem(const void *haystack, size_t haystack_len, const void *needle, size_t needle_len) {
    return memmem(haystack, haystack_len, needle, needle_len);
}

const void *fg_memrchr(const void *s, int byte, size_t n) {
    return memrchr(s, byte, n);
}
