"""Consumer-group test helpers: group-consume processes and checks over what they consumed.

  GroupConsumer   one `group-consume` process of any client (tests/clients/<lang>), its JSON
                  event lines read by a thread: wait_assigned(), assigned_partitions(),
                  records(), committed(), errors(), stop() (stdin EOF: clean close), terminate()
                  (SIGTERM), kill() (SIGKILL).
  ConsumerPool    starts GroupConsumers and kills whatever is left at teardown.
  wait_until(...) waits for a condition over several consumers (woken by every event).
  wait_balanced(consumers, n)   waits until the consumers' current assignments split
                  partitions 0..n-1 exactly once, as evenly as possible.
  expected_records(total, partitions)   {(p, o): "key-<i>"} for records 0..total-1 written by
                  the clients' `produce` (record i -> partition i % P, offset i // P).
  assert_exactly_once(consumers, expected)   every expected record consumed exactly once.

group-consume contract (every client): `group-consume --bootstrap B --group G --topic T
[--assignor NAME] [--group-protocol classic|consumer] [--instance-id ID] [--session-timeout-ms MS] [--max-records N]
[--commit sync|async|none]` prints one JSON object per line, flushed at once:
  {"event":"assigned","partitions":[...],"generation":G?}   full current set after a change
  {"event":"record","p":P,"o":OFFSET,"k":"key"}
  {"event":"committed","offsets":{"P":next_offset,...}}
  {"event":"error","message":"..."}
  {"event":"closed"}                                      after a clean close, then exit 0
It stops at --max-records records, at EOF on stdin, or on SIGTERM.
"""

import collections
import json
import os
import signal
import subprocess
import tempfile
import threading
import time

import pytest

from harness import ROOT, client_command

# Every reader thread notifies this condition after each event, so one wait can watch many
# consumers at once.
_CV = threading.Condition()


class GroupConsumer:
    """One running `group-consume` process and the events it printed so far."""

    def __init__(self, lang, bootstrap, group, topic, assignor=None, instance_id=None,
                 session_timeout_ms=None, max_records=None, commit=None, name=None,
                 extra_args=(), env=None):
        cmd = client_command(lang)
        if cmd is None:
            if os.environ.get("CI"):
                pytest.fail("%s client is not built (tools/install-deps --test builds it)" % lang)
            pytest.skip("%s client is not built" % lang)
        self.lang = lang
        self.name = name or "%s-%s" % (lang, instance_id or id(self))
        args = ["group-consume", "--bootstrap", bootstrap, "--group", group]
        if topic is not None:  # None: the subscription is in extra_args (e.g. --pattern RE)
            args += ["--topic", topic]
        for opt, val in (("--assignor", assignor), ("--instance-id", instance_id),
                         ("--session-timeout-ms", session_timeout_ms),
                         ("--max-records", max_records), ("--commit", commit)):
            if val is not None:
                args += [opt, str(val)]
        self.argv = cmd + args + [str(a) for a in extra_args]
        self._stderr = tempfile.TemporaryFile()
        self.events = []  # (monotonic time, event dict), in the order printed
        self.bad_lines = []
        self.started = time.monotonic()
        self.proc = subprocess.Popen(self.argv, cwd=str(ROOT), env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._stderr)
        self.expect_exit = False  # set by stop/terminate/kill: an exit is not a failure then
        self._eof = False
        self._reader = threading.Thread(target=self._read, name="events-" + self.name,
                                        daemon=True)
        self._reader.start()

    # -- reading ------------------------------------------------------------------------
    def _read(self):
        for raw in self.proc.stdout:
            line = raw.decode(errors="replace").strip()
            if not line:
                continue
            try:
                ev = json.loads(line)
                if not isinstance(ev, dict) or "event" not in ev:
                    raise ValueError
            except ValueError:
                with _CV:
                    self.bad_lines.append(line)
                    _CV.notify_all()
                continue
            with _CV:
                self.events.append((time.monotonic(), ev))
                _CV.notify_all()
        with _CV:
            self._eof = True
            _CV.notify_all()

    def _of(self, kind):
        with _CV:
            return [ev for _, ev in self.events if ev["event"] == kind]

    # -- what was seen ------------------------------------------------------------------
    def assignments(self):
        """Every assigned event in order: [(time, frozenset, generation or None)]."""
        with _CV:
            return [(t, frozenset(ev["partitions"]), ev.get("generation"))
                    for t, ev in self.events if ev["event"] == "assigned"]

    def assigned_partitions(self):
        """The current (last printed) assignment as a frozenset, or None before the first."""
        a = self.assignments()
        return a[-1][1] if a else None

    def generation(self):
        a = self.assignments()
        return a[-1][2] if a else None

    def records(self):
        """[(p, o, key)] in the order consumed."""
        return [(ev["p"], ev["o"], ev["k"]) for ev in self._of("record")]

    def record_count(self):
        with _CV:
            return sum(1 for _, ev in self.events if ev["event"] == "record")

    def committed(self):
        """{partition: next offset}, the latest committed per partition."""
        out = {}
        for ev in self._of("committed"):
            for p, o in ev["offsets"].items():
                out[int(p)] = o
        return out

    def errors(self):
        return [ev["message"] for ev in self._of("error")]

    def closed(self):
        return bool(self._of("closed"))

    def exited(self):
        return self.proc.poll() is not None

    def died(self):
        """True when the process ended without being asked to and not cleanly by itself."""
        rc = self.proc.poll()
        if self.expect_exit or not self._eof or rc is None:
            return False
        return not (rc == 0 and self.closed())

    def stderr_text(self, limit=6000):
        self._stderr.seek(0)
        data = self._stderr.read().decode(errors="replace")
        return data[-limit:]

    def describe(self, events=40):
        with _CV:
            evs = [ev for _, ev in self.events]
        recs = sum(1 for ev in evs if ev["event"] == "record")
        shown = [json.dumps(ev) for ev in evs if ev["event"] != "record"][-events:]
        return ("--- %s (%s, exit %s): %d records; last non-record events:\n  %s\n"
                "--- %s stderr (tail) ---\n%s"
                % (self.name, " ".join(self.argv), self.proc.poll(), recs,
                   "\n  ".join(shown) or "(none)", self.name, self.stderr_text()))

    # -- waiting ------------------------------------------------------------------------
    def wait_for(self, pred, timeout, what):
        """Waits until pred() is true (re-checked after every event); fails on time-out."""
        return wait_until(pred, timeout, "%s: %s" % (self.name, what), [self])

    def wait_assigned(self, partitions=None, timeout=60):
        """Waits for a first assignment, or until the current one equals `partitions`."""
        if partitions is None:
            self.wait_for(lambda: self.assigned_partitions() is not None, timeout,
                          "a first assignment")
        else:
            want = frozenset(partitions)
            self.wait_for(lambda: self.assigned_partitions() == want, timeout,
                          "assignment %s" % sorted(want))
        return self.assigned_partitions()

    def wait_records(self, count, timeout=60):
        self.wait_for(lambda: self.record_count() >= count, timeout, "%d records" % count)
        return self.records()

    def wait_committed(self, offsets, timeout=30):
        """Waits until every {partition: next offset} in `offsets` has been committed."""
        want = dict(offsets)
        self.wait_for(lambda: all(self.committed().get(p, -1) >= o for p, o in want.items()),
                      timeout, "commits %s" % want)

    # -- ending -------------------------------------------------------------------------
    def _wait_exit(self, timeout, how):
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail("%s did not exit within %.0f s of %s\n%s"
                        % (self.name, timeout, how, self.describe()))
        self._reader.join(timeout=10)
        return rc

    def stop(self, timeout=60, check=True):
        """Closes stdin (the clean-close trigger) and waits; checks exit 0 and a closed event."""
        self.expect_exit = True
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        rc = self._wait_exit(timeout, "stdin EOF")
        if check:
            assert rc == 0 and self.closed(), \
                "%s: clean close expected (exit 0 and a closed event)\n%s" % (self.name,
                                                                              self.describe())
        return rc

    def terminate(self, timeout=60, check=True):
        """SIGTERM (clean close too) and waits; checks exit 0 and a closed event."""
        self.expect_exit = True
        self.proc.send_signal(signal.SIGTERM)
        rc = self._wait_exit(timeout, "SIGTERM")
        if check:
            assert rc == 0 and self.closed(), \
                "%s: clean close expected (exit 0 and a closed event)\n%s" % (self.name,
                                                                              self.describe())
        return rc

    def wait_exit(self, timeout=60, check=True):
        """Waits for the process to end by itself (--max-records); checks a clean close."""
        self.expect_exit = True
        rc = self._wait_exit(timeout, "reaching --max-records")
        if check:
            assert rc == 0 and self.closed(), \
                "%s: clean close expected (exit 0 and a closed event)\n%s" % (self.name,
                                                                              self.describe())
        return rc

    def kill(self):
        """SIGKILL: no close, no commit, no LeaveGroup."""
        self.expect_exit = True
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self._reader.join(timeout=10)

    def cleanup(self):
        if self.proc.poll() is None:
            self.kill()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        self._stderr.close()


class ConsumerPool:
    """Starts GroupConsumers; cleanup() kills those still running (use from a fixture)."""

    def __init__(self):
        self.consumers = []

    def start(self, *args, **kwargs):
        c = GroupConsumer(*args, **kwargs)
        self.consumers.append(c)
        return c

    def cleanup(self):
        for c in self.consumers:
            c.cleanup()
        self.consumers = []


# -- conditions over several consumers -------------------------------------------------

def wait_until(pred, timeout, what, consumers=(), detail=None):
    """Waits until pred() holds, re-checking after every event of any consumer.

    Fails early when one of `consumers` died without being asked to; on time-out fails with
    `what`, detail() if given, and every consumer's recent events and stderr.
    """
    deadline = time.monotonic() + timeout
    with _CV:
        while True:
            if pred():
                return
            dead = [c for c in consumers if c.died()]
            if dead:
                pytest.fail("%s died while waiting for %s\n%s"
                            % (dead[0].name, what, "\n".join(c.describe() for c in consumers)))
            left = deadline - time.monotonic()
            if left <= 0:
                pytest.fail("timed out after %.0f s waiting for %s%s\n%s"
                            % (timeout, what, "\n" + detail() if detail else "",
                               "\n".join(c.describe() for c in consumers)))
            # Wake at least every 0.5 s to notice a process that died without printing.
            _CV.wait(min(left, 0.5))


def split_state(consumers):
    """[(name, sorted partitions or None)] of the consumers' current assignments."""
    return [(c.name, sorted(c.assigned_partitions()) if c.assigned_partitions() is not None
             else None) for c in consumers]


def is_balanced(consumers, partitions):
    """True when the current assignments split 0..partitions-1 exactly once, sizes within 1."""
    sets = [c.assigned_partitions() for c in consumers]
    if any(s is None for s in sets):
        return False
    if sum(len(s) for s in sets) != partitions:
        return False
    if frozenset().union(*sets) != frozenset(range(partitions)):
        return False
    sizes = [len(s) for s in sets]
    return max(sizes) - min(sizes) <= 1


def wait_balanced(consumers, partitions, timeout=60):
    """Waits until the consumers split partitions 0..n-1 exactly once and evenly."""
    wait_until(lambda: is_balanced(consumers, partitions), timeout,
               "%d partitions split evenly over %s" % (partitions, [c.name for c in consumers]),
               consumers)
    return {c.name: c.assigned_partitions() for c in consumers}


# -- records ---------------------------------------------------------------------------

def expected_records(total, partitions):
    """{(p, o): key} of records 0..total-1 as the clients' `produce` writes them.

    Batches written with --start S continue the sequence, so record i is always at partition
    i % P, offset i // P.
    """
    return {(i % partitions, i // partitions): "key-%d" % i for i in range(total)}


def consumed_counts(consumers):
    """Counter {(p, o): times consumed} over all the consumers."""
    n = collections.Counter()
    for c in consumers:
        for p, o, _ in c.records():
            n[(p, o)] += 1
    return n


def wait_consumed(consumers, expected, timeout=60):
    """Waits until every (p, o) in `expected` was consumed by one of the consumers."""
    want = set(expected)

    def missing():
        miss = sorted(want - set(consumed_counts(consumers)))
        return "%d records not consumed, first: %s" % (len(miss), miss[:20])

    wait_until(lambda: want <= set(consumed_counts(consumers)), timeout,
               "%d records consumed" % len(want), consumers, detail=missing)


def assert_exactly_once(consumers, expected):
    """Every expected record consumed exactly once across the consumers, with its key, and
    nothing else consumed."""
    seen = collections.Counter()
    wrong_key = []
    for c in consumers:
        for p, o, k in c.records():
            seen[(p, o)] += 1
            if (p, o) in expected and expected[(p, o)] != k:
                wrong_key.append((c.name, p, o, k, expected[(p, o)]))
    missing = sorted(set(expected) - set(seen))
    dupes = sorted(po for po, n in seen.items() if n > 1)
    extra = sorted(set(seen) - set(expected))
    problems = []
    if missing:
        problems.append("%d records never consumed, first %s" % (len(missing), missing[:10]))
    if dupes:
        who = {po: [c.name for c in consumers for p, o, _ in c.records() if (p, o) == po]
               for po in dupes[:5]}
        problems.append("%d records consumed more than once, first %s" % (len(dupes), who))
    if extra:
        problems.append("%d unexpected records, first %s" % (len(extra), extra[:10]))
    if wrong_key:
        problems.append("%d records with a wrong key (consumer, p, o, key, expected): %s"
                        % (len(wrong_key), wrong_key[:5]))
    assert not problems, "\n".join(problems)


def assert_records_owned(consumers):
    """Each consumer handed out records only from partitions it owned at that moment (its
    latest assigned event before the record)."""
    bad = []
    for c in consumers:
        with _CV:
            evs = [ev for _, ev in c.events]
        owned = frozenset()
        for ev in evs:
            if ev["event"] == "assigned":
                owned = frozenset(ev["partitions"])
            elif ev["event"] == "record" and ev["p"] not in owned:
                bad.append((c.name, ev["p"], ev["o"], sorted(owned)))
    assert not bad, "records from partitions not assigned (consumer, p, o, assigned): %s" % bad[:10]


def assert_no_new_assignment(consumers, until, what):
    """Fails as soon as one of `consumers` prints an assigned event before monotonic time
    `until` (a bounded watch for an event that must not happen)."""
    counts = {c.name: len(c.assignments()) for c in consumers}

    def changed():
        return [c.name for c in consumers if len(c.assignments()) != counts[c.name]]

    with _CV:
        while not changed():
            dead = [c for c in consumers if c.died()]
            if dead:
                pytest.fail("%s died while watching for %s\n%s"
                            % (dead[0].name, what, dead[0].describe()))
            left = until - time.monotonic()
            if left <= 0:
                return
            _CV.wait(min(left, 0.5))
    who = changed()
    pytest.fail("%s: %s saw an assignment change\n%s"
                % (what, who, "\n".join(c.describe() for c in consumers)))


def wait_all_committed(consumers, timeout=30):
    """Waits until each consumer committed the next offset after every record it consumed."""
    def lag():
        out = []
        for c in consumers:
            last = {}
            for p, o, _ in c.records():
                last[p] = max(last.get(p, -1), o + 1)
            done = c.committed()
            out += [(c.name, p, o, done.get(p)) for p, o in sorted(last.items())
                    if done.get(p, -1) < o]
        return out

    wait_until(lambda: not lag(), timeout, "commits of every consumed record", consumers,
               detail=lambda: "not committed yet (consumer, p, next, committed): %s" % lag())


def assert_no_errors(consumers):
    errs = [(c.name, m) for c in consumers for m in c.errors()]
    assert not errs, "client errors: %s" % errs[:10]
