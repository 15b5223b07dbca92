//! A count of the steps of the analyses whose cost once grew faster than the function
//! (the loop nesting, the searches for the definitions that reach a loop, the scans of a
//! register's definitions). It exists in test builds only: tests check that it grows
//! linearly with the input, which a timing could not show reliably.
//!
//! `kernel-profile` has the same counter for its own steps, on purpose: `cfg(test)` holds
//! for the crate under test only, so one shared counter would need a public cargo feature
//! and would mix the steps of the two crates in each crate's scale tests.

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
