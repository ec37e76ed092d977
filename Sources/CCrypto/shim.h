#ifndef FORMGATE_CCRYPTO_SHIM_H
#define FORMGATE_CCRYPTO_SHIM_H


#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

/// SSL_set_tlsext_host_name is a macro: sets the SNI name. Returns 1 on success.
static inline int fg_ssl_set_sni(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/// SSL_CTX_set_min_proto_version is a macro. Returns 1 on success.
static inline int fg_ssl_ctx_min_tls12(SSL_CTX *ctx) {
    return (int)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
}

#endif
