//! Reports: `why`, `trace`, `explain`, `codes`.
