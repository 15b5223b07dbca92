//! perf-models
