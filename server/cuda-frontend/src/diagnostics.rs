//! Compiler diagnostics: nvcc/NVRTC (EDG front end), clang/gcc, and ptxas messages parsed
//! into file, line, column, severity and message.
//!
//! Formats handled (all seen from CUDA 13.5 and clang 19):
//! - EDG (nvcc's `cudafe++`/`cicc` front end and NVRTC): `file.cu(12): error: msg`, with a
//!   code for warnings (`warning #177-D: msg`), followed by an echo of the source line and a
//!   caret line. The echo is indented by two spaces; when it matches the real source line
//!   the caret gives the column.
//! - clang and gcc (also nvcc's host compiler pass): `file:line:col: error: msg`.
//! - ptxas: `ptxas file.ptx, line 5; error   : msg` (a line in the PTX, not the `.cu`).
//! - Tool-level lines with no position: `nvcc fatal   : msg`, `ptxas fatal   : msg`.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Severity {
    Error,
    Warning,
    /// Notes and remarks (`note:`, `remark:`), attached context.
    Note,
}

impl Severity {
    /// The user-visible name (`error`, `warning`, `note`), as in `file:line:col: error: msg`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// One compiler message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompilerDiagnostic {
    /// The file as the compiler printed it (`None` for tool-level messages).
    pub file: Option<String>,
    /// 1-based line, when known.
    pub line: Option<u32>,
    /// 1-based column, when known.
    pub column: Option<u32>,
    pub severity: Severity,
    pub message: String,
    /// The EDG diagnostic number, e.g. `177-D`.
    pub code: Option<String>,
    /// `true` when `line` refers to the PTX text (a ptxas message), not the source.
    pub in_ptx: bool,
}

impl CompilerDiagnostic {
    /// A message with no position (timeouts, missing tools).
    pub fn general(severity: Severity, message: impl Into<String>) -> CompilerDiagnostic {
        CompilerDiagnostic {
            file: None,
            line: None,
            column: None,
            severity,
            message: message.into(),
            code: None,
            in_ptx: false,
        }
    }
}

fn severity_of(word: &str) -> Option<Severity> {
    match word.trim() {
        "error" | "fatal error" | "catastrophic error" | "fatal" | "internal error" => {
            Some(Severity::Error)
        }
        "warning" => Some(Severity::Warning),
        "note" | "remark" | "info" => Some(Severity::Note),
        _ => None,
    }
}

/// Parses a compiler's stderr (or an NVRTC log). `source` is the text of the main file,
/// used to recover EDG columns from caret lines; `main_file` is the name the compiler
/// was given for it (its messages keep the name as printed).
pub fn parse_diagnostics(output: &str, source: Option<&str>) -> Vec<CompilerDiagnostic> {
    let lines: Vec<&str> = output.lines().collect();
    let src_lines: Vec<&str> = source.map(|s| s.lines().collect()).unwrap_or_default();
    let mut out: Vec<CompilerDiagnostic> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if let Some(mut d) = parse_edg(line) {
            // Echo + caret: recover the column when the echo is the real source line.
            if i + 1 < lines.len() && lines[i + 1].trim() == "^" {
                let echo = lines[i];
                let caret = lines[i + 1];
                if let (Some(l), Some(echo_body)) = (d.line, echo.strip_prefix("  ")) {
                    let real = src_lines.get(l as usize - 1).copied().unwrap_or_default();
                    if !real.is_empty() && real.trim_end() == echo_body.trim_end() {
                        let caret_col = caret.len() - caret.trim_start().len();
                        d.column = u32::try_from(caret_col.saturating_sub(2) + 1).ok();
                    }
                }
                i += 2;
            }
            // `detected during ...` continuation lines add context to the message.
            while i < lines.len() && lines[i].trim_start().starts_with("detected during") {
                d.message.push_str(" (");
                d.message.push_str(lines[i].trim());
                d.message.push(')');
                i += 1;
            }
            out.push(d);
            continue;
        }
        if let Some(d) = parse_gnu(line) {
            out.push(d);
            continue;
        }
        if let Some(d) = parse_ptxas(line) {
            out.push(d);
            continue;
        }
        if let Some(d) = parse_tool(line) {
            out.push(d);
        }
    }
    out
}

/// `file(12): error: msg` or `file(12): warning #177-D: msg`.
fn parse_edg(line: &str) -> Option<CompilerDiagnostic> {
    // Search from the `): ` backwards so a path may itself contain parentheses.
    let close = line.find("): ")?;
    let open = line[..close].rfind('(')?;
    let num = &line[open + 1..close];
    let line_no: u32 = num.parse().ok()?;
    let file = &line[..open];
    if file.is_empty() {
        return None;
    }
    let rest = &line[close + 3..];
    let (head, message) = rest.split_once(": ")?;
    let (sev_word, code) = match head.split_once(" #") {
        Some((s, c)) => (s, Some(c.to_string())),
        None => (head, None),
    };
    let severity = severity_of(sev_word)?;
    Some(CompilerDiagnostic {
        file: Some(file.to_string()),
        line: Some(line_no),
        column: None,
        severity,
        message: message.trim().to_string(),
        code,
        in_ptx: false,
    })
}

/// `file:line:col: error: msg` (clang, gcc) or `file:line: error: msg`.
fn parse_gnu(line: &str) -> Option<CompilerDiagnostic> {
    // Find `:<digits>:` after the file name; the file may contain colons on Windows (C:\).
    let mut search_from = 0;
    while let Some(rel) = line[search_from..].find(':') {
        let c1 = search_from + rel;
        let after = &line[c1 + 1..];
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(':') {
            let file = &line[..c1];
            let line_no: u32 = after[..digits].parse().ok()?;
            let mut rest = &after[digits + 1..];
            let mut column = None;
            let cd = rest.chars().take_while(char::is_ascii_digit).count();
            if cd > 0 && rest[cd..].starts_with(':') {
                column = rest[..cd].parse().ok();
                rest = &rest[cd + 1..];
            }
            let (sev_word, message) = rest.trim_start().split_once(": ")?;
            let severity = severity_of(sev_word)?;
            if file.is_empty() {
                return None;
            }
            return Some(CompilerDiagnostic {
                file: Some(file.to_string()),
                line: Some(line_no),
                column,
                severity,
                message: message.trim().to_string(),
                code: None,
                in_ptx: false,
            });
        }
        search_from = c1 + 1;
    }
    None
}

/// `ptxas file.ptx, line 5; error   : msg`.
fn parse_ptxas(line: &str) -> Option<CompilerDiagnostic> {
    let rest = line.strip_prefix("ptxas ")?;
    let (loc, tail) = rest.split_once("; ")?;
    let (file, l) = loc.split_once(", line ")?;
    let line_no: u32 = l.trim().parse().ok()?;
    let (sev_word, message) = tail.split_once(':')?;
    let severity = severity_of(sev_word)?;
    Some(CompilerDiagnostic {
        file: Some(file.to_string()),
        line: Some(line_no),
        column: None,
        severity,
        message: message.trim().to_string(),
        code: None,
        in_ptx: true,
    })
}

/// `nvcc fatal   : msg`, `ptxas warning : msg`, `clang: error: msg`.
fn parse_tool(line: &str) -> Option<CompilerDiagnostic> {
    let (head, message) = line.split_once(':')?;
    let mut words = head.split_whitespace();
    let tool = words.next()?;
    let sev = words.collect::<Vec<_>>().join(" ");
    let (severity, message) = if sev.is_empty() {
        // `clang: error: msg`
        let (s, m) = message.trim_start().split_once(':')?;
        (severity_of(s)?, m)
    } else {
        (severity_of(&sev)?, message)
    };
    if !matches!(
        tool,
        "nvcc" | "ptxas" | "clang" | "clang++" | "nvlink" | "cicc" | "gcc" | "g++" | "cc1plus"
    ) && !tool.starts_with("clang")
    {
        return None;
    }
    Some(CompilerDiagnostic::general(
        severity,
        format!("{tool}: {}", message.trim()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Captured from nvcc 13.5 (`nvcc -ptx -arch=sm_80 bad.cu`).
    const NVCC_BAD: &str = "bad.cu(3): error: expected a \";\"\n    x[i] = y;\n    ^\n\nbad.cu(2): warning #177-D: variable \"i\" was declared but never referenced\n    int i = threadIdx.x\n        ^\n\nRemark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n\nbad.cu(5): warning #177-D: variable \"unused\" was declared but never referenced\n  __attribute__((device)) void f() { int unused; }\n                                         ^\n\n1 error detected in the compilation of \"bad.cu\".\n";
    const BAD_SRC: &str = "__global__ void k(float* x) {\n  int i = threadIdx.x\n  x[i] = y;\n}\n__device__ void f() { int unused; }\n";

    #[test]
    fn nvcc_edg_format_with_columns() {
        let d = parse_diagnostics(NVCC_BAD, Some(BAD_SRC));
        assert_eq!(d.len(), 3);
        assert_eq!(
            (d[0].line, d[0].column, d[0].severity),
            (Some(3), Some(3), Severity::Error)
        );
        assert_eq!(d[0].message, "expected a \";\"");
        assert_eq!(d[0].file.as_deref(), Some("bad.cu"));
        assert_eq!(
            (d[1].line, d[1].column, d[1].severity),
            (Some(2), Some(7), Severity::Warning)
        );
        assert_eq!(d[1].code.as_deref(), Some("177-D"));
        // The echo of line 5 is the preprocessed text, so no column is claimed.
        assert_eq!((d[2].line, d[2].column), (Some(5), None));
    }

    #[test]
    fn nvrtc_log_format() {
        // Captured from NVRTC 13.5.
        let log = "k2.cu(17): error: A function without execution space annotations (__host__/__device__/__global__) is considered a host function, and host functions are not allowed in JIT mode.\n  int main() {\n      ^\n\nk2.cu(1): catastrophic error: cannot open source file \"cstdio\"\n  #include <cstdio>\n                   ^\n\n2 errors detected in the compilation of \"k2.cu\".\n";
        let d = parse_diagnostics(log, None);
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].line, d[0].severity), (Some(17), Severity::Error));
        assert_eq!((d[1].line, d[1].severity), (Some(1), Severity::Error));
        assert!(d[1].message.contains("cstdio"));
    }

    #[test]
    fn clang_gcc_and_tool_formats() {
        let out = "k.cu:4:11: error: use of undeclared identifier 'y'\nk.cu:9: warning: something odd\n/abs/path/k.cu:2:1: note: declared here\nclang: error: cannot find libdevice\nnvcc fatal   : Unsupported gpu architecture 'sm_35'\nptxas g.ptx, line 1; fatal   : Missing .version directive at start of file 'g.ptx'\n";
        let d = parse_diagnostics(out, None);
        assert_eq!(d.len(), 6);
        let paren = parse_diagnostics("/home/me/a (copy)/k.cu(7): error: bad\n", None);
        assert_eq!(
            (paren[0].file.as_deref(), paren[0].line),
            (Some("/home/me/a (copy)/k.cu"), Some(7))
        );
        assert_eq!(
            (d[0].line, d[0].column, d[0].severity),
            (Some(4), Some(11), Severity::Error)
        );
        assert_eq!(
            (d[1].line, d[1].column, d[1].severity),
            (Some(9), None, Severity::Warning)
        );
        assert_eq!(
            (d[2].file.as_deref(), d[2].severity),
            (Some("/abs/path/k.cu"), Severity::Note)
        );
        assert_eq!(
            (d[3].file.as_deref(), d[3].severity),
            (None, Severity::Error)
        );
        assert_eq!(d[4].message, "nvcc: Unsupported gpu architecture 'sm_35'");
        assert!(d[5].in_ptx && d[5].line == Some(1) && d[5].severity == Severity::Error);
    }

    #[test]
    fn unrelated_lines_are_ignored() {
        assert!(
            parse_diagnostics(
                "1 error detected in the compilation of \"bad.cu\".\nRemark: x\n\n",
                None
            )
            .is_empty()
        );
    }
}
