//! A cache hint for random reads the code knows of ahead of time: applying a frame's
//! despawns looks up each entity's slots, which are scattered over the entity locations.

/// Asks the processor to bring the cache line of `value` into cache (a hint; a no-op where
/// there is no such instruction).
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE, which `_mm_prefetch` needs, is part of every x86-64 target; a prefetch
    // reads nothing the program sees and cannot fault, and `value` is a live reference anyway.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (value as *const T).cast(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
