//! User GPU files (`--gpu-file`, the editor's `gpuFiles` setting): the same format and the
//! same checks as the built-in data, and a user entry with a built-in id replaces it.

use gpu_spec::Database;

/// The A100 80 GB entry of `gpu-data/gpus/ampere.toml`, as a user would copy it, with
/// calibrated model parameters added.
fn a100_copy(extra: &str) -> String {
    let ampere = include_str!("../../../gpu-data/gpus/ampere.toml");
    let start = ampere.find("id = \"a100-sxm4-80gb\"").expect("a100 entry");
    let rest = &ampere[start..];
    let end = rest.find("[[gpu]]").unwrap_or(rest.len());
    format!("[[gpu]]\n{}{extra}", &rest[..end])
}

#[test]
fn a_user_entry_with_a_builtin_id_replaces_it() {
    let text = a100_copy(
        "[gpu.overrides.model_params]\n\"bottleneck.dram_efficiency\" = { v = 0.81, src = \"derived: fitted by warpsight calibrate on 12 measurements\" }\n",
    );
    let db = Database::with_user_files(&[("my-a100.toml", &text)]).expect("loads");
    let g = db.gpu("a100").expect("alias still resolves");
    assert_eq!(g.id, "a100-sxm4-80gb");
    assert_eq!(g.model_params.get("bottleneck.dram_efficiency"), Some(&0.81));
    // Exactly one entry with that id, and the rest of the database is still there.
    assert_eq!(db.gpus().iter().filter(|g| g.id == "a100-sxm4-80gb").count(), 1);
    assert_eq!(db.gpus().len(), Database::builtin().gpus().len());
    assert!(!Database::builtin().gpu("a100").unwrap().model_params.contains_key("bottleneck.dram_efficiency"));
}

#[test]
fn a_new_user_gpu_is_added() {
    let text = a100_copy("").replacen("id = \"a100-sxm4-80gb\"", "id = \"my-lab-a100\"", 1).replacen(
        "aliases = [\"a100\", \"a100-80gb\", \"a100-sxm\"]",
        "aliases = []",
        1,
    );
    let db = Database::with_user_files(&[("lab.toml", &text)]).expect("loads");
    assert!(db.gpu("my-lab-a100").is_ok());
    assert_eq!(db.gpus().len(), Database::builtin().gpus().len() + 1);
}

#[test]
fn a_number_without_a_source_is_an_error_naming_the_user_file() {
    let text = a100_copy("").replacen(
        "sm_count = { v = 108, src = \"ga100-wp Table 1 (108 SMs)\" }",
        "sm_count = 108",
        1,
    );
    let errors = Database::with_user_files(&[("broken.toml", &text)]).expect_err("rejected");
    assert!(errors.iter().all(|e| e.file == "broken.toml"), "{errors:?}");
    assert!(!errors.is_empty());
}

#[test]
fn an_alias_collision_with_another_gpu_is_an_error() {
    let text = a100_copy("").replacen("id = \"a100-sxm4-80gb\"", "id = \"other\"", 1);
    let errors = Database::with_user_files(&[("dup.toml", &text)]).expect_err("aliases collide");
    assert!(errors.iter().any(|e| e.message.contains("used twice")), "{errors:?}");
}

/// The minimal file of docs/gpus.md § Your own GPUs, as the page shows it.
fn docs_minimal_file() -> String {
    let page = include_str!("../../../docs/gpus.md");
    let start = page.find("<!-- minimal-gpu-file").expect("marker in docs/gpus.md");
    let rest = &page[start..];
    let body = &rest[rest.find("```toml\n").expect("toml block") + 8..];
    body[..body.find("```").expect("end of block")].to_string()
}

#[test]
fn the_documented_minimal_file_loads_and_derives_the_rest_from_the_cc() {
    let text = docs_minimal_file();
    assert!(!text.contains("sm_arch"), "the minimal example leaves the architecture out");
    let gpus = Database::user_gpus(&[("my-gpu.toml", &text)]).expect("the documented example loads");
    assert_eq!(gpus.len(), 1);
    let g = &gpus[0];
    let twin = Database::builtin().gpu("rtx-3060").unwrap();
    // The architecture and everything per SM and per CC come from CC 8.6.
    assert_eq!(g.sm_arch, "ga10x");
    assert_eq!(g.limits, twin.limits);
    assert_eq!(g.units, twin.units);
    assert_eq!(g.throughput, twin.throughput);
    assert_eq!(g.boost_clock_mhz, 1867.0);
    assert_eq!(g.occupancy(256, 32, 0, 0).unwrap(), twin.occupancy(256, 32, 0, 0).unwrap());
}

#[test]
fn a_missing_architecture_that_the_cc_does_not_decide_is_an_error() {
    let text = docs_minimal_file();
    // No built-in GPU has CC 1.1, so nothing says which architecture it would be.
    let unknown_cc = text.replacen("cc = \"8.6\"", "cc = \"1.1\"", 1);
    let errors = Database::with_user_files(&[("u.toml", &unknown_cc)]).expect_err("no GPU of CC 1.1");
    assert!(errors.iter().any(|e| e.file == "u.toml" && e.message.contains("sm_arch is needed")), "{errors:?}");
    // Naming it works for any CC.
    let named = unknown_cc.replacen("cc = \"1.1\"", "cc = \"1.1\"\nsm_arch = \"g80\"", 1);
    assert!(Database::with_user_files(&[("u.toml", &named)]).is_ok());
}
