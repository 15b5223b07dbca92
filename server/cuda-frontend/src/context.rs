//! The analysis context from what the front end found: per kernel, its parameter names,
//! launch site and annotation, ptxas resources and source line, in the analysis's own
//! types. Used by the CLI, the language server and `validate` alike.

/// The analysis context from what the CUDA front end found.
pub fn analysis_context(p: &crate::compile::Prepared) -> analysis::Context {
    use crate::launch::SiteOrigin;
    let mut cx = analysis::Context { used_args: p.used_args.iter().cloned().collect(), ..Default::default() };
    // Loop trip counts stated in the source, by line of the main file as the PTX's `.file`
    // names it (none without line information: nothing to match the lines to).
    let files = crate::mapping::file_table(&p.ptx);
    let main_file = crate::mapping::main_file_index(&files, &p.path).and_then(|i| files.iter().find(|(f, _)| *f == i)).map(|(_, path)| path.clone());
    // The kernel definitions of the file by line: an annotation belongs to the kernel whose
    // definition precedes it (its problems are said there), found once per annotation.
    let mut definitions: Vec<(u32, &str)> = p.kernel_decls.iter().filter(|d| d.is_definition && d.file.is_none()).map(|d| (d.line, d.name.as_str())).collect();
    definitions.sort_unstable();
    let owner = |line: u32| definitions.partition_point(|(l, _)| *l <= line).checked_sub(1).map(|i| definitions[i].1);
    let owners: Vec<Option<&str>> = p.loop_annotations.iter().map(|a| owner(a.line)).collect();
    let stated_trips: Vec<(kernel_profile::StatedTrips, Option<&str>)> = p
        .loop_annotations
        .iter()
        .zip(&owners)
        .filter_map(|(a, o)| {
            Some((kernel_profile::StatedTrips { file: Some(main_file.clone()?), lines: a.lines?, trips: a.trips?, annotation_line: a.line, in_kernel: false }, *o))
        })
        .collect();
    for m in &p.kernels {
        // Parameter names from the kernel's declaration wherever it lives: the file, or an
        // included local header.
        let decl = p.kernel_decls.iter().filter(|d| d.name == m.base_name).max_by_key(|d| (d.file.is_none(), d.is_definition));
        let param_names: Vec<String> = decl.map(|d| d.params.iter().map(|p| p.name.clone()).collect()).unwrap_or_default();
        let sites: Vec<&crate::launch::LaunchSite> = p.launch_sites.iter().filter(|s| s.kernel == m.base_name).collect();
        // Of several launches, the one whose explicit template arguments are this
        // instantiation's (`k<256><<<...>>>` for `void k<256>(float*)`), else the first.
        let wanted = template_args_of(&m.demangled);
        let launches = sites.iter().filter(|s| s.origin == SiteOrigin::Launch);
        let call_site = launches
            .clone()
            .find(|s| wanted.as_ref().is_some_and(|w| !s.template_args.is_empty() && same_args(&s.template_args, w)))
            .or_else(|| launches.clone().next())
            .copied();
        let annotation = sites.iter().find(|s| s.origin == SiteOrigin::Annotation).map(|s| s.partial());
        let call_site_note = call_site.filter(|s| !s.unresolved.is_empty()).map(|s| format!("the launch of `{}` at line {} is {}", s.kernel, s.line, s.unresolved_sentence()));
        let call_site = call_site.map(|s| s.partial());
        let resources = p.resources_of(&m.ptx_name).map(|r| kernel_profile::Resources {
            registers_per_thread: r.registers,
            static_smem_bytes: r.shared_bytes,
            local_bytes_per_thread: r.stack_frame_bytes,
            spill_store_bytes: r.spill_store_bytes,
            spill_load_bytes: r.spill_load_bytes,
            stack_frame_bytes: r.stack_frame_bytes,
            barriers: r.barriers,
            source: kernel_profile::ResourceSource::Ptxas,
        });
        let demangled = (m.demangled != m.ptx_name).then(|| m.demangled.clone());
        // The `.file` path of the main source, so kernel-level findings land on the
        // definition's line like instruction-level ones land on theirs.
        let source = m.line.map(|l| (m.file.clone().unwrap_or_else(|| p.path.display().to_string()), l));
        let mut annotation_notes = Vec::new();
        for (a, o) in p.loop_annotations.iter().zip(&owners) {
            if *o == Some(m.base_name.as_str()) {
                annotation_notes.extend(a.errors.iter().map(|e| format!("the annotation at line {} is not read: {e}", a.line)));
                if a.errors.is_empty() && main_file.is_none() {
                    annotation_notes.push(format!("the annotation at line {} is not used: the PTX has no line information to find its loop by", a.line));
                }
            }
        }
        for a in &p.annotations {
            let mine = match &a.target {
                crate::launch::AnnotationTarget::Kernel { kernel, .. } | crate::launch::AnnotationTarget::Launch { kernel, .. } => *kernel == m.base_name,
                crate::launch::AnnotationTarget::Unattached => false,
            };
            if mine {
                annotation_notes.extend(a.errors.iter().map(|e| format!("the annotation at line {} is not read in part: {e}", a.line)));
            }
        }
        cx.kernels.insert(
            m.ptx_name.clone(),
            analysis::KernelContext {
                demangled,
                param_names,
                call_site,
                annotation,
                resources,
                source,
                call_site_note,
                stated_trips: stated_trips.iter().map(|(s, o)| kernel_profile::StatedTrips { in_kernel: *o == Some(m.base_name.as_str()), ..s.clone() }).collect(),
                annotation_notes,
            },
        );
    }
    cx
}

/// The template arguments of a demangled function name: `void k<256, float>(float*)`
/// gives `["256", "float"]`; `None` for a function that is not a template instance.
fn template_args_of(demangled: &str) -> Option<Vec<String>> {
    let paren = demangled.find('(').unwrap_or(demangled.len());
    let head = &demangled[..paren];
    let close = head.rfind('>')?;
    let mut depth = 0i32;
    let mut open = None;
    for (i, c) in head[..=close].char_indices().rev() {
        match c {
            '>' => depth += 1,
            '<' => {
                depth -= 1;
                if depth == 0 {
                    open = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let inner = &head[open? + 1..close];
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in inner.char_indices() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(inner[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(inner[start..].trim().to_string());
    Some(out)
}

/// Whether a launch's template arguments (folded, as written) name the same
/// instantiation as the demangled ones (`256` and `256`, `float` and `float`; the
/// demangler writes `256u` or `(unsigned char)3` for some types).
fn same_args(site: &[String], demangled: &[String]) -> bool {
    let norm = |s: &str| -> String {
        let s = s.trim();
        let s = s.rsplit(')').next().unwrap_or(s);
        let s = s.trim_end_matches(['u', 'l', 'U', 'L']);
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    site.len() == demangled.len() && site.iter().zip(demangled).all(|(a, b)| norm(a) == norm(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_arguments_of_demangled_names() {
        assert_eq!(template_args_of("void red<256, float>(float const*, int)"), Some(vec!["256".to_string(), "float".to_string()]));
        assert_eq!(template_args_of("void k<ops::Add<int> >(int*)"), Some(vec!["ops::Add<int>".to_string()]));
        assert_eq!(template_args_of("saxpy(int, float)"), None);
        assert!(same_args(&["256".to_string()], &["256u".to_string()]));
        assert!(same_args(&["3".to_string()], &["(unsigned char)3".to_string()]));
        assert!(!same_args(&["128".to_string()], &["256".to_string()]));
    }
}
