/*
 * net: the transport. TCP listeners (one set per synthetic broker), connections, Kafka framing
 * (an int32 size prefix; large frames read straight into their own buffer), TLS through
 * memory BIOs (tls.c: the loop does all socket I/O), admission (max.connections, the creation
 * rate), mutes (quota throttles), the request memory pool (queued.max.request.bytes), idle sweeps, and writing answers strictly in request order,
 * the held ones after the storage commit. It knows nothing above it: each whole frame goes to
 * srv.dispatch (the request pipeline) and each closed connection to srv.conn_closed, both set at
 * start-up (lifecycle.c), as Redis's networking.c hands a parsed command to processCommand.
 */
#include "net.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "kp_mem.h"
#include "log.h"
#include "req.h"
#include "tls.h"
#include "metrics.h"

/*
 * The request counters (metrics.h) see each started request once, when it leaves: by r->msg,
 * not the header, since a frame too short for a header leaves the header zeroed (api key 0).
 */
static void count_done(const req *r, int64_t now_us) {
    if (r->started_us)
        metrics_request_done(&r->c->s->metrics, r->msg ? r->msg->key : -1, r->hdr.api_version, r->error_code,
                             now_us - r->started_us);
}

static void count_closed(const req *r, int64_t now_us) {
    if (r->started_us)
        metrics_request_closed(&r->c->s->metrics, r->msg ? r->msg->key : -1, r->hdr.api_version, now_us - r->started_us);
}

/* Stop reading from a connection with this many requests not yet answered. */
#define MAX_QUEUED 256
/*
 * ... or with this many bytes of such requests (issue 37). librdkafka pipelines up to a million
 * requests per connection, so under load the broker read ahead whatever its clients had sent:
 * with 50 producers (150 connections) ~70 MB of produce frames sat queued at once, and the heap
 * kept that peak (138 MiB resident after the load). Kafka reads one request per connection at a
 * time (SocketServer mutes the channel until its answer is sent); this reads on until 64 KiB
 * wait, so small pipelined requests still go in one read and one producer's requests still
 * share storage commits, and the rest wait in the socket. Reading resumes as answers go out
 * (net_pump); a frame larger than the bound is still taken whole.
 */
#define MAX_QUEUED_BYTES (64u << 10)
/*
 * A frame at least this large that has not fully arrived is read straight
 * into its own buffer rather than through rbuf, so its bytes are copied once
 * (by the kernel) instead of twice. The buffer grows with what arrives, from
 * FILL_FIRST_CAP, so a client announcing a huge frame and sending little
 * holds little memory.
 */
#define FILL_MIN 65536
#define FILL_FIRST_CAP (1u << 20)


static void admission_after_close(srv *s); /* admission: below, beside on_connection */
static void pool_unwait(conn *c);          /* queued.max.request.bytes: below, beside take_frames */
static void free_timer(uv_handle_t *h) { free(h); }

static void on_close(uv_handle_t *h) {
    conn *c = h->data;
    while (c->head) {
        req *r = c->head;
        c->head = r->next;
        req_free(r);
    }
    if (c->filling) req_free(c->filling);
    free(c->rbuf);
    free(c->client_id);
    free(c->principal);
    if (c->s->conn_closed) c->s->conn_closed(c); /* what iam/ keeps per connection (lifecycle.c sets it) */
    free(c->access_key_id);
    if (c->tls) tls_conn_free(c->tls);
    free(c);
}

const char *conn_client_id(const conn *c) { return c->client_id ? c->client_id : "-"; }

static bool is_probe(const conn *c) { return c->client_id && !strcmp(c->client_id, PROBE_CLIENT_ID); }

void net_log_scope(const conn *c) {
    if (log_fmt != LOG_JSON) return;
    log_now.conn = (unsigned long long)c->id;
    snprintf(log_now.client, sizeof log_now.client, "%s", c->client_id ? c->client_id : "");
    /* as the text lines say it: Kafka's name for a connection not (yet) authenticated */
    snprintf(log_now.principal, sizeof log_now.principal, "%s", c->principal ? c->principal : "ANONYMOUS");
}

/* stmt's log lines in c's scope, and the scope found before back afterwards (timers call here too) */
#define IN_CONN_SCOPE(c, stmt)                          \
    do {                                                \
        bool json_ = log_fmt == LOG_JSON;               \
        log_scope saved_;                               \
        if (json_) {                                    \
            saved_ = log_now;                           \
            net_log_scope(c);                           \
        }                                               \
        stmt;                                           \
        if (json_) log_now = saved_;                    \
    } while (0)

void net_log_open(conn *c) {
    if (c->open_logged) return;
    c->open_logged = true;
    IN_CONN_SCOPE(c, log_write(is_probe(c) ? LOG_DEBUG : LOG_INFO, "conn=%llu open peer=%s node=%d listener=%s",
                               (unsigned long long)c->id, c->peer, c->s->nodes[c->node].id, lsn_name(c->listener)));
}

void net_peer_name(uv_tcp_t *t, char *out, size_t n) {
    struct sockaddr_storage ss;
    int len = sizeof ss;
    snprintf(out, n, "?");
    if (uv_tcp_getpeername(t, (struct sockaddr *)&ss, &len) != 0) return;
    char host[48] = "?";
    int port = 0;
    if (ss.ss_family == AF_INET) {
        uv_ip4_name((struct sockaddr_in *)&ss, host, sizeof host);
        port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    } else if (ss.ss_family == AF_INET6) {
        uv_ip6_name((struct sockaddr_in6 *)&ss, host, sizeof host);
        port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    }
    snprintf(out, n, "%s:%d", host, port);
}

void net_close(conn *c, const char *why) {
    if (c->closing) return;
    c->closing = true;
    srv *s = c->s;
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    s->nconns--;
    admission_after_close(s);
    pool_unwait(c);
    if (c->mute_timer) {
        c->mute_timer->data = NULL;
        uv_close((uv_handle_t *)c->mute_timer, free_timer);
        c->mute_timer = NULL;
    }
    /* a parked request may be registered elsewhere (fetch waiters): let it go */
    int64_t now_us = clk_mono_us();
    for (req *r = c->head; r; r = r->next) {
        if (r->state == REQ_PARKED) req_cancel_park(s, r);
        count_closed(r, now_us); /* started and never answered */
    }
    if (c->in_commit_list) {
        for (conn **pp = &s->commit_list; *pp; pp = &(*pp)->commit_next)
            if (*pp == c) {
                *pp = c->commit_next;
                break;
            }
    }
    if (c->in_pump_list) {
        for (conn **pp = &s->pump_list; *pp; pp = &(*pp)->pump_next)
            if (*pp == c) {
                *pp = c->pump_next;
                break;
            }
    }
    net_log_open(c);
    IN_CONN_SCOPE(c, log_write(is_probe(c) ? LOG_DEBUG : LOG_INFO,
                               "conn=%llu close peer=%s client=%s node=%d requests=%llu reason=%s",
                               (unsigned long long)c->id, c->peer, conn_client_id(c), s->nodes[c->node].id,
                               (unsigned long long)c->requests, why));
    uv_close((uv_handle_t *)&c->tcp, on_close);
}

typedef struct write_ctx {
    uv_write_t w;
    conn *c;
    int n;
    uint8_t *bufs[];
} write_ctx;

/* Response bytes handed to libuv and not yet written to the socket. */
static size_t unsent(const conn *c) { return uv_stream_get_write_queue_size((const uv_stream_t *)&c->tcp); }

static bool muted(const conn *c) { return c->muted_until_ms && c->muted_until_ms > clk_mono_ms(); }

static bool may_read(const conn *c) {
    return !c->pool_wait && c->nqueued < MAX_QUEUED && c->queued_bytes < MAX_QUEUED_BYTES && unsent(c) <= (size_t)c->s->cfg->socket_response_queue_max_bytes && !muted(c);
}

static void on_mute_end(uv_timer_t *t) {
    conn *c = t->data;
    if (!c) return;
    c->muted_until_ms = 0;
    net_pump_later(c); /* starts what was read meanwhile, and reads again */
}

void net_mute(conn *c, int32_t ms) {
    int64_t until = clk_mono_ms() + ms;
    if (until <= c->muted_until_ms) return;
    c->muted_until_ms = until;
    if (!c->mute_timer) {
        c->mute_timer = xmalloc(sizeof *c->mute_timer);
        uv_timer_init(c->s->loop, c->mute_timer);
        c->mute_timer->data = c;
    }
    clk_timer_start(c->mute_timer, on_mute_end, ms);
}

static void write_ctx_free(write_ctx *wc) {
    for (int i = 0; i < wc->n; i++) free(wc->bufs[i]);
    free(wc);
}

static void on_write(uv_write_t *w, int status) {
    write_ctx *wc = (write_ctx *)w;
    conn *c = wc->c;
    write_ctx_free(wc);
    if (c->closing) return;
    if (status < 0) {
        net_close(c, uv_strerror(status));
        return;
    }
    /* requests waited, or reading stopped, while answers piled up: go on once they have drained */
    if ((c->next_start || !c->reading) && unsent(c) <= (size_t)c->s->cfg->socket_response_queue_max_bytes)
        net_pump_later(c);
}

/*
 * Write bufs, whose memory is the nowned blocks of owned, in order after everything written before. What the socket
 * takes at once goes with one writev (uv_try_write) and is freed here; only what is left becomes
 * a uv_write, freed by on_write. A uv_write that completes at once still costs a system call: its
 * callback runs from the next loop turn, where libuv's uv__drain stops POLLOUT on the
 * connection's watcher (src/unix/stream.c), and uv__io_stop queues a watcher that still wants
 * POLLIN for an epoll_ctl(EPOLL_CTL_MOD) of unchanged events (src/unix/core.c, libuv 1.44): one
 * epoll_ctl per answer written, 5 per transaction of bench/txn_cost.py (issue 37). uv_try_write
 * queues nothing while the socket takes it all (https://docs.libuv.org/en/v1.x/stream.html).
 * A failed try (a closed peer) falls back to uv_write, whose callback closes the connection as
 * before, so a close never happens inside the caller's walk of c.
 */
static void write_out(conn *c, uint8_t **owned, int nowned, uv_buf_t *bufs, unsigned nb) {
    int done = uv_try_write((uv_stream_t *)&c->tcp, bufs, nb);
    size_t skip = done > 0 ? (size_t)done : 0;
    unsigned i = 0;
    while (i < nb && skip >= bufs[i].len) {
        skip -= bufs[i].len;
        i++;
    }
    if (i == nb) {
        for (int k = 0; k < nowned; k++) free(owned[k]);
        return;
    }
    /* only a write left to libuv needs its buffers kept until on_write (libuv copies bufs itself) */
    write_ctx *wc = xmalloc(sizeof(*wc) + sizeof(uint8_t *) * (size_t)(nowned ? nowned : 1));
    wc->c = c;
    wc->n = nowned;
    memcpy(wc->bufs, owned, sizeof(uint8_t *) * (size_t)nowned);
    bufs[i].base += skip;
    bufs[i].len -= skip;
    int rc = uv_write(&wc->w, (uv_stream_t *)&c->tcp, bufs + i, nb - i, on_write);
    if (rc < 0) {
        write_ctx_free(wc);
        net_close(c, uv_strerror(rc));
    }
}

/* Send whatever the TLS engine has produced (handshake records, alerts, application data). */
static void send_tls_output(conn *c) {
    size_t len = 0;
    uint8_t *out = tls_conn_take_all(c->tls, &len);
    if (!out) return;
    if (!len) {
        free(out);
        return;
    }
    uv_buf_t b = uv_buf_init((char *)out, (unsigned)len);
    write_out(c, &out, 1, &b, 1);
}

/*
 * Write every finished answer at the head of the queue, in one write (write_out). An
 * answer is its encoded bytes plus the buffers it references (fetched
 * records, kp_writer refs); the write takes ownership of all of them.
 */
static void flush_ready(conn *c) {
    if (c->s->fatal_exit) return; /* srv_fail_stop: nothing more leaves the process */
    uint64_t seq = stor_commit_seq(c->s->st);
    int n = 0, nspans = 0, nowned = 0;
    for (req *r = c->head; r && r != c->next_start; r = r->next) {
        if (r->state == REQ_WAIT_COMMIT && seq > r->commit_seq) req_set_state(r, REQ_READY);
        if (r->state == REQ_READY && r->dropped) req_set_state(r, REQ_SILENT); /* a fault rule's drop (pipeline/fault_apply.c) */
        if (r->state != REQ_READY && r->state != REQ_SILENT) break;
        n++;
        if (r->state == REQ_READY) {
            nspans += 2 * r->out.nrefs + 1;
            nowned += 1 + r->nadopted;
        }
    }
    if (!n) return;
    int64_t now_us = clk_mono_us();
    /*
     * The usual flush (a few answers, none with many referenced records) keeps its arrays on the
     * stack: three malloc/free pairs per flush were ~10% of the transport's instructions (issue 37).
     */
    enum { FLUSH_SML = 16 };
    uint8_t *owned_sml[FLUSH_SML];
    uv_buf_t bufs_sml[FLUSH_SML];
    kp_span spans_sml[FLUSH_SML];
    bool big = nspans > FLUSH_SML || nowned > FLUSH_SML;
    uint8_t **owned = big ? xmalloc(sizeof(uint8_t *) * (size_t)(nowned ? nowned : 1)) : owned_sml;
    uv_buf_t *bufs = big ? xmalloc(sizeof(uv_buf_t) * (size_t)(nspans ? nspans : 1)) : bufs_sml;
    kp_span *spans = big ? xmalloc(sizeof(kp_span) * (size_t)(nspans ? nspans : 1)) : spans_sml;
    int no = 0, nb = 0;
    for (int i = 0; i < n; i++) {
        req *r = c->head;
        c->head = r->next;
        if (!c->head) c->tail = NULL;
        c->nqueued--;
        c->queued_bytes -= r->len;
        if (r->state == REQ_READY) {
            int k = kp_writer_spans(&r->out, spans);
            for (int j = 0; j < k; j++) bufs[nb++] = uv_buf_init((char *)spans[j].p, (unsigned)spans[j].len);
            /* now owned by the write */
            owned[no++] = r->out.buf;
            r->out.buf = NULL;
            for (int j = 0; j < r->nadopted; j++) owned[no++] = r->adopted[j];
            r->nadopted = 0;
        }
        count_done(r, now_us);
        req_free(r);
    }
    if (big) free(spans);
    if (nb && c->tls) {
        /* answers leave as TLS records: encrypt in order, send the ciphertext in one write */
        for (int i = 0; i < nb; i++)
            if (tls_conn_write(c->tls, (const uint8_t *)bufs[i].base, bufs[i].len) < 0) break;
        for (int i = 0; i < no; i++) free(owned[i]);
        send_tls_output(c);
        if (tls_conn_failed(c->tls)) net_close(c, tls_conn_error(c->tls));
    } else if (nb) {
        write_out(c, owned, no, bufs, (unsigned)nb);
    } else {
        for (int i = 0; i < no; i++) free(owned[i]);
    }
    if (big) {
        free(owned);
        free(bufs);
    }
}

static void enqueue(conn *c, req *r) {
    req_set_state(r, REQ_QUEUED);
    if (c->tail)
        c->tail->next = r;
    else
        c->head = r;
    c->tail = r;
    if (!c->next_start) c->next_start = r;
    c->nqueued++;
    c->queued_bytes += r->len;
}

/*
 * queued.max.request.bytes: Kafka's memory pool for requests read and not yet processed
 * (KIP-72; SocketServer's SimpleMemoryPool, non-strict: while any room is left a whole frame
 * is granted, so the pool overshoots by at most one frame and a frame it grants always
 * completes). Here one pool per listener kind, so a flood of unauthenticated plaintext frames
 * cannot stall the IAM listeners' clients. A frame large enough to be filled in its own buffer
 * (FILL_MIN) takes its announced size from the pool when it starts (its buffer still grows only
 * with what arrives); when the pool is full its connection is not read (Kafka mutes the
 * channel for memory pressure) until a frame is freed, which wakes the waiters: nothing is
 * dropped, and the waiting is not counted against request.read.timeout.ms. Smaller frames are
 * counted but never wait: they are bounded per connection (MAX_QUEUED) and keep small clients
 * answered while large ones wait. A frame's bytes go back when its request is freed, after its
 * answer is written (req_free).
 */
static bool pool_full(const conn *c) {
    int64_t cap = c->s->cfg->queued_max_request_bytes;
    return cap > 0 && c->s->req_pool[c->listener].used >= cap;
}

static void pool_take(conn *c, req *r) {
    r->pooled = r->len;
    c->s->req_pool[c->listener].used += (int64_t)r->len;
}

static void pool_wait(conn *c, int32_t size) {
    net_req_pool *p = &c->s->req_pool[c->listener];
    if (c->pool_wait) return;
    c->pool_wait = true;
    c->pool_next = p->waiters;
    p->waiters = c;
    int64_t now = clk_mono_ms();
    if (!p->logged_ms || now - p->logged_ms >= 10000) {
        p->logged_ms = now;
        log_warn("conn=%llu peer=%s waits: its %d-byte frame does not fit in queued.max.request.bytes=%lld (%lld bytes "
                 "of requests on the %s listeners are not yet answered); it is read once some are (at most one such "
                 "line per 10 s)", (unsigned long long)c->id, c->peer, size,
                 (long long)c->s->cfg->queued_max_request_bytes, (long long)p->used, lsn_name(c->listener));
    }
}

static void pool_unwait(conn *c) {
    if (!c->pool_wait) return;
    for (conn **pp = &c->s->req_pool[c->listener].waiters; *pp; pp = &(*pp)->pool_next)
        if (*pp == c) {
            *pp = c->pool_next;
            break;
        }
    c->pool_wait = false;
}

void net_pool_release(req *r) {
    conn *c = r->c;
    net_req_pool *p = &c->s->req_pool[c->listener];
    p->used -= (int64_t)r->pooled;
    r->pooled = 0;
    if (pool_full(c)) return;
    /* every waiter tries again (from the pumps, not from inside whoever freed r) */
    while (p->waiters) {
        conn *w = p->waiters;
        p->waiters = w->pool_next;
        w->pool_wait = false;
        w->pool_retry = true;
        net_pump_later(w);
    }
}

/* Where the next bytes of the frame being filled go, growing its buffer if it is full. */
static uint8_t *fill_room(conn *c, size_t *room) {
    req *r = c->filling;
    if (c->fill_have == c->fill_cap) {
        size_t cap = c->fill_cap * 2 < r->len ? c->fill_cap * 2 : r->len;
        uint8_t *b = xrealloc(r->frame - r->frame_off, r->frame_off + cap);
        r->frame = b + r->frame_off;
        c->fill_cap = cap;
    }
    *room = c->fill_cap - c->fill_have;
    return r->frame + c->fill_have;
}

static void fill_advance(conn *c, size_t got) {
    c->fill_have += got;
    if (c->fill_have < c->filling->len) return;
    enqueue(c, c->filling);
    c->filling = NULL;
}

/*
 * The read buffer holds only a frame cut short by the end of a read; once every frame in it has
 * been taken it goes back, so an idle connection holds no read buffer (it held 64 KiB, or 128 KiB
 * after a frame straddled two reads), and the busy ones share one (issue 37): under load most
 * connections end a read on a frame boundary. It goes back to the loop's spare (srv.spare_rbuf),
 * which the next read of any connection takes: a 64 KiB block is above glibc's small bins, and its
 * malloc from the heap (a large-bin search and a split) was ~1,000 instructions per read, 2% of
 * a Produce+Fetch pair's. One spare suffices: libuv reads one connection at a time and each read
 * gives it back before the next. Anything else goes back to the heap.
 */
#define RBUF_CAP 65536

static void release_rbuf(conn *c) {
    if (c->rlen || !c->rbuf) return;
    if (!c->s->spare_rbuf && c->rcap == RBUF_CAP)
        c->s->spare_rbuf = c->rbuf;
    else
        free(c->rbuf);
    c->rbuf = NULL;
    c->rcap = 0;
}

void net_free_spare(srv *s) {
    free(s->spare_rbuf);
    s->spare_rbuf = NULL;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    conn *c = h->data;
    (void)suggested;
    if (c->filling && !c->tls) {
        size_t room;
        uint8_t *p = fill_room(c, &room);
        *buf = uv_buf_init((char *)p, (unsigned)room);
        return;
    }
    if (!c->rbuf && c->s->spare_rbuf) {
        c->rbuf = c->s->spare_rbuf;
        c->rcap = RBUF_CAP;
        c->s->spare_rbuf = NULL;
    }
    XGROW(c->rbuf, c->rcap, c->rlen + RBUF_CAP, RBUF_CAP);
    *buf = uv_buf_init((char *)c->rbuf + c->rlen, (unsigned)(c->rcap - c->rlen));
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf);

static void set_reading(conn *c, bool on) {
    if (c->closing || c->reading == on) return;
    c->reading = on;
    if (on) {
        /* the time reading was stopped was ours, not the sender's */
        if (c->frame_started_ms) c->frame_started_ms = clk_mono_ms();
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    } else {
        uv_read_stop((uv_stream_t *)&c->tcp);
    }
}

/* Part of a frame (or of a TLS handshake or record) has arrived and waits for the rest. */
static bool partial_frame(const conn *c) {
    if (c->filling || c->rlen) return true;
    return c->tls && (!tls_conn_established(c->tls) || tls_conn_has_pending_in(c->tls));
}

/* request.read.timeout.ms runs from the first byte of a frame until the frame is whole. */
static void track_frame_start(conn *c) {
    if (!partial_frame(c))
        c->frame_started_ms = 0;
    else if (!c->frame_started_ms)
        c->frame_started_ms = clk_mono_ms();
}

/*
 * Smaller frames are copied out (a small block from glibc's bins and a copy of at most 4 KiB cost
 * less than a new 64 KiB read buffer), so the read buffer goes back to the loop's spare.
 */
#define TAKE_RBUF_MIN 4096

/*
 * A whole frame of at least TAKE_RBUF_MIN bytes at the start of the read buffer, followed by
 * fewer bytes than its own: the buffer becomes the frame's, shrunk to it, and what follows is
 * copied out instead of the frame (issue 37: copying each frame out of the read buffer was 10% of
 * the user-space instructions per record produced, 4-5% of the CPU at 8 partitions). Most reads
 * hold one request and nothing after it, so usually nothing is copied. Shrinking a block does not
 * move it (glibc's realloc splits the tail off, or mremap()s a mapped block), and the frame then
 * holds its own size only, as when copied.
 */
static void take_rbuf(conn *c, req *r) {
    size_t used = 4 + r->len, rest = c->rlen - used;
    uint8_t *next = NULL;
    size_t next_cap = 0;
    if (rest) {
        next_cap = rest + RBUF_CAP; /* what on_alloc would grow it to for the next read */
        next = xmalloc(next_cap);
        memcpy(next, c->rbuf + used, rest);
    }
    r->frame_off = 4;
    r->frame = (uint8_t *)xrealloc(c->rbuf, used) + 4;
    c->rbuf = next;
    c->rcap = next_cap;
    c->rlen = rest;
}

/*
 * Cut complete frames out of the read buffer into queued requests; a large
 * frame that has only begun to arrive becomes the one being filled.
 */
static bool take_frames(conn *c) {
    size_t pos = 0;
    while (!c->filling && c->rlen - pos >= 4) {
        int32_t size = kp_get_i32(c->rbuf + pos);
        /* before authentication a SASL listener takes only small frames (Kafka's sasl.server.max.receive.size) */
        bool unauthenticated = lsn_sasl(c->listener) && c->sasl_state != CONN_SASL_AUTHENTICATED;
        int64_t max = unauthenticated ? c->s->cfg->sasl_server_max_receive_size : c->s->cfg->socket_request_max_bytes;
        if (size < 0 || size > max) {
            log_warn("conn=%llu peer=%s refused frame: size %d is outside [0, %s=%lld]%s", (unsigned long long)c->id,
                     c->peer, size, unauthenticated ? "sasl.server.max.receive.size" : "socket.request.max.bytes",
                     (long long)max, unauthenticated ? " before authentication" : "");
            net_close(c, "frame size out of range");
            return false;
        }
        size_t have = c->rlen - pos - 4;
        bool whole = have >= (size_t)size;
        if (!whole && (size_t)size < FILL_MIN) break;
        if (!whole && pool_full(c)) {
            pool_wait(c, size); /* its bytes stay in rbuf; net_pump cuts them again once woken */
            break;
        }
        /* not calloc: glibc's (2.36) bypasses its per-thread cache, where this size is a pop (issue 37) */
        req *r = xmalloc(sizeof(*r));
        memset(r, 0, sizeof(*r));
        r->c = c;
        r->len = (size_t)size;
        pool_take(c, r);
        if (whole && pos == 0 && have - r->len < r->len && r->len >= TAKE_RBUF_MIN) {
            take_rbuf(c, r);
            enqueue(c, r);
            continue;
        }
        /*
         * Under a bounded pool the frame's whole size is already counted: one allocation of it
         * saves the copies of growing it (a realloc of a heap block copies it, which doubled the
         * peak of a flood), and pages not yet written are not resident (glibc maps blocks over
         * 32 MiB fresh), so a sender that announces much and sends little still costs little.
         */
        size_t cap = whole || c->s->cfg->queued_max_request_bytes > 0 ? r->len
                                                                       : (r->len < FILL_FIRST_CAP ? r->len : FILL_FIRST_CAP);
        /*
         * A frame cut short holds what has arrived (at most r->len). A whole frame holds its own
         * size only: it took the size of everything left in rbuf (issue 37), so each of the
         * small frames in one 64 KiB read held up to 64 KiB, and under 50 producers the frames'
         * buffers peaked at 53 MB where their bytes were 19 MB.
         */
        if (!whole && cap < have) cap = have;
        r->frame = xmalloc(cap ? cap : 1);
        size_t take = whole ? r->len : have;
        memcpy(r->frame, c->rbuf + pos + 4, take);
        pos += 4 + take;
        if (whole) {
            enqueue(c, r);
        } else {
            c->filling = r;
            c->fill_have = take;
            c->fill_cap = cap;
        }
    }
    if (pos) { /* rbuf may be NULL when nothing was in it (release_rbuf) */
        memmove(c->rbuf, c->rbuf + pos, c->rlen - pos);
        c->rlen -= pos;
    }
    return true;
}

void net_hold_for_commit(conn *c) {
    if (c->in_commit_list) return;
    c->in_commit_list = true;
    c->commit_next = c->s->commit_list;
    c->s->commit_list = c;
}

static void on_shutdown(uv_shutdown_t *sh, int status) {
    conn *c = sh->data;
    (void)status;
    net_close(c, c->close_after_flush);
}

void net_close_after_flush(conn *c, const char *why) {
    if (c->closing || c->close_after_flush) return;
    c->close_after_flush = why;
}

/* Once the last answer before a close_after_flush is out, shut the write side down, then close. */
static void maybe_shutdown(conn *c) {
    if (!c->close_after_flush || c->closing || c->head) return;
    set_reading(c, false);
    c->shutdown.data = c;
    if (uv_shutdown(&c->shutdown, (uv_stream_t *)&c->tcp, on_shutdown) != 0) net_close(c, c->close_after_flush);
}

/* Bytes of an answer: its buffer and the stored bytes it references. */
static size_t answer_bytes(const req *r) {
    size_t n = r->out.len;
    for (int i = 0; i < r->out.nrefs; i++) n += r->out.refs[i].len;
    return n;
}

void net_pump(conn *c) {
    if (c->closing || c->s->fatal_exit) return;
    if (c->pool_retry) { /* woken by net_pool_release: the frame that waited may start now */
        c->pool_retry = false;
        if (!take_frames(c)) return;
        track_frame_start(c);
    }
    size_t limit = (size_t)c->s->cfg->socket_response_queue_max_bytes;
    size_t answered = 0; /* bytes of answers made in this pump, not yet handed to the socket */
    while (c->next_start && !c->close_after_flush) {
        /* answers the peer has not read yet: start nothing more until they drain (on_write) */
        if (unsent(c) > limit || muted(c)) break;
        req *r = c->next_start;
        /* a parked request mutes the connection until it is answered */
        req *prev_parked = NULL;
        for (req *q = c->head; q != r; q = q->next)
            if (q->state == REQ_PARKED) prev_parked = q;
        if (prev_parked) break;
        c->next_start = r->next;
        c->requests++;
        c->s->requests++;
        if (!c->s->dispatch(c->s, r)) {
            /*
             * Refused by closing, unanswered. Kafka answers a connection's requests in order, so
             * the answers ready before this one still go out first (flush_ready, then the
             * shutdown below); closing at once lost them (issue 31: ApiVersions v0 and
             * Metadata v0 in one write lost the ApiVersions answer).
             */
            count_closed(r, clk_mono_us());
            r->started_us = 0; /* counted as closed: not again as done */
            req_set_state(r, REQ_SILENT);
            net_close_after_flush(c, "request refused");
            break;
        }
        if (c->closing) return;
        if (r->state == REQ_READY && (answered += answer_bytes(r)) > limit) {
            flush_ready(c);
            answered = 0;
            if (c->head != c->next_start) break; /* an earlier answer waits for its commit: go on after it */
        }
    }
    flush_ready(c);
    if (c->close_after_flush) {
        /* requests after the refused one are never answered */
        while (c->next_start) {
            req *r = c->next_start;
            c->next_start = r->next;
            req_set_state(r, REQ_SILENT);
        }
        flush_ready(c);
        maybe_shutdown(c);
        return;
    }
    if (!c->closing) set_reading(c, may_read(c));
}

/*
 * The ciphertext just read sits at rbuf + rlen; the engine copies it, and the
 * plaintext it yields is written over it, so frames are cut as for plaintext.
 */
static bool decrypt(conn *c, size_t nread) {
    bool was_established = tls_conn_established(c->tls);
    int rc = tls_conn_feed(c->tls, c->rbuf + c->rlen, nread);
    for (;;) {
        if (rc < 0) break;
        size_t got = 0, room;
        if (c->filling) {
            uint8_t *p = fill_room(c, &room);
            rc = tls_conn_read(c->tls, p, room, &got);
            fill_advance(c, got);
        } else {
            XGROW(c->rbuf, c->rcap, c->rlen + 16384, 65536);
            room = c->rcap - c->rlen;
            rc = tls_conn_read(c->tls, c->rbuf + c->rlen, room, &got);
            c->rlen += got;
            /* a large frame may start here: what follows it must go to its buffer */
            if (!take_frames(c)) return false;
        }
        if (rc != 0 || got < room) break;
    }
    send_tls_output(c);
    if (rc < 0) {
        log_warn("conn=%llu peer=%s TLS %s failed: %s", (unsigned long long)c->id, c->peer,
                 was_established ? "connection" : "handshake", tls_conn_error(c->tls));
        net_close(c, "TLS failure");
        return false;
    }
    if (!was_established && tls_conn_established(c->tls)) {
        const char *sni = tls_conn_sni(c->tls);
        /* the health check names itself in SNI, as it has no client id yet */
        log_write(sni && !strcmp(sni, PROBE_CLIENT_ID) ? LOG_DEBUG : LOG_INFO, "conn=%llu TLS established: %s %s sni=%s",
                  (unsigned long long)c->id, tls_conn_version(c->tls), tls_conn_cipher(c->tls), sni ? sni : "-");
    }
    if (rc == TLS_CLOSED) {
        net_close(c, "peer sent TLS close_notify");
        return false;
    }
    return true;
}

static void read_conn(conn *c, ssize_t nread) {
    if (nread < 0) {
        size_t pending = c->filling ? c->fill_have + 4 : c->rlen;
        if (pending) log_warn("conn=%llu closed by peer inside a frame (%zu bytes pending)", (unsigned long long)c->id, pending);
        net_close(c, nread == UV_EOF ? "peer closed" : uv_strerror((int)nread));
        return;
    }
    if (nread == 0) return;
    c->last_active_ms = clk_mono_ms();
    if (c->tls) {
        if (!decrypt(c, (size_t)nread)) return;
    } else if (c->filling) {
        fill_advance(c, (size_t)nread);
    } else {
        c->rlen += (size_t)nread;
    }
    if (!take_frames(c)) return;
    release_rbuf(c);
    track_frame_start(c);
    net_pump(c);
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf) {
    (void)buf;
    IN_CONN_SCOPE((conn *)st->data, read_conn(st->data, nread));
}

void net_pump_later(conn *c) {
    if (c->in_pump_list || c->closing) return;
    c->in_pump_list = true;
    c->pump_next = c->s->pump_list;
    c->s->pump_list = c;
}

bool net_pumps_pending(const srv *s) { return s->pump_list != NULL; }

void net_run_pumps(srv *s) {
    while (s->pump_list) {
        conn *c = s->pump_list;
        s->pump_list = c->pump_next;
        c->in_pump_list = false;
        net_pump(c);
    }
}

int net_fail_commit(srv *s, int *closed) {
    int answered = 0, n = 0;
    for (conn *c = s->commit_list; c; c = c->commit_next) n++;
    conn **doomed = xcalloc((size_t)n + 1, sizeof *doomed);
    int ndoomed = 0;
    for (conn *c = s->commit_list; c; c = c->commit_next) {
        for (req *r = c->head; r && r != c->next_start; r = r->next) {
            if (r->state != REQ_WAIT_COMMIT) continue;
            if (!r->commit_failed) {
                doomed[ndoomed++] = c; /* closed below, once the list is no longer walked */
                break;
            }
            r->commit_failed(s, r);
            req_respond_again(r);
            answered++;
        }
    }
    for (int i = 0; i < ndoomed; i++) net_close(doomed[i], "its answer was held for a storage commit that failed");
    free(doomed);
    *closed = ndoomed;
    net_after_commit(s);
    return answered;
}

void net_after_commit(srv *s) {
    conn *list = s->commit_list;
    s->commit_list = NULL;
    while (list) {
        conn *c = list;
        list = c->commit_next;
        c->in_commit_list = false;
        net_pump(c);
    }
}

const char *lsn_name(listener_kind k) {
    static const char *const names[] = {"plaintext", "iam", "sasl_plaintext", "external", "external_iam"};
    return names[k];
}

/*
 * Admission: max.connections and max.connection.creation.rate. Kafka's acceptor stops taking
 * connections at the first and paces them to the second, and the kernel's listen backlog holds
 * the rest. libuv does the same when a connection it hands over is not taken with uv_accept: it
 * stops watching that listener until it is. Served clients go on meanwhile; the held ones are
 * taken when a connection closes or the rate allows.
 */

static void accept_conn(listener *l);

/* 0: accept now (a token of the rate taken); -1: not until a connection closes; else ms to wait. */
static int64_t admit_wait(srv *s) {
    const config *cfg = s->cfg;
    if (cfg->max_connections > 0 && s->nconns >= cfg->max_connections) return -1;
    double rate = (double)cfg->max_connection_creation_rate;
    if (rate <= 0) return 0;
    int64_t now = clk_mono_ms();
    s->adm.tokens = s->adm.refill_ms ? fmin(rate, s->adm.tokens + (double)(now - s->adm.refill_ms) * rate / 1000.0) : rate;
    s->adm.refill_ms = now;
    if (s->adm.tokens >= 1) {
        s->adm.tokens -= 1;
        return 0;
    }
    return (int64_t)ceil((1 - s->adm.tokens) * 1000.0 / rate);
}

static void on_admission_timer(uv_timer_t *t);

static void admission_arm(srv *s, int64_t ms) {
    if (!s->adm.timer_ready) {
        uv_timer_init(s->loop, &s->adm.timer);
        s->adm.timer.data = s;
        s->adm.timer_ready = true;
    }
    clk_timer_start(&s->adm.timer, on_admission_timer, ms);
}

/* A connection closed: a held one may be taken now (from the timer, not from inside net_close). */
static void admission_after_close(srv *s) {
    if (s->adm.held) admission_arm(s, 0);
}

static void hold(srv *s, listener *l, int64_t wait) {
    if (!l->held) {
        l->held = true;
        s->adm.held++;
    }
    if (!s->adm.logged) {
        s->adm.logged = true;
        if (wait < 0)
            log_warn("conn: max.connections=%lld reached (%d open): new connections wait in the listen backlog until "
                     "one closes", (long long)s->cfg->max_connections, s->nconns);
        else
            log_warn("conn: more than max.connection.creation.rate=%lld new connections per second: the others wait "
                     "in the listen backlog", (long long)s->cfg->max_connection_creation_rate);
    }
    if (wait > 0) admission_arm(s, wait);
}

/* Take held connections while admission allows. */
static void on_admission_timer(uv_timer_t *t) {
    srv *s = t->data;
    if (s->stopping) return;
    for (int i = 0; i < s->nnodes && s->adm.held; i++)
        for (int k = 0; k < LSN_COUNT && s->adm.held; k++) {
            listener *l = &s->nodes[i].lsn[k];
            if (!l->held) continue;
            int64_t wait = admit_wait(s);
            if (wait != 0) {
                if (wait > 0) admission_arm(s, wait);
                return;
            }
            l->held = false;
            s->adm.held--;
            accept_conn(l);
        }
    if (!s->adm.held) s->adm.logged = false;
}

static void on_connection(uv_stream_t *server, int status) {
    listener *l = server->data;
    srv *s = l->s;
    if (status < 0) {
        log_warn("accept failed: %s", uv_strerror(status));
        return;
    }
    int64_t wait = admit_wait(s);
    if (wait != 0) {
        hold(s, l, wait);
        return;
    }
    accept_conn(l);
}

static void accept_conn(listener *l) {
    srv *s = l->s;
    uv_stream_t *server = (uv_stream_t *)&l->tcp;
    conn *c = xcalloc(1, sizeof(*c));
    uv_tcp_init(s->loop, &c->tcp);
    c->tcp.data = c;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
        uv_close((uv_handle_t *)&c->tcp, on_close);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    c->s = s;
    c->id = ++s->next_conn_id;
    c->node = l->node;
    c->listener = l->kind;
    s->metrics.conns_opened[l->kind]++;
    if (lsn_tls(l->kind)) {
        c->tls = tls_conn_new(s->tls);
    }
    c->opened_ms = c->last_active_ms = clk_mono_ms();
    if (c->tls) c->frame_started_ms = c->opened_ms; /* the handshake is due within request.read.timeout.ms */
    net_peer_name(&c->tcp, c->peer, sizeof c->peer);
    c->next = s->conns;
    if (s->conns) s->conns->prev = c;
    s->conns = c;
    s->nconns++;
    set_reading(c, true);
}

/* ports.auto: the port the OS picked, which Metadata then advertises */
static int bound_port(uv_tcp_t *tcp, int32_t *port) {
    struct sockaddr_storage a;
    int len = sizeof a;
    int rc = uv_tcp_getsockname(tcp, (struct sockaddr *)&a, &len);
    if (rc == 0)
        *port = ntohs(a.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&a)->sin6_port : ((struct sockaddr_in *)&a)->sin_port);
    return rc;
}

/* Bind and listen node i's listener of kind k (its port, or a free one under ports.auto the first time). */
static int listen_one(srv *s, int i, int k, char *err, size_t errlen) {
    const char *host = s->cfg->bind_address;
    node *n = &s->nodes[i];
    listener *l = &n->lsn[k];
    struct sockaddr_storage addr;
    /* once bound, a listener keeps its port: Metadata advertised it (a broker brought back up) */
    int want = s->cfg->ports_auto && !l->s ? 0 : n->ports[k];
    int rc = strchr(host, ':') ? uv_ip6_addr(host, want, (struct sockaddr_in6 *)&addr)
                               : uv_ip4_addr(host, want, (struct sockaddr_in *)&addr);
    if (rc == 0) {
        uv_tcp_init(s->loop, &l->tcp);
        l->tcp.data = l;
        l->s = s;
        l->node = i;
        l->kind = (listener_kind)k;
        l->held = false;
        rc = uv_tcp_bind(&l->tcp, (struct sockaddr *)&addr, 0);
        if (rc == 0) rc = uv_listen((uv_stream_t *)&l->tcp, 1024, on_connection);
        if (rc == 0 && want == 0) rc = bound_port(&l->tcp, &n->ports[k]);
        if (rc != 0) uv_close((uv_handle_t *)&l->tcp, NULL);
    }
    if (rc != 0) {
        /* the key that moves it: broker i listens on the key's port + i */
        static const char *const keys[LSN_COUNT] = {"plaintext.port", "iam.port", "sasl.plaintext.port", "external.port",
                                                    "external.iam.port"};
        char hint[256] = "";
        if (rc == UV_EADDRINUSE) cfg_port_taken_hint(hint, sizeof hint, keys[k], (long)(n->ports[k] - i), true);
        snprintf(err, errlen, "cannot listen on %s:%d (%s listener of node %d): %s%s", host, n->ports[k],
                 lsn_name((listener_kind)k), n->id, uv_strerror(rc), hint);
    }
    return rc ? -1 : 0;
}

int net_listen(srv *s, char *err, size_t errlen) {
    for (int i = 0; i < s->nnodes; i++)
        for (int k = 0; k < LSN_COUNT; k++)
            if (s->nodes[i].ports[k] && listen_one(s, i, k, err, errlen) != 0) return -1;
    return 0;
}

static void on_listener_closed(uv_handle_t *h) {
    listener *l = h->data;
    l->closing = false;
}

int net_node_down(srv *s, int i) {
    node *n = &s->nodes[i];
    int closed = 0;
    for (int k = 0; k < LSN_COUNT; k++) {
        listener *l = &n->lsn[k];
        if (!n->ports[k]) continue;
        if (l->held) {
            l->held = false;
            s->adm.held--;
        }
        l->closing = true;
        uv_close((uv_handle_t *)&l->tcp, on_listener_closed);
    }
    for (conn *c = s->conns, *next; c; c = next) {
        next = c->next;
        if (c->node != i) continue;
        net_close(c, "its synthetic broker was taken down (admin API)");
        closed++;
    }
    return closed;
}

int net_node_up(srv *s, int i, char *err, size_t errlen) {
    node *n = &s->nodes[i];
    for (int k = 0; k < LSN_COUNT; k++)
        if (n->ports[k] && n->lsn[k].closing) {
            snprintf(err, errlen, "the listeners of node %d are still closing; try again", n->id);
            return -1;
        }
    for (int k = 0; k < LSN_COUNT; k++) {
        if (!n->ports[k] || listen_one(s, i, k, err, errlen) == 0) continue;
        for (int j = 0; j < k; j++) /* all or nothing: a half-up broker would confuse more than help */
            if (n->ports[j]) {
                n->lsn[j].closing = true;
                uv_close((uv_handle_t *)&n->lsn[j].tcp, on_listener_closed);
            }
        return -1;
    }
    return 0;
}

void net_close_all(srv *s) {
    while (s->conns) net_close(s->conns, "shutdown");
    if (s->adm.timer_ready && !uv_is_closing((uv_handle_t *)&s->adm.timer)) uv_close((uv_handle_t *)&s->adm.timer, NULL);
    for (int i = 0; i < s->nnodes; i++)
        for (int k = 0; k < LSN_COUNT; k++) {
            uv_handle_t *h = (uv_handle_t *)&s->nodes[i].lsn[k].tcp;
            if (s->nodes[i].ports[k] && !s->nodes[i].down && h->loop && !uv_is_closing(h)) uv_close(h, NULL);
        }
}

/* A frame that has not arrived whole within request.read.timeout.ms closes its connection. */
static bool read_timed_out(conn *c, int64_t now) {
    int64_t limit = c->s->cfg->request_read_timeout_ms;
    if (limit <= 0 || !c->frame_started_ms || !c->reading || now - c->frame_started_ms <= limit) return false;
    if (c->tls && !tls_conn_established(c->tls))
        log_warn("conn=%llu peer=%s closed: the TLS handshake did not complete within request.read.timeout.ms=%lld",
                 (unsigned long long)c->id, c->peer, (long long)limit);
    else if (c->filling || c->rlen >= 4)
        log_warn("conn=%llu peer=%s closed: %zu of the %zu bytes of a request frame arrived in %lld ms "
                 "(request.read.timeout.ms=%lld)", (unsigned long long)c->id, c->peer,
                 c->filling ? c->fill_have : c->rlen - 4, c->filling ? c->filling->len : (size_t)kp_get_i32(c->rbuf),
                 (long long)(now - c->frame_started_ms), (long long)limit);
    else
        log_warn("conn=%llu peer=%s closed: a request frame began %lld ms ago and is still incomplete "
                 "(request.read.timeout.ms=%lld)", (unsigned long long)c->id, c->peer,
                 (long long)(now - c->frame_started_ms), (long long)limit);
    net_close(c, "request read timeout");
    return true;
}

void net_sweep_idle(srv *s) {
    int64_t idle = s->cfg->connections_max_idle_ms;
    int64_t now = clk_mono_ms();
    conn *c = s->conns;
    while (c) {
        conn *next = c->next;
        if (!read_timed_out(c, now) && idle > 0 && !c->head && !c->pool_wait && now - c->last_active_ms > idle)
            net_close(c, "idle longer than connections.max.idle.ms");
        c = next;
    }
}
