//! The keys of `[cc.throughput]` in `gpu-data/compute-capabilities.toml`: results per clock
//! per SM of native arithmetic instructions, per compute capability.
//!
//! The numbers are those of the CUDA C++ Programming Guide's table "Throughput of Native
//! Arithmetic Instructions (Number of Results per Clock Cycle per Multiprocessor)" (section
//! "Arithmetic Instructions"; the CUDA 13 edition moved it to the Best Practices Guide,
//! section 12.1.1). A key is the `ptx_ir::InstrClass::name` of the class the row describes
//! where one exists; rows without a class of their own keep a descriptive key. A row the
//! guide marks "Multiple instr." or "N/A" has no key for that compute capability: the
//! operation is emulated by several native instructions.

/// Every accepted key with the guide row it stands for.
pub const THROUGHPUT_KEYS: &[(&str, &str)] = &[
    ("fp16", "16-bit floating-point add, multiply, multiply-add (results: a half2 instruction counts two)"),
    ("fp32", "32-bit floating-point add, multiply, multiply-add"),
    ("fp64", "64-bit floating-point add, multiply, multiply-add"),
    ("sfu", "32-bit floating-point reciprocal, reciprocal square root, base-2 logarithm, base-2 exponential, sine, cosine"),
    ("int_alu", "32-bit integer add and subtract (also extended precision) and 32-bit bitwise AND, OR, XOR"),
    ("int_mul", "32-bit integer multiply, multiply-add, extended-precision multiply-add"),
    ("int_shift", "32-bit integer shift"),
    ("compare_minmax", "compare, minimum, maximum"),
    ("popc_clz", "count of leading zeros, most significant non-sign bit, population count"),
    ("warp_level", "warp shuffle"),
    ("warp_reduce", "warp reduce"),
    ("sad", "sum of absolute difference"),
    ("conversion", "type conversions other than those to and from 64-bit types"),
    ("conversion_64", "type conversions from and to 64-bit types"),
    ("conversion_int8_16", "type conversions from 8-bit and 16-bit integer to 32-bit integer types"),
];

/// The guide row a throughput key stands for, if the key is known.
pub fn meaning(key: &str) -> Option<&'static str> {
    THROUGHPUT_KEYS.iter().find(|(k, _)| *k == key).map(|(_, m)| *m)
}
