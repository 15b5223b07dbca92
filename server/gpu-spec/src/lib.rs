//! gpu-spec
