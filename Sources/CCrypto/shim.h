#ifndef FORMGATE_CCRYPTO_SHIM_H
#define FORMGATE_CCRYPTO_SHIM_H


#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <string.h>

/// SSL_set_tlsext_host_name is a macro: sets the SNI name. Returns 1 on success.
static inline int fg_ssl_set_sni(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/// SSL_CTX_set_min_proto_version is a macro. Returns 1 on success.
static inline int fg_ssl_ctx_min_tls12(SSL_CTX *ctx) {
    return (int)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
}

/// SSL_CTX_set_min_proto_version with a version (TLS1_2_VERSION, TLS1_3_VERSION). Returns 1 on
/// success.
static inline int fg_ssl_ctx_min_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

/// SSL_OP_NO_RENEGOTIATION is a composed macro: refuses renegotiation on the context.
static inline void fg_ssl_ctx_no_renegotiation(SSL_CTX *ctx) {
    (void)SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
}

/// The SNI callback as a function pointer type Swift can name.
typedef int (*fg_servername_cb)(SSL *ssl, int *alert, void *arg);

/// SSL_CTX_set_tlsext_servername_callback and its argument are macros. Returns 1 on success.
static inline int fg_ssl_ctx_set_servername_cb(SSL_CTX *ctx, fg_servername_cb callback, void *arg) {
    if (SSL_CTX_set_tlsext_servername_callback(ctx, callback) != 1) return 0;
    return (int)SSL_CTX_set_tlsext_servername_arg(ctx, arg);
}

/// SSL_CTX_set_session_cache_mode is a macro: the server-side session cache on, with at most
/// `size` sessions.
static inline void fg_ssl_ctx_server_session_cache(SSL_CTX *ctx, long size) {
    (void)SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
    (void)SSL_CTX_sess_set_cache_size(ctx, size);
}

/// SSL_session_reused is a macro in older headers. 1 when the handshake resumed a session.
static inline int fg_ssl_session_reused(SSL *ssl) {
    return (int)SSL_session_reused(ssl);
}

/// The certificate's subjectAltName dNSName entries (sk_GENERAL_NAME_* are macros): copies the
/// `index`th into `out` (NUL-terminated, at most `capacity` bytes with the NUL) and returns its
/// length; -1 past the last entry, -2 for an entry that does not fit or holds a NUL.
static inline int fg_x509_dns_name(X509 *cert, int index, char *out, int capacity) {
    GENERAL_NAMES *names = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
    if (names == NULL) return -1;
    int seen = 0, result = -1;
    for (int i = 0; i < sk_GENERAL_NAME_num(names); i++) {
        const GENERAL_NAME *name = sk_GENERAL_NAME_value(names, i);
        if (name->type != GEN_DNS) continue;
        if (seen++ != index) continue;
        int length = ASN1_STRING_length(name->d.dNSName);
        const unsigned char *bytes = ASN1_STRING_get0_data(name->d.dNSName);
        if (length + 1 > capacity || memchr(bytes, 0, (size_t)length) != NULL) {
            result = -2;
        } else {
            memcpy(out, bytes, (size_t)length);
            out[length] = 0;
            result = length;
        }
        break;
    }
    GENERAL_NAMES_free(names);
    return result;
}

#endif
