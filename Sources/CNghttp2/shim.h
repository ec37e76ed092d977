#ifndef FORMGATE_CNGHTTP2_SHIM_H
#define FORMGATE_CNGHTTP2_SHIM_H
// Debian 12's libnghttp2 1.52 (with the rapid-reset and CONTINUATION backports): the
// `nghttp2_session_mem_recv2` and `*2` callback API of 1.61 is not there.
#include <nghttp2/nghttp2.h>
#endif
