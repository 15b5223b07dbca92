//! Client settings, from `initializationOptions` and `workspace/didChangeConfiguration`
//! (both accept the object itself or `{ "warpsight": { ... } }`). Documented in
//! `docs/lsp-extensions.md` § Configuration. A malformed value is ignored with a log line
//! and the previous value kept: a typo in settings never stops the server.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

/// Which parts the inlay hint after a kernel signature shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlayParts {
    pub occupancy: bool,
    pub bound: bool,
    pub time: bool,
    pub power: bool,
    pub loops: bool,
    pub memory: bool,
}

impl Default for InlayParts {
    fn default() -> InlayParts {
        InlayParts { occupancy: true, bound: true, time: true, power: true, loops: true, memory: true }
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    /// Delay between the last keystroke and the analysis.
    pub debounce: Duration,
    /// Analysis settings (target GPUs, launch, arguments, models).
    pub analysis: analysis::Settings,
    /// An explicit nvcc.
    pub nvcc: Option<PathBuf>,
    /// Compile timeout for `.cu` files.
    pub compile_timeout: Duration,
    /// Whether the workspace's `compile_commands.json` may be read (`trustCompileCommands`,
    /// default false): a database from a cloned repository is untrusted input
    /// (docs/security.md).
    pub trust_compile_commands: bool,
    pub inlay: InlayParts,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            debounce: Duration::from_millis(150),
            analysis: analysis::Settings::default(),
            nvcc: None,
            compile_timeout: Duration::from_secs(20),
            trust_compile_commands: false,
            inlay: InlayParts::default(),
        }
    }
}

fn dims(v: &Value) -> Option<[u32; 3]> {
    match v {
        Value::String(s) => analysis::launch::parse_dims(s),
        Value::Number(n) => n.as_u64().and_then(|x| u32::try_from(x).ok()).filter(|x| *x > 0).map(|x| [x, 1, 1]),
        Value::Array(a) if !a.is_empty() && a.len() <= 3 => {
            let mut d = [1u32; 3];
            for (i, x) in a.iter().enumerate() {
                d[i] = x.as_u64().and_then(|x| u32::try_from(x).ok()).filter(|x| *x > 0)?;
            }
            Some(d)
        }
        _ => None,
    }
}

pub fn parse_severity(s: &str) -> Option<Option<analysis::Severity>> {
    Some(match s {
        "error" => Some(analysis::Severity::Error),
        "warning" => Some(analysis::Severity::Warning),
        "information" | "info" => Some(analysis::Severity::Information),
        "hint" => Some(analysis::Severity::Hint),
        "off" | "none" => None,
        _ => return None,
    })
}

impl Config {
    /// Applies the settings the JSON holds.
    pub fn update(&mut self, json: &Value) {
        let json = json.get("warpsight").unwrap_or(json);
        if !json.is_object() {
            return;
        }
        if let Some(ms) = json.get("debounceMs").and_then(Value::as_u64) {
            self.debounce = Duration::from_millis(ms.min(10_000));
        }
        if let Some(gpus) = json.get("gpus").and_then(Value::as_array) {
            let ids: Vec<String> = gpus.iter().filter_map(Value::as_str).map(str::to_string).collect();
            if !ids.is_empty() {
                self.analysis.gpus = ids;
            }
        }
        if let Some(launch) = json.get("launch") {
            self.analysis.launch.grid = launch.get("grid").and_then(dims);
            self.analysis.launch.block = launch.get("block").and_then(dims);
            self.analysis.launch.dynamic_smem = launch.get("dynamicSmem").and_then(Value::as_u64).and_then(|x| u32::try_from(x).ok());
        }
        if let Some(args) = json.get("args").and_then(Value::as_object) {
            self.analysis.args = args.iter().filter_map(|(k, v)| v.as_i64().map(|v| (k.clone(), v))).collect();
        }
        if let Some(n) = json.get("defaultTripCount").and_then(Value::as_f64).filter(|n| n.is_finite() && *n >= 0.0) {
            self.analysis.profile.default_trip_count = n;
        }
        if let Some(p) = json.get("nvcc") {
            self.nvcc = p.as_str().filter(|s| !s.is_empty()).map(PathBuf::from);
        }
        if let Some(s) = json.get("compileTimeoutMs").and_then(Value::as_u64) {
            self.compile_timeout = Duration::from_millis(s.clamp(1000, 600_000));
        }
        if let Some(v) = json.get("trustCompileCommands") {
            match v.as_bool() {
                Some(b) => self.trust_compile_commands = b,
                None => tracing::warn!("trustCompileCommands: expected true or false"),
            }
        }
        if let Some(sev) = json.get("severities").and_then(Value::as_object) {
            for (code, v) in sev {
                match v.as_str().and_then(parse_severity) {
                    Some(s) => {
                        self.analysis.severities.insert(code.clone(), s);
                    }
                    None => tracing::warn!("severities.{code}: expected error|warning|information|hint|off"),
                }
            }
        }
        if let Some(inlay) = json.get("inlayHints").and_then(Value::as_object) {
            let flag = |k: &str, cur: bool| inlay.get(k).and_then(Value::as_bool).unwrap_or(cur);
            let p = &mut self.inlay;
            *p = InlayParts {
                occupancy: flag("occupancy", p.occupancy),
                bound: flag("bound", p.bound),
                time: flag("time", p.time),
                power: flag("power", p.power),
                loops: flag("loops", p.loops),
                memory: flag("memory", p.memory),
            };
        }
    }

    /// The effective severity of a code (`None`: the code is off). Performance findings
    /// have theirs applied by the analysis; this serves `syntax` and `compiler-error`.
    pub fn severity(&self, code: &str, default: analysis::Severity) -> Option<analysis::Severity> {
        match self.analysis.severities.get(code) {
            Some(s) => *s,
            None => Some(default),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn settings_apply_and_bad_values_are_ignored() {
        let mut c = Config::default();
        c.update(&json!({ "warpsight": {
            "gpus": ["h100", "tesla-k20"],
            "launch": { "grid": "64x64", "block": [16, 16] },
            "args": { "n": 1024, "bad": "x" },
            "severities": { "tail-wave": "off", "memory-bound": "error", "x": "loud" },
            "inlayHints": { "power": false },
            "debounceMs": 0
        }}));
        assert_eq!(c.analysis.gpus, vec!["h100", "tesla-k20"]);
        assert_eq!(c.analysis.launch.grid, Some([64, 64, 1]));
        assert_eq!(c.analysis.launch.block, Some([16, 16, 1]));
        assert_eq!(c.analysis.args.get("n"), Some(&1024));
        assert!(!c.analysis.args.contains_key("bad"));
        assert_eq!(c.severity("tail-wave", analysis::Severity::Hint), None);
        assert_eq!(c.severity("memory-bound", analysis::Severity::Hint), Some(analysis::Severity::Error));
        assert_eq!(c.severity("other", analysis::Severity::Hint), Some(analysis::Severity::Hint));
        assert!(!c.analysis.severities.contains_key("x"));
        assert!(!c.inlay.power && c.inlay.time);
        assert_eq!(c.debounce, Duration::ZERO);
        // A workspace's compile database is untrusted until the user says otherwise.
        assert!(!c.trust_compile_commands);
        c.update(&json!({ "trustCompileCommands": "yes" }));
        assert!(!c.trust_compile_commands);
        c.update(&json!({ "trustCompileCommands": true }));
        assert!(c.trust_compile_commands);
        // Not an object: ignored.
        c.update(&json!(42));
        assert_eq!(c.analysis.gpus, vec!["h100", "tesla-k20"]);
    }
}
