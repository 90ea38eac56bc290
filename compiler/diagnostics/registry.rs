//! The one registry of diagnostic codes (DESIGN §8).
//!
//! A code is a stage letter and three digits. Codes are never reused: a removed code stays
//! here with `removed: true`. Each code has a markdown page (`pages/CODE.md`) printed by
//! `skillc explain CODE`.

use super::Severity;

#[derive(Clone, Copy, Debug)]
pub struct CodeInfo {
    pub code: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    /// One line for `skillc codes`.
    pub summary: &'static str,
    /// The default `help:` line.
    pub help: &'static str,
    /// Policy keys whose current values `explain` prints.
    pub policy_keys: &'static [&'static str],
    /// Notes of this code fold into one per domain (DESIGN §7).
    pub fold_notes: bool,
    pub removed: bool,
}

/// Code constants, so stages name codes by meaning.
pub mod codes {
    pub const MALFORMED_RECORD: &str = "L001";
    pub const MISSING_FIELD: &str = "L002";
    pub const INVALID_VALUE: &str = "L003";
    pub const DUPLICATE_ID: &str = "L004";
    pub const UNKNOWN_FIELD: &str = "L005";
    pub const SELF_INGESTION_REFUSED: &str = "L006";
    pub const UNREADABLE_FILE: &str = "L007";
    pub const UNSUPPORTED_SCHEMA: &str = "L008";
    pub const INACTIVE_MEMORY: &str = "L009";
    pub const UNRECOVERABLE_ARGS: &str = "L010";
    pub const UNKNOWN_FORMAT: &str = "L011";
    pub const SCORE_NOT_USED: &str = "L012";
    pub const OUTLYING_TIME: &str = "L013";

    pub const INVALID_DOMAIN: &str = "N001";
    pub const CREDENTIAL_REFUSED: &str = "N002";
    pub const TOO_MANY_DOMAINS: &str = "N003";

    pub const SUCCESS_CONTRADICTED: &str = "O001";
    pub const STALE_CHECKS: &str = "O002";
    pub const UNVERIFIED_SUCCESS: &str = "O003";

    pub const NO_CANDIDATES: &str = "K001";

    pub const OUTCOME_GATE: &str = "G001";
    pub const NARRATIVE_CANDIDATE: &str = "G002";
    pub const BELOW_REINFORCEMENT: &str = "G003";
    pub const NO_EVIDENCE: &str = "G004";
    pub const FABRICATED_EVIDENCE: &str = "G005";
    pub const UNSUPPORTED_EVIDENCE: &str = "G006";
    pub const RETIRED_EVIDENCE: &str = "G007";

    pub const SUPERSEDED: &str = "S001";
    pub const CONTRADICTED: &str = "S002";
    pub const CAP_EXCEEDED: &str = "S003";
    pub const REFOUNDED: &str = "S004";
    pub const UNKNOWN_IN_PLAY: &str = "S005";
    pub const DEMOTED: &str = "S006";
    pub const ORPHANED_DECISION: &str = "S007";
    pub const INEFFECTIVE_DECISION: &str = "S008";
    pub const CONFLICTING_RULES: &str = "S009";
    pub const BYPASSES_SAFEGUARD: &str = "S010";

    pub const SKILL_TOO_LONG: &str = "E001";
    pub const DELTA_OVERFLOW: &str = "E002";
    pub const FATE_MISMATCH: &str = "E003";
    pub const WITHDRAWN_RULE: &str = "E004";
    pub const UNMATCHED_SKILL: &str = "E005";
    pub const CONTRADICTED_STATEMENT: &str = "E006";
    pub const INVALID_AUTHORED_SKILL: &str = "E007";

    pub const OUTPUT_LOCKED: &str = "U001";
    pub const FOREIGN_STATE: &str = "U002";

    pub const NEAR_MISS: &str = "W001";
    pub const DID_YOU_MEAN: &str = "W002";
    pub const EMPTY_DOMAIN: &str = "W003";
}

use Severity::{Error, Note, Warning};

macro_rules! code {
    ($code:expr, $name:expr, $sev:expr, $summary:expr, $help:expr, [$($key:expr),*], $fold:expr) => {
        CodeInfo {
            code: $code,
            name: $name,
            severity: $sev,
            summary: $summary,
            help: $help,
            policy_keys: &[$($key),*],
            fold_notes: $fold,
            removed: false,
        }
    };
}

/// Every code, sorted by code.
pub static CODES: &[CodeInfo] = &[
    code!(
        "L001",
        "malformed-record",
        Error,
        "a record could not be parsed",
        "fix the syntax at the reported line; the rest of the file was still read where possible",
        [],
        false
    ),
    code!(
        "L002",
        "missing-field",
        Error,
        "a record lacks a required field",
        "add the field (experiences need id, recorded_at, domains and outcome; lesson records also need text, kind and source)",
        [],
        false
    ),
    code!(
        "L003",
        "invalid-value",
        Error,
        "a field has the wrong type or an unknown value",
        "use a type and value the record format allows (skillc explain L003 lists them)",
        [],
        false
    ),
    code!(
        "L004",
        "duplicate-id",
        Error,
        "two records share one id; the first in (path, line) order is kept",
        "give every record a unique id",
        [],
        false
    ),
    code!(
        "L005",
        "unknown-field",
        Warning,
        "a record carries a field skillc does not know",
        "remove the field or check its spelling; unknown fields are ignored",
        [],
        false
    ),
    code!(
        "L006",
        "self-ingestion-refused",
        Warning,
        "a file skillc generated was given as input and skipped",
        "do not point skillc at its own output; compile the experience records instead",
        [],
        false
    ),
    code!(
        "L007",
        "unreadable-file",
        Error,
        "a file inside an input directory could not be read",
        "check the file's permissions and encoding (UTF-8)",
        [],
        false
    ),
    code!(
        "L008",
        "unsupported-schema",
        Error,
        "a memory store has a schema version skillc cannot read",
        "export the store from a supported version (GAIA schema 2 to 4)",
        [],
        false
    ),
    code!(
        "L009",
        "inactive-memory",
        Note,
        "an OmniMem memory is not active and was not compiled",
        "only memories with state active (or no state) are compiled",
        [],
        true
    ),
    code!(
        "L010",
        "unrecoverable-args",
        Note,
        "an operation's arguments could not be recovered",
        "the store truncated the arguments; the operation key falls back to the tool name",
        [],
        true
    ),
    code!(
        "L011",
        "unknown-format",
        Warning,
        "a file in an input directory is not a format skillc reads",
        "give .jsonl, .json, .yaml, .yml or a GAIA memory.db, or pass --from",
        [],
        false
    ),
    code!(
        "L012",
        "score-not-used",
        Note,
        "a memory's own score or confidence is not used",
        "nothing to fix: skillc derives a lesson's confidence from its experiences; to vouch for a memory, set blessed: true or run skillc bless",
        [],
        true
    ),
    code!(
        "L013",
        "outlying-time",
        Warning,
        "a record is dated more than a year after the rest of the input, and sets the compile's now",
        "check the clock of whatever wrote the record and correct its recorded_at; if the date is right, nothing is wrong",
        [],
        false
    ),
    code!(
        "N001",
        "invalid-domain",
        Error,
        "a domain is not a valid skill name and was refused",
        "use lower-case letters, digits and single hyphens (at most 64 characters), or add an alias in rules/aliases.yaml",
        [],
        false
    ),
    code!(
        "N002",
        "credential-refused",
        Error,
        "a candidate contains something that looks like a secret",
        "remove the secret from the record; the candidate is refused and the secret is written nowhere",
        ["secrets"],
        false
    ),
    code!(
        "N003",
        "too-many-domains",
        Warning,
        "a record names more domains than one record compiles into; the rest are ignored",
        "tag the record with the few domains its lessons are about, or raise caps.record_domains in rules/policy.yaml",
        ["caps.record_domains"],
        false
    ),
    code!(
        "O001",
        "success-contradicted",
        Warning,
        "a self-reported success is contradicted by its own checks",
        "record the outcome the checks show, or re-run the failing check after the fix",
        [],
        false
    ),
    code!(
        "O002",
        "stale-checks",
        Warning,
        "passing checks ran before the last change and do not count",
        "run the checks again after the last edit",
        ["mutating_tools", "mutating_prefixes", "read_only_commands"],
        false
    ),
    code!(
        "O003",
        "unverified-success",
        Note,
        "a success carries no checks and counts as unverified",
        "record a check (a test, a build, a linter) with the operations",
        [],
        true
    ),
    code!(
        "K001",
        "no-candidates",
        Note,
        "an experience yields no candidate lesson",
        "record a lesson, gotchas or dead ends, or operations that failed and were then fixed",
        [],
        true
    ),
    code!(
        "G001",
        "outcome-gate",
        Warning,
        "do-candidates from an experience that did not pass are held back",
        "bless the experience if its lesson holds anyway, or record the lesson from a passing run",
        ["allow_pivoted"],
        false
    ),
    code!(
        "G002",
        "narrative-candidate",
        Warning,
        "a do-candidate reads as the story of one incident, not a rule",
        "state the rule (when X, do Y) in the record's `lesson` field, not what happened",
        ["narrative.threshold"],
        false
    ),
    code!(
        "G003",
        "below-reinforcement",
        Note,
        "a lesson has fewer supporting experiences than a rule needs",
        "wait for more experiences to confirm it, or bless one that already reads as a rule",
        ["min_reinforcement"],
        false
    ),
    code!(
        "G004",
        "no-evidence",
        Note,
        "a claimed lesson names no evidence and stays claimed",
        "add the ids of experiences that support the claim",
        ["confidence.claimed"],
        false
    ),
    code!(
        "G005",
        "fabricated-evidence",
        Error,
        "a claim cites experience ids that do not exist",
        "cite only experiences that are in the input",
        [],
        false
    ),
    code!(
        "G006",
        "unsupported-evidence",
        Error,
        "a claim cites experiences that do not support it",
        "cite passed experiences in the claim's domain (and on its operation key, when it has one)",
        [],
        false
    ),
    code!(
        "G007",
        "retired-evidence",
        Note,
        "a cluster's evidence all sits behind a retired lesson",
        "restore the retired lesson if it should come back (skillc lessons restore ID)",
        [],
        false
    ),
    code!(
        "S001",
        "superseded",
        Note,
        "a lesson was superseded and left every prompt-facing file",
        "see its history (skillc lessons history ID)",
        [
            "confidence.supersede_below",
            "confidence.idle_day",
            "confidence.contradiction"
        ],
        false
    ),
    code!(
        "S002",
        "contradicted",
        Warning,
        "a lesson in play was contradicted by an outcome",
        "check whether the lesson still holds; it loses confidence with each contradiction",
        ["confidence.contradiction", "transient_errors"],
        false
    ),
    code!(
        "S003",
        "cap-exceeded",
        Warning,
        "a scope and domain hold more active lessons than the cap",
        "pin the lessons that must stay, or split the domain",
        ["caps.active_lessons"],
        false
    ),
    code!(
        "S004",
        "refounded",
        Note,
        "a back-filled older experience re-founded a lesson under a new id",
        "use the new id from now on; decisions and in_play lists that name the old id follow the lesson",
        [],
        false
    ),
    code!(
        "S005",
        "unknown-in-play",
        Warning,
        "an experience lists an in_play id that names no lesson",
        "list ids from the lesson blocks (lessons/<scope>.md) or the ledger",
        [],
        false
    ),
    code!(
        "S006",
        "demoted",
        Note,
        "a global lesson contradicted from another project was demoted to a project",
        "confirm it from another project to make it global again",
        [],
        false
    ),
    code!(
        "S007",
        "orphaned-decision",
        Warning,
        "a decision in the journal names a lesson this compile does not have",
        "check that every record file the lesson came from is still an input: compiled with them again, the decision applies again",
        [],
        false
    ),
    code!(
        "S008",
        "ineffective-decision",
        Warning,
        "a decision in the journal could not change its lesson",
        "`skillc lessons history ID` shows what the lesson went through; take the decision on the lesson that replaced it, if any",
        [],
        false
    ),
    code!(
        "S009",
        "conflicting-rules",
        Warning,
        "two rules of one scope and domain say opposite things",
        "retire the rule that no longer holds (`skillc lessons retire ID`), or edit one so that each says when it applies",
        [],
        false
    ),
    code!(
        "S010",
        "bypasses-safeguard",
        Warning,
        "an active lesson tells agents to switch a safeguard off",
        "if the bypass is right where the lesson applies, pin it (`skillc lessons pin ID`), which also ends this warning; otherwise retire it (`skillc lessons retire ID`) and fix what it works around",
        ["bypasses"],
        false
    ),
    code!(
        "E001",
        "skill-too-long",
        Warning,
        "a SKILL.md would exceed its line budget; the lowest-confidence rules were left out",
        "split the domain or retire rules that no longer matter",
        ["caps.skill_lines"],
        false
    ),
    code!(
        "E002",
        "delta-overflow",
        Warning,
        "rules did not fit the skill delta budget and were left out",
        "shorten the rules or raise the delta budget",
        ["deltas.max_payload_chars", "deltas.max_added_tokens"],
        false
    ),
    code!(
        "E003",
        "fate-mismatch",
        Error,
        "candidates do not add up to rules, lessons, held back and refused",
        "this is a bug in skillc; please report it with the input",
        [],
        false
    ),
    code!(
        "E004",
        "withdrawn-rule",
        Warning,
        "an authored skill carries a rule that has since been superseded or retired",
        "remove the rule's bullet from the authored skill; when the message names what superseded it, put that rule in its place",
        [],
        false
    ),
    code!(
        "E005",
        "unmatched-skill",
        Note,
        "an authored skill matches no domain this compile has lessons in, so it gets no delta",
        "name the skill's directory or frontmatter `name` after the domain its rules belong to (an alias in rules/aliases.yaml works too)",
        [],
        false
    ),
    code!(
        "E006",
        "contradicted-statement",
        Warning,
        "a rule a delta proposes for an authored skill says the opposite of a line the skill already has",
        "decide which one is right: delete or reword the authored line and accept the row, or reject the row and retire the lesson (`skillc lessons retire ID --reason ...`)",
        [],
        false
    ),
    code!(
        "E007",
        "invalid-authored-skill",
        Warning,
        "an authored skill's frontmatter breaks the Agent Skills specification, so agents may not load it as written",
        "fix the frontmatter at the reported line: YAML that parses, a `name` of lower-case letters, digits and single hyphens equal to the skill's directory name, and a `description` of at most 1024 characters",
        [],
        false
    ),
    code!(
        "U001",
        "output-locked",
        Error,
        "another compile holds the output directory",
        "wait for the other compile to finish; a lock left by a dead process is taken over automatically",
        [],
        false
    ),
    code!(
        "U002",
        "foreign-state",
        Error,
        "the state store is not a skillc store",
        "point --state at a skillc state.db, or at a new path",
        [],
        false
    ),
    code!(
        "W001",
        "near-miss",
        Note,
        "a held-back cluster is close to becoming a rule",
        "follow the suggested action (one more experience, a lesson, or a blessing)",
        ["min_reinforcement"],
        false
    ),
    code!(
        "W002",
        "did-you-mean",
        Note,
        "the domain asked for has no candidates; a similar one does",
        "ask for the suggested domain",
        [],
        false
    ),
    code!(
        "W003",
        "empty-domain",
        Note,
        "the domain asked for has no experiences",
        "check the domain's spelling and aliases, or the inputs given",
        [],
        false
    ),
];

pub fn lookup(code: &str) -> Option<&'static CodeInfo> {
    // Every code is one letter and three digits: compared as one 32-bit word, the scan costs
    // no memcmp per entry (a million-experience compile makes over a million diagnostics).
    let word = code_word(code)?;
    CODES.iter().find(|c| code_word(c.code) == Some(word))
}

fn code_word(code: &str) -> Option<u32> {
    <[u8; 4]>::try_from(code.as_bytes()).ok().map(u32::from_le_bytes)
}

pub fn by_name(name: &str) -> Option<&'static CodeInfo> {
    CODES.iter().find(|c| c.name == name)
}

/// Stage order for sorting: load, normalize, outcome, candidates, cluster, gate, score,
/// emit, usage, reports.
pub fn stage_rank(code: &str) -> usize {
    // A match on the first byte: this runs twice per comparison when a few hundred thousand
    // diagnostics are sorted.
    match code.as_bytes().first() {
        Some(b'L') => 0,
        Some(b'N') => 1,
        Some(b'O') => 2,
        Some(b'K') => 3,
        Some(b'C') => 4,
        Some(b'G') => 5,
        Some(b'S') => 6,
        Some(b'E') => 7,
        Some(b'U') => 8,
        _ => 9,
    }
}
