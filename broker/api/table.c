/*
 * The handler table: the index of everything mskmock serves. ApiVersions
 * advertises exactly these ranges. Minimums stay at 0 where old librdkafka
 * probes exact versions (reference §4.4); maxima stop where our handlers
 * stop (no Produce 12 / transaction V2, no Metadata 13).
 */
#include "api.h"
#include "iam/sasl.h"

static const api_handler table[] = {
    {0, 0, 11, api_produce},
    {1, 0, 17, api_fetch},
    {2, 0, 10, api_list_offsets},
    {3, 0, 12, api_metadata},
    {8, 0, 9, api_offset_commit},
    {9, 0, 9, api_offset_fetch},
    {10, 0, 6, api_find_coordinator},
    {11, 0, 9, api_join_group},
    {12, 0, 4, api_heartbeat},
    {13, 0, 5, api_leave_group},
    {14, 0, 5, api_sync_group},
    {15, 0, 5, api_describe_groups},
    {16, 0, 5, api_list_groups},
    {17, 0, 1, api_sasl_handshake},
    {18, 0, 4, api_api_versions},
    {19, 0, 7, api_create_topics},
    {20, 0, 6, api_delete_topics},
    {22, 0, 5, api_init_producer_id},
    {23, 0, 4, api_offset_for_leader_epoch},
    {32, 0, 4, api_describe_configs},
    {33, 0, 2, api_alter_configs},
    {36, 0, 2, api_sasl_authenticate},
    {37, 0, 3, api_create_partitions},
    {42, 0, 2, api_delete_groups},
    {44, 0, 1, api_incremental_alter_configs},
    {47, 0, 0, api_offset_delete},
    {60, 0, 1, api_describe_cluster},
};

const api_handler *api_lookup(int16_t key) {
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].key == key) return &table[i];
    return NULL;
}

size_t api_count(void) { return sizeof table / sizeof table[0]; }
const api_handler *api_at(size_t i) { return &table[i]; }

void api_range(const srv *s, const api_handler *h, int16_t *vmin, int16_t *vmax) {
    *vmin = h->vmin;
    *vmax = h->vmax;
    /* MSK Serverless offers SaslHandshake v1 only (raw v0 tokens are kafka-python's old way) */
    if (h->key == 17 && !s->cfg->sasl_handshake_v0_enable) *vmin = 1;
}
