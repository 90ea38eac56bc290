//! Policy: the YAML files under `rules/` turned into checked, typed values.
//!
//! The default rules are compiled into the binary, so a missing `rules/` directory still
//! works; `--rules DIR` (or `./rules` when present) overrides them file by file.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize, de};
use serde_json::Value;

use crate::bypass::{Bypass, Bypasses};
use crate::model::Args;
use crate::{cluster::Lexicon, narrative::Narrative, normalize::Aliases, normalize::SecretScanner};

pub const BUILTIN_POLICY: &str = include_str!("../rules/policy.yaml");
pub const BUILTIN_ALIASES: &str = include_str!("../rules/aliases.yaml");
pub const BUILTIN_NARRATIVE: &str = include_str!("../rules/narrative.yaml");
pub const BUILTIN_SECRETS: &str = include_str!("../rules/secrets.yaml");
pub const BUILTIN_LEXICON: &str = include_str!("../rules/lexicon.yaml");

/// Confidence constants, in integer thousandths (DESIGN §6). Levels, steps and the floor
/// all lie in 0..=1000: the fold keeps confidence there, so nothing outside it means anything.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Confidence {
    #[serde(deserialize_with = "thousandths")]
    pub admitted: i32,
    #[serde(deserialize_with = "thousandths")]
    pub claimed: i32,
    #[serde(deserialize_with = "thousandths")]
    pub confirmation: i32,
    /// Subtracted, so a magnitude like the others.
    #[serde(deserialize_with = "thousandths")]
    pub contradiction: i32,
    /// Subtracted per idle active day; 0 turns decay off.
    #[serde(deserialize_with = "thousandths")]
    pub idle_day: i32,
    #[serde(deserialize_with = "thousandths")]
    pub supersede_below: i32,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Caps {
    /// Active lessons per (scope, domain).
    #[serde(deserialize_with = "at_least_one")]
    pub active_lessons: usize,
    /// Lines in a plan-time lesson block.
    #[serde(deserialize_with = "at_least_one")]
    pub block_lines: usize,
    /// Lines in one SKILL.md; fewer than the frontmatter and one rule would leave every
    /// SKILL.md without rules.
    #[serde(deserialize_with = "skill_lines")]
    pub skill_lines: usize,
    /// Distinct domains one record compiles into; the rest are ignored (N003). Each domain
    /// multiplies a record's texts into candidates, so without a bound one record could
    /// outweigh a million. Optional, so policy files written before it still load.
    #[serde(deserialize_with = "at_least_one", default = "default_record_domains")]
    pub record_domains: usize,
}

fn default_record_domains() -> usize {
    16
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DeltaBudget {
    #[serde(deserialize_with = "at_least_one")]
    pub max_payload_chars: usize,
    #[serde(deserialize_with = "at_least_one")]
    pub max_added_tokens: usize,
}

/// `rules/policy.yaml`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    #[serde(deserialize_with = "at_least_one")]
    pub min_reinforcement: u32,
    /// Does a self-reported `pivoted` pass the outcome gate?
    pub allow_pivoted: bool,
    /// Phrases of an error message that make a failure transient (case-insensitive, whole words).
    pub transient_errors: Vec<String>,
    /// The `transient_errors` phrases that say nothing listens at the address a call used
    /// ("connection refused"): transient when retried there, a fix when the next working call
    /// on the key goes to another port or host (`refuses_address`). Optional, so policy files
    /// written before it still load.
    #[serde(default)]
    pub address_errors: Vec<String>,
    /// Substrings of an error message that report a failed assertion: never transient.
    #[serde(default)]
    pub assertion_markers: Vec<String>,
    /// Substrings of an error message that name the setting to change ("try increasing it by
    /// passing --timeout"): the next call with it changed is a fix, so never transient.
    #[serde(default)]
    pub setting_hints: Vec<String>,
    /// Substrings of an error message by which a test runner reports a test that ran past its
    /// own time limit ("panic: test timed out after 30s"): the code under test hung or is slow,
    /// a real fault, so never transient. Optional, so policy files written before it still load.
    #[serde(default)]
    pub test_timeouts: Vec<String>,
    /// Marks at the start of a line by which a test runner names a test ("● Orders › refunds a
    /// cancelled order"): a test's name is not why it failed, so such lines are not read for
    /// transient phrases (`without_test_titles`). Case-sensitive. Optional, so policy files
    /// written before it still load.
    #[serde(default)]
    pub test_title_marks: Vec<String>,
    /// Tools that change the workspace; a passing check before the last of them is stale.
    pub mutating_tools: Vec<String>,
    pub mutating_prefixes: Vec<String>,
    /// Values of a mutating tool's `command` argument that only read (`view` of
    /// `str_replace_editor`): such a call changes nothing. Optional, so policy files written
    /// before it still load.
    #[serde(default)]
    pub read_only_commands: Vec<String>,
    /// Programs (or `program subcommand`) whose shell runs change the workspace: Codex CLI's
    /// `apply_patch` called through `shell`, `git apply`, `git checkout`. Matched on the
    /// program the command runs inside its wrappers (`cd repo && git stash`). Optional, so
    /// policy files written before it still load.
    #[serde(default)]
    pub mutating_programs: Vec<String>,
    /// Shell runs that only look around (`program` or `program subcommand`: `git status`,
    /// `kubectl get`): one right after a failed call of another subcommand replaces nothing, so
    /// it teaches no "run X instead of Y". Case-insensitive, on the program inside its
    /// wrappers. Optional, so policy files written before it still load.
    #[serde(default)]
    pub inspect_programs: Vec<String>,
    /// Tools that only read (Claude Code's `Read` and `Grep`, Gemini CLI's `read_file`): a
    /// call of one is a look, as a shell run of `inspect_programs` is (`only_reads`).
    /// Case-insensitive. Optional, so policy files written before it still load.
    #[serde(default)]
    pub inspect_tools: Vec<String>,
    /// Top-level argument names that only label a call (Claude Code's `description`, Cursor's
    /// `explanation`): dropped from every call's arguments in normalize. Names match exactly.
    #[serde(default)]
    pub label_args: Vec<String>,
    /// Top-level argument names that carry what a call writes (an edit's old and new text, a
    /// file's content) rather than how it is called: a mechanical lesson's form leaves them
    /// out (`call_form`). Names match exactly.
    #[serde(default)]
    pub content_args: Vec<String>,
    /// Top-level argument names that say where a call ran (`cwd`, Codex's `workdir`): a
    /// mechanical lesson's form leaves them out when its fix did not change them
    /// (`fix_form`), so one fix learned in two checkouts is one lesson. Names match exactly.
    #[serde(default)]
    pub place_args: Vec<String>,
    /// Programs (or `program subcommand`) whose runs are checks, for stores without check records.
    pub check_programs: Vec<String>,
    /// Flags that make a command report instead of act (`--check`, `--dry-run`): its failure
    /// says there is work to do, and the same program run without one does it, so that pair
    /// teaches no "instead of" (`probe_flag`). Exact words, or the word before a `=`.
    #[serde(default)]
    pub probe_flags: Vec<String>,
    /// Flags that make a checker apply what it finds (`--fix`, `--write`): a check that failed,
    /// then the same program with one, did the work its report asked for, so that pair teaches
    /// no "instead of" either (`fix_flag`). Exact words, or the word before a `=`.
    #[serde(default)]
    pub fix_flags: Vec<String>,
    /// Workarounds that switch a safeguard off: an active lesson telling agents to use one is
    /// named (S010, `bypass`). Optional, so policy files written before it still load.
    #[serde(default)]
    pub bypasses: Vec<Bypass>,
    pub confidence: Confidence,
    pub caps: Caps,
    pub deltas: DeltaBudget,
    /// The phrases above as one automaton, built by `from_yaml` (see `TransientPhrases`).
    #[serde(skip)]
    transient: TransientPhrases,
    /// `mutating_programs` as one automaton, built by `from_yaml` (see `MutatingPrograms`).
    #[serde(skip)]
    mutating: MutatingPrograms,
    /// `bypasses` compiled, built by `from_yaml`.
    #[serde(skip)]
    bypass_matcher: Bypasses,
}

/// The first word of `command` that is one of `flags`, or whose part before a `=` is.
fn flag_among<'c>(command: &'c str, flags: &[String]) -> Option<&'c str> {
    command.split_whitespace().find(|w| {
        let flag = w.split_once('=').map_or(*w, |(f, _)| f);
        flags.iter().any(|p| p == flag)
    })
}

impl Policy {
    pub fn from_yaml(text: &str) -> Result<Policy, String> {
        let mut p: Policy = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
        // Lowered once here: `is_transient` runs for every failed operation.
        let vetoes = (p.assertion_markers.iter_mut())
            .chain(&mut p.setting_hints)
            .chain(&mut p.test_timeouts);
        for phrase in (p.transient_errors.iter_mut())
            .chain(vetoes)
            .chain(&mut p.address_errors)
        {
            *phrase = phrase.to_lowercase();
        }
        // Found as the cause `transient_cause` names, so each must be one of those phrases.
        if let Some(stray) = (p.address_errors.iter()).find(|a| !p.transient_errors.contains(a)) {
            return Err(format!(
                "address_errors: \"{stray}\" is not one of transient_errors (an address error is a transient error that another address answers)"
            ));
        }
        p.transient = TransientPhrases::new(&p);
        p.mutating = MutatingPrograms::new(&p.mutating_programs);
        p.bypass_matcher = Bypasses::new(&p.bypasses)?;
        Ok(p)
    }

    /// `bypasses`, compiled (see `bypass::Bypasses`).
    pub fn bypass_matcher(&self) -> &Bypasses {
        &self.bypass_matcher
    }

    /// The probe flag (`probe_flags`) a command line carries, if any: `black --check .`,
    /// `kubectl apply --dry-run=client -f deploy.yaml`.
    pub fn probe_flag<'c>(&self, command: &'c str) -> Option<&'c str> {
        flag_among(command, &self.probe_flags)
    }

    /// The fix flag (`fix_flags`) a command line carries, if any: `ruff check --fix .`,
    /// `prettier --write src`.
    pub fn fix_flag<'c>(&self, command: &'c str) -> Option<&'c str> {
        flag_among(command, &self.fix_flags)
    }

    /// Tool names compare case-insensitively: agents spell the same tool `Edit` or `edit`.
    pub fn is_mutating(&self, tool: &str) -> bool {
        self.mutating_tools.iter().any(|t| t.eq_ignore_ascii_case(tool))
            || self.mutating_prefixes.iter().any(|p| {
                tool.get(..p.len())
                    .is_some_and(|head| head.eq_ignore_ascii_case(p))
            })
    }

    /// Does this call change the workspace? A mutating tool does, unless its `command` argument
    /// names a read-only sub-command (`str_replace_editor` with `"command": "view"`). Only a
    /// mutating tool's arguments that mention `"command"` are read, and then only that field.
    /// A shell call running one of `mutating_programs` changes the workspace too.
    pub fn is_mutating_call(&self, tool: &str, args: &Args) -> bool {
        if self.is_mutating(tool) {
            return !self.is_read_only_command(args);
        }
        self.runs_mutating_program(args)
    }

    /// Is `command` a check (`check_programs`: `pytest`, `cargo check`, `npm test`)? An entry
    /// without a subcommand takes every run of its program.
    pub fn checks(&self, command: &crate::opkey::Command) -> bool {
        lists_run(
            &self.check_programs,
            &command.program,
            command.subcommand.as_deref(),
            command.words(),
        )
    }

    /// Does this call only read: a tool of `inspect_tools`, or a mutating tool asked for a
    /// read-only command (`str_replace_editor` with `"command": "view"`)?
    pub fn only_reads(&self, tool: &str, args: &Args) -> bool {
        self.inspect_tools.iter().any(|t| t.eq_ignore_ascii_case(tool))
            || (self.is_mutating(tool) && self.is_read_only_command(args))
    }

    /// Does `command` only look around (`inspect_programs`)? An entry without a subcommand
    /// takes every run of its program; an entry `program -flag` (`rake -T`, `nginx -t`) every
    /// run of the program with that flag among its words.
    pub fn inspects(&self, command: &crate::opkey::Command) -> bool {
        lists_run(
            &self.inspect_programs,
            &command.program,
            command.subcommand.as_deref(),
            command.words(),
        )
    }

    /// Does the call's command run one of `mutating_programs`? Arguments that do not mention
    /// any of their programs are not parsed.
    fn runs_mutating_program(&self, args: &Args) -> bool {
        if self.mutating_programs.is_empty() || !self.mutating.may_run(args.text()) {
            return false;
        }
        let value = args.value();
        let Some(command) = crate::opkey::command_of(&value) else {
            return false;
        };
        let (program, words, sub) = crate::opkey::program_run(&command);
        lists_run(&self.mutating_programs, &program, sub, &words)
    }

    fn is_read_only_command(&self, args: &Args) -> bool {
        #[derive(Deserialize)]
        struct Sub<'a> {
            #[serde(borrow, default)]
            command: Option<Cow<'a, str>>,
        }
        if self.read_only_commands.is_empty() || !args.text().contains("\"command\"") {
            return false;
        }
        let Ok(Sub { command: Some(c) }) = serde_json::from_str::<Sub>(args.text()) else {
            return false;
        };
        let c = c.trim();
        self.read_only_commands.iter().any(|r| r.eq_ignore_ascii_case(c))
    }

    /// A call's form for mechanical lessons (DESIGN §5.1 compares whole `args`): its arguments
    /// without the content ones (`content_args`), so an edit retried with other text is the
    /// same call, and a fix names and clusters on how the call changed, not what it wrote.
    pub fn call_form<'v>(&self, args: &'v Value) -> Cow<'v, Value> {
        without(args, &self.content_args)
    }

    /// A call's form without where it ran (`place_args`): what a fix learned elsewhere is
    /// compared with when its own form has no place (`fix_form`).
    pub fn placeless<'v>(&self, form: &'v Value) -> Cow<'v, Value> {
        without(form, &self.place_args)
    }

    /// The form a mechanical lesson keeps of a fix (`working` succeeded where `failing`
    /// failed, both call forms): the place arguments both calls share are left out, since the
    /// fix did not change them and the same fix runs in every checkout; a place the fix
    /// changed (the call had to run elsewhere) stays.
    pub fn fix_form<'v>(&self, failing: &Value, working: &'v Value) -> Cow<'v, Value> {
        let (Value::Object(f), Value::Object(w)) = (failing, working) else {
            return Cow::Borrowed(working);
        };
        let shared: Vec<String> = (self.place_args.iter())
            .filter(|n| w.contains_key(*n) && f.get(*n) == w.get(*n))
            .cloned()
            .collect();
        without(working, &shared)
    }

    /// Removes the label arguments (`label_args`) from a call's arguments; true when one was
    /// there. Only the top level: a label is an argument of the call, not a value inside one.
    pub fn strip_label_args(&self, args: &mut Value) -> bool {
        drop_top_level(args, &self.label_args)
    }

    /// A matcher that tells, from a call's arguments as JSON text, whether they may carry a
    /// label argument; built once per compile (see `LabelArgs`).
    pub fn label_matcher(&self) -> LabelArgs {
        let quoted = (self.label_args.iter()).map(|n| format!("\"{n}\"")).collect();
        LabelArgs { quoted }
    }

    /// A failure whose message names a transient cause (timeouts, rate limits, …) as whole
    /// words, and reports no failed assertion, no setting to change and no test's own timeout.
    pub fn is_transient(&self, error: &str) -> bool {
        self.transient_cause(error).is_some()
    }

    /// Does a failure's transient `cause` (as `transient_cause` names it) say nothing listens
    /// at the address the call used (`address_errors`)?
    pub fn refuses_address(&self, cause: &str) -> bool {
        self.address_errors.iter().any(|a| a == cause)
    }

    /// The `transient_errors` phrase that makes `error` transient (`is_transient`), for `trace`.
    /// A phrase found only in the name of a test (`without_test_titles`) makes no cause.
    pub fn transient_cause(&self, error: &str) -> Option<&str> {
        let cause = self.phrase_cause(error)?;
        match self.without_test_titles(error) {
            Some(rest) => self.phrase_cause(&rest),
            None => Some(cause),
        }
    }

    /// The first `transient_errors` phrase in `error` unless a veto is there too.
    fn phrase_cause(&self, error: &str) -> Option<&str> {
        match self.transient.find(error) {
            Some(found) => found.map(|i| self.transient_errors[i].as_str()),
            None => self.scan_transient_cause(error),
        }
    }

    /// `error` without the lines by which a test runner names a test, or `None` when it has
    /// none: a line that starts with one of `test_title_marks` (Jest's "● Orders › refunds a
    /// cancelled order"), a numbered title (Mocha's, RSpec's, Playwright's "  1) Orders") with
    /// the deeper-indented lines Mocha continues it on, up to the one ending in ':', and
    /// Gradle's "OrderTest > refunds a cancelled order FAILED". A test's name says what it
    /// tests, not why it failed. Called only for an error with a transient phrase.
    fn without_test_titles(&self, error: &str) -> Option<String> {
        let mut kept = String::with_capacity(error.len());
        let mut dropped = false;
        // The column a numbered title's text starts at, while lines may continue it.
        let mut title_column: Option<usize> = None;
        for line in error.split_inclusive('\n') {
            let text = line.trim_end();
            let body = text.trim_start();
            let indent = text.len() - body.len();
            let column = title_column.take();
            let continues = column.is_some_and(|c| indent > c && !body.is_empty());
            let numbered = numbered_title(body);
            if continues {
                if !body.ends_with(':') {
                    title_column = column;
                }
            } else if let Some(n) = numbered
                && !body.ends_with(':')
            {
                title_column = Some(indent + n);
            }
            let title = continues
                || numbered.is_some()
                || (self.test_title_marks.iter()).any(|m| body.starts_with(m.as_str()))
                || (body.ends_with(" FAILED") && body.contains(" > "));
            if title {
                dropped = true;
            } else {
                kept.push_str(line);
            }
        }
        dropped.then_some(kept)
    }

    /// The phrases that make a failure real whatever transient words it also has: failed
    /// assertions, settings to change, a test's own timeout.
    fn vetoes(&self) -> impl Iterator<Item = &String> {
        (self.assertion_markers.iter())
            .chain(&self.setting_hints)
            .chain(&self.test_timeouts)
    }

    /// `transient_cause` by lowering the error and looking for each phrase in turn.
    fn scan_transient_cause(&self, error: &str) -> Option<&str> {
        let e = error.to_lowercase();
        let mut vetoes = self.vetoes();
        if vetoes.any(|m| e.contains(m.as_str())) {
            return None;
        }
        (self.transient_errors.iter())
            .find(|t| contains_words(&e, t))
            .map(String::as_str)
    }

    /// The current value of a policy key named in the diagnostics registry, for `explain`.
    /// `secrets` is the names of the credential patterns in use (`rules/secrets.yaml`), which
    /// decide N002 as policy keys decide other codes.
    pub fn value_of(&self, key: &str, rules: &Rules) -> Option<String> {
        if key == "secrets" {
            let names: Vec<&str> = rules.secrets.names().collect();
            return serde_json::to_string(&names).ok();
        }
        let v = serde_json::to_value(self).ok()?;
        let mut cur = &v;
        for part in key.split('.') {
            match cur.get(part) {
                Some(next) => cur = next,
                None => return rules.narrative.value_of(key),
            }
        }
        // A list of named entries (`bypasses`) reads best as its names; the file has the rest.
        if let Some(entries) = cur.as_array()
            && !entries.is_empty()
            && entries
                .iter()
                .all(|e| e.get("name").is_some_and(Value::is_string))
        {
            let names: Vec<&Value> = entries.iter().map(|e| &e["name"]).collect();
            return serde_json::to_string(&names).ok();
        }
        Some(cur.to_string())
    }
}

/// Does a list of `program`, `program subcommand` or `program -flag` entries
/// (`check_programs`, `inspect_programs`, `mutating_programs`) name this run? An entry without
/// more takes every run of its program; one with a flag every run with that flag among its
/// words, matched exactly (`rake -T` lists the tasks, `rake -t` traces them). The program and
/// subcommands match case-insensitively.
fn lists_run(entries: &[String], program: &str, sub: Option<&str>, words: &[&str]) -> bool {
    entries.iter().any(|entry| {
        let mut listed = entry.split_whitespace();
        if !listed.next().is_some_and(|p| p.eq_ignore_ascii_case(program)) {
            return false;
        }
        let mut rest = listed.peekable();
        if let Some(flag) = rest.next_if(|w| w.starts_with('-')) {
            return rest.next().is_none() && words.contains(&flag);
        }
        let mut sub_words = sub.unwrap_or("").split(' ').filter(|w| !w.is_empty());
        // A grouped subcommand (`stash pop`) is listed by its group (`git stash`) or whole
        // (`kubectl rollout status`, not `kubectl rollout undo`).
        rest.all(|w| sub_words.next().is_some_and(|s| s.eq_ignore_ascii_case(w)))
    })
}

/// `label_args` as the quoted names looked for in a call's JSON text: a label is a key, so its
/// name appears quoted. The arguments of a call that names none are never parsed. A key spelled
/// with an escape (`"descr\u0069ption"`) is not seen here; normalize parses every call of a
/// record with a backslash in its arguments anyway (for the secret scan) and strips labels
/// there too.
#[derive(Clone, Debug, Default)]
pub struct LabelArgs {
    /// Each name between double quotes.
    quoted: Vec<String>,
}

impl LabelArgs {
    /// Could these arguments (JSON text) carry a label argument? `false` means they cannot.
    /// A substring search per name: every call of every record is asked, and on a call's
    /// few dozen bytes the regex of the names cost about three times the searches (its
    /// per-search setup and cache pool, for three literals).
    pub fn may_carry(&self, args: &str) -> bool {
        self.quoted.iter().any(|q| args.contains(q.as_str()))
    }
}

/// The length of a numbered test title's number and `") "` ("1) Orders refunds a cancelled
/// order", as Mocha, RSpec, Playwright and Jasmine list failures), or `None`.
fn numbered_title(line: &str) -> Option<usize> {
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let rest = &line[digits..];
    (digits > 0 && rest.starts_with(") ") && rest.len() > 2).then_some(digits + 2)
}

/// `transient_cause` for an ASCII error, in one pass over its bytes without a lowered copy
/// (every failed call meets every phrase). ASCII is lowered byte for byte, so an ASCII-blind
/// case-insensitive match at a byte is a match of the lowered phrase in the lowered text at
/// the same place, and a lowered phrase with a non-ASCII character cannot occur in ASCII text.
/// Other errors take the lowering scan: Unicode lowering may change lengths ('İ' → "i̇").
#[derive(Clone, Debug, Default)]
struct TransientPhrases {
    /// Vetoes, then transient phrases between non-word bytes (as `contains_words`); `None`
    /// when not built from a policy's phrases (or too big), and then every error takes the scan.
    set: Option<regex::bytes::RegexSet>,
    /// For each pattern of `set`: `None` for a veto, else its index in `transient_errors`.
    phrase: Vec<Option<usize>>,
}

impl TransientPhrases {
    fn new(p: &Policy) -> TransientPhrases {
        let ascii = |s: &&String| s.is_ascii();
        let vetoes = p.vetoes().filter(ascii);
        let mut patterns: Vec<String> = vetoes.map(|v| format!("(?i-u){}", regex::escape(v))).collect();
        let mut phrase = vec![None; patterns.len()];
        for (i, t) in p
            .transient_errors
            .iter()
            .enumerate()
            .filter(|(_, t)| t.is_ascii())
        {
            let edge = "[^0-9A-Za-z_]";
            patterns.push(format!("(?i-u)(?:^|{edge}){}(?:$|{edge})", regex::escape(t)));
            phrase.push(Some(i));
        }
        let set = regex::bytes::RegexSet::new(&patterns).ok();
        TransientPhrases { set, phrase }
    }

    /// `Some(cause)` as `transient_cause` finds it (an index in `transient_errors`), or `None`
    /// when the error is not ASCII and the scan must decide.
    fn find(&self, error: &str) -> Option<Option<usize>> {
        let set = self.set.as_ref().filter(|_| error.is_ascii())?;
        let mut hits = set.matches(error.as_bytes()).into_iter().map(|m| self.phrase[m]);
        // Patterns in order: a veto's hit comes first, else the first phrase listed.
        Some(hits.next().flatten())
    }
}

/// Built from the phrase fields, which `Policy`'s equality already compares.
/// `mutating_programs` as one automaton over a call's JSON text: each entry's program as a
/// word, then its subcommand (if any) as a word later on. Most shell calls run nothing on the
/// list, and one pass tells them apart without parsing their arguments; a match is then
/// confirmed on the parsed command, inside its wrappers.
#[derive(Clone, Debug, Default)]
struct MutatingPrograms {
    /// `None` when not built from a policy (every call is then parsed).
    any: Option<regex::bytes::Regex>,
}

impl MutatingPrograms {
    fn new(entries: &[String]) -> MutatingPrograms {
        let patterns: Vec<String> = (entries.iter())
            .filter_map(|e| {
                let mut words = e.split_whitespace().map(regex::escape);
                let program = words.next()?;
                Some(match words.next() {
                    Some(sub) => format!(r"\b{program}\b.*?\b{sub}\b"),
                    None => format!(r"\b{program}\b"),
                })
            })
            .collect();
        // ASCII-only classes on bytes: a command's text is matched, never decoded.
        let any = regex::bytes::Regex::new(&format!("(?i-u){}", patterns.join("|"))).ok();
        MutatingPrograms { any }
    }

    /// Could a call with these arguments (JSON text) run one of the programs? `false` means
    /// it cannot.
    fn may_run(&self, text: &str) -> bool {
        self.any.as_ref().is_none_or(|r| r.is_match(text.as_bytes()))
    }
}

impl PartialEq for MutatingPrograms {
    fn eq(&self, _: &MutatingPrograms) -> bool {
        true
    }
}

impl PartialEq for TransientPhrases {
    fn eq(&self, _: &TransientPhrases) -> bool {
        true
    }
}

// Policy numbers are range-checked while the YAML is read, so serde_yaml puts the key and the
// line of a bad value in the error, as it does for a value of the wrong type.

fn thousandths<'de, D: Deserializer<'de>>(d: D) -> Result<i32, D::Error> {
    in_range(d, 0, 1000, "in thousandths, 1000 = 1.000")
}

/// Also the lexicon's counts that zero would switch off.
pub(crate) fn at_least_one<'de, D: Deserializer<'de>, T: TryFrom<i64>>(d: D) -> Result<T, D::Error> {
    in_range(d, 1, i64::MAX, "")
}

fn skill_lines<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    let min = crate::emit::MIN_SKILL_LINES as i64;
    in_range(d, min, i64::MAX, "a SKILL.md's frontmatter, heading and one rule")
}

fn in_range<'de, D: Deserializer<'de>, T: TryFrom<i64>>(
    d: D,
    min: i64,
    max: i64,
    why: &'static str,
) -> Result<T, D::Error> {
    d.deserialize_i64(InRange {
        min,
        max,
        why,
        into: std::marker::PhantomData,
    })
}

/// Accepts an integer in `min..=max` that fits a `T`; the message names the range and why
/// it is there.
struct InRange<T> {
    min: i64,
    max: i64,
    why: &'static str,
    into: std::marker::PhantomData<T>,
}

impl<T> InRange<T> {
    fn range(&self) -> String {
        let range = if self.max == i64::MAX {
            format!("at least {}", self.min)
        } else {
            format!("from {} to {}", self.min, self.max)
        };
        match self.why {
            "" => range,
            why => format!("{range} ({why})"),
        }
    }

    fn refuse<E: de::Error>(&self, got: impl std::fmt::Display) -> E {
        E::custom(format!("must be {}, got {got}", self.range()))
    }
}

impl<T: TryFrom<i64>> de::Visitor<'_> for InRange<T> {
    type Value = T;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "an integer {}", self.range())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        if !(self.min..=self.max).contains(&v) {
            return Err(self.refuse(v));
        }
        T::try_from(v).map_err(|_| E::custom(format!("{v} is too large")))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        match i64::try_from(v) {
            Ok(v) => self.visit_i64(v),
            Err(_) => Err(self.refuse(v)),
        }
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
        let err = |name: &str, text: &str| {
            let file = dir.join(name);
            let lines = text.lines().count();
            move |message: String| PolicyError {
                file,
                message: within_file(&message, lines),
            }
        };
        Ok(Rules {
            policy: Policy::from_yaml(t[0]).map_err(err("policy.yaml", t[0]))?,
            aliases: Aliases::from_yaml(t[1]).map_err(err("aliases.yaml", t[1]))?,
            narrative: Narrative::from_yaml(t[2]).map_err(err("narrative.yaml", t[2]))?,
            secrets: SecretScanner::from_yaml(t[3]).map_err(err("secrets.yaml", t[3]))?,
            lexicon: Lexicon::from_yaml(t[4]).map_err(err("lexicon.yaml", t[4]))?,
            origin: "built-in".into(),
        })
    }
}

/// A YAML error's message with each `at line N column M` past the file's last line (the YAML
/// parser puts the end of input on the line after a file's last one, and a file cut short or
/// left empty ends there: "missing field `threshold` at line 15 column 1" of a 14-line file)
/// said as `at the end of the file`, so the message names no line the file does not have.
fn within_file(message: &str, lines: usize) -> String {
    const AT: &str = " at line ";
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(i) = rest.find(AT) {
        out.push_str(&rest[..i]);
        let after = &rest[i + AT.len()..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let column = after[digits..].strip_prefix(" column ").map(|c| {
            let n = c.len() - c.trim_start_matches(|ch: char| ch.is_ascii_digit()).len();
            " column ".len() + n
        });
        match (after[..digits].parse::<usize>(), column) {
            (Ok(line), Some(column)) if line > lines => {
                out.push_str(" at the end of the file");
                rest = &after[digits + column..];
            }
            _ => {
                out.push_str(AT);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `args` without the top-level arguments `names`, copied only when it has one of them.
fn without<'v>(args: &'v Value, names: &[String]) -> Cow<'v, Value> {
    match args {
        Value::Object(map) if map.keys().any(|k| names.contains(k)) => {
            let mut form = args.clone();
            drop_top_level(&mut form, names);
            Cow::Owned(form)
        }
        _ => Cow::Borrowed(args),
    }
}

/// Removes the top-level arguments named in `names` from a call's arguments (an object); true
/// when one was there.
fn drop_top_level(args: &mut Value, names: &[String]) -> bool {
    let Value::Object(map) = args else {
        return false;
    };
    let before = map.len();
    map.retain(|name, _| !names.contains(name));
    map.len() != before
}

/// Does `text` hold `phrase` with no letter, digit or `_` right before or after it? `_` joins
/// words, as in identifiers (`test_cancelled_order`, `read_timeout`).
fn contains_words(text: &str, phrase: &str) -> bool {
    // Most errors hold none of the phrases: `contains` says so with a vector scan, where
    // `match_indices` first sets up a two-way searcher (every failed call meets every phrase).
    if !text.contains(phrase) {
        return false;
    }
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices(phrase).any(|(at, _)| {
        !word(text[..at].chars().next_back()) && !word(text[at + phrase.len()..].chars().next())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fix_keeps_its_place_only_when_the_fix_changed_it() {
        let p = Rules::builtin().policy;
        let call = |cmd: &str, cwd: &str| serde_json::json!({"command": cmd, "cwd": cwd, "timeout": 120000});
        // Run elsewhere with the same directory: the directory is no part of the fix.
        let (failing, working) = (
            call("pytest -q", "/srv/billing"),
            call("python -m pytest -q", "/srv/billing"),
        );
        let form = p.fix_form(&failing, &working);
        assert_eq!(
            *form,
            serde_json::json!({"command": "python -m pytest -q", "timeout": 120000})
        );
        // The fix was to run it elsewhere: the directory is the fix.
        let elsewhere = call("pytest -q", "/srv/billing/api");
        assert_eq!(p.fix_form(&failing, &elsewhere)["cwd"], "/srv/billing/api");
        // Codex's `workdir` is a place too; a call without any keeps its form.
        let codex = serde_json::json!({"command": ["bash", "-lc", "pytest"], "workdir": "/w"});
        assert_eq!(p.placeless(&codex).get("workdir"), None);
        let bare = serde_json::json!({"command": "pytest"});
        assert!(matches!(p.placeless(&bare), Cow::Borrowed(_)));
    }

    /// The one-pass filter in front of `mutating_programs` is built, and passes exactly the
    /// calls whose parsed command runs one: a program named as a word (not inside
    /// `github.com`), then its subcommand later on, inside wrappers and any case.
    #[test]
    fn a_shell_call_is_a_change_when_it_runs_a_mutating_program() {
        let p = Rules::builtin().policy;
        assert!(
            p.mutating.any.is_some(),
            "the built-in entries form one automaton"
        );
        let shell = |cmd: &str| Args::from_value(&serde_json::json!({"command": cmd}));
        for cmd in [
            "git stash pop",
            "cd /srv/api && git checkout -- src/app.py",
            "bash -lc \"git pull --rebase\"",
            "git -C web pull --rebase",
            "apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF",
            "GIT_EDITOR=true GIT REBASE --continue",
        ] {
            assert!(p.is_mutating_call("shell", &shell(cmd)), "{cmd}");
        }
        for cmd in [
            "git status",
            "git log --oneline | grep checkout",
            "curl -sSL https://github.com/acme/api/raw/main/stash.txt",
            "pytest -q tests/test_patch.py",
            "npm run patch-package",
        ] {
            assert!(!p.is_mutating_call("shell", &shell(cmd)), "{cmd}");
        }
    }

    #[test]
    fn builtin_rules_load() {
        let r = Rules::builtin();
        assert_eq!(r.policy.min_reinforcement, 2);
        assert!(r.policy.is_mutating("write_file"));
        assert!(r.policy.is_mutating("edit_notebook"));
        assert!(!r.policy.is_mutating("read_file"));
        assert!(r.policy.is_transient("Read timed out after 30s"));
        assert!(r.policy.is_transient("HTTP 429: rate limit exceeded"));
        assert!(r.policy.is_transient("429 Too Many Requests"));
        assert!(r.policy.is_transient(
            "ReadTimeout: HTTPSConnectionPool(host='pypi.org', port=443): Read timed out. (read timeout=15)"
        ));
        assert!(
            r.policy
                .is_transient("Get \"https://proxy.golang.org/\": context deadline exceeded")
        );
        assert!(r.policy.is_transient("npm ERR! request to https://registry.npmjs.org/react failed, reason: connect ETIMEDOUT 104.16.0.35:443"));
        assert!(
            r.policy
                .is_transient("The job was cancelled because a newer run started")
        );
    }

    /// A test failure that mentions a timeout, a cancellation or a line 429 is a real failure.
    #[test]
    fn a_failed_assertion_or_a_number_inside_a_word_is_not_transient() {
        let p = Rules::builtin().policy;
        for real in [
            "FAILED invoices/tests/test_vat.py::test_rounding - AssertionError: assert Decimal('0.19') == Decimal('0.20') (invoices/vat.py:429)",
            "FAILED tests/test_session.py::test_expiry - AssertionError: session was not cancelled after logout",
            "FAILED tests/test_client.py::test_retry - AssertionError: expected timeout=30, got 10",
            "thread 'retry::backs_off' panicked at src/retry.rs:88:9:\nassertion `left == right` failed: timeout\n  left: 3\n right: 5",
            "--- FAIL: TestDeadline (0.00s)\n    client_test.go:41: want deadline exceeded, got nil",
            "error[E0308]: mismatched types in src/timeouts.rs",
            "TypeError: Cannot read properties of undefined (reading 'cancelledAt')",
            "src/api/client.ts(4290,5): error TS2345",
            "FAILED tests/test_orders.py::test_cancelled_order_is_refunded - KeyError: 'refund_id'",
        ] {
            assert!(!p.is_transient(real), "{real}");
        }
        assert!(p.is_mutating("Edit") && p.is_mutating("MultiEdit") && p.is_mutating("NotebookEdit"));
        assert!(p.is_mutating("Write") && p.is_mutating("EDIT_FILE") && p.is_mutating("Create_File"));
        assert!(!p.is_mutating("Read") && !p.is_mutating("Bash") && !p.is_mutating("Grep"));
        assert!(!p.is_transient("ModuleNotFoundError: No module named 'yaml'"));
    }

    /// A timeout whose message names the setting to raise is no hiccup: the call after it with
    /// the setting changed is the fix. A bare timeout still is transient.
    #[test]
    fn an_error_that_names_its_setting_is_not_transient() {
        let p = Rules::builtin().policy;
        let lint = "level=error msg=\"Timeout exceeded: try increasing it by passing --timeout option\"";
        assert!(!p.is_transient(lint));
        assert!(p.is_transient("level=error msg=\"Timeout exceeded\""));
        assert!(!p.is_transient(
            "Error: Timeout of 2000ms exceeded. Consider increasing the timeout with --timeout"
        ));
    }

    /// JUnit and Kotlin report a failed assertion with their own exception names, and a test
    /// named after a cancellation is no cancellation; AWS throttling is a rate limit.
    #[test]
    fn junit_assertions_are_real_and_aws_throttling_is_transient() {
        let p = Rules::builtin().policy;
        for real in [
            "CartViewModelTest > cancelled order is removed FAILED\n    org.opentest4j.AssertionFailedError at CartViewModelTest.kt:57",
            "CheckoutTest > order is cancelled on timeout FAILED\n    org.opentest4j.AssertionFailedError: expected: <CANCELLED> but was: <PENDING>",
            "StatusTest > cancelled label FAILED\n    org.junit.ComparisonFailure: expected:<[Cancelled]> but was:<[Canceled]>",
            "testRetry(com.acme.ClientTest)  Time elapsed: 0.012 sec  <<< FAILURE!\nread timeout expected:<30> but was:<10>",
            "io.kotest.assertions.AssertionFailedError: expected:<\"cancelled\"> but was:<\"active\">",
            "Error: creating EC2 Instance: InvalidParameterValue: request limit is 5",
        ] {
            assert!(!p.is_transient(real), "{real}");
        }
        for transient in [
            "Error: creating EC2 Instance: RequestLimitExceeded: Request limit exceeded.\n\tstatus code: 503",
            "api error RequestLimitExceeded: Request limit exceeded.",
            "An error occurred (ThrottlingException) when calling the DescribeTable operation (reached max retries: 4): Rate exceeded",
            "operation error CloudFormation: DescribeStacks, api error Throttling: Rate exceeded",
            "An error occurred (Throttling) when calling the DescribeStacks operation (reached max retries: 4): Rate exceeded",
            "An error occurred (SlowDown) when calling the PutObject operation (reached max retries: 4): Please reduce your request rate.",
            "api error SlowDown: Please reduce your request rate.",
            "TooManyRequestsException: Rate Exceeded.",
            "ProvisionedThroughputExceededException: The level of configured provisioned throughput for the table was exceeded.",
        ] {
            assert!(p.is_transient(transient), "{transient}");
        }
    }

    /// A registry's proxy that could not reach it, a DNS lookup to retry and a network that
    /// was down say nothing about the call's arguments either.
    #[test]
    fn gateway_and_network_errors_are_transient() {
        let p = Rules::builtin().policy;
        for transient in [
            "error: RPC failed; HTTP 502 curl 22 The requested URL returned error: 502\nfatal: expected flush after ref listing",
            "npm ERR! 502 Bad Gateway - GET https://registry.npmjs.org/react-dom",
            "<html><head><title>504 Gateway Time-out</title></head></html>",
            "npm ERR! request to https://registry.npmjs.org/vite failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org",
            "dial tcp 140.82.112.3:443: connect: network is unreachable",
            "warning: spurious network error (2 tries remaining): [6] Couldn't resolve host name",
        ] {
            assert!(p.is_transient(transient), "{transient}");
        }
        for real in [
            "FAILED tests/test_proxy.py::test_bad_gateway_is_retried - AssertionError: assert 502 == 200",
            "error: invalid value 'eai_again_retries' for '--dns-mode'",
        ] {
            assert!(!p.is_transient(real), "{real}");
        }
    }

    /// A test runner that reports a test past its own time limit found a hung or slow test, a
    /// real fault; a client's timeout (a dial, a read, a registry, a deadline, a handshake),
    /// inside a test or not, stays transient. Both ways of matching agree.
    #[test]
    fn a_test_runners_own_timeout_is_real_and_a_network_timeout_is_transient() {
        let p = Rules::builtin().policy;
        for real in [
            "panic: test timed out after 30s\n\trunning tests:\n\t\tTestPoolDrainsOnShutdown (30s)\n\ngoroutine 34 [running]:",
            "FAILED tests/test_sync.py::test_sync_large_bucket - Failed: Timeout >5.0s",
            "  ● Checkout › places an order with a saved card\n\n    thrown: \"Exceeded timeout of 5000 ms for a test.\"",
            "  ● Orders › beforeAll\n\n    thrown: \"Exceeded timeout of 5000 ms for a hook.\"",
            "Error: Timeout of 2000ms exceeded. For async tests and hooks, ensure \"done()\" is called; if returning a Promise, ensure it resolves. (/srv/api/test/orders.spec.js)",
            "FAIL  src/cart.test.ts > cart > merges guest items\nError: Test timed out in 5000ms.",
            "  1) [chromium] › checkout.spec.ts:12:5 › pays with a saved card\n\n    Test timeout of 30000ms exceeded.",
            "        TIMEOUT [ 60.002s] queue tests::drain_waits_for_inflight_jobs\nerror: test run failed",
            "  1) Checkout completes the order\n     Failure/Error: wait_for_ajax\n\n     Timeout::Error:\n       execution expired",
            "testSettle(com.acme.LedgerTest)  Time elapsed: 0.105 sec  <<< ERROR!\norg.junit.runners.model.TestTimedOutException: test timed out after 100 milliseconds",
        ] {
            assert_eq!(p.transient_cause(real), None, "{real}");
            assert_eq!(p.scan_transient_cause(real), None, "{real}");
        }
        for (transient, cause) in [
            (
                "failed to connect to `host=10.0.0.3 user=queue database=queue`: dial error (dial tcp 10.0.0.3:5432: i/o timeout)",
                "timeout",
            ),
            (
                "ReadTimeout: HTTPSConnectionPool(host='pypi.org', port=443): Read timed out. (read timeout=15)",
                "timed out",
            ),
            (
                "npm ERR! network request to https://registry.npmjs.org/date-fns failed, reason: connect ETIMEDOUT 104.16.3.35:443",
                "etimedout",
            ),
            (
                "rpc error: code = DeadlineExceeded desc = context deadline exceeded",
                "deadline exceeded",
            ),
            (
                "error: RPC failed; curl 28 Operation timed out after 300000 milliseconds with 0 bytes received",
                "timed out",
            ),
            (
                "Error response from daemon: Get \"https://registry-1.docker.io/v2/\": net/http: TLS handshake timeout",
                "timeout",
            ),
            // axios's own message, from a client inside or outside a test, is no runner's report.
            ("AxiosError: timeout of 10000ms exceeded", "timeout"),
            (
                "Net::ReadTimeout with #<TCPSocket:(closed)>: timed out waiting for api.stripe.com",
                "timed out",
            ),
        ] {
            assert_eq!(p.transient_cause(transient), Some(cause), "{transient}");
            assert_eq!(p.scan_transient_cause(transient), Some(cause), "{transient}");
        }
    }

    /// A test named after a cancellation, a rate limit or a connection reset that failed on a
    /// `TypeError` failed for real: the runner's line that names the test is not read for
    /// transient phrases, the error under it is.
    #[test]
    fn a_transient_word_in_a_tests_name_makes_no_transient_failure() {
        let p = Rules::builtin().policy;
        for real in [
            "FAIL src/orders/refund.test.ts\n  ● Orders › refunds a cancelled order\n\n    TypeError: Cannot read properties of undefined (reading 'refundId')",
            "  RateLimiter\n    ✓ allows 100 requests (4 ms)\n    ✕ returns 429 when rate limited (12 ms)\n\n  ● RateLimiter › returns 429 when rate limited\n\n    TypeError: res.headers.get is not a function",
            " FAIL  src/retry.test.ts > retry > gives up after connection reset\nTypeError: fetchMock.mockRejectedValueOnce is not a function",
            "  41 passing (2s)\n  1 failing\n\n  1) Orders\n       refunds a cancelled order:\n     TypeError: Cannot read properties of undefined (reading 'refundId')",
            "  1) Orders\n       when the payment was cancelled\n         releases the stock:\n     Error: ER_NO_SUCH_TABLE: Table 'shop.stock' doesn't exist",
            "CheckoutTest > order is cancelled on timeout FAILED\n    java.lang.NullPointerException at CheckoutTest.kt:40",
            "Failures:\n\n  1) Orders::Cancel when the order was cancelled refunds the card\n     Failure/Error: refund.card.charge_id\n\n     NoMethodError:\n       undefined method `charge_id' for nil",
        ] {
            assert_eq!(p.transient_cause(real), None, "{real}");
        }
        for (transient, cause) in [
            (
                "  ● Rates › fetches the latest rates\n\n    FetchError: request to https://api.exchangerate.host/latest failed, reason: connect ETIMEDOUT 172.67.1.1:443",
                "etimedout",
            ),
            (
                "  1) Orders\n       refunds a paid order:\n     Error: connect ECONNREFUSED 127.0.0.1:5432",
                "econnrefused",
            ),
            ("Error: The operation was canceled.", "canceled"),
            (
                "  1) Orders::Sync imports the feed\n     Failure/Error: Feed.fetch!\n\n     SocketError:\n       Failed to open TCP connection to feeds.acme.io:443 (Connection refused - connect(2))",
                "connection refused",
            ),
        ] {
            assert_eq!(p.transient_cause(transient), Some(cause), "{transient}");
        }
        assert_eq!(numbered_title("12) Orders refunds"), Some(4));
        assert_eq!(numbered_title("1)"), None);
        assert_eq!(numbered_title("(1) a"), None);
        assert_eq!(numbered_title("Orders 1) a"), None);
    }

    /// A policy file written before `test_timeouts` loads, with none.
    #[test]
    fn a_policy_without_test_timeouts_loads() {
        let start = BUILTIN_POLICY.find("test_timeouts:").unwrap();
        let end = BUILTIN_POLICY[start..].find("\n\n").unwrap() + start;
        let p =
            Policy::from_yaml(&format!("{}{}", &BUILTIN_POLICY[..start], &BUILTIN_POLICY[end..])).unwrap();
        assert!(p.test_timeouts.is_empty());
        assert!(p.is_transient("panic: test timed out after 30s"));
        assert!(
            !Rules::builtin()
                .policy
                .is_transient("panic: test timed out after 30s")
        );
    }

    /// An address error is the cause the transient matcher names, in any case the file writes
    /// it; one that no transient phrase is can never be found, and the file is refused.
    #[test]
    fn address_errors_are_transient_phrases() {
        let p = &Rules::builtin().policy;
        let refused =
            "psql: error: connection to server at \"localhost\", port 5432 failed: Connection refused";
        assert!(p.transient_cause(refused).is_some_and(|c| p.refuses_address(c)));
        assert!(!p.refuses_address(p.transient_cause("Read timed out").unwrap()));
        let shouted = BUILTIN_POLICY.replace(
            "address_errors:\n  - connection refused",
            "address_errors:\n  - Connection Refused",
        );
        assert!(
            Policy::from_yaml(&shouted)
                .unwrap()
                .refuses_address("connection refused")
        );
        let stray = BUILTIN_POLICY.replace("address_errors:\n", "address_errors:\n  - no route to host\n");
        let err = Policy::from_yaml(&stray).unwrap_err();
        assert!(
            err.contains("\"no route to host\" is not one of transient_errors"),
            "{err}"
        );
    }

    /// The one-pass matcher finds what lowering and scanning finds: any case, a phrase at
    /// either end, only between non-word characters, the first phrase listed, vetoes first.
    #[test]
    fn the_phrase_automaton_agrees_with_the_lowering_scan() {
        let yaml = BUILTIN_POLICY.replace(
            "transient_errors:\n",
            "transient_errors:\n  - Délai Dépassé\n  - K\u{212A}\n  - a+b (c)\n",
        );
        let p = Policy::from_yaml(&yaml).unwrap();
        let cases: [(&str, Option<&str>); 18] = [
            ("TIMED OUT", Some("timed out")),
            ("Read Timed Out", Some("timed out")),
            ("timeout", Some("timeout")),
            ("error: Timeout", Some("timeout")),
            ("Timeout: retrying", Some("timeout")),
            ("read_timeout", None),
            ("timeouts=3", None),
            ("x.timeout.", Some("timeout")),
            // The first phrase listed, not the first in the text.
            ("connection refused, then timeout", Some("timeout")),
            // A veto anywhere wins, in any case.
            ("timed out: ASSERTIONERROR", None),
            ("Timeout exceeded, Consider Increasing it", None),
            // A user's phrases: punctuation is literal, lowering is Unicode's.
            ("got A+B (C) back", Some("a+b (c)")),
            ("got a+bb (c)", None),
            ("kk", Some("kk")),
            ("DÉLAI DÉPASSÉ après 30 s", Some("délai dépassé")),
            ("délai dépassé", Some("délai dépassé")),
            ("Zeitüberschreitung: TIMED OUT", Some("timed out")),
            ("İ timed out", Some("timed out")),
        ];
        for (error, cause) in cases {
            assert_eq!(p.transient_cause(error), cause, "{error}");
            assert_eq!(p.scan_transient_cause(error), cause, "{error}");
        }
        // ASCII errors never lower a copy; others do.
        let timed_out = p.transient_errors.iter().position(|t| t == "timed out");
        assert!(timed_out.is_some());
        assert_eq!(p.transient.find("TIMED OUT"), Some(timed_out));
        assert_eq!(p.transient.find("nothing here"), Some(None));
        assert_eq!(p.transient.find("délai"), None);
    }

    /// An editor tool's read-only sub-command (`view`) changes nothing; its other
    /// sub-commands, and every call of a mutating tool without one, do.
    #[test]
    fn a_read_only_sub_command_of_an_editor_is_no_change() {
        let p = Rules::builtin().policy;
        let call = |tool: &str, args: Value| p.is_mutating_call(tool, &Args::from_value(&args));
        let view = serde_json::json!({"command": "view", "path": "/workspace/app/models.py"});
        assert!(!call("str_replace_editor", view.clone()));
        assert!(!call("str_replace_based_edit_tool", view));
        assert!(!call(
            "str_replace_editor",
            serde_json::json!({"command": " View ", "path": "/a.py", "view_range": [1, 40]})
        ));
        for command in ["create", "str_replace", "insert", "undo_edit"] {
            let args =
                serde_json::json!({"command": command, "path": "/workspace/app/models.py", "file_text": "x"});
            assert!(call("str_replace_editor", args), "{command}");
        }
        // `command` must be the call's own argument, not text inside another one.
        let nested =
            serde_json::json!({"path": "/a.py", "new_str": "{\"command\": \"view\"}", "old_str": "x"});
        assert!(call("str_replace_editor", nested));
        assert!(call(
            "Edit",
            serde_json::json!({"file_path": "/a.py", "old_string": "a", "new_string": "b"})
        ));
        assert!(call("write_file", Value::Null));
        // A read-only tool stays one whatever its command says.
        assert!(!call(
            "Bash",
            serde_json::json!({"command": "sed -i s/a/b/ x.py"})
        ));
        let mut none = p.clone();
        none.read_only_commands.clear();
        let view = serde_json::json!({"command": "view", "path": "/a.py"});
        assert!(none.is_mutating_call("str_replace_editor", &Args::from_value(&view)));
    }

    #[test]
    fn label_arguments_are_stripped_at_the_top_level_only() {
        let p = Rules::builtin().policy;
        assert_eq!(p.label_args, ["description", "explanation", "thought"]);
        let labels = p.label_matcher();
        let mut v = serde_json::json!({"command": "npm test -- --run", "description": "Run the vitest suite",
            "env": {"description": "kept"}, "timeout": 120000});
        assert!(labels.may_carry(&v.to_string()));
        assert!(p.strip_label_args(&mut v));
        assert_eq!(
            v,
            serde_json::json!({"command": "npm test -- --run", "env": {"description": "kept"}, "timeout": 120000})
        );
        assert!(!p.strip_label_args(&mut v));
        let plain = serde_json::json!({"command": "go test ./...", "cwd": "/srv/ledger"});
        assert!(!labels.may_carry(&plain.to_string()));
        // A label's name inside a command is text, not a key.
        let quoted = serde_json::json!({"command": "gh issue create --body \"description\""});
        let mut q = quoted.clone();
        assert!(!p.strip_label_args(&mut q) && q == quoted);
        assert!(!p.strip_label_args(&mut Value::Null));
        let mut none = p.clone();
        none.label_args.clear();
        assert!(!none.label_matcher().may_carry(r#"{"description": "x"}"#));
    }

    #[test]
    fn label_args_are_found_where_the_regex_of_their_quoted_names_found_them() {
        // `may_carry` was one regex of the quoted names; the substring searches that replaced
        // it must answer as it did, names with regex metacharacters included.
        let p = Rules::builtin().policy;
        let mut odd = p.clone();
        odd.label_args = vec!["why.(now)".into(), "a+b".into(), "thought".into()];
        let calls = [
            r#"{"command": "pytest -q tests/test_billing.py", "description": "Run the billing tests"}"#,
            r#"{"command": "cargo build --locked", "cwd": "/srv/ledger"}"#,
            r#"{"explanation": "Check the plan first", "command": "terraform plan -out tf.plan"}"#,
            r#"{"command": "kubectl rollout status deploy/api", "thought":"wait for pods"}"#,
            r#"{"command": "gh issue create --body \"description\""}"#,
            r#"{"command": "npm test", "descriptions": "plural is no label"}"#,
            r#"{"file_path": "/repo/src/why.(now).py", "why.(now)": "x"}"#,
            r#"{"file_path": "/repo/src/whyX(now).py", "a+b": 1}"#,
            r#"{"file_path": "/repo/src/aab.py", "aab": 1, "description"#,
            "",
        ];
        for policy in [&p, &odd] {
            let names: Vec<String> = (policy.label_args.iter())
                .map(|n| regex::escape(&format!("\"{n}\"")))
                .collect();
            let regex = regex::Regex::new(&names.join("|")).unwrap();
            let labels = policy.label_matcher();
            for call in calls {
                assert_eq!(labels.may_carry(call), regex.is_match(call), "{call}");
            }
        }
        assert!(odd.label_matcher().may_carry(calls[6]) && !odd.label_matcher().may_carry(calls[1]));
    }

    /// `policy.yaml` with `key` (dotted) set to `value`, and the line it is on.
    fn policy_with(key: &str, value: &str) -> (String, usize) {
        let leaf = key.rsplit('.').next().unwrap();
        let mut at = 0;
        let text: Vec<String> = BUILTIN_POLICY
            .lines()
            .enumerate()
            .map(|(i, l)| {
                match l
                    .trim_start()
                    .strip_prefix(leaf)
                    .and_then(|r| r.strip_prefix(':'))
                {
                    Some(_) => {
                        at = i + 1;
                        format!("{}{leaf}: {value}", &l[..l.len() - l.trim_start().len()])
                    }
                    None => l.to_string(),
                }
            })
            .collect();
        assert!(at > 0, "{key} is not in policy.yaml");
        (text.join("\n"), at)
    }

    fn load_policy(text: &str) -> Result<Rules, PolicyError> {
        Rules::from_texts(
            [
                text,
                BUILTIN_ALIASES,
                BUILTIN_NARRATIVE,
                BUILTIN_SECRETS,
                BUILTIN_LEXICON,
            ],
            Path::new("team-rules"),
        )
    }

    /// A rules file cut short (a copy interrupted, an editor's crash) or left empty used to be
    /// refused with a line after its last one ("missing field `min_reinforcement` at line 3
    /// column 1" of a two-line file): the end of the file is said instead, and a line the file
    /// has is still named.
    #[test]
    fn a_rules_file_cut_short_is_refused_at_its_end_not_at_a_line_it_lacks() {
        // Its comment header, cut in the middle of the second line.
        let second = BUILTIN_POLICY.find('\n').unwrap() + 1;
        let cut = &BUILTIN_POLICY[..second + (BUILTIN_POLICY[second..].find('\n').unwrap() / 2)];
        let lines = cut.lines().count();
        for text in [cut, "\u{feff}"] {
            let e = load_policy(text).map(|_| ()).unwrap_err().to_string();
            assert_eq!(
                e, "team-rules/policy.yaml: missing field `min_reinforcement` at the end of the file",
                "{lines} lines"
            );
        }
        let aliases = &BUILTIN_ALIASES[..BUILTIN_ALIASES.len() / 2];
        let aliases = &aliases[..aliases.rfind(':').unwrap()];
        let e = Rules::from_texts(
            [
                BUILTIN_POLICY,
                aliases,
                BUILTIN_NARRATIVE,
                BUILTIN_SECRETS,
                BUILTIN_LEXICON,
            ],
            Path::new("team-rules"),
        )
        .map(|_| ())
        .unwrap_err()
        .to_string();
        let last = aliases.lines().count();
        assert!(e.starts_with("team-rules/aliases.yaml: "), "{e}");
        assert!(!e.contains(&format!("at line {} ", last + 1)), "{e}");
        assert!(
            e.contains(" at the end of the file") || e.contains(&format!("at line {last} column")),
            "{e}"
        );
        assert_eq!(
            within_file(
                "did not find expected ',' at line 9 column 1, while parsing a flow sequence at line 3 column 12",
                8
            ),
            "did not find expected ',' at the end of the file, while parsing a flow sequence at line 3 column 12"
        );
        assert_eq!(
            within_file("invalid type at line 4 column 7", 8),
            "invalid type at line 4 column 7"
        );
    }

    #[test]
    fn out_of_range_policy_numbers_are_refused_naming_file_key_range_and_line() {
        let cases = [
            ("confidence.admitted", "-1000", "must be from 0 to 1000"),
            ("confidence.admitted", "1001", "must be from 0 to 1000"),
            ("confidence.claimed", "-1", "must be from 0 to 1000"),
            ("confidence.confirmation", "-150", "must be from 0 to 1000"),
            ("confidence.contradiction", "-250", "must be from 0 to 1000"),
            ("confidence.idle_day", "1500", "must be from 0 to 1000"),
            ("confidence.supersede_below", "1200", "must be from 0 to 1000"),
            ("min_reinforcement", "0", "must be at least 1"),
            ("caps.active_lessons", "0", "must be at least 1"),
            ("caps.block_lines", "0", "must be at least 1"),
            ("caps.skill_lines", "0", "must be at least 17"),
            ("caps.skill_lines", "16", "must be at least 17"),
            ("caps.record_domains", "0", "must be at least 1"),
            ("deltas.max_payload_chars", "0", "must be at least 1"),
            ("deltas.max_added_tokens", "-5", "must be at least 1"),
            ("confidence.admitted", "0.5", "expected an integer from 0 to 1000"),
        ];
        for (key, value, range) in cases {
            let (text, line) = policy_with(key, value);
            let e = load_policy(&text).map(|_| ()).unwrap_err().to_string();
            assert!(e.starts_with("team-rules/policy.yaml: "), "{key}: {value}: {e}");
            assert!(e.contains(&format!("{key}: ")), "{key}: {value}: {e}");
            assert!(e.contains(range), "{key}: {value}: {e}");
            assert!(
                e.contains(&format!("at line {line} column")),
                "{key}: {value}: {e}"
            );
        }
    }

    #[test]
    fn policy_numbers_at_the_ends_of_their_ranges_load() {
        let cases = [
            ("confidence.admitted", "0"),
            ("confidence.admitted", "1000"),
            ("confidence.idle_day", "0"),
            ("confidence.supersede_below", "0"),
            ("min_reinforcement", "1"),
            ("caps.block_lines", "1"),
            ("caps.skill_lines", "17"),
            ("caps.record_domains", "1"),
        ];
        for (key, value) in cases {
            let (text, _) = policy_with(key, value);
            let rules = load_policy(&text).unwrap_or_else(|e| panic!("{key}: {value}: {e}"));
            assert_eq!(rules.policy.value_of(key, &rules).as_deref(), Some(value));
        }
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
