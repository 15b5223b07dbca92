//! How numbers are shown to people: the one rounding rule for predicted times, used by the
//! code lens, the inlay hint, the hover card, the findings' messages, the report
//! (`warpsight/kernelReport` and `analyze --format json` carry the shown text beside the
//! number) and the CLI's text output, so that one kernel never reads `≈ 10.35 µs` in one
//! place and `≈10.3 µs` in another.
//!
//! The rule: **three significant figures, in the largest of ns, µs, ms and s that keeps the
//! value at 1 or more** (`412 ns`, `4.94 µs`, `10.3 µs`, `123 µs`, `1.24 ms`, `2.50 s`).
//! Three figures because the models' own uncertainty is far wider than 0.1 % (docs/models.md
//! § validation), and trailing zeros are kept so that every time has the same precision.
//! Rounding happens before the unit is chosen, so 999.96 µs reads `1.00 ms`, not `1000 µs`.

/// The user-visible name of a unit variant of an enum that takes its names from its
/// `serde` derive (`kernel_profile::LaunchSource`: `call-site`, `ResourceSource`:
/// `ptxas`): the one spelling, the JSON report's, for tables and hovers. Empty for a value
/// that `serde` does not write as a string (not a unit variant).
pub fn serde_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => String::new(),
    }
}

/// Time units from smallest to largest, with their size in µs.
const TIME_UNITS: [(&str, f64); 4] = [("ns", 1e-3), ("µs", 1.0), ("ms", 1e3), ("s", 1e6)];
/// Energy units from smallest to largest, with their size in µJ.
const ENERGY_UNITS: [(&str, f64); 4] = [("nJ", 1e-3), ("µJ", 1.0), ("mJ", 1e3), ("J", 1e6)];

/// A time given in µs, rounded by the rule of this module: `"10.3 µs"`. Zero reads `0 µs`;
/// a negative time keeps its sign; a value that is not finite reads `n/a` (a model that
/// could not predict is reported as such elsewhere, this only keeps the text honest).
pub fn time_us(us: f64) -> String {
    scaled(us, &TIME_UNITS)
}

/// An energy given in µJ, by the same rule: `30.1 mJ`, `412 µJ`.
pub fn energy_uj(uj: f64) -> String {
    scaled(uj, &ENERGY_UNITS)
}

/// `value` (in the unit of size 1 in `units`) with three significant figures in the
/// largest unit that keeps it at 1 or more after rounding.
fn scaled(value: f64, units: &[(&str, f64)]) -> String {
    let base = units.iter().find(|(_, size)| *size == 1.0).map_or("", |(u, _)| *u);
    if !value.is_finite() {
        return "n/a".into();
    }
    if value == 0.0 {
        return format!("0 {base}");
    }
    let sign = if value < 0.0 { "-" } else { "" };
    let mag = value.abs();
    let (unit, size) = units.iter().rev().find(|(_, size)| round3(mag / size) >= 1.0).or(units.first()).copied().unwrap_or((base, 1.0));
    format!("{sign}{} {unit}", sig3(mag / size))
}

/// `x` rounded to three significant figures, as a number.
fn round3(x: f64) -> f64 {
    sig3(x).parse().unwrap_or(x)
}

/// `x` (positive, finite) written with three significant figures, trailing zeros kept:
/// `4.94`, `10.3`, `123`, `1.00`. Values of 1000 or more (seconds only) keep their integer
/// digits: `1234`.
fn sig3(x: f64) -> String {
    // Decimals for three figures, from the magnitude after rounding: 9.996 rounds to
    // `10.0`, not `10.00`.
    let decimals = |v: f64| -> usize {
        let digits = v.log10().floor() as i64 + 1;
        (3 - digits).clamp(0, 20) as usize
    };
    let first = format!("{:.*}", decimals(x), x);
    let rounded: f64 = first.parse().unwrap_or(x);
    let d = decimals(rounded);
    format!("{rounded:.d$}")
}

#[cfg(test)]
mod tests {
    use super::{energy_uj, serde_name, time_us};

    #[test]
    fn serde_name_is_the_json_spelling_of_a_unit_variant() {
        assert_eq!(serde_name(&kernel_profile::LaunchSource::CallSite), "call-site");
        assert_eq!(serde_name(&kernel_profile::ResourceSource::Ptxas), "ptxas");
        assert_eq!(serde_name(&crate::Severity::Information), "information");
        assert_eq!(serde_name(&power_model::Confidence::Low), "low");
        // Not a string in JSON: no name.
        assert_eq!(serde_name(&[1, 2]), "");
    }

    #[test]
    fn three_significant_figures_in_the_largest_unit_at_least_one() {
        assert_eq!(time_us(4.94), "4.94 µs");
        assert_eq!(time_us(10.35), "10.3 µs"); // 10.35 is 10.3499… in binary
        assert_eq!(time_us(10.36), "10.4 µs");
        assert_eq!(time_us(123.4), "123 µs");
        assert_eq!(time_us(1240.0), "1.24 ms");
        assert_eq!(time_us(2.5e6), "2.50 s");
        assert_eq!(time_us(0.412), "412 ns");
        assert_eq!(time_us(0.0123), "12.3 ns");
        assert_eq!(time_us(5.0), "5.00 µs");
        assert_eq!(time_us(1234e6), "1234 s");
    }

    #[test]
    fn rounding_comes_before_the_unit() {
        assert_eq!(time_us(999.96), "1.00 ms");
        assert_eq!(time_us(999.4), "999 µs");
        assert_eq!(time_us(9.996), "10.0 µs");
        assert_eq!(time_us(99.96), "100 µs");
        assert_eq!(time_us(0.9996), "1.00 µs");
        assert_eq!(time_us(999_996.0), "1.00 s");
    }

    #[test]
    fn zero_negative_and_not_finite() {
        assert_eq!(time_us(0.0), "0 µs");
        assert_eq!(time_us(-4.94), "-4.94 µs");
        assert_eq!(time_us(f64::NAN), "n/a");
        assert_eq!(time_us(f64::INFINITY), "n/a");
    }

    #[test]
    fn energy_follows_the_same_rule() {
        assert_eq!(energy_uj(30075.9), "30.1 mJ");
        assert_eq!(energy_uj(412.0), "412 µJ");
        assert_eq!(energy_uj(999.96), "1.00 mJ");
        assert_eq!(energy_uj(2.5e6), "2.50 J");
    }

    #[test]
    fn tiny_values_stay_in_nanoseconds() {
        // Below 1 ns there is no smaller unit: three figures of a fraction of a ns.
        assert_eq!(time_us(0.000_5), "0.500 ns");
    }
}
