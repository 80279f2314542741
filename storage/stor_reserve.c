/*
 * The reserve: a file of STOR_RESERVE_BYTES next to the database (<db>-reserve), allocated
 * while there is room, so that deleting a topic stays possible on a disk that is 100 % full.
 * Deleting is what gives space back, yet in WAL mode the delete itself needs room: its
 * changed pages go to the WAL before the commit, and the topic's segment files go only after
 * it. With storage.min.free.bytes=0 nothing kept that room, the commit failed, and a failed
 * commit of topic state stops the broker (issue 35: DeleteTopics on a full disk exited 3).
 * Kafka renames a deleted log's directory and deletes it later (LogManager.asyncDelete), so its
 * delete writes almost nothing; here the caller frees the reserve and tries again once, then
 * allocates it anew after the commit freed the segments. The file holds no data: a start that
 * finds it, or finds it missing, is fine.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kp_mem.h"
#include "stor_int.h"

static const char *reserve_path(stor *s) {
    if (!s->reserve_path) {
        const char *file = sqlite3_db_filename(s->db, "main");
        if (!file || !*file) return NULL; /* :memory: has no disk to fill */
        size_t n = strlen(file) + sizeof "-reserve";
        s->reserve_path = xmalloc(n);
        snprintf(s->reserve_path, n, "%s-reserve", file);
    }
    return s->reserve_path;
}

bool stor_reserve_keep(stor *s) {
    const char *path = reserve_path(s);
    if (!path) return false;
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    /* real blocks, not a sparse file: what it holds must come back when it goes */
    int rc = posix_fallocate(fd, 0, STOR_RESERVE_BYTES);
    close(fd);
    if (rc != 0) {
        unlink(path); /* a part of it would only be room taken for nothing */
        return false;
    }
    return true;
}

bool stor_reserve_release(stor *s) {
    const char *path = reserve_path(s);
    return path && unlink(path) == 0;
}
