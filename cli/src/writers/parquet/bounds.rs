//! Shortened minimum and maximum values for the statistics and column indexes of the byte-array
//! columns that `dictionary.rs` writes, as the `parquet` crate shortens its own: a bound longer
//! than the truncation length is replaced by a prefix (the minimum) or a prefix made larger in
//! its last byte or character (the maximum), so that it still bounds the values while costing
//! the footer at most that many bytes. For UTF-8 columns the prefixes end on a character
//! boundary and stay valid UTF-8.

/// A lower bound of `value` at most `limit` bytes long, and whether it is `value` itself.
pub fn lower(value: &[u8], limit: Option<usize>, utf8: bool) -> (Vec<u8>, bool) {
    let Some(limit) = limit.filter(|&l| value.len() > l) else {
        return (value.to_vec(), true);
    };
    let cut = match (utf8, std::str::from_utf8(value)) {
        (true, Ok(text)) => (1..=limit).rev().find(|&i| text.is_char_boundary(i)),
        _ => Some(limit),
    };
    match cut {
        // Any prefix of a value sorts at or before it.
        Some(cut) => (value[..cut].to_vec(), false),
        None => (value.to_vec(), true),
    }
}

/// An upper bound of `value` at most `limit` bytes long, and whether it is `value` itself.
pub fn upper(value: &[u8], limit: Option<usize>, utf8: bool) -> (Vec<u8>, bool) {
    let Some(limit) = limit.filter(|&l| value.len() > l) else {
        return (value.to_vec(), true);
    };
    let bumped = match (utf8, std::str::from_utf8(value)) {
        (true, Ok(text)) => {
            // A character is at most 4 bytes: the last boundary is at most 3 before the limit.
            (limit.saturating_sub(3)..=limit)
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .and_then(|cut| bump_text(&text[..cut]))
        }
        _ => bump_bytes(&value[..limit]),
    };
    match bumped {
        Some(bound) => (bound, false),
        None => (value.to_vec(), true),
    }
}

/// The shortest change of `prefix` that sorts after every string it starts: its last
/// character that has a successor of the same encoded length replaced by it, the characters
/// after it dropped. `None` if no character has one.
fn bump_text(prefix: &str) -> Option<Vec<u8>> {
    prefix.char_indices().rev().find_map(|(at, c)| {
        let next = char::from_u32(u32::from(c) + 1).filter(|n| n.len_utf8() == c.len_utf8())?;
        let mut out = prefix.as_bytes()[..at].to_vec();
        let mut buf = [0; 4];
        out.extend_from_slice(next.encode_utf8(&mut buf).as_bytes());
        Some(out)
    })
}

/// `prefix` plus one as a big-endian number of its length (so it sorts after every byte
/// string it starts); `None` if every byte is 0xFF.
fn bump_bytes(prefix: &[u8]) -> Option<Vec<u8>> {
    let last = prefix.iter().rposition(|&b| b != u8::MAX)?;
    let mut out = prefix.to_vec();
    out[last] += 1;
    out[last + 1..].fill(0);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn short_values_are_kept_whole() {
        assert_eq!(lower(b"abc", Some(3), true), (b"abc".to_vec(), true));
        assert_eq!(upper(b"abc", None, false), (b"abc".to_vec(), true));
    }

    #[test]
    fn long_values_are_cut_on_character_boundaries() {
        // "é" is two bytes: a cut at 2 would split it.
        let value = "aé€x".as_bytes();
        assert_eq!(lower(value, Some(2), true), (b"a".to_vec(), false));
        assert_eq!(
            upper(value, Some(3), true),
            ("aê".as_bytes().to_vec(), false)
        );
        assert_eq!(
            upper(b"ab\xff\xff", Some(3), false),
            (b"ac\0".to_vec(), false)
        );
        assert_eq!(
            upper(b"\xff\xff\xff", Some(2), false),
            (b"\xff\xff\xff".to_vec(), true)
        );
        // The largest one-byte character has no one-byte successor: the one before it moves.
        assert_eq!(upper(b"a\x7fzz", Some(2), true), (b"b".to_vec(), false));
    }

    proptest! {
        #[test]
        fn bounds_bound(value in proptest::collection::vec(any::<u8>(), 0..40),
                        text in "\\PC{0,20}", limit in 1usize..24) {
            for (value, utf8) in [(value.as_slice(), false), (text.as_bytes(), true)] {
                let (low, exact) = lower(value, Some(limit), utf8);
                prop_assert!(low.as_slice() <= value);
                prop_assert!(exact == (low == value));
                let (high, exact) = upper(value, Some(limit), utf8);
                prop_assert!(high.as_slice() >= value);
                prop_assert!(exact == (high == value));
                if !exact {
                    prop_assert!(high.len() <= limit);
                }
                if utf8 {
                    prop_assert!(std::str::from_utf8(&low).is_ok());
                    prop_assert!(std::str::from_utf8(&high).is_ok());
                }
            }
        }
    }
}
