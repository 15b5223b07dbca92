//! `warpsight validate`: measured kernel times against the models' predictions.
//!
//! Loading is separate from judging so that other commands (calibration) can reuse it:
//! [`load`] turns inputs (row files and importer specifications) into typed [`Row`]s,
//! [`run::analyse`] analyses each row, and the statistics are the pure functions of
//! `analysis::validation`.

pub mod gpu_benches;
pub mod kernel_tuner;
pub mod ncu;
pub mod rows;
pub mod run;

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::Deserialize;

pub use rows::Row;

/// `p` relative to `base` (unchanged when absolute or when `base` is the current folder).
pub fn resolve(base: &Path, p: &Path) -> PathBuf {
    if base == Path::new(".") || base.as_os_str().is_empty() { p.to_path_buf() } else { base.join(p) }
}

/// One source of rows.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Import {
    /// Files in the row format (CSV, JSON, JSON lines).
    Rows { files: Vec<PathBuf> },
    KernelTuner(kernel_tuner::Import),
    Ncu(ncu::Import),
    GpuBenches(gpu_benches::Import),
}

/// An import specification file (TOML): `[[import]]` tables with a `kind` and the fields
/// of that kind; relative paths are relative to the file (docs/validation.md § Imports).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecFile {
    #[serde(rename = "import")]
    pub imports: Vec<Import>,
}

/// Reads an import specification.
pub fn read_spec(path: &Path) -> anyhow::Result<SpecFile> {
    let text = crate::input::read_text(path)?;
    toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// Rows and the notes the importers left (left-out configurations, sampling).
#[derive(Debug, Default)]
pub struct Loaded {
    pub rows: Vec<Row>,
    pub notes: Vec<String>,
}

/// Loads one import; relative paths are resolved against `base`.
pub fn load_import(imp: &Import, base: &Path) -> anyhow::Result<Loaded> {
    let mut out = Loaded::default();
    match imp {
        Import::Rows { files } => {
            for f in files {
                out.rows.extend(rows::load(&resolve(base, f))?);
            }
        }
        Import::KernelTuner(k) => {
            let i = kernel_tuner::import(k, base)?;
            out.rows = i.rows;
            out.notes = i.notes;
        }
        Import::Ncu(n) => out.rows = ncu::import(n, base)?,
        Import::GpuBenches(g) => {
            let i = gpu_benches::import(g, base)?;
            out.rows = i.rows;
            out.notes = i.notes;
        }
    }
    Ok(out)
}

/// Loads every import in order.
pub fn load(imports: &[(Import, PathBuf)]) -> anyhow::Result<Loaded> {
    let mut out = Loaded::default();
    for (imp, base) in imports {
        let l = load_import(imp, base)?;
        out.rows.extend(l.rows);
        out.notes.extend(l.notes);
    }
    Ok(out)
}

/// The imports of a spec file, each with the folder its paths are relative to.
pub fn imports_of_spec(path: &Path) -> anyhow::Result<Vec<(Import, PathBuf)>> {
    let spec = read_spec(path).with_context(|| format!("reading the import specification {}", path.display()))?;
    let base = path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    Ok(spec.imports.into_iter().map(|i| (i, base.clone())).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_files_name_each_import_kind() {
        let spec: SpecFile = toml::from_str(
            r#"
            [[import]]
            kind = "rows"
            files = ["a.csv"]

            [[import]]
            kind = "kernel-tuner"
            files = ["x.json.gz", "y.json.gz"]
            source = "conv.cu"
            problem_size = [4096, 4096]
            grid_div_x = ["block_size_x", "tile_size_x"]
            defines = "filter_height=15;filter_width=15"
            sample = 30

            [[import]]
            kind = "ncu"
            files = ["p.csv"]
            source = "app.cu"
            gpu = "a100"

            [[import]]
            kind = "gpu-benches"
            dir = "../shared/data/measured/gpu-benches"
            kernels = "."
            sample = 16
            "#,
        )
        .unwrap();
        assert_eq!(spec.imports.len(), 4);
        let Import::KernelTuner(k) = &spec.imports[1] else { panic!() };
        assert_eq!(k.sample, Some(30));
        assert_eq!(k.defines.as_ref().unwrap().0, ["filter_height=15", "filter_width=15"]);
        let Import::GpuBenches(g) = &spec.imports[3] else { panic!() };
        assert_eq!(g.sample, Some(16));
        // Unknown kinds and misspelt fields are errors.
        assert!(toml::from_str::<SpecFile>("[[import]]\nkind = \"nope\"\n").is_err());
        let e = toml::from_str::<SpecFile>("[[import]]\nkind = \"ncu\"\nfiles = []\nsource = \"a\"\nkernal = \"k\"\n").unwrap_err().to_string();
        assert!(e.contains("kernal"), "{e}");
    }
}
