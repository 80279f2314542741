"""Tiny Kafka wire encoders/decoders for raw-socket tests. Standard library only.

Covers what the raw-socket tests need: request framing (header v1), ApiVersions v0-v2 (and
the v0-shaped error answer to any version), Metadata v1-v8, CreateTopics v0-v4, Produce v3-v8
with a hand-built record batch v2 and CRC-32C, Fetch v4-v11, FindCoordinator v0-v2 and
OffsetCommit v2. Nothing here is flexible (compact) encoding.

The broker's serverless profile refuses requests below MSK Serverless's version floors
(api.versions.min: it closes the connection unanswered, or answers ApiVersions with a v0
UNSUPPORTED_VERSION), so the *_V constants below, the versions tests send unless they are about
another one, are at or above those floors, as modern clients send.
"""

import socket
import struct
import time

API_PRODUCE = 0
API_FETCH = 1
API_METADATA = 3
API_OFFSET_COMMIT = 8
API_FIND_COORDINATOR = 10
API_API_VERSIONS = 18
API_CREATE_TOPICS = 19

# The default versions: the serverless floors (api.versions.min) of these APIs.
API_VERSIONS_V = 2
METADATA_V = 6
PRODUCE_V = 7
FETCH_V = 10
CREATE_TOPICS_V = 3
FIND_COORDINATOR_V = 2

ERR_NONE = 0
ERR_CORRUPT_MESSAGE = 2
ERR_UNSUPPORTED_VERSION = 35

# -- CRC-32C (Castagnoli), reflected polynomial 0x82F63B78 ---------------------------

def _crc32c_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = _CRC32C[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283  # the standard check value


# -- primitive encoders ------------------------------------------------------------------

def i8(v): return struct.pack(">b", v)
def i16(v): return struct.pack(">h", v)
def i32(v): return struct.pack(">i", v)
def i64(v): return struct.pack(">q", v)
def u32(v): return struct.pack(">I", v)
def boolean(v): return b"\x01" if v else b"\x00"


def string(s):
    if s is None:
        return i16(-1)
    b = s.encode() if isinstance(s, str) else s
    return i16(len(b)) + b


def bytes_(b):
    if b is None:
        return i32(-1)
    return i32(len(b)) + b


def array(items, enc):
    if items is None:
        return i32(-1)
    return i32(len(items)) + b"".join(enc(x) for x in items)


def uvarint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def varint(v):
    """Zigzag varint, as used inside record batches."""
    return uvarint((v << 1) ^ (v >> 63))


# -- decoder -----------------------------------------------------------------------------

class Reader:
    def __init__(self, data):
        self.data = data
        self.pos = 0

    def take(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError("response truncated: need %d bytes at offset %d of %d"
                             % (n, self.pos, len(self.data)))
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def i8(self): return struct.unpack(">b", self.take(1))[0]
    def i16(self): return struct.unpack(">h", self.take(2))[0]
    def i32(self): return struct.unpack(">i", self.take(4))[0]
    def i64(self): return struct.unpack(">q", self.take(8))[0]
    def boolean(self): return self.take(1) != b"\x00"

    def string(self):
        n = self.i16()
        return None if n < 0 else self.take(n).decode()

    def array(self, dec):
        n = self.i32()
        if n < 0:
            return None
        if n > len(self.data):
            raise ValueError("array count %d larger than the response" % n)
        return [dec(self) for _ in range(n)]

    def remaining(self):
        return len(self.data) - self.pos


# -- framing -----------------------------------------------------------------------------

def request(api_key, api_version, correlation_id, client_id, body):
    """A complete frame: int32 size + request header v1 + body."""
    payload = i16(api_key) + i16(api_version) + i32(correlation_id) + string(client_id) + body
    return i32(len(payload)) + payload


class Closed(Exception):
    """The broker closed the connection (EOF or reset)."""


def connect(port, timeout=5.0):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        try:
            chunk = sock.recv(n - len(buf))
        except (ConnectionResetError, BrokenPipeError) as e:
            raise Closed("connection reset after %d of %d bytes: %s" % (len(buf), n, e))
        if not chunk:
            raise Closed("EOF after %d of %d bytes" % (len(buf), n))
        buf += chunk
    return bytes(buf)


def recv_frame(sock):
    """Reads one response frame; returns (correlation_id, body bytes). Header v0 only."""
    (size,) = struct.unpack(">i", recv_exact(sock, 4))
    if size < 4 or size > 64 << 20:
        raise ValueError("implausible response size %d" % size)
    payload = recv_exact(sock, size)
    return struct.unpack(">i", payload[:4])[0], payload[4:]


def wait_closed(sock, timeout=5.0):
    """Returns None once the peer has closed; otherwise a description of what it sent."""
    sock.settimeout(0.2)
    deadline = time.monotonic() + timeout
    got = b""
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return None
        if not chunk:
            return None if not got else "sent %d bytes before closing: %r" % (len(got), got[:64])
        got += chunk
    return ("connection still open after %.0f s; received %d bytes: %r"
            % (timeout, len(got), got[:64]))


# -- ApiVersions ------------------------------------------------------------------------

def compact_string(s):
    b = s.encode()
    return uvarint(len(b) + 1) + b


def api_versions_request(correlation_id, client_id, version=API_VERSIONS_V):
    """v0-v2: header v1 and an empty body. v3 and later (the test sends v99, as a client
    newer than the broker would): header v2 (client id + empty tagged fields) and the v3 body
    {compact client_software_name, compact client_software_version, tagged fields}."""
    if version < 3:
        return request(API_API_VERSIONS, version, correlation_id, client_id, b"")
    body = b"\x00" + compact_string("mskmock-it") + compact_string("1.0") + b"\x00"
    return request(API_API_VERSIONS, version, correlation_id, client_id, body)


def parse_api_versions(body, version=API_VERSIONS_V):
    """ApiVersions v0-v2 answer {error_code, [api_key, min_version, max_version],
    throttle_time_ms (v1+)}: (error, {key: (min, max)}, bytes left over)."""
    assert 0 <= version <= 2
    r = Reader(body)
    err = r.i16()
    keys = r.array(lambda r: (r.i16(), r.i16(), r.i16()))
    if version >= 1:
        r.i32()  # throttle_time_ms
    return err, {k: (lo, hi) for k, lo, hi in (keys or [])}, r.remaining()


def parse_api_versions_v0(body):
    """The v0 shape, which is also the UNSUPPORTED_VERSION answer to any version the broker
    does not serve (v99, or one below api.versions.min)."""
    return parse_api_versions(body, 0)


# -- Metadata v1..v8 -----------------------------------------------------------------------

def metadata_request(version, correlation_id, client_id, topics):
    assert 1 <= version <= 8
    body = array(topics, string)
    if version >= 4:
        body += boolean(False)  # allow_auto_topic_creation
    if version >= 8:
        body += boolean(False) + boolean(False)  # include cluster/topic authorized operations
    return request(API_METADATA, version, correlation_id, client_id, body)


def parse_metadata(version, body):
    r = Reader(body)
    if version >= 3:
        r.i32()  # throttle_time_ms
    brokers = r.array(lambda r: (r.i32(), r.string(), r.i32(), r.string()))
    if version >= 2:
        r.string()  # cluster_id
    r.i32()  # controller_id

    def partition(r):
        p = {"error": r.i16(), "index": r.i32(), "leader": r.i32()}
        if version >= 7:
            p["leader_epoch"] = r.i32()
        p["replicas"] = r.array(lambda r: r.i32())
        p["isr"] = r.array(lambda r: r.i32())
        if version >= 5:
            p["offline"] = r.array(lambda r: r.i32())
        return p

    def topic(r):
        t = {"error": r.i16(), "name": r.string(), "internal": r.boolean()}
        t["partitions"] = r.array(partition)
        if version >= 8:
            r.i32()  # topic_authorized_operations
        return t

    topics = r.array(topic)
    if version >= 8:
        r.i32()  # cluster_authorized_operations
    return {"brokers": {b[0]: (b[1], b[2]) for b in brokers}, "topics": topics}


# -- CreateTopics v0..v4 -------------------------------------------------------------------

def create_topics_request(version, correlation_id, client_id, name, partitions, rf):
    assert 0 <= version <= 4
    topic = (string(name) + i32(partitions) + i16(rf)
             + array([], None) + array([], None))  # no assignments, no configs
    body = array([topic], lambda t: t) + i32(30000)
    if version >= 1:
        body += boolean(False)  # validate_only
    return request(API_CREATE_TOPICS, version, correlation_id, client_id, body)


def parse_create_topics(version, body):
    r = Reader(body)
    if version >= 2:
        r.i32()  # throttle_time_ms

    def topic(r):
        t = {"name": r.string(), "error": r.i16()}
        if version >= 1:
            t["message"] = r.string()
        return t

    return r.array(topic)


# -- Record batch v2 and Produce v3..v8 ------------------------------------------------------

def record(offset_delta, key, value, headers=(), timestamp_delta=0):
    body = (i8(0) + varint(timestamp_delta) + varint(offset_delta)
            + (varint(-1) if key is None else varint(len(key)) + key)
            + (varint(-1) if value is None else varint(len(value)) + value)
            + varint(len(headers))
            + b"".join(varint(len(k)) + k + (varint(-1) if v is None else varint(len(v)) + v)
                       for k, v in headers))
    return varint(len(body)) + body


def record_batch(records, base_timestamp=None, corrupt_crc=False):
    """Uncompressed, non-idempotent batch v2 of (key, value, headers) tuples."""
    ts = int(time.time() * 1000) if base_timestamp is None else base_timestamp
    recs = b"".join(record(i, k, v, h) for i, (k, v, h) in enumerate(records))
    after_crc = (i16(0)                       # attributes: no compression, CreateTime
                 + i32(len(records) - 1)      # last_offset_delta
                 + i64(ts) + i64(ts)          # base_timestamp, max_timestamp
                 + i64(-1) + i16(-1) + i32(-1)  # producer id, epoch, base sequence
                 + i32(len(records)) + recs)
    crc = crc32c(after_crc)
    if corrupt_crc:
        crc ^= 0xFFFFFFFF
    after_length = i32(-1) + i8(2) + u32(crc) + after_crc  # leader epoch, magic, crc
    return i64(0) + i32(len(after_length)) + after_length  # base_offset, batch_length


def produce_request(version, correlation_id, client_id, topic, partition, batch,
                    acks=-1, timeout_ms=10000):
    """Produce v3-v8 (one body for all): {transactional_id null, acks, timeout_ms, [topic,
    [partition, records]]} with one batch for one partition."""
    assert 3 <= version <= 8
    part = i32(partition) + bytes_(batch)
    body = (string(None) + i16(acks) + i32(timeout_ms)
            + array([string(topic) + array([part], lambda p: p)], lambda t: t))
    return request(API_PRODUCE, version, correlation_id, client_id, body)


def parse_produce(version, body):
    """Produce v3-v8 answer {[topic, [partition_index, error_code, base_offset,
    log_append_time_ms, log_start_offset (v5+), record_errors and error_message (v8+)]],
    throttle_time_ms}: [{"name", "partitions": [{"index", "error", "base_offset", ...}]}]."""
    r = Reader(body)

    def partition(r):
        p = {"index": r.i32(), "error": r.i16(), "base_offset": r.i64(),
             "log_append_time": r.i64()}
        if version >= 5:
            p["log_start_offset"] = r.i64()
        if version >= 8:
            p["record_errors"] = r.array(lambda r: (r.i32(), r.string()))
            p["error_message"] = r.string()
        return p

    topics = r.array(lambda r: {"name": r.string(), "partitions": r.array(partition)})
    r.i32()  # throttle_time_ms
    return topics


# -- Fetch v4..v11 ----------------------------------------------------------------------------

def fetch_request(correlation_id, client_id, topic, partition, offset, max_bytes=1 << 20,
                  max_wait_ms=0, min_bytes=0, version=FETCH_V):
    """Fetch v4-v11 (not flexible) of one partition, outside any fetch session:
    {replica_id -1, max_wait_ms, min_bytes, max_bytes, isolation_level 0 (read uncommitted),
    session_id 0 and session_epoch -1 (v7+: no session), [topic, [partition,
    current_leader_epoch -1 (v9+), fetch_offset, log_start_offset -1 (v5+),
    partition_max_bytes]], forgotten_topics_data [] (v7+), rack_id "" (v11+)}."""
    assert 4 <= version <= 11
    part = i32(partition)
    if version >= 9:
        part += i32(-1)  # current_leader_epoch: unknown
    part += i64(offset)
    if version >= 5:
        part += i64(-1)  # log_start_offset: only followers send one
    part += i32(max_bytes)
    body = i32(-1) + i32(max_wait_ms) + i32(min_bytes) + i32(max_bytes) + i8(0)
    if version >= 7:
        body += i32(0) + i32(-1)  # session_id, session_epoch (FINAL_EPOCH: sessionless)
    body += array([string(topic) + array([part], lambda p: p)], lambda t: t)
    if version >= 7:
        body += array([], None)  # forgotten_topics_data
    if version >= 11:
        body += string("")  # rack_id
    return request(API_FETCH, version, correlation_id, client_id, body)


def parse_fetch(version, body):
    """Fetch v4-v11 answer {throttle_time_ms, error_code (v7+), session_id (v7+), [topic,
    [partition_index, error_code, high_watermark, last_stable_offset, log_start_offset (v5+),
    aborted_transactions, preferred_read_replica (v11+), records]]}: a dict with "error",
    "session_id" and "topics" [{"name", "partitions": [{..., "records": bytes or None}]}]."""
    assert 4 <= version <= 11
    r = Reader(body)
    out = {"throttle_time_ms": r.i32(), "error": 0, "session_id": 0}
    if version >= 7:
        out["error"] = r.i16()
        out["session_id"] = r.i32()

    def partition(r):
        p = {"index": r.i32(), "error": r.i16(), "high_watermark": r.i64(),
             "last_stable_offset": r.i64()}
        if version >= 5:
            p["log_start_offset"] = r.i64()
        p["aborted_transactions"] = r.array(lambda r: (r.i64(), r.i64()))
        if version >= 11:
            p["preferred_read_replica"] = r.i32()
        n = r.i32()
        p["records"] = None if n < 0 else r.take(n)
        return p

    out["topics"] = r.array(lambda r: {"name": r.string(), "partitions": r.array(partition)})
    return out


# -- FindCoordinator v0..v2, OffsetCommit v2 ------------------------------------------------

def find_coordinator_request(correlation_id, client_id, key, key_type=0,
                             version=FIND_COORDINATOR_V):
    """FindCoordinator v0-v2 (v3 is flexible): {key, key_type (v1+: 0 group, 1 transaction)}."""
    assert 0 <= version <= 2
    body = string(key)
    if version >= 1:
        body += i8(key_type)
    return request(API_FIND_COORDINATOR, version, correlation_id, client_id, body)


def parse_find_coordinator(version, body):
    """FindCoordinator v0-v2 answer {throttle_time_ms (v1+), error_code, error_message (v1+),
    node_id, host, port}: a dict of those (without throttle_time_ms)."""
    assert 0 <= version <= 2
    r = Reader(body)
    if version >= 1:
        r.i32()  # throttle_time_ms
    out = {"error": r.i16(), "message": r.string() if version >= 1 else None}
    out.update(node_id=r.i32(), host=r.string(), port=r.i32())
    return out


def offset_commit_request(correlation_id, client_id, group, topic, offsets, metadata=""):
    """OffsetCommit v2 for a simple consumer (generation -1, no member): offsets is
    {partition: offset}; the same metadata for each."""
    parts = [i32(p) + i64(o) + string(metadata) for p, o in sorted(offsets.items())]
    body = (string(group) + i32(-1) + string("") + i64(-1)
            + array([string(topic) + array(parts, lambda x: x)], lambda t: t))
    return request(API_OFFSET_COMMIT, 2, correlation_id, client_id, body)


def parse_offset_commit(body):
    """OffsetCommit v2 answer: {(topic, partition): error_code}."""
    r = Reader(body)
    out = {}
    for name, parts in r.array(lambda r: (r.string(), r.array(lambda r: (r.i32(), r.i16())))):
        for p, err in parts:
            out[(name, p)] = err
    return out
