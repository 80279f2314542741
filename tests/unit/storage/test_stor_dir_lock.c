/*
 * stor: one process per data directory (stor_dir_lock.c). A second lock on a held directory is
 * refused and names the holder's pid; the lock goes with its holder, even one killed with
 * SIGKILL, so the next one takes it; ":memory:" takes none; the directory is made only when
 * asked; a read-only reader of the database is not in the way.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixtures.h"
#include "stor.h"

static void test_second_lock_is_refused_and_names_the_holder(void **state) {
    (void)state;
    char dir[128], err[8400];
    tmp_dir_new(dir, sizeof dir, "dirlock");
    int fd = -1, fd2 = -1;
    assert_int_equal(stor_dir_lock(dir, false, &fd, err, sizeof err), 0);
    assert_true(fd >= 0);
    /* flock conflicts between two open descriptions even in one process */
    assert_int_equal(stor_dir_lock(dir, false, &fd2, err, sizeof err), 1);
    assert_int_equal(fd2, -1);
    char pid[64];
    snprintf(pid, sizeof pid, "(pid %ld)", (long)getpid());
    assert_non_null(strstr(err, pid));
    assert_non_null(strstr(err, dir));
    stor_dir_unlock(fd);
    assert_int_equal(stor_dir_lock(dir, false, &fd2, err, sizeof err), 0);
    stor_dir_unlock(fd2);
    tmp_dir_remove(dir);
}

static void test_lock_of_a_killed_holder_is_free(void **state) {
    (void)state;
    char dir[128], err[8400];
    tmp_dir_new(dir, sizeof dir, "dirlock-kill");
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        int fd;
        char e[8400];
        if (stor_dir_lock(dir, false, &fd, e, sizeof e) != 0) _exit(1);
        if (write(ready[1], "x", 1) != 1) _exit(1);
        pause();
        _exit(0);
    }
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    int fd = -1;
    assert_int_equal(stor_dir_lock(dir, false, &fd, err, sizeof err), 1);
    char pid[64];
    snprintf(pid, sizeof pid, "(pid %ld)", (long)child);
    assert_non_null(strstr(err, pid));
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    /* the dead holder's pid is still in the file: the lock, not the file, says who holds it */
    assert_int_equal(stor_dir_lock(dir, false, &fd, err, sizeof err), 0);
    stor_dir_unlock(fd);
    close(ready[0]);
    close(ready[1]);
    tmp_dir_remove(dir);
}

static void test_memory_takes_no_lock(void **state) {
    (void)state;
    char err[256];
    int fd = 7, fd2 = 7;
    assert_int_equal(stor_dir_lock(":memory:", true, &fd, err, sizeof err), 0);
    assert_int_equal(fd, -1);
    assert_int_equal(stor_dir_lock(":memory:", true, &fd2, err, sizeof err), 0);
}

static void test_directory_made_only_when_asked(void **state) {
    (void)state;
    char parent[128], dir[200], err[8400];
    tmp_dir_new(parent, sizeof parent, "dirlock-mk");
    snprintf(dir, sizeof dir, "%s/data", parent);
    int fd = -1;
    assert_int_equal(stor_dir_lock(dir, false, &fd, err, sizeof err), -1);
    struct stat st;
    assert_int_not_equal(stat(dir, &st), 0);
    assert_int_equal(stor_dir_lock(dir, true, &fd, err, sizeof err), 0);
    assert_int_equal(stat(dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    stor_dir_unlock(fd);
    tmp_dir_remove(parent);
}

/* The broker holds the lock and its database open; a reader opens the database read-only. */
static void test_read_only_reader_beside_the_holder(void **state) {
    (void)state;
    char dir[128], db[200], err[8400];
    tmp_dir_new(dir, sizeof dir, "dirlock-ro");
    int fd = -1;
    assert_int_equal(stor_dir_lock(dir, false, &fd, err, sizeof err), 0);
    snprintf(db, sizeof db, "%s/mskmock.db", dir);
    stor *s = NULL;
    assert_int_equal(stor_open(&s, db, STOR_SYNC_NORMAL, err, sizeof err), 0);
    assert_int_equal(stor_setting_put(s, "k", "v"), 0);
    assert_int_equal(stor_commit(s), 0);
    sqlite3 *ro = NULL;
    assert_int_equal(sqlite3_open_v2(db, &ro, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(ro, "SELECT value FROM settings WHERE key = 'k'", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "v");
    sqlite3_finalize(st);
    sqlite3_close(ro);
    stor_close(s);
    stor_dir_unlock(fd);
    tmp_dir_remove(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_lock_is_refused_and_names_the_holder),
        cmocka_unit_test(test_lock_of_a_killed_holder_is_free),
        cmocka_unit_test(test_memory_takes_no_lock),
        cmocka_unit_test(test_directory_made_only_when_asked),
        cmocka_unit_test(test_read_only_reader_beside_the_holder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
