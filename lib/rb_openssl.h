#ifndef RB_OPENSSL_H
#define RB_OPENSSL_H

/*
 * OpenSSL, loaded when the first rediss:// handle is made rather than when
 * the program starts (private to lib/). Linking libssl and libcrypto made
 * every process pay for loading and relocating them, a plain redis:// one
 * included: about half of the start of `rbarrier get`. rb_tls.c includes
 * this header after OpenSSL's and calls OpenSSL by its usual names; each
 * name (and each function an OpenSSL macro expands to) goes through the
 * table below, filled by rb_openssl__load. A call missing from the table
 * fails the link, since nothing links libssl any more.
 */

#include <openssl/err.h>
#include <openssl/opensslv.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "include/rbarrier.h"

/* The libssl whose headers we were built with (its dependency libcrypto
 * comes with it). */
#ifndef RB_LIBSSL_SONAME
#define RB_OPENSSL_STR_(x) #x
#define RB_OPENSSL_STR(x) RB_OPENSSL_STR_(x)
#if defined(OPENSSL_SHLIB_VERSION)
#define RB_LIBSSL_SONAME "libssl.so." RB_OPENSSL_STR(OPENSSL_SHLIB_VERSION)
#elif defined(SHLIB_VERSION_NUMBER)
#define RB_LIBSSL_SONAME "libssl.so." SHLIB_VERSION_NUMBER
#else
#error "cannot tell libssl's soname from <openssl/opensslv.h>: define RB_LIBSSL_SONAME"
#endif
#endif

#define RB_OPENSSL_FUNCTIONS(X) \
    X(BIO_clear_flags) X(BIO_ctrl) X(BIO_get_new_index) X(BIO_int_ctrl) \
    X(BIO_meth_free) X(BIO_meth_get_create) X(BIO_meth_get_ctrl) \
    X(BIO_meth_get_destroy) X(BIO_meth_get_puts) X(BIO_meth_get_read) \
    X(BIO_meth_new) X(BIO_meth_set_create) X(BIO_meth_set_ctrl) \
    X(BIO_meth_set_destroy) X(BIO_meth_set_puts) X(BIO_meth_set_read) \
    X(BIO_meth_set_write) X(BIO_new) X(BIO_s_socket) X(BIO_set_flags) \
    X(BIO_sock_should_retry) \
    X(ERR_clear_error) X(ERR_error_string_n) X(ERR_peek_last_error) \
    X(SSL_CTX_check_private_key) X(SSL_CTX_ctrl) X(SSL_CTX_free) \
    X(SSL_CTX_load_verify_locations) X(SSL_CTX_new) \
    X(SSL_CTX_set_default_verify_paths) X(SSL_CTX_set_options) \
    X(SSL_CTX_set_verify) X(SSL_CTX_use_PrivateKey_file) \
    X(SSL_CTX_use_certificate_chain_file) \
    X(SSL_connect) X(SSL_ctrl) X(SSL_free) X(SSL_get0_param) \
    X(SSL_get_error) X(SSL_get_verify_result) X(SSL_new) X(SSL_read) \
    X(SSL_set1_host) X(SSL_set_bio) X(SSL_set_hostflags) X(SSL_write) \
    X(TLS_client_method) \
    X(X509_VERIFY_PARAM_set1_ip_asc) X(X509_verify_cert_error_string)

/* Each pointer has the type of OpenSSL's own prototype, so a call through
 * it is checked as a direct call would be. */
#define RB_OPENSSL_FIELD(f) __typeof__(&f) f;
struct rb_openssl {
    RB_OPENSSL_FUNCTIONS(RB_OPENSSL_FIELD)
};
#undef RB_OPENSSL_FIELD

extern struct rb_openssl rb_openssl__api;

/* Load libssl and resolve the table: the first call in the process does
 * the work (thread-safely), later ones return its outcome. Without a
 * loadable libssl a rediss:// URL cannot be used: that is bad input for
 * this machine, found before anything goes on the wire.
 * @return RB_OK or RB_EINVAL (err names the library and the loader's
 *         reason) */
int rb_openssl__load(rb_error *err);

#ifndef RB_OPENSSL_LOADER
#define BIO_clear_flags (rb_openssl__api.BIO_clear_flags)
#define BIO_ctrl (rb_openssl__api.BIO_ctrl)
#define BIO_get_new_index (rb_openssl__api.BIO_get_new_index)
#define BIO_int_ctrl (rb_openssl__api.BIO_int_ctrl)
#define BIO_meth_free (rb_openssl__api.BIO_meth_free)
#define BIO_meth_get_create (rb_openssl__api.BIO_meth_get_create)
#define BIO_meth_get_ctrl (rb_openssl__api.BIO_meth_get_ctrl)
#define BIO_meth_get_destroy (rb_openssl__api.BIO_meth_get_destroy)
#define BIO_meth_get_puts (rb_openssl__api.BIO_meth_get_puts)
#define BIO_meth_get_read (rb_openssl__api.BIO_meth_get_read)
#define BIO_meth_new (rb_openssl__api.BIO_meth_new)
#define BIO_meth_set_create (rb_openssl__api.BIO_meth_set_create)
#define BIO_meth_set_ctrl (rb_openssl__api.BIO_meth_set_ctrl)
#define BIO_meth_set_destroy (rb_openssl__api.BIO_meth_set_destroy)
#define BIO_meth_set_puts (rb_openssl__api.BIO_meth_set_puts)
#define BIO_meth_set_read (rb_openssl__api.BIO_meth_set_read)
#define BIO_meth_set_write (rb_openssl__api.BIO_meth_set_write)
#define BIO_new (rb_openssl__api.BIO_new)
#define BIO_s_socket (rb_openssl__api.BIO_s_socket)
#define BIO_set_flags (rb_openssl__api.BIO_set_flags)
#define BIO_sock_should_retry (rb_openssl__api.BIO_sock_should_retry)
#define ERR_clear_error (rb_openssl__api.ERR_clear_error)
#define ERR_error_string_n (rb_openssl__api.ERR_error_string_n)
#define ERR_peek_last_error (rb_openssl__api.ERR_peek_last_error)
#define SSL_CTX_check_private_key (rb_openssl__api.SSL_CTX_check_private_key)
#define SSL_CTX_ctrl (rb_openssl__api.SSL_CTX_ctrl)
#define SSL_CTX_free (rb_openssl__api.SSL_CTX_free)
#define SSL_CTX_load_verify_locations \
    (rb_openssl__api.SSL_CTX_load_verify_locations)
#define SSL_CTX_new (rb_openssl__api.SSL_CTX_new)
#define SSL_CTX_set_default_verify_paths \
    (rb_openssl__api.SSL_CTX_set_default_verify_paths)
#define SSL_CTX_set_options (rb_openssl__api.SSL_CTX_set_options)
#define SSL_CTX_set_verify (rb_openssl__api.SSL_CTX_set_verify)
#define SSL_CTX_use_PrivateKey_file \
    (rb_openssl__api.SSL_CTX_use_PrivateKey_file)
#define SSL_CTX_use_certificate_chain_file \
    (rb_openssl__api.SSL_CTX_use_certificate_chain_file)
#define SSL_connect (rb_openssl__api.SSL_connect)
#define SSL_ctrl (rb_openssl__api.SSL_ctrl)
#define SSL_free (rb_openssl__api.SSL_free)
#define SSL_get0_param (rb_openssl__api.SSL_get0_param)
#define SSL_get_error (rb_openssl__api.SSL_get_error)
#define SSL_get_verify_result (rb_openssl__api.SSL_get_verify_result)
#define SSL_new (rb_openssl__api.SSL_new)
#define SSL_read (rb_openssl__api.SSL_read)
#define SSL_set1_host (rb_openssl__api.SSL_set1_host)
#define SSL_set_bio (rb_openssl__api.SSL_set_bio)
#define SSL_set_hostflags (rb_openssl__api.SSL_set_hostflags)
#define SSL_write (rb_openssl__api.SSL_write)
#define TLS_client_method (rb_openssl__api.TLS_client_method)
#define X509_VERIFY_PARAM_set1_ip_asc \
    (rb_openssl__api.X509_VERIFY_PARAM_set1_ip_asc)
#define X509_verify_cert_error_string \
    (rb_openssl__api.X509_verify_cert_error_string)
#endif

#endif
