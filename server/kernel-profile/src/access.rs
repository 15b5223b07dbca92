//! Classification of one memory access from its affine address: coalescing (32-byte
//! sectors per warp request) for global memory and bank conflicts for shared memory.
//!
//! Sources:
//! - Global memory: CUDA C++ Best Practices Guide, §"Coalesced Access to Global Memory"
//!   (devices of compute capability 6.0 and later): "the concurrent accesses of the threads
//!   of a warp will coalesce into a number of transactions equal to the number of 32-byte
//!   transactions necessary to service all of the threads of the warp". We count exactly
//!   those sectors for the 32 lanes of a representative warp.
//! - Shared memory: CUDA C++ Programming Guide, "Compute Capability 5.x — Shared Memory"
//!   (and the same text for later CCs): 32 banks of 4 bytes; accesses of 64-bit words are
//!   served in two half-warp phases and 128-bit words in four quarter-warp phases; several
//!   threads reading the same word get it broadcast. Compute capability 1.x has 16 banks
//!   and half-warp requests (Programming Guide 3.x, §G.3.3).

use ptx_ir::ir::Dim;

use crate::affine::{Affine, Var};
use crate::model::AccessClass;

/// Bytes per sector of a global memory request.
pub const SECTOR_BYTES: i64 = 32;

/// The result of classifying one access.
#[derive(Debug, Clone, PartialEq)]
pub struct Classified {
    pub class: AccessClass,
    /// Address distance between lanes `l` and `l+1` (when constant).
    pub stride_bytes: Option<i64>,
    /// 32-byte sectors per warp request.
    pub sectors: f64,
    /// Shared memory: the serialisation degree (1 = conflict-free).
    pub bank_conflict_ways: u32,
}

/// The (x, y, z) thread index of each lane of the first warp of a block.
pub fn lanes(block: [u32; 3]) -> Vec<[i64; 3]> {
    let (bx, by) = (i64::from(block[0].max(1)), i64::from(block[1].max(1)));
    // Saturating: three `u32` dimensions can exceed `i64`.
    let threads = block.iter().fold(1i64, |acc, d| acc.saturating_mul(i64::from((*d).max(1)))).min(32);
    (0..threads).map(|t| [t % bx, (t / bx) % by, t / bx.saturating_mul(by)]).collect()
}

/// The stride assumed for a coefficient that depends on a value nobody supplied: far
/// enough apart that no two lanes share a sector or a 128-byte line, and a multiple of
/// the bank period. The access is reported with an unknown stride.
const UNKNOWN_COEFF: i64 = 1 << 20;

/// Lane addresses relative to the warp's first lane, and whether an unknown coefficient
/// varies across the warp; `None` when the form is irregular.
fn lane_addresses(addr: &Affine, block: [u32; 3]) -> Option<(Vec<i64>, bool)> {
    if addr.irregular {
        return None;
    }
    let lanes = lanes(block);
    let varies = |d: usize| lanes.iter().any(|t| t[d] != lanes[0][d]);
    let mut unknown_varies = false;
    let mut coeff = |v: Var, d: Option<usize>| -> i64 {
        if addr.unknown.contains(&v) {
            if d.is_none_or(varies) {
                unknown_varies = true;
                return UNKNOWN_COEFF;
            }
            return 0;
        }
        addr.coeff(v)
    };
    let (cx, cy, cz) = (coeff(Var::Tid(Dim::X), Some(0)), coeff(Var::Tid(Dim::Y), Some(1)), coeff(Var::Tid(Dim::Z), Some(2)));
    let cl = coeff(Var::Lane, None);
    // `tid.x / k` and `tid.x % k` (and the same of `tid.y`), evaluated per lane.
    let parts: Vec<(Var, i64)> = addr
        .terms
        .keys()
        .filter_map(|v| match v {
            Var::TidXDiv(_) | Var::TidXMod(_) => Some((*v, coeff(*v, Some(0)))),
            Var::TidYDiv(_) | Var::TidYMod(_) => Some((*v, coeff(*v, Some(1)))),
            _ => None,
        })
        .collect();
    // Wrapping, as the 64-bit address arithmetic it models (huge argument values).
    let addrs = lanes
        .iter()
        .enumerate()
        .map(|(lane, t)| {
            let base = cx.wrapping_mul(t[0]).wrapping_add(cy.wrapping_mul(t[1])).wrapping_add(cz.wrapping_mul(t[2])).wrapping_add(cl.wrapping_mul(lane as i64));
            parts.iter().fold(base, |acc, (v, c)| acc.wrapping_add(c.wrapping_mul(v.at_thread(*t, lane as i64).unwrap_or(0))))
        })
        .collect();
    Some((addrs, unknown_varies))
}

/// Sectors touched by a warp whose lanes access `bytes` bytes at `addrs` (relative to an
/// aligned base: the base pointer of an allocation is at least 256-byte aligned, CUDA
/// Programming Guide §"Device Memory Accesses").
fn sectors(addrs: &[i64], bytes: i64, base_offset: i64) -> usize {
    distinct_units(addrs, bytes, base_offset, i128::from(SECTOR_BYTES))
}

/// The distinct aligned `unit`-byte pieces (sectors, lines) that the lanes' `bytes` each
/// touch.
fn distinct_units(addrs: &[i64], bytes: i64, base_offset: i64, unit: i128) -> usize {
    // In 128 bits: an address near the end of the 64-bit range plus the access size must
    // not wrap around to a smaller unit.
    let mut s: Vec<i128> = Vec::with_capacity(addrs.len() * 2);
    for a in addrs {
        let start = i128::from(*a) + i128::from(base_offset);
        let end = start + i128::from(bytes.max(1)) - 1;
        let mut u = start.div_euclid(unit);
        while u <= end.div_euclid(unit) {
            s.push(u);
            u += 1;
        }
    }
    s.sort_unstable();
    s.dedup();
    s.len()
}

/// The documented `stride_bytes`: the address distance between `threadIdx.x` and
/// `threadIdx.x + 1` (the lane-to-lane distance when the lanes are not laid out along x).
fn thread_x_stride(addr: &Affine, _unknown_stride: bool, lane_stride: Option<i64>) -> Option<i64> {
    if addr.unknown.contains(&Var::Tid(Dim::X)) || addr.unknown.contains(&Var::Lane) {
        return None;
    }
    match (addr.coeff(Var::Tid(Dim::X)), addr.coeff(Var::Lane)) {
        // Neighbours along x share the address (a broadcast along x).
        (0, 0) if !addr.irregular => Some(0),
        (x, 0) => Some(x),
        (0, l) => Some(l),
        _ => lane_stride,
    }
}

/// The addresses of the lanes of one warp, however they were obtained (an affine form, or
/// concrete evaluation per lane), relative to an aligned base.
#[derive(Debug, Clone, PartialEq)]
pub struct Lanes {
    pub addrs: Vec<i64>,
    /// A coefficient that depends on an unknown value varies across the warp (an assumed
    /// large stride was used).
    pub unknown_stride: bool,
    /// The address distance between `threadIdx.x` and `threadIdx.x + 1`, when known.
    pub x_stride: Option<i64>,
}

/// The lanes of an affine form; `None` when it is irregular.
pub fn lanes_from_affine(addr: &Affine, block: [u32; 3]) -> Option<Lanes> {
    let (rel, unknown_stride) = lane_addresses(addr, block)?;
    let stride = rel.windows(2).map(|w| w[1].wrapping_sub(w[0])).collect::<Vec<_>>();
    let constant_stride = stride.iter().all(|s| *s == stride.first().copied().unwrap_or(0)).then(|| stride.first().copied().unwrap_or(0));
    let x_stride = thread_x_stride(addr, unknown_stride, constant_stride);
    Some(Lanes { addrs: rel.into_iter().map(|a| a.wrapping_add(addr.constant)).collect(), unknown_stride, x_stride })
}

/// Classifies a global (or generic/local) access of `bytes` per thread.
pub fn classify_global(addr: &Affine, block: [u32; 3], bytes: u32, irregular_sectors: f64) -> Classified {
    classify_global_lanes(lanes_from_affine(addr, block).as_ref(), bytes, irregular_sectors)
}

/// Classifies a global access from its lanes (`None`: data-dependent).
pub fn classify_global_lanes(lanes: Option<&Lanes>, bytes: u32, irregular_sectors: f64) -> Classified {
    let bytes = i64::from(bytes.max(1));
    let Some(l) = lanes.filter(|l| !l.addrs.is_empty()) else {
        return Classified { class: AccessClass::Irregular, stride_bytes: None, sectors: irregular_sectors, bank_conflict_ways: 1 };
    };
    let addrs = &l.addrs;
    let n = sectors(addrs, bytes, 0);
    let first = addrs[0];
    if addrs.iter().all(|a| *a == first) {
        return Classified { class: AccessClass::Uniform, stride_bytes: Some(0), sectors: n as f64, bank_conflict_ways: 1 };
    }
    let stride = addrs.windows(2).map(|w| w[1].wrapping_sub(w[0])).collect::<Vec<_>>();
    let constant_stride = stride.iter().all(|s| *s == stride[0]).then_some(stride[0]);
    // The fewest sectors any arrangement of these bytes could need.
    let minimal = ((addrs.len() as i64 * bytes + SECTOR_BYTES - 1) / SECTOR_BYTES) as usize;
    let class = if constant_stride == Some(bytes) || n <= minimal { AccessClass::Coalesced } else { AccessClass::Strided };
    Classified { class, stride_bytes: l.x_stride, sectors: n as f64, bank_conflict_ways: 1 }
}

/// Classifies a shared-memory access; `banks` is 32 (16 on compute capability 1.x).
pub fn classify_shared(addr: &Affine, block: [u32; 3], bytes: u32, banks: u32) -> Classified {
    classify_shared_lanes(lanes_from_affine(addr, block).as_ref(), bytes, banks)
}

/// Classifies a shared-memory access from its lanes (`None`: data-dependent).
pub fn classify_shared_lanes(lanes: Option<&Lanes>, bytes: u32, banks: u32) -> Classified {
    let bytes = i64::from(bytes.max(1));
    let Some(l) = lanes.filter(|l| !l.addrs.is_empty()) else {
        // Data-dependent: assume the typical case of no systematic conflict but say the
        // class is irregular (the hint shows it as unknown).
        return Classified { class: AccessClass::Irregular, stride_bytes: None, sectors: 1.0, bank_conflict_ways: 1 };
    };
    let addrs = &l.addrs;
    let first = addrs[0];
    let stride = addrs.windows(2).map(|w| w[1].wrapping_sub(w[0])).collect::<Vec<_>>();
    let constant_stride = stride.iter().all(|s| *s == stride.first().copied().unwrap_or(0)).then(|| stride.first().copied().unwrap_or(0));
    let ways = bank_conflict_ways(addrs, bytes, banks, 0);
    let class = if addrs.iter().all(|a| *a == first) {
        AccessClass::Uniform
    } else if constant_stride == Some(bytes) {
        AccessClass::Coalesced
    } else {
        AccessClass::Strided
    };
    Classified { class, stride_bytes: l.x_stride, sectors: 1.0, bank_conflict_ways: ways }
}

/// A warp-collective `wmma.load`/`wmma.store` of one matrix fragment (PTX ISA §9.7.14.4):
/// the warp moves an M×K (`.a`), K×N (`.b`) or M×N (`.c`/`.d`) tile of the given type,
/// row by row (`.row`) or column by column (`.col`), the rows `ldm` elements apart. Rows
/// are assumed not to share sectors (`ldm` is usually a matrix dimension).
pub struct Collective {
    pub class: AccessClass,
    pub sectors: f64,
    pub bytes_per_thread: u32,
    /// The rows (`.row`) or columns (`.col`) the fragment is moved by, `ldm` apart.
    pub outer: u64,
    /// Bytes of one of them, and of one element.
    pub row_bytes: u64,
    pub elem_bytes: u64,
}

/// The `(M, N, K)` of a matrix-multiply shape modifier (`m16n16k16`, `m16n8k16`,
/// `m64n128k16`: PTX ISA §9.7.14 and §9.7.15); `None` for any other modifier.
pub fn mma_shape(modifier: &str) -> Option<(u64, u64, u64)> {
    let (m, rest) = modifier.strip_prefix('m')?.split_once('n')?;
    let (n, k) = rest.split_once('k')?;
    Some((m.parse().ok()?, n.parse().ok()?, k.parse().ok()?))
}

pub fn classify_wmma(instr: &ptx_ir::Instr) -> Option<Collective> {
    if instr.base() != "wmma" || !(instr.has_modifier("load") || instr.has_modifier("store")) {
        return None;
    }
    let mods: Vec<&str> = instr.modifiers().collect();
    let (m, n, k) = mods.iter().find_map(|t| mma_shape(t))?;
    let elem = mods.iter().rev().map(|t| ptx::type_bytes(t)).find(|b| *b > 0)?;
    let (rows, cols) = if mods.contains(&"a") {
        (m, k)
    } else if mods.contains(&"b") {
        (k, n)
    } else {
        (m, n)
    };
    let (outer, inner) = if mods.contains(&"col") { (cols, rows) } else { (rows, cols) };
    let row_bytes = inner * elem;
    let sectors = outer * row_bytes.div_ceil(SECTOR_BYTES as u64);
    let class = if row_bytes % SECTOR_BYTES as u64 == 0 { AccessClass::Coalesced } else { AccessClass::Strided };
    Some(Collective { class, sectors: sectors as f64, bytes_per_thread: u32::try_from(rows * cols * elem / 32).unwrap_or(u32::MAX), outer, row_bytes, elem_bytes: elem })
}

/// The number of serialised shared-memory wavefronts a warp request needs, relative to
/// the conflict-free number for its word size (1 = conflict-free).
pub fn bank_conflict_ways(addrs: &[i64], bytes: i64, banks: u32, base: i64) -> u32 {
    let banks = i64::from(banks.max(1));
    // Words of 4 bytes; a request of `bytes` per lane is served in `phases` phases, each
    // covering `lanes_per_phase` lanes (Programming Guide, CC 5.x shared memory).
    let words_per_lane = (bytes / 4).max(1);
    let phases = words_per_lane.min(4) as usize;
    let half_warp = banks == 16;
    let lanes_per_phase = if half_warp { 16 } else { (32 / phases).max(1) };
    let mut worst = 1u32;
    for chunk in addrs.chunks(lanes_per_phase) {
        let mut per_bank: Vec<Vec<i64>> = vec![Vec::new(); banks as usize];
        for a in chunk {
            for w in 0..words_per_lane {
                let word = a.wrapping_add(base).div_euclid(4).wrapping_add(w);
                let bank = word.rem_euclid(banks) as usize;
                if !per_bank[bank].contains(&word) {
                    per_bank[bank].push(word);
                }
            }
        }
        let ways = per_bank.iter().map(Vec::len).max().unwrap_or(1) as u32;
        // A 64-bit (128-bit) access touches 2 (4) words per lane in one bank pair
        // (quad), so 2 (4) distinct words per bank within a phase is still one pass.
        let ideal = (words_per_lane as usize * chunk.len()).div_ceil(banks as usize).max(1) as u32;
        worst = worst.max(ways.div_ceil(ideal).max(1));
    }
    worst
}

/// L1 wavefronts of one warp request to global (or generic) memory: the larger of what its
/// two stages take. The data stage reads 32 four-byte banks per pass like shared memory
/// (lanes on different words of one bank take one pass each; 8- and 16-byte accesses are
/// served a half or a quarter warp at a time), and the tag stage looks the request's
/// distinct 128-byte lines up about four per cycle after the first. Both are read off the
/// CUPTI counters that gpu-benches' gpu-strides benchmark (D. Ernst et al.,
/// github.com/te42kyfo/gpu-benches) prints per warp load for an A100,
/// `l1tex__data_pipe_lsu_wavefronts` and `l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld`
/// (L1-resident data, one SM): a stride of 32 floats puts every lane
/// on bank 0 (32 data wavefronts, and 32 cycles per load); a stride of 33 spreads them over
/// the banks but touches 32 lines (about 8.8 tag wavefronts, 8.8 cycles); a stride of 9, 9
/// lines (3.0). The A40's table, measured the same way, is held out (docs/validation.md).
pub fn l1_wavefronts(addrs: &[i64], bytes: i64) -> f64 {
    if addrs.is_empty() {
        return 1.0;
    }
    let phases = (bytes / 4).clamp(1, 4) as f64;
    let data = phases * f64::from(bank_conflict_ways(addrs, bytes.max(1), 32, 0));
    let lines = distinct_units(addrs, bytes, 0, L1_LINE_BYTES);
    let tag = 1.0 + (lines.max(1) - 1) as f64 / TAG_LOOKUPS_PER_CYCLE;
    data.max(tag)
}

/// The distinct 128-byte lines a warp request touches: the requests its L1 sends on to L2
/// for a store (one per line, whatever the bytes written in it).
pub fn l1_lines(addrs: &[i64], bytes: i64) -> usize {
    distinct_units(addrs, bytes, 0, L1_LINE_BYTES).max(1)
}

/// Bytes of an L1 cache line (CUDA C++ Best Practices Guide, "Coalesced Access to Global
/// Memory": 128-byte lines of four 32-byte sectors).
const L1_LINE_BYTES: i128 = 128;

/// Distinct lines the L1's tag stage resolves per cycle after the first: estimated from
/// gpu-strides' A100 `l1tex__t_output_wavefronts` per load, 1.0 for 1 line, 3.0 for 9,
/// 4.7 for 16 and 8.3 to 8.8 for 32 (see [`l1_wavefronts`]).
const TAG_LOOKUPS_PER_CYCLE: f64 = 4.0;

#[cfg(test)]
mod tests {
    use super::*;

    /// The gpu-strides cases of [`l1_wavefronts`]: float strides 1, 2, 4, 9, 32 and 33,
    /// doubles at stride 1, and a 16-byte load per lane.
    #[test]
    fn l1_wavefronts_are_the_data_banks_or_the_tag_lookups() {
        let lanes = |stride: i64, bytes: i64| (0..32).map(|l| l * stride * bytes).collect::<Vec<_>>();
        assert_eq!(l1_wavefronts(&lanes(1, 4), 4), 1.0);
        assert_eq!(l1_wavefronts(&lanes(2, 4), 4), 2.0);
        assert_eq!(l1_wavefronts(&lanes(4, 4), 4), 4.0);
        assert_eq!(l1_wavefronts(&lanes(9, 4), 4), 3.0);
        assert_eq!(l1_wavefronts(&lanes(32, 4), 4), 32.0);
        assert_eq!(l1_wavefronts(&lanes(33, 4), 4), 1.0 + 31.0 / 4.0);
        assert_eq!(l1_wavefronts(&lanes(1, 8), 8), 2.0);
        assert_eq!(l1_wavefronts(&lanes(1, 16), 16), 4.0);
        // One address for the whole warp: one pass, one line.
        assert_eq!(l1_wavefronts(&[64; 32], 4), 1.0);
        // The lines a store sends on to L2: a column walk's 32, a coalesced row's 1, 16-byte
        // lanes' 4, one address's 1.
        assert_eq!((l1_lines(&lanes(32, 4), 4), l1_lines(&lanes(1, 4), 4), l1_lines(&lanes(1, 16), 16), l1_lines(&[64; 32], 4)), (32, 1, 4, 1));
    }

    fn tid_x(coeff: i64) -> Affine {
        let mut a = Affine::var(Var::Tid(Dim::X));
        a.terms.insert(Var::Tid(Dim::X), coeff);
        a
    }

    #[test]
    fn a_lane_indexed_address_has_the_lane_coefficient_as_its_stride() {
        // `base + 4 * %laneid + 1024 * tid.y` in 16×2 blocks: the lanes are not laid out
        // along x (no tid.x term) and the warp's addresses jump at lane 16, so there is no
        // constant lane-to-lane distance; the documented stride is the lane coefficient.
        let mut a = Affine::var(Var::Lane);
        a.terms.insert(Var::Lane, 4);
        a.terms.insert(Var::Tid(Dim::Y), 1024);
        let lanes = lanes_from_affine(&a, [16, 2, 1]).expect("regular");
        assert_eq!(lanes.x_stride, Some(4));
    }

    #[test]
    fn unit_stride_floats_are_coalesced_in_four_sectors() {
        let c = classify_global(&tid_x(4), [256, 1, 1], 4, 32.0);
        assert_eq!(c.class, AccessClass::Coalesced);
        assert_eq!(c.sectors, 4.0);
        assert_eq!(c.stride_bytes, Some(4));
    }

    #[test]
    fn float4_is_coalesced_in_sixteen_sectors() {
        let c = classify_global(&tid_x(16), [128, 1, 1], 16, 32.0);
        assert_eq!(c.class, AccessClass::Coalesced);
        assert_eq!(c.sectors, 16.0);
    }

    #[test]
    fn row_stride_of_a_1024_matrix_needs_a_sector_per_lane() {
        let c = classify_global(&tid_x(4 * 1024), [256, 1, 1], 4, 32.0);
        assert_eq!(c.class, AccessClass::Strided);
        assert_eq!(c.sectors, 32.0);
        assert_eq!(c.stride_bytes, Some(4096));
    }

    #[test]
    fn stride_two_doubles_the_sectors() {
        let c = classify_global(&tid_x(8), [256, 1, 1], 4, 32.0);
        assert_eq!(c.class, AccessClass::Strided);
        assert_eq!(c.sectors, 8.0);
    }

    #[test]
    fn same_address_is_uniform() {
        let c = classify_global(&Affine::var(Var::Ctaid(Dim::X)), [256, 1, 1], 4, 32.0);
        assert_eq!(c.class, AccessClass::Uniform);
        assert_eq!(c.sectors, 1.0);
    }

    #[test]
    fn a_16_by_16_block_spans_two_rows_per_warp() {
        // Address = 4·(tid.y·1024 + tid.x): lanes 0–15 row 0, lanes 16–31 row 1.
        let mut a = tid_x(4);
        a.terms.insert(Var::Tid(Dim::Y), 4096);
        let c = classify_global(&a, [16, 16, 1], 4, 32.0);
        assert_eq!(c.sectors, 4.0);
        assert_eq!(c.class, AccessClass::Coalesced);
    }

    #[test]
    fn transpose_column_reads_of_a_32_wide_tile_conflict_32_ways() {
        // tile[threadIdx.x][threadIdx.y] with float tile[32][32]: address 128·tid.x.
        let c = classify_shared(&tid_x(128), [32, 8, 1], 4, 32);
        assert_eq!(c.bank_conflict_ways, 32);
        // Padded to [32][33]: address 132·tid.x → conflict-free.
        let c = classify_shared(&tid_x(132), [32, 8, 1], 4, 32);
        assert_eq!(c.bank_conflict_ways, 1);
    }

    #[test]
    fn shared_row_reads_and_broadcasts_are_conflict_free() {
        assert_eq!(classify_shared(&tid_x(4), [256, 1, 1], 4, 32).bank_conflict_ways, 1);
        assert_eq!(classify_shared(&Affine::constant(64), [256, 1, 1], 4, 32).bank_conflict_ways, 1);
        // Stride 2 words: 2-way.
        assert_eq!(classify_shared(&tid_x(8), [256, 1, 1], 4, 32).bank_conflict_ways, 2);
        // float2 at unit stride (8 bytes): two half-warp phases, no conflict.
        assert_eq!(classify_shared(&tid_x(8), [256, 1, 1], 8, 32).bank_conflict_ways, 1);
    }

    #[test]
    fn unknown_stride_is_strided_worst_case() {
        let mut a = Affine::constant(0);
        a.unknown.insert(Var::Tid(Dim::X));
        let c = classify_global(&a, [256, 1, 1], 4, 32.0);
        assert_eq!(c.class, AccessClass::Strided);
        assert_eq!(c.stride_bytes, None);
        assert_eq!(c.sectors, 32.0);
        // An unknown row stride is harmless when the warp spans a single row.
        let mut a = tid_x(4);
        a.unknown.insert(Var::Tid(Dim::Y));
        let c = classify_global(&a, [256, 1, 1], 4, 32.0);
        assert_eq!((c.class, c.sectors, c.stride_bytes), (AccessClass::Coalesced, 4.0, Some(4)));
        // A 16×16 block spans two rows: two 64-byte runs, still the minimum 4 sectors.
        let c = classify_global(&a, [16, 16, 1], 4, 32.0);
        assert_eq!((c.class, c.sectors, c.stride_bytes), (AccessClass::Coalesced, 4.0, Some(4)));
        // An 8×32 block spans four rows of 32 bytes: 4 sectors too; a 4×64 block spans
        // eight rows of 16 bytes: 8 sectors for 128 bytes, strided.
        let c = classify_global(&a, [4, 64, 1], 4, 32.0);
        assert_eq!((c.class, c.sectors), (AccessClass::Strided, 8.0));
    }
}
