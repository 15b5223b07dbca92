//! Building a [`KernelProfile`] from the IR of one kernel, a launch configuration and a
//! target GPU.
//!
//! The steps, each documented in `docs/profile.md`:
//! 1. Loop trip counts: constant, resolved from the supplied arguments and the launch
//!    configuration, or the stated default (an assumption is recorded).
//! 2. Expected executions per thread of each basic block. When every branch condition
//!    follows from the launch and the arguments, what the warps issue, from simulating
//!    their control flow ([`crate::simt`]; loop trip counts then come from it too).
//!    Otherwise the fraction of the grid's warps that run it, from the branch conditions
//!    evaluated over the launch and the arguments (unknown ones count both sides, as the
//!    seeds do: Dasgupta 2011 §3.1, Alavani 2023 §4.2), times the trip counts of the loops around
//!    it ([`crate::frequency`]).
//! 3. Dynamic per-thread counts by class, with device-function calls inlined.
//! 4. Every global, shared, local, generic and texture access classified from its affine
//!    address ([`crate::affine`], [`crate::access`]).
//! 5. Divergent branches: those whose predicate depends on the thread index.
//! 6. Resources from `ptxas -v` when given, else estimated (liveness), marked as such.

use std::collections::{BTreeMap, HashMap, HashSet};

use ptx_ir::ir::{AddrBase, Function, Instr, InstrId, Module, Operand, RegId, SpecialReg};
use ptx_ir::trip::TripCount;
use ptx_ir::{InstrClass, Space};

use crate::{access, concrete, frequency, sass, simt};
use crate::affine::{Affine, AffineAnalysis, Env, eval_expr};
use crate::model::*;

/// Knobs of the static analysis, each with a documented default.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileOptions {
    /// Trip count assumed for a loop whose count is unknown (data-dependent or from an
    /// argument nobody supplied).
    pub default_trip_count: f64,
    /// Sectors per warp request assumed for a data-dependent global access: 32 (one per
    /// lane) is the worst case for 4-byte elements.
    pub irregular_sectors: f64,
    /// Fraction of the warps reaching a branch whose condition is unknown (data, an
    /// argument not supplied) that run each of its sides: 1 counts both sides, as the
    /// seeds do for divergent branches (Dasgupta 2011 §3.1, Alavani 2023 §4.2).
    pub unknown_branch_probability: f64,
}

impl Default for ProfileOptions {
    fn default() -> ProfileOptions {
        ProfileOptions { default_trip_count: 16.0, irregular_sectors: 32.0, unknown_branch_probability: 1.0 }
    }
}

/// What [`build`] needs besides the module.
#[derive(Debug, Clone)]
pub struct ProfileInput<'a> {
    pub module: &'a Module,
    /// The kernel's PTX name (`.entry` name).
    pub kernel: &'a str,
    /// The profile's `gpu` field; nothing else depends on it.
    pub gpu_id: &'a str,
    /// (major, minor) of the target GPU. Only the shared-memory bank count depends on it
    /// (16 banks on CC 1.x, 32 since), so one profile serves every GPU of a later CC.
    pub compute_capability: (u32, u32),
    pub launch: LaunchConfig,
    /// From `ptxas -v` (or given); `None` → estimated.
    pub resources: Option<Resources>,
    /// The kernel's parameter names in the CUDA source, in order, when known: lets
    /// `--arg n=...` name a parameter as the programmer wrote it.
    pub source_param_names: &'a [String],
    pub demangled: Option<String>,
    pub options: &'a ProfileOptions,
    /// Trip counts the user states for loops ([`StatedTrips`]).
    pub stated_trips: &'a [StatedTrips],
}

/// Builds the profile of one kernel. `None` when the module has no such kernel body.
pub fn build(input: &ProfileInput<'_>) -> Option<KernelProfile> {
    let module = input.module;
    let func = module.function(input.kernel).filter(|f| f.has_body)?;
    let mut assumptions = Vec::new();
    let launch = input.launch.clone();
    assumptions.push(describe_launch(&launch));

    let args = resolve_args(func, &launch.args, input.source_param_names, &mut assumptions);
    let allocated = resolve_array_bytes(func, &launch.array_bytes, input.source_param_names);
    let env = Env { block: launch.block, grid: launch.grid, args: &args };

    // 1–2. Trip counts and block frequencies. The static rules first (`frequency.rs`:
    // exact over the whole grid, or a wide sample of it, where every branch condition was
    // evaluated). Where they leave something to the defaults (a loop whose count is
    // unknown or differs between threads, a branch on a value that changes inside a loop),
    // the warps' control flow is simulated (`simt.rs`) when every branch follows from the
    // launch and the arguments, and its counts replace the static ones.
    let thread_dependent_loops = func.loops.iter().any(|l| match &l.trip_count {
        TripCount::Unknown => true,
        TripCount::Symbolic { launch, .. } => varies_by_thread(launch),
        TripCount::Constant(_) => false,
    });
    let mut static_notes = Vec::new();
    let knobs = LoopKnobs { options: input.options, source_names: input.source_param_names, stated: input.stated_trips };
    let (static_infos, static_trips) = loops(module, func, &env, &knobs, &mut static_notes, None);
    let frequencies =
        frequency::block_frequencies(func, &static_trips, &env, input.options.unknown_branch_probability, input.source_param_names, &mut static_notes);
    // Shared-memory accesses whose bank conflicts the simulation evaluates (`shared_probes`);
    // a stride that changes with a loop is reason enough to simulate.
    let mut affine = AffineAnalysis::new(func, &env);
    let banks = if input.compute_capability.0 <= 1 { 16 } else { 32 };
    // What ptxas issues (`sass.rs`): also which shared loads it merges into one vector load,
    // whose bank conflicts are those of the vector access, not of its scalar parts.
    let folding = sass::analyse(func);
    let vector_widths = folding.vector_widths();
    let (probes, loop_dependent_stride) = shared_probes(func, &mut affine, launch.block, banks, &folding, &vector_widths);
    let sim = if thread_dependent_loops || frequencies.undecided || loop_dependent_stride {
        Some(simt::simulate(func, &env, simt::DEFAULT_BUDGET, &probes))
    } else {
        None
    };
    let (loops_info, freq, active_lanes, shared_ways, reach, busiest) = match sim {
        Some(Ok(s)) => {
            let (infos, _) = loops(module, func, &env, &knobs, &mut assumptions, Some(&s));
            assumptions.push(format!(
                "block executions from simulating the control flow of every warp of {} of the {} blocks (each branch follows from the thread and block indices, the launch and the arguments): a warp executes a block when any of its lanes does, so lanes that disagree cost both paths{}",
                s.blocks_simulated,
                s.grid_blocks,
                if s.iterations_fast_forwarded > 0 {
                    format!(
                        "; {} loop iterations counted without running them, as repeats of the iteration before (same path, every value stepping by the same amount, no comparison reaching its turning point)",
                        s.iterations_fast_forwarded
                    )
                } else {
                    String::new()
                }
            ));
            // Idle lanes only where some are idle (as `frequency.rs` reports them).
            let lanes = s.active_lane_fraction.iter().map(|f| f.filter(|f| *f < 1.0 - 1e-9)).collect();
            // Blocks some threads never run (none that all do, or none runs).
            let reach: Vec<Option<f64>> = s.thread_reach.iter().map(|r| Some(*r).filter(|r| *r > 0.0 && *r < 1.0 - 1e-9)).collect();
            // The busiest warp's executions where some warp runs more than the average.
            let busiest: Vec<Option<f64>> = s
                .busiest_warp_executions
                .iter()
                .zip(&s.warp_executions)
                .map(|(&b, &avg)| Some(b).filter(|b| *b > avg * (1.0 + 1e-9)))
                .collect();
            (infos, s.warp_executions, lanes, s.shared_ways, reach, busiest)
        }
        not_simulated => {
            assumptions.append(&mut static_notes);
            if let (true, Some(Err(why))) = (thread_dependent_loops, &not_simulated) {
                assumptions.push(format!("control flow not simulated ({why}): trip counts and branches follow the static rules"));
            }
            (static_infos, frequencies.executions, frequencies.active_lanes, Default::default(), Vec::new(), Vec::new())
        }
    };
    let freq: Vec<f64> = freq.into_iter().map(saturate).collect();
    if freq.iter().any(|f| *f >= MAX_EXECUTIONS_PER_THREAD) {
        let counts: Vec<String> = loops_info
            .iter()
            .filter(|l| l.assumed_trip_count > 1.0)
            .take(8)
            .map(|l| match l.source_line {
                Some(line) => format!("line {line}: {:.3e}", l.assumed_trip_count),
                None => format!("PTX line {}: {:.3e}", l.ptx_line, l.assumed_trip_count),
            })
            .collect();
        assumptions.push(format!(
            "nested loops multiply to more than {MAX_EXECUTIONS_PER_THREAD:e} executions per thread (trip counts {}): counted as {MAX_EXECUTIONS_PER_THREAD:e}; no time is predicted for such a kernel",
            counts.join(", ")
        ));
    }

    // 3. Counts, as ptxas issues them (contractions and constant operands, `sass.rs`).
    let removed = folding.removed();
    if !removed.is_empty() {
        assumptions.push(format!(
            "counted as ptxas issues them: {} mul + add/sub pair(s) contracted into one FMA each (nvcc's default -fmad=true), {} constant load(s) from fixed addresses folded into their users' operands, {} move(s), address conversion(s) and parameter load(s) that become operands, {} shared load(s) merged into vector loads, {} mul.wide + 64-bit add pair(s) issued as one IMAD.WIDE, {} predicate and/or folded into the comparison that makes its input, {} pair(s) of integer adds issued as one three-input IADD3{}",
            folding.contracted.len(),
            folding.const_operands.len(),
            folding.operands.len(),
            folding.vectorised.len(),
            folding.wide_multiply_adds.len(),
            folding.predicate_combines.len(),
            folding.three_input_adds.len(),
            match folding.partial_unrolls.len() {
                0 => String::new(),
                n => format!(", {n} loop(s) with a run-time trip count unrolled by ptxas 4 more times (their control once per group of copies)"),
            }
        ));
    }
    let mut counts = InstructionCounts::default();
    let mut visiting = HashSet::new();
    let mut budget = Expansions { left: CALL_EXPANSION_BUDGET, exhausted: false };
    // Item 8 of `sass.rs` needs the loops' trip counts: what ptxas issues of a loop it
    // unrolls by 4 depends on how many iterations each entry runs.
    let counted = folding.with_trip_counts(|b| loop_trips(func, b, |li| loops_info.get(li).map(|l| l.assumed_trip_count)));
    accumulate_counts(module, func, &counted, &freq, 1.0, &mut counts, &mut visiting, input.options, 0, &mut budget, &mut assumptions);
    if budget.exhausted {
        assumptions.push(format!(
            "the calls expand to more than {CALL_EXPANSION_BUDGET} callee instructions: the calls past that are counted as the call instruction alone (an approximation)"
        ));
    }
    counts.static_ = issued_class_counts(func, &folding);
    // Each callee's counts once, however often it is called.
    let mut per_callee: HashMap<&str, BTreeMap<InstrClass, u64>> = HashMap::new();
    for c in &func.calls {
        if let Some(callee) = c.callee.as_deref().and_then(|n| module.function(n)) {
            let mix = per_callee.entry(callee.name.as_str()).or_insert_with(|| issued_class_counts(callee, &sass::analyse(callee)));
            for (k, v) in mix.iter() {
                *counts.static_.entry(*k).or_insert(0) += v;
            }
        }
    }

    // 4. Memory accesses.
    let mut memory_accesses = Vec::new();
    // The access each memory instruction makes (`InstrNode::access`).
    let mut access_of: HashMap<InstrId, u32> = HashMap::new();
    let mut n_irregular = 0;
    // Parameters whose allocation bounded a data-dependent access (index → bytes).
    let mut allocation_uses: BTreeMap<u32, u64> = BTreeMap::new();
    let mut choices = concrete::DefChoices::for_function(func);
    for (id, instr) in func.instrs.iter().enumerate() {
        let (kind, space) = match instr.class {
            InstrClass::Load(s) => (AccessKind::Load, s),
            InstrClass::Store(s) => (AccessKind::Store, s),
            InstrClass::Atomic(s) => (AccessKind::Atomic, s),
            _ => continue,
        };
        if space == Space::Param {
            continue;
        }
        let executions = freq.get(instr.block as usize).copied().unwrap_or(0.0);
        if let Some(c) = access::classify_wmma(instr) {
            let (source_file, source_line) = source_of(module, func, id as InstrId);
            // The fragment's address is the warp's (the same in every lane); its rows are
            // `ldm` elements apart (the operand after the address, PTX ISA §9.7.14.4).
            let addr = address_of(func, id as InstrId, &mut affine);
            let ops = func.operands_of(instr);
            let ldm = ops.iter().skip_while(|op| !matches!(op, Operand::Addr { .. })).skip(1).find_map(|op| match op {
                Operand::Imm(v) => Some(*v),
                Operand::Reg(r) => affine.reg_in(*r, instr.block).as_constant(),
                _ => None,
            });
            let pattern = ldm.filter(|l| *l > 0).and_then(|ldm| {
                let mut p = address_pattern(func, instr, &addr, &affine)?;
                p.spans = vec![
                    crate::model::Span { bytes: ldm * c.elem_bytes as i64, count: c.outer },
                    crate::model::Span { bytes: c.elem_bytes as i64, count: c.row_bytes / c.elem_bytes.max(1) },
                ];
                Some(p)
            });
            access_of.insert(id as InstrId, memory_accesses.len() as u32);
            memory_accesses.push(MemoryAccess {
                space,
                kind,
                class: c.class,
                stride_bytes: None,
                bytes_per_thread: c.bytes_per_thread,
                vector_width: 1,
                transactions_per_request: c.sectors * wmma_global_split(space, &c, input.compute_capability),
                bank_conflict_ways: (space == Space::Shared).then_some(1),
                mean_bank_conflict_ways: None,
                l1_wavefronts_per_request: None,
                lines_per_request: None,
                executions,
                spill: None,
                ptx_line: instr.ptx_line,
                source_file,
                source_line,
                same_address_lanes: None,
                data_span_bytes: None,
                active_lane_fraction: active_lanes.get(instr.block as usize).copied().flatten(),
                thread_reach: reach.get(instr.block as usize).copied().flatten(),
                address: pattern,
                constant_operand: None,
                read_only: None,
                warp_aggregated: None,
                integer_atomic: (kind == AccessKind::Atomic).then(|| integer_atomic(instr)),
                pointer_chase: None,
                walk: None,
            });
            continue;
        }
        // A shared load that ptxas merges into an earlier one's vector load (`sass.rs` item
        // 4) is part of that access: the group is one request of its words per lane.
        if folding.vectorised.contains_key(&(id as InstrId)) {
            continue;
        }
        let vector_words = vector_widths.get(&(id as InstrId)).copied();
        let addr = address_of(func, id as InstrId, &mut affine);
        let simulated_ways = shared_ways.get(&(id as InstrId)).copied();
        let bytes = vector_words.map_or_else(|| copy_bytes(func, instr).unwrap_or_else(|| instr.access_bytes()).max(1), |w| 4 * w);
        // The affine form when there is one, else the addresses evaluated lane by lane.
        let lanes = access::lanes_from_affine(&addr, launch.block).or_else(|| concrete::lanes_with(func, id as InstrId, &env, &mut choices));
        let c = match space {
            Space::Shared => access::classify_shared_lanes(lanes.as_ref(), bytes, banks),
            _ => access::classify_global_lanes(lanes.as_ref(), bytes, input.options.irregular_sectors),
        };
        // Atomics serialise on a shared address: the most lanes that hit one.
        let same_address_lanes = match (kind, lanes.as_ref()) {
            (AccessKind::Atomic, Some(l)) if !l.addrs.is_empty() => {
                let mut sorted = l.addrs.clone();
                sorted.sort_unstable();
                let most = sorted.chunk_by(|a, b| a == b).map(<[i64]>::len).max().unwrap_or(1);
                Some(u32::try_from(most).unwrap_or(32))
            }
            _ => None,
        };
        // A data-dependent atomic or global load indexing one table by a bounded value.
        let data_dependent = (kind == AccessKind::Atomic && same_address_lanes.is_none())
            || (kind == AccessKind::Load && c.class == AccessClass::Irregular && space != Space::Shared);
        let data_span_bytes = data_dependent.then(|| crate::index_range::data_span_bytes(func, id as InstrId)).flatten();
        let walk = (kind == AccessKind::Load && c.class == AccessClass::Irregular && matches!(space, Space::Global | Space::Generic) && data_span_bytes.is_none())
            .then(|| walk_of(func, instr))
            .flatten();
        // Else the allocation of its base pointer, where the launch knows it (the host's
        // `cudaMalloc(&x, bytes)`): a gather `x[col[k]]` ranges over `x` whatever the index.
        // Not for a walk (`val[k]` from a loaded row start), whose lanes run through their
        // own runs of the array.
        let allocation = (data_dependent && data_span_bytes.is_none() && walk.is_none() && space != Space::Shared)
            .then(|| crate::index_range::base_param(func, id as InstrId).and_then(|i| allocated.get(&i).map(|b| (i, *b))))
            .flatten();
        if let Some((i, bytes)) = allocation {
            allocation_uses.entry(i).or_insert(bytes);
        }
        let data_span_bytes = data_span_bytes.or(allocation.map(|(_, b)| b));
        // Irregular accesses are charged the worst case, those into a known table its sectors.
        if c.class == AccessClass::Irregular && space != Space::Const && executions > 0.0 && data_span_bytes.is_none() {
            n_irregular += 1;
        }
        // L1 wavefronts of a global (generic) load or store from its lanes' addresses; not
        // for a data-dependent one, nor one whose stride across the warp is a stand-in.
        let l1_wavefronts_per_request = match (space, lanes.as_ref()) {
            (Space::Global | Space::Generic, Some(l)) if !l.unknown_stride && kind != AccessKind::Atomic && c.class != AccessClass::Irregular => {
                Some(access::l1_wavefronts(&l.addrs, i64::from(bytes)))
            }
            _ => None,
        };
        let lines_per_request = l1_wavefronts_per_request.and(lanes.as_ref()).map(|l| access::l1_lines(&l.addrs, i64::from(bytes)) as f64);
        let pattern = address_pattern(func, instr, &addr, &affine);
        let (source_file, source_line) = source_of(module, func, id as InstrId);
        access_of.insert(id as InstrId, memory_accesses.len() as u32);
        memory_accesses.push(MemoryAccess {
            space,
            kind,
            class: c.class,
            l1_wavefronts_per_request,
            lines_per_request,
            stride_bytes: c.stride_bytes,
            bytes_per_thread: bytes,
            vector_width: vector_words.map_or_else(|| instr.vector_width(), |w| u8::try_from(w).unwrap_or(4)),
            transactions_per_request: c.sectors,
            // The simulated warps' conflicts, on the lanes active at each execution, where
            // the simulation evaluated every address; else the static ones.
            bank_conflict_ways: (space == Space::Shared).then(|| simulated_ways.map_or(c.bank_conflict_ways, |w| w.max)),
            mean_bank_conflict_ways: simulated_ways.filter(|_| space == Space::Shared).map(|w| w.mean),
            executions,
            spill: (space == Space::Local).then_some(false),
            ptx_line: instr.ptx_line,
            source_file,
            source_line,
            same_address_lanes,
            data_span_bytes,
            active_lane_fraction: active_lanes.get(instr.block as usize).copied().flatten(),
            thread_reach: reach.get(instr.block as usize).copied().flatten(),
            address: pattern,
            constant_operand: (space == Space::Const).then(|| folding.const_operands.contains(&(id as InstrId))),
            read_only: (space == Space::Global && kind == AccessKind::Load && read_only_path(instr)).then_some(true),
            warp_aggregated: ((kind == AccessKind::Atomic
                && matches!(space, Space::Global | Space::Generic | Space::Shared)
                && warp_aggregatable(instr)
                && lanes.as_ref().is_some_and(|l| !l.unknown_stride && !l.addrs.is_empty() && l.addrs.iter().all(|a| *a == l.addrs[0])))
                || (kind == AccessKind::Atomic && space == Space::Shared && input.compute_capability.0 >= 8 && increments_by_one(func, instr)))
            .then_some(true),
            integer_atomic: (kind == AccessKind::Atomic).then(|| integer_atomic(instr)),
            pointer_chase: (kind == AccessKind::Load
                && matches!(c.class, AccessClass::Irregular | AccessClass::Uniform)
                && matches!(space, Space::Global | Space::Generic)
                && crate::index_range::is_pointer_chase(func, id as InstrId))
            .then_some(true),
            walk,
        });
    }
    if choices.exhausted() {
        assumptions.push(budget_note(func));
    }
    for (i, bytes) in &allocation_uses {
        let name = input.source_param_names.get(*i as usize).cloned().or_else(|| func.params.get(*i as usize).map(|p| p.name.clone())).unwrap_or_default();
        assumptions.push(format!(
            "data-dependent accesses through `{name}` range over its allocation of {bytes} bytes (the host code's before the launch, or an annotation's `bytes.{name}`): served by the cache level that holds that much"
        ));
    }
    if n_irregular > 0 {
        assumptions.push(format!(
            "{n_irregular} data-dependent memory access(es): global ones assumed worst case ({} sectors per request)",
            input.options.irregular_sectors
        ));
    }

    // 5. Divergence.
    let varying = thread_varying(func, &mut affine);
    let exit_branches: HashSet<InstrId> = func.loops.iter().filter_map(|l| l.exit_test.as_ref().map(|t| t.branch)).collect();
    let mut divergent_branches = Vec::new();
    for (id, instr) in func.instrs.iter().enumerate() {
        let Some(guard) = instr.guard else { continue };
        // A branch that never runs (behind a false flag) cannot diverge.
        if !instr.is_branch() || !varying.contains(&guard.reg) || freq.get(instr.block as usize).is_none_or(|f| *f == 0.0) {
            continue;
        }
        let depth = func.loop_depth(instr.block);
        // A loop's own exit test is "in the loop" only if an outer loop surrounds it.
        let in_loop = if exit_branches.contains(&(id as InstrId)) { depth > 1 } else { depth > 0 };
        let (source_file, source_line) = source_of(module, func, id as InstrId);
        divergent_branches.push(BranchInfo { ptx_line: instr.ptx_line, source_file, source_line, in_loop });
    }

    // 6. Resources.
    let resources = match input.resources.clone() {
        Some(r) => r,
        None => {
            let regs = estimate_registers(func);
            assumptions.push(format!(
                "registers estimated from PTX liveness ({regs} per thread; ptxas was not run): an estimate"
            ));
            Resources {
                registers_per_thread: regs,
                static_smem_bytes: u32::try_from(func.static_smem_bytes).unwrap_or(u32::MAX),
                local_bytes_per_thread: u32::try_from(func.local_bytes).unwrap_or(u32::MAX),
                spill_store_bytes: 0,
                spill_load_bytes: 0,
                stack_frame_bytes: u32::try_from(func.local_bytes).unwrap_or(u32::MAX),
                barriers: u32::from(func.instrs.iter().any(|i| i.class == InstrClass::Barrier)),
                source: ResourceSource::Estimate,
            }
        }
    };

    let mut blocks = block_profiles(func, &freq, &folding, &access_of);
    let copies = ptxas_copies(func, &folding, |b| loop_trips(func, b, |li| loops_info.get(li).map(|l| l.assumed_trip_count)));
    for b in &mut blocks {
        b.active_lane_fraction = active_lanes.get(b.id as usize).copied().flatten();
        b.busiest_warp_executions = busiest.get(b.id as usize).copied().flatten();
        b.ptxas_copies = copies.get(&b.id).copied();
    }

    Some(KernelProfile {
        kernel: func.name.clone(),
        demangled: input.demangled.clone(),
        gpu: input.gpu_id.to_string(),
        launch,
        resources,
        counts,
        memory_accesses,
        loops: loops_info,
        divergent_branches,
        blocks,
        assumptions,
    })
}

fn describe_launch(launch: &LaunchConfig) -> String {
    let src = match launch.source {
        LaunchSource::Setting => "from the settings",
        LaunchSource::Annotation => "from a `// warpsight:` annotation",
        LaunchSource::CallSite => "from the launch site",
        LaunchSource::Default => "the default (no launch configuration was found)",
    };
    let (grid, block) = (launch_spec::display_dims(launch.grid), launch_spec::display_dims(launch.block));
    format!("launch grid {grid}, block {block}, dynamic smem {} B: {src}", launch.dynamic_smem)
}

/// Maps the supplied argument values onto parameter indices. A value may name its
/// parameter by source name, PTX name, `param_N` or `N`.
/// How many times a `wmma.load`/`wmma.store` of 16-bit elements to or from global memory
/// moves each of its sectors on compute capability 8.0 and later: ptxas splits the fragment
/// into 32-bit accesses per lane (the pairs of elements of the mma fragment layout, PTX ISA
/// §9.7.14.5.8), each warp instruction covering 8 rows × 4 lanes × 4 bytes, so a 32-byte
/// row sector is read half by one instruction and half by another. nvdisasm (ptxas 13.5,
/// sm_86) of a 16 × 16 × 16 `wmma.load.a` from global memory: four `LDG.E` per lane; Nsight
/// Compute on the RTX 3050 Laptop GPU's direct WMMA GEMM (docs/heldout.md) counts twice the
/// sectors of 16 per fragment. Wider elements (a float accumulator's pairs, 8 bytes a lane)
/// fill their sectors; Volta's fragment layout differs and was not seen: 1 there.
fn wmma_global_split(space: Space, c: &access::Collective, cc: (u32, u32)) -> f64 {
    if matches!(space, Space::Global | Space::Generic) && c.elem_bytes == 2 && cc.0 >= 8 && c.row_bytes >= 32 { 2.0 } else { 1.0 }
}

/// The allocations the launch names ([`LaunchConfig::array_bytes`]) by parameter index,
/// under the names `--arg` accepts (the CUDA name, the PTX name, `param_N`, `N`).
fn resolve_array_bytes(func: &Function, bytes: &BTreeMap<String, u64>, source_names: &[String]) -> HashMap<u32, u64> {
    if bytes.is_empty() {
        return HashMap::new();
    }
    by_parameter(func, bytes, source_names)
}

/// The values of `named` by parameter index, each parameter found under the names `--arg`
/// accepts: its CUDA name, its PTX name, `param_N` and `N`.
fn by_parameter<V: Copy>(func: &Function, named: &BTreeMap<String, V>, source_names: &[String]) -> HashMap<u32, V> {
    let mut res = HashMap::new();
    for (idx, p) in func.params.iter().enumerate() {
        let idx_s = idx.to_string();
        let short = format!("param_{idx}");
        let keys = [source_names.get(idx).map(String::as_str), Some(p.name.as_str()), Some(short.as_str()), Some(idx_s.as_str())];
        if let Some(v) = keys.iter().flatten().find_map(|k| named.get(*k)) {
            res.insert(idx as u32, *v);
        }
    }
    res
}

fn resolve_args(
    func: &Function,
    args: &BTreeMap<String, i64>,
    source_names: &[String],
    assumptions: &mut Vec<String>,
) -> HashMap<u32, i64> {
    let res = by_parameter(func, args, source_names);
    let known: HashSet<String> = func
        .params
        .iter()
        .enumerate()
        .flat_map(|(i, p)| [p.name.clone(), format!("param_{i}"), i.to_string()])
        .chain(source_names.iter().cloned())
        .collect();
    for k in args.keys() {
        if !known.contains(k) {
            assumptions.push(format!("argument `{k}` matches no parameter of `{}`: ignored", func.name));
        }
    }
    res
}

/// Resolves every loop's trip count; returns the profile's loop list and, per loop id, the
/// count used. With a simulation of the control flow (`sim`), the counts are the
/// simulated ones: header executions per entry, averaged over the threads.
fn loops(
    module: &Module,
    func: &Function,
    env: &Env<'_>,
    knobs: &LoopKnobs<'_>,
    assumptions: &mut Vec<String>,
    sim: Option<&simt::Simulated>,
) -> (Vec<LoopInfo>, Vec<f64>) {
    let LoopKnobs { options, source_names, stated } = *knobs;
    let mut infos = Vec::new();
    let mut used = Vec::new();
    let mut choices = concrete::DefChoices::for_function(func);
    let unrolled = unroll_split(func);
    let stated_of = stated_loops(module, func, stated);
    let named: HashSet<*const StatedTrips> = stated_of.values().map(|s| *s as *const StatedTrips).collect();
    let unmatched: Vec<&StatedTrips> = stated.iter().filter(|s| s.in_kernel && !named.contains(&(*s as *const StatedTrips))).collect();
    for s in unmatched.iter().take(MAX_ANNOTATION_NOTES) {
        assumptions.push(format!(
            "the annotation at line {} states {} trips for a loop the PTX does not have: nvcc unrolled it whole (its count is a constant, which the analysis counts) or removed it",
            s.annotation_line, s.trips
        ));
    }
    if unmatched.len() > MAX_ANNOTATION_NOTES {
        assumptions.push(format!("{} more annotations state trips for loops the PTX does not have", unmatched.len() - MAX_ANNOTATION_NOTES));
    }
    for (li, lp) in func.loops.iter().enumerate() {
        let (source_file, source_line) = match lp.loc {
            Some(loc) if loc.line > 0 => (module.file(loc.file).map(str::to_string), Some(loc.line)),
            _ => (None, None),
        };
        let place = match source_line {
            Some(l) => format!("line {l}"),
            None => format!("PTX line {}", lp.ptx_line),
        };
        let stated = stated_of.get(&li).copied();
        // What stands in for a count no analysis reads: the user's statement, else the
        // default; with the words that say which.
        let (fallback, fallback_said) = match stated {
            Some(s) => (s.trips, format!("{} as stated by the annotation at line {}", s.trips, s.annotation_line)),
            None => (options.default_trip_count, format!("assumed {}", options.default_trip_count)),
        };
        let stated_count = stated.map(|s| s.trips);
        let mut fell_back = false;
        let bound = trip_bound(lp, env);
        // The symbolic count, with parameters named as the source does when the CUDA front
        // end told us, and whether it depends on the thread.
        let symbolic = match &lp.trip_count {
            TripCount::Symbolic { expr, formula, launch, .. } => {
                let expr = if source_names.is_empty() {
                    expr.clone()
                } else {
                    formula.render(&|idx, name| source_names.get(idx as usize).cloned().unwrap_or_else(|| ptx_ir::short_param_name(name)))
                };
                let per_thread = varies_by_thread(launch);
                Some((expr, formula, per_thread))
            }
            _ => None,
        };
        let simulated = sim.and_then(|s| s.loops.get(li));
        let (trip_count, trip_count_expr, assumed) = match (simulated, lp.trip_count.clone(), &symbolic) {
            (Some(t), _, _) => {
                let v = t.per_entry.unwrap_or(0.0);
                let range = if t.min == t.max { format!("{} for every thread", t.min) } else { format!("from {} to {} per thread", t.min, t.max) };
                let warps = match t.warp_per_entry {
                    Some(w) if t.per_entry.is_some_and(|v| (w - v).abs() > 1e-6 * v.max(1.0)) => {
                        format!("; the warps run it {w:.2} times per entry (a warp runs as long as its longest lane)")
                    }
                    _ => String::new(),
                };
                // Said where the count is news: it differs between threads, or only the
                // simulation could count it.
                let said = match (&lp.trip_count, &symbolic) {
                    (_, Some((expr, _, true))) => Some(format!("per-thread trip count `{expr}` (its counter starts at a thread-dependent value)")),
                    (TripCount::Unknown, _) => Some(format!(
                        "trip count not known statically ({}); simulated along each thread's path",
                        lp.trip_note.clone().unwrap_or_else(|| "not a counted loop".into())
                    )),
                    _ => None,
                };
                if let Some(said) = said {
                    assumptions.push(match t.per_entry {
                        Some(v) => format!("loop at {place}: {said}: {v:.2} per entry on average over the threads ({range}){warps}"),
                        None => format!("loop at {place}: {said}: no thread enters it"),
                    });
                }
                (Some(v), symbolic.as_ref().map(|(e, _, _)| e.clone()), v)
            }
            (None, TripCount::Constant(c), _) => (Some(c as f64), None, c as f64),
            (None, _, Some((expr, formula, per_thread))) => {
                let (expr, per_thread) = (expr.clone(), *per_thread);
                let value = if per_thread { thread_average(formula, env) } else { eval_expr(formula, env, false).map(|v| (v.max(0.0), v.max(0.0), v.max(0.0))) };
                // Saturated like the block frequencies (huge or non-finite values from
                // huge arguments): the models then refuse the profile.
                let value = value.map(|(v, lo, hi)| (saturate(v), saturate(lo), saturate(hi)));
                match value {
                    Some((v, lo, hi)) => {
                        if per_thread {
                            let range = if lo == hi { format!("{lo} for every thread") } else { format!("from {lo} to {hi} per thread") };
                            assumptions.push(format!(
                                "loop at {place}: per-thread trip count `{expr}` (its counter starts at a thread-dependent value): {v:.2} on average over the threads ({range})"
                            ));
                        }
                        (Some(v), Some(expr), v)
                    }
                    None => {
                        fell_back = true;
                        let hint = if stated.is_some() { "" } else { " (use --arg NAME=VALUE)" };
                        match symbolic_unroll_part(formula) {
                            // One of nvcc's two loops of a source loop unrolled by `u`
                            // (`X & (u-1)` and `(X - (X & (u-1))) / u`): its share of the
                            // source loop's count, as for the unknown counts below.
                            Some((part, u)) => {
                                let n = fallback.max(0.0).round();
                                let v = part.share(n, u);
                                assumptions.push(format!(
                                    "loop at {place}: trip count `{expr}` depends on values not supplied{hint}; it is one of the two loops of a source loop nvcc unrolled by {u}, which runs {n} ({fallback_said}): {v}"
                                ));
                                (stated.map(|_| v), Some(expr), v)
                            }
                            None => {
                                assumptions.push(format!("loop at {place}: trip count `{expr}` depends on values not supplied{hint}: {fallback_said}"));
                                (stated_count, Some(expr), fallback)
                            }
                        }
                    }
                }
            }
            (None, _, None) => match path_dependent_trip(func, lp, env, &mut choices) {
                Some(v) => {
                    assumptions.push(format!(
                        "loop at {place}: its counter's start depends on the path into it (nvcc's remainder loop before an unrolled one); estimated from the first path: {v:.1}"
                    ));
                    (Some(v), None, v)
                }
                None if unrolled.contains_key(&li) => {
                    // One of the two loops nvcc makes of a source loop it unrolls by `u`:
                    // the source loop is taken to run the default count `n`, n mod u
                    // iterations in the remainder loop and n / u in the unrolled one.
                    let (part, u) = unrolled[&li];
                    fell_back = true;
                    let n = fallback.max(0.0).round();
                    let v = part.share(n, u);
                    let why = lp.trip_note.clone().unwrap_or_else(|| "not a counted loop".into());
                    let what = match part {
                        UnrollPart::Remainder => "the remainder loop",
                        UnrollPart::Main => "the unrolled body",
                    };
                    let runs = match stated {
                        Some(s) => format!("which runs {n} as stated by the annotation at line {}", s.annotation_line),
                        None => format!("which is assumed to run {n}"),
                    };
                    assumptions.push(format!("loop at {place}: trip count unknown ({why}); it is {what} of a source loop nvcc unrolled by {u}, {runs}: {v}"));
                    (stated.map(|_| v), None, v)
                }
                None => {
                    fell_back = true;
                    let why = lp.trip_note.clone().unwrap_or_else(|| "not a counted loop".into());
                    match bound {
                        // A counted exit beside the data-dependent one: the loop runs at most
                        // that many times, whatever the default or a statement says.
                        Some(b) if b < fallback => {
                            let over = match stated {
                                Some(s) => format!("the annotation at line {} states {}, more than that", s.annotation_line, s.trips),
                                None => format!("less than the default {}", options.default_trip_count),
                            };
                            assumptions.push(format!("loop at {place}: trip count unknown ({why}); at most {b} (its counted exit, {over}): assumed {b}"));
                            (stated.map(|_| b), None, b)
                        }
                        Some(b) => {
                            assumptions.push(format!("loop at {place}: trip count unknown ({why}); at most {b} (its counted exit): {fallback_said}"));
                            (stated_count, None, fallback)
                        }
                        None => {
                            assumptions.push(format!("loop at {place}: trip count unknown ({why}): {fallback_said}"));
                            (stated_count, None, fallback)
                        }
                    }
                }
            },
        };
        // A statement the analysis did not need: the count it reads wins, and is said.
        let stated_at = match stated {
            Some(s) if fell_back => Some(s.annotation_line),
            Some(s) => {
                assumptions.push(format!(
                    "loop at {place}: the annotation at line {} states {} trips, not used: the analysis reads the count ({assumed})",
                    s.annotation_line, s.trips
                ));
                None
            }
            None => None,
        };
        used.push(assumed);
        let trip_bound = bound.filter(|_| trip_count.is_none() || stated_at.is_some());
        infos.push(LoopInfo { ptx_line: lp.ptx_line, source_file, source_line, depth: lp.depth, trip_count, trip_count_expr, assumed_trip_count: assumed, stated_at, trip_bound });
    }
    if choices.exhausted() {
        assumptions.push(budget_note(func));
    }
    (infos, used)
}

/// Whether a symbolic trip count reads a register that differs between threads (the
/// thread, block or lane index), so that its value is an average over the threads.
fn varies_by_thread(launch: &[SpecialReg]) -> bool {
    launch.iter().any(|s| matches!(s, SpecialReg::Tid(_) | SpecialReg::Ctaid(_) | SpecialReg::LaneId))
}

/// The least of a loop's upper bounds ([`ptx_ir::Loop::trip_bounds`]: its counted exits
/// beside a data-dependent one) that the launch and the arguments evaluate; a bound that
/// differs between threads is averaged over them.
fn trip_bound(lp: &ptx_ir::Loop, env: &Env<'_>) -> Option<f64> {
    lp.trip_bounds
        .iter()
        .filter_map(|b| match b {
            TripCount::Constant(c) => Some(*c as f64),
            TripCount::Symbolic { formula, launch, .. } => {
                if varies_by_thread(launch) {
                    thread_average(formula, env).map(|(v, _, _)| v)
                } else {
                    eval_expr(formula, env, false)
                }
            }
            TripCount::Unknown => None,
        })
        .map(|v| saturate(v.max(0.0)))
        .min_by(f64::total_cmp)
}

/// The loops each statement of a trip count names, by loop index: the loops whose line
/// (the `.loc` of a source loop's back edge, or the PTX line of the header in a PTX text)
/// falls in the lines of the statement's loop head, the outermost of them (a `do` loop's
/// lines hold its body and the loops in it); nvcc's remainder and unrolled loops of one
/// source loop are both named (`unroll_split` shares the count between them).
fn stated_loops<'s>(module: &Module, func: &Function, stated: &'s [StatedTrips]) -> HashMap<usize, &'s StatedTrips> {
    let mut out = HashMap::new();
    if stated.is_empty() {
        return out;
    }
    // The loops by PTX line and by source line (file name, line), sorted for range
    // searches; and by (`.loc`, depth), for nvcc's pairs.
    let mut by_ptx: Vec<(u32, usize)> = func.loops.iter().enumerate().map(|(li, lp)| (lp.ptx_line, li)).collect();
    by_ptx.sort_unstable();
    let mut by_source: Vec<(&str, u32, usize)> = func
        .loops
        .iter()
        .enumerate()
        .filter_map(|(li, lp)| lp.loc.filter(|l| l.line > 0).and_then(|l| Some((module.file(l.file)?, l.line, li))))
        .collect();
    by_source.sort_unstable();
    let key = |li: usize| func.loops[li].loc.filter(|l| l.line > 0).map(|l| (l.file, l.line, func.loops[li].depth));
    let mut pairs: HashMap<(u32, u32, u32), Vec<usize>> = HashMap::new();
    for li in 0..func.loops.len() {
        if let Some(k) = key(li) {
            pairs.entry(k).or_default().push(li);
        }
    }
    for s in stated {
        let (first, last) = s.lines;
        let mut hits: Vec<usize> = match &s.file {
            None => {
                let from = by_ptx.partition_point(|&(l, _)| l < first);
                by_ptx[from..].iter().take_while(|&&(l, _)| l <= last).map(|&(_, li)| li).collect()
            }
            Some(f) => {
                let from = by_source.partition_point(|&(file, l, _)| (file, l) < (f.as_str(), first));
                by_source[from..].iter().take_while(|&&(file, l, _)| file == f.as_str() && l <= last).map(|&(_, _, li)| li).collect()
            }
        };
        // In PTX with line information, the loop named by its header brings the loops of
        // the same source line and depth: nvcc's unrolled loop and its remainder.
        if s.file.is_none() {
            let mut more: Vec<usize> = hits.iter().filter_map(|&li| key(li)).flat_map(|k| pairs.get(&k).into_iter().flatten().copied()).collect();
            hits.append(&mut more);
            hits.sort_unstable();
            hits.dedup();
        }
        let hits: Vec<(usize, u32)> = hits.into_iter().map(|li| (li, func.loops[li].depth)).collect();
        let Some(outer) = hits.iter().map(|h| h.1).min() else { continue };
        for (li, depth) in hits {
            if depth == outer {
                out.entry(li).or_insert(s);
            }
        }
    }
    out
}

/// The assumption recorded when the lane-by-lane evaluation ran out of budget.
fn budget_note(func: &Function) -> String {
    format!(
        "`{}`: lane-by-lane address evaluation stopped after {} steps per instruction; the rest counted as data-dependent (an approximation for very long kernels with much-redefined registers)",
        func.name,
        concrete::DefChoices::STEPS_PER_INSTRUCTION
    )
}

/// A per-thread trip count averaged exactly over the threads of a block (and over sampled
/// blocks when it depends on the block index, weighted as in [`simt`]), each thread's count
/// at least 0 (a thread whose count is not positive does not enter the loop): (average,
/// least, most). `None` when a leaf has no value.
fn thread_average(formula: &ptx_ir::Expr, env: &Env<'_>) -> Option<(f64, f64, f64)> {
    use ptx_ir::ir::Dim;
    use ptx_ir::trip::Leaf;
    let mut uses_ctaid = false;
    formula.visit_leaves(&mut |leaf| uses_ctaid |= matches!(leaf, Leaf::Special(SpecialReg::Ctaid(_))));
    let grid = env.grid.map(|g| u64::from(g.max(1)));
    let k = simt::samples_per_dimension(grid);
    let blocks: Vec<([i64; 3], u64)> = if uses_ctaid {
        let (sx, sy, sz) = (simt::samples(grid[0], k), simt::samples(grid[1], k), simt::samples(grid[2], k));
        let mut v = Vec::new();
        for &(z, wz) in &sz {
            for &(y, wy) in &sy {
                for &(x, wx) in &sx {
                    v.push(([x as i64, y as i64, z as i64], wx * wy * wz));
                }
            }
        }
        v
    } else {
        vec![([0, 0, 0], 1)]
    };
    // At most a block's worth of threads (1024, what any GPU launches).
    let block = env.block.map(|b| i64::from(b.clamp(1, 1024)));
    let threads = (block[0] * block[1] * block[2]).min(1024);
    let pick = |v: [i64; 3], d: Dim| match d {
        Dim::X => v[0],
        Dim::Y => v[1],
        Dim::Z => v[2],
    };
    let (mut sum, mut weight, mut lo, mut hi) = (0.0, 0.0, f64::INFINITY, f64::NEG_INFINITY);
    for (ctaid, w) in blocks {
        for t in 0..threads {
            let tid = [t % block[0], (t / block[0]) % block[1], t / (block[0] * block[1])];
            let v = formula.eval(&|leaf| match leaf {
                Leaf::Special(SpecialReg::Tid(d)) => Some(pick(tid, d) as f64),
                Leaf::Special(SpecialReg::Ctaid(d)) => Some(pick(ctaid, d) as f64),
                Leaf::Special(SpecialReg::LaneId) => Some((t % 32) as f64),
                Leaf::Param { index, .. } => env.args.get(&index).map(|v| *v as f64),
                Leaf::Special(s) => eval_expr(&ptx_ir::Expr::Special(s), env, false),
            })?;
            let v = v.max(0.0);
            sum += v * w as f64;
            weight += w as f64;
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    (weight > 0.0).then(|| (sum / weight, lo, hi))
}

/// The walk of a load whose address register is an induction variable of the innermost
/// loop around it with a constant step ([`MemoryAccess::walk`]).
fn walk_of(func: &Function, instr: &ptx_ir::ir::Instr) -> Option<Walk> {
    let reg = crate::index_range::address_register(func, instr)?;
    let (li, lp) = func.loops.iter().enumerate().filter(|(_, l)| l.contains(instr.block)).max_by_key(|(_, l)| l.depth)?;
    let iv = lp.induction_vars.iter().find(|v| v.reg == reg)?;
    match iv.step {
        ptx_ir::trip::Expr::Const(step) if step != 0 => Some(Walk { loop_index: u32::try_from(li).ok()?, pointer: func.reg_name(reg).to_string(), bytes_per_iteration: step }),
        _ => None,
    }
}

/// The most annotations said one by one (a file of many comments naming no loop would
/// otherwise bury the other assumptions); the rest are counted in one line.
pub const MAX_ANNOTATION_NOTES: usize = 8;

/// What [`loops`] reads besides the function: the options (the default count), the
/// parameter names of the source (for the formulas' text) and the counts the user states.
#[derive(Clone, Copy)]
struct LoopKnobs<'a> {
    options: &'a ProfileOptions,
    source_names: &'a [String],
    stated: &'a [StatedTrips],
}

/// Which of nvcc's two loops of a source loop unrolled by `u` a symbolic count is: the
/// remainder loop's `X & (u − 1)`, or the unrolled loop's `(X − (X & (u − 1))) / u`, with
/// `u` a power of two from 2 to 32 (what nvcc emits for `for (j = 0; j < m; ++j)`).
fn symbolic_unroll_part(formula: &ptx_ir::Expr) -> Option<(UnrollPart, u32)> {
    use ptx_ir::trip::{BinOp, Expr};
    let mask = |e: &Expr| match e {
        Expr::Bin(BinOp::And, _, c) => match **c {
            Expr::Const(m) if (1..=31).contains(&m) && (m + 1).count_ones() == 1 => Some((m + 1) as u32),
            _ => None,
        },
        _ => None,
    };
    // In the form a person writes it: the trip-count formula's `x - 0`, `ceil(x / 1)`
    // and the compiler's signed division idiom dropped.
    let formula = formula.simplified();
    if let Some(u) = mask(&formula) {
        return Some((UnrollPart::Remainder, u));
    }
    match &formula {
        Expr::Bin(BinOp::Div | BinOp::CeilDiv, num, den) => match (&**num, &**den) {
            (Expr::Bin(BinOp::Sub, _, masked), Expr::Const(d)) if mask(masked) == Some(*d as u32) => Some((UnrollPart::Main, *d as u32)),
            _ => None,
        },
        _ => None,
    }
}

/// Which half of nvcc's unrolled loop a loop is (see [`unroll_split`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UnrollPart {
    /// `n mod u` iterations, one at a time (`.pragma "nounroll"` in the PTX).
    Remainder,
    /// `n / u` iterations of `u` copies of the body.
    Main,
}

impl UnrollPart {
    /// This loop's iterations when the source loop, unrolled by `u`, runs `n` times.
    fn share(self, n: f64, u: u32) -> f64 {
        match self {
            UnrollPart::Remainder => n % f64::from(u),
            UnrollPart::Main => (n / f64::from(u)).floor(),
        }
    }
}

/// The loops of `func` that nvcc made of one source loop it unrolled by `u` (its default
/// `#pragma unroll 4`, or the pragma's factor), by loop index, when the count is known to
/// neither: a remainder loop whose counter starts at `x & (u − 1)` (set outside the loop)
/// and steps by −1 to 0, and a loop of the same source line with a counter that steps by
/// ±u. nvcc emits both for `for (k = start; k < end; ++k)` with a data-dependent
/// `end` (a CSR row's nonzeros); each then gets its share of the default count instead of
/// the whole default each (five times it for u = 4).
fn unroll_split(func: &Function) -> HashMap<usize, (UnrollPart, u32)> {
    use ptx_ir::CmpOp;
    use ptx_ir::trip::Expr;
    let line = |lp: &ptx_ir::Loop| lp.loc.map(|l| (l.file, l.line)).filter(|(_, l)| *l > 0);
    fn const_steps(lp: &ptx_ir::Loop) -> impl Iterator<Item = u64> + '_ {
        lp.induction_vars.iter().filter_map(|v| match v.step {
            Expr::Const(c) if c != 0 => Some(c.unsigned_abs()),
            _ => None,
        })
    }
    fn step_of(lp: &ptx_ir::Loop) -> Option<(&ptx_ir::ExitTest, i64)> {
        let test = lp.exit_test.as_ref()?;
        match lp.induction_vars.iter().find(|v| v.reg == test.iv)?.step {
            Expr::Const(c) => Some((test, c)),
            _ => None,
        }
    }
    // Remainder loops: (source line, u) by loop index.
    let mut remainders = BTreeMap::new();
    for (li, lp) in func.loops.iter().enumerate() {
        if !matches!(lp.trip_count, TripCount::Unknown) {
            continue;
        }
        let (Some(at), Some((test, -1))) = (line(lp), step_of(lp)) else { continue };
        if test.op != CmpOp::Ne || test.bound != Expr::Const(0) {
            continue;
        }
        let mask = func.defs_of(test.iv).iter().filter_map(|&d| func.instrs.get(d as usize)).filter(|i| !lp.contains(i.block)).find_map(|i| match (i.base(), func.operands_of(i)) {
            ("and", [_, _, Operand::Imm(m)]) => Some(*m),
            _ => None,
        });
        if let Some(m) = mask.filter(|m| (1..=31).contains(m) && (m + 1).count_ones() == 1) {
            remainders.insert(li, (at, (m + 1) as u32));
        }
    }
    let mut out = HashMap::new();
    for (li, lp) in func.loops.iter().enumerate() {
        if !matches!(lp.trip_count, TripCount::Unknown) || remainders.contains_key(&li) {
            continue;
        }
        // Its variables step u times as far as the remainder loop's (an index by u where the
        // source loop steps by 1, by 128 where it strides by 32); with a data-dependent
        // bound there is no exit test to name the counter, so any induction variable.
        let Some(at) = line(lp) else { continue };
        let steps: Vec<u64> = const_steps(lp).collect();
        if let Some((&ri, &(_, u))) = remainders.iter().find(|(ri, (l, u))| {
            *l == at && func.loops.get(**ri).is_some_and(|r| const_steps(r).any(|s| steps.contains(&(s * u64::from(*u)))))
        }) {
            out.insert(li, (UnrollPart::Main, u));
            out.insert(ri, (UnrollPart::Remainder, u));
        }
    }
    out
}

/// The trip count of a counted loop whose counter enters on several paths (the main loop
/// of nvcc's unroll-by-N after its remainder loop): the exit test and step are known, the
/// start is taken from the counter's outermost definition, averaged over a warp's lanes.
/// It overestimates by at most the remainder's iterations divided by the unroll factor.
fn path_dependent_trip(func: &Function, lp: &ptx_ir::Loop, env: &Env<'_>, choices: &mut concrete::DefChoices) -> Option<f64> {
    use ptx_ir::CmpOp;
    let test = lp.exit_test.as_ref()?;
    let iv = lp.induction_vars.iter().find(|v| v.reg == test.iv)?;
    let step = eval_expr(&iv.step, env, true)?;
    let bound = eval_expr(&test.bound, env, true)?;
    let init = concrete::initial_value_avg_with(func, test.iv, env, choices)?;
    if step == 0.0 {
        return None;
    }
    let span = match test.op {
        CmpOp::Lt | CmpOp::Gt | CmpOp::Ne => (bound - init) / step,
        CmpOp::Le | CmpOp::Ge => (bound - init) / step + 1.0,
        CmpOp::Eq => return None,
    };
    if span.is_nan() {
        return None;
    }
    let trips = span.ceil().clamp(0.0, MAX_EXECUTIONS_PER_THREAD);
    // A bottom-tested loop (the compared value is the updated one) runs at least once.
    Some(if test.offset_steps > 0 { trips.max(1.0) } else { trips })
}

/// The iterations per entry of the loop that block `block` forms on its own (a loop whose
/// header is the block and whose only block it is), from `trips` by loop index.
fn loop_trips(func: &Function, block: ptx_ir::ir::BlockId, trips: impl Fn(usize) -> Option<f64>) -> Option<f64> {
    let li = func.loops.iter().position(|l| l.header == block && l.blocks == [block])?;
    trips(li)
}

/// [`BlockProfile::ptxas_copies`] of the loops ptxas unrolls by 4 more (`sass.rs`, item 8),
/// by block: the PTX iterations per pass through the unrolled code ([`sass::partial_unroll_issues`]'s
/// groups over an entry's `trips_of` iterations), for the loops none of whose off-chip
/// loads takes its address from a load of the loop.
fn ptxas_copies(func: &Function, folding: &sass::Folding, trips_of: impl Fn(ptx_ir::ir::BlockId) -> Option<f64>) -> HashMap<u32, f64> {
    let mut res = HashMap::new();
    for l in &folding.partial_unrolls {
        let Some(t) = trips_of(l.block).filter(|t| t.is_finite() && *t >= 1.0) else { continue };
        let Some(block) = func.blocks.get(l.block as usize) else { continue };
        if chases_a_load(func, block.instrs.start..block.instrs.end) {
            continue;
        }
        let (groups, _) = sass::partial_unroll_issues(t);
        let copies = t.round().max(1.0) / groups.max(1.0);
        if copies > 1.0 {
            res.insert(l.block, copies);
        }
    }
    res
}

/// Whether an off-chip load of a one-block loop (the instructions `ids`) takes its address,
/// through the loop's own instructions (this iteration's or the last one's), from a load:
/// a pointer chase, whose iterations cannot overlap their loads.
fn chases_a_load(func: &Function, ids: std::ops::Range<InstrId>) -> bool {
    let mut defs: HashMap<RegId, Vec<InstrId>> = HashMap::new();
    for id in ids.clone() {
        if let Some(instr) = func.instr(id) {
            for d in func.dsts(instr) {
                defs.entry(*d).or_default().push(id);
            }
        }
    }
    let is_load = |i: &Instr| matches!(i.class, InstrClass::Load(s) if !matches!(s, Space::Param | Space::Const));
    ids.filter_map(|id| func.instr(id)).filter(|i| matches!(i.class, InstrClass::Load(s) if !matches!(s, Space::Param | Space::Const | Space::Shared))).any(|load| {
        let mut seen: HashSet<InstrId> = HashSet::new();
        let mut todo: Vec<RegId> = func.srcs(load).to_vec();
        while let Some(r) = todo.pop() {
            for &d in defs.get(&r).into_iter().flatten() {
                if !seen.insert(d) {
                    continue;
                }
                let Some(def) = func.instr(d) else { continue };
                if is_load(def) {
                    return true;
                }
                todo.extend_from_slice(func.srcs(def));
            }
        }
        false
    })
}

/// A count clamped to `0..=`[`MAX_EXECUTIONS_PER_THREAD`] (NaN, from `0 × ∞`, counts 0).
fn saturate(n: f64) -> f64 {
    if n.is_nan() { 0.0 } else { n.clamp(0.0, MAX_EXECUTIONS_PER_THREAD) }
}

/// Callee instructions the dynamic counts may visit through calls, over a whole kernel.
/// Each call is expanded into its callee (up to 8 deep), so a call tree that fans out at
/// every level grows exponentially: ten calls per function eight levels deep is 10^8
/// expansions (minutes; twenty calls per function, days). Past the budget (about half a
/// second of work), further calls are counted as their call instruction only, as a
/// too-deep or recursive call is, and the profile says so. Real kernels need a few
/// thousand.
pub(crate) const CALL_EXPANSION_BUDGET: u64 = 1 << 23;

/// What is left of [`CALL_EXPANSION_BUDGET`], and whether a call went unexpanded for it.
struct Expansions {
    left: u64,
    exhausted: bool,
}

#[allow(clippy::too_many_arguments)]
fn accumulate_counts(
    module: &Module,
    func: &Function,
    folding: &sass::Folding,
    freq: &[f64],
    scale: f64,
    counts: &mut InstructionCounts,
    visiting: &mut HashSet<String>,
    options: &ProfileOptions,
    depth: u32,
    budget: &mut Expansions,
    assumptions: &mut Vec<String>,
) {
    visiting.insert(func.name.clone());
    let removed = folding.removed();
    for (id, instr) in func.instrs.iter().enumerate() {
        let n = saturate(freq.get(instr.block as usize).copied().unwrap_or(0.0) * scale);
        if n == 0.0 || removed.contains(&(id as InstrId)) {
            continue;
        }
        // Issued beyond itself per execution (`sass.rs` item 8: the dispatch of a loop
        // unrolled by 4, spread over its iterations).
        for (class, k) in folding.extra_per_execution.get(&(id as InstrId)).map_or(&[][..], Vec::as_slice) {
            *counts.dynamic.entry(*class).or_insert(0.0) += n * k;
        }
        // Issued less often than its block runs (`sass.rs` items 7 and 8: merged across
        // copies, loop control once per group of copies).
        let n = n * folding.issue_share.get(&(id as InstrId)).copied().unwrap_or(1.0);
        *counts.dynamic.entry(instr.class).or_insert(0.0) += n;
        // What ptxas expands it into beyond itself (`sass.rs` item 6).
        for (class, k) in folding.expansions.get(&(id as InstrId)).copied().unwrap_or(&[]) {
            *counts.dynamic.entry(*class).or_insert(0.0) += n * f64::from(*k);
        }
        match instr.class {
            InstrClass::Barrier => counts.barriers += n,
            InstrClass::Fence => counts.fences += n,
            InstrClass::Atomic(_) => counts.atomics += n,
            _ => {}
        }
    }
    for call in &func.calls {
        let Some(instr) = func.instr(call.instr) else { continue };
        let n = saturate(freq.get(instr.block as usize).copied().unwrap_or(0.0) * scale);
        let callee = call.callee.as_deref().and_then(|name| module.function(name)).filter(|f| f.has_body);
        let cost = callee.map_or(0, |c| c.instrs.len() as u64 + 1);
        match callee {
            Some(callee) if depth < 8 && !visiting.contains(&callee.name) && budget.left < cost => budget.exhausted = true,
            Some(callee) if depth < 8 && !visiting.contains(&callee.name) => {
                budget.left -= cost;
                crate::work::add(cost);
                // The callee's loops see no argument values: their unknown counts take the
                // default.
                let env_args = HashMap::new();
                let env = Env { block: [1, 1, 1], grid: [1, 1, 1], args: &env_args };
                let mut sink = Vec::new();
                let (_, trips) = loops(module, callee, &env, &LoopKnobs { options, source_names: &[], stated: &[] }, &mut sink, None);
                let cfreq = frequency::loop_products(callee, &trips);
                let folding = sass::analyse(callee).with_trip_counts(|b| loop_trips(callee, b, |li| trips.get(li).copied()));
                accumulate_counts(module, callee, &folding, &cfreq, n, counts, visiting, options, depth + 1, budget, assumptions);
            }
            Some(callee) => assumptions.push(format!("recursive call to `{}` counted once", callee.name)),
            None => {
                let what = call.callee.clone().unwrap_or_else(|| "an indirect target".into());
                assumptions.push(format!("call to {what}: its body is not in this module and is not counted"));
            }
        }
    }
    visiting.remove(&func.name);
}

/// Instructions by class as ptxas issues them: the text's, less what [`sass`] folds
/// (`removed`, of this function).
fn issued_class_counts(func: &Function, folding: &sass::Folding) -> BTreeMap<InstrClass, u64> {
    let removed = folding.removed();
    let mut res = func.class_counts();
    for (id, e) in &folding.expansions {
        if removed.contains(id) {
            continue;
        }
        for (class, k) in e.iter() {
            *res.entry(*class).or_insert(0) += u64::from(*k);
        }
    }
    for &id in &removed {
        if let Some(c) = func.instr(id).map(|i| i.class)
            && let Some(n) = res.get_mut(&c)
        {
            *n = n.saturating_sub(1);
            if *n == 0 {
                res.remove(&c);
            }
        }
    }
    res
}

/// The array an affine address touches and its coefficients in bytes
/// ([`AddressPattern`]); `None` when the address is not affine or has no recognisable base
/// (a pointer parameter or a module variable).
fn address_pattern(func: &Function, instr: &ptx_ir::Instr, addr: &Affine, affine: &AffineAnalysis<'_, '_>) -> Option<AddressPattern> {
    use crate::affine::Var;
    use ptx_ir::ir::Dim;
    if addr.irregular {
        return None;
    }
    let reads_global_source = instr.base() == "cp" && matches!(instr.class, InstrClass::Load(Space::Global));
    let addrs: Vec<&Operand> = func.operands_of(instr).iter().filter(|op| matches!(op, Operand::Addr { .. })).collect();
    let operand = if reads_global_source { addrs.last().copied() } else { addrs.first().copied() };
    let mut base = match operand {
        Some(Operand::Addr { base: AddrBase::Symbol(s), .. }) => Some(s.to_string()),
        _ => None,
    };
    let dim = |d: Dim| match d {
        Dim::X => 0,
        Dim::Y => 1,
        Dim::Z => 2,
    };
    let mut p = AddressPattern { base: String::new(), tid: [0; 3], ctaid: [0; 3], lane: 0, ctaid_mod: Vec::new(), ctaid_div: Vec::new(), tid_x_parts: Vec::new(), loops: Vec::new(), offset: addr.constant, partial: !addr.unknown.is_empty(), spans: Vec::new() };
    for (var, coeff) in &addr.terms {
        match var {
            Var::Tid(d) => p.tid[dim(*d)] = *coeff,
            Var::Ctaid(d) => p.ctaid[dim(*d)] = *coeff,
            Var::CtaidMod(d, m) => p.ctaid_mod.push(crate::model::CtaidModStride { dim: dim(*d) as u8, modulus: *m, bytes: *coeff }),
            Var::CtaidDiv(d, m) => p.ctaid_div.push(crate::model::CtaidModStride { dim: dim(*d) as u8, modulus: *m, bytes: *coeff }),
            Var::Lane => p.lane = *coeff,
            Var::TidXDiv(k) => p.tid_x_parts.push(crate::model::TidXPart { op: crate::model::TidXOp::Div, k: *k, bytes: *coeff, dim: 0 }),
            Var::TidXMod(k) => p.tid_x_parts.push(crate::model::TidXPart { op: crate::model::TidXOp::Mod, k: *k, bytes: *coeff, dim: 0 }),
            Var::TidYDiv(k) => p.tid_x_parts.push(crate::model::TidXPart { op: crate::model::TidXOp::Div, k: *k, bytes: *coeff, dim: 1 }),
            Var::TidYMod(k) => p.tid_x_parts.push(crate::model::TidXPart { op: crate::model::TidXOp::Mod, k: *k, bytes: *coeff, dim: 1 }),
            Var::Iter(l) => p.loops.push(LoopStride { loop_index: *l, bytes_per_iteration: *coeff }),
            Var::Uniform(id) => {
                // A pointer parameter or a variable, added once: the array's base.
                let key = affine.uniform_key(*id).unwrap_or("");
                let named = if let Some(name) = key.strip_prefix("param:") {
                    func.param_index(name).filter(|i| func.params.get(*i as usize).is_some_and(|prm| prm.ty.ends_with("64"))).map(|i| format!("param_{i}"))
                } else {
                    key.strip_prefix("sym:").map(str::to_string)
                };
                match named {
                    Some(n) if *coeff == 1 && base.is_none() => base = Some(n),
                    _ => p.partial = true,
                }
            }
            Var::SelfRef(_) => p.partial = true,
        }
    }
    p.base = base?;
    Some(p)
}

/// `cp.async ... [dst], [src], cp-size`: the bytes each thread copies.
fn copy_bytes(func: &Function, instr: &ptx_ir::Instr) -> Option<u32> {
    if instr.base() != "cp" {
        return None;
    }
    func.operands_of(instr).iter().skip(2).find_map(Operand::imm).and_then(|v| u32::try_from(v).ok())
}

/// The shared-memory accesses (not `wmma`) whose bank conflicts the static lanes cannot
/// settle: a stride across the warp that depends on a loop's value (`s[2 * stride * tid]`,
/// assumed large), an address that is not affine, or a conflict (which fewer active lanes may
/// lessen). The simulation evaluates their addresses lane by lane at every warp execution,
/// with the 32 banks of CC 2.0 and later (none on CC 1.x, whose 16 it does not model).
/// Also whether any has a loop-dependent stride.
fn shared_probes(
    func: &Function,
    affine: &mut AffineAnalysis<'_, '_>,
    block: [u32; 3],
    banks: u32,
    folding: &sass::Folding,
    vector_widths: &HashMap<InstrId, u32>,
) -> (HashMap<InstrId, i64>, bool) {
    let mut probes = HashMap::new();
    let mut loop_dependent = false;
    if banks != 32 {
        return (probes, loop_dependent);
    }
    for (id, instr) in func.instrs.iter().enumerate() {
        let shared = matches!(instr.class, InstrClass::Load(Space::Shared) | InstrClass::Store(Space::Shared) | InstrClass::Atomic(Space::Shared));
        // A load merged into a vector load is probed as the vector load, by its first.
        if !shared || instr.base() == "wmma" || folding.vectorised.contains_key(&(id as InstrId)) {
            continue;
        }
        let bytes = vector_widths.get(&(id as InstrId)).map_or_else(|| i64::from(instr.access_bytes().max(1)), |w| 4 * i64::from(*w));
        let addr = address_of(func, id as InstrId, affine);
        let probe = match access::lanes_from_affine(&addr, block) {
            Some(l) => {
                loop_dependent |= l.unknown_stride;
                l.unknown_stride || access::bank_conflict_ways(&l.addrs, bytes, 32, 0) > 1
            }
            None => true,
        };
        if probe {
            probes.insert(id as InstrId, bytes);
        }
    }
    (probes, loop_dependent)
}

/// The affine address of a memory instruction (for `cp.async` from global memory, its
/// source address: the global side of the copy).
fn address_of(func: &Function, id: InstrId, affine: &mut AffineAnalysis<'_, '_>) -> Affine {
    let Some(instr) = func.instr(id) else { return Affine::irregular() };
    let ops = func.operands_of(instr);
    let reads_global_source = instr.base() == "cp" && matches!(instr.class, InstrClass::Load(Space::Global));
    let addrs: Vec<&Operand> = ops.iter().filter(|op| matches!(op, Operand::Addr { .. })).collect();
    let chosen = if reads_global_source { addrs.last().copied() } else { addrs.first().copied() };
    if let Some(Operand::Addr { base, offset }) = chosen {
        {
            let base = match base {
                AddrBase::Reg(r) => affine.reg_in(*r, instr.block),
                // A named variable: its own base is aligned; only the offset matters for
                // coalescing and banks.
                AddrBase::Symbol(_) | AddrBase::Absolute => Affine::constant(0),
            };
            let mut res = base;
            res.constant = res.constant.wrapping_add(*offset);
            return res;
        }
    }
    Affine::irregular()
}

/// The source line of an instruction. Code inlined from another file (the `atomicAdd` of
/// CUDA's `device_atomic_functions.hpp`, a helper in a header) is placed at its call site
/// when that is in the kernel's own file (`.loc ..., inlined_at FILE LINE COL`, PTX ISA
/// "Debugging Directives: .loc"): the line the user wrote, where the editor shows it.
fn source_of(module: &Module, func: &Function, id: InstrId) -> (Option<String>, Option<u32>) {
    match func.instr(id).and_then(|i| func.loc(i)) {
        Some(loc) if loc.line > 0 => match loc.inlined_at {
            Some((file, line, _)) if file != loc.file && line > 0 && Some(file) == kernel_file(func) => {
                (module.file(file).map(str::to_string), Some(line))
            }
            _ => (module.file(loc.file).map(str::to_string), Some(loc.line)),
        },
        _ => (None, None),
    }
}

/// The `.file` index of the kernel's own code: that of its first source line not inlined
/// from elsewhere.
fn kernel_file(func: &Function) -> Option<u32> {
    func.locs.iter().find(|l| l.line > 0 && l.inlined_at.is_none()).map(|l| l.file)
}

/// Registers whose value can differ between the threads of a warp.
fn thread_varying(func: &Function, affine: &mut AffineAnalysis<'_, '_>) -> HashSet<RegId> {
    let mut varying: HashSet<RegId> = func
        .registers
        .iter()
        .enumerate()
        .filter(|(_, r)| matches!(r.special, Some(SpecialReg::Tid(_) | SpecialReg::LaneId)))
        .map(|(i, _)| i as RegId)
        .collect();
    // Values that differ per thread by nature, whatever their inputs.
    for (id, instr) in func.instrs.iter().enumerate() {
        let per_thread = match instr.class {
            InstrClass::Atomic(_) => true,
            InstrClass::Load(Space::Param | Space::Const) => false,
            InstrClass::Load(_) => !address_of(func, id as InstrId, affine).is_warp_uniform(),
            InstrClass::WarpLevel => matches!(instr.base(), "shfl" | "match"),
            _ => false,
        };
        if per_thread {
            varying.extend(func.dsts(instr).iter().copied());
        }
    }
    // Propagate through data flow to the least fixed point: an instruction with a varying
    // data source makes its destinations varying. A worklist over the readers of each
    // newly varying register reaches the same (unique) fixed point as repeated sweeps over
    // the whole function, in one visit per (register, reader) instead of one sweep per
    // step of the longest chain against program order.
    let mut readers: HashMap<RegId, Vec<InstrId>> = HashMap::new();
    for (id, instr) in func.instrs.iter().enumerate() {
        if matches!(instr.class, InstrClass::WarpLevel) && matches!(instr.base(), "vote" | "redux" | "activemask") {
            continue; // Warp-wide results are the same in every lane.
        }
        if instr.class.is_memory() {
            continue; // Handled above from the address.
        }
        let srcs = func.srcs(instr);
        // The guard only decides whether the instruction runs; a predicated `mov` in a
        // uniform `if` still writes a uniform value.
        let data_srcs: &[RegId] = match instr.guard {
            Some(g) => {
                let n = srcs.len();
                if n > 0 && srcs[n - 1] == g.reg { &srcs[..n - 1] } else { srcs }
            }
            None => srcs,
        };
        for s in data_srcs {
            readers.entry(*s).or_default().push(id as InstrId);
        }
    }
    let mut work: Vec<RegId> = varying.iter().copied().collect();
    while let Some(r) = work.pop() {
        for &id in readers.get(&r).map_or(&[][..], Vec::as_slice) {
            crate::work::add(1);
            let Some(instr) = func.instr(id) else { continue };
            for d in func.dsts(instr) {
                if varying.insert(*d) {
                    work.push(*d);
                }
            }
        }
    }
    varying
}

/// A 32-bit integer add, min, max, and, or or xor of an atomic (`atom.add.u32`,
/// `red.global.max.s32`, `atom.or.b32`): the operations ptxas aggregates over a warp on one
/// address (`MemoryAccess::warp_aggregated`); not the 64-bit ones, `inc`, `exch` or `cas`
/// (nvdisasm: one `RED.E.ADD.64`, `RED.E.INC`, `ATOMG.E.EXCH` per lane).
fn warp_aggregatable(instr: &ptx_ir::ir::Instr) -> bool {
    let parts: Vec<&str> = instr.opcode.split('.').collect();
    parts.iter().any(|p| matches!(*p, "add" | "min" | "max" | "and" | "or" | "xor")) && parts.iter().any(|p| matches!(*p, "u32" | "s32" | "b32"))
}

/// A 32-bit integer atomic add of the constant 1 (`atomicAdd(&bins[v], 1)`), which ptxas
/// issues on shared memory from compute capability 8.0 on as `ATOMS.POPC.INC.32`: the lanes
/// on one address are one operation, whatever the data (nvdisasm, ptxas 13.5, of a shared
/// histogram for sm_80, sm_86, sm_89 and sm_90; for sm_75 the same source is one
/// `ATOMS.ADD` per lane, which serialise on one address).
fn increments_by_one(func: &Function, instr: &ptx_ir::ir::Instr) -> bool {
    let parts: Vec<&str> = instr.opcode.split('.').collect();
    parts.contains(&"add") && parts.iter().any(|p| matches!(*p, "u32" | "s32")) && func.operands_of(instr).last() == Some(&Operand::Imm(1))
}

/// An atomic on integer or bit data (`.u32`, `.s64`, `.b32`...), not on floating-point data.
fn integer_atomic(instr: &ptx_ir::ir::Instr) -> bool {
    !instr.opcode.split('.').any(|p| p.starts_with('f') || p.starts_with("bf") || p.starts_with("e4") || p.starts_with("e5"))
}

/// A load through the read-only data path: `ld.global.nc` or `ldu` (PTX ISA, `ld.global.nc`
/// and `ldu`).
fn read_only_path(instr: &ptx_ir::ir::Instr) -> bool {
    instr.base() == "ldu" || instr.opcode.split('.').any(|m| m == "nc")
}

/// Per basic block, the instructions and their in-block dependences (for list scheduling),
/// as ptxas issues them: a contracted `mul` + `add` is one `fma` node that depends on the
/// `mul`'s inputs too; a constant load folded into an operand is no node.
#[cfg(test)]
pub(crate) fn block_profiles_for_test(func: &Function, folding: &sass::Folding) -> Vec<BlockProfile> {
    block_profiles(func, &vec![1.0; func.blocks.len()], folding, &HashMap::new())
}

fn block_profiles(func: &Function, freq: &[f64], folding: &sass::Folding, access_of: &HashMap<InstrId, u32>) -> Vec<BlockProfile> {
    let removed = folding.removed();
    // Every register some instruction reads: an atomic whose destinations are none of
    // them returns a value nobody waits for.
    let read: HashSet<RegId> = func.blocks.iter().flat_map(|b| b.instrs.start..b.instrs.end).filter_map(|id| func.instr(id)).flat_map(|i| func.srcs(i).iter().copied()).collect();
    let mut res = Vec::new();
    for (b, block) in func.blocks.iter().enumerate() {
        if !block.reachable {
            continue;
        }
        // Register → the node positions its value depends on within the block.
        let mut last_def: HashMap<RegId, Vec<u32>> = HashMap::new();
        // The node of each issued instruction (a vector load's merged members read it).
        let mut node_of: HashMap<InstrId, u32> = HashMap::new();
        let mut instructions = Vec::new();
        // What the previous issued instruction read (the operand reuse cache's content).
        let mut previous_reads: Vec<RegId> = Vec::new();
        for id in block.instrs.start..block.instrs.end {
            let Some(instr) = func.instr(id) else { continue };
            let mut deps: Vec<u32> = func.srcs(instr).iter().filter_map(|s| last_def.get(s)).flatten().copied().collect();
            deps.sort_unstable();
            deps.dedup();
            if removed.contains(&id) {
                // Not issued: readers of its result depend on what it read (nothing for a
                // constant operand; the multiply's inputs for a contracted product), or on
                // the vector load that delivers it.
                let via = folding.vectorised.get(&id).and_then(|leader| node_of.get(leader)).map(|p| vec![*p]);
                for d in func.dsts(instr) {
                    last_def.insert(*d, via.clone().unwrap_or_else(|| deps.clone()));
                }
                continue;
            }
            let pos = instructions.len() as u32;
            node_of.insert(id, pos);
            for d in func.dsts(instr) {
                last_def.insert(*d, vec![pos]);
            }
            let (opcode, fused_from) = match folding.fused_with(id).and_then(|m| func.instr(m)) {
                Some(mul) => (sass::fused_opcode(instr, mul), Some(format!("{} + {}", mul.opcode, instr.opcode))),
                None => (instr.opcode.to_string(), None),
            };
            let result_unused = matches!(instr.class, InstrClass::Atomic(_)) && func.dsts(instr).iter().all(|d| !read.contains(d));
            let reads = register_reads(func, folding, id, instr);
            let reads_three_registers = reads.len() >= 3 && !reads.iter().any(|r| previous_reads.contains(r));
            previous_reads = reads;
            instructions.push(InstrNode { class: instr.class, opcode, deps, fused_from, result_unused, reads_three_registers, access: access_of.get(&id).copied() });
            // Its SASS sequence (`sass.rs` item 6): a chain after it, which its readers wait for.
            if let Some(expansion) = folding.expansions.get(&id) {
                for (class, k) in expansion.iter() {
                    for _ in 0..*k {
                        let prev = instructions.len() as u32 - 1;
                        instructions.push(InstrNode { class: *class, opcode: format!("{}.sass", instr.opcode), deps: vec![prev], fused_from: None, result_unused: false, reads_three_registers: false, access: None });
                    }
                }
                let last = instructions.len() as u32 - 1;
                for d in func.dsts(instr) {
                    last_def.insert(*d, vec![last]);
                }
                previous_reads = Vec::new();
            }
        }
        res.push(BlockProfile {
            id: b as u32,
            executions: freq.get(b).copied().unwrap_or(0.0),
            active_lane_fraction: None,
            busiest_warp_executions: None,
            ptxas_copies: None,
            instructions,
            successors: block.succs.iter().copied().collect(),
        });
    }
    res
}

/// The distinct registers an issued instruction reads from the register file, as ptxas
/// issues it: a contracted `mul` + `add` reads the multiply's operands and the add's other
/// one; a value ptxas writes into an operand field is no register read (a folded constant
/// load or a kernel parameter: `c[bank][offset]`; a `mov` of an immediate or a special register:
/// `sass::Folding`), and one passed through a folded `mov` of a register is that register;
/// predicates live in their own file. Address registers count: they are read like any other.
fn register_reads(func: &Function, folding: &sass::Folding, id: InstrId, instr: &Instr) -> Vec<RegId> {
    let is_pred = |r: RegId| func.register(r).and_then(|reg| reg.ty.as_deref()) == Some("pred");
    let mut srcs: Vec<RegId> = func.srcs(instr).to_vec();
    if let Some(mul) = folding.fused_with(id).and_then(|m| func.instr(m)) {
        let product = func.dsts(mul).to_vec();
        srcs.retain(|r| !product.contains(r));
        srcs.extend_from_slice(func.srcs(mul));
    }
    let mut out: Vec<RegId> = Vec::new();
    for r in srcs {
        if is_pred(r) || func.register(r).is_some_and(|reg| reg.special.is_some()) {
            continue;
        }
        let resolved: Vec<RegId> = match func.unique_def(r) {
            Some(d) if folding.const_operands.contains(&d) || func.instr(d).is_some_and(|def| def.class == InstrClass::Load(Space::Param)) => Vec::new(),
            Some(d) if folding.operands.contains(&d) => func
                .instr(d)
                .map(|def| func.srcs(def).iter().copied().filter(|s| !is_pred(*s) && func.register(*s).is_some_and(|reg| reg.special.is_none())).collect())
                .unwrap_or_default(),
            _ => vec![r],
        };
        for x in resolved {
            if !out.contains(&x) {
                out.push(x);
            }
        }
    }
    out
}

/// Register pressure from liveness: the most 32-bit registers live at once (64-bit values
/// count twice; predicates live in their own file and do not count). ptxas allocates
/// differently (rematerialisation, scheduling); this is an estimate and says so.
fn estimate_registers(func: &Function) -> u32 {
    let width = |r: RegId| -> u32 {
        match func.register(r).and_then(|reg| if reg.special.is_some() { None } else { reg.ty.as_deref() }) {
            Some("pred") => 0,
            Some(t) if t.ends_with("64") => 2,
            Some(t) if t.ends_with("128") => 4,
            Some(_) => 1,
            None => 0,
        }
    };
    let n = func.blocks.len();
    let mut live_in: Vec<HashSet<RegId>> = vec![HashSet::new(); n];
    let mut changed = true;
    let mut rounds = 0;
    while changed && rounds < 50 {
        changed = false;
        rounds += 1;
        for b in (0..n).rev() {
            let mut live: HashSet<RegId> = HashSet::new();
            for s in &func.blocks[b].succs {
                if let Some(li) = live_in.get(*s as usize) {
                    live.extend(li.iter().copied());
                }
            }
            for id in (func.blocks[b].instrs.start..func.blocks[b].instrs.end).rev() {
                let Some(instr) = func.instr(id) else { continue };
                for d in func.dsts(instr) {
                    live.remove(d);
                }
                live.extend(func.srcs(instr).iter().copied());
            }
            if live != live_in[b] {
                live_in[b] = live;
                changed = true;
            }
        }
    }
    // The width of the live set is kept as it changes: summing it at every instruction
    // was O(instructions × live registers), minutes for a long kernel that keeps
    // thousands of values live.
    let mut peak = 0u32;
    for b in 0..n {
        let mut live: HashSet<RegId> = HashSet::new();
        let mut live_width = 0u32;
        for s in &func.blocks[b].succs {
            if let Some(li) = live_in.get(*s as usize) {
                for r in li {
                    if live.insert(*r) {
                        live_width += width(*r);
                    }
                }
            }
        }
        for id in (func.blocks[b].instrs.start..func.blocks[b].instrs.end).rev() {
            crate::work::add(1);
            let Some(instr) = func.instr(id) else { continue };
            peak = peak.max(live_width);
            for d in func.dsts(instr) {
                if live.remove(d) {
                    live_width -= width(*d);
                }
            }
            for r in func.srcs(instr) {
                if live.insert(*r) {
                    live_width += width(*r);
                }
            }
        }
        peak = peak.max(live_width);
    }
    // ptxas reserves a few registers (the stack pointer and addressing temporaries); CUDA
    // kernels never use fewer than about 8 in practice.
    (peak + 2).clamp(8, 255)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptx_ir::ir::Dim;
    use ptx_ir::{BinOp, Expr};

    #[test]
    fn a_thread_dependent_count_is_averaged_over_every_thread() {
        // ceil((14 - tid.y) / 8) with 8 rows of threads: 2 for rows 0-5, 1 for rows 6-7.
        // The middle row (3.5) would give ceil(10.5 / 8) = 2.
        let f = Expr::raw(BinOp::CeilDiv, Expr::raw(BinOp::Sub, Expr::Const(14), Expr::Special(SpecialReg::Tid(Dim::Y))), Expr::Const(8));
        let args = HashMap::new();
        let env = Env { block: [32, 8, 1], grid: [64, 256, 1], args: &args };
        assert_eq!(thread_average(&f, &env), Some((1.75, 1.0, 2.0)));
        // A grid-stride count, ceil((1000 - (ctaid.x * 256 + tid.x)) / 2048), over 8 blocks
        // of 256 threads: every one of the 2048 threads is counted (1000 of them run once).
        let start = Expr::raw(
            BinOp::Add,
            Expr::raw(BinOp::Mul, Expr::Special(SpecialReg::Ctaid(Dim::X)), Expr::Const(256)),
            Expr::Special(SpecialReg::Tid(Dim::X)),
        );
        let f = Expr::raw(BinOp::CeilDiv, Expr::raw(BinOp::Sub, Expr::Const(1000), start), Expr::Const(2048));
        let env = Env { block: [256, 1, 1], grid: [8, 1, 1], args: &args };
        assert_eq!(thread_average(&f, &env), Some((1000.0 / 2048.0, 0.0, 1.0)));
    }
}
