//! Checks of settings values shared by both front ends: the CLI's flags and the editor's
//! settings accept the same values with the same limits and the same messages.

use crate::Severity;

/// Limits shared by the CLI flags and the editor settings (docs/lsp-extensions.md
/// § Configuration): a value outside them is refused with a message.
pub mod limits {
    /// `defaultTripCount`, and the CLI's `--default-trip-count`: from 0 to 10^9 (a loop of
    /// more than a billion iterations per thread runs for seconds per thread; as the
    /// assumed count of *every* loop whose count is unknown it is never meant).
    pub const MAX_DEFAULT_TRIP_COUNT: f64 = 1e9;
    /// `gpus` (settings, `whatIf`, `compareGpus`) and the CLI's `--gpu`: twice the GPUs
    /// of the database.
    pub const MAX_GPUS: usize = 128;
    /// The longest GPU id or alias accepted (the longest in the database has 24 bytes).
    pub const MAX_GPU_ID_BYTES: usize = 100;
}

/// A severity level as written in settings and `--severity CODE=LEVEL`: `Some(None)` for
/// `off`, `None` for a word that is not a level.
pub fn parse_severity(s: &str) -> Option<Option<Severity>> {
    match s {
        "off" | "none" => Some(None),
        "info" => Some(Some(Severity::Information)),
        _ => Severity::ALL.into_iter().find(|v| v.name() == s).map(Some),
    }
}

/// Checks a default trip count (editor setting or CLI flag): finite, from 0 to
/// [`limits::MAX_DEFAULT_TRIP_COUNT`].
pub fn check_default_trip_count(n: f64) -> Result<f64, String> {
    if n.is_finite() && (0.0..=limits::MAX_DEFAULT_TRIP_COUNT).contains(&n) {
        Ok(n)
    } else {
        let shown = if n.is_finite() && n.abs() < 1e6 { format!("{n}") } else { format!("{n:e}") };
        Err(format!("{shown} is not a trip count from 0 to {:e}", limits::MAX_DEFAULT_TRIP_COUNT))
    }
}

/// Checks a list of GPU ids (editor setting, request parameter or CLI flags): at most
/// [`limits::MAX_GPUS`] ids of at most [`limits::MAX_GPU_ID_BYTES`] bytes. Duplicates are
/// dropped, keeping the first.
pub fn check_gpu_ids<'a>(ids: impl ExactSizeIterator<Item = &'a str>) -> Result<Vec<String>, String> {
    let n = ids.len();
    if n > limits::MAX_GPUS {
        return Err(format!("{n} GPUs is more than the limit of {}", limits::MAX_GPUS));
    }
    let mut out: Vec<String> = Vec::with_capacity(n);
    for id in ids {
        if id.len() > limits::MAX_GPU_ID_BYTES {
            return Err(format!("a GPU id of {} bytes is longer than the limit of {} (`warpsight gpus` lists the ids)", id.len(), limits::MAX_GPU_ID_BYTES));
        }
        if !out.iter().any(|o| o == id) {
            out.push(id.to_string());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severity_words() {
        assert_eq!(parse_severity("info"), Some(Some(Severity::Information)));
        assert_eq!(parse_severity("off"), Some(None));
        assert_eq!(parse_severity("loud"), None);
        // Every level answers to its one name, the name the reports print.
        for level in Severity::ALL {
            assert_eq!(parse_severity(level.name()), Some(Some(level)));
            let json = serde_json::to_value(level).expect("serialises");
            assert_eq!(json, serde_json::Value::from(level.name()));
            assert_eq!(serde_json::from_value::<Severity>(json).expect("deserialises"), level);
        }
        let err = serde_json::from_value::<Severity>("loud".into()).expect_err("not a level");
        assert!(err.to_string().contains("unknown severity `loud`"), "{err}");
    }

    #[test]
    fn trip_counts_and_gpu_ids_are_bounded() {
        assert_eq!(check_default_trip_count(16.0), Ok(16.0));
        assert!(check_default_trip_count(f64::NAN).is_err());
        assert!(check_default_trip_count(2e9).is_err());
        assert_eq!(check_gpu_ids(["a100", "h100", "a100"].into_iter()), Ok(vec!["a100".to_string(), "h100".to_string()]));
        let many: Vec<String> = (0..=limits::MAX_GPUS).map(|i| format!("g{i}")).collect();
        assert!(check_gpu_ids(many.iter().map(String::as_str)).is_err());
        assert!(check_gpu_ids(std::iter::once("x".repeat(limits::MAX_GPU_ID_BYTES + 1).as_str())).is_err());
    }
}
