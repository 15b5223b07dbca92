//! cuda-frontend
