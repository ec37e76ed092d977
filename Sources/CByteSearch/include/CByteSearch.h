#ifndef FORMGATE_CBYTESEARCH_H
#define FORMGATE_CBYTESEARCH_H

#include <stddef.h>

/// glibc's memmem(3): first occurrence of needle in haystack, or NULL.
/// Exposed here because Swift's Glibc module hides the GNU extensions.
const void *fg_memmem(const void *haystack, size_t haystack_len, const void *needle, size_t needle_len);

/// The first occurrence of needle in haystack, or NULL, as memmem(3) finds it, for a search
/// that usually ends soon (the delimiter after a small part): the first `probe` candidate
/// starts are found with memchr(3) on the needle's first byte and compared in place, and only
/// the rest of the haystack goes to memmem(3), whose set-up for a long needle costs more than
/// a short part's whole scan.
const void *fg_find_soon(const void *haystack, size_t haystack_len, const void *needle, size_t needle_len,
                         size_t probe);

/// glibc's memrchr(3): last occurrence of byte in the first n bytes of s, or NULL.
const void *fg_memrchr(const void *s, int byte, size_t n);

#endif
