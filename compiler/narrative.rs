//! The narrative gate (DESIGN §5.4): does a do-candidate read as the story of one incident
//! rather than a rule? Patterns and weights live in `rules/narrative.yaml`.

#[derive(Clone, Debug, Default)]
pub struct Narrative {}

/// How a text was classified, with the signals that fired (for `why` and `trace`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Classification {
    pub narrative: bool,
    pub score: i32,
    pub signals: Vec<String>,
}

impl Narrative {
    pub fn from_yaml(_text: &str) -> Result<Narrative, String> {
        Ok(Narrative::default()) // TODO(narrative helper)
    }

    pub fn classify(&self, _text: &str) -> Classification {
        Classification::default() // TODO(narrative helper)
    }

    pub fn is_narrative(&self, text: &str) -> bool {
        self.classify(text).narrative
    }

    /// Current value of a narrative policy key (`narrative_threshold`), for `explain`.
    pub fn value_of(&self, _key: &str) -> Option<String> {
        None
    }
}
