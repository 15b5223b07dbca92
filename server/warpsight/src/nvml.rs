//! The local GPUs, as the NVIDIA driver reports them through NVML (`warpsight gpus
//! --detect`).
//!
//! NVML (`libnvidia-ml.so.1`) ships with the driver, not with the CUDA toolkit, so it is
//! loaded at run time with `libloading`, as `cuda_frontend::nvrtc` loads NVRTC: building,
//! testing and running warpsight never need it, and a machine without a driver is an
//! ordinary answer ([`NoDriver`]), not an error. Only the five entry points used are
//! looked up; their signatures are those of `nvml.h` (NVML API Reference Guide, "Device
//! Queries" and "Initialization and Cleanup").

use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::fmt;

use libloading::{Library, Symbol};

/// The library the driver installs (on Linux the unversioned name exists only with the
/// development files).
#[cfg(not(windows))]
pub const NVML_LIBRARY: &str = "libnvidia-ml.so.1";
#[cfg(windows)]
pub const NVML_LIBRARY: &str = "nvml.dll";

/// `NVML_DEVICE_NAME_V2_BUFFER_SIZE` of `nvml.h`: room for any device name.
const NAME_BUFFER: usize = 96;

/// `nvmlReturn_t`; `NVML_SUCCESS` is 0.
type NvmlReturn = c_int;
/// `nvmlDevice_t`, an opaque pointer.
type Device = *mut c_void;

type Init = unsafe extern "C" fn() -> NvmlReturn;
type Shutdown = unsafe extern "C" fn() -> NvmlReturn;
type GetCount = unsafe extern "C" fn(*mut c_uint) -> NvmlReturn;
type GetHandle = unsafe extern "C" fn(c_uint, *mut Device) -> NvmlReturn;
type GetName = unsafe extern "C" fn(Device, *mut c_char, c_uint) -> NvmlReturn;
type GetCc = unsafe extern "C" fn(Device, *mut c_int, *mut c_int) -> NvmlReturn;

/// One GPU the driver reports.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LocalGpu {
    /// NVML's device index.
    pub index: u32,
    /// `nvmlDeviceGetName`, e.g. "NVIDIA GeForce RTX 3060 Laptop GPU".
    pub name: String,
    /// `nvmlDeviceGetCudaComputeCapability`.
    pub cc: gpu_spec::ComputeCapability,
}

/// Why no GPU could be listed: no driver, or a driver that refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoDriver(pub String);

impl fmt::Display for NoDriver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The GPUs NVML reports, loading NVML from `library` (a name the dynamic loader
/// searches for, or a path).
pub fn detect(library: &str) -> Result<Vec<LocalGpu>, NoDriver> {
    // SAFETY: loading a shared library runs its initialisers; NVML's are the driver's own
    // and have no preconditions.
    let lib = unsafe { Library::new(library) }.map_err(|e| NoDriver(format!("no NVIDIA driver found ({library} could not be loaded: {e})")))?;
    let missing = |what: &str, e: libloading::Error| NoDriver(format!("{library} has no {what}: {e}"));
    // SAFETY: each symbol is looked up with its signature in nvml.h; the `_v2` entry points
    // exist since driver 325 (2013).
    let (init, shutdown, count, handle, name, cc) = unsafe {
        let init: Symbol<'_, Init> = lib.get(b"nvmlInit_v2\0").map_err(|e| missing("nvmlInit_v2", e))?;
        let shutdown: Symbol<'_, Shutdown> = lib.get(b"nvmlShutdown\0").map_err(|e| missing("nvmlShutdown", e))?;
        let count: Symbol<'_, GetCount> = lib.get(b"nvmlDeviceGetCount_v2\0").map_err(|e| missing("nvmlDeviceGetCount_v2", e))?;
        let handle: Symbol<'_, GetHandle> = lib.get(b"nvmlDeviceGetHandleByIndex_v2\0").map_err(|e| missing("nvmlDeviceGetHandleByIndex_v2", e))?;
        let name: Symbol<'_, GetName> = lib.get(b"nvmlDeviceGetName\0").map_err(|e| missing("nvmlDeviceGetName", e))?;
        let cc: Symbol<'_, GetCc> = lib.get(b"nvmlDeviceGetCudaComputeCapability\0").map_err(|e| missing("nvmlDeviceGetCudaComputeCapability", e))?;
        (init, shutdown, count, handle, name, cc)
    };
    // SAFETY: nvmlInit_v2 takes no arguments and may be called any number of times.
    let rc = unsafe { init() };
    if rc != 0 {
        return Err(NoDriver(format!("the NVIDIA driver did not start NVML (nvmlInit_v2 returned {rc})")));
    }
    let res = list(count, handle, name, cc);
    // SAFETY: paired with the successful nvmlInit_v2 above.
    unsafe { shutdown() };
    res
}

fn list(count: Symbol<'_, GetCount>, handle: Symbol<'_, GetHandle>, name: Symbol<'_, GetName>, cc: Symbol<'_, GetCc>) -> Result<Vec<LocalGpu>, NoDriver> {
    let mut n: c_uint = 0;
    // SAFETY: `n` is a valid out-pointer; NVML is initialised.
    let rc = unsafe { count(&mut n) };
    if rc != 0 {
        return Err(NoDriver(format!("the NVIDIA driver could not count its GPUs (nvmlDeviceGetCount_v2 returned {rc})")));
    }
    let mut out = Vec::new();
    for index in 0..n {
        let mut dev: Device = std::ptr::null_mut();
        // SAFETY: `index` < count; `dev` is a valid out-pointer.
        if unsafe { handle(index, &mut dev) } != 0 {
            // A GPU the user may not access (cgroups, MIG): skip it, list the others.
            continue;
        }
        let mut buf = [0 as c_char; NAME_BUFFER];
        // SAFETY: `buf` holds NAME_BUFFER bytes, as its length says; NVML writes a
        // NUL-terminated string that fits.
        if unsafe { name(dev, buf.as_mut_ptr(), NAME_BUFFER as c_uint) } != 0 {
            continue;
        }
        buf[NAME_BUFFER - 1] = 0;
        // SAFETY: `buf` is NUL-terminated (the last byte was just set).
        let device_name = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().trim().to_string();
        let (mut major, mut minor): (c_int, c_int) = (0, 0);
        // SAFETY: valid out-pointers.
        if unsafe { cc(dev, &mut major, &mut minor) } != 0 {
            continue;
        }
        let (Ok(major), Ok(minor)) = (u32::try_from(major), u32::try_from(minor)) else { continue };
        out.push(LocalGpu { index, name: device_name, cc: gpu_spec::ComputeCapability::new(major, minor) });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_no_driver_with_one_line() {
        let e = detect("libnvidia-ml-that-does-not-exist.so.1").unwrap_err();
        assert!(e.0.starts_with("no NVIDIA driver found"), "{e}");
        assert!(!e.0.contains('\n'), "{e}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_library_without_nvml_is_refused_not_called() {
        // libc is always there and has none of NVML's entry points.
        let e = detect("libc.so.6").unwrap_err();
        assert!(e.0.contains("has no nvmlInit_v2"), "{e}");
    }
}
