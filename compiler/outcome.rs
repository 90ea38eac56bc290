//! Outcome: derive `passed` from an experience's checks (DESIGN §5.2), never more optimistic
//! than the checks.

use crate::diagnostics::Sink;
use crate::model::{Corpus, Experience};
use crate::policy::Policy;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// The experience passed the outcome gate's input condition.
    pub passed: bool,
    /// At least one fresh latest check decided it (false: a self-reported, unverified success).
    pub verified: bool,
    /// A self-reported success that its own checks contradict.
    pub contradicted: bool,
    /// Passing checks that ran before the last mutating operation.
    pub stale: u32,
}

pub fn derive(_exp: &Experience, _policy: &Policy) -> Verdict {
    todo!("candidates helper")
}

/// One verdict per experience (same order), with `success-contradicted`, `stale-checks` and
/// `unverified-success` diagnostics.
pub fn derive_all(_corpus: &Corpus, _policy: &Policy, _sink: &mut Sink) -> Vec<Verdict> {
    todo!("candidates helper")
}
