/*
 * kafka_versions: the Apache Kafka versions MSK lists through ListKafkaVersions, and their
 * status, as a table: one row per version string as the API spells it, in ascending order.
 *
 * Sources, late 2026: AWS's "Supported Apache Kafka versions" page
 * (https://docs.aws.amazon.com/msk/latest/developerguide/supported-kafka-versions.html) for the
 * versions, their MSK release and end-of-support dates; a version is DEPRECATED once its end of
 * support has passed (https://docs.aws.amazon.com/msk/latest/developerguide/version-support.html:
 * no new clusters on it), ACTIVE otherwise. The API spells the tiered 2.8.2 "2.8.2.tiered" (the
 * CreateCluster refusal quoted in https://github.com/aws/aws-cdk/issues/25565) and names the KRaft
 * variants of 3.7 and later with a ".kraft" suffix, 4.x being KRaft only (aws-cdk's
 * aws-msk-alpha KafkaVersion, https://github.com/aws/aws-cdk, which also gives 4.2.x.kraft, on
 * Express brokers only). The end of support of 3.6.0 (2026-06-01) and of 3.7.x (2026-09-01) are
 * the page's as endoflife.date/amazon-msk quotes it in 2026.
 */
#include <stddef.h>
#include <string.h>

#include "aws_call.h"

const kafka_version kafka_versions[] = {
    /* version          status           MSK release   end of support */
    {"1.1.1", "DEPRECATED"},          /* --          2024-06-05 */
    {"2.1.0", "DEPRECATED"},          /* --          2024-06-05 */
    {"2.2.1", "DEPRECATED"},          /* 2019-07-31  2024-06-08 */
    {"2.3.1", "DEPRECATED"},          /* 2019-12-19  2024-06-08 */
    {"2.4.1", "DEPRECATED"},          /* 2020-04-02  2024-06-08 */
    {"2.4.1.1", "DEPRECATED"},        /* 2020-09-09  2024-06-08 */
    {"2.5.1", "DEPRECATED"},          /* 2020-09-30  2024-06-08 */
    {"2.6.0", "DEPRECATED"},          /* 2020-10-21  2024-09-11 */
    {"2.6.1", "DEPRECATED"},          /* 2021-01-19  2024-09-11 */
    {"2.6.2", "DEPRECATED"},          /* 2021-04-29  2024-09-11 */
    {"2.6.3", "DEPRECATED"},          /* 2021-12-21  2024-09-11 */
    {"2.7.0", "DEPRECATED"},          /* 2020-12-29  2024-09-11 */
    {"2.7.1", "DEPRECATED"},          /* 2021-05-25  2024-09-11 */
    {"2.7.2", "DEPRECATED"},          /* 2021-12-21  2024-09-11 */
    {"2.8.0", "DEPRECATED"},          /* 2021-05-19  2024-09-11 */
    {"2.8.1", "DEPRECATED"},          /* 2022-10-28  2024-09-11 */
    {"2.8.2.tiered", "DEPRECATED"},   /* 2022-10-28  2025-01-14 */
    {"3.1.1", "DEPRECATED"},          /* 2022-06-22  2024-09-11 */
    {"3.2.0", "DEPRECATED"},          /* 2022-06-22  2024-09-11 */
    {"3.3.1", "DEPRECATED"},          /* 2022-10-26  2024-09-11 */
    {"3.3.2", "DEPRECATED"},          /* 2023-03-02  2024-09-11 */
    {"3.4.0", "DEPRECATED"},          /* 2023-05-04  2025-08-04 */
    {"3.5.1", "DEPRECATED"},          /* 2023-09-26  2025-10-23 */
    {"3.6.0", "DEPRECATED"},          /* 2023-11-16  2026-06-01 */
    {"3.7.x", "DEPRECATED"},          /* 2024-05-29  2026-09-01 */
    {"3.7.x.kraft", "DEPRECATED"},    /* 2024-05-29  2026-09-01 */
    {"3.8.x", "ACTIVE"},              /* 2025-02-20  -- */
    {"3.8.x.kraft", "ACTIVE"},        /* 2025-02-20  -- */
    {"3.9.x", "ACTIVE"},              /* 2025-04-21  -- */
    {"3.9.x.kraft", "ACTIVE"},        /* 2025-04-21  -- */
    {"4.0.x.kraft", "ACTIVE"},        /* 2025-05-16  -- */
    {"4.1.x.kraft", "ACTIVE"},        /* 2025-10-15  -- */
    {"4.2.x.kraft", "ACTIVE"},        /* Express brokers only */
};

const size_t kafka_versions_n = sizeof kafka_versions / sizeof kafka_versions[0];

/*
 * What a provisioned cluster reports as its currentBrokerSoftwareInfo.kafkaVersion when it was not
 * created with one (the configured cluster): the row of its kafka.version's release, the KRaft one
 * where the table has it, as mskmock has no ZooKeeper (a KRaft cluster has no
 * zookeeperConnectString: https://docs.aws.amazon.com/msk/latest/developerguide/metadata-management.html);
 * "3.6.0" for 3.6, which MSK ran with ZooKeeper only. With kafka.version=none: the last line
 * that speaks the protocol versions mskmock serves without Kafka 4's floors (KIP-896).
 */
const char *kafka_cluster_kafka_version(const config *cfg) {
    const char *release = cfg->kafka_version != KAFKA_VERSION_NONE ? cfg_kafka_version_name(cfg->kafka_version) : "3.9";
    size_t n = strlen(release);
    const char *found = NULL;
    for (size_t i = 0; i < kafka_versions_n; i++) {
        const char *v = kafka_versions[i].version;
        if (strncmp(v, release, n) || v[n] != '.') continue;
        size_t len = strlen(v);
        if (!found || (len > 6 && !strcmp(v + len - 6, ".kraft"))) found = v;
    }
    return found ? found : "3.9.x.kraft";
}
