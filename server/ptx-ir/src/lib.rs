//! The PTX IR: per function, classified instructions, basic blocks, the CFG, dominators,
//! natural loops and trip counts, and `.loc` source positions.

pub mod class;

pub use class::{InstrClass, Space};
