//! The process's kernel choice and the dispatch from a kind to its kernel.

use super::*;

#[test]
fn selection_never_picks_scalar_unless_forced() {
    assert_ne!(best_available(), KernelKind::Scalar);
    assert!(is_available(best_available()));
    match std::env::var("AVROW_VARINT") {
        Ok(name) if !name.is_empty() => {
            // CI runs the suite under every kernel; a forced one must be honoured.
            let kind = selected().expect("AVROW_VARINT names an available kernel");
            assert_eq!(kind.name(), name);
        }
        _ => assert_eq!(selected(), Ok(best_available())),
    }
    let d = describe();
    assert!(d.starts_with("varint: "), "{d}");
}

#[test]
#[cfg(target_arch = "x86_64")]
fn bmi2_is_chosen_where_pext_is_fast() {
    let bmi2 = std::arch::is_x86_feature_detected!("bmi2");
    assert_eq!(
        avrow_engine::varint::Bmi2::new().is_some(),
        is_available(KernelKind::Bmi2)
    );
    if is_available(KernelKind::Bmi2) {
        assert!(bmi2);
        assert_eq!(best_available(), KernelKind::Bmi2);
    } else {
        assert_eq!(best_available(), KernelKind::Fast);
    }
}

#[test]
fn dispatch_maps_each_kind_to_its_kernel() {
    fn kind_of<K: Kernel>(_: K) -> KernelKind {
        K::KIND
    }
    for kind in kernels() {
        assert_eq!(dispatch_kernel!(kind, k => kind_of(k)), kind);
    }
    if !is_available(KernelKind::Bmi2) {
        // An unavailable kind degrades to `fast` rather than running missing instructions.
        assert_eq!(
            dispatch_kernel!(KernelKind::Bmi2, k => kind_of(k)),
            KernelKind::Fast
        );
    }
}

#[test]
fn encoded_len_matches_reference() {
    for v in boundary_values() {
        assert_eq!(encoded_len(v), reference_encode(v).len(), "{v:#x}");
    }
}
