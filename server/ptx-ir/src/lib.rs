//! The PTX IR: per function, classified instructions, basic blocks, the CFG, dominators,
//! natural loops and trip counts, def-use chains, and `.loc` source positions.
//!
//! The entry point is [`lower`], which turns a parsed module (`ptx::Module`, borrowing the
//! source) into an owned [`Module`] that the static profile (`kernel-profile`) reads. The
//! lowering is pure (no IO) and total: unknown opcodes become [`InstrClass::Other`], and
//! problems such as a branch to an undefined label become entries in
//! [`Module::diagnostics`] instead of panics.
//!
//! What the IR does *not* do: dynamic counts and block frequencies (the profile combines
//! trip counts with the CFG) and address analysis (the profile follows the def-use chains
//! given here).

pub mod class;
mod classify;
mod dump;
mod induction;
pub mod ir;
mod local_slot;
mod loops;
mod lower;
pub mod trip;
mod work;

#[cfg(test)]
mod scale_tests;

pub use class::{InstrClass, Space};
pub use classify::classify;
pub use ir::*;
pub use lower::{lower, lower_entry, parse_and_lower, parse_and_lower_stripped};
pub use trip::{BinOp, Expr, Leaf, TripCount, short_param_name};
