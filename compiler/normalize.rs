//! Normalize: domains (aliases, validation), text, credentials, project digests (DESIGN §4).

use std::collections::BTreeMap;

use crate::diagnostics::Sink;
use crate::model::Corpus;
use crate::policy::Rules;

/// `rules/aliases.yaml`: domain aliases and the program → domain map used for stores that
/// record no domains (GAIA).
#[derive(Clone, Debug, Default)]
pub struct Aliases {
    pub domains: BTreeMap<String, String>,
    pub programs: BTreeMap<String, String>,
}

impl Aliases {
    pub fn from_yaml(_text: &str) -> Result<Aliases, String> {
        Ok(Aliases::default()) // TODO(normalize helper)
    }
}

/// `rules/secrets.yaml`, compiled.
#[derive(Clone, Debug, Default)]
pub struct SecretScanner {}

impl SecretScanner {
    pub fn from_yaml(_text: &str) -> Result<SecretScanner, String> {
        Ok(SecretScanner::default()) // TODO(normalize helper)
    }

    /// The name of the first pattern the text matches; never the secret itself.
    pub fn find(&self, _text: &str) -> Option<&str> {
        None // TODO(normalize helper)
    }
}

/// Trim, lower-case, whitespace/`.`/`_` runs → `-`, alias; then validate as an Agent Skills
/// name. `Err` carries why, for the diagnostic.
pub fn domain(_raw: &str, _aliases: &Aliases) -> Result<String, String> {
    todo!("normalize helper")
}

/// One line, whitespace collapsed, cut at 240 characters on a character boundary with `…`.
pub fn text(_raw: &str) -> String {
    todo!("normalize helper")
}

/// Normalises every record in place: valid domains stay in `domains`, refused ones move to
/// `refused_domains` (with an `invalid-domain` diagnostic); texts are normalised; projects
/// become digests.
pub fn normalize(_corpus: &mut Corpus, _rules: &Rules, _sink: &mut Sink) {
    todo!("normalize helper")
}
