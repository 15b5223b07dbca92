//! Parsing `ptxas -v` reports into per-kernel resources.
//!
//! The occupancy calculation needs registers per thread and static shared memory per
//! block, and spills matter for the memory models; only ptxas knows them (PTX uses virtual
//! registers). Format of ptxas 13.5 (stderr), one block per function:
//!
//! ```text
//! ptxas info    : Compiling entry function '_Z5saxpyifPKfPf' for 'sm_80'
//! ptxas info    : Function properties for _Z5saxpyifPKfPf
//!     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//! ptxas info    : Used 10 registers, used 0 barriers, 376 bytes cmem[0]
//! ```
//!
//! Fields are read by label, not by position, because ptxas omits zero-valued ones
//! (`smem`, `cmem[0]` on sm_90) and older versions lack `barriers`. Note that the `smem`
//! figure excludes the 1 KiB per block that the driver reserves on sm_80+ (CUDA C++
//! Programming Guide, "Shared Memory" / Occupancy Calculator); consumers add it.

use serde::{Deserialize, Serialize};

/// Resources of one kernel (`.entry`) as reported by ptxas.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelResources {
    /// The mangled name as in the PTX.
    pub name: String,
    /// The architecture ptxas compiled for, e.g. `sm_80`.
    pub arch: String,
    pub registers: u32,
    pub barriers: u32,
    /// Static shared memory per block in bytes (without the driver's 1 KiB reserve).
    pub shared_bytes: u32,
    /// `cmem[0]` bytes (kernel parameters and driver constants).
    pub const_bytes: u32,
    pub stack_frame_bytes: u32,
    pub spill_store_bytes: u32,
    pub spill_load_bytes: u32,
    /// `cumulative stack size` (stack including callees), when reported.
    pub cumulative_stack_bytes: u32,
}

/// Parses ptxas's `-v` output. Only entry functions are returned (device functions that
/// were not inlined contribute their stack to the callers' cumulative stack size).
pub fn parse_ptxas_verbose(output: &str) -> Vec<KernelResources> {
    let mut out: Vec<KernelResources> = Vec::new();
    // Stack-frame lines come after `Function properties for X`, which may name a
    // device function; keep them by name and join at the end.
    let mut props: Vec<(String, [u32; 3])> = Vec::new();
    let mut current_entry: Option<usize> = None;
    let mut pending_props: Option<String> = None;
    for line in output.lines() {
        let body = line.trim();
        let info = body
            .strip_prefix("ptxas info")
            .map(|r| r.trim_start().trim_start_matches(':').trim());
        if let Some(info) = info {
            if let Some(rest) = info.strip_prefix("Compiling entry function '") {
                let name = rest.split('\'').next().unwrap_or_default().to_string();
                let arch = rest
                    .split("for '")
                    .nth(1)
                    .and_then(|a| a.split('\'').next())
                    .unwrap_or_default()
                    .to_string();
                out.push(KernelResources {
                    name,
                    arch,
                    ..KernelResources::default()
                });
                current_entry = Some(out.len() - 1);
                pending_props = None;
            } else if info.starts_with("Compiling function") {
                current_entry = None;
            } else if let Some(name) = info.strip_prefix("Function properties for ") {
                pending_props = Some(name.trim().to_string());
            } else if let Some(rest) = info.strip_prefix("Used ")
                && let Some(k) = current_entry.and_then(|i| out.get_mut(i))
            {
                apply_used(k, rest);
            }
            continue;
        }
        if let Some(name) = pending_props.take()
            && body.contains("stack frame")
        {
            let mut v = [0u32; 3];
            for part in body.split(',') {
                let (n, label) = number_and_label(part);
                match label {
                    "bytes stack frame" => v[0] = n,
                    "bytes spill stores" => v[1] = n,
                    "bytes spill loads" => v[2] = n,
                    _ => {}
                }
            }
            props.push((name, v));
        }
    }
    for k in &mut out {
        if let Some((_, v)) = props.iter().find(|(n, _)| *n == k.name) {
            k.stack_frame_bytes = v[0];
            k.spill_store_bytes = v[1];
            k.spill_load_bytes = v[2];
        }
    }
    out
}

fn apply_used(k: &mut KernelResources, rest: &str) {
    // "10 registers, used 0 barriers, 1024 bytes smem, 376 bytes cmem[0]"
    for part in rest.split(',') {
        let part = part.trim().trim_start_matches("used ").trim();
        let (n, label) = number_and_label(part);
        match label {
            "registers" => k.registers = n,
            "barriers" => k.barriers = n,
            "bytes smem" => k.shared_bytes = n,
            "bytes cmem[0]" => k.const_bytes = n,
            "bytes cumulative stack size" => k.cumulative_stack_bytes = n,
            _ => {}
        }
    }
}

fn number_and_label(part: &str) -> (u32, &str) {
    let part = part.trim();
    let digits = part.chars().take_while(char::is_ascii_digit).count();
    let n = part[..digits].parse().unwrap_or(0);
    (n, part[digits..].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_sm80_report() {
        // Captured from ptxas 13.5 on a saxpy and a templated reduction with a local array.
        let r = parse_ptxas_verbose(include_str!("../testdata/ptxas_v_sm80.txt"));
        assert_eq!(r.len(), 2);
        let red = &r[0];
        assert_eq!(red.name, "_Z3redIfEvPKT_PS0_i");
        assert_eq!(red.arch, "sm_80");
        assert_eq!(
            (
                red.registers,
                red.barriers,
                red.shared_bytes,
                red.const_bytes
            ),
            (26, 1, 1024, 372)
        );
        assert_eq!(
            (
                red.stack_frame_bytes,
                red.cumulative_stack_bytes,
                red.spill_store_bytes
            ),
            (320, 320, 0)
        );
        let saxpy = &r[1];
        assert_eq!(
            (
                saxpy.name.as_str(),
                saxpy.registers,
                saxpy.shared_bytes,
                saxpy.const_bytes
            ),
            ("_Z5saxpyifPKfPf", 10, 0, 376)
        );
    }

    #[test]
    fn real_sm90_report_omits_cmem() {
        let r = parse_ptxas_verbose(include_str!("../testdata/ptxas_v_sm90.txt"));
        assert_eq!(
            r.iter()
                .map(|k| (k.registers, k.shared_bytes, k.const_bytes))
                .collect::<Vec<_>>(),
            [(26, 1024, 0), (10, 0, 0)]
        );
        assert!(r.iter().all(|k| k.arch == "sm_90"));
    }

    #[test]
    fn real_spilling_report_with_a_device_function() {
        // `--maxrregcount=32` on a kernel with a 48-float local array, plus a
        // `__noinline__` device function whose properties come after the kernel's.
        let r = parse_ptxas_verbose(include_str!("../testdata/ptxas_v_spill_sm80.txt"));
        assert_eq!(r.len(), 1);
        let k = &r[0];
        assert_eq!(
            (
                k.registers,
                k.spill_store_bytes,
                k.spill_load_bytes,
                k.stack_frame_bytes
            ),
            (32, 104, 128, 104)
        );
    }

    #[test]
    fn garbage_gives_nothing() {
        assert!(parse_ptxas_verbose("ptxas fatal : nope\n\n random").is_empty());
    }
}
