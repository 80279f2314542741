/* ApiVersions (API key 18) wire description; fields carry the versions they exist in. */
#include "msg_api_versions.h"

static const kp_field kp_api_versions_request_fields[] = {
    KF(KP_STR, kp_api_versions_request, client_software_name, 3, KV_MAX),
    KF(KP_STR, kp_api_versions_request, client_software_version, 3, KV_MAX),
};
KSCHEMA(kp_api_versions_request_schema, kp_api_versions_request, kp_api_versions_request_fields);

static const kp_field kp_api_versions_api_version_fields[] = {
    KF(KP_I16, kp_api_versions_api_version, api_key, 0, KV_MAX),
    KF(KP_I16, kp_api_versions_api_version, min_version, 0, KV_MAX),
    KF(KP_I16, kp_api_versions_api_version, max_version, 0, KV_MAX),
};
KSCHEMA(kp_api_versions_api_version_schema, kp_api_versions_api_version, kp_api_versions_api_version_fields);

static const kp_field kp_api_versions_supported_feature_key_fields[] = {
    KF(KP_STR, kp_api_versions_supported_feature_key, name, 3, KV_MAX),
    KF(KP_I16, kp_api_versions_supported_feature_key, min_version, 3, KV_MAX),
    KF(KP_I16, kp_api_versions_supported_feature_key, max_version, 3, KV_MAX),
};
KSCHEMA(kp_api_versions_supported_feature_key_schema, kp_api_versions_supported_feature_key, kp_api_versions_supported_feature_key_fields);

static const kp_field kp_api_versions_finalized_feature_key_fields[] = {
    KF(KP_STR, kp_api_versions_finalized_feature_key, name, 3, KV_MAX),
    KF(KP_I16, kp_api_versions_finalized_feature_key, max_version_level, 3, KV_MAX),
    KF(KP_I16, kp_api_versions_finalized_feature_key, min_version_level, 3, KV_MAX),
};
KSCHEMA(kp_api_versions_finalized_feature_key_schema, kp_api_versions_finalized_feature_key, kp_api_versions_finalized_feature_key_fields);

static const kp_field kp_api_versions_response_fields[] = {
    KF(KP_I16, kp_api_versions_response, error_code, 0, KV_MAX),
    KFA(kp_api_versions_response, api_keys, 0, KV_MAX, kp_api_versions_api_version_schema),
    KF(KP_I32, kp_api_versions_response, throttle_time_ms, 1, KV_MAX),
    KFA(kp_api_versions_response, supported_features, 3, KV_MAX, kp_api_versions_supported_feature_key_schema, .tag = 0),
    KF(KP_I64, kp_api_versions_response, finalized_features_epoch, 3, KV_MAX, .tag = 1, .dflt = -1),
    KFA(kp_api_versions_response, finalized_features, 3, KV_MAX, kp_api_versions_finalized_feature_key_schema, .tag = 2),
    KF(KP_BOOL, kp_api_versions_response, zk_migration_ready, 3, KV_MAX, .tag = 3, .dflt = 0),
};
KSCHEMA(kp_api_versions_response_schema, kp_api_versions_response, kp_api_versions_response_fields);

const kp_msg kp_msg_api_versions = {KP_MSG_ID(API_VERSIONS), 0, 4, 3, &kp_api_versions_request_schema, &kp_api_versions_response_schema};
