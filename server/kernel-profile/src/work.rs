//! A count of the steps of the analyses whose cost once grew faster than the kernel (the
//! lane-by-lane address evaluation, undoing provisional affine forms, the liveness peak,
//! the thread-variance propagation). It exists in test builds only: tests check that it
//! grows linearly with the input, which a timing could not show reliably.

#[cfg(test)]
thread_local! {
    static STEPS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts `n` steps (nothing outside tests).
#[inline]
#[cfg_attr(not(test), allow(unused_variables))]
pub(crate) fn add(n: u64) {
    #[cfg(test)]
    STEPS.with(|s| s.set(s.get() + n));
}

/// The steps counted on this thread since the last call.
#[cfg(test)]
pub(crate) fn take() -> u64 {
    STEPS.with(|s| s.replace(0))
}
