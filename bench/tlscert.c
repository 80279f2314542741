/*
 * A throw-away CA and a server certificate signed by it (tlscert.h), made with OpenSSL for bench
 * runs whose broker keeps no data directory: valid an hour back and a week ahead, SANs
 * 127.0.0.1 and localhost, so clients can verify the broker as they would a real one.
 */
#include "tlscert.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>

static int add_ext(X509 *issuer, X509 *cert, int nid, const char *value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *ex = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (!ex) return -1;
    int ok = X509_add_ext(cert, ex, -1);
    X509_EXTENSION_free(ex);
    return ok ? 0 : -1;
}

static X509 *make_cert(EVP_PKEY *key, EVP_PKEY *signer, X509 *issuer, const char *cn, long serial, int ca) {
    X509 *x = X509_new();
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 7L * 86400);
    X509_NAME *name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
    X509_set_pubkey(x, key);
    X509 *iss = issuer ? issuer : x;
    int bad = 0;
    if (ca) {
        bad |= add_ext(iss, x, NID_basic_constraints, "critical,CA:TRUE");
        bad |= add_ext(iss, x, NID_key_usage, "critical,keyCertSign,cRLSign");
        bad |= add_ext(iss, x, NID_subject_key_identifier, "hash");
    } else {
        bad |= add_ext(iss, x, NID_basic_constraints, "critical,CA:FALSE");
        bad |= add_ext(iss, x, NID_key_usage, "critical,digitalSignature");
        bad |= add_ext(iss, x, NID_ext_key_usage, "serverAuth");
        bad |= add_ext(iss, x, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost");
        bad |= add_ext(iss, x, NID_authority_key_identifier, "keyid");
    }
    if (bad || !X509_sign(x, signer, EVP_sha256())) {
        X509_free(x);
        return NULL;
    }
    return x;
}

static int write_pem(const char *dir, const char *file, X509 *x, EVP_PKEY *k) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    int ok = x ? PEM_write_X509(f, x) : PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL);
    return fclose(f) == 0 && ok ? 0 : -1;
}

int tlscert_make(const char *dir, char *err, size_t n) {
    EVP_PKEY *cak = EVP_EC_gen("P-256"), *sk = EVP_EC_gen("P-256");
    X509 *ca = cak ? make_cert(cak, cak, NULL, "mskbench local CA", 1, 1) : NULL;
    X509 *srv = ca && sk ? make_cert(sk, cak, ca, "127.0.0.1", 2, 0) : NULL;
    int rc = srv && !write_pem(dir, "ca.pem", ca, NULL) && !write_pem(dir, "server.pem", srv, NULL) &&
                     !write_pem(dir, "server.key", NULL, sk)
                 ? 0
                 : -1;
    if (rc) snprintf(err, n, "could not create a CA and server certificate in %s", dir);
    X509_free(srv);
    X509_free(ca);
    EVP_PKEY_free(sk);
    EVP_PKEY_free(cak);
    return rc;
}
