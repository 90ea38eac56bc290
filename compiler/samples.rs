//! The sample corpus, built into the binary as the fallback when `samples/` is not found.

/// `(file name, contents)` of every sample file, in path order.
pub const FILES: &[(&str, &str)] = &[];
