"""One deflate block of N highly compressible records, for measuring blocks that expand far.

Each record is {"s": 100 x "a", "i": i % 64}; N = 3,000,000 gives a 2.4 MB block that
decompresses to 309 MB (docs/perf/codecs.md). Written by hand (header, one block, sync
marker) so that the whole file is a single block, which no writer's sync interval gives.

    python3 benches/big_block.py /tmp/big.avro [N]
"""

import json
import os
import sys
import zlib


def zigzag(v: int) -> bytes:
    v = (v << 1) ^ (v >> 63)
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def main() -> None:
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 3_000_000
    schema = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "s", "type": "string"}, {"name": "i", "type": "long"}],
    }
    record = zigzag(100) + b"a" * 100
    raw = b"".join(record + zigzag(i % 64) for i in range(n))
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    data = c.compress(raw) + c.flush()
    sync = os.urandom(16)

    def s(b: bytes) -> bytes:
        return zigzag(len(b)) + b

    meta = (
        zigzag(2)
        + s(b"avro.schema")
        + s(json.dumps(schema).encode())
        + s(b"avro.codec")
        + s(b"deflate")
        + zigzag(0)
    )
    with open(path, "wb") as f:
        f.write(b"Obj\x01" + meta + sync + zigzag(n) + zigzag(len(data)) + data + sync)
    print(f"{path}: {n} records, {len(raw)} bytes in one block of {len(data)}")


if __name__ == "__main__":
    main()
