//! Demangling of `.entry`/`.func` names. nvcc, NVRTC and clang emit Itanium C++ mangled
//! names (`_Z4vaddPKfS0_Pfi`); users know `vadd(float const*, float const*, float*, int)`.

/// The demangled signature of an Itanium-mangled name; `None` for names that are not
/// mangled (`extern "C"` kernels, hand-written PTX).
pub fn demangle(name: &str) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    let sym = cpp_demangle::Symbol::new(name).ok()?;
    sym.demangle(&cpp_demangle::DemangleOptions::new()).ok()
}

#[cfg(test)]
mod tests {
    use super::demangle;

    #[test]
    fn kernels_demangle() {
        assert_eq!(demangle("_Z4vaddPKfS0_Pfi").as_deref(), Some("vadd(float const*, float const*, float*, int)"));
        assert_eq!(demangle("vadd"), None);
        assert_eq!(demangle("_Znot-a-name"), None);
    }
}
