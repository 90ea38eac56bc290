//! Candidates: one per (experience, domain, text) — do, avoid, watch and mechanical
//! (DESIGN §5.1) — with the per-candidate gates recorded as flags.

use crate::diagnostics::Sink;
use crate::model::{Candidate, Corpus};
use crate::outcome::Verdict;
use crate::policy::Rules;

/// Candidates from every experience and claim, in record order (experiences first, then
/// claims; within a record: do, mechanical, watch, avoid; then by domain).
pub fn extract(_corpus: &Corpus, _verdicts: &[Verdict], _rules: &Rules, _sink: &mut Sink) -> Vec<Candidate> {
    todo!("candidates helper")
}
