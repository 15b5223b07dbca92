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
