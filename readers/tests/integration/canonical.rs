//! Parsing Canonical Form and fingerprints (CRC-64-AVRO, MD5, SHA-256) of avrow's schema model,
//! against fastavro's (tests/data/canonical/expected.json, from canonical_expected.py) for
//! hand-written edge cases, generated schemas, the shared schemas and every fixture's schema.
//! (apache-avro 0.22 is no oracle here: its canonical form keeps `logicalType`-bearing
//! objects such as `{"type":"long"}` and decimal `precision`/`scale`, against the spec.)

use avrow_engine::schema::Fingerprint;
use avrow_engine::Schema;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn canonical_forms_and_fingerprints_match_fastavro() {
    let dir = crate::fixtures::data_dir().join("canonical");
    let schemas: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("schemas.json")).unwrap()).unwrap();
    let expected: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    assert_eq!(schemas.len(), expected.len());
    assert!(schemas.len() > 100);
    let mut failures = Vec::new();
    for (i, (s, e)) in schemas.iter().zip(&expected).enumerate() {
        let text = s.to_string();
        match (Schema::parse(&text), e.get("error")) {
            (Err(_), Some(_)) => {}
            (Ok(_), Some(why)) => failures.push(format!(
                "#{i}: accepted, but fastavro rejects it ({why}): {text}"
            )),
            (Err(err), None) => failures.push(format!("#{i}: rejected ({err}): {text}")),
            (Ok(schema), None) => {
                let pcf = schema.canonical_form();
                if pcf != e["canonical"].as_str().unwrap() {
                    failures.push(format!(
                        "#{i}: canonical form\n    avrow    {pcf}\n    fastavro {}",
                        e["canonical"].as_str().unwrap()
                    ));
                    continue;
                }
                for (alg, key) in [
                    (Fingerprint::Rabin, "rabin"),
                    (Fingerprint::Md5, "md5"),
                    (Fingerprint::Sha256, "sha256"),
                ] {
                    let got = hex(&schema.fingerprint(alg));
                    if got != e[key].as_str().unwrap() {
                        failures.push(format!("#{i}: {key} {got}, fastavro {}", e[key]));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {}:\n{}",
        failures.len(),
        schemas.len(),
        failures.join("\n")
    );
}

/// The known CRC-64-AVRO values of the spec's examples.
#[test]
fn rabin_of_primitives() {
    for (json, fp) in [
        ("\"int\"", 0x7275_d51a_3f39_5c8fu64),
        ("\"null\"", 0x63dd_24e7_cc25_8f8a),
    ] {
        let s = Schema::parse(json).unwrap();
        let got = u64::from_le_bytes(s.fingerprint(Fingerprint::Rabin).try_into().unwrap());
        assert_eq!(got, fp, "{json}");
    }
}
