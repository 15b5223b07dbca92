//! The owned IR data model: a lowered module, its functions, instructions, registers,
//! basic blocks and loops.
//!
//! Everything here owns its data (no borrow of the PTX text), so a module can be cached,
//! sent between threads and stored after the source is gone. Per-function data lives in
//! flat arenas (`operands`, `reg_refs`, `locs`) indexed by small integer ids, the way
//! rust-analyzer's `la-arena` does: a 50 MB PTX file has millions of instructions and one
//! heap allocation per instruction would dominate lowering time.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use petgraph::graph::DiGraph;
use smallvec::SmallVec;

pub use ptx::Span;

use crate::class::InstrClass;
use crate::trip::{Expr, TripCount};

/// Index of an instruction in [`Function::instrs`].
pub type InstrId = u32;
/// Index of a basic block in [`Function::blocks`] (and node index in [`Function::cfg`]).
pub type BlockId = u32;
/// Index of a register in [`Function::registers`].
pub type RegId = u32;
/// Index of a loop in [`Function::loops`].
pub type LoopId = u32;

/// One lowered PTX module.
#[derive(Debug, Clone, Default)]
pub struct Module {
    /// `.version` as (major, minor).
    pub version: Option<(u32, u32)>,
    /// The architecture item of `.target`, e.g. `sm_80` or `sm_90a`.
    pub target: Option<String>,
    /// The numeric compute capability from `target`: `sm_90a` gives 90.
    pub sm: Option<u32>,
    /// Every `.target` item after the architecture (`debug`, `texmode_independent`, ...).
    pub target_flags: Vec<String>,
    pub address_size: Option<u32>,
    /// The `.file` table.
    pub files: Vec<SourceFile>,
    /// Module-level variables (`.global .shared .const .local`, extern or not).
    pub variables: Vec<Variable>,
    /// Every `.entry` and `.func`, in source order, prototypes included.
    pub functions: Vec<Function>,
    /// Problems found while lowering (missing labels, unresolved branches, ...). Parse
    /// errors are not repeated here: they are in `ptx::Parse::errors`.
    pub diagnostics: Vec<Diagnostic>,
}

impl Module {
    /// The path of `.file N`.
    pub fn file(&self, index: u32) -> Option<&str> {
        self.files
            .iter()
            .find(|f| f.index == index)
            .map(|f| f.path.as_str())
    }

    /// The function named `name` (kernels and device functions; a definition is preferred
    /// over a prototype of the same name).
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.function_index(name).map(|idx| &self.functions[idx])
    }

    pub fn function_index(&self, name: &str) -> Option<usize> {
        let mut found = None;
        for (idx, f) in self.functions.iter().enumerate() {
            if f.name == name {
                if f.has_body {
                    return Some(idx);
                }
                found.get_or_insert(idx);
            }
        }
        found
    }

    /// Kernels (`.entry` functions with a body).
    pub fn kernels(&self) -> impl Iterator<Item = &Function> {
        self.functions
            .iter()
            .filter(|f| f.kind == FunctionKind::Entry && f.has_body)
    }

    /// Module-level `.extern .shared` arrays of unknown size: dynamic shared memory.
    pub fn extern_shared(&self) -> impl Iterator<Item = &Variable> {
        self.variables
            .iter()
            .filter(|v| v.space == VarSpace::Shared && v.is_extern_array())
    }

    pub fn variable(&self, name: &str) -> Option<&Variable> {
        self.variables.iter().find(|v| v.name == name)
    }
}

/// A `.file` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    pub index: u32,
    pub path: String,
}

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
    /// A note about an analysis limit (an unresolved indirect branch, an irreducible loop).
    Info,
}

/// A problem found while lowering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    pub span: Span,
    /// The function it concerns, if any.
    pub function: Option<String>,
}

/// A PTX state space of a variable declaration (PTX ISA §5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VarSpace {
    Global,
    Shared,
    Local,
    Const,
    Param,
    Tex,
    Other,
}

impl VarSpace {
    pub fn from_name(name: &str) -> VarSpace {
        match name {
            "global" => VarSpace::Global,
            "shared" => VarSpace::Shared,
            "local" => VarSpace::Local,
            "const" => VarSpace::Const,
            "param" => VarSpace::Param,
            "tex" => VarSpace::Tex,
            _ => VarSpace::Other,
        }
    }
}

/// A variable declared at module level or in a function body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    pub name: String,
    pub space: VarSpace,
    /// The element type without the dot (`b8`, `f32`, ...).
    pub ty: String,
    pub align: Option<u32>,
    pub vector: Option<u8>,
    /// `[Some(4), Some(8)]` for `a[4][8]`, `[None]` for `a[]`.
    pub array_dims: Vec<Option<u64>>,
    /// Total size in bytes; `None` when a dimension is unknown (`extern .shared a[]`).
    pub size_bytes: Option<u64>,
    pub linkage: Linkage,
    pub has_init: bool,
    pub span: Span,
}

impl Variable {
    /// `true` for `.extern` declarations and arrays of unknown size (`smem[]`), which
    /// reserve no static storage.
    pub fn is_extern_array(&self) -> bool {
        self.linkage == Linkage::Extern || self.size_bytes.is_none()
    }
}

/// `.visible .extern .weak .common` or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Linkage {
    #[default]
    None,
    Visible,
    Extern,
    Weak,
    Common,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FunctionKind {
    /// `.entry`: a kernel.
    Entry,
    /// `.func`: a device function.
    Func,
}

/// A function parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// The PTX name, e.g. `_Z4vaddPfS_i_param_2`.
    pub name: String,
    /// The type without the dot.
    pub ty: String,
    pub align: Option<u32>,
    /// `.ptr .global` and similar attributes, without dots.
    pub attributes: Vec<String>,
    /// Size in bytes (element size × array dims; 0 when unknown).
    pub size_bytes: u64,
}

/// The performance directives of a function (PTX ISA §11.4).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PerfDirectives {
    /// `.maxntid nx, ny, nz` (missing dimensions are 1).
    pub maxntid: Option<[u32; 3]>,
    /// `.reqntid nx, ny, nz`.
    pub reqntid: Option<[u32; 3]>,
    pub minnctapersm: Option<u32>,
    pub maxnreg: Option<u32>,
    pub noreturn: bool,
    /// Every other directive between the header and the body, as (name, args).
    pub other: Vec<(String, String)>,
}

/// A special register (PTX ISA §10): the launch-configuration leaves of address and
/// trip-count expressions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum SpecialReg {
    /// `%tid.{x,y,z}` (threadIdx).
    Tid(Dim),
    /// `%ntid.{x,y,z}` (blockDim).
    Ntid(Dim),
    /// `%ctaid.{x,y,z}` (blockIdx).
    Ctaid(Dim),
    /// `%nctaid.{x,y,z}` (gridDim).
    Nctaid(Dim),
    LaneId,
    WarpId,
    NWarpId,
    SmId,
    /// Any other `%`-register the ISA defines (`%clock`, `%lanemask_lt`, `%envreg3`, ...).
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Dim {
    X,
    Y,
    Z,
}

impl SpecialReg {
    /// Recognises a special register by its PTX name (`%tid.x`, `%laneid`, ...).
    pub fn from_name(name: &str) -> Option<SpecialReg> {
        // Early out for the general-purpose names compilers generate (`%r5`, `%rd2`,
        // `%f3`, `%fd1`, `%p1`, `%h4`): no special register starts with `%f` or `%h`, and
        // the only ones starting with `%r` or `%p` are `%reserved_*` and `%pm*`.
        match name.as_bytes() {
            [b'%', b'f' | b'h', ..] => return None,
            [b'%', b'r', c, ..] if *c != b'e' => return None,
            [b'%', b'p', c, ..] if *c != b'm' => return None,
            _ => {}
        }
        let (base, comp) = match name.split_once('.') {
            Some((b, c)) => (b, Some(c)),
            None => (name, None),
        };
        let dim = match comp {
            Some("x") => Some(Dim::X),
            Some("y") => Some(Dim::Y),
            Some("z") => Some(Dim::Z),
            _ => None,
        };
        let with_dim = |f: fn(Dim) -> SpecialReg| Some(f(dim.unwrap_or(Dim::X)));
        match base {
            "%tid" => with_dim(SpecialReg::Tid),
            "%ntid" => with_dim(SpecialReg::Ntid),
            "%ctaid" => with_dim(SpecialReg::Ctaid),
            "%nctaid" => with_dim(SpecialReg::Nctaid),
            "%laneid" => Some(SpecialReg::LaneId),
            "%warpid" => Some(SpecialReg::WarpId),
            "%nwarpid" => Some(SpecialReg::NWarpId),
            "%smid" => Some(SpecialReg::SmId),
            "%nsmid"
            | "%gridid"
            | "%clock"
            | "%clock64"
            | "%clock_hi"
            | "%globaltimer"
            | "%globaltimer_lo"
            | "%globaltimer_hi"
            | "%lanemask_eq"
            | "%lanemask_le"
            | "%lanemask_lt"
            | "%lanemask_ge"
            | "%lanemask_gt"
            | "%dynamic_smem_size"
            | "%total_smem_size"
            | "%aggr_smem_size"
            | "%is_explicit_cluster"
            | "%clusterid"
            | "%nclusterid"
            | "%cluster_ctaid"
            | "%cluster_nctaid"
            | "%cluster_ctarank"
            | "%cluster_nctarank"
            | "%current_graph_exec"
            | "%reserved_smem_offset_begin"
            | "%reserved_smem_offset_end"
            | "%reserved_smem_offset_cap"
            | "%reserved_smem_offset_2" => Some(SpecialReg::Other),
            _ if base.starts_with("%envreg") || base.starts_with("%pm") => Some(SpecialReg::Other),
            _ => None,
        }
    }

    /// The PTX spelling (for `Other`, a placeholder).
    pub fn name(self) -> &'static str {
        use Dim::*;
        use SpecialReg::*;
        match self {
            Tid(X) => "%tid.x",
            Tid(Y) => "%tid.y",
            Tid(Z) => "%tid.z",
            Ntid(X) => "%ntid.x",
            Ntid(Y) => "%ntid.y",
            Ntid(Z) => "%ntid.z",
            Ctaid(X) => "%ctaid.x",
            Ctaid(Y) => "%ctaid.y",
            Ctaid(Z) => "%ctaid.z",
            Nctaid(X) => "%nctaid.x",
            Nctaid(Y) => "%nctaid.y",
            Nctaid(Z) => "%nctaid.z",
            LaneId => "%laneid",
            WarpId => "%warpid",
            NWarpId => "%nwarpid",
            SmId => "%smid",
            Other => "%special",
        }
    }

    /// `true` for the registers fixed by the launch configuration (`%ntid`, `%nctaid`).
    pub fn is_launch_config(self) -> bool {
        matches!(self, SpecialReg::Ntid(_) | SpecialReg::Nctaid(_))
    }
}

/// A register of one function (declared, special, or used without a declaration).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Register {
    pub name: String,
    /// The declared type without the dot (`b32`, `pred`, `f64`), if declared (interned).
    pub ty: Option<Arc<str>>,
    pub special: Option<SpecialReg>,
}

/// `.loc` position of an instruction: `.file` index, line and column. Line 0 means "no
/// source line" (nvcc emits `.loc 1 0 0` for compiler-generated code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SrcLoc {
    pub file: u32,
    pub line: u32,
    pub column: u32,
    /// `inlined_at FILE LINE COL`: the call site this code was inlined into.
    pub inlined_at: Option<(u32, u32, u32)>,
}

/// Base of a memory address operand.
#[derive(Debug, Clone, PartialEq)]
pub enum AddrBase {
    Reg(RegId),
    Symbol(Arc<str>),
    Absolute,
}

/// An owned instruction operand. Nested lists (vectors, call lists) point into the
/// function's operand arena: see [`Function::operand_slice`].
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    Reg(RegId),
    /// `!%p`.
    NegReg(RegId),
    Imm(i64),
    Float(f64),
    /// A label, variable or function name.
    Symbol(Arc<str>),
    Addr {
        base: AddrBase,
        offset: i64,
    },
    /// `{a, b, c, d}`: elements at `start..start+len` in the operand arena.
    Vector {
        start: u32,
        len: u32,
    },
    /// `d|p`: two destinations written by one instruction (`setp`, `shfl`); `None` for
    /// the sink `_`.
    Pair(Option<RegId>, Option<RegId>),
    /// `(a, b)` in `call`.
    List {
        start: u32,
        len: u32,
    },
    /// An expression kept as text (`sym+8`, `generic(sym)`).
    Expr(Arc<str>),
}

impl Operand {
    pub fn reg(&self) -> Option<RegId> {
        match self {
            Operand::Reg(r) => Some(*r),
            _ => None,
        }
    }
    pub fn imm(&self) -> Option<i64> {
        match self {
            Operand::Imm(v) => Some(*v),
            _ => None,
        }
    }
}

/// Guard predicate of an instruction (`@%p` or `@!%p`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guard {
    pub reg: RegId,
    pub negated: bool,
}

/// One instruction.
#[derive(Debug, Clone)]
pub struct Instr {
    /// The full opcode with its modifiers, e.g. `ld.global.nc.v4.f32` (interned).
    pub opcode: Arc<str>,
    /// Length of the base opcode (`ld`) inside `opcode`.
    pub base_len: u8,
    pub class: InstrClass,
    pub guard: Option<Guard>,
    /// Range of this instruction's operands in [`Function::operands`].
    pub operands: Range<u32>,
    /// Start of this instruction's registers in [`Function::reg_refs`]: first `n_dst`
    /// destinations, then `n_src` sources (address bases and the guard included).
    pub regs_start: u32,
    pub n_dst: u8,
    pub n_src: u8,
    /// Index into [`Function::locs`], or `u32::MAX` when no `.loc` precedes it.
    pub loc: u32,
    pub block: BlockId,
    /// 1-based line in the PTX text.
    pub ptx_line: u32,
    pub span: Span,
}

impl Instr {
    /// The base opcode, e.g. `ld`.
    pub fn base(&self) -> &str {
        self.opcode
            .get(..usize::from(self.base_len))
            .unwrap_or(&self.opcode)
    }
    /// The dotted modifiers in order, without dots.
    pub fn modifiers(&self) -> impl Iterator<Item = &str> {
        let rest = self.opcode.get(usize::from(self.base_len)..).unwrap_or("");
        rest.split('.').filter(|it| !it.is_empty())
    }
    pub fn has_modifier(&self, m: &str) -> bool {
        self.modifiers().any(|it| it == m)
    }
    /// The vector width from `.v2 .v4 .v8` (1 when scalar).
    pub fn vector_width(&self) -> u8 {
        for m in self.modifiers() {
            match m {
                "v2" => return 2,
                "v4" => return 4,
                "v8" => return 8,
                _ => {}
            }
        }
        1
    }
    /// The last fundamental-type modifier (`f32` in `ld.global.f32`, `s32` in
    /// `setp.lt.s32`, the source type in `cvt.f32.s32`).
    pub fn ty(&self) -> Option<&str> {
        self.modifiers()
            .filter(|m| ptx::type_bytes(m) > 0 || *m == "pred")
            .last()
    }
    /// Bytes moved per thread by a memory instruction: type size × vector width.
    pub fn access_bytes(&self) -> u32 {
        let ty = self.ty().map(ptx::type_bytes).unwrap_or(0);
        (ty * u64::from(self.vector_width())) as u32
    }
    pub fn is_branch(&self) -> bool {
        matches!(self.class, InstrClass::Branch)
    }
}

/// A basic block: a maximal straight-line run of instructions.
#[derive(Debug, Clone, Default)]
pub struct BasicBlock {
    /// The labels that name this block (several consecutive labels share one block).
    pub labels: Vec<String>,
    /// Its instructions: `instrs.start..instrs.end` in [`Function::instrs`].
    pub instrs: Range<InstrId>,
    pub succs: SmallVec<[BlockId; 2]>,
    /// The block the terminating `bra` jumps to (when it ends in a resolved branch).
    pub target: Option<BlockId>,
    /// 1-based PTX line of its first label or instruction.
    pub ptx_line: u32,
    pub preds: SmallVec<[BlockId; 2]>,
    /// The innermost loop containing this block.
    pub innermost_loop: Option<LoopId>,
    /// `false` for blocks the entry cannot reach (dead code after an unconditional branch).
    pub reachable: bool,
    /// A `.pragma "nounroll";` stands in the block (nvcc writes it after the header label
    /// of a loop with `#pragma unroll 1`): ptxas leaves that loop rolled (PTX ISA,
    /// "Descriptions of .pragma Strings", `nounroll`: loop unrolling disabled in the
    /// optimizing backend compiler).
    pub no_unroll: bool,
}

impl BasicBlock {
    pub fn is_empty(&self) -> bool {
        self.instrs.start == self.instrs.end
    }
    /// The last instruction, if any.
    pub fn terminator(&self) -> Option<InstrId> {
        (!self.is_empty()).then(|| self.instrs.end - 1)
    }
}

/// How an induction variable changes once per iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IvKind {
    /// `reg = reg + step` (linear; `step` negative for down-counting loops).
    Add,
    /// `reg = reg >> step` (halving loops such as tree reductions; `step` is the shift).
    Shr,
    /// `reg = reg << step` (doubling loops; `step` is the shift).
    Shl,
}

/// A basic induction variable of a loop: `reg = init` before the loop and
/// `reg = reg + step` (or a constant shift, see [`IvKind`]) once per iteration inside it.
#[derive(Debug, Clone, PartialEq)]
pub struct InductionVar {
    pub reg: RegId,
    /// The value on loop entry, when it can be expressed (`None`: data dependent).
    pub init: Option<Expr>,
    pub kind: IvKind,
    /// The per-iteration increment (negative for down-counting loops), or the shift
    /// amount for `Shr`/`Shl`.
    pub step: Expr,
    /// The instruction that performs the update.
    pub update: InstrId,
}

/// A comparison operator of the exit test, normalised to "continue while `iv OP bound`".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

/// The exit test of a counted loop.
#[derive(Debug, Clone, PartialEq)]
pub struct ExitTest {
    /// The `setp` that computes the predicate.
    pub compare: InstrId,
    /// The conditional branch that leaves (or stays in) the loop.
    pub branch: InstrId,
    /// The induction variable compared.
    pub iv: RegId,
    /// The loop continues while `iv' OP bound` holds, where `iv'` is the compared value.
    pub op: CmpOp,
    pub bound: Expr,
    /// How many steps ahead of the iteration's entry value the compared value is: 1 for
    /// the do-while form nvcc emits (`add i, i, 1; setp.lt i, n`), 0 when the test reads
    /// the value before the update.
    pub offset_steps: u8,
}

/// A natural loop (PTX ISA has no loop construct: loops are found from back edges to a
/// dominating header, Aho/Lam/Sethi/Ullman "Compilers", 2nd ed., §9.6.6).
#[derive(Debug, Clone)]
pub struct Loop {
    pub header: BlockId,
    /// Sources of the back edges.
    pub latches: Vec<BlockId>,
    /// Every block of the loop (header included, nested loops included), sorted.
    pub blocks: Vec<BlockId>,
    /// Blocks inside the loop with a successor outside it.
    pub exiting: Vec<BlockId>,
    /// The unique predecessor of the header outside the loop, if there is exactly one.
    pub preheader: Option<BlockId>,
    /// 1 for an outermost loop.
    pub depth: u32,
    pub parent: Option<LoopId>,
    pub children: Vec<LoopId>,
    /// Basic induction variables found in the loop.
    pub induction_vars: Vec<InductionVar>,
    pub exit_test: Option<ExitTest>,
    /// Executions of the header per entry into the loop. For the bottom-tested loops nvcc
    /// emits, this is the number of iterations of the source loop. For a loop whose exit
    /// test sits in the header (top-tested), the blocks after the test run once less.
    pub trip_count: TripCount,
    /// Why the trip count is unknown (for the profile's list of assumptions).
    pub trip_note: Option<String>,
    /// Upper bounds of an unknown trip count: the counts of the loop's counted exits when
    /// others end it on data (`for (i = 0; i < n; ++i) { if (a[i] == key) break; }`, or
    /// `while (|z| < 2 && it < MAX)` tested as one `and.pred`). Empty when the count is
    /// known or nothing bounds it.
    pub trip_bounds: Vec<TripCount>,
    /// The `.loc` of the loop's back-edge branch (or of its first located instruction).
    pub loc: Option<SrcLoc>,
    /// 1-based PTX line of the header's first instruction (or of its label).
    pub ptx_line: u32,
}

impl Loop {
    pub fn contains(&self, block: BlockId) -> bool {
        self.blocks.binary_search(&block).is_ok()
    }
}

/// One `call` site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallSite {
    pub instr: InstrId,
    /// The callee's name; `None` for an indirect call through a register.
    pub callee: Option<String>,
}

/// One `.entry` or `.func`, lowered.
#[derive(Debug, Clone)]
pub struct Function {
    pub name: String,
    pub kind: FunctionKind,
    pub linkage: Linkage,
    /// `false` for a prototype (`.extern .func f(...);`).
    pub has_body: bool,
    pub params: Vec<Param>,
    pub return_params: Vec<Param>,
    pub perf: PerfDirectives,
    pub span: Span,
    pub name_span: Span,
    /// 1-based PTX line of the name.
    pub ptx_line: u32,

    pub instrs: Vec<Instr>,
    /// Operand arena; see [`Instr::operands`].
    pub operands: Vec<Operand>,
    /// Register-reference arena; see [`Instr::regs_start`].
    pub reg_refs: Vec<RegId>,
    /// `.loc` table; see [`Instr::loc`].
    pub locs: Vec<SrcLoc>,

    pub registers: Vec<Register>,
    /// Declared register counts by type (`.reg .b32 %r<66>` adds 66 to `b32`).
    pub reg_decls: BTreeMap<String, u32>,
    /// For each register (by [`RegId`]), the instructions that write it, in order.
    pub defs: Vec<SmallVec<[InstrId; 1]>>,

    /// Body-level variables (`.local` stack depots, `.shared` arrays, call `.param`s).
    pub variables: Vec<Variable>,
    pub calls: Vec<CallSite>,

    pub blocks: Vec<BasicBlock>,
    /// The CFG: node `i` is block `i`; edges are control-flow successors.
    pub cfg: DiGraph<(), ()>,
    /// Immediate dominator of each block (`None` for the entry and unreachable blocks).
    pub idom: Vec<Option<BlockId>>,
    /// Pre/post order numbers in the dominator tree, for O(1) dominance queries.
    pub(crate) dom_pre: Vec<u32>,
    pub(crate) dom_post: Vec<u32>,
    /// Natural loops, outer loops before the loops they contain.
    pub loops: Vec<Loop>,

    /// Module-level `.shared` variables this function uses, directly or through the
    /// functions it calls (sorted, deduplicated).
    pub shared_vars: Vec<String>,
    /// Static shared memory: the module-level `.shared` variables in `shared_vars` plus the
    /// body-level `.shared` variables, each aligned to its `.align`. An estimate of what
    /// `ptxas -v` reports: ptxas may order, pad or drop unused variables differently.
    pub static_smem_bytes: u64,
    /// Bytes of body-level `.local` variables (the stack depot).
    pub local_bytes: u64,
    /// Store-to-load forwarding through local memory: each `ld.local` whose fixed slot one
    /// `st.local` alone writes, with the operand that store wrote, by instruction id
    /// (`local_slot`; read with [`Function::forwarded_local`]).
    pub local_forwards: Vec<(InstrId, Operand)>,
}

impl Function {
    pub fn instr(&self, id: InstrId) -> Option<&Instr> {
        self.instrs.get(id as usize)
    }
    /// The top-level operands of an instruction.
    pub fn operands_of(&self, instr: &Instr) -> &[Operand] {
        self.operand_slice(
            instr.operands.start,
            instr.operands.end - instr.operands.start,
        )
    }
    /// A slice of the operand arena (the elements of a `Vector` or `List`).
    pub fn operand_slice(&self, start: u32, len: u32) -> &[Operand] {
        let (s, e) = (start as usize, start as usize + len as usize);
        self.operands.get(s..e).unwrap_or(&[])
    }
    /// The registers an instruction writes.
    pub fn dsts(&self, instr: &Instr) -> &[RegId] {
        let s = instr.regs_start as usize;
        self.reg_refs
            .get(s..s + usize::from(instr.n_dst))
            .unwrap_or(&[])
    }
    /// The registers an instruction reads (including address bases and its guard).
    pub fn srcs(&self, instr: &Instr) -> &[RegId] {
        let s = instr.regs_start as usize + usize::from(instr.n_dst);
        self.reg_refs
            .get(s..s + usize::from(instr.n_src))
            .unwrap_or(&[])
    }
    /// The `.loc` in effect at an instruction.
    pub fn loc(&self, instr: &Instr) -> Option<&SrcLoc> {
        self.locs.get(instr.loc as usize)
    }
    pub fn register(&self, reg: RegId) -> Option<&Register> {
        self.registers.get(reg as usize)
    }
    pub fn reg_name(&self, reg: RegId) -> &str {
        self.registers
            .get(reg as usize)
            .map(|r| r.name.as_str())
            .unwrap_or("?")
    }
    /// The register called `name`, if the function mentions it.
    pub fn reg_by_name(&self, name: &str) -> Option<RegId> {
        self.registers
            .iter()
            .position(|r| r.name == name)
            .map(|it| it as RegId)
    }
    /// The instructions writing `reg`.
    pub fn defs_of(&self, reg: RegId) -> &[InstrId] {
        self.defs
            .get(reg as usize)
            .map(|it| it.as_slice())
            .unwrap_or(&[])
    }
    /// The value a `ld.local` reads when one `st.local` alone writes its slot: the operand
    /// that store wrote (a register or an immediate). The load still executes; only its
    /// value is known (a `volatile` local kept in the stack depot).
    pub fn forwarded_local(&self, load: InstrId) -> Option<&Operand> {
        self.local_forwards.binary_search_by_key(&load, |(id, _)| *id).ok().map(|i| &self.local_forwards[i].1)
    }
    /// The only instruction writing `reg`, if there is exactly one.
    pub fn unique_def(&self, reg: RegId) -> Option<InstrId> {
        match self.defs_of(reg) {
            [one] => Some(*one),
            _ => None,
        }
    }
    /// Instructions reading `reg` (a linear scan: use sparingly).
    pub fn uses_of(&self, reg: RegId) -> Vec<InstrId> {
        (0..self.instrs.len() as u32)
            .filter(|&i| self.srcs(&self.instrs[i as usize]).contains(&reg))
            .collect()
    }
    /// The index of the parameter called `name`.
    pub fn param_index(&self, name: &str) -> Option<u32> {
        self.params
            .iter()
            .position(|p| p.name == name)
            .map(|it| it as u32)
    }
    /// The entry block (block 0), when the function has any block.
    pub fn entry(&self) -> Option<BlockId> {
        (!self.blocks.is_empty()).then_some(0)
    }
    /// `true` when block `a` dominates block `b` (every block dominates itself;
    /// unreachable blocks dominate nothing and are dominated by nothing).
    pub fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        let (a, b) = (a as usize, b as usize);
        match (
            self.dom_pre.get(a),
            self.dom_pre.get(b),
            self.dom_post.get(a),
            self.dom_post.get(b),
        ) {
            (Some(&pa), Some(&pb), Some(&qa), Some(&qb)) => {
                pa != u32::MAX && pb != u32::MAX && pa <= pb && qb <= qa
            }
            _ => false,
        }
    }
    /// The loops containing a block, innermost first.
    pub fn loops_of(&self, block: BlockId) -> Vec<LoopId> {
        let mut res = Vec::new();
        let mut cur = self
            .blocks
            .get(block as usize)
            .and_then(|b| b.innermost_loop);
        while let Some(l) = cur {
            res.push(l);
            cur = self.loops.get(l as usize).and_then(|it| it.parent);
        }
        res
    }
    /// Loop nesting depth of a block (0 outside loops).
    pub fn loop_depth(&self, block: BlockId) -> u32 {
        self.blocks
            .get(block as usize)
            .and_then(|b| b.innermost_loop)
            .and_then(|l| self.loops.get(l as usize))
            .map_or(0, |l| l.depth)
    }
    /// Static instruction counts by class.
    pub fn class_counts(&self) -> BTreeMap<InstrClass, u64> {
        let mut res = BTreeMap::new();
        for i in &self.instrs {
            *res.entry(i.class).or_insert(0) += 1;
        }
        res
    }
    /// The label name of a block, or `BB<n>` when it has none.
    pub fn block_name(&self, block: BlockId) -> String {
        match self
            .blocks
            .get(block as usize)
            .and_then(|b| b.labels.first())
        {
            Some(l) => l.clone(),
            None => format!("BB{block}"),
        }
    }
}
