//! The process-wide choice of kernel and bulk path: made once, from the CPU's features or from
//! `AVROW_VARINT` / `AVROW_BULK`, and reported (`avrow --version`). Both variables are parsed
//! by one function; a name that is unknown or cannot run on this CPU is a [`SelectionError`].

use std::fmt;
use std::sync::OnceLock;

#[cfg(target_arch = "x86_64")]
use super::x86_64;
use super::KernelKind;

/// Which bulk path (the array loops of [`Kernel::read_longs`](super::Kernel::read_longs),
/// [`Kernel::read_ints`](super::Kernel::read_ints), [`Kernel::skip`](super::Kernel::skip) and
/// [`Kernel::write_longs`](super::Kernel::write_longs) and
/// [`Kernel::write_ints`](super::Kernel::write_ints) of the `fast` and `bmi2` kernels) is in
/// use. The `scalar` kernel has its own loops and uses neither. The decoder's `uuid` parser
/// follows the same choice (SSSE3 with AVX encodings on `v3` and `v4`, SSE2 on `baseline`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BulkKind {
    /// The loops compiled for the target's baseline instruction set (every CPU).
    Baseline,
    /// The loops compiled for x86-64-v3 (AVX2, BMI1, BMI2, LZCNT, POPCNT).
    V3,
    /// v3's decode loops and an encoder of eight varints at a time with AVX-512 (F, BW, CD,
    /// VL, VBMI, VBMI2: Ice Lake and later, Zen 4 and later).
    V4,
}

impl BulkKind {
    /// The path's name as accepted by `AVROW_BULK` and printed by `avrow --version`.
    pub fn name(self) -> &'static str {
        match self {
            BulkKind::Baseline => "baseline",
            BulkKind::V3 => "v3",
            BulkKind::V4 => "v4",
        }
    }
}

impl fmt::Display for BulkKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The two choices a process makes, each of which an environment variable can force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Choice {
    /// The single-value kernel ([`KernelKind`]), forced with `AVROW_VARINT`.
    Kernel,
    /// The bulk path ([`BulkKind`]), forced with `AVROW_BULK`.
    BulkPath,
}

impl Choice {
    /// The environment variable that forces this choice.
    pub fn variable(self) -> &'static str {
        match self {
            Choice::Kernel => "AVROW_VARINT",
            Choice::BulkPath => "AVROW_BULK",
        }
    }

    /// What is chosen, in words.
    fn noun(self) -> &'static str {
        match self {
            Choice::Kernel => "varint kernel",
            Choice::BulkPath => "bulk path",
        }
    }

    /// The names the variable accepts, in order.
    pub fn names(self) -> &'static [&'static str] {
        match self {
            Choice::Kernel => &["scalar", "fast", "bmi2"],
            Choice::BulkPath => &["baseline", "v3", "v4"],
        }
    }
}

/// Why a kernel or bulk path cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SelectionError {
    /// The environment variable of `choice` names nothing it accepts.
    Unknown {
        /// What the variable forces.
        choice: Choice,
        /// The name it holds.
        name: String,
    },
    /// The kernel or path named cannot run on this CPU.
    Unavailable {
        /// What was asked for.
        choice: Choice,
        /// Its name.
        name: &'static str,
        /// Whether the environment variable asked for it (else a program did, through the
        /// API).
        forced: bool,
    },
}

impl SelectionError {
    /// What the error is about.
    pub fn choice(&self) -> Choice {
        match self {
            SelectionError::Unknown { choice, .. } | SelectionError::Unavailable { choice, .. } => {
                *choice
            }
        }
    }
}

impl fmt::Display for SelectionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SelectionError::Unknown { choice, name } => {
                let names = choice.names();
                let (last, rest) = names.split_last().expect("every choice has names");
                write!(
                    f,
                    "{}={name}: unknown {} (expected {} or {last})",
                    choice.variable(),
                    choice.noun(),
                    rest.join(", ")
                )
            }
            SelectionError::Unavailable {
                choice,
                name,
                forced,
            } => {
                if *forced {
                    write!(f, "{}={name}: ", choice.variable())?;
                }
                write!(
                    f,
                    "the {name} {} is not available on this CPU",
                    choice.noun()
                )
            }
        }
    }
}

impl std::error::Error for SelectionError {}

/// What a variable of `choice` asks for: `options` are its names with their values in
/// [`Choice::names`] order, `available` says which this CPU can run.
fn parse_forced<T: Copy>(
    choice: Choice,
    name: &str,
    options: &[T],
    available: impl Fn(T) -> bool,
) -> Result<T, SelectionError> {
    let names = choice.names();
    debug_assert_eq!(names.len(), options.len());
    let Some(i) = names.iter().position(|&n| n == name) else {
        return Err(SelectionError::Unknown {
            choice,
            name: name.to_string(),
        });
    };
    if available(options[i]) {
        Ok(options[i])
    } else {
        Err(SelectionError::Unavailable {
            choice,
            name: names[i],
            forced: true,
        })
    }
}

/// The value of `choice`'s variable, if set and not empty.
fn forced_name(choice: Choice) -> Option<String> {
    std::env::var(choice.variable())
        .ok()
        .filter(|name| !name.is_empty())
}

/// The kernel chosen for this process (cached after the first call): `AVROW_VARINT` if set,
/// otherwise the fastest one available on this CPU.
///
/// # Errors
/// If `AVROW_VARINT` names an unknown kernel or one this CPU cannot run.
pub fn selected() -> Result<KernelKind, SelectionError> {
    static SELECTED: OnceLock<Result<KernelKind, SelectionError>> = OnceLock::new();
    SELECTED
        .get_or_init(|| match forced_name(Choice::Kernel) {
            Some(name) => parse_forced(Choice::Kernel, &name, &KERNELS, is_available),
            None => Ok(best_available()),
        })
        .clone()
}

/// Every kernel, in [`Choice::names`] order.
const KERNELS: [KernelKind; 3] = [KernelKind::Scalar, KernelKind::Fast, KernelKind::Bmi2];

/// Every bulk path, in [`Choice::names`] order.
const BULK_PATHS: [BulkKind; 3] = [BulkKind::Baseline, BulkKind::V3, BulkKind::V4];

/// The fastest kernel this CPU can run: `bmi2` where PEXT/PDEP are fast, otherwise `fast`.
/// Never `scalar`, which is only used when forced.
pub fn best_available() -> KernelKind {
    if is_available(KernelKind::Bmi2) {
        KernelKind::Bmi2
    } else {
        KernelKind::Fast
    }
}

/// Whether `kind` can run on this CPU.
pub fn is_available(kind: KernelKind) -> bool {
    match kind {
        KernelKind::Scalar | KernelKind::Fast => true,
        #[cfg(target_arch = "x86_64")]
        KernelKind::Bmi2 => x86_64::has_fast_pext(),
        #[cfg(not(target_arch = "x86_64"))]
        KernelKind::Bmi2 => false,
    }
}

/// `kind` if this CPU can run it (a program asking for a kernel by value).
///
/// # Errors
/// [`SelectionError::Unavailable`] if it cannot.
pub fn check_available(kind: KernelKind) -> Result<KernelKind, SelectionError> {
    if is_available(kind) {
        Ok(kind)
    } else {
        Err(SelectionError::Unavailable {
            choice: Choice::Kernel,
            name: kind.name(),
            forced: false,
        })
    }
}

/// A one-line description of the kernel in use, for `avrow --version`: `varint: bmi2`, or
/// the reason `AVROW_VARINT` was rejected.
pub fn describe() -> String {
    match selected() {
        Ok(kind) => format!("varint: {kind}"),
        Err(e) => format!("varint: error: {e}"),
    }
}

/// All kernels this CPU can run, scalar first.
pub fn available_kernels() -> Vec<KernelKind> {
    KERNELS.into_iter().filter(|&k| is_available(k)).collect()
}

/// The process's bulk path, decided once.
struct BulkSelection {
    /// What `AVROW_BULK` asked for (or the best path when it is unset or empty), or why it was
    /// rejected.
    forced: Result<BulkKind, SelectionError>,
    /// The path the loops run: `forced`, or the best path when `forced` is an error.
    effective: BulkKind,
}

fn bulk_selection() -> &'static BulkSelection {
    static SELECTION: OnceLock<BulkSelection> = OnceLock::new();
    SELECTION.get_or_init(|| {
        let forced = match forced_name(Choice::BulkPath) {
            Some(name) => parse_forced(Choice::BulkPath, &name, &BULK_PATHS, is_bulk_available),
            None => Ok(best_bulk()),
        };
        let effective = forced.clone().unwrap_or_else(|_| best_bulk());
        BulkSelection { forced, effective }
    })
}

/// The bulk path chosen for this process (cached after the first call): `AVROW_BULK` if set,
/// otherwise the fastest one available on this CPU. When `AVROW_BULK` is rejected the loops
/// run the fastest path (as the decoder does with a rejected `AVROW_VARINT`); the readers
/// report the error instead of decoding.
///
/// # Errors
/// If `AVROW_BULK` names an unknown path or one this CPU cannot run.
pub fn selected_bulk() -> Result<BulkKind, SelectionError> {
    bulk_selection().forced.clone()
}

/// The path the bulk loops run (only ever `V3` or `V4` where the CPU has its features).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline]
pub(crate) fn effective_bulk() -> BulkKind {
    bulk_selection().effective
}

/// The fastest bulk path this CPU can run: `v4`, else `v3`, where their features are present,
/// otherwise `baseline`.
pub fn best_bulk() -> BulkKind {
    if is_bulk_available(BulkKind::V4) {
        BulkKind::V4
    } else if is_bulk_available(BulkKind::V3) {
        BulkKind::V3
    } else {
        BulkKind::Baseline
    }
}

/// Whether the bulk path `kind` can run on this CPU.
pub fn is_bulk_available(kind: BulkKind) -> bool {
    match kind {
        BulkKind::Baseline => true,
        #[cfg(target_arch = "x86_64")]
        BulkKind::V3 => x86_64::has_v3(),
        #[cfg(target_arch = "x86_64")]
        BulkKind::V4 => x86_64::has_v4(),
        #[cfg(not(target_arch = "x86_64"))]
        BulkKind::V3 | BulkKind::V4 => false,
    }
}

/// All bulk paths this CPU can run, baseline first.
pub fn available_bulk_paths() -> Vec<BulkKind> {
    BULK_PATHS
        .into_iter()
        .filter(|&k| is_bulk_available(k))
        .collect()
}

/// A one-line description of the bulk path in use, for `avrow --version`: `bulk: v3`, or the
/// reason `AVROW_BULK` was rejected.
pub fn describe_bulk() -> String {
    match selected_bulk() {
        Ok(kind) => format!("bulk: {kind}"),
        Err(e) => format!("bulk: error: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_values() {
        for (name, kind) in Choice::Kernel.names().iter().zip(KERNELS) {
            assert_eq!(*name, kind.name());
        }
        for (name, kind) in Choice::BulkPath.names().iter().zip(BULK_PATHS) {
            assert_eq!(*name, kind.name());
        }
    }

    #[test]
    fn one_parser_for_both_variables() {
        let unknown =
            parse_forced(Choice::BulkPath, "warp", &BULK_PATHS, is_bulk_available).unwrap_err();
        assert_eq!(
            unknown,
            SelectionError::Unknown {
                choice: Choice::BulkPath,
                name: "warp".into()
            }
        );
        assert_eq!(
            unknown.to_string(),
            "AVROW_BULK=warp: unknown bulk path (expected baseline, v3 or v4)"
        );
        let unknown = parse_forced(Choice::Kernel, "avx", &KERNELS, is_available).unwrap_err();
        assert_eq!(
            unknown.to_string(),
            "AVROW_VARINT=avx: unknown varint kernel (expected scalar, fast or bmi2)"
        );
        assert_eq!(unknown.choice(), Choice::Kernel);
        assert_eq!(
            parse_forced(Choice::BulkPath, "baseline", &BULK_PATHS, is_bulk_available),
            Ok(BulkKind::Baseline)
        );
        assert_eq!(
            parse_forced(Choice::Kernel, "fast", &KERNELS, is_available),
            Ok(KernelKind::Fast)
        );
        let nothing_runs = parse_forced(Choice::Kernel, "bmi2", &KERNELS, |_| false).unwrap_err();
        assert_eq!(
            nothing_runs.to_string(),
            "AVROW_VARINT=bmi2: the bmi2 varint kernel is not available on this CPU"
        );
        let asked = SelectionError::Unavailable {
            choice: Choice::Kernel,
            name: "bmi2",
            forced: false,
        };
        assert_eq!(
            asked.to_string(),
            "the bmi2 varint kernel is not available on this CPU"
        );
        assert_eq!(check_available(KernelKind::Fast), Ok(KernelKind::Fast));
        assert_eq!(
            check_available(KernelKind::Bmi2).is_ok(),
            is_available(KernelKind::Bmi2)
        );
    }

    #[test]
    fn selection_honours_avrow_bulk() {
        assert!(available_bulk_paths().contains(&BulkKind::Baseline));
        assert!(is_bulk_available(best_bulk()));
        match forced_name(Choice::BulkPath) {
            Some(name) => {
                let kind = selected_bulk().expect("AVROW_BULK names an available bulk path");
                assert_eq!(kind.name(), name);
                assert_eq!(effective_bulk(), kind);
            }
            None => assert_eq!(selected_bulk(), Ok(best_bulk())),
        }
        assert!(describe_bulk().starts_with("bulk: "), "{}", describe_bulk());
    }
}
