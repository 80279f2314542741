/* ApiVersions (API key 18): request and response structs, versions 0-4. */
#ifndef KP_MSG_API_VERSIONS_H
#define KP_MSG_API_VERSIONS_H

#include "kp.h"

typedef struct kp_api_versions_request {
    kp_str client_software_name;
    kp_str client_software_version;
} kp_api_versions_request;
extern const kp_schema kp_api_versions_request_schema;

typedef struct kp_api_versions_api_version {
    int16_t api_key;
    int16_t min_version;
    int16_t max_version;
} kp_api_versions_api_version;
extern const kp_schema kp_api_versions_api_version_schema;

typedef struct kp_api_versions_supported_feature_key {
    kp_str name;
    int16_t min_version;
    int16_t max_version;
} kp_api_versions_supported_feature_key;
extern const kp_schema kp_api_versions_supported_feature_key_schema;

typedef struct kp_api_versions_finalized_feature_key {
    kp_str name;
    int16_t max_version_level;
    int16_t min_version_level;
} kp_api_versions_finalized_feature_key;
extern const kp_schema kp_api_versions_finalized_feature_key_schema;

typedef struct kp_api_versions_response {
    int16_t error_code;
    KP_ARR(struct kp_api_versions_api_version) api_keys;
    int32_t throttle_time_ms;
    KP_ARR(struct kp_api_versions_supported_feature_key) supported_features;
    int64_t finalized_features_epoch;
    KP_ARR(struct kp_api_versions_finalized_feature_key) finalized_features;
    bool zk_migration_ready;
} kp_api_versions_response;
extern const kp_schema kp_api_versions_response_schema;

extern const kp_msg kp_msg_api_versions;

#endif
