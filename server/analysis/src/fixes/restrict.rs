//! `RestrictConst`: mark a pointer parameter `__restrict__`, and its pointee `const`, on
//! every `__global__` declaration and definition of the kernel (they must agree, or the
//! `const` one would be a different overload).
//!
//! `const` is added only to a single-level pointer (`float *p` → `const float
//! *__restrict__ p`): `float **` does not convert to `const float **`. The analysis offers
//! the fix only for parameters the kernel never stores through.

use super::TextEdit;
use super::scan::Source;

pub(super) fn edits(src: &Source<'_>, name: &str, param_index: u32) -> Vec<TextEdit> {
    let mut res = Vec::new();
    for d in src.kernel_decls(name) {
        let params = src.split_commas((d.params.0 + 1, d.params.1));
        let Some(&p) = params.get(param_index as usize) else { continue };
        let text = src.code_str(p);
        let stars: Vec<usize> = text.match_indices('*').map(|(i, _)| p.0 + i).collect();
        let Some(&last_star) = stars.last() else { continue };
        let has = |word: &str| !src.idents(word, p).is_empty();
        let const_pointee = !src.idents("const", (p.0, last_star)).is_empty();
        if stars.len() == 1 && !const_pointee {
            res.push(TextEdit { start: p.0, end: p.0, new_text: "const ".into() });
        }
        if !has("__restrict__") && !has("__restrict") {
            let next = src.at(last_star + 1);
            let sep = if next.is_ascii_whitespace() || next == b')' || last_star + 1 >= p.1 { "" } else { " " };
            res.push(TextEdit { start: last_star + 1, end: last_star + 1, new_text: format!("__restrict__{sep}") });
        }
    }
    res
}

#[cfg(test)]
mod tests {
    use super::super::{FixKind, apply, edits};

    #[test]
    fn pointer_parameters_get_const_and_restrict() {
        let f = FixKind::RestrictConst { param_index: 1 };
        let t = "__global__ void k(float *Pd, float *Md, int N) {}";
        assert_eq!(apply(t, &edits(&f, t, "k", None)), "__global__ void k(float *Pd, const float *__restrict__ Md, int N) {}");
        let t = "__global__ void k(float* Pd, float* Md);\n__global__ void k(float* Pd, float* Md) {}";
        assert_eq!(apply(t, &edits(&f, t, "k", None)).matches("const float*__restrict__ Md").count(), 2);
        let t = "__global__ void k(float *a, const float *__restrict__ b) {}";
        assert!(edits(&f, t, "k", None).is_empty());
        let t = "__global__ void k(float *a, const float *b) {}";
        assert_eq!(apply(t, &edits(&f, t, "k", None)), "__global__ void k(float *a, const float *__restrict__ b) {}");
        let t = "__global__ void k(float *a, float **b) {}";
        assert_eq!(apply(t, &edits(&f, t, "k", None)), "__global__ void k(float *a, float **__restrict__ b) {}");
        let t = "__global__ void k(float *a, int n) {}";
        assert!(edits(&f, t, "k", None).is_empty());
    }
}
