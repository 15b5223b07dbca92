//! Launch folding through `prepare` with what the build adds (no CUDA toolchain needed:
//! the launch sites are read whatever the compiler): the defines of
//! `compile_commands.json` and of the options, local headers found relative to the file
//! and in the `-I` directories, and the `.cu` annotation spellings of the one grammar.

mod common;

use common::scratch;
use cuda_frontend::{CompilerChoice, DiscoveryEnv, Options, SiteOrigin, prepare};

const SRC: &str = "#include \"tiles.h\"\n#include \"sizes.h\"\n__global__ void k(float *m, int w) {}\nint main() {\n  dim3 grid((WIDTH + TW - 1) / TW, kRows / TW);\n  dim3 block(TW, TW);\n  k<<<grid, block>>>(0, WIDTH);\n}\n";

fn options() -> Options {
    Options {
        compiler: CompilerChoice::RecordedOnly,
        env: Some(DiscoveryEnv::empty()),
        use_cache: false,
        run_ptxas: false,
        ..Options::default()
    }
}

fn launch(p: &cuda_frontend::Prepared) -> (Option<[u32; 3]>, Option<[u32; 3]>, Option<i64>) {
    let s = p
        .launch_sites
        .iter()
        .find(|s| s.origin == SiteOrigin::Launch)
        .expect("a launch");
    (s.grid, s.block, s.arg("w"))
}

#[test]
fn compile_commands_defines_and_include_directories_reach_the_folding() {
    let dir_tmp = scratch("launch-build-db");
    let dir = dir_tmp.path();
    std::fs::create_dir_all(dir.join("inc")).expect("mkdir");
    std::fs::write(dir.join("tiles.h"), "#ifndef TW\n#define TW 8\n#endif\n").expect("write");
    std::fs::write(dir.join("inc/sizes.h"), "constexpr int kRows = 512;\n").expect("write");
    let cu = dir.join("t.cu");
    std::fs::write(&cu, SRC).expect("write");
    // Without the database: TW is the header's default, WIDTH and kRows are unknown
    // (sizes.h is only in the database's -I directory).
    let p = prepare(&cu, &options());
    assert_eq!(launch(&p), (None, Some([8, 8, 1]), None));
    let db = serde_json::json!([{
        "directory": dir.display().to_string(),
        "file": cu.display().to_string(),
        "arguments": ["nvcc", "-c", "t.cu", "-Iinc", "-DWIDTH=1024", "-DTW=16"],
    }]);
    std::fs::write(dir.join("compile_commands.json"), db.to_string()).expect("write");
    let p = prepare(&cu, &options());
    assert_eq!(
        launch(&p),
        (Some([64, 32, 1]), Some([16, 16, 1]), Some(1024))
    );
    // The user's -D come after the database's, like on the compiler's command line.
    let opts = Options {
        defines: vec!["TW=32".into()],
        ..options()
    };
    let p = prepare(&cu, &opts);
    assert_eq!(
        launch(&p),
        (Some([32, 16, 1]), Some([32, 32, 1]), Some(1024))
    );
}

#[test]
fn cu_annotations_accept_every_spelling_of_the_one_grammar() {
    let dir_tmp = scratch("launch-build-ann");
    let dir = dir_tmp.path();
    let cu = dir.join("a.cu");
    std::fs::write(
        &cu,
        "#define N 4096\n// warpsight: grid=64x32 block=16,16 dynamic_smem=1<<10 n=N\n__global__ void k(int n) {}\n",
    )
    .expect("write");
    let p = prepare(&cu, &options());
    let a = &p.annotations[0];
    assert!(a.errors.is_empty(), "{:?}", a.errors);
    assert_eq!(
        (
            a.launch.grid,
            a.launch.block,
            a.launch.dynamic_smem,
            a.launch.args.get("n")
        ),
        (
            Some([64, 32, 1]),
            Some([16, 16, 1]),
            Some(1024),
            Some(&4096)
        )
    );
    // The same items in a PTX annotation (no names there) read the same.
    let (ptx, errors) = launch_spec::parse_items(
        "grid=64x32 block=16,16 dynamic_smem=1<<10 n=4096",
        &mut launch_spec::eval_const,
    );
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(ptx, a.launch);
}
