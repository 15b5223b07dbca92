//! The PTX syntax tree.
//!
//! The tree borrows every name from the source text (`&'a str`), so parsing allocates only
//! the vectors that hold nodes. Every node carries a byte [`Span`] into the source. The tree
//! is *resilient*: a statement the parser could not understand is kept as
//! [`Statement::Error`] with its span, and the parse goes on at the next `;`, `}` or
//! directive, so one bad line never hides the analysis of the rest of the file.
//!
//! Grammar reference: NVIDIA, *Parallel Thread Execution ISA* version 9.x, §4 (syntax),
//! §5 (state spaces, types and variables), §11 (directives).

use smallvec::SmallVec;

/// A byte range `start..end` into the parsed source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
    pub fn len(self) -> u32 {
        self.end - self.start
    }
    pub fn is_empty(self) -> bool {
        self.end == self.start
    }
    /// The smallest span that covers both.
    pub fn cover(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// A parse error (or warning) with the span it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub span: Span,
    pub message: String,
    pub severity: Severity,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    /// Legal but suspicious or unsupported input (an unknown opcode, an unknown directive).
    Warning,
}

/// A whole PTX module (one `.ptx` file).
#[derive(Debug, Clone, Default)]
pub struct Module<'a> {
    /// `.version 9.0` as (major, minor).
    pub version: Option<(u32, u32)>,
    /// `.target sm_90a, debug` as its comma-separated items.
    pub target: Vec<&'a str>,
    /// `.address_size 64`.
    pub address_size: Option<u32>,
    /// `.file` directives, in source order.
    pub files: Vec<FileDirective<'a>>,
    /// Every top-level item in source order.
    pub items: Vec<Item<'a>>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum Item<'a> {
    Function(Function<'a>),
    Variable(VarDecl<'a>),
    /// `.section .debug_* { ... }`: skipped cheaply; only its span is kept.
    Section(Span),
    /// Any other module-level directive (`.pragma`, `.alias`, ...), kept verbatim.
    Directive(Directive<'a>),
    /// A span the parser could not understand; a matching entry is in the error list.
    Error(Span),
}

/// `.file 1 "path" [, timestamp, size]`.
#[derive(Debug, Clone, Copy)]
pub struct FileDirective<'a> {
    pub index: u32,
    /// The path between the quotes, without them (escapes are not processed).
    pub path: &'a str,
    pub span: Span,
}

/// `.visible`, `.extern`, `.weak`, `.common`, or none.
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

/// `.entry` or `.func`, with or without a body (a prototype ends in `;`).
#[derive(Debug, Clone)]
pub struct Function<'a> {
    pub linkage: Linkage,
    pub kind: FunctionKind,
    pub name: &'a str,
    pub name_span: Span,
    /// `.func (.param .b32 retval) f(...)`: the return parameters.
    pub return_params: Vec<Param<'a>>,
    pub params: Vec<Param<'a>>,
    /// `.maxntid .reqntid .minnctapersm .maxnreg .pragma .noreturn ...` between the
    /// header and the body.
    pub performance: Vec<Directive<'a>>,
    /// `None` for a prototype (`.extern .func f(...);`).
    pub body: Option<Block<'a>>,
    /// From the first token (linkage or `.entry`) to the closing `}` or `;`.
    pub span: Span,
}

/// A `.param` (or `.reg` for old-style `.func` parameters) in a parameter list.
#[derive(Debug, Clone)]
pub struct Param<'a> {
    /// `.param` or `.reg`, without the dot.
    pub space: &'a str,
    /// Every dotted attribute after the state space in order, without dots, e.g.
    /// `["align 8"]` is not used: `.align 8` is in `align`; `.ptr .global` gives
    /// `["ptr", "global"]`.
    pub attributes: SmallVec<[&'a str; 2]>,
    pub align: Option<u32>,
    /// The type without the dot, e.g. `u64`, `b8`, `f32`.
    pub ty: &'a str,
    pub name: &'a str,
    /// `name[16]` gives `[Some(16)]`; `name[]` gives `[None]`.
    pub array_dims: SmallVec<[Option<u64>; 1]>,
    pub span: Span,
}

/// A `{ ... }` block of statements (function body or nested scope).
#[derive(Debug, Clone, Default)]
pub struct Block<'a> {
    pub statements: Vec<Statement<'a>>,
    pub span: Span,
}

// Boxing `Instruction` would shrink the other variants, but instructions are most
// statements, the box would cost one allocation each, and the shape is shared with
// `ptx-ir`; kept inline on purpose.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Statement<'a> {
    Instruction(Instruction<'a>),
    /// `$L__BB0_2:`; the name is without the colon.
    Label {
        name: &'a str,
        span: Span,
    },
    /// `.reg .b32 %r<5>;` or `.reg .pred %p1, %p2;`.
    RegDecl(RegDecl<'a>),
    /// `.local`, `.shared`, `.param`, `.const`, `.global` variables declared in a body.
    Variable(VarDecl<'a>),
    /// `.loc file line col [, function_name ..., inlined_at file line col]`.
    Loc(Loc),
    /// A nested `{ ... }` scope (call sequences, inline-asm scopes).
    Block(Block<'a>),
    /// Any other directive inside a body (`.pragma "nounroll";`, `.section`, ...).
    Directive(Directive<'a>),
    /// A span the parser could not understand; a matching entry is in the error list.
    Error(Span),
}

/// `.reg .TYPE name[, name...]` where each name may be a parameterised range `%r<N>`.
#[derive(Debug, Clone)]
pub struct RegDecl<'a> {
    /// The type without the dot, e.g. `b32`, `pred`, `f64`. Vector registers
    /// (`.reg .v4 .f32 v;`) keep the vector prefix in `vector`.
    pub ty: &'a str,
    pub vector: Option<u8>,
    pub names: SmallVec<[RegName<'a>; 1]>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy)]
pub struct RegName<'a> {
    /// The name or range prefix, e.g. `%r` for `%r<10>`, `%p1` for `%p1`.
    pub name: &'a str,
    /// `Some(10)` for `%r<10>` (declares `%r0 .. %r9`).
    pub range: Option<u32>,
}

/// A variable declaration in any state space.
#[derive(Debug, Clone)]
pub struct VarDecl<'a> {
    pub linkage: Linkage,
    /// The state space without the dot: `global`, `const`, `shared`, `local`, `param`, `tex`.
    pub space: &'a str,
    pub align: Option<u32>,
    /// Vector prefix (`.v2`, `.v4`), if any.
    pub vector: Option<u8>,
    /// The element type without the dot (`b8`, `f32`, `u64`, `texref`, ...).
    pub ty: &'a str,
    pub name: &'a str,
    pub name_span: Span,
    /// `arr[4][8]` gives `[Some(4), Some(8)]`; `extern .shared .b8 s[]` gives `[None]`.
    pub array_dims: SmallVec<[Option<u64>; 1]>,
    /// The initialiser after `=` (not parsed further), if any.
    pub init: Option<Span>,
    pub span: Span,
}

impl VarDecl<'_> {
    /// Element size in bytes from the type (`b8`=1, `f32`=4, `u64`=8, `pred`/unknown=0).
    pub fn element_bytes(&self) -> u64 {
        type_bytes(self.ty) * u64::from(self.vector.unwrap_or(1))
    }
    /// Total size in bytes, or `None` when a dimension is unknown (`[]`).
    pub fn size_bytes(&self) -> Option<u64> {
        let mut n = self.element_bytes();
        for d in &self.array_dims {
            n = n.checked_mul((*d)?)?;
        }
        Some(n)
    }
}

/// Size in bytes of a PTX fundamental type name without its dot (PTX ISA §5.2.1).
/// Unknown names give 0.
pub fn type_bytes(ty: &str) -> u64 {
    match ty {
        "b8" | "s8" | "u8" => 1,
        "b16" | "s16" | "u16" | "f16" | "bf16" => 2,
        "b32" | "s32" | "u32" | "f32" | "f16x2" | "bf16x2" | "tf32" => 4,
        "b64" | "s64" | "u64" | "f64" => 8,
        "b128" | "s128" | "u128" => 16,
        _ => 0,
    }
}

/// `.loc` (PTX ISA §11.5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loc {
    pub file: u32,
    pub line: u32,
    pub column: u32,
    /// `inlined_at FILE LINE COL`, when present.
    pub inlined_at: Option<(u32, u32, u32)>,
    pub span: Span,
}

/// A directive kept verbatim: its name (without the dot) and the raw argument text.
#[derive(Debug, Clone, Copy)]
pub struct Directive<'a> {
    pub name: &'a str,
    /// The text after the name up to (not including) the terminating `;` or end of line.
    pub args: &'a str,
    pub span: Span,
}

/// A guard predicate `@%p` or `@!%p`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guard<'a> {
    pub negated: bool,
    pub register: &'a str,
    pub span: Span,
}

/// One instruction statement: `[@[!]pred] opcode[.mod]* operand, ...;`
#[derive(Debug, Clone)]
pub struct Instruction<'a> {
    pub guard: Option<Guard<'a>>,
    /// The base opcode without modifiers, e.g. `ld` for `ld.global.nc.v4.f32`.
    pub opcode: &'a str,
    /// The dotted modifiers in order, without dots, e.g. `["global", "nc", "v4", "f32"]`.
    /// Type modifiers are included here; the IR interprets them.
    pub modifiers: SmallVec<[&'a str; 4]>,
    pub operands: SmallVec<[Operand<'a>; 4]>,
    /// The byte span of each entry of `operands` (same length, same order).
    pub operand_spans: SmallVec<[Span; 4]>,
    /// `false` when the opcode is not in the parser's table of PTX 9.x opcodes; the
    /// instruction is still kept (and a warning is in the error list).
    pub known_opcode: bool,
    pub span: Span,
}

impl Instruction<'_> {
    pub fn has_modifier(&self, m: &str) -> bool {
        self.modifiers.contains(&m)
    }
}

/// An instruction operand.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand<'a> {
    /// A register, including special registers and their component: `%r1`, `%tid.x`,
    /// `%ctaid.y`, `%laneid`. The `.x` component stays part of the name.
    Register(&'a str),
    /// `!%p1` (a negated predicate operand).
    NegatedRegister(&'a str),
    /// An integer immediate (decimal, hex `0x`, octal `0`, binary `0b`; optional `U`
    /// suffix); negative literals included.
    Int(i64),
    /// A float immediate: `0f3F800000` (exact f32 bits), `0d3FF0000000000000` (f64 bits),
    /// or a decimal literal like `1.5`.
    Float(FloatLit),
    /// A label, variable or function name used as a value (`$L__BB0_3`, `smem`, `_`).
    Symbol(&'a str),
    /// A memory address `[base]`, `[base+imm]`, `[base+-imm]`, `[imm]`.
    Address(Address<'a>),
    /// `{a, b, c, d}` for vector loads and stores (elements may be `_`).
    Vector(Vec<Operand<'a>>),
    /// `(a, b)` parenthesised lists in `call` (return values and arguments).
    List(Vec<Operand<'a>>),
    /// `%r1|%p1`: a value and its predicate output written by one instruction
    /// (`shfl.sync ... d|p`, `setp ... p|q`), as (first, second), both names verbatim.
    Pair(&'a str, &'a str),
    /// `sym+8`, `generic(sym)`, and other expressions kept as source text. Bracketed
    /// forms that are not a plain address (`[tex, {%f1, %f2}]`, `[%rd1, {%r2, %r3}]` in
    /// `cp.async.bulk.tensor`) are kept here too, brackets included; use
    /// [`Operand::registers`] to find the registers they mention.
    Expr(&'a str),
}

impl<'a> Operand<'a> {
    /// Every `%`-register this operand mentions, in source order: the register itself,
    /// both halves of a pair, the base of an address, the elements of vectors and lists,
    /// and every `%name` inside an [`Operand::Expr`]. Symbols (names without `%`) are not
    /// included: whether they name a register depends on the `.reg` declarations.
    pub fn registers(&self) -> SmallVec<[&'a str; 4]> {
        let mut acc = SmallVec::new();
        self.registers_into(&mut acc);
        acc
    }

    fn registers_into(&self, acc: &mut SmallVec<[&'a str; 4]>) {
        match self {
            Operand::Register(r) | Operand::NegatedRegister(r) => acc.push(r),
            Operand::Pair(a, b) => {
                for it in [a, b] {
                    if it.starts_with('%') {
                        acc.push(it);
                    }
                }
            }
            Operand::Address(Address {
                base: AddressBase::Register(r),
                ..
            }) => acc.push(r),
            Operand::Vector(xs) | Operand::List(xs) => {
                for it in xs {
                    it.registers_into(acc);
                }
            }
            Operand::Expr(text) => {
                let bytes = text.as_bytes();
                let mut i = 0;
                while i < bytes.len() {
                    if bytes[i] == b'%' {
                        let start = i;
                        i += 1;
                        while i < bytes.len()
                            && (bytes[i].is_ascii_alphanumeric()
                                || bytes[i] == b'_'
                                || bytes[i] == b'$')
                        {
                            i += 1;
                        }
                        // A special-register component (`%tid.x`) stays part of the name.
                        if i + 1 < bytes.len()
                            && bytes[i] == b'.'
                            && matches!(bytes[i + 1], b'x' | b'y' | b'z' | b'w')
                            && !bytes
                                .get(i + 2)
                                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
                        {
                            i += 2;
                        }
                        if i > start + 1 {
                            acc.push(&text[start..i]);
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            Operand::Int(_) | Operand::Float(_) | Operand::Symbol(_) | Operand::Address(_) => {}
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FloatLit {
    F32Bits(u32),
    F64Bits(u64),
    Decimal(f64),
}

impl FloatLit {
    pub fn value(self) -> f64 {
        match self {
            FloatLit::F32Bits(b) => f64::from(f32::from_bits(b)),
            FloatLit::F64Bits(b) => f64::from_bits(b),
            FloatLit::Decimal(v) => v,
        }
    }
}

/// A memory address operand.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Address<'a> {
    pub base: AddressBase<'a>,
    /// The signed immediate offset (0 when absent).
    pub offset: i64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AddressBase<'a> {
    Register(&'a str),
    Symbol(&'a str),
    /// `[1024]`: an absolute address.
    Absolute,
}

impl<'a> Module<'a> {
    /// The functions (kernels and device functions) in source order.
    pub fn functions(&self) -> impl Iterator<Item = &Function<'a>> {
        self.items.iter().filter_map(|it| match it {
            Item::Function(f) => Some(f),
            _ => None,
        })
    }
    /// Module-level variables in source order.
    pub fn variables(&self) -> impl Iterator<Item = &VarDecl<'a>> {
        self.items.iter().filter_map(|it| match it {
            Item::Variable(v) => Some(v),
            _ => None,
        })
    }
    /// The path of `.file N`.
    pub fn file(&self, index: u32) -> Option<&'a str> {
        self.files.iter().find(|f| f.index == index).map(|f| f.path)
    }
}
