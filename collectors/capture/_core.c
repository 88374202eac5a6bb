/*
 * collectors.capture._core: the hot loop of the packet-capture analysis.
 *
 * One Core object reads a pcap or pcapng stream fed to it in chunks, decodes the link, IP
 * and TCP headers at fixed offsets (past MPLS labels, through IP-in-IP, GRE, ERSPAN, VXLAN,
 * Geneve and Teredo tunnels), keeps per-connection state in a bounded table and counts what
 * Wireshark's TCP sequence analysis would flag. It hands Python only what Python
 * aggregates: a row per second, a row per finished connection, the silences longer than the
 * gap threshold, the first TLS handshake bytes of each direction (past a plaintext prelude,
 * within a bound) and the problems met in the file. Python never sees a packet unless the
 * Core was made with decode=True (tests compare every packet with tshark that way).
 *
 * Every read of packet or file bytes is bounds-checked against the captured length: a
 * hostile capture may make us stop early, never read out of bounds. Memory is bounded:
 * the connection table has a fixed capacity (least recently active connections are
 * finished early when it is full), and the unacked-segment lists and TLS buffers share
 * fixed budgets.
 *
 * The TCP analysis follows tcp_analyze_sequence_number() of Wireshark 4.0
 * (epan/dissectors/packet-tcp.c) rule by rule, with the same unsigned arithmetic, so
 * that the counts equal tshark's; analyse() below names where it departs from it.
 *
 * Licence. packet-tcp.c is part of Wireshark (by Gerald Combs, copyright 1998 Gerald Combs
 * and Wireshark's contributors) and is under the GNU General Public License version 2 or
 * (at your option) any later version. Following its rules makes this file a work based on
 * it, so this file keeps that licence: GPL-2.0-or-later. Perfcase as a whole is under the
 * GNU Affero General Public License version 3 or later (LICENSE): "any later version" lets
 * this file be used under GPLv3, and section 13 of GPLv3 permits combining a GPLv3 work with
 * an AGPLv3 work into one; the combination is conveyed under the AGPL, this file's part
 * staying under the GPL. The names of the flags and constants below are Wireshark's
 * (packet-tcp.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* ---- limits ------------------------------------------------------------------------- */

#define MAX_RECORD (16u * 1024u * 1024u) /* a longer record means the file is damaged */
#define MAX_IFACES 4096
#define TCP_MAX_UNACKED_SEGMENTS 10000   /* as packet-tcp.h */
#define SEGMENT_BUDGET (64u * 1024u * 1024u)
#define TLS_MAX_HELLO (16384u + 9u)
#define TLS_BUDGET (32u * 1024u * 1024u)
#define TLS_MAX_TRIES 16
/* How far past a plaintext prelude (HTTP CONNECT, SOCKS, STARTTLS, a PROXY protocol header)
 * each direction is searched for its first handshake record: segments and payload bytes
 * before it. */
#define TLS_PRELUDE_SEGMENTS 16
#define TLS_PRELUDE_BYTES 16384u
#define MAX_TUNNELS 4 /* tunnels inside tunnels decoded, outermost first */
#define LINGER_NS (60LL * 1000000000LL) /* a closed connection is finished after this idle */
#define NO_TIME INT64_MIN

/* ---- TCP flags (packet-tcp.h) --------------------------------------------------------- */

#define TH_FIN 0x0001
#define TH_SYN 0x0002
#define TH_RST 0x0004
#define TH_PUSH 0x0008
#define TH_ACK 0x0010
#define TH_MASK 0x0FFF

/* Analysis flags: our own bit values, Wireshark's meanings. */
#define A_RETRANSMISSION 0x0001
#define A_LOST_PACKET 0x0002
#define A_ACK_LOST_PACKET 0x0004
#define A_KEEP_ALIVE 0x0008
#define A_DUPLICATE_ACK 0x0010
#define A_ZERO_WINDOW 0x0020
#define A_ZERO_WINDOW_PROBE 0x0040
#define A_ZERO_WINDOW_PROBE_ACK 0x0080
#define A_KEEP_ALIVE_ACK 0x0100
#define A_OUT_OF_ORDER 0x0200
#define A_FAST_RETRANSMISSION 0x0400
#define A_WINDOW_UPDATE 0x0800
#define A_REUSED_PORTS 0x1000
#define A_SPURIOUS_RETRANSMISSION 0x2000
#define A_ANY_RETRANSMISSION \
    (A_RETRANSMISSION | A_FAST_RETRANSMISSION | A_SPURIOUS_RETRANSMISSION)

#define GT_SEQ(x, y) ((int32_t)((y) - (x)) < 0)
#define LT_SEQ(x, y) ((int32_t)((x) - (y)) < 0)
#define LE_SEQ(x, y) ((int32_t)((x) - (y)) <= 0)

/* Event codes: the first item of every tuple handed to Python. */
enum { EV_SECOND, EV_CONN, EV_GAP, EV_TLS, EV_PROBLEM, EV_PACKET, EV_IFACE };
/* Why a connection row was emitted. */
enum { END_OPEN, END_CLOSED, END_EVICTED, END_REUSED };

enum { TUN_GRE, TUN_ERSPAN, TUN_VXLAN, TUN_GENEVE, TUN_IP_IN_IP, TUN_TEREDO, TUN_MPLS, N_TUNNELS };
/* What a silence came before. */
enum { BEFORE_REQUEST, BEFORE_RESPONSE, BEFORE_DATA, BEFORE_CLOSE, BEFORE_ACK };

/* Histogram bucket upper edges in nanoseconds: 1-2-5 from 1 us to 500 s, then overflow. */
#define N_EDGES 27
static const int64_t EDGES[N_EDGES] = {
    1000LL, 2000LL, 5000LL, 10000LL, 20000LL, 50000LL, 100000LL, 200000LL, 500000LL,
    1000000LL, 2000000LL, 5000000LL, 10000000LL, 20000000LL, 50000000LL, 100000000LL,
    200000000LL, 500000000LL, 1000000000LL, 2000000000LL, 5000000000LL, 10000000000LL,
    20000000000LL, 50000000000LL, 100000000000LL, 200000000000LL, 500000000000LL};
#define N_BUCKETS (N_EDGES + 1)

typedef struct {
    uint64_t counts[N_BUCKETS];
    double sum_ns;
    int64_t max_ns;
} hist_t;

static void hist_add(hist_t *h, int64_t ns)
{
    int lo = 0, hi = N_EDGES; /* the first edge >= ns */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (EDGES[mid] < ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    h->counts[lo]++;
    h->sum_ns += (double)ns;
    if (ns > h->max_ns)
        h->max_ns = ns;
}

/* ---- byte readers --------------------------------------------------------------------- */

static inline uint16_t be16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }
static inline uint32_t be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static inline uint16_t le16(const uint8_t *p) { return (uint16_t)((p[1] << 8) | p[0]); }
static inline uint32_t le32(const uint8_t *p)
{
    return ((uint32_t)p[3] << 24) | ((uint32_t)p[2] << 16) | ((uint32_t)p[1] << 8) | p[0];
}
static inline uint16_t rd16(const uint8_t *p, int big) { return big ? be16(p) : le16(p); }
static inline uint32_t rd32(const uint8_t *p, int big) { return big ? be32(p) : le32(p); }

/* ---- per-connection state ------------------------------------------------------------- */

typedef struct {
    /* Wireshark's tcp_analyze_seq_flow_info_t and tcp_flow_t fields that the flags need. */
    uint32_t base_seq;
    uint8_t base_seq_set;
    uint32_t nextseq;
    int64_t nextseqtime;
    uint32_t maxseqtobeacked;
    uint32_t lastack;
    int64_t lastacktime;
    uint32_t window;
    uint32_t dupacknum; /* unsigned as in Wireshark: -1 is 0xffffffff, which is >= 2 */
    uint32_t lastsegmentflags;
    /* the nextseq of each unacked segment: only their number matters (it caps at 10000) */
    uint32_t *segs;
    uint32_t nsegs, capsegs, segcount;
    uint8_t seg_approx;
    /* what we report */
    uint64_t packets, bytes, payload;
    uint8_t fin, syn;
    uint16_t mss;
    int8_t wscale;
    uint8_t sack_perm, timestamps;
    /* the first TLS handshake bytes of this direction */
    uint8_t tls_state; /* 0 nothing yet, 1 collecting, 2 done */
    uint8_t tls_tries;
    uint8_t tls_prelude_segs; /* payload segments seen before the handshake */
    uint32_t tls_prelude; /* their payload bytes */
    uint32_t tls_next, tls_have, tls_need, tls_cap;
    uint8_t *tls_buf;
    int64_t tls_ts;
} flow_t;

typedef struct {
    uint8_t family;
    uint8_t addr[2][16]; /* addr[d]: the source of direction-d packets */
    uint16_t port[2];
    int32_t hnext;            /* hash chain */
    int32_t lprev, lnext;     /* activity list */
    uint8_t list;             /* 0 open, 1 closed */
    uint8_t in_use;
    int8_t client;            /* direction of the client's packets */
    uint8_t server_guessed;
    uint8_t rst;
    int8_t last_payload_dir;
    uint64_t id;
    int64_t first_ts, last_ts;
    int64_t syn_ts, synack_ts, hs_ack_ts;
    int64_t ts_mru_syn, ts_first_rtt;
    int64_t last_payload_ts[2];
    uint32_t requests, responses;
    uint32_t retransmissions, duplicate_acks, zero_windows, out_of_order, rst_packets;
    flow_t flow[2];
} conn_t;

typedef struct {
    uint32_t linktype;
    int64_t units;     /* timestamp units per second */
    int64_t offset_s;  /* if_tsoffset */
} iface_t;

typedef struct {
    PyObject_HEAD
    /* container */
    int format;        /* 0 not known yet, 1 pcap, 2 pcapng */
    int big;           /* the file (or section) is big-endian */
    int pcap_nsec, pcap_modified;
    uint32_t pcap_linktype;
    iface_t *ifaces;
    int n_ifaces;
    uint64_t offset;   /* absolute file offset of the next byte fed */
    int stopped;
    uint64_t frame;
    int64_t last_ts;
    /* options */
    int decode;
    PyObject *streams; /* with decode: the streams whose packets are wanted (NULL: all) */
    int64_t gap_ns;
    uint32_t max_conns;
    /* connections */
    conn_t *conns;
    uint32_t n_conns, cap_conns;
    int32_t free_head;
    int32_t *buckets;
    uint32_t n_buckets;
    int32_t head[2], tail[2];
    uint32_t live;
    uint64_t next_id;
    uint64_t seg_bytes, tls_bytes;
    /* the current second */
    int64_t sec;
    uint64_t sec_packets, sec_bytes, sec_conns, sec_retrans;
    /* counters */
    uint64_t packets, bytes, ipv4, ipv6, tcp, udp, other_ip, non_ip, fragments, malformed,
        truncated, unsupported_link, short_tcp, connections, evicted, syn, synack, rst, fin,
        tls_skipped, approx_segments, no_timestamp, unreadable_tunnel;
    uint64_t tunnels[N_TUNNELS]; /* packets that came through each kind (by layer) */
    uint64_t flagcount[16];
    uint64_t linkcount[8]; /* by link_index() */
    int64_t first_ts, max_ts;
    hist_t ipt_hist, request_wait_hist, response_wait_hist;
    PyObject *events;
} Core;

/* ---- events --------------------------------------------------------------------------- */

static int emit(Core *s, PyObject *tuple)
{
    if (tuple == NULL)
        return -1;
    int rc = PyList_Append(s->events, tuple);
    Py_DECREF(tuple);
    return rc;
}

static int problem(Core *s, uint64_t offset, const char *fmt, ...)
{
    char text[300];
    va_list ap;
    va_start(ap, fmt);
    PyOS_vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return emit(s, Py_BuildValue("(iKs)", EV_PROBLEM, (unsigned long long)offset, text));
}

static int flush_second(Core *s)
{
    if (s->sec_packets == 0)
        return 0;
    int rc = emit(s, Py_BuildValue("(iLKKKK)", EV_SECOND, (long long)s->sec,
                                   (unsigned long long)s->sec_packets,
                                   (unsigned long long)s->sec_bytes,
                                   (unsigned long long)s->sec_conns,
                                   (unsigned long long)s->sec_retrans));
    s->sec_packets = s->sec_bytes = s->sec_conns = s->sec_retrans = 0;
    return rc;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

/* ---- the connection table ------------------------------------------------------------- */

static uint32_t hash_key(uint8_t family, const uint8_t *a0, uint16_t p0, const uint8_t *a1,
                         uint16_t p1)
{
    uint64_t h = 1469598103934665603ULL ^ family;
    int n = family == 4 ? 4 : 16;
    for (int i = 0; i < n; i++)
        h = (h ^ a0[i]) * 1099511628211ULL;
    for (int i = 0; i < n; i++)
        h = (h ^ a1[i]) * 1099511628211ULL;
    h = (h ^ p0) * 1099511628211ULL;
    h = (h ^ p1) * 1099511628211ULL;
    return (uint32_t)(h ^ (h >> 32));
}

static void list_unlink(Core *s, conn_t *c)
{
    int32_t self = (int32_t)(c - s->conns);
    if (c->lprev >= 0)
        s->conns[c->lprev].lnext = c->lnext;
    else if (s->head[c->list] == self)
        s->head[c->list] = c->lnext;
    if (c->lnext >= 0)
        s->conns[c->lnext].lprev = c->lprev;
    else if (s->tail[c->list] == self)
        s->tail[c->list] = c->lprev;
    c->lprev = c->lnext = -1;
}

static void list_append(Core *s, conn_t *c, uint8_t list)
{
    int32_t self = (int32_t)(c - s->conns);
    c->list = list;
    c->lnext = -1;
    c->lprev = s->tail[list];
    if (s->tail[list] >= 0)
        s->conns[s->tail[list]].lnext = self;
    else
        s->head[list] = self;
    s->tail[list] = self;
}

static void hash_unlink(Core *s, conn_t *c)
{
    uint32_t b = hash_key(c->family, c->addr[0], c->port[0], c->addr[1], c->port[1]) &
                 (s->n_buckets - 1);
    int32_t self = (int32_t)(c - s->conns);
    int32_t *link = &s->buckets[b];
    while (*link >= 0) {
        if (*link == self) {
            *link = c->hnext;
            return;
        }
        link = &s->conns[*link].hnext;
    }
}

static void release_flow(Core *s, flow_t *f)
{
    if (f->segs) {
        s->seg_bytes -= (uint64_t)f->capsegs * sizeof(uint32_t);
        PyMem_Free(f->segs);
        f->segs = NULL;
    }
    if (f->tls_buf) {
        s->tls_bytes -= f->tls_cap;
        PyMem_Free(f->tls_buf);
        f->tls_buf = NULL;
    }
}

static int emit_tls(Core *s, conn_t *c, int d, const uint8_t *data, uint32_t len, int complete)
{
    flow_t *f = &c->flow[d];
    f->tls_state = 2;
    if (len < 9)
        return 0;
    return emit(s, Py_BuildValue("(iKiLy#i)", EV_TLS, (unsigned long long)c->id,
                                 d == c->client ? 0 : 1, (long long)f->tls_ts, (const char *)data,
                                 (Py_ssize_t)len, complete));
}

static PyObject *addr_bytes(conn_t *c, int d)
{
    return PyBytes_FromStringAndSize((const char *)c->addr[d], c->family == 4 ? 4 : 16);
}

/* Hand the connection to Python and free its slot. */
static int finish_conn(Core *s, conn_t *c, int why)
{
    int rc = 0;
    int cl = c->client, sv = 1 - c->client;
    for (int d = 0; d < 2; d++)
        if (c->flow[d].tls_state == 1 && rc == 0)
            rc = emit_tls(s, c, d, c->flow[d].tls_buf, c->flow[d].tls_have, 0);
    if (rc == 0) {
        flow_t *fc = &c->flow[cl], *fs = &c->flow[sv];
        PyObject *ca = addr_bytes(c, cl), *sa = addr_bytes(c, sv);
        if (ca && sa)
            rc = emit(s, Py_BuildValue(
                             "(iKiNHNHiLLLLLKKKKKKIIIIIIIiiiiHHiiiii)", EV_CONN,
                             (unsigned long long)c->id, c->family, ca, c->port[cl], sa,
                             c->port[sv], c->server_guessed, (long long)c->first_ts,
                             (long long)c->last_ts, (long long)c->syn_ts,
                             (long long)c->synack_ts, (long long)c->hs_ack_ts,
                             (unsigned long long)fc->packets, (unsigned long long)fs->packets,
                             (unsigned long long)fc->bytes, (unsigned long long)fs->bytes,
                             (unsigned long long)fc->payload, (unsigned long long)fs->payload,
                             c->requests, c->responses, c->retransmissions, c->duplicate_acks,
                             c->zero_windows, c->out_of_order, c->rst_packets, fc->fin, fs->fin,
                             fc->syn, fs->syn, fc->mss, fs->mss, fc->wscale, fs->wscale,
                             fc->sack_perm && fs->sack_perm, fc->timestamps && fs->timestamps,
                             why));
        else {
            Py_XDECREF(ca);
            Py_XDECREF(sa);
            rc = -1;
        }
    }
    release_flow(s, &c->flow[0]);
    release_flow(s, &c->flow[1]);
    hash_unlink(s, c);
    list_unlink(s, c);
    c->in_use = 0;
    c->hnext = s->free_head;
    s->free_head = (int32_t)(c - s->conns);
    s->live--;
    return rc;
}

static conn_t *find_conn(Core *s, uint8_t family, const uint8_t *a0, uint16_t p0,
                         const uint8_t *a1, uint16_t p1, uint32_t *bucket)
{
    *bucket = hash_key(family, a0, p0, a1, p1) & (s->n_buckets - 1);
    for (int32_t i = s->buckets[*bucket]; i >= 0; i = s->conns[i].hnext) {
        conn_t *c = &s->conns[i];
        if (c->family == family && c->port[0] == p0 && c->port[1] == p1 &&
            memcmp(c->addr[0], a0, 16) == 0 && memcmp(c->addr[1], a1, 16) == 0)
            return c;
    }
    return NULL;
}

static conn_t *new_conn(Core *s, uint8_t family, const uint8_t *a0, uint16_t p0,
                        const uint8_t *a1, uint16_t p1, int64_t now)
{
    if (s->free_head < 0 && s->n_conns == s->cap_conns) {
        if (s->cap_conns < s->max_conns) {
            uint32_t cap = s->cap_conns ? s->cap_conns * 2 : 1024;
            if (cap > s->max_conns)
                cap = s->max_conns;
            conn_t *grown = PyMem_Realloc(s->conns, (size_t)cap * sizeof(conn_t));
            if (grown == NULL) {
                PyErr_NoMemory();
                return NULL;
            }
            s->conns = grown;
            s->cap_conns = cap;
        } else {
            /* Full: finish the least recently active connection, a closed one first. */
            int32_t victim = s->head[1] >= 0 ? s->head[1] : s->head[0];
            if (victim < 0) {
                PyErr_SetString(PyExc_RuntimeError, "connection table full and empty");
                return NULL;
            }
            s->evicted++;
            if (finish_conn(s, &s->conns[victim], END_EVICTED) < 0)
                return NULL;
        }
    }
    int32_t slot;
    if (s->free_head >= 0) {
        slot = s->free_head;
        s->free_head = s->conns[slot].hnext;
    } else {
        slot = (int32_t)s->n_conns++;
    }
    conn_t *c = &s->conns[slot];
    memset(c, 0, sizeof *c);
    c->family = family;
    memcpy(c->addr[0], a0, 16);
    memcpy(c->addr[1], a1, 16);
    c->port[0] = p0;
    c->port[1] = p1;
    c->in_use = 1;
    c->id = s->next_id++;
    c->first_ts = c->last_ts = now;
    c->syn_ts = c->synack_ts = c->hs_ack_ts = NO_TIME;
    c->last_payload_ts[0] = c->last_payload_ts[1] = NO_TIME;
    c->last_payload_dir = -1;
    c->client = -1;
    c->flow[0].wscale = c->flow[1].wscale = -1;
    c->lprev = c->lnext = -1;
    uint32_t b = hash_key(family, a0, p0, a1, p1) & (s->n_buckets - 1);
    c->hnext = s->buckets[b];
    s->buckets[b] = slot;
    list_append(s, c, 0);
    s->live++;
    s->connections++;
    s->sec_conns++;
    return c;
}

/* ---- Wireshark's sequence analysis ------------------------------------------------------ */

static void seg_add(Core *s, flow_t *f, uint32_t nextseq)
{
    f->segcount++;
    if (f->seg_approx)
        return;
    if (f->nsegs == f->capsegs) {
        uint32_t cap = f->capsegs ? f->capsegs * 2 : 8;
        if (s->seg_bytes + (uint64_t)(cap - f->capsegs) * sizeof(uint32_t) > SEGMENT_BUDGET) {
            f->seg_approx = 1; /* see seg_ack */
            s->approx_segments++;
            return;
        }
        uint32_t *grown = PyMem_Realloc(f->segs, (size_t)cap * sizeof(uint32_t));
        if (grown == NULL) {
            f->seg_approx = 1;
            s->approx_segments++;
            return;
        }
        s->seg_bytes += (uint64_t)(cap - f->capsegs) * sizeof(uint32_t);
        f->segs = grown;
        f->capsegs = cap;
    }
    f->segs[f->nsegs++] = nextseq;
}

/* Wireshark deletes every unacked segment whose nextseq is LE_SEQ the ack, on every packet
 * of the other direction (even one without the ACK flag). Past the memory budget we keep
 * only the count and clear it when an ack passes the flow's nextseq. */
static void seg_ack(flow_t *f, uint32_t ack)
{
    if (f->seg_approx) {
        if (LE_SEQ(f->nextseq, ack))
            f->segcount = 0;
        return;
    }
    uint32_t i = 0;
    while (i < f->nsegs) {
        if (LE_SEQ(f->segs[i], ack)) {
            f->segs[i] = f->segs[--f->nsegs];
            f->segcount--;
        } else {
            i++;
        }
    }
}

/*
 * tcp_analyze_sequence_number() of packet-tcp.c (4.0), for the flags that are counted.
 * Left out, because no counted flag depends on them: window-full (needs the window scale
 * of the other side), bytes in flight, RTO and ACK-RTT frames, MPTCP (a duplicate ACK of an
 * MPTCP subflow that changed its MPTCP operations is ignored by Wireshark, counted here).
 */
static uint32_t analyse(conn_t *c, Core *s, int d, uint32_t seq, uint32_t ack, uint32_t seglen,
                        uint16_t flags, uint32_t window, int64_t now, uint32_t ta)
{
    flow_t *fwd = &c->flow[d], *rev = &c->flow[1 - d];
    uint32_t nextseq;
    const uint16_t sfr = TH_SYN | TH_FIN | TH_RST;

    if (seglen == 1 && seq == fwd->nextseq && rev->window == 0) {
        ta |= A_ZERO_WINDOW_PROBE;
        goto finished_fwd;
    }
    if (window == 0 && (flags & sfr) == 0)
        ta |= A_ZERO_WINDOW;
    if (fwd->nextseq && GT_SEQ(seq, fwd->nextseq) && (flags & TH_RST) == 0)
        ta |= A_LOST_PACKET;
    if ((seglen == 0 || seglen == 1) && seq == fwd->nextseq - 1 && (flags & sfr) == 0)
        ta |= A_KEEP_ALIVE;
    if (seglen == 0 && window && window != fwd->window && seq == fwd->nextseq &&
        ack == fwd->lastack && (flags & sfr) == 0)
        ta |= A_WINDOW_UPDATE;
    if (seglen == 0 && window && window == fwd->window && seq == fwd->nextseq &&
        ack == fwd->lastack && (rev->lastsegmentflags & A_KEEP_ALIVE) && (flags & sfr) == 0) {
        ta |= A_KEEP_ALIVE_ACK;
        goto finished_fwd;
    }
    if (seglen == 0 && window == 0 && window == fwd->window && seq == fwd->nextseq &&
        ack == fwd->lastack && (rev->lastsegmentflags & A_ZERO_WINDOW_PROBE) &&
        (flags & sfr) == 0) {
        ta |= A_ZERO_WINDOW_PROBE_ACK;
        goto finished_fwd;
    }
    if (seglen == 0 && window && window == fwd->window && seq == fwd->nextseq &&
        ack == fwd->lastack && (flags & sfr) == 0) {
        if (fwd->dupacknum == (uint32_t)-1)
            fwd->dupacknum = 1;
        else
            fwd->dupacknum++;
        ta |= A_DUPLICATE_ACK;
    }

finished_fwd:
    if (ack != fwd->lastack)
        fwd->dupacknum = 0;

    if (rev->maxseqtobeacked && GT_SEQ(ack, rev->maxseqtobeacked) && (flags & TH_ACK)) {
        if (LT_SEQ(rev->maxseqtobeacked, rev->nextseq)) {
            rev->maxseqtobeacked = rev->nextseq;
            ta |= A_ACK_LOST_PACKET;
        } else {
            if (rev->dupacknum == 0)
                ta |= A_ACK_LOST_PACKET;
            rev->dupacknum = (uint32_t)-1;
        }
    }

    if (seglen > 0 || (flags & (TH_SYN | TH_FIN))) {
        int seq_not_advanced = fwd->nextseq && LT_SEQ(seq, fwd->nextseq);
        uint64_t t, ooo_thres;

        if (ta & A_KEEP_ALIVE)
            goto finished_retransmission;
        if (seglen > 1 && fwd->nextseq - 1 == seq)
            seq_not_advanced = 0;
        if (seglen > 0 && rev->lastack && LE_SEQ(seq + seglen, rev->lastack)) {
            ta |= A_SPURIOUS_RETRANSMISSION;
            goto finished_retransmission;
        }
        /* tcp_fastrt_precedence is TRUE by default: fast retransmission is tried first. */
        t = (uint64_t)now - (uint64_t)rev->lastacktime;
        if (seq_not_advanced && rev->dupacknum >= 2 && rev->lastack == seq && t < 20000000) {
            ta |= A_FAST_RETRANSMISSION;
            goto finished_retransmission;
        }
        t = (uint64_t)now - (uint64_t)fwd->nextseqtime;
        ooo_thres = c->ts_first_rtt == 0 ? 3000000 : (uint64_t)c->ts_first_rtt;
        if (seq_not_advanced && t < ooo_thres &&
            fwd->nextseq != seq + seglen + ((flags & (TH_SYN | TH_FIN)) ? 1 : 0)) {
            ta |= A_OUT_OF_ORDER;
            goto finished_retransmission;
        }
        if (seq_not_advanced)
            ta |= A_RETRANSMISSION;
    }

finished_retransmission:
    nextseq = seq + seglen;
    if ((seglen || (flags & (TH_SYN | TH_FIN))) && fwd->segcount < TCP_MAX_UNACKED_SEGMENTS) {
        /* SYN and FIN count as a byte only here, as in Wireshark */
        if (flags & (TH_SYN | TH_FIN))
            nextseq += 1;
        seg_add(s, fwd, nextseq);
    }
    if (GT_SEQ(nextseq, fwd->nextseq) || !fwd->nextseq) {
        if (!(ta & A_ZERO_WINDOW_PROBE)) {
            fwd->nextseq = nextseq;
            fwd->nextseqtime = now;
        }
    }
    if (seq == fwd->maxseqtobeacked || !fwd->maxseqtobeacked) {
        if (!(ta & A_ZERO_WINDOW_PROBE))
            fwd->maxseqtobeacked = fwd->nextseq;
    }
    fwd->window = window;
    fwd->lastack = ack;
    fwd->lastacktime = now;
    fwd->lastsegmentflags = ta;
    seg_ack(rev, ack);
    return ta;
}

/* ---- TLS: collect the first handshake record of each direction -------------------------- */

static uint32_t tls_need(const uint8_t *b, uint32_t have)
{
    if (have < 5)
        return 9;
    uint32_t need = 5u + be16(b + 3);
    if (have >= 9) {
        uint32_t hs = 9u + ((uint32_t)b[6] << 16 | (uint32_t)b[7] << 8 | b[8]);
        if (hs < need)
            need = hs; /* the first handshake message is all we parse */
    }
    if (need < 9)
        need = 9;
    return need > TLS_MAX_HELLO ? TLS_MAX_HELLO : need;
}

/* The length of a PROXY protocol header (text v1 or binary v2) that `b` starts with, as a
 * load balancer puts it before a client's first bytes; 0 for none (or one cut short). */
static uint32_t proxy_header(const uint8_t *b, uint32_t have)
{
    static const uint8_t v2[12] = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d,
                                   0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a};
    if (have >= 16 && memcmp(b, v2, sizeof v2) == 0) {
        uint32_t length = 16u + be16(b + 14);
        return length <= have ? length : 0;
    }
    if (have >= 8 && memcmp(b, "PROXY ", 6) == 0) {
        uint32_t end = have < 107 ? have : 107; /* a v1 header is at most 107 bytes */
        for (uint32_t i = 6; i + 1 < end; i++)
            if (b[i] == '\r' && b[i + 1] == '\n')
                return i + 2;
    }
    return 0;
}

static int tls_segment(Core *s, conn_t *c, int d, uint32_t seq, uint32_t seglen,
                       const uint8_t *payload, uint32_t avail, int64_t now)
{
    flow_t *f = &c->flow[d];
    if (f->tls_state == 0 && f->tls_prelude_segs == 0 && f->tls_prelude == 0) {
        /* A PROXY protocol header first: the hello may follow it in the same segment. */
        uint32_t skip = proxy_header(payload, avail);
        if (skip) {
            payload += skip, avail -= skip, seq += skip, seglen -= skip;
            f->tls_prelude += skip;
            if (avail == 0) { /* the header alone: a prelude segment */
                f->tls_prelude_segs++;
                return 0;
            }
        }
    }
    if (f->tls_state == 0) {
        /* A handshake record of TLS 1.0-1.3 (and SSL 3) starts 0x16 0x03. Past a plaintext
         * prelude (a proxy's CONNECT, SOCKS, STARTTLS) a segment must also begin a hello of
         * a known version; a first segment that is a TLS record of another type means the
         * capture began inside TLS, and the search ends there. */
        int tls = avail >= 2 && payload[0] == 0x16 && payload[1] == 0x03;
        if (tls && f->tls_prelude_segs)
            tls = avail >= 6 && payload[2] <= 4 && (payload[5] == 1 || payload[5] == 2);
        if (!tls) {
            f->tls_prelude += seglen;
            if ((f->tls_prelude_segs == 0 && avail >= 2 && payload[0] >= 0x14 &&
                 payload[0] <= 0x17 && payload[1] == 0x03) ||
                ++f->tls_prelude_segs >= TLS_PRELUDE_SEGMENTS ||
                f->tls_prelude > TLS_PRELUDE_BYTES)
                f->tls_state = 2;
            return 0;
        }
        f->tls_ts = now;
        uint32_t need = tls_need(payload, avail);
        if (avail >= need) /* the common case: the whole hello in one segment */
            return emit_tls(s, c, d, payload, need, 1);
        if (avail < seglen) /* the capture cut this segment: use what there is */
            return emit_tls(s, c, d, payload, avail, 0);
        if (s->tls_bytes + TLS_MAX_HELLO > TLS_BUDGET) {
            s->tls_skipped++;
            f->tls_state = 2;
            return 0;
        }
        f->tls_buf = PyMem_Malloc(TLS_MAX_HELLO);
        if (f->tls_buf == NULL) {
            f->tls_state = 2;
            return 0;
        }
        f->tls_cap = TLS_MAX_HELLO;
        s->tls_bytes += f->tls_cap;
        memcpy(f->tls_buf, payload, avail);
        f->tls_have = avail;
        f->tls_next = seq + seglen;
        f->tls_state = 1;
        return 0;
    }
    /* Collecting: take the segments that continue the bytes we have, in order. */
    if (seq != f->tls_next) {
        if (++f->tls_tries > TLS_MAX_TRIES)
            return emit_tls(s, c, d, f->tls_buf, f->tls_have, 0);
        return 0;
    }
    uint32_t take = f->tls_cap - f->tls_have;
    if (take > avail)
        take = avail;
    memcpy(f->tls_buf + f->tls_have, payload, take);
    f->tls_have += take;
    f->tls_next = seq + seglen;
    uint32_t need = tls_need(f->tls_buf, f->tls_have);
    if (f->tls_have >= need)
        return emit_tls(s, c, d, f->tls_buf, need, 1);
    if (avail < seglen || f->tls_have == f->tls_cap)
        return emit_tls(s, c, d, f->tls_buf, f->tls_have, 0);
    return 0;
}

/* ---- decoding ---------------------------------------------------------------------------- */

typedef struct {
    int family;
    const uint8_t *src, *dst;
    uint8_t proto;
    uint32_t l4off;      /* offset of the transport header in the frame */
    uint32_t l4len;      /* its length as the IP header says (Wireshark's reported length) */
    int fragmented;
} ip_t;

static int link_index(uint32_t linktype)
{
    switch (linktype) {
    case 1: return 0;
    case 113: return 1;
    case 276: return 2;
    case 101: case 12: case 14: case 228: case 229: return 3;
    case 0: case 108: return 4;
    default: return 5;
    }
}

static int is_vlan(uint16_t type) { return type == 0x8100 || type == 0x88a8 || type == 0x9100; }

/* Past an MPLS label stack at `off` (at most MAX_LABELS labels, to the one marked bottom of
 * stack): the offset of the IP header and its version, told by its first nibble as
 * Wireshark tells it; -1 for what is not IP (a pseudowire), -3 for a stack cut short. */
#define MAX_LABELS 8
static int64_t mpls_payload(const uint8_t *d, uint32_t caplen, uint32_t off, int *version)
{
    for (int labels = 0;; labels++) {
        if (labels == MAX_LABELS)
            return -1;
        if (caplen < off + 4)
            return -3;
        int bottom = d[off + 2] & 1;
        off += 4;
        if (bottom)
            break;
    }
    if (caplen < off + 1)
        return -3;
    *version = d[off] >> 4;
    return (*version == 4 || *version == 6) ? (int64_t)off : -1;
}

/* After an EtherType `type` whose payload is at `off`: past up to four VLAN tags and an
 * MPLS label stack (`*labelled` set, when not NULL), the offset of the IP header and its
 * version; -1 for no IP; -3 for a frame cut short. */
static int64_t ether_type(const uint8_t *d, uint32_t caplen, uint32_t off, uint16_t type,
                          int *version, int *labelled)
{
    for (int tags = 0; is_vlan(type) && tags < 4; tags++) {
        if (caplen < off + 4)
            return -3;
        type = be16(d + off + 2);
        off += 4;
    }
    if (type == 0x8847 || type == 0x8848) {
        if (labelled)
            *labelled = 1;
        return mpls_payload(d, caplen, off, version);
    }
    if (type == 0x0800)
        *version = 4;
    else if (type == 0x86dd)
        *version = 6;
    else
        return -1;
    return off;
}

/* An Ethernet frame at `off` (inside a tunnel): as ether_type. */
static int64_t ether_frame(const uint8_t *d, uint32_t caplen, uint32_t off, int *version)
{
    if (caplen < off + 14)
        return -3;
    return ether_type(d, caplen, off + 14, be16(d + off + 12), version, NULL);
}

/* The offset of the IP header and its version (4 or 6); -1 for no IP; -2 for a link
 * type we do not decode; -3 for a frame too short for its link header. */
static int64_t link_payload(uint32_t linktype, const uint8_t *d, uint32_t caplen, int *version,
                            int *labelled)
{
    uint32_t off;
    uint16_t type;
    switch (linktype) {
    case 1: /* Ethernet */
        if (caplen < 14)
            return -3;
        type = be16(d + 12);
        off = 14;
        break;
    case 113: /* Linux cooked v1 */
        if (caplen < 16)
            return -3;
        type = be16(d + 14);
        off = 16;
        break;
    case 276: /* Linux cooked v2 */
        if (caplen < 20)
            return -3;
        type = be16(d);
        off = 20;
        break;
    case 101: case 12: case 14:
        if (caplen < 1)
            return -3;
        *version = d[0] >> 4;
        return (*version == 4 || *version == 6) ? 0 : -1;
    case 228:
        *version = 4;
        return 0;
    case 229:
        *version = 6;
        return 0;
    case 0: case 108: { /* BSD loopback: the family in the writer's byte order */
        if (caplen < 4)
            return -3;
        uint32_t fb = be32(d), fl = linktype == 108 ? fb : le32(d);
        if (fb == 2 || fl == 2)
            *version = 4;
        else if (fb == 10 || fb == 24 || fb == 28 || fb == 30 || fl == 10 || fl == 24 ||
                 fl == 28 || fl == 30)
            *version = 6;
        else
            return -1;
        return 4;
    }
    default:
        return -2;
    }
    return ether_type(d, caplen, off, type, version, labelled);
}

/* 0 ok, -1 not decodable (counted as malformed), -2 truncated by the capture. */
static int decode_ip(const uint8_t *d, uint32_t caplen, uint32_t wirelen, uint32_t off,
                     int version, ip_t *ip)
{
    uint32_t rep = wirelen > caplen ? wirelen : caplen;
    if (off >= rep)
        return -2;
    uint32_t avail = rep - off;
    if (version == 4) {
        if (caplen < off + 20)
            return -2;
        const uint8_t *h = d + off;
        if ((h[0] >> 4) != 4)
            return -1;
        uint32_t hl = (uint32_t)(h[0] & 0x0f) * 4;
        if (hl < 20)
            return -1;
        if (caplen < off + hl)
            return -2;
        uint32_t total = be16(h + 2);
        if (total < hl) {
            if (total != 0)
                return -1;
            total = avail; /* zero: segmentation offload, as Wireshark presumes */
        }
        if (total > avail)
            total = avail;
        if (total < hl)
            return -1;
        ip->family = 4;
        ip->src = h + 12;
        ip->dst = h + 16;
        ip->proto = h[9];
        ip->fragmented = (be16(h + 6) & 0x3fff) != 0;
        ip->l4off = off + hl;
        ip->l4len = total - hl;
        return 0;
    }
    if (caplen < off + 40)
        return -2;
    const uint8_t *h = d + off;
    if ((h[0] >> 4) != 6)
        return -1;
    uint32_t total = be16(h + 4) ? 40u + be16(h + 4) : avail;
    if (total > avail)
        total = avail;
    uint8_t next = h[6];
    uint32_t p = off + 40;
    ip->fragmented = 0;
    for (int n = 0; n < 16; n++) {
        uint32_t len;
        if (next == 0 || next == 43 || next == 60 || next == 135 || next == 139 ||
            next == 140) {
            if (caplen < p + 2)
                return -2;
            len = ((uint32_t)d[p + 1] + 1) * 8;
        } else if (next == 51) {
            if (caplen < p + 2)
                return -2;
            len = ((uint32_t)d[p + 1] + 2) * 4;
        } else if (next == 44) {
            if (caplen < p + 8)
                return -2;
            if (be16(d + p + 2) & 0xfff9)
                ip->fragmented = 1;
            len = 8;
        } else {
            break;
        }
        next = d[p];
        p += len;
    }
    if (p - off > total)
        return -1;
    ip->family = 6;
    ip->src = h + 8;
    ip->dst = h + 24;
    ip->proto = next;
    ip->l4off = p;
    ip->l4len = total - (p - off);
    return 0;
}

/* ---- tunnels ------------------------------------------------------------------------------ */

#define TUN_UNREADABLE (-4)
#define UDP_VXLAN 4789
#define UDP_GENEVE 6081
#define UDP_TEREDO 3544

/* For a packet `ip` that carries a tunnel (IP in IP, GRE, ERSPAN types I to III and MPLS in
 * GRE, VXLAN, Geneve and Teredo on their UDP ports, either way round as Wireshark takes
 * them): the
 * offset of the IP header inside and its version, the tunnel's kind in `kind`. 0 for no
 * tunnel; -1 for a tunnel carrying no IP; -3 for a tunnel header cut short; TUN_UNREADABLE
 * for a tunnel this does not read (another GRE version, GRE routing, an unknown payload
 * type). */
static int64_t tunnel_payload(const uint8_t *d, uint32_t caplen, const ip_t *ip, int *version,
                              int *kind)
{
    uint32_t o = ip->l4off;
    if (ip->fragmented)
        return 0;
    if (ip->proto == 4 || ip->proto == 41) { /* IPv4 or IPv6 right inside IP (6in4) */
        *kind = TUN_IP_IN_IP;
        *version = ip->proto == 4 ? 4 : 6;
        return o;
    }
    if (ip->proto == 47) {
        *kind = TUN_GRE;
        if (caplen < o + 4)
            return -3;
        uint16_t flags = be16(d + o), type = be16(d + o + 2);
        if ((flags & 0x0007) || (flags & 0x4000))
            return TUN_UNREADABLE; /* enhanced GRE (PPTP), source routing */
        uint32_t p = o + 4;
        p += (flags & 0x8000) ? 4 : 0; /* checksum */
        p += (flags & 0x2000) ? 4 : 0; /* key */
        p += (flags & 0x1000) ? 4 : 0; /* sequence number */
        if (caplen < p)
            return -3;
        switch (type) {
        case 0x0800: *version = 4; return p;
        case 0x86dd: *version = 6; return p;
        case 0x6558: return ether_frame(d, caplen, p, version); /* bridged Ethernet */
        case 0x8847: case 0x8848: return mpls_payload(d, caplen, p, version);
        case 0x88be: /* ERSPAN: type II has a header (and a GRE sequence number), I none */
            *kind = TUN_ERSPAN;
            return ether_frame(d, caplen, p + ((flags & 0x1000) ? 8 : 0), version);
        case 0x22eb: /* ERSPAN type III: 12 bytes, and 8 more when O is set */
            *kind = TUN_ERSPAN;
            if (caplen < p + 12)
                return -3;
            return ether_frame(d, caplen, p + 12 + ((d[p + 11] & 1) ? 8 : 0), version);
        default:
            return TUN_UNREADABLE;
        }
    }
    if (ip->proto != 17 || caplen < o + 8)
        return 0;
    uint16_t sport = be16(d + o), dport = be16(d + o + 2);
    uint32_t p = o + 8;
    if (sport == UDP_VXLAN || dport == UDP_VXLAN) {
        *kind = TUN_VXLAN;
        return ether_frame(d, caplen, p + 8, version);
    }
    if (sport == UDP_GENEVE || dport == UDP_GENEVE) {
        *kind = TUN_GENEVE;
        if (caplen < p + 8)
            return -3;
        if (d[p] >> 6)
            return TUN_UNREADABLE; /* a later version */
        uint16_t type = be16(d + p + 2);
        p += 8 + (uint32_t)(d[p] & 0x3f) * 4;
        if (type == 0x6558)
            return ether_frame(d, caplen, p, version);
        if (caplen < p)
            return -3;
        if (type == 0x0800 || type == 0x86dd) {
            *version = type == 0x0800 ? 4 : 6;
            return p;
        }
        return TUN_UNREADABLE;
    }
    if (sport == UDP_TEREDO || dport == UDP_TEREDO) {
        /* IPv6 in UDP (RFC 4380), after an authentication and an origin indication header
         * when present; anything else on the port is plain UDP. */
        uint32_t end = o + be16(d + o + 4); /* the UDP datagram's end, by its length */
        if (caplen >= p + 4 && be16(d + p) == 0x0001)
            p += 13 + (uint32_t)d[p + 2] + (uint32_t)d[p + 3];
        if (caplen >= p + 2 && be16(d + p) == 0x0000)
            p += 8;
        /* An IPv6 header whose payload length fills the datagram, as Wireshark's check */
        if (caplen < p + 6 || d[p] >> 4 != 6 || p + 40 + (uint32_t)be16(d + p + 4) != end)
            return 0;
        *kind = TUN_TEREDO;
        *version = 6;
        return p;
    }
    return 0;
}

typedef struct {
    uint16_t mss;
    int8_t wscale;
    uint8_t sack_perm, has_ts;
    uint32_t tsval, tsecr;
} tcpopt_t;

static void tcp_options(const uint8_t *o, uint32_t len, tcpopt_t *out)
{
    uint32_t i = 0;
    while (i < len) {
        uint8_t kind = o[i];
        if (kind == 0)
            break;
        if (kind == 1) {
            i++;
            continue;
        }
        if (i + 1 >= len)
            break;
        uint8_t olen = o[i + 1];
        if (olen < 2 || i + olen > len)
            break;
        if (kind == 2 && olen == 4)
            out->mss = be16(o + i + 2);
        else if (kind == 3 && olen == 3)
            out->wscale = (int8_t)(o[i + 2] > 14 ? 14 : o[i + 2]);
        else if (kind == 4 && olen == 2)
            out->sack_perm = 1;
        else if (kind == 8 && olen == 10) {
            out->has_ts = 1;
            out->tsval = be32(o + i + 2);
            out->tsecr = be32(o + i + 6);
        }
        i += olen;
    }
}

/* Which side serves, for a connection whose SYN we did not see: a port below 1024, else
 * the lower port. Returns the direction whose packets come from the client. */
static int guess_client(conn_t *c)
{
    uint16_t p0 = c->port[0], p1 = c->port[1];
    int server;
    if ((p0 < 1024) != (p1 < 1024))
        server = p0 < 1024 ? 0 : 1;
    else
        server = p0 <= p1 ? 0 : 1;
    return 1 - server;
}

static int tcp_packet(Core *s, const uint8_t *d, uint32_t caplen, uint32_t wirelen,
                      const ip_t *ip, int64_t now, uint32_t *flags_out, uint64_t *stream_out,
                      tcpopt_t *opt_out, uint32_t *hdr)
{
    const uint8_t *t = d + ip->l4off;
    uint16_t sport = be16(t), dport = be16(t + 2);
    uint32_t seq = be32(t + 4), ack = be32(t + 8);
    uint16_t flags = be16(t + 12) & TH_MASK;
    uint32_t window = be16(t + 14);
    uint32_t hlen = (uint32_t)(t[12] >> 4) * 4;
    hdr[0] = sport;
    hdr[1] = dport;
    hdr[2] = seq;
    hdr[3] = ack;
    hdr[4] = flags;
    hdr[5] = window;
    if (hlen < 20 || ip->l4len < hlen) {
        s->short_tcp++;
        return 0;
    }
    uint32_t seglen = ip->l4len - hlen;
    hdr[6] = seglen;
    uint32_t hcap = caplen - ip->l4off; /* captured TCP bytes, >= 20 */
    tcpopt_t opt = {0, -1, 0, 0, 0, 0};
    if (hlen > 20)
        tcp_options(t + 20, (hcap < hlen ? hcap : hlen) - 20, &opt);
    *opt_out = opt;

    /* Wireshark's direction: flow 1 carries the packets whose source address compares
     * greater (the ports decide between equal addresses). */
    int alen = ip->family == 4 ? 4 : 16;
    int cmp = memcmp(ip->src, ip->dst, alen);
    int d_ = (cmp > 0 || (cmp == 0 && sport > dport)) ? 0 : 1;
    uint8_t a0[16] = {0}, a1[16] = {0};
    uint16_t p0, p1;
    if (d_ == 0) {
        memcpy(a0, ip->src, alen);
        memcpy(a1, ip->dst, alen);
        p0 = sport;
        p1 = dport;
    } else {
        memcpy(a0, ip->dst, alen);
        memcpy(a1, ip->src, alen);
        p0 = dport;
        p1 = sport;
    }
    uint32_t bucket;
    conn_t *c = find_conn(s, (uint8_t)ip->family, a0, p0, a1, p1, &bucket);
    uint32_t ta = 0;
    if (c == NULL) {
        c = new_conn(s, (uint8_t)ip->family, a0, p0, a1, p1, now);
        if (c == NULL)
            return -1;
    } else if ((flags & (TH_SYN | TH_ACK)) == TH_SYN && c->flow[d_].base_seq_set) {
        if (seq != c->flow[d_].base_seq) {
            /* A new SYN on a used 4-tuple: Wireshark starts a new conversation. */
            if (finish_conn(s, c, END_REUSED) < 0)
                return -1;
            c = new_conn(s, (uint8_t)ip->family, a0, p0, a1, p1, now);
            if (c == NULL)
                return -1;
            ta |= A_REUSED_PORTS;
        } else {
            c->flow[d_].nextseq = c->flow[d_].maxseqtobeacked;
        }
    }
    if ((flags & (TH_SYN | TH_ACK)) == (TH_SYN | TH_ACK) && c->flow[d_].base_seq_set &&
        seq != c->flow[d_].base_seq) {
        c->flow[d_].base_seq = seq;
        ta |= A_REUSED_PORTS;
    }
    flow_t *fwd = &c->flow[d_], *rev = &c->flow[1 - d_];
    if (!fwd->base_seq_set) {
        fwd->base_seq = (flags & TH_SYN) ? seq : seq - 1;
        fwd->base_seq_set = 1;
    }
    if (!rev->base_seq_set && (flags & TH_ACK)) {
        rev->base_seq = ack - 1;
        rev->base_seq_set = 1;
    }
    if (c->client < 0) {
        if ((flags & (TH_SYN | TH_ACK)) == TH_SYN)
            c->client = (int8_t)d_;
        else if ((flags & (TH_SYN | TH_ACK)) == (TH_SYN | TH_ACK))
            c->client = (int8_t)(1 - d_);
        else {
            c->client = (int8_t)guess_client(c);
            c->server_guessed = 1;
        }
    }

    ta = analyse(c, s, d_, seq, ack, seglen, flags, window, now, ta);

    if (flags & TH_SYN) {
        if (!(flags & TH_ACK)) {
            c->ts_mru_syn = now;
            if (c->syn_ts == NO_TIME)
                c->syn_ts = now;
            s->syn++;
        } else {
            if (c->synack_ts == NO_TIME)
                c->synack_ts = now;
            s->synack++;
        }
        fwd->syn = 1;
        if (opt.mss)
            fwd->mss = opt.mss;
        if (opt.wscale >= 0)
            fwd->wscale = opt.wscale;
        fwd->sack_perm = opt.sack_perm;
        fwd->timestamps = opt.has_ts;
    }
    if ((flags & (TH_SYN | TH_ACK)) == TH_ACK) {
        if (c->ts_mru_syn != 0 && c->ts_first_rtt == 0)
            c->ts_first_rtt = now - c->ts_mru_syn;
        if (c->hs_ack_ts == NO_TIME && c->synack_ts != NO_TIME && d_ == c->client)
            c->hs_ack_ts = now;
    }

    /* counts */
    for (int b = 0; b < 16; b++)
        if (ta & (1u << b))
            s->flagcount[b]++;
    if (ta & A_ANY_RETRANSMISSION) {
        c->retransmissions++;
        s->sec_retrans++;
    }
    if (ta & A_DUPLICATE_ACK)
        c->duplicate_acks++;
    if (ta & A_ZERO_WINDOW)
        c->zero_windows++;
    if (ta & A_OUT_OF_ORDER)
        c->out_of_order++;
    fwd->packets++;
    fwd->bytes += wirelen;
    fwd->payload += seglen;
    if (flags & TH_FIN) {
        fwd->fin = 1;
        s->fin++;
    }
    if (flags & TH_RST) {
        c->rst = 1;
        c->rst_packets++;
        s->rst++;
    }

    /* silences, requests and who waited */
    int role = d_ == c->client ? 0 : 1;
    int new_data = seglen > 0 &&
                   !(ta & (A_ANY_RETRANSMISSION | A_OUT_OF_ORDER | A_KEEP_ALIVE |
                           A_ZERO_WINDOW_PROBE));
    int starts_burst = new_data && c->last_payload_dir != d_;
    if (c->last_ts != NO_TIME && fwd->packets + rev->packets > 1) {
        int64_t dt = now - c->last_ts;
        if (dt >= 0) {
            hist_add(&s->ipt_hist, dt);
            if (dt > s->gap_ns) {
                int before;
                if (flags & (TH_FIN | TH_RST))
                    before = BEFORE_CLOSE;
                else if (starts_burst)
                    before = role == 0 ? BEFORE_REQUEST : BEFORE_RESPONSE;
                else if (seglen > 0)
                    before = BEFORE_DATA;
                else
                    before = BEFORE_ACK;
                if (emit(s, Py_BuildValue("(iKLLii)", EV_GAP, (unsigned long long)c->id,
                                          (long long)c->last_ts, (long long)dt, role,
                                          before)) < 0)
                    return -1;
            }
        }
    }
    if (starts_burst) {
        int64_t since = c->last_payload_ts[1 - d_];
        if (role == 0) {
            c->requests++;
            if (since != NO_TIME && now >= since)
                hist_add(&s->request_wait_hist, now - since);
        } else {
            c->responses++;
            if (since != NO_TIME && now >= since)
                hist_add(&s->response_wait_hist, now - since);
        }
        c->last_payload_dir = (int8_t)d_;
    }
    if (new_data)
        c->last_payload_ts[d_] = now;
    if (now > c->last_ts || c->last_ts == NO_TIME)
        c->last_ts = now;

    if (seglen > 0 && fwd->tls_state != 2) {
        uint32_t avail = caplen > ip->l4off + hlen ? caplen - ip->l4off - hlen : 0;
        if (avail > seglen)
            avail = seglen;
        if (tls_segment(s, c, d_, seq, seglen, t + hlen, avail, now) < 0)
            return -1;
    }

    /* activity order: closed connections go to the closed list and linger there */
    list_unlink(s, c);
    int closed = c->rst || (c->flow[0].fin && c->flow[1].fin);
    list_append(s, c, closed ? 1 : 0);

    *flags_out = ta;
    *stream_out = c->id;
    return 1;
}

static int sweep_closed(Core *s, int64_t now)
{
    while (s->head[1] >= 0) {
        conn_t *c = &s->conns[s->head[1]];
        if (now - c->last_ts <= LINGER_NS)
            break;
        if (finish_conn(s, c, END_CLOSED) < 0)
            return -1;
    }
    return 0;
}

static int packet(Core *s, uint32_t linktype, int iface, int64_t now, const uint8_t *d,
                  uint32_t caplen, uint32_t wirelen)
{
    s->frame++;
    s->packets++;
    s->bytes += wirelen;
    if (s->first_ts == NO_TIME)
        s->first_ts = now;
    if (s->max_ts == NO_TIME || now > s->max_ts)
        s->max_ts = now;
    int64_t sec = floor_div(now, 1000000000LL);
    if (sec != s->sec) {
        if (flush_second(s) < 0)
            return -1;
        s->sec = sec;
    }
    s->sec_packets++;
    s->sec_bytes += wirelen;
    s->linkcount[link_index(linktype)]++;

    int version = 0, status = 0;
    ip_t ip;
    uint32_t ta = 0, hdr[7] = {0, 0, 0, 0, 0, 0, 0};
    uint64_t stream = (uint64_t)-1;
    tcpopt_t opt = {0, -1, 0, 0, 0, 0};
    int labelled = 0;
    int64_t off = link_payload(linktype, d, caplen, &version, &labelled);
    if (labelled)
        s->tunnels[TUN_MPLS]++;
    memset(&ip, 0, sizeof ip);
    if (off == -2) {
        s->unsupported_link++;
    } else if (off == -3) {
        s->truncated++;
    } else if (off == -1) {
        s->non_ip++;
    } else {
        int rc = decode_ip(d, caplen, wirelen, (uint32_t)off, version, &ip);
        if (rc == 0) {
            if (ip.family == 4)
                s->ipv4++;
            else
                s->ipv6++;
        }
        /* Tunnels: the packet is what the innermost one carries (TCP goes straight on). */
        for (int depth = 0; rc == 0 && ip.proto != 6 && depth < MAX_TUNNELS; depth++) {
            int kind = 0, inner_version = 0;
            int64_t inner = tunnel_payload(d, caplen, &ip, &inner_version, &kind);
            if (inner == 0)
                break;
            s->tunnels[kind]++;
            if (inner < 0) {
                rc = inner == -3 ? -2 : inner == -1 ? -3 : TUN_UNREADABLE;
                break;
            }
            ip_t in;
            memset(&in, 0, sizeof in);
            rc = decode_ip(d, caplen, wirelen, (uint32_t)inner, inner_version, &in);
            if (rc == 0)
                ip = in;
        }
        if (rc == -1) {
            s->malformed++;
            ip.family = 0;
        } else if (rc == -2) {
            s->truncated++;
            ip.family = 0;
        } else if (rc == -3) {
            s->non_ip++;
            ip.family = 0;
        } else if (rc == TUN_UNREADABLE) {
            s->unreadable_tunnel++;
            ip.family = 0;
        } else {
            if (ip.proto != 6) {
                if (ip.proto == 17)
                    s->udp++;
                else
                    s->other_ip++;
            } else if (ip.fragmented) {
                s->fragments++;
            } else if (caplen < ip.l4off + 20) {
                s->truncated++;
            } else {
                s->tcp++;
                status = tcp_packet(s, d, caplen, wirelen, &ip, now, &ta, &stream, &opt, hdr);
                if (status < 0)
                    return -1;
            }
        }
    }
    if (s->decode && s->streams) {
        int wanted = 0;
        if (stream != (uint64_t)-1) {
            PyObject *key = PyLong_FromUnsignedLongLong((unsigned long long)stream);
            if (!key)
                return -1;
            wanted = PySet_Contains(s->streams, key);
            Py_DECREF(key);
            if (wanted < 0)
                return -1;
        }
        if (!wanted)
            return sweep_closed(s, now);
    }
    if (s->decode) {
        PyObject *src = Py_None, *dst = Py_None;
        int alen = ip.family == 4 ? 4 : 16;
        if (ip.family) {
            src = PyBytes_FromStringAndSize((const char *)ip.src, alen);
            dst = PyBytes_FromStringAndSize((const char *)ip.dst, alen);
            if (!src || !dst) {
                Py_XDECREF(src);
                Py_XDECREF(dst);
                return -1;
            }
        } else {
            Py_INCREF(src);
            Py_INCREF(dst);
        }
        if (emit(s, Py_BuildValue("(iKLiIIIiNNiIIIIIIIiiiiIILi)", EV_PACKET,
                                  (unsigned long long)s->frame, (long long)now, iface, linktype,
                                  caplen, wirelen, ip.family, src, dst, ip.proto, hdr[0],
                                  hdr[1], hdr[2], hdr[3], hdr[4], hdr[5], hdr[6], status,
                                  opt.mss, opt.wscale, opt.sack_perm, opt.has_ts ? opt.tsval : 0,
                                  ta, stream == (uint64_t)-1 ? -1LL : (long long)stream,
                                  ip.fragmented)) < 0)
            return -1;
    }
    return sweep_closed(s, now);
}

/* ---- containers ------------------------------------------------------------------------- */

static int64_t to_ns(uint64_t stamp, int64_t units, int64_t offset_s)
{
    uint64_t secs = stamp / (uint64_t)units, frac = stamp % (uint64_t)units;
    if (secs > 9000000000ULL) /* past the year 2255: keep the arithmetic in range */
        secs = 9000000000ULL;
    int64_t ns = (int64_t)secs * 1000000000LL;
    ns += (int64_t)((__uint128_t)frac * 1000000000ULL / (uint64_t)units);
    return ns + offset_s * 1000000000LL;
}

static int add_iface(Core *s, uint32_t linktype, int64_t units, int64_t offset_s)
{
    if (s->n_ifaces >= MAX_IFACES)
        return problem(s, s->offset, "more than %d interfaces: the rest are ignored",
                       MAX_IFACES);
    s->ifaces[s->n_ifaces].linktype = linktype;
    s->ifaces[s->n_ifaces].units = units;
    s->ifaces[s->n_ifaces].offset_s = offset_s;
    s->n_ifaces++;
    return emit(s, Py_BuildValue("(iiIL)", EV_IFACE, s->n_ifaces - 1, linktype,
                                 (long long)units));
}

/* Parse pcap records from buf; returns the bytes consumed, or -1 on a Python error. */
static Py_ssize_t feed_pcap(Core *s, const uint8_t *buf, Py_ssize_t len)
{
    Py_ssize_t pos = 0;
    uint32_t rec = s->pcap_modified ? 24 : 16;
    while (!s->stopped && len - pos >= (Py_ssize_t)rec) {
        const uint8_t *h = buf + pos;
        uint32_t sec = rd32(h, s->big), frac = rd32(h + 4, s->big);
        uint32_t caplen = rd32(h + 8, s->big), wirelen = rd32(h + 12, s->big);
        if (caplen > MAX_RECORD) {
            s->stopped = 1;
            if (problem(s, s->offset + pos,
                        "record %llu claims %u captured bytes: the file is damaged here; "
                        "analysed up to this offset",
                        (unsigned long long)s->frame + 1, caplen) < 0)
                return -1;
            break;
        }
        if (len - pos < (Py_ssize_t)(rec + caplen))
            break;
        int64_t now = (int64_t)sec * 1000000000LL +
                      (s->pcap_nsec ? (int64_t)frac : (int64_t)frac * 1000);
        s->last_ts = now;
        if (packet(s, s->pcap_linktype, 0, now, h + rec, caplen, wirelen) < 0)
            return -1;
        pos += rec + caplen;
    }
    return pos;
}

static int idb(Core *s, const uint8_t *b, uint32_t blen)
{
    if (blen < 20)
        return problem(s, s->offset, "interface description block too short (%u bytes)", blen);
    uint32_t linktype = rd16(b + 8, s->big);
    int64_t units = 1000000, offset_s = 0;
    uint32_t p = 16;
    while (p + 4 <= blen - 4) {
        uint16_t code = rd16(b + p, s->big), olen = rd16(b + p + 2, s->big);
        if (code == 0 || p + 4 + olen > blen - 4)
            break;
        const uint8_t *v = b + p + 4;
        if (code == 9 && olen >= 1) { /* if_tsresol */
            uint8_t r = v[0];
            uint32_t exp = r & 0x7f;
            if (r & 0x80) {
                units = exp < 62 ? (int64_t)1 << exp : (int64_t)1 << 62;
            } else {
                units = 1;
                for (uint32_t i = 0; i < exp && i < 18; i++)
                    units *= 10;
            }
        } else if (code == 14 && olen >= 8) { /* if_tsoffset */
            uint64_t hi = rd32(v, s->big), lo = rd32(v + 4, s->big);
            offset_s = (int64_t)(s->big ? (hi << 32 | lo) : (lo << 32 | hi));
            if (offset_s > 4000000000LL || offset_s < -4000000000LL)
                offset_s = 0;
        }
        p += 4 + ((olen + 3u) & ~3u);
    }
    return add_iface(s, linktype, units, offset_s);
}

static int pcapng_packet(Core *s, const uint8_t *b, uint32_t blen, uint32_t type)
{
    uint32_t ifid, caplen, wirelen, hdr;
    uint64_t stamp = 0;
    int has_time = 1;
    if (type == 3) { /* simple packet block: interface 0, no time stamp */
        if (blen < 16)
            return problem(s, s->offset, "simple packet block too short");
        ifid = 0;
        wirelen = rd32(b + 8, s->big);
        caplen = blen - 16 < wirelen ? blen - 16 : wirelen;
        hdr = 12;
        has_time = 0;
    } else {
        if (blen < 32)
            return problem(s, s->offset, "packet block too short (%u bytes)", blen);
        ifid = type == 2 ? rd16(b + 8, s->big) : rd32(b + 8, s->big);
        stamp = (uint64_t)rd32(b + 12, s->big) << 32 | rd32(b + 16, s->big);
        caplen = rd32(b + 20, s->big);
        wirelen = rd32(b + 24, s->big);
        hdr = 28;
        if (caplen > blen - 32)
            return problem(s, s->offset,
                           "packet block at this offset claims %u captured bytes in a %u-byte "
                           "block: skipped", caplen, blen);
    }
    if ((int)ifid >= s->n_ifaces || ifid >= MAX_IFACES) {
        s->frame++;
        return problem(s, s->offset, "packet for interface %u, which was never described: "
                       "skipped", ifid);
    }
    iface_t *ifc = &s->ifaces[ifid];
    int64_t now;
    if (has_time) {
        now = to_ns(stamp, ifc->units, ifc->offset_s);
        s->last_ts = now;
    } else {
        now = s->last_ts == NO_TIME ? 0 : s->last_ts;
        s->no_timestamp++;
    }
    return packet(s, ifc->linktype, (int)ifid, now, b + hdr, caplen, wirelen);
}

static Py_ssize_t feed_pcapng(Core *s, const uint8_t *buf, Py_ssize_t len)
{
    Py_ssize_t pos = 0;
    while (!s->stopped && len - pos >= 12) {
        const uint8_t *b = buf + pos;
        uint32_t type = rd32(b, s->big);
        if (type == 0x0A0D0D0A) {
            uint32_t magic = le32(b + 8);
            if (magic == 0x1A2B3C4D)
                s->big = 0;
            else if (magic == 0x4D3C2B1A)
                s->big = 1;
            else {
                s->stopped = 1;
                if (problem(s, s->offset + pos,
                            "section header with an unknown byte-order magic: stopped") < 0)
                    return -1;
                break;
            }
        }
        uint32_t blen = rd32(b + 4, s->big);
        if (blen < 12 || blen % 4 != 0 || blen > MAX_RECORD) {
            s->stopped = 1;
            if (problem(s, s->offset + pos,
                        "block of type 0x%08x claims a length of %u bytes: the file is damaged "
                        "here; analysed up to this offset", type, blen) < 0)
                return -1;
            break;
        }
        if (len - pos < (Py_ssize_t)blen)
            break;
        if (rd32(b + blen - 4, s->big) != blen) {
            s->stopped = 1;
            if (problem(s, s->offset + pos,
                        "block of type 0x%08x ends with a length that differs from its start: "
                        "the file is damaged here; analysed up to this offset", type) < 0)
                return -1;
            break;
        }
        int rc = 0;
        uint64_t at = s->offset;
        s->offset += (uint64_t)pos; /* problems name the block's own offset */
        if (type == 0x0A0D0D0A) {
            s->n_ifaces = 0; /* a new section describes its interfaces anew */
        } else if (type == 1) {
            rc = idb(s, b, blen);
        } else if (type == 6 || type == 3 || type == 2) {
            rc = pcapng_packet(s, b, blen, type);
        }
        s->offset = at;
        if (rc < 0)
            return -1;
        pos += blen;
    }
    return pos;
}

/* Recognise the file from its first bytes. Returns bytes consumed, 0 for "need more", -1
 * on a Python error (ValueError: not a capture). */
static Py_ssize_t feed_header(Core *s, const uint8_t *buf, Py_ssize_t len)
{
    if (len < 4)
        return 0;
    uint32_t m = le32(buf);
    uint32_t mb = be32(buf);
    if (m == 0xa1b2c3d4 || m == 0xa1b23c4d || m == 0xa1b2cd34 || mb == 0xa1b2c3d4 ||
        mb == 0xa1b23c4d || mb == 0xa1b2cd34) {
        if (len < 24)
            return 0;
        uint32_t magic;
        if (m == 0xa1b2c3d4 || m == 0xa1b23c4d || m == 0xa1b2cd34) {
            s->big = 0;
            magic = m;
        } else {
            s->big = 1;
            magic = mb;
        }
        s->format = 1;
        s->pcap_nsec = magic == 0xa1b23c4d;
        s->pcap_modified = magic == 0xa1b2cd34;
        /* the top bits carry FCS information; the link type is the low 16 */
        s->pcap_linktype = rd32(buf + 20, s->big) & 0xffff;
        if (add_iface(s, s->pcap_linktype, s->pcap_nsec ? 1000000000 : 1000000, 0) < 0)
            return -1;
        return 24;
    }
    if (mb == 0x0A0D0D0A) {
        if (len < 12)
            return 0;
        uint32_t magic = le32(buf + 8);
        if (magic != 0x1A2B3C4D && magic != 0x4D3C2B1A) {
            PyErr_SetString(PyExc_ValueError,
                            "pcapng section header with an unknown byte-order magic");
            return -1;
        }
        s->format = 2;
        s->big = magic == 0x4D3C2B1A;
        return 0; /* the section header is parsed as a block */
    }
    PyErr_Format(PyExc_ValueError, "not a pcap or pcapng file (starts with %02x %02x %02x %02x)",
                 buf[0], buf[1], buf[2], buf[3]);
    return -1;
}

/* ---- the Python type ---------------------------------------------------------------------- */

static int Core_init(Core *s, PyObject *args, PyObject *kw)
{
    static char *names[] = {"gap_threshold", "max_connections", "decode", "streams", NULL};
    double gap = 0.1;
    unsigned int max_conns = 131072;
    int decode = 0;
    PyObject *streams = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|dIpO", names, &gap, &max_conns, &decode,
                                     &streams))
        return -1;
    if (!(gap >= 0) || gap > 1e6) {
        PyErr_SetString(PyExc_ValueError, "gap_threshold must be between 0 and 1e6 seconds");
        return -1;
    }
    if (max_conns < 16 || max_conns > (1u << 24)) {
        PyErr_SetString(PyExc_ValueError, "max_connections must be between 16 and 2**24");
        return -1;
    }
    if (s->events) {
        PyErr_SetString(PyExc_RuntimeError, "Core is already initialised");
        return -1;
    }
    if (streams != Py_None) {
        /* Only these streams' packets come up: a second pass over a large capture for a few
         * connections builds no Python object for the others. */
        s->streams = PyFrozenSet_New(streams);
        if (!s->streams)
            return -1;
    }
    s->gap_ns = (int64_t)(gap * 1e9);
    s->max_conns = max_conns;
    s->decode = decode;
    s->n_buckets = 1;
    while (s->n_buckets < max_conns * 2u)
        s->n_buckets <<= 1;
    s->buckets = PyMem_Malloc((size_t)s->n_buckets * sizeof(int32_t));
    s->ifaces = PyMem_Calloc(MAX_IFACES, sizeof(iface_t));
    s->events = PyList_New(0);
    if (!s->buckets || !s->ifaces || !s->events) {
        PyErr_NoMemory();
        return -1;
    }
    memset(s->buckets, 0xff, (size_t)s->n_buckets * sizeof(int32_t));
    s->free_head = -1;
    s->head[0] = s->head[1] = s->tail[0] = s->tail[1] = -1;
    s->first_ts = s->max_ts = s->last_ts = NO_TIME;
    s->sec = INT64_MIN;
    return 0;
}

static void Core_dealloc(Core *s)
{
    if (s->conns) {
        for (uint32_t i = 0; i < s->n_conns; i++)
            if (s->conns[i].in_use) {
                release_flow(s, &s->conns[i].flow[0]);
                release_flow(s, &s->conns[i].flow[1]);
            }
        PyMem_Free(s->conns);
    }
    PyMem_Free(s->buckets);
    PyMem_Free(s->ifaces);
    Py_XDECREF(s->streams);
    Py_XDECREF(s->events);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static int ready(Core *s)
{
    if (s->events == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Core.__init__ was not called");
        return 0;
    }
    return 1;
}

PyDoc_STRVAR(feed_doc,
             "feed(data) -> int\n\nParse as many whole records of data (the bytes that follow "
             "those fed before) as there are; return how many bytes were used. Feed the rest "
             "again with more bytes after it. Raises ValueError if the stream is not a pcap or "
             "pcapng file.");

static PyObject *Core_feed(Core *s, PyObject *arg)
{
    if (!ready(s))
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const uint8_t *buf = view.buf;
    Py_ssize_t len = view.len, used = 0, n;
    if (s->format == 0) {
        n = feed_header(s, buf, len);
        if (n < 0) {
            PyBuffer_Release(&view);
            return NULL;
        }
        used = n;
        s->offset += (uint64_t)n;
    }
    if (s->format == 1)
        n = feed_pcap(s, buf + used, len - used);
    else if (s->format == 2)
        n = feed_pcapng(s, buf + used, len - used);
    else
        n = 0;
    PyBuffer_Release(&view);
    if (n < 0)
        return NULL;
    s->offset += (uint64_t)n;
    return PyLong_FromSsize_t(used + n);
}

PyDoc_STRVAR(finish_doc,
             "finish(limit) -> bool\n\nAt the end of the data: hand over up to limit of the "
             "connections still in the table (and the last second). True when none is left.");

static PyObject *Core_finish(Core *s, PyObject *arg)
{
    if (!ready(s))
        return NULL;
    Py_ssize_t limit = PyLong_AsSsize_t(arg);
    if (limit < 0 && PyErr_Occurred())
        return NULL;
    if (flush_second(s) < 0)
        return NULL;
    for (Py_ssize_t i = 0; i < limit; i++) {
        int32_t first = s->head[1] >= 0 ? s->head[1] : s->head[0];
        if (first < 0)
            break;
        conn_t *c = &s->conns[first];
        if (finish_conn(s, c, c->list == 1 ? END_CLOSED : END_OPEN) < 0)
            return NULL;
    }
    return PyBool_FromLong(s->head[0] < 0 && s->head[1] < 0);
}

static PyObject *Core_take_events(Core *s, PyObject *Py_UNUSED(ignored))
{
    if (!ready(s))
        return NULL;
    PyObject *taken = s->events;
    s->events = PyList_New(0);
    if (s->events == NULL) {
        s->events = taken;
        return NULL;
    }
    return taken;
}

/* A histogram as (counts, sum_ns, max_ns or None). */
static PyObject *hist_tuple(const hist_t *h)
{
    PyObject *list = PyList_New(N_BUCKETS);
    if (list == NULL)
        return NULL;
    uint64_t n = 0;
    for (int i = 0; i < N_BUCKETS; i++) {
        PyObject *v = PyLong_FromUnsignedLongLong(h->counts[i]);
        if (v == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, v);
        n += h->counts[i];
    }
    if (n == 0)
        return Py_BuildValue("(NdO)", list, 0.0, Py_None);
    return Py_BuildValue("(NdL)", list, h->sum_ns, (long long)h->max_ns);
}

#define SET_U(dict, key, value)                                                   \
    do {                                                                         \
        PyObject *v_ = PyLong_FromUnsignedLongLong((unsigned long long)(value)); \
        if (v_ == NULL || PyDict_SetItemString(dict, key, v_) < 0) {             \
            Py_XDECREF(v_);                                                      \
            Py_DECREF(dict);                                                     \
            return NULL;                                                         \
        }                                                                        \
        Py_DECREF(v_);                                                           \
    } while (0)

static PyObject *Core_counters(Core *s, PyObject *Py_UNUSED(ignored))
{
    static const char *flag_names[16] = {
        "retransmission_only", "lost_segment", "ack_lost_segment", "keep_alive",
        "duplicate_ack", "zero_window", "zero_window_probe", "zero_window_probe_ack",
        "keep_alive_ack", "out_of_order", "fast_retransmission", "window_update",
        "reused_ports", "spurious_retransmission", "unused14", "unused15"};
    static const char *link_names[6] = {"ethernet", "linux_sll", "linux_sll2", "raw_ip",
                                        "bsd_loopback", "other"};
    PyObject *d = PyDict_New();
    if (d == NULL)
        return NULL;
    SET_U(d, "packets", s->packets);
    SET_U(d, "bytes", s->bytes);
    SET_U(d, "ipv4", s->ipv4);
    SET_U(d, "ipv6", s->ipv6);
    SET_U(d, "tcp", s->tcp);
    SET_U(d, "udp", s->udp);
    SET_U(d, "other_ip", s->other_ip);
    SET_U(d, "non_ip", s->non_ip);
    SET_U(d, "ip_fragments", s->fragments);
    SET_U(d, "malformed", s->malformed);
    SET_U(d, "truncated", s->truncated);
    SET_U(d, "unsupported_link", s->unsupported_link);
    SET_U(d, "short_tcp", s->short_tcp);
    SET_U(d, "unreadable_tunnel", s->unreadable_tunnel);
    SET_U(d, "gre", s->tunnels[TUN_GRE]);
    SET_U(d, "erspan", s->tunnels[TUN_ERSPAN]);
    SET_U(d, "vxlan", s->tunnels[TUN_VXLAN]);
    SET_U(d, "geneve", s->tunnels[TUN_GENEVE]);
    SET_U(d, "ip_in_ip", s->tunnels[TUN_IP_IN_IP]);
    SET_U(d, "teredo", s->tunnels[TUN_TEREDO]);
    SET_U(d, "mpls", s->tunnels[TUN_MPLS]);
    SET_U(d, "connections", s->connections);
    SET_U(d, "evicted", s->evicted);
    SET_U(d, "syn", s->syn);
    SET_U(d, "synack", s->synack);
    SET_U(d, "rst", s->rst);
    SET_U(d, "fin", s->fin);
    SET_U(d, "tls_skipped", s->tls_skipped);
    SET_U(d, "approximate_segments", s->approx_segments);
    SET_U(d, "no_timestamp", s->no_timestamp);
    SET_U(d, "live_connections", s->live);
    SET_U(d, "offset", s->offset);
    SET_U(d, "stopped", s->stopped);
    SET_U(d, "format", s->format);
    for (int b = 0; b < 14; b++)
        SET_U(d, flag_names[b], s->flagcount[b]);
    for (int i = 0; i < 6; i++)
        SET_U(d, link_names[i], s->linkcount[i]);
    PyObject *v = s->first_ts == NO_TIME ? Py_NewRef(Py_None) : PyLong_FromLongLong(s->first_ts);
    if (v == NULL || PyDict_SetItemString(d, "first_ns", v) < 0) {
        Py_XDECREF(v);
        Py_DECREF(d);
        return NULL;
    }
    Py_DECREF(v);
    v = s->max_ts == NO_TIME ? Py_NewRef(Py_None) : PyLong_FromLongLong(s->max_ts);
    if (v == NULL || PyDict_SetItemString(d, "last_ns", v) < 0) {
        Py_XDECREF(v);
        Py_DECREF(d);
        return NULL;
    }
    Py_DECREF(v);
    const char *hnames[3] = {"inter_packet", "request_wait", "response_wait"};
    const hist_t *hists[3] = {&s->ipt_hist, &s->request_wait_hist, &s->response_wait_hist};
    for (int i = 0; i < 3; i++) {
        v = hist_tuple(hists[i]);
        if (v == NULL || PyDict_SetItemString(d, hnames[i], v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(v);
    }
    return d;
}

static PyMethodDef Core_methods[] = {
    {"feed", (PyCFunction)Core_feed, METH_O, feed_doc},
    {"finish", (PyCFunction)Core_finish, METH_O, finish_doc},
    {"take_events", (PyCFunction)Core_take_events, METH_NOARGS,
     "The events since the last call, as a list of tuples."},
    {"counters", (PyCFunction)Core_counters, METH_NOARGS, "The counters, as a dict."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "collectors.capture._core.Core",
    .tp_doc = PyDoc_STR("Streaming pcap/pcapng decoder and TCP analyser (see _core.c)."),
    .tp_basicsize = sizeof(Core),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Core_init,
    .tp_dealloc = (destructor)Core_dealloc,
    .tp_methods = Core_methods,
};

static PyObject *hist_edges(PyObject *Py_UNUSED(m), PyObject *Py_UNUSED(ignored))
{
    PyObject *list = PyList_New(N_EDGES);
    if (list == NULL)
        return NULL;
    for (int i = 0; i < N_EDGES; i++) {
        PyObject *v = PyLong_FromLongLong(EDGES[i]);
        if (v == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, v);
    }
    return list;
}

static PyMethodDef module_methods[] = {
    {"histogram_edges_ns", hist_edges, METH_NOARGS,
     "Upper edges (ns) of the time histograms' buckets; the last bucket is above them."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "collectors.capture._core",
    "The compiled hot loop of collectors.capture: decode and analyse capture records.", -1,
    module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__core(void)
{
    if (PyType_Ready(&CoreType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&CoreType);
    if (PyModule_AddObject(m, "Core", (PyObject *)&CoreType) < 0) {
        Py_DECREF(&CoreType);
        Py_DECREF(m);
        return NULL;
    }
    static const struct { const char *name; long value; } constants[] = {
        {"EV_SECOND", EV_SECOND}, {"EV_CONN", EV_CONN}, {"EV_GAP", EV_GAP},
        {"EV_TLS", EV_TLS}, {"EV_PROBLEM", EV_PROBLEM}, {"EV_PACKET", EV_PACKET},
        {"EV_IFACE", EV_IFACE},
        {"A_RETRANSMISSION", A_RETRANSMISSION}, {"A_LOST_PACKET", A_LOST_PACKET},
        {"A_ACK_LOST_PACKET", A_ACK_LOST_PACKET}, {"A_KEEP_ALIVE", A_KEEP_ALIVE},
        {"A_DUPLICATE_ACK", A_DUPLICATE_ACK}, {"A_ZERO_WINDOW", A_ZERO_WINDOW},
        {"A_ZERO_WINDOW_PROBE", A_ZERO_WINDOW_PROBE},
        {"A_ZERO_WINDOW_PROBE_ACK", A_ZERO_WINDOW_PROBE_ACK},
        {"A_KEEP_ALIVE_ACK", A_KEEP_ALIVE_ACK}, {"A_OUT_OF_ORDER", A_OUT_OF_ORDER},
        {"A_FAST_RETRANSMISSION", A_FAST_RETRANSMISSION},
        {"A_WINDOW_UPDATE", A_WINDOW_UPDATE}, {"A_REUSED_PORTS", A_REUSED_PORTS},
        {"A_SPURIOUS_RETRANSMISSION", A_SPURIOUS_RETRANSMISSION},
        {NULL, 0},
    };
    for (int i = 0; constants[i].name; i++)
        if (PyModule_AddIntConstant(m, constants[i].name, constants[i].value) < 0) {
            Py_DECREF(m);
            return NULL;
        }
    return m;
}
