//! skillc: a skill compiler for agent memory.
//!
//! Experience records go in; Agent Skills rule files, a lesson ledger, plan-time lesson blocks,
//! skill deltas and diagnostics come out. `pipeline::compile` is the whole job as a pure
//! function; `emit` and `store` are the only stages that write.

pub mod bulk;
pub mod bypass;
pub mod candidates;
pub mod cli;
pub mod cluster;
pub mod deltas;
pub mod diagnostics;
pub mod diff;
pub mod digest;
pub mod emit;
pub mod explain;
pub mod gate;
pub mod generate;
pub mod load;
pub mod model;
pub mod narrative;
pub mod normalize;
pub mod opkey;
pub mod outcome;
pub mod patterns;
pub mod pipeline;
pub mod policy;
pub mod report;
pub mod samples;
pub mod score;
pub mod store;
pub mod time;
