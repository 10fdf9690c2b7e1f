//! x86-64: CPU feature detection, the [`Bmi2`] kernel, the x86-64-v3 bulk loops and the
//! AVX-512 bulk encoder.

mod bmi2;
pub(crate) mod v3;
pub(crate) mod v4;

pub use bmi2::Bmi2;

use std::sync::OnceLock;

/// What this process detected once about the CPU.
#[derive(Debug, Clone, Copy)]
struct Features {
    /// BMI2 (with BMI1 and LZCNT) is present and PEXT/PDEP are fast (not microcoded).
    fast_pext: bool,
    /// AVX2, BMI1, BMI2, LZCNT and POPCNT are all present (x86-64-v3 for our purposes).
    v3: bool,
    /// `v3` and AVX-512 F, BW, CD, VL, VBMI and VBMI2 (Ice Lake and later, Zen 4 and later).
    v4: bool,
}

fn features() -> Features {
    static FEATURES: OnceLock<Features> = OnceLock::new();
    *FEATURES.get_or_init(|| {
        // Miri runs neither CPUID nor the inline assembly and `#[target_feature]` loops these
        // features select: it tests the portable paths.
        if cfg!(miri) {
            return Features {
                fast_pext: false,
                v3: false,
                v4: false,
            };
        }
        let bmi2 = std::arch::is_x86_feature_detected!("bmi2");
        let (vendor, family) = vendor_and_family();
        // Every CPU with BMI2 has BMI1 and LZCNT too; the `bmi2` kernel uses all three (ANDN,
        // LZCNT), so require them.
        let lzcnt = std::arch::is_x86_feature_detected!("lzcnt");
        let bmi1 = std::arch::is_x86_feature_detected!("bmi1");
        let v3 = bmi2
            && std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("lzcnt")
            && std::arch::is_x86_feature_detected!("popcnt");
        Features {
            fast_pext: bmi2 && bmi1 && lzcnt && !pext_is_slow(&vendor, family),
            v3,
            v4: v3
                && std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512cd")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("avx512vbmi")
                && std::arch::is_x86_feature_detected!("avx512vbmi2"),
        }
    })
}

/// Whether BMI2 is present and its PEXT/PDEP are fast on this CPU.
#[inline]
pub(crate) fn has_fast_pext() -> bool {
    features().fast_pext
}

/// Whether the x86-64-v3 bulk loops ([`v3`]) can run on this CPU.
#[inline]
pub(crate) fn has_v3() -> bool {
    features().v3
}

/// Whether the AVX-512 bulk encoder ([`v4`]) can run on this CPU.
#[inline]
pub(crate) fn has_v4() -> bool {
    features().v4
}

/// The CPUID vendor string and display family of this CPU.
#[allow(unused_unsafe)] // `__cpuid` is an unsafe fn before Rust 1.87 and safe since.
fn vendor_and_family() -> ([u8; 12], u32) {
    use std::arch::x86_64::__cpuid;
    // SAFETY: the CPUID instruction exists on every x86-64 CPU; leaves 0 and 1 always exist.
    let (leaf0, leaf1) = unsafe { (__cpuid(0), __cpuid(1)) };
    let mut vendor = [0u8; 12];
    vendor[..4].copy_from_slice(&leaf0.ebx.to_le_bytes());
    vendor[4..8].copy_from_slice(&leaf0.edx.to_le_bytes());
    vendor[8..].copy_from_slice(&leaf0.ecx.to_le_bytes());
    let base = (leaf1.eax >> 8) & 0xf;
    let family = if base == 0xf {
        base + ((leaf1.eax >> 20) & 0xff)
    } else {
        base
    };
    (vendor, family)
}

/// PEXT and PDEP are microcoded (tens to hundreds of cycles) on AMD Excavator (family 0x15),
/// Zen 1, Zen+ and Zen 2 (0x17) and Hygon Dhyana (0x18); fast (3 cycles) on Intel Haswell and
/// later and on AMD Zen 3 and later (0x19, 0x1a).
pub(crate) fn pext_is_slow(vendor: &[u8; 12], family: u32) -> bool {
    (vendor == b"AuthenticAMD" || vendor == b"HygonGenuine") && matches!(family, 0x15 | 0x17 | 0x18)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_pext_families() {
        assert!(pext_is_slow(b"AuthenticAMD", 0x15));
        assert!(pext_is_slow(b"AuthenticAMD", 0x17));
        assert!(pext_is_slow(b"HygonGenuine", 0x18));
        assert!(!pext_is_slow(b"AuthenticAMD", 0x19));
        assert!(!pext_is_slow(b"AuthenticAMD", 0x1a));
        assert!(!pext_is_slow(b"GenuineIntel", 0x06));
        assert!(!pext_is_slow(b"GenuineIntel", 0x17));
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri cannot run CPUID")]
    fn detection_is_consistent() {
        if has_fast_pext() {
            assert!(std::arch::is_x86_feature_detected!("bmi2"));
            assert!(Bmi2::new().is_some());
        } else {
            assert!(Bmi2::new().is_none());
        }
        let (vendor, family) = vendor_and_family();
        assert!(vendor.iter().all(u8::is_ascii), "{vendor:?}");
        assert!(family > 0);
    }
}
