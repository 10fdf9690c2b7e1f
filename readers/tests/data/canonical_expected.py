#!/usr/bin/env python3
"""Expected Parsing Canonical Forms and fingerprints, from fastavro (an independent
implementation), for the schemas in canonical/schemas.json.

Writes canonical/expected.json: a list, in the same order, of
{"canonical": str, "rabin": hex of the 8 little-endian bytes of the CRC-64-AVRO value (as
in single-object encoding), "md5": hex, "sha256": hex}
or {"error": str} where fastavro rejects the schema.

Rerunnable: `python3 readers/tests/data/canonical_expected.py` (needs `pip install fastavro`).
The schemas: hand-written edge cases, schemas from the Rust generator (gen.rs), the shared
schemas and every fixture's schema.
"""

import json
import os

import fastavro.schema

HERE = os.path.dirname(os.path.abspath(__file__))
DIR = os.path.join(HERE, "canonical")


def main():
    with open(os.path.join(DIR, "schemas.json"), encoding="utf-8") as f:
        schemas = json.load(f)
    out = []
    for s in schemas:
        try:
            pcf = fastavro.schema.to_parsing_canonical_form(s)
        except Exception as e:  # noqa: BLE001 - record why fastavro rejects it
            out.append({"error": f"{type(e).__name__}: {e}"})
            continue
        out.append(
            {
                "canonical": pcf,
                "rabin": fastavro.schema.fingerprint(pcf, "CRC-64-AVRO"),
                "md5": fastavro.schema.fingerprint(pcf, "md5"),
                "sha256": fastavro.schema.fingerprint(pcf, "sha256"),
            }
        )
    with open(os.path.join(DIR, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=0)
        f.write("\n")
    print(f"{len(out)} schemas, {sum('error' in o for o in out)} rejected by fastavro")


if __name__ == "__main__":
    main()
