//! `docs/power.md`'s cross-validation numbers are typed in the doc; this test checks each of
//! them against `gpu-data/power/results.md`, which `train.py` generates (issue 19: they
//! matched when written, but nothing checked it). Every decimal number in the doc's
//! "Cross-validation results" and "Known limits" sections must be one of the generated
//! file's numbers (or the
//! thesis figures it reprints), rounded to the digits the doc shows. A number the training
//! script does not write has no place in that section.

use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A decimal number as written: its value and its digits after the point.
#[derive(Debug, Clone, Copy)]
struct Written {
    value: f64,
    decimals: i32,
}

/// Every decimal number (`12.5`, `-0.3554`, `−0.3554`, `+0.013`) in `text`, with the
/// decimals it is written with. Integers (row counts, seeds, 1,000 trees) are not
/// computed results and are left out; so are version numbers (`3.2.0`) and section
/// numbers (`5.9`, `§5.5`, `Table 5.8`), told apart by the word before them.
fn decimals(text: &str) -> Vec<(Written, String)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts_number = chars[i].is_ascii_digit()
            && (i == 0
                || !(chars[i - 1].is_ascii_alphanumeric()
                    || chars[i - 1] == '.'
                    || chars[i - 1] == '_'));
        if !starts_number {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        if i + 1 < chars.len() && chars[i] == '.' && chars[i + 1].is_ascii_digit() {
            let point = i;
            i += 1;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            // `3.2.0`, `1.9.1`: a version.
            if i + 1 < chars.len() && chars[i] == '.' && chars[i + 1].is_ascii_digit() {
                while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                    i += 1;
                }
                continue;
            }
            let before: String = chars[..start].iter().collect();
            let word = before
                .trim_end()
                .rsplit([' ', '(', '|'])
                .next()
                .unwrap_or_default()
                .to_string();
            if ["Table", "Tables", "§", "section", "Eq.", "spec"]
                .iter()
                .any(|w| word.ends_with(w))
            {
                continue;
            }
            let negative = start > 0 && (chars[start - 1] == '-' || chars[start - 1] == '−');
            let literal: String = chars[start..i].iter().collect();
            let value: f64 = literal.parse().expect("digits");
            let decimals = (i - point - 1) as i32;
            out.push((
                Written {
                    value: if negative { -value } else { value },
                    decimals,
                },
                literal,
            ));
        } else {
            i += 1;
        }
    }
    out
}

/// The section of `doc` from `heading` to the next heading of the same or a higher level.
fn section<'a>(doc: &'a str, heading: &str) -> &'a str {
    let start = doc
        .find(heading)
        .unwrap_or_else(|| panic!("no `{heading}`"));
    let rest = &doc[start + heading.len()..];
    let end = rest.find("\n## ").map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

/// Measured rows the doc quotes (not computations): (the number as written, dataset file,
/// kernel, grid, block). Checked against the datasets by
/// [`quoted_measurements_are_the_datasets_rows`] where they are present.
const QUOTED_ROWS: [(&str, &str, &str, u32, u32); 6] = [
    ("72.0", "energymodel-k20-larger.csv", "Saxpy", 10240, 512),
    (
        "114.3",
        "energymodel-k20-larger.csv",
        "Saxpyshared",
        10240,
        512,
    ),
    ("97.9", "energymodel-k20-larger.csv", "branch", 1280, 128),
    ("48.9", "energymodel-k20-larger.csv", "branch", 10240, 1024),
    (
        "121.2",
        "energymodel-k20-larger.csv",
        "vecAddMul",
        10240,
        512,
    ),
    (
        "87.5",
        "energymodel-k20-larger.csv",
        "vecAddMul",
        10240,
        1024,
    ),
];

#[test]
fn cross_validation_numbers_are_the_generated_ones() {
    let doc = std::fs::read_to_string(root().join("docs/power.md")).expect("docs/power.md");
    let results =
        std::fs::read_to_string(root().join("gpu-data/power/results.md")).expect("results.md");
    let generated: Vec<f64> = decimals(&results)
        .into_iter()
        .map(|(w, _)| w.value)
        .collect();
    assert!(
        generated.len() > 500,
        "results.md parsed to {} numbers",
        generated.len()
    );
    let mut unsourced = Vec::new();
    for heading in ["\n## Cross-validation results", "\n## Known limits"] {
        let cv = section(&doc, heading);
        for (n, line) in cv.lines().enumerate() {
            for (w, literal) in decimals(line) {
                if QUOTED_ROWS.iter().any(|q| q.0 == literal) && line.contains(" W") {
                    continue;
                }
                let scale = 10f64.powi(w.decimals);
                // Written as a generated value rounded to the doc's digits (or its magnitude:
                // prose says "0.36 below" of a difference the file prints signed).
                let r = |x: f64| (x * scale).round();
                let found = generated
                    .iter()
                    .any(|g| r(*g) == r(w.value) || r(g.abs()) == r(w.value.abs()));
                if !found {
                    unsourced.push(format!(
                        "line {} of `{}`: {literal} in `{}`",
                        n + 1,
                        heading.trim(),
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(
        unsourced.is_empty(),
        "docs/power.md states numbers that gpu-data/power/results.md does not:\n{}",
        unsourced.join("\n")
    );
}

#[test]
fn the_number_scanner_reads_what_the_doc_writes() {
    let got: Vec<(f64, i32)> = decimals(
        "R² 0.9137 ± 0.0073, −0.3554 / -1.5, xgboost 3.2.0, Table 5.9, 1,000 trees, 72.0 W",
    )
    .into_iter()
    .map(|(w, _)| (w.value, w.decimals))
    .collect();
    assert_eq!(
        got,
        vec![(0.9137, 4), (0.0073, 4), (-0.3554, 4), (-1.5, 1), (72.0, 1)]
    );
}

/// The measured power the doc quotes is the dataset's `Power` of that launch, rounded as
/// written. The datasets are not in the repository: they are read from `../shared` beside
/// it, and the test says so and passes when they are absent.
#[test]
fn quoted_measurements_are_the_datasets_rows() {
    let dir = root().join("../shared/data/power");
    if !dir.is_dir() {
        #[allow(clippy::print_stderr)]
        {
            eprintln!(
                "skipped: {} is absent (the power datasets live beside the repository)",
                dir.display()
            );
        }
        return;
    }
    let doc = std::fs::read_to_string(root().join("docs/power.md")).expect("docs/power.md");
    for (literal, file, kernel, grid, block) in QUOTED_ROWS {
        assert!(
            doc.contains(&format!("{literal} W")),
            "docs/power.md no longer quotes {literal} W; update QUOTED_ROWS"
        );
        let text =
            std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
        let col = |name: &str| {
            header
                .iter()
                .position(|h| h.trim() == name)
                .unwrap_or_else(|| panic!("{file}: no column {name}"))
        };
        let (k, g, b, p) = (
            col("Kernel Name"),
            col("grid_size"),
            col("block_size"),
            col("Power"),
        );
        let powers: Vec<f64> = lines
            .map(|l| l.split(',').collect::<Vec<_>>())
            .filter(|f| {
                f.len() > p
                    && f[k].trim() == kernel
                    && f[g].trim().parse::<f64>().ok() == Some(f64::from(grid))
                    && f[b].trim().parse::<f64>().ok() == Some(f64::from(block))
            })
            .filter_map(|f| f[p].trim().parse().ok())
            .collect();
        assert_eq!(
            powers.len(),
            1,
            "{file}: {kernel} at {grid} x {block}: {powers:?}"
        );
        assert_eq!(
            format!("{:.1}", powers[0]),
            literal,
            "{file}: {kernel} at {grid} x {block}"
        );
    }
}
