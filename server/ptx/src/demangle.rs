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

/// `true` when `want`, as a user writes it, names the kernel `ptx_name` (demangled
/// `demangled`): its PTX (mangled) name, its demangled signature (blanks aside), or its
/// base name (`saxpy` for `ns::saxpy(int, float*)` or `void saxpy<256>(float*)`); a
/// `want` with a return type, scope or template arguments ("void f<int>(int*)", as
/// Nsight Compute prints templates) matches by its base name too. The one rule of the
/// CLI's `--kernel`, `validate`'s kernel column and the language server's
/// `warpsight/kernelReport`.
pub fn kernel_matches(ptx_name: &str, demangled: Option<&str>, want: &str) -> bool {
    let want = want.trim();
    if ptx_name == want {
        return true;
    }
    let Some(dem) = demangled else { return false };
    let compact = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    compact(dem) == compact(want) || base_of_demangled(dem) == base_of_demangled(want)
}

/// The unqualified base name in a demangled signature, without return type, scope,
/// template arguments or parameters: `void ns::red<float>(float const*, float*, int)`
/// gives `red`, and so do `ns::red` and `red<256>`.
pub fn base_of_demangled(d: &str) -> &str {
    // Cut at the parameter list: the first `(` at template depth 0.
    let mut depth = 0i32;
    let mut cut = d.len();
    for (i, c) in d.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            '(' if depth == 0 => {
                cut = i;
                break;
            }
            _ => {}
        }
    }
    let mut head = d[..cut].trim_end();
    // Strip trailing template arguments.
    if head.ends_with('>') {
        let mut depth = 0i32;
        for (i, c) in head.char_indices().rev() {
            match c {
                '>' => depth += 1,
                '<' => {
                    depth -= 1;
                    if depth == 0 {
                        head = &head[..i];
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    // The last component after `::` or a space (a return type precedes templates).
    let start = head
        .rfind("::")
        .map(|i| i + 2)
        .max(head.rfind(' ').map(|i| i + 1))
        .unwrap_or(0);
    &head[start..]
}

#[cfg(test)]
mod tests {
    use super::{base_of_demangled, demangle, kernel_matches};

    #[test]
    fn base_names_of_demangled_signatures() {
        assert_eq!(base_of_demangled("void ns::red<float>(float const*, float*, int)"), "red");
        assert_eq!(base_of_demangled("void red<256, float>(float const*, int)"), "red");
        assert_eq!(base_of_demangled("void k<ops::Add<int> >(int*)"), "k");
        assert_eq!(base_of_demangled("saxpy(int, float)"), "saxpy");
        assert_eq!(base_of_demangled("ns::saxpy"), "saxpy");
        assert_eq!(base_of_demangled("saxpy"), "saxpy");
    }

    #[test]
    fn kernels_are_matched_by_ptx_name_signature_or_base_name() {
        let dem = Some("void red<256, float>(float const*, int)");
        assert!(kernel_matches("_Z3redILi256EfEvPKfi", dem, "_Z3redILi256EfEvPKfi"));
        assert!(kernel_matches("_Z3redILi256EfEvPKfi", dem, "void red<256,float>(float const*,int)"));
        // Templates: the base name without its arguments (the CLI's old rule missed this one).
        assert!(kernel_matches("_Z3redILi256EfEvPKfi", dem, "red"));
        assert!(kernel_matches("_Z3redILi256EfEvPKfi", dem, " red "));
        assert!(kernel_matches("_Z3redILi256EfEvPKfi", dem, "void red<128, float>(float const*, int)"));
        assert!(kernel_matches("_ZN2ns5saxpyEifPf", Some("ns::saxpy(int, float, float*)"), "saxpy"));
        assert!(!kernel_matches("_Z5saxpyifPKfPf", Some("saxpy(int, float, float const*, float*)"), "sax"));
        assert!(!kernel_matches("vadd", None, "vad"));
        assert!(kernel_matches("vadd", None, "vadd"));
    }

    #[test]
    fn kernels_demangle() {
        assert_eq!(demangle("_Z4vaddPKfS0_Pfi").as_deref(), Some("vadd(float const*, float const*, float*, int)"));
        assert_eq!(demangle("vadd"), None);
        assert_eq!(demangle("_Znot-a-name"), None);
    }

    #[test]
    fn kernel_names_as_validate_rows_give_them() {
        assert!(kernel_matches("_Z5saxpyifPKfPf", Some("saxpy(int, float, float const*, float*)"), "saxpy"));
        assert!(kernel_matches("_Z5saxpyifPKfPf", Some("saxpy(int, float, float const*, float*)"), "saxpy(int,float,float const*,float*)"));
        assert!(kernel_matches("_Z5saxpyifPKfPf", None, "_Z5saxpyifPKfPf"));
        assert!(!kernel_matches("_Z5saxpyifPKfPf", None, "saxpy"));
        // Nsight Compute prints template kernels with their return type.
        assert!(kernel_matches("_Z1fIiEvPT_", Some("void ns::f<int>(int*)"), "void ns::f<int>(int *)"));
        assert!(kernel_matches("_Z1fIiEvPT_", Some("void ns::f<int>(int*)"), "f"));
        assert!(!kernel_matches("_Z1gv", Some("g()"), "f"));
    }
}
