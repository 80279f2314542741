/*
 * The registry of message descriptions by API key and by name, and the names of the APIs:
 * both generated from the one list of kp_apis.h, so a key, its name and its description
 * cannot disagree.
 */
#include "kp_msgs.h"

#include <string.h>
#include <strings.h>

#define NAME_(key, E, Name, file) [KP_API_##E] = #Name,
const char kp_api_names[KP_API_LIMIT][KP_API_NAME_MAX] = {KP_APIS(NAME_)};
#undef NAME_

#define MSG_(key, E, Name, file) [KP_API_##E] = &kp_msg_##file,
static const kp_msg *const by_key[KP_API_LIMIT] = {KP_APIS(MSG_)};
#undef MSG_

const kp_msg *kp_msg_get(int16_t key) { return key >= 0 && key < KP_API_LIMIT ? by_key[key] : NULL; }

const char *kp_api_name(int16_t key) {
    const kp_msg *m = kp_msg_get(key);
    return m ? m->name : "Unknown";
}

const kp_msg *kp_msg_by_name(const char *name, size_t len) {
    for (int k = 0; k < KP_API_LIMIT; k++)
        if (by_key[k] && strlen(by_key[k]->name) == len && !strncasecmp(by_key[k]->name, name, len)) return by_key[k];
    return NULL;
}
