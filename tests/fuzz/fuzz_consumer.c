/*
 * ConsumerProtocolSubscription and ConsumerProtocolAssignment bytes (JoinGroup and SyncGroup
 * metadata), decoded strictly (MSK Serverless) and leniently (Apache Kafka). A strict success
 * must be a lenient success; every failure must format into its log line.
 */
#include <stdlib.h>

#include "kp_consumer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char line[512];
    for (int kind = 0; kind < 2; kind++) {
        bool ok[2];
        for (int mode = KP_CONSUMER_STRICT; mode <= KP_CONSUMER_LENIENT; mode++) {
            kp_arena a = {0};
            kp_consumer_error e;
            if (kind == 0) {
                kp_subscription s;
                ok[mode] = kp_subscription_decode(data, size, mode, &s, &a, &e);
                if (!ok[mode]) kp_consumer_error_format(&e, "ConsumerProtocolSubscription", s.version, size, line, sizeof line);
            } else {
                kp_assignment s;
                ok[mode] = kp_assignment_decode(data, size, mode, &s, &a, &e);
                if (!ok[mode]) kp_consumer_error_format(&e, "ConsumerProtocolAssignment", s.version, size, line, sizeof line);
            }
            kp_arena_free(&a);
        }
        if (ok[KP_CONSUMER_STRICT] && !ok[KP_CONSUMER_LENIENT]) abort();
    }
    return 0;
}
