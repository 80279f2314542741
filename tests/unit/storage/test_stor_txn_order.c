/*
 * stor: the write transaction's ordering invariants, which stor.c asserts (assert_txn_invariants
 * and the savepoint checks): an operation's end without its begin, operations inside one another,
 * a commit in the middle of an operation and a transaction opened behind storage's back all stop
 * the process where the mistake is made. Each case runs in a child process of its own, on a store
 * of its own, and the child must die of SIGABRT; the orderly sequence must exit normally. Without
 * live asserts (a user's build, MSKMOCK_ASSERT) the abort cases are skipped.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "fixtures.h"
#include "stor.h"
#include "stor_int.h"

typedef void (*steps)(stor *s);

/* fn on a fresh store in a child; its wait status. */
static int run_in_child(steps fn) {
    char dir[64], path[128];
    tmp_dir_new(dir, sizeof dir, "stor_txn_order");
    snprintf(path, sizeof path, "%s/mskmock.db", dir);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) fail_msg("fork failed");
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr)) _exit(3); /* the assert's message is expected */
        setrlimit(RLIMIT_CORE, &(struct rlimit){0, 0});     /* and so is the abort: no core file */
        stor *s = NULL;
        char err[512];
        if (stor_open(&s, path, STOR_SYNC_NORMAL, err, sizeof err) != 0 || stor_recover(s) != 0) _exit(2);
        fn(s);
        stor_close(s);
        _exit(0);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) fail_msg("waitpid failed");
    tmp_dir_remove(dir);
    return status;
}

static void expect_abort(steps fn) {
#ifdef NDEBUG
    (void)fn;
    skip();
#else
    int status = run_in_child(fn);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
        fail_msg("the child was not stopped by an assert (exited %d, signal %d)",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
#endif
}

static void orderly(stor *s) {
    if (stor_commit(s) != 0) _exit(4);                      /* nothing open: nothing to do */
    if (stor_write_begin(s) || stor_write_begin(s)) _exit(5); /* the second joins the first */
    if (stor_op_begin(s) || stor_op_end(s, 0)) _exit(6);
    if (stor_op_begin(s) || stor_op_end(s, -1) != -1) _exit(7); /* a failed operation is undone */
    if (stor_op_begin(s) || stor_op_end(s, 0)) _exit(8);    /* and the next one goes on */
    if (stor_commit(s) != 0 || stor_commit(s) != 0) _exit(9);
    if (stor_op_begin(s) || stor_op_end(s, 0) || stor_commit(s)) _exit(10); /* an operation opens one too */
}

static void op_end_without_begin(stor *s) { stor_op_end(s, 0); }

static void nested_operations(stor *s) {
    stor_op_begin(s);
    stor_op_begin(s);
}

static void commit_inside_operation(stor *s) {
    stor_op_begin(s);
    stor_commit(s);
}

static void foreign_begin_then_write(stor *s) {
    sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL);
    stor_write_begin(s);
}

static void foreign_begin_then_commit(stor *s) {
    sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL);
    stor_commit(s);
}

static void test_orderly_sequence_runs(void **state) {
    (void)state;
    int status = run_in_child(orderly);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("orderly sequence: exited %d, signal %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                 WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static void test_op_end_without_begin_aborts(void **state) {
    (void)state;
    expect_abort(op_end_without_begin);
}

static void test_nested_operations_abort(void **state) {
    (void)state;
    expect_abort(nested_operations);
}

static void test_commit_inside_operation_aborts(void **state) {
    (void)state;
    expect_abort(commit_inside_operation);
}

static void test_foreign_transaction_aborts_write(void **state) {
    (void)state;
    expect_abort(foreign_begin_then_write);
}

static void test_foreign_transaction_aborts_commit(void **state) {
    (void)state;
    expect_abort(foreign_begin_then_commit);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_orderly_sequence_runs),
        cmocka_unit_test(test_op_end_without_begin_aborts),
        cmocka_unit_test(test_nested_operations_abort),
        cmocka_unit_test(test_commit_inside_operation_aborts),
        cmocka_unit_test(test_foreign_transaction_aborts_write),
        cmocka_unit_test(test_foreign_transaction_aborts_commit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
