#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/seeds/ (run from the repository root).

container/: the small real files of /work/shared/fixtures/avro (copied as they are; see the
            README there for their provenance) plus small multi-block files written here with
            every codec Python's standard library has (null, deflate, snappy as literals, bzip2,
            xz), with an empty block and a block that ends mid-batch.
schema/:    the .avsc texts of those files, of /work/shared/schemas and of avrow_fuzz::SCHEMAS.
resolve/:   the same texts alone (resolved against themselves) and writer/reader pairs with
            records, separated by NUL bytes as fuzz/src/lib.rs `resolve` reads them.
decode/:    `[schema][flags][count][batch][split][kernel][data]` for some of avrow_fuzz::SCHEMAS.
"""
import bz2, json, lzma, os, re, shutil, struct, sys, zlib

ROOT = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.environ.get("AVRO_FIXTURES", "/work/shared/fixtures/avro")
SCHEMAS_DIR = os.environ.get("AVRO_SCHEMAS", "/work/shared/schemas")
MAX_SEED = 20_000


def long(v):
    v = (v << 1) ^ (v >> 63)
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def string(s):
    b = s.encode() if isinstance(s, str) else s
    return long(len(b)) + b


def double(x):
    return struct.pack("<d", x)


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def header_schema(path):
    """The avro.schema of a container file (a minimal header parser)."""
    data = open(path, "rb").read()
    pos = 4

    def read_long():
        nonlocal pos
        shift = v = 0
        while True:
            b = data[pos]
            pos += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return (v >> 1) ^ -(v & 1)

    meta = {}
    while True:
        n = read_long()
        if n == 0:
            break
        if n < 0:
            read_long()
            n = -n
        for _ in range(n):
            k = read_long()
            key = data[pos:pos + k].decode()
            pos += k
            v = read_long()
            meta[key] = data[pos:pos + v]
            pos += v
    return meta["avro.schema"].decode()


# -- container ----------------------------------------------------------------------------------

ORDER = open(os.path.join(SCHEMAS_DIR, "order.avsc")).read()


def order_record(i):
    r = long(i) + string(f"customer-{i}") + double(i * 1.5) + long(i % 3) + bytes([i & 1])
    r += long(0) if i % 2 else long(1) + string("note")  # ["null","string"]
    lines = i % 3
    if lines:
        r += long(lines) + b"".join(string(f"sku{j}") + long(j) + double(0.25) for j in range(lines)) + long(0)
    else:
        r += long(0)
    items = long(i) + long(-i)
    r += (long(-2) + long(len(items)) + items + long(0)) if i % 2 else long(0)  # a block with a byte size
    r += (long(1) + string("k") + string("v") + long(0)) if i % 3 == 0 else long(0)
    return r


def snappy_literal(data):
    """Raw snappy of one or more literal runs (valid, uncompressed), then Avro's CRC-32."""
    out = bytearray()
    n = len(data)
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | 0x80 if n else b)
        if not n:
            break
    for i in range(0, len(data), 60):
        chunk = data[i:i + 60]
        out.append((len(chunk) - 1) << 2)
        out += chunk
    return bytes(out) + struct.pack(">I", zlib.crc32(data))


CODECS = {
    "null": lambda d: d,
    "deflate": lambda d: zlib.compress(d, 9)[2:-4],
    "snappy": snappy_literal,
    "bzip2": lambda d: bz2.compress(d, 9),
    "xz": lambda d: lzma.compress(d, format=lzma.FORMAT_XZ),
}


def container(schema, codec, blocks, sync=b"fuzz-seed-sync!!"):
    meta = [("avro.schema", schema.encode()), ("avro.codec", codec.encode())]
    out = b"Obj\x01" + long(len(meta)) + b"".join(string(k) + string(v) for k, v in meta) + long(0) + sync
    for records in blocks:
        data = CODECS[codec](b"".join(records))
        out += long(len(records)) + long(len(data)) + data + sync
    return out


def containers():
    d = os.path.join(ROOT, "container")
    if os.path.isdir(d):
        shutil.rmtree(d)
    for sub in ("apache", "spark"):
        for name in sorted(os.listdir(os.path.join(FIXTURES, sub))):
            src = os.path.join(FIXTURES, sub, name)
            if name.endswith(".avro") and os.path.getsize(src) <= MAX_SEED:
                shutil.copy(src, os.path.join(d, name) if os.path.isdir(d) else (os.makedirs(d) or os.path.join(d, name)))
    recs = [order_record(i) for i in range(7)]
    for codec in CODECS:
        write(os.path.join(d, f"order-3-blocks-{codec}.avro"), container(ORDER, codec, [recs[:4], [], recs[4:]]))
    # Zero-byte records and a top-level non-record.
    write(os.path.join(d, "nulls.avro"), container('{"type":"record","name":"Z","fields":[{"name":"n","type":"null"}]}', "null", [[b""] * 5]))
    write(os.path.join(d, "top-level-array.avro"), container('{"type":"array","items":"int"}', "deflate", [[long(2) + long(1) + long(2) + long(0), long(0)]]))


# -- schema and resolve ------------------------------------------------------------------------

def seed_schemas():
    lib = open(os.path.join(ROOT, "..", "src", "lib.rs")).read()
    body = lib.split("pub const SCHEMAS", 1)[1].split("];", 1)[0]
    return re.findall(r'r#"(.*?)"#', body, re.S)


def schema_texts():
    texts = {}
    for name in sorted(os.listdir(SCHEMAS_DIR)):
        texts[name] = open(os.path.join(SCHEMAS_DIR, name)).read()
    for sub in ("apache", "spark"):
        for name in sorted(os.listdir(os.path.join(FIXTURES, sub))):
            if name.endswith(".avro"):
                s = header_schema(os.path.join(FIXTURES, sub, name))
                if s not in texts.values():
                    texts[name.replace(".avro", ".avsc")] = s
    return texts


def schemas_and_pairs():
    texts = schema_texts()
    for target in ("schema", "resolve"):
        d = os.path.join(ROOT, target)
        if os.path.isdir(d):
            shutil.rmtree(d)
        for name, text in texts.items():
            write(os.path.join(d, name), text.encode())
    d = os.path.join(ROOT, "schema")
    for i, text in enumerate(seed_schemas()):
        write(os.path.join(d, f"seed-{i:02}.avsc"), text.encode())
    # Resolution pairs: writer \0 reader \0 [flags][count][batch][split][kernel] data.
    d = os.path.join(ROOT, "resolve")
    tail = lambda count, data: bytes([0, count, 3, 0, 1]) + data
    w = '{"type":"record","name":"r","fields":[{"name":"id","type":"int"},{"name":"old","type":"string"},{"name":"e","type":{"type":"enum","name":"E","symbols":["A","B","C"]}},{"name":"u","type":["null","int","string"]}]}'
    r = ('{"type":"record","name":"r","fields":[{"name":"added","type":"string","default":"none"},{"name":"id","type":"double"},'
         '{"name":"e","type":{"type":"enum","name":"E","symbols":["C","A"],"default":"A"}},{"name":"u","type":["null","long","bytes"]},'
         '{"name":"m","type":{"type":"map","values":"int"},"default":{"a":1}}]}')
    data = b"".join(long(i) + string("x" * i) + long(i % 3) + [long(0), long(1) + long(7), long(2) + string("s")][i % 3] for i in range(4))
    write(os.path.join(d, "pair-promote-enum-union.bin"), w.encode() + b"\0" + r.encode() + b"\0" + tail(4, data))
    w2 = '{"type":"record","name":"a.Old","fields":[{"name":"x","type":"long"},{"name":"xs","type":{"type":"array","items":"int"}}]}'
    r2 = '{"type":"record","name":"b.New","aliases":["a.Old"],"fields":[{"name":"y","aliases":["x"],"type":"float"},{"name":"xs","type":{"type":"array","items":"double"}}]}'
    data2 = long(5) + long(2) + long(1) + long(2) + long(0) + long(-1) + long(0)
    write(os.path.join(d, "pair-aliases-promote-array.bin"), w2.encode() + b"\0" + r2.encode() + b"\0" + tail(2, data2))
    # Seed schema 18 (Order) read as the order.avsc text: the same schema.
    write(os.path.join(d, "pair-seed-order.bin"), bytes([18]) + b"\0" + ORDER.encode() + b"\0" + tail(3, b"".join(order_record(i) for i in range(3))))


# -- decode -------------------------------------------------------------------------------------

def decode_seeds():
    d = os.path.join(ROOT, "decode")
    if os.path.isdir(d):
        shutil.rmtree(d)

    def seed(name, schema, count, data, batch=2, flags=0, split=0, kernel=1):
        write(os.path.join(d, name), bytes([schema, flags, count, batch, split, kernel]) + data)

    f = struct.pack("<f", 1.5)
    seed("primitives", 0, 2, b"".join(bytes([1]) + long(-3) + long(1 << 40) + f + double(2.5) for _ in range(2)))
    seed("strings", 1, 3, b"".join(string("héllo" * i) + string(b"\x00\xff" * i) for i in range(3)), split=9)
    seed("fixed", 2, 2, b"abcd" + long(1) + b"wxyz" + long(-1))
    seed("enum", 3, 3, long(0) + long(0) + long(3) + long(0) + long(1) + long(0))
    seed("arrays", 4, 1, long(2) + long(1) + long(2) + long(0) + long(-1) + long(2) + string("ab") + long(0)
         + long(1) + long(2) + long(5) + long(6) + long(0) + long(0) + long(3) + long(0))
    seed("maps", 5, 1, long(1) + string("k") + long(9) + long(0) + long(1) + string("a") + long(1) + string("x") + long(0) + long(0))
    seed("nested", 6, 1, long(1) + long(2) + string("in") + long(1) + string("s") + long(4) + long(0) + long(1) + long(3) + string("z"))
    seed("nullable", 7, 2, long(1) + string("a") + long(0) + long(1) + long(1) + long(2) + long(0) + long(1) + double(1.0) + long(0)
         + long(0) + long(1) + long(0))
    seed("union", 8, 4, long(0) + long(0) + long(1) + long(5) + long(1) + string("b") + long(3) + long(7) + long(0) + string("s")
         + long(6) + long(1) + long(1) + string("t") + bytes([1]) + long(0) + long(1) + string("b"))
    seed("decimal", 9, 1, string(b"\x01\x00") + b"\x00" * 15 + b"\x07" + b"\xff" * 32 + string(b"\x12\x34") + string(b"\x05") + b"\x00\x10")
    seed("uuid", 10, 1, string("123e4567-e89b-12d3-a456-426614174000") + bytes(range(16)))
    seed("times", 11, 1, long(19000) + long(1000) + long(10**6) + long(10**12) + long(10**15) + long(10**18) + long(-1) + long(0) + long(1))
    seed("duration", 12, 2, struct.pack("<III", 1, 2, 3) + long(1) + struct.pack("<III", 4, 5, 6) + struct.pack("<III", 0, 0, 0) + long(0))
    seed("list", 13, 1, long(1) + long(1) + long(2) + long(1) + long(3) + long(0))
    seed("tree", 14, 1, string("root") + long(2) + string("kid") + long(0) + string("kid2") + long(1) + string("leaf") + long(0) + long(0) + long(0))
    seed("map-tree", 19, 1, long(1) + long(3) + long(1) + string("n") + long(0) + long(-1) + long(3) + string("m") + long(1) + long(4) + long(0) + long(0))
    seed("zero-size", 15, 200, b"", batch=7)
    seed("top-array", 16, 1, long(2) + long(1) + string("s") + long(0) + long(0))
    seed("top-long", 17, 3, long(1) + long(-2) + long(1 << 62), batch=1)
    seed("order", 18, 3, b"".join(order_record(i) for i in range(3)), split=40, kernel=2)


if __name__ == "__main__":
    containers()
    schemas_and_pairs()
    decode_seeds()
    print("seeds written under", ROOT)
