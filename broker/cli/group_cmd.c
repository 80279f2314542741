/*
 * mskmock group list|describe|seek|delete, in the manner of kafka-consumer-groups.sh and rpk:
 * ListGroups on every broker; DescribeGroups, OffsetFetch and ListOffsets through the group's
 * coordinator for members, assignments, committed offsets and lag; OffsetCommit with
 * generation -1 and no member id to move a group's offsets (only while it has no members,
 * as Kafka allows); DeleteGroups.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli_int.h"
#include "group.h"
#include "kp_mem.h"

#define CMD "group"

static void usage(FILE *f) {
    fprintf(f, "usage: mskmock group list                   groups of every broker, their state and protocol type\n"
               "       mskmock group describe GROUP         members, assignments, committed offsets and lag\n"
               "       mskmock group seek GROUP --to beginning|end|OFFSET|@TIMESTAMP_MS [--topic TOPIC [-p PARTITION]]\n"
               "       mskmock group delete GROUP\n"
               "seek commits new offsets for a group without active members (as kafka-consumer-groups.sh\n"
               "--reset-offsets --execute does): for every partition of TOPIC, or without --topic for every\n"
               "partition the group has an offset for. OFFSET is kept between each partition's first and\n"
               "next offset; @TIMESTAMP_MS is the first record at or after that time (the end if none is).\n"
               CLI_COMMON_USAGE);
}

/* ---- list ---- */

typedef struct listed {
    char *id, *state, *type;
    int32_t coordinator;
} listed;

static int cmp_listed(const void *x, const void *y) { return strcmp(((const listed *)x)->id, ((const listed *)y)->id); }

static int list(cli_cluster *cl) {
    char err[1024], buf[512];
    kp_arena a = {0};
    kp_metadata_response md;
    listed *v = NULL;
    size_t nv = 0;
    int rc = 1;
    if (cli_metadata(cl, NULL, &md, &a, err, sizeof err) != 0) goto out;
    const kp_msg *m = &kp_msg_list_groups;
    for (int32_t i = 0; i < md.brokers.n; i++) {
        int32_t id = md.brokers.v[i].node_id;
        cli_conn *c = cli_node(cl, id, err, sizeof err);
        int16_t ver = c ? cli_version(c, m, err, sizeof err) : -1;
        if (ver < 0) goto out;
        kp_list_groups_request req;
        kp_defaults(m->req, ver, &req);
        kp_list_groups_response resp;
        if (cli_call(c, m, ver, &req, &resp, &a, err, sizeof err) != 0) goto out;
        if (resp.error_code) {
            snprintf(err, sizeof err, "%s: ListGroups: %s", c->addr,
                     cli_err_text(resp.error_code, KP_STR_NULL, buf, sizeof buf));
            goto out;
        }
        v = xrealloc(v, sizeof *v * (nv + (size_t)resp.groups.n + 1));
        for (int32_t j = 0; j < resp.groups.n; j++) {
            const kp_list_groups_listed_group *g = &resp.groups.v[j];
            /* state from v4 on; the type of the group (classic, consumer) from v5 */
            v[nv++] = (listed){kp_str_dup(g->group_id), ver >= 4 ? kp_str_dup(g->group_state) : NULL,
                               kp_str_dup(g->protocol_type), id};
        }
    }
    if (nv) qsort(v, nv, sizeof *v, cmp_listed);
    printf("%-40s %-20s %-14s %s\n", "GROUP", "STATE", "PROTOCOL-TYPE", "COORDINATOR");
    for (size_t i = 0; i < nv; i++)
        printf("%-40s %-20s %-14s %d\n", v[i].id ? v[i].id : "", v[i].state ? v[i].state : "-",
               v[i].type && *v[i].type ? v[i].type : "-", v[i].coordinator);
    rc = 0;
out:
    if (rc) cli_fail(CMD " list", err);
    for (size_t i = 0; i < nv; i++) free(v[i].id), free(v[i].state), free(v[i].type);
    free(v);
    kp_arena_free(&a);
    return rc;
}

/* ---- describe ---- */

/* DescribeGroups for one group through its coordinator; *g points into a. */
static int describe_group(cli_conn *c, const char *group, const kp_describe_groups_described_group **g, kp_arena *a,
                          char *err, size_t n) {
    const kp_msg *m = &kp_msg_describe_groups;
    char buf[512];
    int16_t ver = cli_version(c, m, err, n);
    if (ver < 0) return -1;
    kp_describe_groups_request req;
    kp_defaults(m->req, ver, &req);
    kp_str id = kp_str_c(group);
    req.groups.n = 1;
    req.groups.v = &id;
    kp_describe_groups_response *resp = kp_arena_alloc(a, sizeof *resp);
    if (cli_call(c, m, ver, &req, resp, a, err, n) != 0) return -1;
    if (resp->groups.n != 1) {
        snprintf(err, n, "%s: DescribeGroups answered %d groups for 1", c->addr, resp->groups.n);
        return -1;
    }
    *g = &resp->groups.v[0];
    if ((*g)->error_code) {
        snprintf(err, n, "group %s: DescribeGroups: %s", group, cli_err_text((*g)->error_code, KP_STR_NULL, buf, sizeof buf));
        return -1;
    }
    return 0;
}

/* A consumer member's assignment, LENIENT as Kafka reads it; nassigned -1 when unreadable. */
static void member_assignment(const kp_describe_groups_described_group *g, int32_t i, kp_assignment *as, kp_arena *a) {
    const kp_bytes *b = &g->members.v[i].member_assignment;
    memset(as, 0, sizeof *as);
    as->nassigned = -1;
    if (!kp_str_eq(g->protocol_type, "consumer") || b->len < 0) return;
    if (b->len == 0) {
        as->nassigned = 0; /* Kafka's "nothing assigned" */
        return;
    }
    kp_assignment_decode((const uint8_t *)b->p, (size_t)b->len, KP_CONSUMER_LENIENT, as, a, NULL);
}

static void print_assignment(const kp_assignment *as) {
    if (as->nassigned < 0) {
        printf("-");
        return;
    }
    if (!as->nassigned) printf("(none)");
    for (int32_t t = 0; t < as->nassigned; t++) {
        printf("%s%.*s:", t ? " " : "", (int)as->assigned[t].topic.len, as->assigned[t].topic.p);
        for (int32_t k = 0; k < as->assigned[t].n; k++) printf("%s%d", k ? "," : "", as->assigned[t].partitions[k]);
    }
}

static int describe(cli_cluster *cl, const char *group) {
    char err[1024];
    kp_arena a = {0};
    cli_tps tps = {0};
    int rc = 1;
    const kp_describe_groups_described_group *g;
    cli_conn *c = cli_coordinator(cl, group, err, sizeof err);
    if (!c || describe_group(c, group, &g, &a, err, sizeof err) != 0) goto out;
    if (cli_offset_fetch(c, group, &tps, true, err, sizeof err) != 0) goto out;
    if (kp_str_eq(g->group_state, "Dead") && !tps.n) {
        snprintf(err, sizeof err, "group %s does not exist (no members, no committed offsets)", group);
        goto out;
    }
    kp_assignment *as = kp_arena_alloc(&a, sizeof *as * (size_t)(g->members.n + 1));
    for (int32_t i = 0; i < g->members.n; i++) {
        member_assignment(g, i, &as[i], &a);
        for (int32_t t = 0; t < as[i].nassigned; t++)
            for (int32_t k = 0; k < as[i].assigned[t].n; k++)
                cli_tps_add(&tps, as[i].assigned[t].topic.p, as[i].assigned[t].topic.len, as[i].assigned[t].partitions[k]);
    }
    /* an assigned partition without a commit came in after the committed ones: sort merges them */
    for (int i = 0; i < tps.n; i++)
        for (int j = 0; j < tps.n; j++)
            if (i != j && tps.v[j].committed >= 0 && tps.v[i].partition == tps.v[j].partition &&
                !strcmp(tps.v[i].topic, tps.v[j].topic))
                tps.v[i].committed = tps.v[j].committed;
    cli_tps_sort(&tps);
    if (cli_tps_leaders(cl, &tps, err, sizeof err) != 0 || cli_tps_list_offsets(cl, &tps, -1, false, err, sizeof err) != 0)
        goto out;

    printf("GROUP          %s\nCOORDINATOR    %s\nSTATE          %.*s\n", group, c->addr, (int)g->group_state.len,
           g->group_state.p);
    printf("PROTOCOL       %.*s%s%.*s\nMEMBERS        %d\n", (int)g->protocol_type.len, g->protocol_type.p,
           g->protocol_data.len > 0 ? " " : "", (int)g->protocol_data.len, g->protocol_data.p, g->members.n);
    if (g->members.n) {
        printf("\n%-50s %-24s %-18s %s\n", "MEMBER-ID", "CLIENT-ID", "HOST", "ASSIGNMENT");
        for (int32_t i = 0; i < g->members.n; i++) {
            const kp_describe_groups_described_group_member *mb = &g->members.v[i];
            printf("%-50.*s %-24.*s %-18.*s ", (int)mb->member_id.len, mb->member_id.p, (int)mb->client_id.len,
                   mb->client_id.p, (int)mb->client_host.len, mb->client_host.p);
            print_assignment(&as[i]);
            if (mb->group_instance_id.len > 0)
                printf("  (instance %.*s)", (int)mb->group_instance_id.len, mb->group_instance_id.p);
            printf("\n");
        }
    }
    if (tps.n) printf("\n%-30s %-10s %-12s %-12s %-8s %s\n", "TOPIC", "PARTITION", "COMMITTED", "END", "LAG", "MEMBER-ID");
    for (int i = 0; i < tps.n; i++) {
        const cli_tp *tp = &tps.v[i];
        char com[24] = "-", end[24] = "-", lag[24] = "-";
        if (tp->committed >= 0) snprintf(com, sizeof com, "%" PRId64, tp->committed);
        if (tp->offset >= 0) snprintf(end, sizeof end, "%" PRId64, tp->offset);
        if (tp->committed >= 0 && tp->offset >= 0)
            snprintf(lag, sizeof lag, "%" PRId64, tp->offset > tp->committed ? tp->offset - tp->committed : 0);
        const char *owner = "-";
        int owner_len = 1;
        for (int32_t m = 0; m < g->members.n; m++)
            for (int32_t t = 0; t < as[m].nassigned; t++)
                if (kp_str_eq(as[m].assigned[t].topic, tp->topic))
                    for (int32_t k = 0; k < as[m].assigned[t].n; k++)
                        if (as[m].assigned[t].partitions[k] == tp->partition) {
                            owner = g->members.v[m].member_id.p;
                            owner_len = g->members.v[m].member_id.len;
                        }
        printf("%-30s %-10d %-12s %-12s %-8s %.*s\n", tp->topic, tp->partition, com, end, lag, owner_len, owner);
    }
    rc = 0;
out:
    if (rc) cli_fail(CMD " describe", err);
    cli_tps_free(&tps);
    kp_arena_free(&a);
    return rc;
}

/* ---- seek ---- */

static int seek(cli_cluster *cl, const char *group, const char *to, const char *topic, long partition) {
    char err[1024];
    kp_arena a = {0};
    cli_tps tps = {0}, lo = {0};
    int rc = 1;
    const kp_describe_groups_described_group *g;
    cli_conn *c = cli_coordinator(cl, group, err, sizeof err);
    if (!c || describe_group(c, group, &g, &a, err, sizeof err) != 0) goto out;
    if (g->members.n > 0) {
        snprintf(err, sizeof err, "group %s has %d active member(s) (state %.*s): Kafka moves a group's offsets only "
                 "while it has none; stop its consumers first", group, g->members.n, (int)g->group_state.len,
                 g->group_state.p);
        goto out;
    }
    if (topic) {
        if (cli_tps_of_topic(cl, &tps, topic, partition, err, sizeof err) != 0) goto out;
    } else {
        if (cli_offset_fetch(c, group, &tps, true, err, sizeof err) != 0) goto out;
        if (!tps.n) {
            snprintf(err, sizeof err, "group %s has no committed offsets: name the partitions with --topic", group);
            goto out;
        }
        cli_tps_sort(&tps);
        if (cli_tps_leaders(cl, &tps, err, sizeof err) != 0) goto out;
    }
    if (topic && cli_offset_fetch(c, group, &tps, false, err, sizeof err) != 0) goto out; /* the previous offsets */
    if (!strcmp(to, "beginning") || !strcmp(to, "end")) {
        if (cli_tps_list_offsets(cl, &tps, !strcmp(to, "end") ? -1 : -2, true, err, sizeof err) != 0) goto out;
    } else if (to[0] == '@') {
        if (cli_tps_list_offsets(cl, &tps, strtoll(to + 1, NULL, 10), true, err, sizeof err) != 0) goto out;
        for (int i = 0; i < tps.n; i++)
            if (tps.v[i].offset < 0) { /* nothing that recent: the end, as kafka-consumer-groups does */
                cli_tps one = {&tps.v[i], 1, 1};
                if (cli_tps_list_offsets(cl, &one, -1, true, err, sizeof err) != 0) goto out;
            }
    } else {
        int64_t want = strtoll(to, NULL, 10);
        for (int i = 0; i < tps.n; i++) {
            cli_tps_add(&lo, tps.v[i].topic, -1, tps.v[i].partition);
            lo.v[i].leader = tps.v[i].leader;
        }
        if (cli_tps_list_offsets(cl, &lo, -2, true, err, sizeof err) != 0 ||
            cli_tps_list_offsets(cl, &tps, -1, true, err, sizeof err) != 0)
            goto out;
        for (int i = 0; i < tps.n; i++) /* kafka-consumer-groups keeps the offset inside the log */
            tps.v[i].offset = want < lo.v[i].offset ? lo.v[i].offset : want > tps.v[i].offset ? tps.v[i].offset : want;
    }
    int16_t code;
    if (cli_offset_commit(c, group, -1, "", &tps, &code, err, sizeof err) != 0) goto out;
    printf("%-30s %-10s %-12s %s\n", "TOPIC", "PARTITION", "PREVIOUS", "NEW");
    for (int i = 0; i < tps.n; i++) {
        char prev[24] = "-";
        if (tps.v[i].committed >= 0) snprintf(prev, sizeof prev, "%" PRId64, tps.v[i].committed);
        printf("%-30s %-10d %-12s %" PRId64 "\n", tps.v[i].topic, tps.v[i].partition, prev, tps.v[i].offset);
    }
    rc = 0;
out:
    if (rc) cli_fail(CMD " seek", err);
    cli_tps_free(&tps);
    cli_tps_free(&lo);
    kp_arena_free(&a);
    return rc;
}

/* ---- delete ---- */

static int delete(cli_cluster *cl, const char *group) {
    char err[1024], buf[512];
    kp_arena a = {0};
    int rc = 1;
    const kp_msg *m = &kp_msg_delete_groups;
    cli_conn *c = cli_coordinator(cl, group, err, sizeof err);
    int16_t ver = c ? cli_version(c, m, err, sizeof err) : -1;
    if (ver < 0) goto out;
    kp_delete_groups_request req;
    kp_defaults(m->req, ver, &req);
    kp_str id = kp_str_c(group);
    req.groups_names.n = 1;
    req.groups_names.v = &id;
    kp_delete_groups_response resp;
    if (cli_call(c, m, ver, &req, &resp, &a, err, sizeof err) != 0) goto out;
    if (resp.results.n != 1) {
        snprintf(err, sizeof err, "%s: DeleteGroups answered %d groups for 1", c->addr, resp.results.n);
        goto out;
    }
    int16_t code = resp.results.v[0].error_code;
    if (code) {
        snprintf(err, sizeof err, "group %s: %s%s", group, cli_err_text(code, KP_STR_NULL, buf, sizeof buf),
                 code == KERR_NON_EMPTY_GROUP ? " (it has active members: stop its consumers first)" : "");
        goto out;
    }
    printf("deleted group %s\n", group);
    rc = 0;
out:
    if (rc) cli_fail(CMD " delete", err);
    kp_arena_free(&a);
    return rc;
}

int cli_group(int argc, char **argv) {
    cli_opts o;
    cli_opts_default(&o);
    const char *sub = NULL, *group = NULL, *to = NULL, *topic = NULL;
    long partition = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int k = cli_common_flag(&o, argc, argv, &i);
        if (k < 0) return cli_usage_error(CMD, "a bad or missing value after ", a);
        if (k) continue;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--to")) {
            if (!v || !cli_valid_position(v)) return cli_usage_error(CMD, "--to takes beginning, end, OFFSET or @TIMESTAMP_MS", NULL);
            to = v;
            i++;
        } else if (!strcmp(a, "-t") || !strcmp(a, "--topic")) {
            if (!v) return cli_usage_error(CMD, "--topic needs a topic name", NULL);
            topic = v;
            i++;
        } else if (!strcmp(a, "-p") || !strcmp(a, "--partition")) {
            char *end;
            partition = v ? strtol(v, &end, 10) : -1;
            if (!v || *end || !*v || partition < 0 || partition > INT32_MAX)
                return cli_usage_error(CMD, "-p needs a partition number", NULL);
            i++;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error(CMD, "unknown flag ", a);
        } else if (!sub) {
            sub = a;
        } else if (!group) {
            group = a;
        } else {
            return cli_usage_error(CMD, "unexpected argument ", a);
        }
    }
    if (!sub) {
        usage(stderr);
        return 2;
    }
    bool is_seek = !strcmp(sub, "seek");
    if (strcmp(sub, "list") && strcmp(sub, "describe") && !is_seek && strcmp(sub, "delete"))
        return cli_usage_error(CMD, "unknown subcommand ", sub);
    bool named = strcmp(sub, "list") != 0;
    if (named != (group != NULL))
        return cli_usage_error(CMD, named ? "a group id is needed after " : "no group id goes after ", sub);
    if (!is_seek && (to || topic || partition >= 0)) return cli_usage_error(CMD, "--to, --topic and -p go with seek, not ", sub);
    if (is_seek && !to) return cli_usage_error(CMD, "seek needs --to beginning|end|OFFSET|@TIMESTAMP_MS", NULL);
    if (partition >= 0 && !topic) return cli_usage_error(CMD, "-p needs --topic", NULL);
    cli_cluster cl;
    char err[1024];
    if (cli_cluster_open(&cl, &o, err, sizeof err) != 0) return cli_fail(CMD, err);
    int rc = !strcmp(sub, "list")       ? list(&cl)
             : !strcmp(sub, "describe") ? describe(&cl, group)
             : is_seek                  ? seek(&cl, group, to, topic, partition)
                                        : delete(&cl, group);
    cli_cluster_close(&cl);
    return rc;
}
