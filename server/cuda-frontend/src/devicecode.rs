//! A device-only view of a `.cu` file, for compilers that reject host code.
//!
//! NVRTC refuses host functions ("host functions are not allowed in JIT mode") and cannot
//! open host headers such as `<cstdio>`; clang with the no-CUDA shim has no runtime API.
//! Real `.cu` files have a `main` full of `cudaMalloc` and `<<<...>>>`. This module blanks,
//! with spaces, everything the device compile does not need, keeping every newline so that
//! diagnostics and `.loc` line numbers still point at the user's file:
//! - bodies and headers of top-level functions that are neither `__global__` nor
//!   `__device__` (host-only functions), and
//! - `#include <...>` lines whose header is not found in the given include directories.
//!
//! Everything else (types, templates, `__device__` variables, macros) is left as it is.

use std::path::PathBuf;

use crate::lex::matching;
use crate::lex::lex;

/// Returns the device-only text of `src` (same length in lines as the input).
pub fn device_only(src: &str, include_dirs: &[PathBuf]) -> String {
    let mut bytes: Vec<u8> = src.as_bytes().to_vec();
    let lx = lex(src);
    let toks = &lx.tokens;
    let mut blank: Vec<(usize, usize)> = Vec::new();

    // Top-level function definitions without a device execution space.
    let mut depth_stack: Vec<bool> = Vec::new(); // true = transparent (namespace/extern "C").
    let mut stmt_start = 0usize;
    let mut i = 0usize;
    while i < toks.len() {
        let t = toks[i];
        let at_top = depth_stack.iter().all(|tr| *tr);
        match t.text {
            ";" if at_top => stmt_start = i + 1,
            "}" => {
                depth_stack.pop();
                if depth_stack.iter().all(|tr| *tr) {
                    stmt_start = i + 1;
                }
            }
            "{" => {
                let transparent = at_top
                    && toks[stmt_start..i]
                        .iter()
                        .any(|x| x.is("namespace") || x.is("extern"))
                    && !toks[stmt_start..i].iter().any(|x| x.is("("));
                let is_function = at_top && !transparent && i > 0 && {
                    // `) [const|noexcept|override|-> T ...] {` with a `(` in the header and
                    // no `=` (an initialiser) or class key.
                    let header = &toks[stmt_start..i];
                    header.iter().any(|x| x.is(")"))
                        && !header
                            .iter()
                            .any(|x| matches!(x.text, "=" | "struct" | "class" | "union" | "enum"))
                };
                if is_function {
                    let header = &toks[stmt_start..i];
                    let device = header
                        .iter()
                        .any(|x| matches!(x.text, "__global__" | "__device__"));
                    if !device && let Some(close) = matching(toks, i) {
                        let start = toks[stmt_start].offset;
                        let end = toks[close].offset + 1;
                        blank.push((start, end));
                        i = close + 1;
                        stmt_start = i;
                        continue;
                    }
                }
                depth_stack.push(transparent);
            }
            _ => {}
        }
        i += 1;
    }

    for (s, e) in blank {
        for b in bytes.iter_mut().take(e.min(src.len())).skip(s) {
            if *b != b'\n' && *b != b'\r' {
                *b = b' ';
            }
        }
    }
    // Only ASCII bytes were replaced, but a multi-byte character may have been cut
    // partially; lossy conversion keeps the result valid UTF-8 either way.
    let blanked = String::from_utf8_lossy(&bytes).into_owned();

    // System includes that the device compiler cannot open: dropped, except the
    // fixed-width integer headers, which NVRTC lacks but device code often needs; they
    // become one line of typedefs (same line count).
    let mut out = String::with_capacity(blanked.len());
    for line in blanked.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let ending = &line[body.len()..];
        let t = body.trim_start();
        let header = t
            .strip_prefix('#')
            .map(str::trim_start)
            .and_then(|r| r.strip_prefix("include"))
            .map(str::trim_start)
            .and_then(|r| r.strip_prefix('<'))
            .and_then(|r| r.split('>').next());
        match header {
            Some(name) if !include_dirs.iter().any(|d| d.join(name).is_file()) => {
                if matches!(name, "cstdint" | "stdint.h" | "cinttypes" | "inttypes.h") {
                    out.push_str(STDINT_LINE);
                }
            }
            _ => out.push_str(body),
        }
        out.push_str(ending);
    }
    out
}

/// `<cstdint>` in one line, with glibc's LP64 definitions (64-bit types are `long`, as
/// nvcc sees them on Linux), so kernels get the same mangled names from NVRTC as from nvcc.
const STDINT_LINE: &str = "typedef signed char int8_t; typedef unsigned char uint8_t; typedef short int16_t; typedef unsigned short uint16_t; typedef int int32_t; typedef unsigned int uint32_t; typedef long int64_t; typedef unsigned long uint64_t; typedef long intptr_t; typedef unsigned long uintptr_t; namespace std { using ::int8_t; using ::uint8_t; using ::int16_t; using ::uint16_t; using ::int32_t; using ::uint32_t; using ::int64_t; using ::uint64_t; using ::intptr_t; using ::uintptr_t; }";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_functions_and_host_headers_are_blanked_lines_kept() {
        let src = "#include <cstdio>\n#include \"local.h\"\nnamespace a {\n__global__ void k(int* p) { p[0] = 1; }\n}\n__host__ __device__ int f(int x) { return x; }\nstruct S { int v; };\nvoid launch(int* p) {\n  k<<<1, 1>>>(p);\n}\nint main() { printf(\"x\"); return 0; }\n";
        let out = device_only(src, &[]);
        assert_eq!(out.lines().count(), src.lines().count());
        assert!(!out.contains("cstdio"));
        let with_stdint = device_only(
            "#include <cstdint>\n__global__ void k(uint64_t* p) {}\n",
            &[],
        );
        assert!(
            with_stdint.starts_with("typedef signed char int8_t;")
                && with_stdint.lines().count() == 2
        );
        assert!(out.contains("#include \"local.h\""));
        assert!(out.contains("__global__ void k(int* p) { p[0] = 1; }"));
        assert!(out.contains("__host__ __device__ int f(int x)"));
        assert!(out.contains("struct S { int v; };"));
        assert!(!out.contains("launch") && !out.contains("<<<") && !out.contains("main"));
        // Positions are kept: the kernel is on line 4 at the same column.
        assert_eq!(out.lines().nth(3), src.lines().nth(3));
    }
}
