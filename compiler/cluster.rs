//! Cluster: candidates that say the same lesson, blocked by (domain, kind, operation key),
//! paired through an index and joined to an anchor (DESIGN §5.3).

use crate::model::{Candidate, Cluster};

/// `rules/lexicon.yaml`: stop words, inflections and synonyms.
#[derive(Clone, Debug, Default)]
pub struct Lexicon {}

impl Lexicon {
    pub fn from_yaml(_text: &str) -> Result<Lexicon, String> {
        Ok(Lexicon::default()) // TODO(cluster helper)
    }
}

/// Would two lesson texts be the same lesson, in different words?
pub fn similar(_lexicon: &Lexicon, _a: &str, _b: &str) -> bool {
    todo!("cluster helper")
}

/// Clusters every candidate that is not refused; output sorted by cluster id.
pub fn cluster(_candidates: &[Candidate], _lexicon: &Lexicon) -> Vec<Cluster> {
    todo!("cluster helper")
}
