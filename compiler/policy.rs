//! Policy: the YAML files under `rules/` turned into checked, typed values.
//!
//! The default rules are compiled into the binary, so a missing `rules/` directory still
//! works; `--rules DIR` (or `./rules` when present) overrides them file by file.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{cluster::Lexicon, narrative::Narrative, normalize::Aliases, normalize::SecretScanner};

pub const BUILTIN_POLICY: &str = include_str!("../rules/policy.yaml");
pub const BUILTIN_ALIASES: &str = include_str!("../rules/aliases.yaml");
pub const BUILTIN_NARRATIVE: &str = include_str!("../rules/narrative.yaml");
pub const BUILTIN_SECRETS: &str = include_str!("../rules/secrets.yaml");
pub const BUILTIN_LEXICON: &str = include_str!("../rules/lexicon.yaml");

/// Confidence constants, in integer thousandths (DESIGN §6).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Confidence {
    pub admitted: i32,
    pub claimed: i32,
    pub confirmation: i32,
    pub contradiction: i32,
    pub idle_day: i32,
    pub supersede_below: i32,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Caps {
    /// Active lessons per (scope, domain).
    pub active_lessons: usize,
    /// Lines in a plan-time lesson block.
    pub block_lines: usize,
    /// Lines in one SKILL.md.
    pub skill_lines: usize,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DeltaBudget {
    pub max_payload_chars: usize,
    pub max_added_tokens: usize,
}

/// `rules/policy.yaml`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    pub min_reinforcement: u32,
    /// Does a self-reported `pivoted` pass the outcome gate?
    pub allow_pivoted: bool,
    /// Case-insensitive substrings of an error message that make a failure transient.
    pub transient_errors: Vec<String>,
    /// Tools that change the workspace; a passing check before the last of them is stale.
    pub mutating_tools: Vec<String>,
    pub mutating_prefixes: Vec<String>,
    /// Programs (or `program subcommand`) whose runs are checks, for stores without check records.
    pub check_programs: Vec<String>,
    pub confidence: Confidence,
    pub caps: Caps,
    pub deltas: DeltaBudget,
}

impl Policy {
    pub fn from_yaml(text: &str) -> Result<Policy, String> {
        serde_yaml::from_str(text).map_err(|e| e.to_string())
    }

    pub fn is_mutating(&self, tool: &str) -> bool {
        self.mutating_tools.iter().any(|t| t == tool)
            || self
                .mutating_prefixes
                .iter()
                .any(|p| tool.starts_with(p.as_str()))
    }

    /// A failure whose message matches the transient list (timeouts, rate limits, …).
    pub fn is_transient(&self, error: &str) -> bool {
        let e = error.to_lowercase();
        self.transient_errors
            .iter()
            .any(|t| e.contains(&t.to_lowercase()))
    }

    /// The current value of a policy key named in the diagnostics registry, for `explain`.
    pub fn value_of(&self, key: &str, rules: &Rules) -> Option<String> {
        let v = serde_json::to_value(self).ok()?;
        let mut cur = &v;
        for part in key.split('.') {
            match cur.get(part) {
                Some(next) => cur = next,
                None => return rules.narrative.value_of(key),
            }
        }
        Some(cur.to_string())
    }
}

/// Everything under `rules/`, checked.
#[derive(Clone, Debug)]
pub struct Rules {
    pub policy: Policy,
    pub aliases: Aliases,
    pub secrets: SecretScanner,
    pub narrative: Narrative,
    pub lexicon: Lexicon,
    /// Where the rules came from (a directory or `built-in`), for reports.
    pub origin: String,
}

#[derive(Debug)]
pub struct PolicyError {
    pub file: PathBuf,
    pub message: String,
}

impl std::fmt::Display for PolicyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.message)
    }
}

impl Rules {
    /// The rules compiled into the binary.
    pub fn builtin() -> Rules {
        Rules::from_texts(
            [
                BUILTIN_POLICY,
                BUILTIN_ALIASES,
                BUILTIN_NARRATIVE,
                BUILTIN_SECRETS,
                BUILTIN_LEXICON,
            ],
            Path::new("<built-in>"),
        )
        .expect("built-in rules are valid")
    }

    /// Loads `dir/*.yaml`; a file that is absent falls back to the built-in one.
    pub fn load(dir: &Path) -> Result<Rules, PolicyError> {
        let read = |name: &str, builtin: &'static str| -> Result<String, PolicyError> {
            let path = dir.join(name);
            match std::fs::read_to_string(&path) {
                Ok(t) => Ok(t),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(builtin.to_string()),
                Err(e) => Err(PolicyError {
                    file: path,
                    message: e.to_string(),
                }),
            }
        };
        let texts = [
            read("policy.yaml", BUILTIN_POLICY)?,
            read("aliases.yaml", BUILTIN_ALIASES)?,
            read("narrative.yaml", BUILTIN_NARRATIVE)?,
            read("secrets.yaml", BUILTIN_SECRETS)?,
            read("lexicon.yaml", BUILTIN_LEXICON)?,
        ];
        let mut rules = Rules::from_texts(texts.each_ref().map(|s| s.as_str()), dir)?;
        rules.origin = dir.display().to_string();
        Ok(rules)
    }

    fn from_texts(t: [&str; 5], dir: &Path) -> Result<Rules, PolicyError> {
        let err = |name: &str| {
            let file = dir.join(name);
            move |message: String| PolicyError { file, message }
        };
        Ok(Rules {
            policy: Policy::from_yaml(t[0]).map_err(err("policy.yaml"))?,
            aliases: Aliases::from_yaml(t[1]).map_err(err("aliases.yaml"))?,
            narrative: Narrative::from_yaml(t[2]).map_err(err("narrative.yaml"))?,
            secrets: SecretScanner::from_yaml(t[3]).map_err(err("secrets.yaml"))?,
            lexicon: Lexicon::from_yaml(t[4]).map_err(err("lexicon.yaml"))?,
            origin: "built-in".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_rules_load() {
        let r = Rules::builtin();
        assert_eq!(r.policy.min_reinforcement, 2);
        assert!(r.policy.is_mutating("write_file"));
        assert!(r.policy.is_mutating("edit_notebook"));
        assert!(!r.policy.is_mutating("read_file"));
        assert!(r.policy.is_transient("Read timed out after 30s"));
        assert!(r.policy.is_transient("HTTP 429: rate limit exceeded"));
        assert!(
            !r.policy
                .is_transient("ModuleNotFoundError: No module named 'yaml'")
        );
    }

    #[test]
    fn a_secrets_file_without_patterns_is_refused_and_a_missing_one_is_built_in() {
        let dir = std::env::temp_dir().join(format!("skillc-policy-secrets-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("policy.yaml"), BUILTIN_POLICY).unwrap();
        let token = "export GH_TOKEN=ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
        // Absent: the built-in patterns, as for every other rules file.
        let rules = Rules::load(&dir).unwrap();
        assert_eq!(rules.secrets.find(token), Some("github-token"));
        for empty in [
            "",
            "  \n\n",
            "# team credential patterns: none yet\n",
            "patterns: []\n",
            "patterns:\n",
        ] {
            std::fs::write(dir.join("secrets.yaml"), empty).unwrap();
            let e = Rules::load(&dir).map(|_| ()).unwrap_err();
            assert_eq!(e.file, dir.join("secrets.yaml"), "{empty:?}");
            assert!(e.message.contains("no credential patterns"), "{empty:?}: {e}");
        }
        // One pattern of the team's own is enough, and replaces the built-in ones.
        std::fs::write(
            dir.join("secrets.yaml"),
            "patterns:\n  - name: acme-deploy-key\n    regex: '\\bacme_dk_[a-z0-9]{24}\\b'\n",
        )
        .unwrap();
        let rules = Rules::load(&dir).unwrap();
        assert_eq!(
            rules.secrets.find("key acme_dk_0123456789abcdefghijklmn"),
            Some("acme-deploy-key")
        );
        assert_eq!(rules.secrets.find(token), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
