/*
 * tls_ca: the server context (tls.h) and the certificate it serves: the given certificate and
 * key files, or the local CA kept in <data>/tls/, created on first start and reused after, with
 * a server certificate issued again whenever the stored one no longer fits (tls.h says when).
 * The protocol settings and the connections are tls.c's.
 *
 * Issue 37: all of that work runs in a short-lived child process at start-up, and the broker's
 * own SSL_CTX is made from the child's results at the first TLS connection. OpenSSL's first use
 * (its providers, its DRBG, the EC and X.509 code) touches ~2.5 MiB of libcrypto and libssl that
 * then stay resident for the life of the process; a child's touches die with it, so a broker
 * whose TLS listeners are never used keeps none of it. The files are still written (and
 * checked) before start-up ends, since the ready line names ca.pem for clients to trust at once.
 */
#include "tls.h"
#include "tls_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "kp_mem.h"

#define CA_DAYS 3653           /* ten years */
#define SERVER_DAYS 825        /* the longest lifetime Apple clients accept */
#define RENEW_MARGIN_S 86400   /* reissue a certificate that expires within a day */
#define BACKDATE_S 3600        /* tolerate client clocks an hour behind */

struct tls_ctx {
    SSL_CTX *ssl;  /* made at the first connection (tls_ctx_ssl), from chain_pem and key_pem */
    char *chain_pem, *key_pem; /* what the context serves, until it is made */
    char ssl_err[512];         /* why making it failed: every TLS connection then fails so */
    char *ca_file; /* NULL with given cert files or ":memory:" */
    char *ca_pem;  /* NULL with given cert files */
    char ca_fp[65], cert_fp[65];
    char *summary;
    char warning[512];
};

typedef struct hostlist {
    char **v;
    size_t n;
} hostlist;

/* ---------- strings ---------- */

static void free_secret(char *p) {
    if (!p) return;
    explicit_bzero(p, strlen(p));
    free(p);
}

static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str_printf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = xmalloc(len > 0 ? (size_t)len + 1 : 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)(len > 0 ? len : 0) + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* ---------- host names ---------- */

static bool is_ip(const char *h) {
    ASN1_OCTET_STRING *ip = a2i_IPADDRESS(h);
    ASN1_OCTET_STRING_free(ip);
    return ip != NULL;
}

static bool valid_dns_name(const char *h) {
    size_t len = strlen(h);
    if (len == 0 || len > 253) return false;
    for (const char *p = h; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
              c == '*'))
            return false;
    }
    return true;
}

static void hosts_free(hostlist *h) {
    for (size_t i = 0; i < h->n; i++) free(h->v[i]);
    free(h->v);
    h->v = NULL;
    h->n = 0;
}

static int hosts_add(hostlist *h, const char *name, char *err, size_t n) {
    if (!name || !*name) return 0;
    for (size_t i = 0; i < h->n; i++)
        if (strcasecmp(h->v[i], name) == 0) return 0;
    if (!is_ip(name) && !valid_dns_name(name)) {
        snprintf(err, n, "tls: host name \"%s\" is neither a DNS name nor an IP address", name);
        return -1;
    }
    char **v = xrealloc(h->v, sizeof(*v) * (h->n + 1));
    h->v = v;
    h->v[h->n] = xstrdup(name);
    h->n++;
    return 0;
}

static int hosts_build(hostlist *h, const tls_settings *set, char *err, size_t n) {
    for (size_t i = 0; i < set->nhosts; i++)
        if (hosts_add(h, set->hosts[i], err, n) < 0) return -1;
    if (hosts_add(h, "localhost", err, n) < 0 || hosts_add(h, "127.0.0.1", err, n) < 0 || hosts_add(h, "::1", err, n) < 0)
        return -1;
    return 0;
}

static void hosts_join(const hostlist *h, char *buf, size_t n) {
    size_t len = 0;
    buf[0] = 0;
    for (size_t i = 0; i < h->n && len + 1 < n; i++) {
        int w = snprintf(buf + len, n - len, "%s%s", i ? ", " : "", h->v[i]);
        if (w < 0) break;
        len += (size_t)w;
    }
}

/* The first host the certificate's SANs do not list exactly, or NULL when it lists them all. */
static const char *sans_missing(X509 *x, const hostlist *h) {
    GENERAL_NAMES *gens = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
    const char *missing = NULL;
    for (size_t i = 0; i < h->n && !missing; i++) {
        ASN1_OCTET_STRING *ip = a2i_IPADDRESS(h->v[i]);
        bool found = false;
        for (int j = 0; gens && j < sk_GENERAL_NAME_num(gens) && !found; j++) {
            GENERAL_NAME *g = sk_GENERAL_NAME_value(gens, j);
            if (ip && g->type == GEN_IPADD)
                found = ASN1_OCTET_STRING_cmp(ip, g->d.iPAddress) == 0;
            else if (!ip && g->type == GEN_DNS) {
                const ASN1_IA5STRING *s = g->d.dNSName;
                size_t len = (size_t)ASN1_STRING_length(s);
                found = len == strlen(h->v[i]) && strncasecmp((const char *)ASN1_STRING_get0_data(s), h->v[i], len) == 0;
            }
        }
        ASN1_OCTET_STRING_free(ip);
        if (!found) missing = h->v[i];
    }
    GENERAL_NAMES_free(gens);
    ERR_clear_error();
    return missing;
}

/* ---------- certificates ---------- */

static void fingerprint(X509 *x, char out[65]) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    out[0] = 0;
    if (!X509_digest(x, EVP_sha256(), md, &len)) return;
    for (unsigned i = 0; i < len && i < 32; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static void expiry_date(X509 *x, char *buf, size_t n) {
    struct tm tm;
    if (ASN1_TIME_to_tm(X509_get0_notAfter(x), &tm))
        strftime(buf, n, "%Y-%m-%d", &tm);
    else
        snprintf(buf, n, "?");
}

/* Valid now and for at least RENEW_MARGIN_S more seconds. */
static bool time_ok(X509 *x) {
    time_t now = time(NULL), later = now + RENEW_MARGIN_S;
    return X509_cmp_time(X509_get0_notBefore(x), &now) < 0 && X509_cmp_time(X509_get0_notAfter(x), &later) > 0;
}

static int add_ext(X509 *x, X509V3_CTX *v, int nid, const char *value) {
    X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, v, nid, value);
    if (!e) return -1;
    int ok = X509_add_ext(x, e, -1);
    X509_EXTENSION_free(e);
    return ok ? 0 : -1;
}

static int add_sans(X509 *x, const hostlist *h) {
    GENERAL_NAMES *gens = sk_GENERAL_NAME_new_null();
    if (!gens) return -1;
    int rc = 0;
    for (size_t i = 0; i < h->n && rc == 0; i++) {
        GENERAL_NAME *g = GENERAL_NAME_new();
        ASN1_OCTET_STRING *ip = a2i_IPADDRESS(h->v[i]);
        if (!g) {
            ASN1_OCTET_STRING_free(ip);
            rc = -1;
            break;
        }
        if (ip) {
            GENERAL_NAME_set0_value(g, GEN_IPADD, ip);
        } else {
            ASN1_IA5STRING *s = ASN1_IA5STRING_new();
            if (!s || !ASN1_STRING_set(s, h->v[i], -1)) {
                ASN1_IA5STRING_free(s);
                GENERAL_NAME_free(g);
                rc = -1;
                break;
            }
            GENERAL_NAME_set0_value(g, GEN_DNS, s);
        }
        if (!sk_GENERAL_NAME_push(gens, g)) {
            GENERAL_NAME_free(g);
            rc = -1;
        }
    }
    if (rc == 0 && !X509_add1_ext_i2d(x, NID_subject_alt_name, gens, 0, X509V3_ADD_DEFAULT)) rc = -1;
    GENERAL_NAMES_free(gens);
    return rc;
}

/*
 * A v3 certificate for key. issuer NULL: a self-signed CA named cn.
 * Otherwise a server certificate signed by issuer/issuer_key covering sans.
 */
static X509 *make_cert(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *issuer_key, long days, const hostlist *sans) {
    X509 *x = X509_new();
    BIGNUM *bn = NULL;
    unsigned char serial[16];
    bool ok = x && X509_set_version(x, X509_VERSION_3) && RAND_bytes(serial, sizeof serial) == 1;
    if (ok) {
        serial[0] = (serial[0] & 0x7f) | 0x40; /* positive, full 16 bytes */
        bn = BN_bin2bn(serial, sizeof serial, NULL);
        ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x));
    }
    BN_free(bn);
    ok = ok && X509_gmtime_adj(X509_getm_notBefore(x), -BACKDATE_S) && X509_time_adj_ex(X509_getm_notAfter(x), (int)days, 0, NULL) &&
         X509_set_pubkey(x, key);
    X509_NAME *name = x ? X509_get_subject_name(x) : NULL;
    ok = ok && X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"mskmock", -1, -1, 0) &&
         /* CN is at most 64 characters; clients match host names against the SANs anyway */
         X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)(strlen(cn) <= 64 ? cn : "mskmock broker"), -1, -1,
                                    0) &&
         X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
    if (ok) {
        X509V3_CTX v;
        X509V3_set_ctx(&v, issuer ? issuer : x, x, NULL, NULL, 0);
        if (!issuer)
            ok = add_ext(x, &v, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") == 0 &&
                 add_ext(x, &v, NID_key_usage, "critical,keyCertSign,cRLSign") == 0 &&
                 add_ext(x, &v, NID_subject_key_identifier, "hash") == 0;
        else
            ok = add_ext(x, &v, NID_basic_constraints, "critical,CA:FALSE") == 0 &&
                 add_ext(x, &v, NID_key_usage, "critical,digitalSignature") == 0 &&
                 add_ext(x, &v, NID_ext_key_usage, "serverAuth") == 0 && add_ext(x, &v, NID_subject_key_identifier, "hash") == 0 &&
                 add_ext(x, &v, NID_authority_key_identifier, "keyid:always") == 0 && add_sans(x, sans) == 0;
    }
    ok = ok && X509_sign(x, issuer ? issuer_key : key, EVP_sha256()) > 0;
    if (!ok) {
        X509_free(x);
        return NULL;
    }
    return x;
}

/* ---------- files ---------- */

static char *path_join(const char *dir, const char *name) {
    size_t len = strlen(dir) + strlen(name) + 2;
    char *p = xmalloc(len);
    snprintf(p, len, "%s/%s", dir, name);
    return p;
}

/* 0: loaded; 1: file absent; -1: present but unusable (err says why). */
static int read_pem(const char *path, X509 **cert, EVP_PKEY **key, char *err, size_t n) {
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT) return 1;
        snprintf(err, n, "tls: cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    ERR_clear_error();
    bool ok = cert ? (*cert = PEM_read_X509(f, NULL, NULL, NULL)) != NULL : (*key = PEM_read_PrivateKey(f, NULL, NULL, NULL)) != NULL;
    fclose(f);
    if (!ok) {
        char what[512];
        snprintf(what, sizeof what, "tls: cannot read the %s in %s", cert ? "certificate" : "private key", path);
        return tls_fail_ssl(err, n, what);
    }
    return 0;
}

/* Write a PEM file atomically (temporary file, fsync, rename) with the given mode. */
static int write_pem(const char *path, mode_t mode, X509 *cert, EVP_PKEY *key, char *err, size_t n) {
    size_t len = strlen(path) + 5;
    char *tmp = xmalloc(len);
    snprintf(tmp, len, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    FILE *f = fd >= 0 && fchmod(fd, mode) == 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        snprintf(err, n, "tls: cannot write %s: %s", tmp, strerror(errno));
        if (fd >= 0) close(fd);
        free(tmp);
        return -1;
    }
    ERR_clear_error();
    bool ok = cert ? PEM_write_X509(f, cert) : PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL);
    ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
    int saved = errno;
    if (fclose(f) != 0) ok = false;
    if (ok && rename(tmp, path) != 0) {
        saved = errno;
        ok = false;
    }
    if (!ok) {
        snprintf(err, n, "tls: cannot write %s: %s", path, strerror(saved));
        unlink(tmp);
    }
    free(tmp);
    return ok ? 0 : -1;
}

/*
 * World-readable: clients running as another user (an app container sharing the broker's volume)
 * must read ca.pem. The keys in it are written 0600.
 */
static int make_dir(const char *path, char *err, size_t n) {
    if (mkdir(path, 0755) == 0 || errno == EEXIST) return 0;
    snprintf(err, n, "tls: cannot create directory %s: %s", path, strerror(errno));
    return -1;
}

/* ---------- context ---------- */

static int use_given_files(tls_ctx *x, const tls_settings *set, const hostlist *hosts, char *err, size_t n) {
    for (int i = 0; i < 2; i++) {
        const char *p = i ? set->key_file : set->cert_file;
        if (access(p, R_OK) != 0) {
            snprintf(err, n, "tls: cannot read %s %s: %s", i ? "key file" : "certificate file", p, strerror(errno));
            return -1;
        }
    }
    ERR_clear_error();
    char what[512];
    if (SSL_CTX_use_certificate_chain_file(x->ssl, set->cert_file) != 1) {
        snprintf(what, sizeof what, "tls: cannot load the certificate chain in %s", set->cert_file);
        return tls_fail_ssl(err, n, what);
    }
    /* OpenSSL refuses a key that does not match the certificate already at load time */
    int loaded = SSL_CTX_use_PrivateKey_file(x->ssl, set->key_file, SSL_FILETYPE_PEM);
    unsigned long e = loaded == 1 ? 0 : ERR_peek_last_error();
    bool mismatch = loaded != 1 && ERR_GET_LIB(e) == ERR_LIB_X509 && ERR_GET_REASON(e) == X509_R_KEY_VALUES_MISMATCH;
    if (loaded != 1 && !mismatch) {
        snprintf(what, sizeof what, "tls: cannot load the private key in %s", set->key_file);
        return tls_fail_ssl(err, n, what);
    }
    if (mismatch || SSL_CTX_check_private_key(x->ssl) != 1) {
        snprintf(what, sizeof what, "tls: the key in %s does not belong to the certificate in %s", set->key_file, set->cert_file);
        return tls_fail_ssl(err, n, what);
    }
    X509 *leaf = SSL_CTX_get0_certificate(x->ssl);
    fingerprint(leaf, x->cert_fp);
    char until[32];
    expiry_date(leaf, until, sizeof until);
    x->summary = str_printf("tls: serving certificate %s (key %s), expires %s, sha256 %s", set->cert_file, set->key_file, until,
                            x->cert_fp);
    /* a user's certificate may use wildcards: match as clients will */
    char uncovered[256];
    size_t len = 0;
    uncovered[0] = 0;
    for (size_t i = 0; i < hosts->n; i++) {
        const char *h = hosts->v[i];
        int ok = is_ip(h) ? X509_check_ip_asc(leaf, h, 0) : X509_check_host(leaf, h, 0, 0, NULL);
        if (ok != 1 && len + 1 < sizeof uncovered) {
            int w = snprintf(uncovered + len, sizeof uncovered - len, "%s%s", len ? ", " : "", h);
            if (w > 0) len += (size_t)w;
        }
    }
    ERR_clear_error();
    if (len)
        snprintf(x->warning, sizeof x->warning,
                 "tls: certificate %s does not cover %s; clients that verify host names will refuse those names", set->cert_file,
                 uncovered);
    else if (!time_ok(leaf))
        snprintf(x->warning, sizeof x->warning, "tls: certificate %s is not valid now or expires within a day (not after %s)",
                 set->cert_file, until);
    return 0;
}

static char *pem_text(X509 *cert) {
    BIO *b = BIO_new(BIO_s_mem());
    if (!b || !PEM_write_bio_X509(b, cert)) xoom("writing a certificate as PEM", 0);
    char *data;
    long len = BIO_get_mem_data(b, &data);
    char *s = xmalloc((size_t)len + 1);
    memcpy(s, data, (size_t)len);
    s[len] = 0;
    BIO_free(b);
    return s;
}

/*
 * The local CA: load ca.pem/ca.key or create them. *note says what happened.
 * dir NULL: in memory only.
 */
static int local_ca(const char *dir, X509 **ca, EVP_PKEY **ca_key, char *note, size_t note_n, char *err, size_t n) {
    char *cert_path = dir ? path_join(dir, "ca.pem") : NULL, *key_path = dir ? path_join(dir, "ca.key") : NULL;
    int rc = -1;
    int st = dir ? read_pem(cert_path, ca, NULL, err, n) : 1;
    if (st < 0) goto out;
    if (st == 0) {
        /* clients may trust this CA: never replace it silently because its key is gone */
        int kst = read_pem(key_path, NULL, ca_key, err, n);
        if (kst < 0) goto out;
        if (kst == 1) {
            snprintf(err, n, "tls: %s exists but %s does not; restore the key, or delete %s to create a new CA", cert_path, key_path,
                     cert_path);
            goto out;
        }
        if (X509_check_private_key(*ca, *ca_key) != 1) {
            ERR_clear_error();
            snprintf(err, n, "tls: %s does not hold the key of %s; restore it, or delete both to create a new CA", key_path, cert_path);
            goto out;
        }
        if (time_ok(*ca)) {
            snprintf(note, note_n, "reusing local CA %s", cert_path);
            rc = 0;
            goto out;
        }
        char until[32];
        expiry_date(*ca, until, sizeof until);
        snprintf(note, note_n, "local CA %s expired or expires within a day (%s): created a new one, clients must trust it again",
                 cert_path, until);
        X509_free(*ca);
        EVP_PKEY_free(*ca_key);
        *ca = NULL;
        *ca_key = NULL;
    } else {
        if (dir)
            snprintf(note, note_n, "created local CA %s", cert_path);
        else
            snprintf(note, note_n, "created an in-memory local CA (lost at exit)");
    }
    ERR_clear_error();
    *ca_key = EVP_EC_gen("P-256");
    if (!*ca_key) {
        tls_fail_ssl(err, n, "tls: generating the CA key");
        goto out;
    }
    char cn[64];
    unsigned char rnd[4];
    if (RAND_bytes(rnd, sizeof rnd) != 1) {
        tls_fail_ssl(err, n, "tls: RAND_bytes");
        goto out;
    }
    /* a distinct name per CA, so trust stores holding several can tell them apart */
    snprintf(cn, sizeof cn, "mskmock local CA %02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3]);
    *ca = make_cert(*ca_key, cn, NULL, NULL, CA_DAYS, NULL);
    if (!*ca) {
        tls_fail_ssl(err, n, "tls: creating the CA certificate");
        goto out;
    }
    /* key first: a ca.pem without its key is refused at the next start */
    if (dir && (write_pem(key_path, 0600, NULL, *ca_key, err, n) < 0 || write_pem(cert_path, 0644, *ca, NULL, err, n) < 0)) goto out;
    rc = 0;
out:
    free(cert_path);
    free(key_path);
    return rc;
}

/* Why the stored server certificate cannot be served again, or NULL when it can. */
static const char *server_cert_problem(X509 *cert, EVP_PKEY *key, X509 *ca, const hostlist *hosts, char *buf, size_t n) {
    const char *why = NULL;
    EVP_PKEY *ca_pub = X509_get0_pubkey(ca);
    if (X509_check_private_key(cert, key) != 1)
        why = "server.key does not match it";
    else if (X509_check_issued(ca, cert) != X509_V_OK || !ca_pub || X509_verify(cert, ca_pub) != 1)
        why = "the stored one was not signed by ca.pem";
    else if (!time_ok(cert))
        why = "the stored one is not valid now or expires within a day";
    else {
        const char *miss = sans_missing(cert, hosts);
        if (miss) {
            snprintf(buf, n, "the stored one does not cover %s", miss);
            why = buf;
        }
    }
    ERR_clear_error();
    return why;
}

static int use_local_ca(tls_ctx *x, const tls_settings *set, const hostlist *hosts, char *err, size_t n) {
    bool mem = strcmp(set->data_dir, ":memory:") == 0;
    char *dir = NULL, *cert_path = NULL, *key_path = NULL;
    X509 *ca = NULL, *cert = NULL;
    EVP_PKEY *ca_key = NULL, *key = NULL;
    int rc = -1;
    if (!mem) {
        dir = path_join(set->data_dir, "tls");
        if (make_dir(set->data_dir, err, n) < 0 || make_dir(dir, err, n) < 0) goto out;
        cert_path = path_join(dir, "server.pem");
        key_path = path_join(dir, "server.key");
    }
    char ca_note[600];
    if (local_ca(dir, &ca, &ca_key, ca_note, sizeof ca_note, err, n) < 0) goto out;

    const char *why = ""; /* "" = nothing stored yet, NULL = the stored one is fine */
    char why_buf[300];
    if (!mem) {
        int cst = read_pem(cert_path, &cert, NULL, err, n);
        int kst = cst == 0 ? read_pem(key_path, NULL, &key, err, n) : cst;
        if (cst == 0 && kst == 0)
            why = server_cert_problem(cert, key, ca, hosts, why_buf, sizeof why_buf);
        else if (cst < 0 || kst < 0) {
            snprintf(why_buf, sizeof why_buf, "the stored one is unusable (%s)", err);
            why = why_buf;
        } else if (kst == 1 && cst == 0)
            why = "server.key is missing";
        ERR_clear_error();
    }
    char names[512], until[32];
    hosts_join(hosts, names, sizeof names);
    if (!mem) x->ca_file = path_join(dir, "ca.pem");
    if (why) {
        X509_free(cert);
        EVP_PKEY_free(key);
        cert = NULL;
        key = NULL;
        if (!(key = EVP_EC_gen("P-256"))) {
            tls_fail_ssl(err, n, "tls: generating the server key");
            goto out;
        }
        if (!(cert = make_cert(key, hosts->v[0], ca, ca_key, SERVER_DAYS, hosts))) {
            tls_fail_ssl(err, n, "tls: creating the server certificate");
            goto out;
        }
        /* key first: a server.pem that does not match server.key is reissued at the next start */
        if (!mem && (write_pem(key_path, 0600, NULL, key, err, n) < 0 || write_pem(cert_path, 0644, cert, NULL, err, n) < 0)) goto out;
        expiry_date(cert, until, sizeof until);
        x->summary = str_printf("tls: %s; issued %sserver certificate %s%s%s%s covering %s, expires %s; clients must trust %s",
                                ca_note, *why ? "a new " : "", mem ? "(in memory)" : cert_path, *why ? " (" : "", why,
                                *why ? ")" : "", names, until, mem ? "the in-memory CA (tls_ctx_ca_pem)" : x->ca_file);
    } else {
        expiry_date(cert, until, sizeof until);
        x->summary = str_printf("tls: %s and server certificate %s covering %s, expires %s", ca_note, cert_path, names, until);
    }
    ERR_clear_error();
    if (SSL_CTX_use_certificate(x->ssl, cert) != 1 || SSL_CTX_use_PrivateKey(x->ssl, key) != 1) {
        tls_fail_ssl(err, n, "tls: installing the server certificate");
        goto out;
    }
    x->ca_pem = pem_text(ca);
    fingerprint(ca, x->ca_fp);
    fingerprint(cert, x->cert_fp);
    rc = 0;
out:
    X509_free(ca);
    X509_free(cert);
    EVP_PKEY_free(ca_key);
    EVP_PKEY_free(key);
    free(dir);
    free(cert_path);
    free(key_path);
    return rc;
}

/* The whole set-up in this process: the files checked or written, x->ssl made (in the child). */
static int build_ctx(tls_ctx **out, const tls_settings *set, char *err, size_t n) {
    *out = NULL;
    bool has_cert = set->cert_file && *set->cert_file, has_key = set->key_file && *set->key_file;
    if (has_cert != has_key) {
        snprintf(err, n, "tls: a certificate file needs a key file and a key file a certificate file (got only the %s)",
                 has_cert ? "certificate" : "key");
        return -1;
    }
    if (!has_cert && (!set->data_dir || !*set->data_dir)) {
        snprintf(err, n, "tls: no certificate files and no data directory to keep a local CA in");
        return -1;
    }
    hostlist hosts = {0};
    if (hosts_build(&hosts, set, err, n) < 0) {
        hosts_free(&hosts);
        return -1;
    }
    tls_ctx *x = xcalloc(1, sizeof(*x));
    ERR_clear_error();
    x->ssl = tls_server_ssl_ctx(err, n);
    int rc = !x->ssl ? -1 : has_cert ? use_given_files(x, set, &hosts, err, n) : use_local_ca(x, set, &hosts, err, n);
    hosts_free(&hosts);
    ERR_clear_error();
    if (rc < 0) {
        tls_ctx_free(x);
        return -1;
    }
    *out = x;
    return 0;
}

/* ---------- the set-up in a child process ---------- */

typedef struct wire {
    uint8_t *p;
    size_t len, cap, pos;
} wire;

#define WIRE_NULL UINT32_MAX

static void wire_put(wire *w, const char *s) {
    uint32_t len = s ? (uint32_t)strlen(s) : WIRE_NULL;
    size_t need = w->len + 4 + (s ? len : 0);
    if (need > w->cap) {
        w->cap = need * 2;
        w->p = xrealloc(w->p, w->cap);
    }
    memcpy(w->p + w->len, &len, 4);
    w->len += 4;
    if (s) {
        memcpy(w->p + w->len, s, len);
        w->len += len;
    }
}

/* The next string (malloc'd, NULL for a NULL), or -1 when the message ends early. */
static int wire_get(wire *w, char **out) {
    uint32_t len;
    *out = NULL;
    if (w->len - w->pos < 4) return -1;
    memcpy(&len, w->p + w->pos, 4);
    w->pos += 4;
    if (len == WIRE_NULL) return 0;
    if (w->len - w->pos < len) return -1;
    *out = xmalloc((size_t)len + 1);
    memcpy(*out, w->p + w->pos, len);
    (*out)[len] = 0;
    w->pos += len;
    return 0;
}

/* PEM text of the served certificate, its chain after it, and of its key: what the parent loads. */
static int served_pems(SSL_CTX *c, char **chain, char **key) {
    BIO *b = BIO_new(BIO_s_mem()), *k = BIO_new(BIO_s_mem());
    STACK_OF(X509) *extra = NULL;
    bool ok = b && k && PEM_write_bio_X509(b, SSL_CTX_get0_certificate(c)) && SSL_CTX_get0_chain_certs(c, &extra) &&
              PEM_write_bio_PrivateKey(k, SSL_CTX_get0_privatekey(c), NULL, NULL, 0, NULL, NULL);
    for (int i = 0; ok && extra && i < sk_X509_num(extra); i++) ok = PEM_write_bio_X509(b, sk_X509_value(extra, i));
    for (int i = 0; ok && i < 2; i++) {
        char *data;
        long len = BIO_get_mem_data(i ? k : b, &data);
        char *s = xmalloc((size_t)len + 1);
        memcpy(s, data, (size_t)len);
        s[len] = 0;
        *(i ? key : chain) = s;
    }
    BIO_free(b);
    BIO_free(k); /* the child's memory, gone when it exits */
    return ok ? 0 : -1;
}

/* The child: build everything, send the results (or the error) down fd, never return. */
static void __attribute__((noreturn)) child_main(int fd, const tls_settings *set) {
    char err[1024] = "";
    tls_ctx *x = NULL;
    wire w = {0};
    char *chain = NULL, *key = NULL;
    int rc = build_ctx(&x, set, err, sizeof err);
    if (rc == 0 && served_pems(x->ssl, &chain, &key) != 0) rc = tls_fail_ssl(err, sizeof err, "tls: writing the served certificate as PEM");
    wire_put(&w, rc == 0 ? "ok" : "error");
    wire_put(&w, err);
    if (rc == 0) {
        const char *fields[] = {x->summary, x->warning[0] ? x->warning : NULL, x->ca_file, x->ca_pem, x->ca_fp, x->cert_fp, chain, key};
        for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) wire_put(&w, fields[i]);
    }
    for (size_t off = 0; off < w.len;) {
        ssize_t k = write(fd, w.p + off, w.len - off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        off += (size_t)k;
    }
    _exit(0); /* not exit(): the parent's atexit handlers and stdio buffers are the parent's */
}

/* The parent: the child's message, read to its end, into *out. */
static int take_child(wire *w, tls_ctx **out, char *err, size_t n) {
    char *status = NULL, *why = NULL;
    if (wire_get(w, &status) < 0 || wire_get(w, &why) < 0 || !status) {
        free(status);
        free(why);
        return -2;
    }
    bool ok = strcmp(status, "ok") == 0;
    if (!ok) snprintf(err, n, "%s", why ? why : "tls: set-up failed");
    free(status);
    free(why);
    if (!ok) return -1;
    tls_ctx *x = xcalloc(1, sizeof(*x));
    char *warning = NULL, *ca_fp = NULL, *cert_fp = NULL;
    char **fields[] = {&x->summary, &warning, &x->ca_file, &x->ca_pem, &ca_fp, &cert_fp, &x->chain_pem, &x->key_pem};
    int rc = 0;
    for (size_t i = 0; i < sizeof fields / sizeof *fields && rc == 0; i++) rc = wire_get(w, fields[i]);
    if (warning) snprintf(x->warning, sizeof x->warning, "%s", warning);
    if (ca_fp) snprintf(x->ca_fp, sizeof x->ca_fp, "%s", ca_fp);
    if (cert_fp) snprintf(x->cert_fp, sizeof x->cert_fp, "%s", cert_fp);
    free(warning);
    free(ca_fp);
    free(cert_fp);
    if (rc < 0 || !x->chain_pem || !x->key_pem) {
        tls_ctx_free(x);
        return -2;
    }
    *out = x;
    return 0;
}

struct tls_setup {
    pid_t pid;        /* the child; 0 once done here (no child) */
    int fd;           /* its answer */
    tls_ctx *ctx;     /* done here: the context, or NULL with err */
    char err[1024];
};

void tls_ctx_begin(tls_setup **out, const tls_settings *set) {
    tls_setup *p = xcalloc(1, sizeof *p);
    int fds[2];
    p->pid = pipe2(fds, O_CLOEXEC) == 0 ? fork() : -1;
    if (p->pid == 0) {
        close(fds[0]);
        child_main(fds[1], set);
    }
    if (p->pid < 0) { /* no process to spare: do it here, and keep the pages */
        p->pid = 0;
        if (fds[0] >= 0) {
            close(fds[0]);
            close(fds[1]);
        }
        if (build_ctx(&p->ctx, set, p->err, sizeof p->err) != 0) p->ctx = NULL;
        *out = p;
        return;
    }
    close(fds[1]);
    p->fd = fds[0];
    *out = p;
}

int tls_ctx_finish(tls_setup *p, tls_ctx **out, char *err, size_t n) {
    *out = NULL;
    if (!p->pid) {
        *out = p->ctx;
        if (!p->ctx) snprintf(err, n, "%s", p->err);
        free(p);
        return *out ? 0 : -1;
    }
    wire w = {0};
    for (;;) {
        if (w.cap - w.len < 4096) {
            w.cap = w.cap ? w.cap * 2 : 16384;
            w.p = xrealloc(w.p, w.cap);
        }
        ssize_t k = read(p->fd, w.p + w.len, w.cap - w.len);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        w.len += (size_t)k;
    }
    close(p->fd);
    int status = 0;
    while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR) {}
    free(p);
    int rc = take_child(&w, out, err, n);
    if (w.p) explicit_bzero(w.p, w.len); /* the key passed through it */
    free(w.p);
    if (rc == -2) {
        if (WIFSIGNALED(status))
            snprintf(err, n, "tls: the process setting up the certificate died of signal %d", WTERMSIG(status));
        else
            snprintf(err, n, "tls: the process setting up the certificate sent an incomplete answer (exit status %d)",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return -1;
    }
    return rc;
}

int tls_ctx_new(tls_ctx **out, const tls_settings *set, char *err, size_t n) {
    tls_setup *p;
    tls_ctx_begin(&p, set);
    return tls_ctx_finish(p, out, err, n);
}

void tls_ctx_free(tls_ctx *x) {
    if (!x) return;
    SSL_CTX_free(x->ssl); /* reference counted: live connections keep it */
    free(x->chain_pem);
    free_secret(x->key_pem);
    free(x->ca_file);
    free(x->ca_pem);
    free(x->summary);
    free(x);
}

const char *tls_ctx_summary(const tls_ctx *x) { return x->summary ? x->summary : ""; }
const char *tls_ctx_warning(const tls_ctx *x) { return x->warning[0] ? x->warning : NULL; }
const char *tls_ctx_ca_file(const tls_ctx *x) { return x->ca_file; }
const char *tls_ctx_ca_pem(const tls_ctx *x) { return x->ca_pem; }
const char *tls_ctx_ca_fingerprint(const tls_ctx *x) { return x->ca_fp; }
const char *tls_ctx_cert_fingerprint(const tls_ctx *x) { return x->cert_fp; }

/* The served certificate, its chain and its key from the child's PEM text into a fresh context. */
static SSL_CTX *make_ssl(tls_ctx *x, char *err, size_t n) {
    SSL_CTX *c = tls_server_ssl_ctx(err, n);
    if (!c) return NULL;
    BIO *b = BIO_new_mem_buf(x->chain_pem, -1), *k = BIO_new_mem_buf(x->key_pem, -1);
    X509 *leaf = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
    EVP_PKEY *key = k ? PEM_read_bio_PrivateKey(k, NULL, NULL, NULL) : NULL;
    bool ok = leaf && key && SSL_CTX_use_certificate(c, leaf) == 1 && SSL_CTX_use_PrivateKey(c, key) == 1;
    X509 *more;
    while (ok && (more = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL)
        if (!SSL_CTX_add0_chain_cert(c, more)) { /* owns it on success */
            X509_free(more);
            ok = false;
        }
    X509_free(leaf);
    EVP_PKEY_free(key);
    BIO_free(b);
    BIO_free(k);
    if (!ok) {
        tls_fail_ssl(err, n, "tls: loading the server certificate");
        SSL_CTX_free(c);
        return NULL;
    }
    ERR_clear_error(); /* the chain's end is a "no start line" */
    return c;
}

SSL_CTX *tls_ctx_ssl(tls_ctx *x) {
    if (x->ssl || x->ssl_err[0]) return x->ssl;
    x->ssl = make_ssl(x, x->ssl_err, sizeof x->ssl_err);
    if (!x->ssl) return NULL;
    free(x->chain_pem);
    free_secret(x->key_pem);
    x->chain_pem = x->key_pem = NULL;
    return x->ssl;
}

const char *tls_ctx_ssl_error(const tls_ctx *x) { return x->ssl_err; }
