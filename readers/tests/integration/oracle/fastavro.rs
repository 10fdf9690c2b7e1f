//! The second oracle: fastavro's reading, stored as typed JSON (see
//! `tests/data/fastavro_expected.py`), converted to [`N`].

use super::*;

pub(super) fn hex(s: &str) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) {
        return Err(format!("odd hex {s:?}"));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|e| e.to_string()))
        .collect()
}

/// Normalize one raw value as `fastavro_expected.py` encoded it, applying logical types.
pub fn expect_json(model: &Model, s: &S, j: &Json) -> Result<N, String> {
    let s = model.resolve(s);
    let err = || Err(format!("JSON {j} does not fit {}", describe(model, s)));
    let int = || j.as_i64().ok_or_else(|| format!("not an integer: {j}"));
    let text = || j.as_str().ok_or_else(|| format!("not a string: {j}"));
    Ok(match s {
        S::Union(branches) => {
            let b = j["branch"].as_u64().ok_or("union without branch")? as usize;
            let inner = expect_json(model, &branches[b], &j["value"])?;
            if model.optional(s).is_some() {
                inner
            } else {
                N::Union(b as i8, Box::new(inner))
            }
        }
        S::Null => match j {
            Json::Null => N::Null,
            _ => return err(),
        },
        S::Boolean => N::Bool(j.as_bool().ok_or("not a bool")?),
        S::Int | S::Date | S::TimeMillis => N::Int(int()? as i32),
        S::Long | S::TimeMicros | S::Timestamp { .. } => N::Long(int()?),
        S::Float => {
            let t = text()?;
            let h = t.strip_prefix("f32:").ok_or("float without f32:")?;
            N::F32(f32::from_bits(
                u32::from_str_radix(h, 16).map_err(|e| e.to_string())?,
            ))
        }
        S::Double => {
            let t = text()?;
            let h = t.strip_prefix("f64:").ok_or("double without f64:")?;
            N::F64(f64::from_bits(
                u64::from_str_radix(h, 16).map_err(|e| e.to_string())?,
            ))
        }
        S::Bytes | S::Fixed { .. } => N::Bytes(hex(text()?)?),
        S::String => N::Str(text()?.to_string()),
        S::Enum { symbols, .. } => {
            let t = text()?;
            let i = symbols
                .iter()
                .position(|x| x == t)
                .ok_or_else(|| format!("unknown symbol {t}"))?;
            N::Enum(i as i32, t.to_string())
        }
        S::Array(items) => N::List(
            j.as_array()
                .ok_or("not a list")?
                .iter()
                .map(|x| expect_json(model, items, x))
                .collect::<Result<_, _>>()?,
        ),
        S::Map(values) => {
            let mut e = j
                .as_array()
                .ok_or("not a map")?
                .iter()
                .map(|kv| {
                    Ok((
                        kv[0].as_str().ok_or("map key")?.to_string(),
                        expect_json(model, values, &kv[1])?,
                    ))
                })
                .collect::<Result<Vec<_>, String>>()?;
            e.sort_by(|a, b| a.0.cmp(&b.0));
            N::Map(e)
        }
        S::Record { fields, .. } => {
            let arr = j.as_array().ok_or("not a record")?;
            if arr.len() != fields.len() {
                return err();
            }
            N::Struct(
                fields
                    .iter()
                    .zip(arr)
                    .map(|((name, fs), kv)| {
                        if kv[0].as_str() != Some(name) {
                            return Err(format!("field {} where {name} expected", kv[0]));
                        }
                        Ok((name.clone(), expect_json(model, fs, &kv[1])?))
                    })
                    .collect::<Result<_, String>>()?,
            )
        }
        S::Decimal { .. } => N::Decimal(i256_from_be_signed(&hex(text()?)?)?),
        S::Uuid { fixed: None } => N::Bytes(
            apache_avro::Uuid::parse_str(text()?)
                .map_err(|e| e.to_string())?
                .as_bytes()
                .to_vec(),
        ),
        S::Uuid { fixed: Some(_) } => N::Bytes(hex(text()?)?),
        S::Duration { .. } => duration_from_bytes(&hex(text()?)?)?,
        S::Ref(_) => unreachable!(),
    })
}

/// The rows of a fastavro expectation file.
pub fn json_rows(model: &Model, doc: &Json) -> Result<Vec<N>, String> {
    let rows = doc["rows"].as_array().ok_or("no rows")?;
    rows.iter()
        .map(|r| {
            if model.is_record_root() {
                expect_json(model, &model.root, r)
            } else {
                Ok(N::Struct(vec![(
                    "value".into(),
                    expect_json(model, &model.root, r)?,
                )]))
            }
        })
        .collect()
}
