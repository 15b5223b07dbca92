//! power-model
