#ifndef FORMGATE_CBYTESEARCH_H
#define FORMGATE_CBYTESEARCH_H

#include <stddef.h>

/// glibc's memmem(3): first occurrence of needle in haystack, or NULL.
/// Exposed here because Swift's Glibc module hides the GNU extensions.
const void *fg_memmem(const void *haystack, size_t haystack_len, const void *needle, size_t needle_len);

/// glibc's memrchr(3): last occurrence of byte in the first n bytes of s, or NULL.
const void *fg_memrchr(const void *s, int byte, size_t n);

#endif
