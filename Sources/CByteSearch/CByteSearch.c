#define _GNU_SOURCE
#include <string.h>
#include "CByteSearch.h"

const void *fg_memmem(const void *haystack, size_t haystack_len, const void *needle, size_t needle_len) {
    return memmem(haystack, haystack_len, needle, needle_len);
}

const void *fg_find_soon(const void *haystack, size_t haystack_len, const void *needle, size_t needle_len,
                         size_t probe) {
    const unsigned char *hay = haystack;
    const unsigned char *pattern = needle;
    if (needle_len == 0) return haystack;
    if (probe > haystack_len) probe = haystack_len;
    const unsigned char *next = hay;
    const unsigned char *probed = hay + probe;
    while (next < probed) {
        const unsigned char *hit = memchr(next, pattern[0], (size_t)(probed - next));
        if (hit == NULL) break;
        /* No occurrence starts here or later when the needle no longer fits. */
        if ((size_t)(hay + haystack_len - hit) < needle_len) return NULL;
        if (memcmp(hit + 1, pattern + 1, needle_len - 1) == 0) return hit;
        next = hit + 1;
    }
    if (probe == haystack_len) return NULL;
    return memmem(probed, haystack_len - probe, needle, needle_len);
}

const void *fg_memrchr(const void *s, int byte, size_t n) {
    return memrchr(s, byte, n);
}
