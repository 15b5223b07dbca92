//! Development aid: prints the profile JSON of every kernel of a PTX file.
//! `cargo run -p kernel-profile --example dump_profile -- FILE.ptx [grid=XxY] [block=XxY] [param_N=value...]`
#![allow(clippy::print_stdout)]

fn main() {
    let mut argv = std::env::args().skip(1);
    let path = argv.next().expect("usage: dump_profile FILE.ptx [grid block] [k=v...]");
    let rest: Vec<String> = argv.collect();
    let dims = |key: &str, default: [u32; 3]| -> [u32; 3] {
        rest.iter()
            .find_map(|s| s.strip_prefix(key))
            .map(|v| {
                let mut d = [1u32; 3];
                for (i, p) in v.split('x').take(3).enumerate() {
                    d[i] = p.parse().unwrap_or(1);
                }
                d
            })
            .unwrap_or(default)
    };
    let (grid, block) = (dims("grid=", [1024, 1, 1]), dims("block=", [256, 1, 1]));
    let args = rest
        .iter()
        .filter(|s| !s.starts_with("grid=") && !s.starts_with("block="))
        .filter_map(|s| s.split_once('='))
        .map(|(k, v)| (k.to_string(), v.parse::<i64>().unwrap_or(0)))
        .collect();
    let text = std::fs::read_to_string(&path).expect("read");
    let (module, _errors) = ptx_ir::parse_and_lower(&text);
    let options = kernel_profile::ProfileOptions::default();
    for k in module.kernels() {
        let input = kernel_profile::ProfileInput {
            module: &module,
            kernel: &k.name,
            gpu_id: "a100-sxm4-80gb",
            compute_capability: (8, 0),
            launch: kernel_profile::LaunchConfig {
                grid,
                block,
                dynamic_smem: 0,
                args: std::collections::BTreeMap::clone(&args),
                footprint_bytes: None, array_bytes: Default::default(), source: kernel_profile::LaunchSource::Setting,
            },
            resources: None,
            source_param_names: &[],
            demangled: None,
            options: &options,
            stated_trips: &[],
        };
        let p = kernel_profile::build(&input).expect("kernel");
        println!("{}", serde_json::to_string_pretty(&p).expect("json"));
    }
}
