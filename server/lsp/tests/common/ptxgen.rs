//! Building large PTX modules from the fixture corpus, shared by the robustness tests
//! (`tests/e2e/robustness.rs`) and the latency benchmark (`examples/lsp_bench.rs`): each
//! fixture becomes a renamed copy so that many copies form one valid module.

/// PTX ISA 9.x §4.4 "Identifiers": letters, digits, `_` and `$`.
pub fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// The module-level names a fixture defines (`.entry`/`.func` names, module-scope
/// variables, `.debug_str` labels).
pub fn module_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        for kw in [".entry ", ".func "] {
            if let Some(i) = t.find(kw) {
                let mut rest = t[i + kw.len()..].trim_start();
                if rest.starts_with('(') {
                    rest = rest.split_once(')').map_or("", |(_, r)| r.trim_start());
                }
                let name: String = rest.bytes().take_while(|b| is_ident_byte(*b)).map(char::from).collect();
                if !name.is_empty() {
                    names.push(name);
                }
            }
        }
        if let Some(label) = t.strip_suffix(':').filter(|l| l.starts_with("$L__info_string")) {
            names.push(label.to_string());
        }
        if [".global", ".const", ".shared", ".extern"].iter().any(|kw| line.starts_with(kw)) {
            let decl = line.split('=').next().unwrap_or("").trim().trim_end_matches(';');
            let last = decl.split_whitespace().last().unwrap_or("");
            let name: String = last.bytes().take_while(|b| is_ident_byte(*b)).map(char::from).collect();
            if !name.is_empty() {
                names.push(name);
            }
        }
    }
    names
}

/// `line` with each token that is one of `names` (or `NAME_param_N`) suffixed `_c{copy}`.
pub fn rename_tokens(line: &str, names: &[String], copy: usize) -> String {
    let bytes = line.as_bytes();
    let starts_token = |i: usize| is_ident_byte(bytes[i]) && (i == 0 || !is_ident_byte(bytes[i - 1]) && bytes[i - 1] != b'%');
    let mut out = String::with_capacity(line.len() + 16);
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        if starts_token(i) {
            while i < bytes.len() && is_ident_byte(bytes[i]) {
                i += 1;
            }
            let token = &line[start..i];
            match names.iter().find(|n| token == n.as_str() || token.strip_prefix(n.as_str()).is_some_and(|r| r.starts_with("_param_"))) {
                Some(n) => out.push_str(&format!("{n}_c{copy}{}", &token[n.len()..])),
                None => out.push_str(token),
            }
        } else {
            i += 1;
            while i < bytes.len() && !starts_token(i) {
                i += 1;
            }
            out.push_str(&line[start..i]);
        }
    }
    out
}

/// One fixture as the `copy`-th member of a concatenated module: no header, renamed
/// module-level names, `.file` indices (and `.loc`/`inlined_at` uses) moved apart.
pub fn renamed_copy(text: &str, copy: usize) -> String {
    let names = module_names(text);
    let file_base = copy * 16;
    let mut out = String::with_capacity(text.len() + 256);
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with(".version") || t.starts_with(".target") || t.starts_with(".address_size") {
            continue;
        }
        let line = rename_tokens(line, &names, copy);
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix(".file").or_else(|| t.strip_prefix(".loc")) {
            let directive = if t.starts_with(".file") { ".file" } else { ".loc" };
            let rest = rest.trim_start();
            let (index, tail) = rest.split_once(|c: char| c.is_whitespace()).unwrap_or((rest, ""));
            if let Ok(index) = index.parse::<usize>() {
                let tail = match tail.split_once("inlined_at ") {
                    Some((head, at)) => {
                        let (f, more) = at.split_once(' ').unwrap_or((at, ""));
                        match f.parse::<usize>() {
                            Ok(f) => format!("{head}inlined_at {} {more}", f + file_base),
                            Err(_) => tail.to_string(),
                        }
                    }
                    None => tail.to_string(),
                };
                out.push_str(&format!("\t{directive}\t{} {tail}\n", index + file_base));
                continue;
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}
