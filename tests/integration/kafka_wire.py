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

# The default versions: the serverless floors (api.versions.min) of these APIs; ApiVersions,
# which has none (kafka-go sends v0), at v2, what current clients send.
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


def parse_api_versions_flex(body):
    """ApiVersions v3+ (response header v0, a flexible body): {"error", "ranges" {key: (min, max)},
    "supported" {name: (min, max)}, "finalized" {name: level}, "epoch"}; the features are tagged
    fields 0 (supported), 1 (finalized epoch) and 2 (finalized)."""
    r = FlexReader(body, True)
    out = {"error": r.i16(), "supported": {}, "finalized": {}, "epoch": -1}

    def key(r):
        k, lo, hi = r.i16(), r.i16(), r.i16()
        r.skip_tags()
        return k, lo, hi
    out["ranges"] = {k: (lo, hi) for k, lo, hi in r.compact_array(key)}
    r.i32()  # throttle_time_ms
    for _ in range(r.uvarint()):
        tag, size = r.uvarint(), r.uvarint()
        t = FlexReader(r.take(size), True)
        if tag == 0:
            for _ in range(t.uvarint() - 1):
                name, lo, hi = t.compact_string(), t.i16(), t.i16()
                t.skip_tags()
                out["supported"][name] = (lo, hi)
        elif tag == 1:
            out["epoch"] = t.i64()
        elif tag == 2:
            for _ in range(t.uvarint() - 1):
                name, top, low = t.compact_string(), t.i16(), t.i16()
                t.skip_tags()
                assert top == low, (name, top, low)
                out["finalized"][name] = top
    return out


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


def coordinator_port(port, key, key_type=0, client_id="coordinator-test"):
    """The port of the node coordinating group (key_type 0) or transactional id (1) `key`, asked
    of the broker on `port` (FindCoordinator at the serverless floor); asserts no error."""
    s = connect(port)
    try:
        s.sendall(find_coordinator_request(1, client_id, key, key_type))
        found = parse_find_coordinator(FIND_COORDINATOR_V, recv_frame(s)[1])
    finally:
        s.close()
    assert found["error"] == 0, "FindCoordinator key_type %d of %r: %r" % (key_type, key, found)
    return found["port"]


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


# == Transactions (KIP-98; appended for test_txn_bad_input.py and test_txn_durability.py) =========
#
# Flexible (compact) encoding for the versions that need it: request header v2 (header v1 plus
# empty tagged fields), response header v1 (correlation id plus tagged fields), compact strings,
# arrays and bytes (length + 1 as an unsigned varint), and an empty tagged-field section at the
# end of every struct. Versions: InitProducerId v0-5 (flexible from 2), AddPartitionsToTxn v0-5
# (flexible from 3; v4+ is the batched broker form), AddOffsetsToTxn v0-4, EndTxn v0-4 (flexible
# from 3), TxnOffsetCommit v0-4 (flexible from 3), Produce v3-11 with a transactional id
# (flexible from 9), ListOffsets v2-5 with an isolation level, Fetch v4-11 with an isolation
# level, DescribeTransactions v0 (flexible).

API_LIST_OFFSETS = 2
API_INIT_PRODUCER_ID = 22
API_ADD_PARTITIONS_TO_TXN = 24
API_ADD_OFFSETS_TO_TXN = 25
API_END_TXN = 26
API_TXN_OFFSET_COMMIT = 28
API_DESCRIBE_TRANSACTIONS = 65

# first flexible version of each API (request header v2 / response header v1 from there)
FLEXIBLE_FROM = {API_PRODUCE: 9, API_FETCH: 12, API_LIST_OFFSETS: 6, API_FIND_COORDINATOR: 3,
                 API_INIT_PRODUCER_ID: 2, API_ADD_PARTITIONS_TO_TXN: 3, API_ADD_OFFSETS_TO_TXN: 3,
                 API_END_TXN: 3, API_TXN_OFFSET_COMMIT: 3, API_DESCRIBE_TRANSACTIONS: 0}

ISOLATION_READ_UNCOMMITTED = 0
ISOLATION_READ_COMMITTED = 1

ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20

ERR_NOT_COORDINATOR = 16
ERR_CLUSTER_AUTHORIZATION_FAILED = 31
ERR_INVALID_REQUEST = 42
ERR_INVALID_PRODUCER_EPOCH = 47
ERR_INVALID_TXN_STATE = 48
ERR_INVALID_PRODUCER_ID_MAPPING = 49
ERR_INVALID_TRANSACTION_TIMEOUT = 50
ERR_CONCURRENT_TRANSACTIONS = 51
ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
ERR_PRODUCER_FENCED = 90
ERR_TRANSACTION_ABORTABLE = 120


def is_flexible(api_key, version):
    return version >= FLEXIBLE_FROM.get(api_key, 1 << 15)


def tags():
    """An empty tagged-field section."""
    return b"\x00"


def compact_nullable_string(s):
    if s is None:
        return b"\x00"
    b = s.encode() if isinstance(s, str) else s
    return uvarint(len(b) + 1) + b


def compact_array(items, enc):
    if items is None:
        return b"\x00"
    return uvarint(len(items) + 1) + b"".join(enc(x) for x in items)


def compact_bytes(b):
    if b is None:
        return b"\x00"
    return uvarint(len(b) + 1) + b


def request_any(api_key, api_version, correlation_id, client_id, body):
    """A frame with the request header the version needs: v1, or v2 (tagged fields) when the
    version is flexible."""
    hdr = i16(api_key) + i16(api_version) + i32(correlation_id) + string(client_id)
    if is_flexible(api_key, api_version):
        hdr += tags()
    payload = hdr + body
    return i32(len(payload)) + payload


class FlexReader(Reader):
    """Reader with the compact types; `flex` picks compact or classic encodings in the helpers
    str_/arr/bytes_/end (end skips a struct's tagged fields when flexible)."""

    def __init__(self, data, flex=False):
        super().__init__(data)
        self.flex = flex

    def uvarint(self):
        shift = v = 0
        while True:
            b = self.take(1)[0]
            v |= (b & 0x7F) << shift
            if not b & 0x80:
                return v
            shift += 7
            if shift > 63:
                raise ValueError("varint too long")

    def compact_string(self):
        n = self.uvarint() - 1
        return None if n < 0 else self.take(n).decode()

    def compact_array(self, dec):
        n = self.uvarint() - 1
        if n < 0:
            return None
        if n > len(self.data):
            raise ValueError("array count %d larger than the response" % n)
        return [dec(self) for _ in range(n)]

    def skip_tags(self):
        for _ in range(self.uvarint()):
            self.uvarint()               # tag
            self.take(self.uvarint())    # size, data

    def str_(self):
        return self.compact_string() if self.flex else self.string()

    def arr(self, dec):
        return self.compact_array(dec) if self.flex else self.array(dec)

    def bytes_(self):
        if self.flex:
            n = self.uvarint() - 1
        else:
            n = self.i32()
        return None if n < 0 else self.take(n)

    def end(self):
        if self.flex:
            self.skip_tags()


def response_reader(api_key, version, body):
    """A FlexReader on a response body from recv_frame (which strips only the correlation id):
    for a flexible version the response header's tagged fields come first and are skipped."""
    flex = is_flexible(api_key, version)
    r = FlexReader(body, flex)
    if flex:
        r.skip_tags()
    return r


def _enc(flex):
    """(string, nullable string, array) encoders for flexible or classic versions."""
    if flex:
        return compact_nullable_string, compact_nullable_string, compact_array
    return string, string, array


def roundtrip(sock, frame_fn, *args, **kwargs):
    """Sends frame_fn(correlation_id, *args, **kwargs) with a fresh correlation id and returns the
    answer's body; asserts the correlation id came back."""
    roundtrip.corr = getattr(roundtrip, "corr", 70000) + 1
    corr = roundtrip.corr
    sock.sendall(frame_fn(corr, *args, **kwargs))
    got, body = recv_frame(sock)
    assert got == corr, "correlation id %d, sent %d" % (got, corr)
    return body


# -- record batch v2 with producer fields ----------------------------------------------------

def producer_batch(records, producer_id, producer_epoch, base_sequence, transactional=False,
                   base_timestamp=None):
    """Uncompressed batch v2 of (key, value, headers) tuples from an idempotent producer (and
    transactional with the flag: attribute bit 4)."""
    ts = int(time.time() * 1000) if base_timestamp is None else base_timestamp
    recs = b"".join(record(i, k, v, h) for i, (k, v, h) in enumerate(records))
    after_crc = (i16(ATTR_TRANSACTIONAL if transactional else 0)
                 + i32(len(records) - 1)
                 + i64(ts) + i64(ts)
                 + i64(producer_id) + i16(producer_epoch) + i32(base_sequence)
                 + i32(len(records)) + recs)
    after_length = i32(-1) + i8(2) + u32(crc32c(after_crc)) + after_crc
    return i64(0) + i32(len(after_length)) + after_length


def parse_batches(data):
    """Splits a Fetch records blob into batch headers: [{"base_offset", "last_offset",
    "attributes", "producer_id", "producer_epoch", "base_sequence", "count", "transactional",
    "control", "records": [(offset, key, value)] (uncompressed only)}]. A trailing partial batch
    (allowed in Fetch answers) is ignored."""
    out, pos = [], 0
    while data is not None and pos + 12 <= len(data):
        base_offset, length = struct.unpack(">qi", data[pos:pos + 12])
        if pos + 12 + length > len(data):
            break
        b = data[pos + 12:pos + 12 + length]
        # leader_epoch i32, magic i8, crc u32, attributes i16, last_offset_delta i32,
        # base_ts i64, max_ts i64, pid i64, epoch i16, base_seq i32, count i32
        (_le, magic, _crc, attrs, lod, _bts, _mts, pid, epoch, seq, count) = struct.unpack(
            ">ibIhiqqqhii", b[:49])
        assert magic == 2, "record batch magic %d" % magic
        batch = {"base_offset": base_offset, "last_offset": base_offset + lod, "attributes": attrs,
                 "producer_id": pid, "producer_epoch": epoch, "base_sequence": seq,
                 "count": count, "transactional": bool(attrs & ATTR_TRANSACTIONAL),
                 "control": bool(attrs & ATTR_CONTROL), "records": []}
        if attrs & 0x07 == 0:
            rr = FlexReader(b[49:])

            def varint_():
                v = rr.uvarint()
                return (v >> 1) ^ -(v & 1)

            for _ in range(count):
                varint_()          # length
                rr.take(1)         # attributes
                varint_()          # timestamp delta
                od = varint_()
                kl = varint_()
                key = None if kl < 0 else rr.take(kl)
                vl = varint_()
                value = None if vl < 0 else rr.take(vl)
                for _ in range(varint_()):
                    hk = varint_()
                    rr.take(hk)
                    hv = varint_()
                    if hv > 0:
                        rr.take(hv)
                batch["records"].append((base_offset + od, key, value))
        out.append(batch)
        pos += 12 + length
    return out


# -- InitProducerId v0-5 ----------------------------------------------------------------------

def init_producer_id_request(version, correlation_id, client_id, transactional_id, timeout_ms,
                             producer_id=-1, producer_epoch=-1):
    assert 0 <= version <= 5
    flex = is_flexible(API_INIT_PRODUCER_ID, version)
    _s, ns, _a = _enc(flex)
    body = ns(transactional_id) + i32(timeout_ms)
    if version >= 3:
        body += i64(producer_id) + i16(producer_epoch)
    if flex:
        body += tags()
    return request_any(API_INIT_PRODUCER_ID, version, correlation_id, client_id, body)


def parse_init_producer_id(version, body):
    r = response_reader(API_INIT_PRODUCER_ID, version, body)
    r.i32()  # throttle_time_ms
    out = {"error": r.i16(), "producer_id": r.i64(), "producer_epoch": r.i16()}
    r.end()
    return out


# -- AddPartitionsToTxn v0-5 ------------------------------------------------------------------

def _txn_topics(flex, topics):
    s, _ns, a = _enc(flex)
    return a(sorted(topics.items()),
             lambda t: s(t[0]) + a(list(t[1]), i32) + (tags() if flex else b""))


def add_partitions_to_txn_request(version, correlation_id, client_id, transactional_id,
                                  producer_id, producer_epoch, topics):
    """v0-3, one transaction: topics is {topic: [partitions]}."""
    assert 0 <= version <= 3
    flex = is_flexible(API_ADD_PARTITIONS_TO_TXN, version)
    s, _ns, _a = _enc(flex)
    body = (s(transactional_id) + i64(producer_id) + i16(producer_epoch)
            + _txn_topics(flex, topics))
    if flex:
        body += tags()
    return request_any(API_ADD_PARTITIONS_TO_TXN, version, correlation_id, client_id, body)


def add_partitions_to_txn_batch_request(version, correlation_id, client_id, transactions):
    """v4-5, the batched broker form: transactions is [(transactional_id, producer_id,
    producer_epoch, verify_only, {topic: [partitions]})]."""
    assert 4 <= version <= 5

    def txn(t):
        tid, pid, epoch, verify_only, topics = t
        return (compact_nullable_string(tid) + i64(pid) + i16(epoch) + boolean(verify_only)
                + _txn_topics(True, topics) + tags())

    body = compact_array(transactions, txn) + tags()
    return request_any(API_ADD_PARTITIONS_TO_TXN, version, correlation_id, client_id, body)


def _topic_results(r):
    def part(r):
        p = (r.i32(), r.i16())
        r.end()
        return p

    def topic(r):
        name = r.str_()
        parts = r.arr(part)
        r.end()
        return name, parts

    out = {}
    for name, parts in r.arr(topic) or []:
        for p, err in parts or []:
            out[(name, p)] = err
    return out


def parse_add_partitions_to_txn(version, body):
    """v0-3: {(topic, partition): error}. v4-5: {"error": top-level error, "results":
    {transactional_id: {(topic, partition): error}}}."""
    r = response_reader(API_ADD_PARTITIONS_TO_TXN, version, body)
    r.i32()  # throttle_time_ms
    if version <= 3:
        out = _topic_results(r)
        r.end()
        return out
    err = r.i16()

    def txn(r):
        tid = r.str_()
        res = _topic_results(r)
        r.end()
        return tid, res

    results = dict(r.arr(txn) or [])
    r.end()
    return {"error": err, "results": results}


# -- AddOffsetsToTxn v0-4, EndTxn v0-4 --------------------------------------------------------

def add_offsets_to_txn_request(version, correlation_id, client_id, transactional_id, producer_id,
                               producer_epoch, group_id):
    assert 0 <= version <= 4
    flex = is_flexible(API_ADD_OFFSETS_TO_TXN, version)
    s, _ns, _a = _enc(flex)
    body = s(transactional_id) + i64(producer_id) + i16(producer_epoch) + s(group_id)
    if flex:
        body += tags()
    return request_any(API_ADD_OFFSETS_TO_TXN, version, correlation_id, client_id, body)


def parse_add_offsets_to_txn(version, body):
    r = response_reader(API_ADD_OFFSETS_TO_TXN, version, body)
    r.i32()
    err = r.i16()
    r.end()
    return err


def end_txn_request(version, correlation_id, client_id, transactional_id, producer_id,
                    producer_epoch, committed):
    assert 0 <= version <= 4
    flex = is_flexible(API_END_TXN, version)
    s, _ns, _a = _enc(flex)
    body = s(transactional_id) + i64(producer_id) + i16(producer_epoch) + boolean(committed)
    if flex:
        body += tags()
    return request_any(API_END_TXN, version, correlation_id, client_id, body)


def parse_end_txn(version, body):
    r = response_reader(API_END_TXN, version, body)
    r.i32()
    err = r.i16()
    r.end()
    return err


# -- TxnOffsetCommit v0-4 ---------------------------------------------------------------------

def txn_offset_commit_request(version, correlation_id, client_id, transactional_id, group_id,
                              producer_id, producer_epoch, topic, offsets, generation_id=-1,
                              member_id="", group_instance_id=None, metadata=""):
    """offsets: {partition: offset} of one topic."""
    assert 0 <= version <= 4
    flex = is_flexible(API_TXN_OFFSET_COMMIT, version)
    s, ns, a = _enc(flex)
    t = b"\x00" if flex else b""

    def part(po):
        p, o = po
        b = i32(p) + i64(o)
        if version >= 2:
            b += i32(-1)  # committed_leader_epoch
        return b + ns(metadata) + t

    body = s(transactional_id) + s(group_id) + i64(producer_id) + i16(producer_epoch)
    if version >= 3:
        body += i32(generation_id) + s(member_id) + ns(group_instance_id)
    body += a([topic], lambda name: s(name) + a(sorted(offsets.items()), part) + t)
    body += t
    return request_any(API_TXN_OFFSET_COMMIT, version, correlation_id, client_id, body)


def parse_txn_offset_commit(version, body):
    """{(topic, partition): error}."""
    r = response_reader(API_TXN_OFFSET_COMMIT, version, body)
    r.i32()
    out = _topic_results(r)
    r.end()
    return out


# -- Produce v3-11 with a transactional id ----------------------------------------------------

def produce_request_txn(version, correlation_id, client_id, transactional_id, batches, acks=-1,
                        timeout_ms=10000):
    """Produce v3-11: batches is [(topic, partition, batch bytes)] (one topic entry per topic,
    in first-seen order)."""
    assert 3 <= version <= 11
    flex = is_flexible(API_PRODUCE, version)
    s, ns, a = _enc(flex)
    t = tags() if flex else b""
    by_topic = {}
    for topic, p, batch in batches:
        by_topic.setdefault(topic, []).append((p, batch))
    recs = compact_bytes if flex else bytes_
    body = (ns(transactional_id) + i16(acks) + i32(timeout_ms)
            + a(list(by_topic.items()),
                lambda tp: s(tp[0]) + a(tp[1], lambda pb: i32(pb[0]) + recs(pb[1]) + t) + t)
            + t)
    return request_any(API_PRODUCE, version, correlation_id, client_id, body)


def parse_produce_any(version, body):
    """Produce v3-11 answer: {(topic, partition): {"error", "base_offset", "error_message"}}."""
    r = response_reader(API_PRODUCE, version, body)

    def part(r):
        p = {"index": r.i32(), "error": r.i16(), "base_offset": r.i64(),
             "log_append_time": r.i64()}
        if version >= 5:
            p["log_start_offset"] = r.i64()
        if version >= 8:
            def rec_err(r):
                e = (r.i32(), r.str_())
                r.end()
                return e
            p["record_errors"] = r.arr(rec_err)
            p["error_message"] = r.str_()
        r.end()
        return p

    def topic(r):
        name = r.str_()
        parts = r.arr(part)
        r.end()
        return name, parts

    out = {}
    for name, parts in r.arr(topic) or []:
        for p in parts or []:
            out[(name, p["index"])] = p
    r.i32()  # throttle_time_ms
    r.end()
    return out


# -- ListOffsets v2-5, Fetch v4-11 with an isolation level -------------------------------------

def list_offsets_request(version, correlation_id, client_id, topic, partitions, timestamp=-1,
                         isolation_level=ISOLATION_READ_UNCOMMITTED):
    """ListOffsets v2-5 of one topic: latest (-1) by default; under read_committed Kafka answers
    the last stable offset."""
    assert 2 <= version <= 5

    def part(p):
        b = i32(p)
        if version >= 4:
            b += i32(-1)  # current_leader_epoch
        return b + i64(timestamp)

    body = i32(-1) + i8(isolation_level) + array([topic], lambda t: string(t) + array(
        list(partitions), part))
    return request_any(API_LIST_OFFSETS, version, correlation_id, client_id, body)


def parse_list_offsets(version, body):
    """{(topic, partition): {"error", "timestamp", "offset"}}."""
    r = Reader(body)
    r.i32()  # throttle_time_ms

    def part(r):
        p = {"index": r.i32(), "error": r.i16(), "timestamp": r.i64(), "offset": r.i64()}
        if version >= 4:
            r.i32()  # leader_epoch
        return p

    out = {}
    for name, parts in r.array(lambda r: (r.string(), r.array(part))):
        for p in parts:
            out[(name, p["index"])] = p
    return out


def fetch_request_iso(correlation_id, client_id, topic, partition, offset, isolation_level,
                      max_bytes=1 << 20, max_wait_ms=0, min_bytes=0, version=FETCH_V):
    """fetch_request with an isolation level (0 read_uncommitted, 1 read_committed)."""
    frame = fetch_request(correlation_id, client_id, topic, partition, offset, max_bytes,
                          max_wait_ms, min_bytes, version)
    # size(4) api(2) ver(2) corr(4) client_id(2+n) replica_id(4) max_wait(4) min_bytes(4)
    # max_bytes(4) isolation_level(1)
    pos = 4 + 2 + 2 + 4 + 2 + len(client_id.encode()) + 16
    return frame[:pos] + i8(isolation_level) + frame[pos + 1:]


# -- DescribeTransactions v0 --------------------------------------------------------------------

def describe_transactions_request(correlation_id, client_id, transactional_ids):
    body = compact_array(list(transactional_ids), compact_nullable_string) + tags()
    return request_any(API_DESCRIBE_TRANSACTIONS, 0, correlation_id, client_id, body)


def parse_describe_transactions(body):
    """{transactional_id: {"error", "state", "timeout_ms", "start_time_ms", "producer_id",
    "producer_epoch", "topics": {topic: [partitions]}}}."""
    r = response_reader(API_DESCRIBE_TRANSACTIONS, 0, body)
    r.i32()

    def topic(r):
        name = r.compact_string()
        parts = r.compact_array(lambda r: r.i32())
        r.end()
        return name, parts

    def state(r):
        d = {"error": r.i16(), "transactional_id": r.compact_string(), "state": r.compact_string(),
             "timeout_ms": r.i32(), "start_time_ms": r.i64(), "producer_id": r.i64(),
             "producer_epoch": r.i16()}
        d["topics"] = dict(r.compact_array(topic) or [])
        r.end()
        return d

    states = r.compact_array(state) or []
    r.end()
    return {d["transactional_id"]: d for d in states}


# -- OffsetFetch v1-7 (v7: require_stable, KIP-447) ---------------------------------------------

API_OFFSET_FETCH = 9
FLEXIBLE_FROM[API_OFFSET_FETCH] = 6
ERR_UNSTABLE_OFFSET_COMMIT = 88


def offset_fetch_request(version, correlation_id, client_id, group_id, topic, partitions,
                         require_stable=False):
    """OffsetFetch v1-7 of one group and one topic's partitions."""
    assert 1 <= version <= 7
    flex = is_flexible(API_OFFSET_FETCH, version)
    s, _ns, a = _enc(flex)
    t = tags() if flex else b""
    body = s(group_id) + a([topic], lambda name: s(name) + a(list(partitions), i32) + t)
    if version >= 7:
        body += boolean(require_stable)
    body += t
    return request_any(API_OFFSET_FETCH, version, correlation_id, client_id, body)


def parse_offset_fetch(version, body):
    """{"error": group error (v2+, else 0), "partitions": {(topic, partition): {"offset",
    "metadata", "error"}}}."""
    r = response_reader(API_OFFSET_FETCH, version, body)
    if version >= 3:
        r.i32()

    def part(r):
        p = {"index": r.i32(), "offset": r.i64()}
        if version >= 5:
            r.i32()  # committed_leader_epoch
        p["metadata"] = r.str_()
        p["error"] = r.i16()
        r.end()
        return p

    def topic(r):
        name = r.str_()
        parts = r.arr(part)
        r.end()
        return name, parts

    out = {}
    for name, parts in r.arr(topic) or []:
        for p in parts or []:
            out[(name, p["index"])] = p
    err = r.i16() if version >= 2 else 0
    r.end()
    return {"error": err, "partitions": out}
