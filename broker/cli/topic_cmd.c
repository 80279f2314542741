/*
 * mskmock topic create|list|describe|delete: CreateTopics, Metadata, DescribeConfigs and
 * DeleteTopics at the highest versions both sides serve. Creating and deleting go to the
 * broker Metadata names as controller (MSK Serverless names one there), else the bootstrap one.
 */
#include <stdlib.h>
#include <string.h>

#include "cli_int.h"
#include "kp_mem.h"

#define CMD "topic"

static void usage(FILE *f) {
    fprintf(f, "usage: mskmock topic create NAME [-p PARTITIONS] [-r REPLICATION_FACTOR] [-c KEY=VALUE]...\n"
               "       mskmock topic list\n"
               "       mskmock topic describe NAME    partitions, leaders, replicas and configs\n"
               "       mskmock topic delete NAME\n"
               "Without -p and -r the broker's defaults apply.\n" CLI_COMMON_USAGE);
}

static cli_conn *controller(cli_cluster *cl, kp_arena *a, char *err, size_t n) {
    kp_metadata_response md;
    if (cli_metadata(cl, NULL, &md, a, err, n) != 0) return NULL;
    if (cl->controller < 0) return cl->boot;
    return cli_node(cl, cl->controller, err, n);
}

static int create(cli_cluster *cl, const char *name, int32_t partitions, int16_t rf, char **configs, int nconfigs) {
    char err[1024], buf[1024];
    kp_arena a = {0};
    const kp_msg *m = &kp_msg_create_topics;
    cli_conn *c = controller(cl, &a, err, sizeof err);
    int16_t ver = c ? cli_version(c, m, err, sizeof err) : -1;
    int rc = 1;
    if (ver < 0) goto out;
    if (ver < 4 && (partitions < 0 || rf < 0)) {
        snprintf(err, sizeof err, "%s serves CreateTopics up to v%d, which needs -p and -r", c->addr, ver);
        goto out;
    }
    kp_create_topics_request req;
    kp_defaults(m->req, ver, &req);
    kp_create_topics_creatable_topic t;
    kp_defaults(&kp_create_topics_creatable_topic_schema, ver, &t);
    t.name = kp_str_c(name);
    t.num_partitions = partitions;
    t.replication_factor = rf;
    kp_create_topics_creatable_topic_config *cf = kp_arena_alloc(&a, sizeof *cf * (size_t)(nconfigs + 1));
    for (int i = 0; i < nconfigs; i++) {
        char *eq = strchr(configs[i], '=');
        cf[i].name = (kp_str){configs[i], (int32_t)(eq - configs[i])};
        cf[i].value = kp_str_c(eq + 1);
    }
    t.configs.n = nconfigs;
    t.configs.v = cf;
    req.topics.n = 1;
    req.topics.v = &t;
    req.timeout_ms = cl->o->timeout_ms;
    kp_create_topics_response resp;
    if (cli_call(c, m, ver, &req, &resp, &a, err, sizeof err) != 0) goto out;
    if (resp.topics.n != 1) {
        snprintf(err, sizeof err, "%s: CreateTopics answered %d topics for 1", c->addr, resp.topics.n);
        goto out;
    }
    const kp_create_topics_creatable_topic_result *r = &resp.topics.v[0];
    if (r->error_code) {
        snprintf(err, sizeof err, "%s: %s", name, cli_err_text(r->error_code, r->error_message, buf, sizeof buf));
        goto out;
    }
    if (ver >= 5)
        printf("created topic %s: %d partition%s, replication factor %d\n", name, r->num_partitions,
               r->num_partitions == 1 ? "" : "s", r->replication_factor);
    else printf("created topic %s\n", name);
    rc = 0;
out:
    if (rc) cli_fail(CMD " create", err);
    kp_arena_free(&a);
    return rc;
}

static int cmp_topics(const void *x, const void *y) {
    const kp_metadata_response_topic *a = x, *b = y;
    int32_t n = a->name.len < b->name.len ? a->name.len : b->name.len;
    int c = n > 0 ? memcmp(a->name.p, b->name.p, (size_t)n) : 0;
    return c ? c : (a->name.len > b->name.len) - (a->name.len < b->name.len);
}

static int list(cli_cluster *cl) {
    char err[1024];
    kp_arena a = {0};
    kp_metadata_response md;
    if (cli_metadata(cl, NULL, &md, &a, err, sizeof err) != 0) {
        kp_arena_free(&a);
        return cli_fail(CMD " list", err);
    }
    if (md.topics.n > 0) qsort(md.topics.v, (size_t)md.topics.n, sizeof md.topics.v[0], cmp_topics);
    printf("%-40s %10s %8s\n", "NAME", "PARTITIONS", "REPLICAS");
    for (int32_t i = 0; i < md.topics.n; i++) {
        const kp_metadata_response_topic *t = &md.topics.v[i];
        if (t->is_internal || t->name.len < 0) continue;
        int32_t rf = t->partitions.n > 0 ? t->partitions.v[0].replica_nodes.n : 0;
        printf("%-40.*s %10d %8d\n", (int)t->name.len, t->name.p, t->partitions.n, rf);
    }
    kp_arena_free(&a);
    return 0;
}

static const char *source_name(int8_t s) {
    static const char *const names[] = {"unknown", "topic", "broker", "default broker", "static broker", "default",
                                        "broker logger", "client metrics", "group"};
    return s >= 0 && s < (int8_t)(sizeof names / sizeof names[0]) ? names[s] : "unknown";
}

static void print_ids(const int32_t *v, int32_t n) {
    for (int32_t i = 0; i < n; i++) printf("%s%d", i ? "," : "", v[i]);
}

static int describe(cli_cluster *cl, const char *name) {
    char err[1024], buf[1024];
    kp_arena a = {0};
    kp_metadata_response md;
    int rc = 1;
    if (cli_metadata(cl, name, &md, &a, err, sizeof err) != 0) goto out;
    if (md.topics.n != 1) {
        snprintf(err, sizeof err, "%s: Metadata answered %d topics for 1", name, md.topics.n);
        goto out;
    }
    const kp_metadata_response_topic *t = &md.topics.v[0];
    if (t->error_code) {
        snprintf(err, sizeof err, "%s: %s", name, cli_err_text(t->error_code, KP_STR_NULL, buf, sizeof buf));
        goto out;
    }
    printf("NAME        %s\n", name);
    static const kp_uuid zero;
    if (memcmp(&t->topic_id, &zero, sizeof zero)) {
        printf("ID          ");
        for (int i = 0; i < 16; i++) printf("%02x%s", t->topic_id.b[i], i == 3 || i == 5 || i == 7 || i == 9 ? "-" : "");
        printf("\n");
    }
    printf("PARTITIONS  %d\n\n%-10s %-8s %-6s %-20s %s\n", t->partitions.n, "PARTITION", "LEADER", "EPOCH", "REPLICAS",
           "ISR");
    for (int32_t i = 0; i < t->partitions.n; i++) {
        const kp_metadata_response_partition *p = &t->partitions.v[i];
        char reps[256];
        size_t off = 0;
        for (int32_t j = 0; j < p->replica_nodes.n && off < sizeof reps; j++)
            off += (size_t)snprintf(reps + off, sizeof reps - off, "%s%d", j ? "," : "", p->replica_nodes.v[j]);
        if (!p->replica_nodes.n) reps[0] = 0;
        printf("%-10d %-8d %-6d %-20s ", p->partition_index, p->leader_id, p->leader_epoch, reps);
        print_ids(p->isr_nodes.v, p->isr_nodes.n);
        if (p->error_code) printf("  (%s)", kp_err_name(p->error_code));
        printf("\n");
    }

    const kp_msg *m = &kp_msg_describe_configs;
    int16_t ver = cli_version(cl->boot, m, err, sizeof err);
    if (ver < 0) goto out;
    kp_describe_configs_request req;
    kp_defaults(m->req, ver, &req);
    kp_describe_configs_resource res;
    kp_defaults(&kp_describe_configs_resource_schema, ver, &res);
    res.resource_type = 2; /* TOPIC */
    res.resource_name = kp_str_c(name);
    res.configuration_keys.n = -1; /* all */
    req.resources.n = 1;
    req.resources.v = &res;
    kp_describe_configs_response resp;
    if (cli_call(cl->boot, m, ver, &req, &resp, &a, err, sizeof err) != 0) goto out;
    if (resp.results.n != 1) {
        snprintf(err, sizeof err, "%s: DescribeConfigs answered %d resources for 1", cl->boot->addr, resp.results.n);
        goto out;
    }
    const kp_describe_configs_result *r = &resp.results.v[0];
    if (r->error_code) {
        snprintf(err, sizeof err, "%s: configs: %s", name, cli_err_text(r->error_code, r->error_message, buf, sizeof buf));
        goto out;
    }
    printf("\nCONFIGS\n");
    for (int32_t i = 0; i < r->configs.n; i++) {
        const kp_describe_configs_resource_result *c = &r->configs.v[i];
        const char *src = ver >= 1 ? source_name(c->config_source) : c->is_default ? "default" : "set";
        char *val = kp_str_dup(c->value);
        printf("  %.*s=%s  (%s%s)\n", (int)c->name.len, c->name.p, val ? val : c->is_sensitive ? "(hidden)" : "(null)",
               src, c->read_only ? ", read-only" : "");
        free(val);
    }
    rc = 0;
out:
    if (rc) cli_fail(CMD " describe", err);
    kp_arena_free(&a);
    return rc;
}

static int delete(cli_cluster *cl, const char *name) {
    char err[1024], buf[1024];
    kp_arena a = {0};
    const kp_msg *m = &kp_msg_delete_topics;
    cli_conn *c = controller(cl, &a, err, sizeof err);
    int16_t ver = c ? cli_version(c, m, err, sizeof err) : -1;
    int rc = 1;
    if (ver < 0) goto out;
    kp_delete_topics_request req;
    kp_defaults(m->req, ver, &req);
    kp_delete_topics_delete_topic_state st;
    kp_defaults(&kp_delete_topics_delete_topic_state_schema, ver, &st);
    st.name = kp_str_c(name);
    kp_str names[1] = {kp_str_c(name)};
    /* v6 names topics in topics[], earlier versions in topic_names: the description writes the one that exists */
    req.topics.n = 1;
    req.topics.v = &st;
    req.topic_names.n = 1;
    req.topic_names.v = names;
    req.timeout_ms = cl->o->timeout_ms;
    kp_delete_topics_response resp;
    if (cli_call(c, m, ver, &req, &resp, &a, err, sizeof err) != 0) goto out;
    if (resp.responses.n != 1) {
        snprintf(err, sizeof err, "%s: DeleteTopics answered %d topics for 1", c->addr, resp.responses.n);
        goto out;
    }
    const kp_delete_topics_deletable_topic_result *r = &resp.responses.v[0];
    if (r->error_code) {
        snprintf(err, sizeof err, "%s: %s", name, cli_err_text(r->error_code, r->error_message, buf, sizeof buf));
        goto out;
    }
    printf("deleted topic %s\n", name);
    rc = 0;
out:
    if (rc) cli_fail(CMD " delete", err);
    kp_arena_free(&a);
    return rc;
}

static int parse_int(const char *s, long lo, long hi, long *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int cli_topic(int argc, char **argv) {
    cli_opts o;
    cli_opts_default(&o);
    const char *sub = NULL, *name = NULL;
    long partitions = -1, rf = -1;
    char **configs = xcalloc((size_t)argc + 1, sizeof *configs);
    int nconfigs = 0, rc = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int k = cli_common_flag(&o, argc, argv, &i);
        if (k < 0) {
            rc = cli_usage_error(CMD, "a bad or missing value after ", a);
            goto out;
        }
        if (k) continue;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            rc = 0;
            goto out;
        }
        bool has = i + 1 < argc;
        if (!strcmp(a, "-p") || !strcmp(a, "--partitions")) {
            if (!has || parse_int(argv[++i], 1, INT32_MAX, &partitions)) {
                rc = cli_usage_error(CMD, "-p needs a positive number of partitions", NULL);
                goto out;
            }
        } else if (!strcmp(a, "-r") || !strcmp(a, "--replication-factor")) {
            if (!has || parse_int(argv[++i], 1, INT16_MAX, &rf)) {
                rc = cli_usage_error(CMD, "-r needs a positive replication factor", NULL);
                goto out;
            }
        } else if (!strcmp(a, "-c") || !strcmp(a, "--config")) {
            if (!has || !strchr(argv[i + 1], '=') || argv[i + 1][0] == '=') {
                rc = cli_usage_error(CMD, "-c needs KEY=VALUE", NULL);
                goto out;
            }
            configs[nconfigs++] = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            rc = cli_usage_error(CMD, "unknown flag ", a);
            goto out;
        } else if (!sub) {
            sub = a;
        } else if (!name) {
            name = a;
        } else {
            rc = cli_usage_error(CMD, "unexpected argument ", a);
            goto out;
        }
    }
    if (!sub) {
        usage(stderr);
        goto out;
    }
    bool named = strcmp(sub, "list") != 0;
    if (strcmp(sub, "create") && strcmp(sub, "list") && strcmp(sub, "describe") && strcmp(sub, "delete")) {
        rc = cli_usage_error(CMD, "unknown subcommand ", sub);
        goto out;
    }
    if (named != (name != NULL)) {
        rc = cli_usage_error(CMD, named ? "a topic name is needed after " : "no topic name goes after ", sub);
        goto out;
    }
    if (strcmp(sub, "create") && (partitions >= 0 || rf >= 0 || nconfigs)) {
        rc = cli_usage_error(CMD, "-p, -r and -c go with create, not ", sub);
        goto out;
    }
    cli_cluster cl;
    char err[1024];
    if (cli_cluster_open(&cl, &o, err, sizeof err) != 0) {
        rc = cli_fail(CMD, err);
        goto out;
    }
    if (!strcmp(sub, "create")) rc = create(&cl, name, (int32_t)partitions, (int16_t)rf, configs, nconfigs);
    else if (!strcmp(sub, "list")) rc = list(&cl);
    else if (!strcmp(sub, "describe")) rc = describe(&cl, name);
    else rc = delete(&cl, name);
    cli_cluster_close(&cl);
out:
    free(configs);
    return rc;
}
