//! The command line: arguments become a checked plan, then one command runs.
//!
//! Exit codes (DESIGN §8): 0 the command completed (problems in the data are diagnostics);
//! 1 completed, but `--strict` was given and some input was refused or malformed; 2 could not
//! run (usage, an unknown id or code, an unreadable input path, I/O, a locked or foreign
//! state store).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::diagnostics::{Diagnostic, Severity};
use crate::diff::Risk;
use crate::load::{self, Format, LoadOptions};
use crate::model::{Action, Corpus, Fate};
use crate::pipeline::{self, Compilation, Keep, Options, Stage};
use crate::policy::Rules;
use crate::store::{OutputLock, Store, StoreError};
use crate::{emit, explain, report, score};

const AFTER_HELP: &str = "\
Exit codes:
  0  the command completed (problems in the data are reported as diagnostics)
  1  completed, but --strict was given and some input was refused or malformed
  2  could not run: usage, unknown id or code, unreadable input, I/O, locked or foreign state store
  3  diff completed, but --fail-on was given and a change reached that risk

With no INPUT, commands read the sample corpus in ./samples (or the copy built into the binary).";

const DIFF_AFTER_HELP: &str = "\
Exit codes:
  0  the diff was printed (and no change reached --fail-on)
  1  --strict was given and some input was refused or malformed
  2  could not run: usage, unreadable input, I/O, a foreign state store
  3  --fail-on was given and a change reached that risk (it takes precedence over 1)";

#[derive(Parser, Debug)]
#[command(name = "skillc", version, about = "A skill compiler for agent memory", after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Compile experience records into SKILL.md files, a ledger, lesson blocks and diagnostics
    Compile(CompileArgs),
    /// Why a domain compiled nothing, or so little
    Why {
        /// The domain as records name it (`python`, `golang`, `Django`): normalised and aliased as they are
        domain: String,
        #[command(flatten)]
        run: RunArgs,
    },
    /// Follow one experience through every stage
    Trace {
        /// The experience's id (its record's `id`)
        experience_id: String,
        #[command(flatten)]
        run: RunArgs,
    },
    /// What a compile would change, risk-classified; writes nothing
    ///
    /// Recomputes what `compile` would with the same inputs and options and compares its
    /// lessons with the last compile's (the state store's ledger). High: a rule would stop
    /// being one (superseded, retired, below reinforcement, gone from the input, demoted from
    /// global). Medium: a new rule, a rule promoted to global, edited or re-founded. Low:
    /// everything else (a rule's confidence, lessons that are no rules). No file in --out and
    /// nothing in the state store is written.
    #[command(after_help = DIFF_AFTER_HELP)]
    Diff(DiffArgs),
    /// Print the documentation of a diagnostic code
    Explain {
        /// A diagnostic code (`G002`) or its name (`narrative-candidate`)
        code: String,
        /// Text for a reader, or JSON for a program
        #[arg(long, value_enum, default_value_t = OutputFormat::Human)]
        format: OutputFormat,
        /// Policy directory whose rules the page quotes (default: ./rules, else built-in)
        #[arg(long)]
        rules: Option<PathBuf>,
        /// The `--min-reinforcement` a compile was given, quoted in place of the policy's
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        min_reinforcement: Option<u32>,
    },
    /// List every diagnostic code
    Codes {
        /// Text for a reader, or JSON for a program
        #[arg(long, value_enum, default_value_t = OutputFormat::Human)]
        format: OutputFormat,
    },
    /// The ledger and the user's decisions
    Lessons {
        #[command(subcommand)]
        action: LessonsCommand,
    },
    /// Vouch for an experience's lessons (bypasses reinforcement and the outcome gate)
    Bless {
        /// The experience's id (its record's `id`)
        experience_id: String,
        #[command(flatten)]
        run: RunArgs,
    },
    /// Authored skills with their deltas
    Deltas {
        #[command(subcommand)]
        action: DeltasCommand,
    },
    /// Generate a realistic synthetic corpus (deterministic for a seed)
    Gen {
        /// How many experience records to write
        #[arg(long)]
        experiences: usize,
        /// The same count and seed give the same file, byte for byte
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Write here instead of stdout
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
pub enum DeltasCommand {
    /// Print an authored skill with its staged deltas resolved
    Show {
        /// The authored skill's name (its folder under --base-skills)
        name: String,
        /// The authored skills (DIR/<name>/SKILL.md)
        #[arg(long)]
        base_skills: PathBuf,
        /// Output directory holding deltas/<name>.json
        #[arg(long, default_value = "skills-out")]
        out: PathBuf,
    },
}

#[derive(Subcommand, Debug)]
pub enum LessonsCommand {
    /// List lessons of the last compile
    List {
        /// A domain as records name it (`golang`, `Django`): normalised and aliased as they are
        #[arg(long)]
        domain: Option<String>,
        /// `global`, or a project as `project:<digest>`, `project-<digest>` or `<digest>`
        #[arg(long, value_parser = parse_scope)]
        scope: Option<String>,
        /// Only lessons with this status
        #[arg(long, value_parser = ["active", "claimed", "superseded", "retired"])]
        status: Option<String>,
        /// Policy directory whose aliases.yaml `--domain` is aliased by (default: ./rules, else built-in)
        #[arg(long)]
        rules: Option<PathBuf>,
        #[command(flatten)]
        state: StateArgs,
    },
    /// Show one lesson
    Show {
        /// The lesson's id (`L…`, as the ledger and lesson blocks show it)
        id: String,
        #[command(flatten)]
        state: StateArgs,
    },
    /// The whole supersede chain of a lesson, both directions
    History {
        /// The lesson's id (`L…`, as the ledger and lesson blocks show it)
        id: String,
        #[command(flatten)]
        state: StateArgs,
    },
    /// Give a lesson new wording (supersedes it; evidence and confidence carry over)
    Edit {
        /// The lesson's id (`L…`, as the ledger and lesson blocks show it)
        id: String,
        /// The new wording
        #[arg(long)]
        text: String,
        #[command(flatten)]
        state: StateArgs,
    },
    /// Retire a lesson: it leaves every prompt-facing file, and its evidence is never re-learned
    /// (experiences recorded after the retire can teach the lesson again, under a new id)
    Retire {
        /// The lesson's id (`L…`, as the ledger and lesson blocks show it)
        id: String,
        /// Why: kept in the journal, and the lesson's `reason` in the ledger
        #[arg(long)]
        reason: Option<String>,
        #[command(flatten)]
        state: StateArgs,
    },
    /// Undo a retire
    Restore {
        /// The lesson's id (`L…`, as the ledger and lesson blocks show it)
        id: String,
        #[command(flatten)]
        state: StateArgs,
    },
    /// Pin a lesson: immune to decay and the cap, first in its block
    Pin {
        /// The lesson's id (`L…`, as the ledger and lesson blocks show it)
        id: String,
        #[command(flatten)]
        state: StateArgs,
    },
    /// Unpin a lesson
    Unpin {
        /// The lesson's id (`L…`, as the ledger and lesson blocks show it)
        id: String,
        #[command(flatten)]
        state: StateArgs,
    },
}

#[derive(Args, Debug, Clone)]
pub struct StateArgs {
    /// Output directory whose state store to use
    #[arg(long, default_value = "skills-out")]
    pub out: PathBuf,
    /// State store (default: OUT/.skillc/state.db)
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// Text for a reader, or JSON for a program
    #[arg(long, value_enum, default_value_t = OutputFormat::Human)]
    pub format: OutputFormat,
}

impl StateArgs {
    fn state_path(&self) -> PathBuf {
        self.state
            .clone()
            .unwrap_or_else(|| self.out.join(".skillc").join("state.db"))
    }
}

/// What every command that compiles, or recomputes a compile, takes: the records, the output
/// and state store, the policy, and how to report.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Files (.jsonl, .json, .yaml, .yml, a GAIA memory.db) or directories of them
    pub inputs: Vec<PathBuf>,
    /// Output directory
    #[arg(long, default_value = "skills-out")]
    pub out: PathBuf,
    /// Policy directory (policy.yaml, aliases.yaml, narrative.yaml, secrets.yaml, lexicon.yaml)
    #[arg(long)]
    pub rules: Option<PathBuf>,
    /// State store (default: OUT/.skillc/state.db)
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// Distinct supporting experiences a lesson needs to become a rule
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub min_reinforcement: Option<u32>,
    /// Worker threads, 1 to 256 (default: all cores)
    #[arg(long)]
    pub threads: Option<usize>,
    /// Input format (default: recognised by content)
    #[arg(long, value_enum)]
    pub from: Option<FromFormat>,
    /// Authored skills to emit deltas for (DIR/<name>/SKILL.md)
    #[arg(long)]
    pub base_skills: Option<PathBuf>,
    /// Exit 1 when some input was refused or malformed
    #[arg(long)]
    pub strict: bool,
    /// Text for a reader, or JSON for a program
    #[arg(long, value_enum, default_value_t = OutputFormat::Human)]
    pub format: OutputFormat,
}

#[derive(Args, Debug, Clone)]
pub struct CompileArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Stop after this stage (load, normalize, outcome, candidates, cluster, gate, score, emit)
    #[arg(long, value_parser = parse_stage)]
    pub stop_after: Option<Stage>,
}

/// `diff` compares whole compiles, so it takes no `--stop-after`.
#[derive(Args, Debug, Clone)]
pub struct DiffArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Exit 3 when a lesson change is at this risk or above, after printing the whole report
    /// (`--fail-on medium` fails on a medium or a high change)
    #[arg(long, value_enum, value_name = "RISK")]
    pub fail_on: Option<Risk>,
}

/// `--scope` as the ledger writes it: `global`, or `project:<digest>` from that form, the
/// lessons-file form `project-<digest>` or the bare digest (12 hex characters).
fn parse_scope(s: &str) -> Result<String, String> {
    let asked = s.trim().to_ascii_lowercase();
    if asked == "global" {
        return Ok(asked);
    }
    let digest = (asked.strip_prefix("project:"))
        .or_else(|| asked.strip_prefix("project-"))
        .unwrap_or(&asked);
    if crate::digest::is_short(digest) {
        return Ok(format!("project:{digest}"));
    }
    Err(format!(
        "`{s}` is not a scope; scopes are `global` and a project's 12-hex digest, as `project:<digest>`, `project-<digest>` (its lessons file) or `<digest>`"
    ))
}

fn parse_stage(s: &str) -> Result<Stage, String> {
    Stage::parse(s).ok_or_else(|| {
        format!(
            "unknown stage `{s}`; stages: {}",
            Stage::ALL.map(|s| s.name()).join(", ")
        )
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Human,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FromFormat {
    Native,
    Omnimem,
    Gaia,
}

/// A failure that stops the command: exit 2 with a message. A message that starts with a
/// registry code (`U001: …`) is printed as `error[U001]: …`.
pub struct Fatal(pub String);

impl<E: std::fmt::Display> From<E> for Fatal {
    fn from(e: E) -> Fatal {
        Fatal(e.to_string())
    }
}

pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(Fatal(msg)) => {
            let coded = msg
                .split_once(": ")
                .filter(|(c, _)| crate::diagnostics::lookup(c).is_some());
            match coded {
                Some((code, rest)) => eprintln!("{}: {rest}", paint(&format!("error[{code}]"), "1;31")),
                None => eprintln!("{}: {msg}", paint("error", "1;31")),
            }
            2
        }
    }
}

fn run(cli: Cli) -> Result<i32, Fatal> {
    match cli.command {
        Command::Compile(CompileArgs { run, stop_after }) => compile(&run, stop_after),
        Command::Why { domain, run } => {
            note_sample_fallback(&run, "why DOMAIN");
            let (comp, rules) = analyse(&run, Keep::Experiences, Some(&domain))?;
            let r = report::why(&comp, &rules, &domain, &command_tail(&run));
            print_diagnostics(&r.diagnostics.iter().collect::<Vec<_>>());
            print_report(run.format, report::why_text(&r), &r.json)?;
            Ok(strict_exit(&run, &comp))
        }
        Command::Trace { experience_id, run } => {
            note_sample_fallback(&run, "trace ID");
            let (comp, rules) = analyse(&run, Keep::Everything, None)?;
            let Some(r) = report::trace(&comp, &rules, &experience_id) else {
                return Err(Fatal(format!(
                    "no experience or claim with id `{experience_id}` in {}",
                    searched(&run, "trace")
                )));
            };
            print_diagnostics(&r.diagnostics.iter().collect::<Vec<_>>());
            print_report(run.format, report::trace_text(&r), &r.json)?;
            Ok(strict_exit(&run, &comp))
        }
        Command::Diff(DiffArgs { run, fail_on }) => diff(&run, fail_on),
        Command::Explain {
            code,
            format,
            rules,
            min_reinforcement,
        } => {
            let mut rules = load_rules(rules.as_deref())?;
            if let Some(n) = min_reinforcement {
                rules.policy.min_reinforcement = n;
                rules.origin = format!("{}, with --min-reinforcement {n}", rules.origin);
            }
            match format {
                OutputFormat::Human => match explain::explain_text(&code, &rules) {
                    Some(t) => print_report(format, t, &serde_json::Value::Null),
                    None => Err(Fatal(format!(
                        "unknown diagnostic code `{code}`; `skillc codes` lists them"
                    ))),
                },
                OutputFormat::Json => match explain::explain_json(&code, &rules) {
                    Some(v) => print_report(format, String::new(), &v),
                    None => Err(Fatal(format!(
                        "unknown diagnostic code `{code}`; `skillc codes` lists them"
                    ))),
                },
            }
        }
        Command::Codes { format } => print_report(format, explain::codes_text(), &explain::codes_json()),
        Command::Lessons { action } => lessons(action),
        Command::Deltas {
            action:
                DeltasCommand::Show {
                    name,
                    base_skills,
                    out,
                },
        } => {
            // `deltas show` takes no --rules: a skill asked for by its domain's name is found
            // with the default aliases.
            let rules = load_rules(None)?;
            let text = crate::deltas::show(&base_skills, &out, &name, &rules.aliases).map_err(Fatal)?;
            print_report(OutputFormat::Human, text, &serde_json::Value::Null)
        }
        Command::Bless { experience_id, run } => {
            // Only the id needs checking: load the records, not the whole compile.
            let rules = load_rules(run.rules.as_deref())?;
            let (corpus, load_diags) = load_inputs(&run, &rules)?;
            if !corpus.experiences.iter().any(|e| *e.id == *experience_id) {
                // The record is there but was refused: say why, as `trace` does.
                let refused = (load_diags.iter()).find_map(|d| {
                    report::refused_at(d)
                        .filter(|(s, _)| *s == experience_id)
                        .map(|(_, at)| (d, at))
                });
                if let Some((d, at)) = refused {
                    return Err(Fatal(format!(
                        "experience `{experience_id}` was refused at load at {at} ({}: {}); fix the record, then bless it",
                        d.code, d.message
                    )));
                }
                return Err(Fatal(format!(
                    "no experience with id `{experience_id}` in {}",
                    searched(&run, "bless")
                )));
            }
            let mut store = Store::open(&state_path(&run)).map_err(store_fatal)?;
            let d = store.record(Action::Bless, &experience_id, None)?;
            println!(
                "blessed {experience_id} (journal entry {}); the next compile applies it",
                d.seq
            );
            Ok(0)
        }
        Command::Gen {
            experiences,
            seed,
            out,
        } => {
            let result = match out {
                Some(path) => {
                    let f = std::fs::File::create(&path)
                        .map_err(|e| Fatal(format!("{}: {e}", path.display())))?;
                    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
                    crate::generate::generate(experiences, seed, &mut w).and_then(|_| w.flush())
                }
                None => {
                    let stdout = std::io::stdout();
                    let mut w = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
                    crate::generate::generate(experiences, seed, &mut w).and_then(|_| w.flush())
                }
            };
            result.map_err(|e| Fatal(format!("writing the corpus: {e}")))?;
            Ok(0)
        }
    }
}

fn state_path(args: &RunArgs) -> PathBuf {
    args.state
        .clone()
        .unwrap_or_else(|| args.out.join(".skillc").join("state.db"))
}

/// More workers than this buys nothing on any machine skillc runs on, and each reserves a
/// stack: a mistyped count would stall the run starting threads instead of refusing.
const MAX_THREADS: usize = 256;

fn set_threads(threads: Option<usize>) -> Result<(), Fatal> {
    if let Some(n) = threads {
        if !(1..=MAX_THREADS).contains(&n) {
            return Err(Fatal(format!(
                "--threads must be from 1 to {MAX_THREADS} (got {n})"
            )));
        }
        // Fails only if a pool was already built (tests calling twice); the count then stays.
        let _ = rayon::ThreadPoolBuilder::new().num_threads(n).build_global();
    }
    Ok(())
}

/// `--rules DIR`, else `./rules` when it exists, else the built-in rules.
pub fn load_rules(dir: Option<&Path>) -> Result<Rules, Fatal> {
    match dir {
        Some(d) if !d.is_dir() => Err(Fatal(format!("rules directory {} does not exist", d.display()))),
        Some(d) => Ok(Rules::load(d)?),
        None if Path::new("rules/policy.yaml").is_file() => Ok(Rules::load(Path::new("rules"))?),
        None => Ok(Rules::builtin()),
    }
}

/// Loads the inputs (or the sample corpus) with the load diagnostics.
fn load_inputs(args: &RunArgs, rules: &Rules) -> Result<(Corpus, Vec<Diagnostic>), Fatal> {
    let opts = LoadOptions {
        from: args.from.map(|f| match f {
            FromFormat::Native => Format::Native,
            FromFormat::Omnimem => Format::Omnimem,
            FromFormat::Gaia => Format::Gaia,
        }),
        exclude: vec![args.out.clone()],
    };
    let mut sink = Vec::new();
    let corpus = if !args.inputs.is_empty() {
        load::load_with_rules(&args.inputs, &opts, rules, &mut sink)?
    } else if Path::new("samples").is_dir() {
        load::load_with_rules(&[PathBuf::from("samples")], &opts, rules, &mut sink)?
    } else {
        load::load_texts_with_rules(crate::samples::FILES, &opts, rules, &mut sink)
    };
    Ok((corpus, sink))
}

/// What follows the id in the commands `why` suggests for the records and output of `args`
/// (without inputs, `bless` reads the sample corpus): the inputs, `--out` and `--state` as
/// given, each quoted for a POSIX shell when it needs it.
pub fn command_tail(args: &RunArgs) -> report::CommandTail {
    fn quoted(p: &Path) -> String {
        let s = p.display().to_string();
        let plain = |c: char| c.is_ascii_alphanumeric() || "_./-=:@%+,".contains(c);
        if !s.is_empty() && s.chars().all(plain) {
            s
        } else {
            format!("'{}'", s.replace('\'', r"'\''"))
        }
    }
    let mut store = String::new();
    if args.out != Path::new("skills-out") {
        store.push_str(" --out ");
        store.push_str(&quoted(&args.out));
    }
    if let Some(state) = &args.state {
        store.push_str(" --state ");
        store.push_str(&quoted(state));
    }
    let inputs: String = args.inputs.iter().map(|i| format!(" {}", quoted(i))).collect();
    report::CommandTail {
        inputs_and_store: inputs + &store,
        store,
    }
}

/// What `load_inputs` read, for a message that an id is not there: the inputs named, or the
/// sample corpus it fell back to (with how to name the records instead).
fn searched(args: &RunArgs, command: &str) -> String {
    if !args.inputs.is_empty() {
        let named: Vec<String> = args.inputs.iter().map(|p| p.display().to_string()).collect();
        return named.join(", ");
    }
    let samples = sample_corpus();
    format!(
        "{samples} (read because no INPUT was given); name the records it is in: `skillc {command} ID INPUT...`"
    )
}

/// What `load_inputs` reads when no INPUT was given.
fn sample_corpus() -> &'static str {
    if Path::new("samples").is_dir() {
        "./samples, the sample corpus"
    } else {
        "the sample corpus built into skillc"
    }
}

/// `why` and `trace` without INPUT explain the sample corpus, not what was compiled into
/// `--out` (the output does not keep its records): say so on stderr, so an answer about
/// records the user never wrote is not taken for one about theirs.
fn note_sample_fallback(args: &RunArgs, command: &str) {
    if args.inputs.is_empty() {
        let samples = sample_corpus();
        eprintln!(
            "note: no INPUT was given, so this reads {samples}; to read your own records, name them: `skillc {command} INPUT...`"
        );
    }
}

/// The authored skills `--base-skills` names (none without it), and a diagnostic per one
/// that could not be read.
fn base_skills(args: &RunArgs) -> Result<(Vec<crate::deltas::BaseSkill>, Vec<Diagnostic>), Fatal> {
    let Some(dir) = &args.base_skills else {
        return Ok(Default::default());
    };
    crate::deltas::read_base_skills(dir).map_err(|e| Fatal(format!("{}: {e}", dir.display())))
}

/// The lesson ids the authored skills cite (`(id: L…)`), sorted and deduplicated.
fn cited_ids(base: &[crate::deltas::BaseSkill]) -> Vec<String> {
    let ids: std::collections::BTreeSet<&str> = (base.iter())
        .flat_map(|s| {
            crate::digest::cited_lesson_ids(&s.text)
                .into_iter()
                .map(|(_, id)| id)
        })
        .collect();
    ids.into_iter().map(String::from).collect()
}

/// The decision journal, read without writing to the store (analyses and `diff` leave it
/// as it was).
fn decisions(args: &RunArgs) -> Result<Vec<crate::model::Decision>, Fatal> {
    match Store::open_read_only(&state_path(args)).map_err(store_fatal)? {
        Some(store) => Ok(store.decisions()?),
        None => Ok(Vec::new()),
    }
}

/// Recompute without writing (why, trace), keeping what the report reads; `why` narrows the
/// compile to the domain it asks about.
fn analyse(args: &RunArgs, keep: Keep, why: Option<&str>) -> Result<(Compilation, Rules), Fatal> {
    set_threads(args.threads)?;
    let rules = load_rules(args.rules.as_deref())?;
    let (corpus, sink) = load_inputs(args, &rules)?;
    let opts = Options {
        min_reinforcement: args.min_reinforcement,
        stop_after: None,
        decisions: decisions(args)?,
        keep,
        focus: why.map(|asked| report::why_domain(asked, &rules)),
        state: Some(state_path(args)),
        cited: cited_ids(&base_skills(args)?.0),
    };
    Ok((pipeline::compile(corpus, sink, &rules, &opts), rules))
}

/// The skill delta files of `--base-skills`, with their diagnostics (and one per authored
/// skill that could not be read) added to the compile's.
fn deltas_of(
    comp: &mut Compilation,
    base: &[crate::deltas::BaseSkill],
    unreadable: Vec<Diagnostic>,
    rules: &Rules,
) -> Vec<emit::OutFile> {
    let (files, diags) = crate::deltas::compute(base, &comp.lessons, &comp.refounded, rules);
    comp.diagnostics.extend(unreadable);
    comp.diagnostics.extend(diags);
    comp.diagnostics = crate::diagnostics::finalize(std::mem::take(&mut comp.diagnostics));
    files
}

/// `skillc diff`: the compile `compile` would run, compared with the last one; reads the
/// state store read-only and writes no file.
fn diff(args: &RunArgs, fail_on: Option<Risk>) -> Result<i32, Fatal> {
    note_sample_fallback(args, "diff");
    let (mut comp, rules) = analyse(args, Keep::Nothing, None)?;
    let store = Store::open_read_only(&state_path(args)).map_err(store_fatal)?;
    let store = store.filter(|s| s.has_compile().unwrap_or(false));
    let mut previous = Vec::new();
    let mut gone_rows = Vec::new();
    if let Some(store) = &store {
        store.each_ledger_lesson(|json| {
            let p: crate::diff::Previous = serde_json::from_str(json)?;
            if crate::model::Lesson::find(&comp.lessons, &p.id).is_none() {
                gone_rows.push(json.to_string());
            }
            previous.push(p);
            Ok::<(), Fatal>(())
        })?;
    }
    let gone = report::gone_lessons(&gone_rows, &comp.lessons, &comp.refounded);
    let bypassing: std::collections::BTreeMap<&str, &str> = (comp.diagnostics.iter())
        .filter(|d| d.code == crate::diagnostics::codes::BYPASSES_SAFEGUARD)
        .filter_map(|d| Some((d.subject.as_str(), d.evidence.get("matched")?.as_str()?)))
        .collect();
    let mut d = crate::diff::compare(store.is_some(), &previous, &gone, &comp.lessons, &bypassing);
    // The files, rendered as compile renders them and compared with what is on disk.
    // Deltas first: their diagnostics are in the rendered diagnostics.json.
    let deltas = match args.base_skills {
        Some(_) => {
            let (base, unreadable) = base_skills(args)?;
            deltas_of(&mut comp, &base, unreadable, &rules)
        }
        None => Vec::new(),
    };
    let mut files = vec![emit::ledger_file(&comp.lessons)];
    files.extend(emit::render(&comp, &rules, &mut Vec::new()));
    files.extend(deltas);
    let generated: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
    let last_outputs = match &store {
        Some(s) => s.outputs()?,
        None => Vec::new(),
    };
    d.write = emit::unwritten(&args.out, &files.iter().collect::<Vec<_>>())
        .into_iter()
        .map(String::from)
        .collect();
    d.remove = (emit::stale(&args.out, &generated, &last_outputs).into_iter())
        .map(String::from)
        .collect();
    d.write.sort();
    d.remove.sort();
    let out = args.out.display().to_string();
    print_report(args.format, d.text(&out), &d.json())?;
    // The gate is what a nightly job runs diff for: it says more than `--strict`'s 1.
    if fail_on.is_some_and(|risk| d.reaches(risk)) {
        return Ok(3);
    }
    Ok(strict_exit(args, &comp))
}

fn compile(args: &RunArgs, stop_after: Option<Stage>) -> Result<i32, Fatal> {
    set_threads(args.threads)?;
    let rules = load_rules(args.rules.as_deref())?;
    let stop = stop_after.unwrap_or(Stage::Emit);
    // `--out ledger.json`, a file where the output directory goes, is said as such before
    // anything is read (not as "ledger.json/.skillc: Not a directory" from the lock).
    if stop == Stage::Emit && args.out.exists() && !args.out.is_dir() {
        return Err(Fatal(format!(
            "--out {} is a file, not a directory: give the directory skillc writes SKILL.md files, the ledger and its state into",
            args.out.display()
        )));
    }
    let _lock = if stop == Stage::Emit {
        Some(OutputLock::acquire(&args.out).map_err(store_fatal)?)
    } else {
        None
    };
    let mut store = if stop == Stage::Emit {
        Some(Store::open(&state_path(args)).map_err(store_fatal)?)
    } else {
        None
    };
    let decisions = match &store {
        Some(s) => s.decisions()?,
        None => decisions(args)?,
    };
    let (base, unreadable) = base_skills(args)?;
    let mut clock = pipeline::StageClock::from_env();
    let (corpus, sink) = load_inputs(args, &rules)?;
    clock.lap("load");
    let opts = Options {
        min_reinforcement: args.min_reinforcement,
        stop_after: Some(stop),
        decisions,
        keep: Keep::Nothing,
        focus: None,
        state: Some(state_path(args)),
        cited: cited_ids(&base),
    };
    let mut comp = pipeline::compile(corpus, sink, &rules, &opts);
    clock.restart(); // compile timed its own stages
    let mut delta_files = Vec::new();
    if let (Some(_), Stage::Emit) = (&args.base_skills, stop) {
        delta_files = deltas_of(&mut comp, &base, unreadable, &rules);
    }
    let mut summary = report::summary(&comp, &args.out, 0);
    let refused = comp.fates.iter().any(|f| f.fate == Fate::Refused);
    if stop == Stage::Emit {
        // Emit reads only the lessons and the diagnostics (the summary is made already). The
        // records were most of the peak and emit's documents are smaller, so the peak stays
        // the fold's: the allocator keeps what is freed here and emit's text reuses it.
        comp.free_records();
        clock.lap("free");
    }
    let mut emit_sink = Vec::new();
    let mut written = Vec::new();
    let (mut changed, mut removed) = (0usize, 0usize);
    let mut gone = serde_json::json!([]);
    if let Some(store) = store.as_mut() {
        let previous = store.outputs()?;
        let ledger = emit::ledger(&comp.lessons);
        clock.lap("ledger");
        // The ledger is most of the output at scale. First it is compared, side by side, with
        // the store's rows and with the last ledger file.
        let ids = comp.lessons.iter().map(|l| l.id.as_str());
        let rows: Vec<(&str, &str)> = ids.zip(ledger.rows()).collect();
        let (staged, unchanged) = std::thread::scope(|s| {
            let comparing = s.spawn(|| emit::unchanged(&args.out, &ledger.file));
            let staged = store.begin_compile(comp.now, &rows);
            (staged, comparing.join().expect("comparing a file does not panic"))
        });
        drop(rows);
        let mut staged = staged?;
        staged.renamed(&comp.refounded)?;
        clock.lap("ledger compared");
        // Then its rows go into the store piece by piece, each piece passed on to be written
        // and freed, while the other files render and are written on the core that staging
        // (one thread inside SQLite, most of it the kernel filling fresh page-cache pages)
        // leaves idle. Rendering waits for a quarter of the ledger to be freed: started at
        // once, it set a new peak before the ledger had made room for it.
        let len: usize = ledger.file.pieces.iter().map(String::len).sum();
        let mut generated = vec![ledger.file.path.clone()];
        let (files, others, put, ledger_written) = std::thread::scope(|s| {
            let (to_writer, pieces) = std::sync::mpsc::sync_channel::<String>(2);
            let path = &generated[0];
            let writing = s.spawn(move || -> std::io::Result<usize> {
                if unchanged {
                    pieces.into_iter().for_each(drop);
                    return Ok(0);
                }
                emit::write_streamed(&args.out, path, len, pieces)?;
                Ok(1)
            });
            let (room, quarter_freed) = std::sync::mpsc::channel::<()>();
            let (staged, lessons) = (&mut staged, &comp.lessons);
            let staging = s.spawn(move || {
                let mut ids = lessons.iter().map(|l| l.id.as_str());
                let (mut put, mut passed, mut room) = (Ok(()), 0, Some(room));
                let pieces = ledger.file.pieces.into_iter().zip(ledger.row_ends);
                for (i, (piece, ends)) in pieces.enumerate() {
                    // The first piece is the header line. After a failure the pieces are still
                    // written: the ledger file does not depend on the store.
                    if i > 0 && put.is_ok() {
                        // Rows first: `zip` would take one id too many from the ids first.
                        let rows = emit::piece_rows(&piece, &ends).zip(ids.by_ref());
                        put = staged.put(rows.map(|(json, id)| (id, json)));
                    }
                    passed += piece.len();
                    // A writer that failed has gone; its error is reported below.
                    let _ = to_writer.send(piece);
                    if passed * 4 >= len {
                        drop(room.take());
                    }
                }
                drop(to_writer);
                // The rows reach the disk while the other files still render.
                put.and_then(|()| staged.sync())
            });
            // Nothing is sent: the staging thread drops `room` once a quarter is freed.
            let _ = quarter_freed.recv();
            let mut files = emit::render(&comp, &rules, &mut emit_sink);
            files.extend(delta_files);
            clock.lap("render");
            // Written whether or not the ledger could be; a failure of either leaves the last
            // recorded compile as it was, and no stale file is removed.
            let others = emit::write(&args.out, &files.iter().collect::<Vec<_>>());
            clock.lap("write");
            let put = staging.join().expect("staging rows does not panic");
            let written = writing.join().expect("writing a file does not panic");
            (files, others, put, written)
        });
        put?;
        gone = report::gone_lessons(staged.gone(), &comp.lessons, &comp.refounded);
        clock.lap("ledger staged");
        generated.extend(files.iter().map(|f| f.path.clone()));
        generated.sort();
        let wrote = ledger_written.and_then(|ledger| {
            let others = others?;
            removed = emit::remove_stale(&args.out, &generated, &previous)?;
            Ok(ledger + others)
        });
        // Files that could not be written leave the last recorded compile as it was.
        let recorded = staged.finish(wrote.is_ok().then_some(&generated[..]));
        changed = wrote.map_err(|e| Fatal(format!("{}: {e}", args.out.display())))?;
        recorded?;
        written = generated;
        clock.lap("store");
    }
    let diagnostics: Vec<&Diagnostic> = comp.diagnostics.iter().chain(&emit_sink).collect();
    print_diagnostics(&diagnostics);
    summary["files"] = written.len().into();
    summary["changed_files"] = changed.into();
    summary["removed_files"] = removed.into();
    // The last compile's lessons this one no longer has: lost with their evidence, or gone on
    // under a new id.
    summary["gone_lessons"] = gone;
    // Emit's own diagnostics (E001: rules a SKILL.md had no room for) count too.
    summary["diagnostics"] = report::severity_counts(diagnostics.iter().copied());
    print_report(args.format, report::summary_text(&summary), &summary)?;
    clock.lap("report");
    let code = strict_code(args, refused, diagnostics.into_iter());
    // The process ends right after this; freeing a million lessons' histories one by one would
    // only cost time.
    std::mem::forget(comp);
    Ok(code)
}

/// The exit code of a run that completed: 1 under `--strict` when some input was refused (a
/// candidate's fate) or malformed (a diagnostic that leaves input out), else 0.
fn strict_code<'d>(
    args: &RunArgs,
    refused: bool,
    mut diagnostics: impl Iterator<Item = &'d Diagnostic>,
) -> i32 {
    i32::from(args.strict && (refused || diagnostics.any(Diagnostic::leaves_input_out)))
}

/// `strict_code` for an analysis (`why`, `trace`), which keeps its compilation whole.
fn strict_exit(args: &RunArgs, comp: &Compilation) -> i32 {
    let refused = comp.fates.iter().any(|f| f.fate == Fate::Refused);
    strict_code(args, refused, comp.diagnostics.iter())
}

/// Store failures carry their usage code: U001 for a locked output, U002 for a foreign store.
fn store_fatal(e: StoreError) -> Fatal {
    match &e {
        StoreError::Locked { .. } => Fatal(format!("U001: output-locked: {e}")),
        StoreError::Foreign(..) => Fatal(format!("U002: foreign-state: {e}")),
        _ => Fatal(e.to_string()),
    }
}

/// Every lesson's supersede links, in id order, as `report::history_chain` takes them.
fn ledger_links(store: &Store) -> Result<Vec<report::LedgerLink>, Fatal> {
    let mut links = Vec::new();
    store.each_ledger_lesson(|json| {
        links.push(serde_json::from_str(json)?);
        Ok::<(), Fatal>(())
    })?;
    Ok(links)
}

/// The lesson that carries `id` on: the newest after it in its supersede chain (what
/// superseded it, or the lesson later records taught again after it decayed, followed to the
/// end); with none after it, the lesson that superseded it (a retired lesson restored over the
/// one re-learned meanwhile comes first in their chain). None when nothing carries it on, or
/// the chain runs past `id` where lessons branch.
fn successor(store: &Store, id: &str) -> Result<Option<String>, Fatal> {
    let links = ledger_links(store)?;
    let chain = report::history_chain(&links, id);
    let Some(at) = chain.iter().position(|&i| links[i].id == id) else {
        return Ok(None);
    };
    let newest = chain[at + 1..].last().map(|&i| links[i].id.clone());
    Ok(newest.or_else(|| {
        links[chain[at]]
            .superseded_by
            .clone()
            .filter(|by| !by.contains(':'))
    }))
}

fn lessons(cmd: LessonsCommand) -> Result<i32, Fatal> {
    use LessonsCommand as L;
    let state = match &cmd {
        L::List { state, .. }
        | L::Show { state, .. }
        | L::History { state, .. }
        | L::Edit { state, .. }
        | L::Retire { state, .. }
        | L::Restore { state, .. }
        | L::Pin { state, .. }
        | L::Unpin { state, .. } => state.clone(),
    };
    let path = state.state_path();
    if !path.exists() {
        return Err(Fatal(format!(
            "no state store at {}; run `skillc compile` first",
            path.display()
        )));
    }
    let mut store = Store::open(&path).map_err(store_fatal)?;
    if !store.has_compile()? {
        return Err(Fatal(format!(
            "{} holds no compile yet; run `skillc compile` first",
            path.display()
        )));
    }
    let out = state.out.clone();
    let find = |store: &Store, id: &str| -> Result<serde_json::Value, Fatal> {
        match store.ledger_lesson(id)? {
            Some(json) => Ok(serde_json::from_str(&json)?),
            // The last compile's S004 names the new id on the night of the re-founding; on
            // later nights (no S004 repeats it) the store still knows it.
            None => Err(Fatal(match refounded_as(&out, id) {
                Some(new) => format!(
                    "no lesson with id `{id}` in the last compile: the last compile re-founded it as {new} (S004 says why); use `{new}`"
                ),
                None => match store.refounded_as(id).ok().flatten() {
                    Some(new) => format!(
                        "no lesson with id `{id}` in the last compile: an earlier compile re-founded it as {new} (`skillc explain S004`); use `{new}`"
                    ),
                    None => format!("no lesson with id `{id}` in the last compile"),
                },
            })),
        }
    };
    // `list` and `history` read every row, streamed from the store, but keep only what they
    // filter on and follow (`report::LedgerRow`, `report::LedgerLink`) and the rows they print;
    // the others read one row.
    let fmt = state.format;
    let mut record = |action: Action, id: &str, text: Option<&str>| -> Result<i32, Fatal> {
        let lesson = find(&store, id)?;
        // A superseded lesson never revives (DESIGN §6), so no decision can change it; one
        // superseded by an edit passes its decisions on to the edited wording, and the cap is
        // each compile's end state (a pin exempts the lesson from it).
        let reason = lesson["reason"].as_str().unwrap_or("");
        if lesson["status"] == "superseded" && reason != score::EDITED && reason != score::CAPPED {
            let by = match lesson["superseded_by"].as_str() {
                Some(by) => format!(" by {by}"),
                None => String::new(),
            };
            let reason = if reason.is_empty() {
                "no reason given"
            } else {
                reason
            };
            // Where the lesson goes on: what superseded it, or the lesson later records taught
            // again after it decayed, followed to the end of the chain.
            let now = successor(&store, id)?;
            let go_on = match now {
                Some(now) if Some(now.as_str()) != lesson["superseded_by"].as_str() => {
                    format!("; the lesson now is {now}: use `{now}`")
                }
                Some(now) => format!("; use `{now}`"),
                None => String::new(),
            };
            return Err(Fatal(format!(
                "{id} was superseded{by} ({reason}) and never revives, so `{}` would have no effect; not recorded{go_on}",
                action.as_str()
            )));
        }
        // An edit without words would compile into an active rule that says nothing.
        if action == Action::Edit && text.is_none_or(|t| t.trim().is_empty()) {
            return Err(Fatal("the new text is empty; not recorded".into()));
        }
        // `--reason ""` (an unset shell variable, most often) would be journalled as a reason
        // that says nothing, where leaving it out records "no reason given".
        if action == Action::Retire && text.is_some_and(|t| t.trim().is_empty()) {
            return Err(Fatal(
                "--reason is empty: say why the lesson is retired, or leave --reason out; not recorded"
                    .into(),
            ));
        }
        // A rule line ends in its id; an id inside the text would be a second one, which
        // deltas and E004 would trust as a merged rule.
        if let Some(t) = text
            && !crate::digest::cited_lesson_ids(t).is_empty()
        {
            return Err(Fatal(
                "the text cites a lesson id (`(id: L…)`), which every rule line adds itself; not recorded"
                    .into(),
            ));
        }
        if let Some(t) = text
            && let Some(pattern) = Rules::builtin().secrets.find(t)
        {
            return Err(Fatal(format!(
                "the text looks like a secret ({pattern}); not recorded"
            )));
        }
        // An edited lesson's old id stands for its current wording: say which lesson the
        // decision lands on, not the wording it no longer has. (Edits chain: each new id
        // hashes the old one, so the chain ends; bounded anyway.)
        let mut lands = lesson;
        for _ in 0..64 {
            let edited = lands["status"] == "superseded" && lands["reason"] == score::EDITED;
            match lands["superseded_by"]
                .as_str()
                .filter(|_| edited)
                .map(|n| find(&store, n))
            {
                Some(Ok(next)) => lands = next,
                _ => break,
            }
        }
        let redirected = match lands["id"].as_str() {
            Some(now) if now != id => format!("; {id} was edited, so it applies to {now}"),
            _ => String::new(),
        };
        let d = store.record(action, id, text)?;
        let msg = format!(
            "{} {} ({}): journal entry {}{}; the next compile applies it",
            action.as_str(),
            id,
            lands["text"].as_str().unwrap_or(""),
            d.seq,
            redirected
        );
        print_report(
            fmt,
            msg,
            &serde_json::json!({"recorded": action.as_str(), "id": id, "seq": d.seq}),
        )
    };
    // An id as an agent or a user copied it (`l…`, upper-case hex, `(id: L…)`, backticks)
    // names the lesson it names in `in_play`.
    let plain = |id: String| crate::normalize::lesson_id_as_copied(&id).unwrap_or(id);
    match cmd {
        L::List {
            domain,
            scope,
            status,
            rules,
            ..
        } => {
            // Ledger domains are normalised and aliased (DESIGN §4): `golang` asks for `go`.
            let domain = match domain {
                Some(d) => Some(report::why_domain(&d, &load_rules(rules.as_deref())?)),
                None => None,
            };
            let is = |field: &str, wanted: &Option<String>| wanted.as_deref().is_none_or(|w| field == w);
            let (mut listed, mut picked) = (Vec::new(), Vec::new());
            store.each_ledger_lesson(|json| {
                let l: report::LedgerRow = serde_json::from_str(json)?;
                if is(&l.domain, &domain) && is(&l.scope, &scope) && is(&l.status, &status) {
                    match fmt {
                        OutputFormat::Human => listed.push(l.into_owned()),
                        OutputFormat::Json => picked.push(serde_json::from_str::<serde_json::Value>(json)?),
                    }
                }
                Ok::<(), Fatal>(())
            })?;
            match fmt {
                OutputFormat::Human if listed.is_empty() => {
                    print_report(fmt, report::NO_LESSONS_MATCH.into(), &serde_json::Value::Null)
                }
                OutputFormat::Human => {
                    let lines = report::lessons_list_text(&listed);
                    print_report(fmt, lines, &serde_json::Value::Null)
                }
                OutputFormat::Json => {
                    print_report(fmt, String::new(), &serde_json::json!({"lessons": picked}))
                }
            }
        }
        L::Show { id, .. } => {
            let l = find(&store, &plain(id))?;
            // A lesson taught again after the user retired its predecessor says so.
            let before = (l["supersedes"].as_str()).and_then(|s| find(&store, s).ok());
            let before = before.as_ref().and_then(|b| b["status"].as_str());
            print_report(fmt, report::lesson_show_text(&l, before), &l)
        }
        L::History { id, .. } => {
            let id = plain(id);
            find(&store, &id)?;
            let links = ledger_links(&store)?;
            let chain = (report::history_chain(&links, &id).into_iter())
                .map(|i| find(&store, &links[i].id))
                .collect::<Result<Vec<_>, _>>()?;
            print_report(
                fmt,
                report::history_text(&chain),
                &serde_json::json!({"id": id, "chain": chain}),
            )
        }
        L::Edit { id, text, .. } => record(Action::Edit, &plain(id), Some(&text)),
        L::Retire { id, reason, .. } => record(Action::Retire, &plain(id), reason.as_deref()),
        L::Restore { id, .. } => record(Action::Restore, &plain(id), None),
        L::Pin { id, .. } => record(Action::Pin, &plain(id), None),
        L::Unpin { id, .. } => record(Action::Unpin, &plain(id), None),
    }
}

/// The id the last compile's S004 says lesson `old` was re-founded as, from `<out>/diagnostics.json`
/// (one object per line); only asked when an id is unknown.
fn refounded_as(out: &std::path::Path, old: &str) -> Option<String> {
    use std::io::BufRead;
    let file = std::fs::File::open(out.join("diagnostics.json")).ok()?;
    let needle = format!("\"old_id\":\"{old}\"");
    std::io::BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .filter(|line| line.contains("\"S004\"") && line.contains(&needle))
        .find_map(|line| {
            let d: serde_json::Value = serde_json::from_str(line.trim_end_matches(',')).ok()?;
            (d["evidence"]["old_id"] == old).then(|| d["evidence"]["new_id"].as_str().map(String::from))?
        })
}

fn print_report(format: OutputFormat, text: String, json: &serde_json::Value) -> Result<i32, Fatal> {
    let mut out = std::io::stdout().lock();
    let r = match format {
        OutputFormat::Human => write!(
            out,
            "{text}{}",
            if text.ends_with('\n') || text.is_empty() {
                ""
            } else {
                "\n"
            }
        ),
        OutputFormat::Json => writeln!(out, "{}", serde_json::to_string_pretty(json).unwrap_or_default()),
    };
    match r {
        Ok(()) => Ok(0),
        // A closed pipe (`| head`) is not a failure of the command.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
        Err(e) => Err(Fatal(e.to_string())),
    }
}

/// At most this many diagnostics are printed on stderr; diagnostics.json has them all.
const MAX_PRINTED: usize = 200;

fn print_diagnostics(diags: &[&Diagnostic]) {
    let mut err = std::io::stderr().lock();
    for d in diags.iter().take(MAX_PRINTED) {
        let _ = write!(err, "{}", render_diagnostic(d));
    }
    if diags.len() > MAX_PRINTED {
        let _ = writeln!(
            err,
            "... and {} more diagnostics (all are in diagnostics.json)",
            diags.len() - MAX_PRINTED
        );
    }
}

/// rustc-style rendering: `warning[G002]: narrative-candidate: message`, location, subject,
/// evidence and help lines.
pub fn render_diagnostic(d: &Diagnostic) -> String {
    let (label, colour) = match d.severity {
        Severity::Error => ("error", "1;31"),
        Severity::Warning => ("warning", "1;33"),
        Severity::Note => ("note", "1;36"),
    };
    let mut s = format!(
        "{}: {}: {}\n",
        paint(&format!("{label}[{}]", d.code), colour),
        d.name(),
        d.message
    );
    if let Some(loc) = &d.location {
        s.push_str(&format!("  {} {}:{}\n", paint("-->", "1;34"), loc.file, loc.line));
    } else if let Some(path) = d.evidence.get("path").and_then(|p| p.as_str()) {
        // About a whole file (L007, L008, L011): where, without a line.
        s.push_str(&format!("  {} {path}\n", paint("-->", "1;34")));
    }
    if !d.subject.is_empty() {
        s.push_str(&format!("   = subject: {}\n", d.subject));
    }
    // A record with two domains gets one diagnostic per domain: the line tells them apart.
    if let Some(domain) = d.domain.as_deref().filter(|&dom| dom != d.subject) {
        s.push_str(&format!("   = domain: {domain}\n"));
    }
    let pairs: Vec<String> = d
        .evidence
        .iter()
        .map(|(k, v)| {
            let v = match v {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Array(a) if a.len() > 5 => format!("[{} items]", a.len()),
                other => other.to_string(),
            };
            format!("{k}={v}")
        })
        .collect();
    if !pairs.is_empty() {
        s.push_str(&format!("   = evidence: {}\n", pairs.join(", ")));
    }
    s.push_str(&format!("   = {}: {}\n\n", paint("help", "1"), d.help));
    s
}

/// ANSI colour only on a terminal, never with NO_COLOR.
fn paint(text: &str, sgr: &str) -> String {
    let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    if colour {
        format!("\x1b[{sgr}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::codes;

    #[test]
    fn a_diagnostic_about_one_of_a_records_domains_names_the_domain() {
        let held = |domain: &str| {
            Diagnostic::new(
                codes::OUTCOME_GATE,
                "do-candidates held back: the experience did not pass",
            )
            .subject("exp-2026-10-01-017")
            .domain(domain)
        };
        let (python, docker) = (
            render_diagnostic(&held("python")),
            render_diagnostic(&held("docker")),
        );
        assert_ne!(python, docker);
        assert!(python.contains("\n   = domain: python\n"), "{python}");
        // A diagnostic whose subject is the domain does not say it twice.
        let about_domain = Diagnostic::new(codes::EMPTY_DOMAIN, "no experiences")
            .subject("python")
            .domain("python");
        assert!(!render_diagnostic(&about_domain).contains("= domain:"));
    }
}
