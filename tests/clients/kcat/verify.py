#!/usr/bin/env python3
"""Helper for client.sh: writes kcat input files and verifies kcat's consumer output.

  gen   --count N --partitions P --out DIR   writes DIR/p<p>.txt, "key<TAB>value" per line
  check --count N --partitions P --in FILE   FILE holds kcat -f '%p\\t%o\\t%k\\t%s\\t%h\\n' lines
Standard library only.
"""
import argparse
import json
import os
import sys

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


def key_of(i):
    return "key-%d" % i


def value_of(i):
    return "value-%d-%s" % (i, "x" * (i % 50))


def gen(a):
    files = [open(os.path.join(a.out, "p%d.txt" % p), "w") for p in range(a.partitions)]
    for i in range(a.count):
        files[i % a.partitions].write("%s\t%s\n" % (key_of(i), value_of(i)))
    for f in files:
        f.close()


def check(a):
    per = {p: 0 for p in range(a.partitions)}
    expected = {p: len(range(p, a.count, a.partitions)) for p in range(a.partitions)}
    codec_seen = None
    total = 0
    with open(getattr(a, "in")) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            fields = line.split("\t")
            if len(fields) != 5:
                return fail("line %d: %r is not partition/offset/key/value/headers" % (lineno, line))
            part, off, key, value, hdrs = int(fields[0]), int(fields[1]), fields[2], fields[3], fields[4]
            where = "partition %d offset %d" % (part, off)
            if part not in per:
                return fail("%s: record from a partition that does not exist" % where)
            n = per[part]
            if off != n:
                return fail("%s: expected offset %d (offsets must be consecutive from 0)" % (where, n))
            if n >= expected[part]:
                return fail("%s: more records than the %d produced to this partition" % (where, expected[part]))
            i = part + n * a.partitions
            if key != key_of(i):
                return fail("%s: key %r, expected %r" % (where, key, key_of(i)))
            if value != value_of(i):
                return fail("%s: value %r, expected %r" % (where, value, value_of(i)))
            headers = [h.split("=", 1) for h in hdrs.split(",")] if hdrs else []
            hd = dict((h[0], h[1] if len(h) > 1 else None) for h in headers)
            if "idx" in hd and hd["idx"] != str(i):
                return fail("%s: header idx=%r, expected %r" % (where, hd["idx"], str(i)))
            codec = hd.get("codec")
            if codec not in CODECS or (codec_seen is not None and codec != codec_seen):
                return fail("%s: codec header %r (headers %r, earlier records %r)" % (where, codec, hdrs, codec_seen))
            codec_seen = codec
            per[part] = n + 1
            total += 1
    if total != a.count:
        return fail("consumed %d of %d records; per partition %s" % (total, a.count, per))
    print(json.dumps({"consumed": total, "per_partition": {str(k): v for k, v in per.items()}}))
    return 0


def fail(msg):
    print("kcat client: " + msg, file=sys.stderr)
    return 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("gen", "check"))
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--partitions", type=int, required=True)
    ap.add_argument("--out")
    ap.add_argument("--in")
    a = ap.parse_args()
    if a.mode == "gen":
        gen(a)
        return 0
    return check(a)


if __name__ == "__main__":
    sys.exit(main())
