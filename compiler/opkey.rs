//! Operation keys (DESIGN §3.3): what an operation is about, derived exactly as GAIA does so
//! keys join across both systems.
//!
//! The key is `"<tool> <program>"` for shell-like calls (a command string, or an argv array
//! as Codex CLI records one, see `command_of`), `"<tool> <path-like value>"` for calls
//! about one file, directory, skill or URL, and otherwise `"<tool> "` + the args as Python's
//! `json.dumps(args, sort_keys=True)` prints them. That last form is why this module carries a
//! byte-exact re-implementation of Python's JSON encoder.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// Argument names that hold a shell command, in priority order.
pub const COMMAND_FIELDS: [&str; 2] = ["command", "cmd"];

/// Argument names that say what a non-shell call is about, in priority order.
pub const PATH_FIELDS: [&str; 6] = ["file_path", "path", "directory", "name", "skill_name", "url"];

/// `"<tool> <program>"`, `"<tool> <path-like value>"` or `"<tool> <python json.dumps(args)>"`.
pub fn operation_key(tool: &str, args: &Value) -> String {
    if let Some(command) = command_of(args)
        && let Some(program) = program(&command)
    {
        return format!("{tool} {program}");
    }
    if let Value::Object(map) = args {
        for field in PATH_FIELDS {
            if let Some(v) = non_blank(map, field) {
                return format!("{tool} {}", v.trim());
            }
        }
    }
    match args {
        Value::Null => format!("{tool} {{}}"),
        other => format!("{tool} {}", python_json(other)),
    }
}

/// The shell command a call runs, from its first command field (`command`, then `cmd`) that
/// holds one.
///
/// A non-blank string is the command as written, borrowed: keys are made for every call of
/// a million records, and this allocates nothing for them. An argv array of strings (Codex
/// CLI's `shell`: `["bash", "-lc", "pytest -q"]`) is the command it runs: a shell's `-c`
/// wrapper gives its script (borrowed too), any other argv its words joined with spaces,
/// quoted as Python's `shlex.join` quotes them. Anything else is no command.
pub fn command_of(args: &Value) -> Option<Cow<'_, str>> {
    let Value::Object(map) = args else {
        return None;
    };
    COMMAND_FIELDS.iter().find_map(|&f| match map.get(f)? {
        Value::String(s) => (!s.trim().is_empty()).then_some(Cow::Borrowed(s.as_str())),
        Value::Array(items) => argv_command(items),
        _ => None,
    })
}

/// The command an argv array runs: `[sh|bash|zsh|dash, -c, CMD]` (the `-c` may be grouped,
/// `-lc`, `-lic`, or follow other options) is CMD; other words are joined shell-style. `None`
/// when a word is not a string or the command is blank.
fn argv_command(items: &[Value]) -> Option<Cow<'_, str>> {
    let words: Vec<&str> = items.iter().map(Value::as_str).collect::<Option<_>>()?;
    if let Some(script) = shell_script(&words) {
        return (!script.trim().is_empty()).then_some(Cow::Borrowed(script));
    }
    if words.iter().all(|w| w.trim().is_empty()) {
        return None;
    }
    Some(Cow::Owned(shell_join(&words)))
}

/// Shells whose `-c SCRIPT` an argv wrapper runs.
const SHELLS: [&str; 4] = ["sh", "bash", "zsh", "dash"];

/// The script of `shell [-opts]... -c SCRIPT`: a shell, then only options, one of them a
/// group of single-letter options holding `c`, then the script as the last word.
fn shell_script<'a>(words: &[&'a str]) -> Option<&'a str> {
    let (&shell, rest) = words.split_first()?;
    let (&script, options) = rest.split_last()?;
    let c_group = |o: &&str| {
        o.strip_prefix('-')
            .is_some_and(|letters| letters.bytes().all(|b| b.is_ascii_alphabetic()) && letters.contains('c'))
    };
    (SHELLS.contains(&basename(shell))
        && options.iter().all(|o| o.starts_with('-'))
        && options.iter().any(c_group))
    .then_some(script)
}

/// Python's `shlex.join`: a word of only `[A-Za-z0-9_@%+=:,./-]` as it is, any other (the
/// empty word too) in single quotes, an inner `'` written `'"'"'`.
fn shell_join(words: &[&str]) -> String {
    let safe = |b: u8| b.is_ascii_alphanumeric() || b"_@%+=:,./-".contains(&b);
    let mut out = String::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        if !w.is_empty() && w.bytes().all(safe) {
            out.push_str(w);
        } else {
            out.push('\'');
            out.push_str(&w.replace('\'', r#"'"'"'"#));
            out.push('\'');
        }
    }
    out
}

fn non_blank<'a>(map: &'a Map<String, Value>, field: &str) -> Option<&'a str> {
    match map.get(field) {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.as_str()),
        _ => None,
    }
}

/// The program a shell command runs: skips `env` and `NAME=value`, basename, lower-case;
/// `python… -m X` gives `X`.
///
/// A command that is nothing but `env` and assignments names its first token (`env` → `env`).
/// `None` only for a blank command.
pub fn program(command: &str) -> Option<String> {
    let tokens: Vec<&str> = command.split_whitespace().collect();
    let first = *tokens.first()?;
    let mut i = 0;
    if basename(tokens[0]) == "env" {
        i += 1;
    }
    while i < tokens.len() && is_assignment(tokens[i]) {
        i += assignment_words(tokens[i]);
    }
    let Some(&token) = tokens.get(i) else {
        return Some(basename(first).to_lowercase());
    };
    let program = basename(token).to_lowercase();
    if program.starts_with("python")
        && tokens.get(i + 1) == Some(&"-m")
        && let Some(module) = tokens.get(i + 2)
    {
        return Some(module.to_lowercase());
    }
    Some(program)
}

/// The program a shell command really runs and the words after it, for telling a fix from
/// the next task (`kinship`): `env` and `NAME=value` skipped, `python -m X` read as `X` (as
/// `program` does), bare `--` left out, and the wrappers agents put around a command looked
/// through (`wrapped`): `cd DIR && X`, `sudo X`, `timeout 60 X`, `bash -lc "X"`, `uv run X`,
/// `npx X`, `npm run X`. The operation key stays the first program (DESIGN §3.3); only how two
/// calls on one key relate looks inside.
fn inner(command: &str) -> (String, Vec<&str>) {
    // Quotes go: a `-c` script's open at its first word and close at its last.
    let mut tokens: Vec<&str> = (command.split_whitespace())
        .map(|t| t.trim_matches(|c| c == '"' || c == '\''))
        .filter(|t| !t.is_empty())
        .collect();
    // Each pass removes at least one word, and wrappers nest a few deep at most.
    for _ in 0..8 {
        let mut i = usize::from(tokens.first().is_some_and(|t| basename(t) == "env"));
        while i < tokens.len() && is_assignment(tokens[i]) {
            i += assignment_words(tokens[i]);
        }
        let Some(first) = tokens.get(i) else {
            break;
        };
        let program = basename(first).to_lowercase();
        match wrapped(&program, &tokens[i + 1..]) {
            Some(rest) if !rest.is_empty() => tokens = rest.to_vec(),
            _ => {
                let mut rest = &tokens[i + 1..];
                if program.starts_with("python") && rest.first() == Some(&"-m") && rest.len() > 1 {
                    let module = rest[1].to_lowercase();
                    rest = &rest[2..];
                    return (module, rest.iter().copied().filter(|t| *t != "--").collect());
                }
                return (program, rest.iter().copied().filter(|t| *t != "--").collect());
            }
        }
    }
    (String::new(), Vec::new())
}

/// The program a shell command really runs, inside its wrappers (`inner`), the words after
/// it and its subcommand: `("git", ["apply", "fix.diff"], Some("apply"))` for `cd repo && git
/// apply fix.diff`. The words are what a policy list's `program -flag` entry is matched
/// against, without a whole `Command` parse.
pub fn program_run(command: &str) -> (String, Vec<&str>, Option<&str>) {
    let (program, operands) = inner(command);
    let sub = subcommand(&program, &operands);
    (program, operands, sub)
}

/// Wrappers that run the command after their own options, with the options that take a value.
const PREFIX_WRAPPERS: [(&str, &[&str]); 11] = [
    (
        "sudo",
        &["-u", "-g", "-h", "-C", "-D", "-U", "-p", "-r", "-t", "-T"],
    ),
    ("doas", &["-u", "-C"]),
    ("timeout", &["-s", "-k", "--signal", "--kill-after"]),
    ("nice", &["-n", "--adjustment"]),
    ("ionice", &["-c", "-n", "-p", "--class", "--classdata"]),
    ("time", &["-f", "-o", "--format", "--output"]),
    ("nohup", &[]),
    ("stdbuf", &["-i", "-o", "-e"]),
    (
        "xvfb-run",
        &["-s", "-n", "-e", "-f", "-p", "--server-args", "--server-num"],
    ),
    ("npx", &["-p", "--package", "-c", "--call"]),
    ("bunx", &["-p", "--package"]),
];

/// Program-runner subcommands: `uv run X`, `poetry run X`, `bundle exec X`, `npm run SCRIPT`
/// (a script stands for the program it runs).
const RUNNERS: [(&str, &[&str]); 17] = [
    ("uv", &["run"]),
    ("uvx", &[""]),
    ("pnpx", &[""]),
    ("poetry", &["run"]),
    ("pipenv", &["run"]),
    ("pdm", &["run"]),
    ("hatch", &["run"]),
    ("rye", &["run"]),
    ("pipx", &["run"]),
    ("conda", &["run"]),
    ("mamba", &["run"]),
    ("micromamba", &["run"]),
    ("bundle", &["exec"]),
    ("npm", &["run", "run-script", "exec"]),
    ("pnpm", &["run", "exec", "dlx"]),
    ("yarn", &["run", "exec", "dlx"]),
    ("bun", &["run", "x"]),
];

/// Options of the runners above that take a value (`conda run -n env X`, `uv run --with
/// pandas X`); any other option stands alone.
const RUNNER_VALUE_OPTIONS: [&str; 14] = [
    "-n",
    "-p",
    "--name",
    "--prefix",
    "--with",
    "--python",
    "--package",
    "--env",
    "-e",
    "--directory",
    "--project",
    "--group",
    "--extra",
    "--filter",
];

/// The words of the command `program` wraps (`args` are the words after it), or `None` when
/// `program` is no wrapper. A shell's `-c` script loses its outer quotes; `cd DIR` wraps what
/// follows its `&&` or `;`.
fn wrapped<'a, 'w>(program: &str, args: &'w [&'a str]) -> Option<&'w [&'a str]> {
    let skip_options = |args: &'w [&'a str], valued: &[&str]| -> &'w [&'a str] {
        let mut i = 0;
        while let Some(t) = args.get(i) {
            if !t.starts_with('-') || *t == "-" {
                break;
            }
            if *t == "--" {
                return &args[i + 1..];
            }
            i += if valued.contains(t) { 2 } else { 1 };
        }
        &args[i.min(args.len())..]
    };
    if SHELLS.contains(&program) {
        let c = args.iter().position(|o| {
            o.strip_prefix('-').is_some_and(|l| {
                !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphabetic()) && l.contains('c')
            })
        })?;
        return args[..c]
            .iter()
            .all(|o| o.starts_with('-'))
            .then(|| &args[c + 1..]);
    }
    if program == "cd" || program == "pushd" {
        let end = args
            .iter()
            .position(|t| *t == "&&" || *t == ";" || t.ends_with(';'))?;
        return Some(&args[end + 1..]);
    }
    if let Some((_, valued)) = PREFIX_WRAPPERS.iter().find(|(w, _)| *w == program) {
        let rest = skip_options(args, valued);
        // `timeout [options] DURATION X`.
        return Some(if program == "timeout" {
            rest.get(1..).unwrap_or(&[])
        } else {
            rest
        });
    }
    let (_, subs) = RUNNERS.iter().find(|(r, _)| *r == program)?;
    if subs == &[""] {
        return Some(skip_options(args, &RUNNER_VALUE_OPTIONS));
    }
    // The runner's own options may come first with their values (`npm -w @acme/ui run
    // build`, `pnpm --filter web exec tsc`): the workspace is no subcommand.
    let sub = first_operand(args, global_value_options(program))?;
    subs.contains(&args[sub])
        .then(|| skip_options(&args[sub + 1..], &RUNNER_VALUE_OPTIONS))
}

/// Options a program takes before its subcommand with their value as the next word: `git -C
/// web pull`, `kubectl -n prod get pods`, `make -C build test`. (A value joined with `=` is
/// one word, a flag anyway.)
/// Subcommands that group others (`docker compose up`, `kubectl rollout restart`, `git stash
/// pop`, `go mod tidy`, `gh pr create`): `Command::subcommand` takes the next word too, so two
/// commands of one group are as related as two subcommands are. Program names lower-case.
const COMMAND_GROUPS: [(&str, &[&str]); 8] = [
    (
        "docker",
        &[
            "compose",
            "container",
            "image",
            "network",
            "volume",
            "system",
            "buildx",
            "builder",
            "context",
        ],
    ),
    ("kubectl", &["rollout", "auth", "certificate", "config"]),
    ("git", &["stash", "remote", "submodule", "worktree", "lfs"]),
    ("go", &["mod", "work"]),
    (
        "gh",
        &[
            "pr", "issue", "repo", "run", "workflow", "release", "secret", "auth",
        ],
    ),
    ("helm", &["repo", "plugin", "dependency"]),
    ("poetry", &["self", "env"]),
    ("terraform", &["state", "workspace"]),
];

/// Options a group takes before its subcommand whose value is the next word (`docker compose -f
/// ci.yml up`, `gh pr -R org/repo list`).
const GROUP_VALUE_OPTIONS: [&str; 10] = [
    "-f",
    "--file",
    "-p",
    "--project-name",
    "--profile",
    "--env-file",
    "--project-directory",
    "-n",
    "--namespace",
    "-R",
];

const GLOBAL_VALUE_OPTIONS: [(&str, &[&str]); 14] = [
    (
        "git",
        &[
            "-C",
            "-c",
            "--git-dir",
            "--work-tree",
            "--namespace",
            "--config-env",
        ],
    ),
    (
        "kubectl",
        &[
            "-n",
            "--namespace",
            "--context",
            "--kubeconfig",
            "--cluster",
            "--user",
            "-s",
            "--server",
        ],
    ),
    ("helm", &["-n", "--namespace", "--kube-context", "--kubeconfig"]),
    (
        "docker",
        &["-H", "--host", "-c", "--context", "--config", "-l", "--log-level"],
    ),
    ("make", &["-C", "-f", "--directory", "--file", "--makefile"]),
    ("cargo", &["-C", "-Z", "--config", "--color"]),
    ("go", &["-C"]),
    ("npm", &["--prefix", "-w", "--workspace"]),
    ("pnpm", &["-C", "--dir", "-F", "--filter"]),
    ("yarn", &["--cwd"]),
    // `alembic -c db/alembic.ini upgrade head`: the config file, a migration environment
    // (`-n`), `-x key=value` arguments for env.py.
    ("alembic", &["-c", "--config", "-n", "--name", "-x"]),
    // The cloud CLIs take their global options anywhere, before the service too (`aws
    // --profile ops s3 sync`): a profile, region or project is never the command.
    (
        "aws",
        &[
            "--profile",
            "--region",
            "--output",
            "--endpoint-url",
            "--query",
            "--color",
            "--ca-bundle",
            "--cli-read-timeout",
            "--cli-connect-timeout",
        ],
    ),
    (
        "gcloud",
        &[
            "--project",
            "--account",
            "--configuration",
            "--format",
            "--verbosity",
            "--billing-project",
            "--impersonate-service-account",
            "--region",
            "--zone",
        ],
    ),
    (
        "az",
        &[
            "--subscription",
            "--output",
            "-o",
            "--query",
            "--only-show-errors",
        ],
    ),
];

/// Cloud CLIs whose every command is a service and an operation on it (`aws s3 sync`, `gcloud
/// builds submit`, `az webapp deploy`): the service is a group, as `docker compose` is, so
/// `aws sts get-caller-identity` and `aws s3 sync` are two subcommands, and a look around such
/// as `aws configure list` can be listed whole.
const SERVICE_CLIS: [&str; 3] = ["aws", "gcloud", "az"];

/// The first operand of `program` that is not a flag, a flag's value or a `+toolchain`:
/// `build` in `cargo +nightly build`, `pull` in `git -C web pull`.
fn subcommand<'a>(program: &str, operands: &[&'a str]) -> Option<&'a str> {
    first_operand(operands, global_value_options(program)).map(|i| operands[i])
}

/// The options `program` takes before its subcommand whose value is the next word.
fn global_value_options(program: &str) -> &'static [&'static str] {
    (GLOBAL_VALUE_OPTIONS.iter())
        .find(|(p, _)| p.eq_ignore_ascii_case(program))
        .map_or(&[][..], |&(_, options)| options)
}

/// Where the first word that is neither an option nor an option's value (`with_value`) is.
fn first_operand(words: &[&str], with_value: &[&str]) -> Option<usize> {
    let mut i = 0;
    while let Some(t) = words.get(i) {
        if with_value.contains(t) {
            i += 1;
        } else if !t.starts_with('-') && !t.starts_with('+') {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// How two commands of one program (one operation key) relate, for telling a fix from the next
/// task: they run the same subcommand (`cargo build` and `cargo build --locked`), or different
/// ones on a common file or directory (`kubectl create -f deploy.yaml` and `kubectl apply -f
/// deploy.yaml`), or neither (`cargo clippy` and `cargo test`); or, inside one wrapper, they
/// run different programs (`uv run pytest` and `uv run ruff check`, `npx jest` and `npx
/// eslint`, `cd api && cargo build` and `cd web && npm ci`): no more related than two keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kinship {
    SameSubcommand,
    SameFile,
    Unrelated,
    OtherProgram,
}

impl Kinship {
    /// The same subcommand, or different ones on a common file.
    pub fn related(self) -> bool {
        matches!(self, Kinship::SameSubcommand | Kinship::SameFile)
    }
}

pub fn kinship(a: &str, b: &str) -> Kinship {
    Command::parse(a).kinship(&Command::parse(b))
}

/// A shell command as `kinship` reads it, parsed once: one record's calls are compared with
/// each other many times (`candidates::mechanical`), and a success is looked up by what it
/// shares with a failure (program, subcommand, file words) rather than compared with each.
#[derive(Debug)]
pub struct Command<'a> {
    /// The program inside the wrappers, lower-case (`inner`).
    pub program: String,
    /// Its subcommand, lower-case.
    pub subcommand: Option<String>,
    words: Vec<&'a str>,
}

impl<'a> Command<'a> {
    pub fn parse(command: &'a str) -> Command<'a> {
        let (program, words) = inner(command);
        let subcommand = first_operand(&words, global_value_options(&program)).map(|at| {
            let mut sub = words[at].to_lowercase();
            // A command group's own subcommand is part of it: `docker compose up` and `docker
            // compose down` are two subcommands, not one.
            let service = SERVICE_CLIS.contains(&program.as_str());
            let grouped = service
                || (COMMAND_GROUPS.iter()).any(|(p, groups)| program == *p && groups.contains(&sub.as_str()));
            let rest = &words[at + 1..];
            let options = if service {
                global_value_options(&program)
            } else {
                &GROUP_VALUE_OPTIONS[..]
            };
            if grouped && let Some(inner) = first_operand(rest, options) {
                sub.push(' ');
                sub.push_str(&rest[inner].to_lowercase());
            }
            sub
        });
        Command {
            program,
            subcommand,
            words,
        }
    }

    /// Does the command only ask the program about itself (`dotnet --info`, `node --version`,
    /// `dotnet --list-sdks`, `rake --help`)? Such a run looks around, whatever the program.
    pub fn only_asks(&self) -> bool {
        self.subcommand.is_none()
            && !self.words.is_empty()
            && (self.words.iter()).all(|w| ASKING_FLAGS.contains(w) || w.starts_with("--list-"))
    }

    /// Does this command correct one word of `failed`: the same program and words but one,
    /// spelled near the old one (`make tests` → `make test`, `/v1/` → `/v2/` in a URL), or the
    /// same file under another directory (`tests/unit/test_cart.py` → `tests/test_cart.py`)?
    pub fn corrects(&self, failed: &Command) -> bool {
        if self.program != failed.program || self.words.len() != failed.words.len() {
            return false;
        }
        let mut changed = (self.words.iter()).zip(&failed.words).filter(|(a, b)| a != b);
        match (changed.next(), changed.next()) {
            (Some((new, old)), None) => near_spelling(new, old) || same_file_elsewhere(new, old),
            _ => false,
        }
    }

    /// The words after the program.
    pub fn words(&self) -> &[&'a str] {
        &self.words
    }

    /// The words that name a file or directory (`SameFile` is a common one of these).
    pub fn files(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.words.iter().copied().filter(|t| file_like(t))
    }

    pub fn kinship(&self, other: &Command) -> Kinship {
        if !self.program.eq_ignore_ascii_case(&other.program) {
            return Kinship::OtherProgram;
        }
        if self.subcommand == other.subcommand {
            return Kinship::SameSubcommand;
        }
        if self.files().any(|t| other.words.contains(&t)) {
            return Kinship::SameFile;
        }
        Kinship::Unrelated
    }
}

/// Flags that make a program report on itself and do nothing else (`Command::only_asks`).
const ASKING_FLAGS: [&str; 6] = ["--version", "-V", "--help", "-h", "--info", "--list"];

/// Two words of four characters or more, at most two edits apart: a typo, a plural, a version.
fn near_spelling(a: &str, b: &str) -> bool {
    let long = |w: &str| w.chars().count() >= 4;
    long(a) && long(b) && crate::explain::edit_distance(a, b) <= 2
}

/// Two paths (they differ) to a file of one name: in different directories.
fn same_file_elsewhere(a: &str, b: &str) -> bool {
    file_like(a) && file_like(b) && !basename(a).is_empty() && basename(a) == basename(b)
}

fn file_like(t: &str) -> bool {
    !t.starts_with('-') && (t.contains('/') || t.contains('.'))
}

fn basename(token: &str) -> &str {
    token.rsplit('/').next().unwrap_or(token)
}

/// How many words the assignment starting with `token` takes: two when normalize put a
/// redaction marker in place of its secret value (`NPM_TOKEN=[redacted: npm-token]`), whose
/// pattern name is the next word; else one. The program run after it is still the call's.
fn assignment_words(token: &str) -> usize {
    1 + usize::from(token.ends_with(crate::normalize::MARKER_OPEN.trim_end()))
}

/// `NAME=value`, where NAME is a shell variable name.
fn is_assignment(token: &str) -> bool {
    let Some((name, _)) = token.split_once('=') else {
        return false;
    };
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Byte-for-byte `json.dumps(v, sort_keys=True)` (separators `", "`, `": "`, ASCII only).
pub fn python_json(v: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, v);
    out
}

fn write_value(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                out.push_str(&i.to_string());
            } else if let Some(u) = n.as_u64() {
                out.push_str(&u.to_string());
            } else if let Some(f) = n.as_f64() {
                out.push_str(&python_float(f));
            }
        }
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            // Python sorts str keys by code point, which is UTF-8 byte order.
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_string(out, k);
                out.push_str(": ");
                write_value(out, v);
            }
            out.push('}');
        }
    }
}

/// Python's `ensure_ascii` string encoding: everything outside `' '..='~'` is escaped, with
/// lower-case hex and surrogate pairs above the BMP.
fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
}

/// Python's `repr(float)`: the shortest round-trip digits, fixed notation when the decimal
/// exponent is in [-4, 16), scientific (`1e+16`, `1e-05`) otherwise, `.0` on whole numbers.
fn python_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    // Rust's `{:e}` gives the shortest round-trip digits: `-1.2345e-7`.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` has an exponent");
    let exp: i32 = exp.parse().expect("`{:e}` exponent is an integer");
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    // Python's decpt: the position of the decimal point relative to the digit string.
    let decpt = exp + 1;
    let n = digits.len() as i32;
    let body = if (-4 < decpt) && (decpt <= 16) {
        if decpt <= 0 {
            format!("0.{}{}", "0".repeat((-decpt) as usize), digits)
        } else if decpt >= n {
            format!("{}{}.0", digits, "0".repeat((decpt - n) as usize))
        } else {
            let (int, frac) = digits.split_at(decpt as usize);
            format!("{int}.{frac}")
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let mant = if rest.is_empty() {
            first.to_string()
        } else {
            format!("{first}.{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{mant}e{esign}{:02}", exp.abs())
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shell(cmd: &str) -> String {
        operation_key("run_shell_command", &json!({ "command": cmd }))
    }

    #[test]
    fn a_correction_changes_one_word_to_a_near_one() {
        let corrects = |new: &str, old: &str| Command::parse(new).corrects(&Command::parse(old));
        assert!(corrects("make test", "make tests"));
        assert!(corrects(
            "cd app && npx vitest run src/cart.test.ts",
            "npx vitest run src/cart.tset.ts"
        ));
        assert!(corrects(
            "pytest -q tests/test_cart.py",
            "pytest -q tests/unit/test_cart.py"
        ));
        assert!(corrects(
            "curl -s https://api.example.com/v2/users",
            "curl -s https://api.example.com/v1/users"
        ));
        // Unlike words, short ones, two words, another program, a word added.
        assert!(!corrects("cargo test", "cargo clippy"));
        assert!(!corrects("pytest -n 8", "pytest -n 4"));
        assert!(!corrects("make test lint", "make tests lints"));
        assert!(!corrects("pytest tests", "tox tests"));
        assert!(!corrects("make test V=1", "make tests"));
        assert!(!corrects("pytest tests/", "pytest src/"));
    }

    #[test]
    fn design_vectors() {
        assert_eq!(shell("pytest -q"), "run_shell_command pytest");
        assert_eq!(shell("/usr/local/bin/Pytest x"), "run_shell_command pytest");
        assert_eq!(shell("env A=b pytest -q"), "run_shell_command pytest");
        assert_eq!(
            shell("PYTHONPATH=. python3 -m pytest tests"),
            "run_shell_command pytest"
        );
        assert_eq!(shell("python -m"), "run_shell_command python");
        assert_eq!(shell("env"), "run_shell_command env");
        assert_eq!(
            operation_key("read_file", &json!({"file_path": "/a/b.py"})),
            "read_file /a/b.py"
        );
        assert_eq!(
            operation_key("find_files", &json!({"query": "x", "limit": 3})),
            r#"find_files {"limit": 3, "query": "x"}"#
        );
        assert_eq!(operation_key("list_windows", &Value::Null), "list_windows {}");
        assert_eq!(operation_key("list_windows", &json!({})), "list_windows {}");
    }

    #[test]
    fn programs() {
        assert_eq!(shell("python3.11 -m pytest -x"), "run_shell_command pytest");
        assert_eq!(shell("/usr/bin/env FOO=1 cargo test"), "run_shell_command cargo");
        assert_eq!(
            shell("  CI=1 RUST_LOG=debug  cargo   test "),
            "run_shell_command cargo"
        );
        assert_eq!(shell("python manage.py migrate"), "run_shell_command python");
        assert_eq!(shell("./node_modules/.bin/JEST --ci"), "run_shell_command jest");
        assert_eq!(shell("npm run build && npm test"), "run_shell_command npm");
        // Only a leading `env` is skipped; only shell-variable names count as assignments.
        assert_eq!(shell("A=b"), "run_shell_command a=b");
        assert_eq!(shell("--flag=x pytest"), "run_shell_command --flag=x");
        assert_eq!(program("   "), None);
    }

    #[test]
    fn command_fields_and_fall_through() {
        // `cmd` when `command` is blank.
        assert_eq!(
            operation_key("bash", &json!({"command": "  ", "cmd": "go test ./..."})),
            "bash go"
        );
        // A blank command falls through to the path-like fields, trimmed, case kept.
        assert_eq!(
            operation_key(
                "run_shell_command",
                &json!({"command": "", "path": "  /srv/App/main.py "})
            ),
            "run_shell_command /srv/App/main.py"
        );
        assert_eq!(
            operation_key("edit_file", &json!({"path": "b.py", "file_path": "a.py"})),
            "edit_file a.py"
        );
        assert_eq!(
            operation_key("activate_skill", &json!({"name": " ", "skill_name": "pdf"})),
            "activate_skill pdf"
        );
        assert_eq!(
            operation_key("web_fetch", &json!({"url": "https://docs.rs/regex"})),
            "web_fetch https://docs.rs/regex"
        );
        // A command that is neither a string nor an argv of strings is not a command.
        assert_eq!(
            operation_key("run", &json!({"command": 42, "cwd": "/repo"})),
            r#"run {"command": 42, "cwd": "/repo"}"#
        );
        assert_eq!(
            operation_key("run", &json!({"command": ["ls", 3], "cwd": "/repo"})),
            r#"run {"command": ["ls", 3], "cwd": "/repo"}"#
        );
        assert_eq!(
            operation_key("run", &json!({"command": [], "cmd": "make test"})),
            "run make"
        );
    }

    /// Codex CLI's `shell` tool records an argv array, its commands wrapped in `bash -lc`.
    #[test]
    fn codex_argv_commands() {
        let codex =
            |argv: Value| json!({"command": argv, "workdir": "/home/dev/ledger-api", "timeout_ms": 120000});
        let key = |argv: Value| operation_key("shell", &codex(argv));
        let run = |argv: Value| command_of(&codex(argv)).map(Cow::into_owned);
        // The shell wrapper is its script, borrowed.
        let args = codex(json!([
            "bash",
            "-lc",
            "PYTHONPATH=. python3 -m pytest -q tests/unit"
        ]));
        assert!(matches!(
            command_of(&args),
            Some(Cow::Borrowed("PYTHONPATH=. python3 -m pytest -q tests/unit"))
        ));
        assert_eq!(
            key(json!(["bash", "-lc", "pytest -q tests/unit"])),
            "shell pytest"
        );
        assert_eq!(
            key(json!(["/bin/zsh", "-lic", "cargo test --locked"])),
            "shell cargo"
        );
        assert_eq!(key(json!(["sh", "-c", "go test ./..."])), "shell go");
        assert_eq!(key(json!(["dash", "-e", "-c", "make -C build"])), "shell make");
        assert_eq!(
            key(json!(["bash", "--noprofile", "--norc", "-c", "npm ci"])),
            "shell npm"
        );
        // Any other argv is its words joined, quoted as `shlex.join` quotes them.
        assert_eq!(key(json!(["pytest", "-q", "tests/unit"])), "shell pytest");
        assert_eq!(
            run(json!(["pytest", "-q", "tests/unit"])).as_deref(),
            Some("pytest -q tests/unit")
        );
        assert_eq!(
            run(json!(["git", "commit", "-m", "fix: don't round twice"])).as_deref(),
            Some(r#"git commit -m 'fix: don'"'"'t round twice'"#)
        );
        assert_eq!(
            run(json!(["rg", "-n", "", "*.py", "a_b@c%d+e=f:g,h./-"])).as_deref(),
            Some("rg -n '' '*.py' a_b@c%d+e=f:g,h./-")
        );
        assert_eq!(
            key(json!(["/usr/bin/env", "RUST_LOG=debug", "cargo", "run"])),
            "shell cargo"
        );
        assert_eq!(
            key(json!(["python3", "-m", "pip", "install", "-e", "."])),
            "shell pip"
        );
        // Not a shell wrapper: the words are the command.
        assert_eq!(run(json!(["bash", "-lc"])).as_deref(), Some("bash -lc"));
        assert_eq!(
            run(json!(["bash", "deploy.sh"])).as_deref(),
            Some("bash deploy.sh")
        );
        assert_eq!(
            run(json!(["bash", "-o", "pipefail", "-c", "make | tee log"])).as_deref(),
            Some("bash -o pipefail -c 'make | tee log'")
        );
        assert_eq!(
            run(json!(["fish", "-c", "make"])).as_deref(),
            Some("fish -c make")
        );
        // A blank script or argv is no command: the key falls through as for a blank string.
        assert_eq!(run(json!(["bash", "-lc", "  "])), None);
        assert_eq!(run(json!(["", " "])), None);
        assert_eq!(
            operation_key("shell", &json!({"command": ["bash", "-lc", ""], "path": "/repo"})),
            "shell /repo"
        );
        // The two spellings of one command are one key and relate as commands do.
        let string = json!({"command": "pytest -q tests/unit", "workdir": "/repo"});
        let argv = json!({"command": ["bash", "-lc", "pytest -q tests/unit"], "workdir": "/repo/sub"});
        assert_eq!(operation_key("shell", &string), operation_key("shell", &argv));
        assert_eq!(command_of(&string), command_of(&argv));
        let apply = json!({"command": ["kubectl", "apply", "-f", "deploy.yaml"]});
        let joined = command_of(&apply).unwrap();
        assert_eq!(
            kinship(&joined, "kubectl create -f deploy.yaml"),
            Kinship::SameFile
        );
    }

    #[test]
    fn python_json_objects() {
        let v = json!({"b": {"z": [1, 2.5, null, true], "a": false}, "a": "x"});
        assert_eq!(
            python_json(&v),
            r#"{"a": "x", "b": {"a": false, "z": [1, 2.5, null, true]}}"#
        );
        assert_eq!(python_json(&json!([])), "[]");
        assert_eq!(python_json(&json!({})), "{}");
        assert_eq!(
            operation_key("grep", &json!({"pattern": "fn main", "opts": {"i": true}})),
            r#"grep {"opts": {"i": true}, "pattern": "fn main"}"#
        );
        // Code-point order: upper case before lower case, ASCII before non-ASCII.
        assert_eq!(
            python_json(&json!({"é": 1, "b": 2, "B": 3})),
            r#"{"B": 3, "b": 2, "\u00e9": 1}"#
        );
    }

    #[test]
    fn python_json_strings() {
        assert_eq!(python_json(&json!("café")), r#""caf\u00e9""#);
        assert_eq!(python_json(&json!("日本")), r#""\u65e5\u672c""#);
        assert_eq!(python_json(&json!("😀")), r#""\ud83d\ude00""#);
        assert_eq!(
            python_json(&json!("a\"b\\c\nd\re\tf\u{8}g\u{c}h")),
            r#""a\"b\\c\nd\re\tf\bg\fh""#
        );
        assert_eq!(
            python_json(&json!("\u{1}\u{1f}\u{7f}/")),
            r#""\u0001\u001f\u007f/""#
        );
        assert_eq!(
            operation_key("search", &json!({"query": "naïve"})),
            r#"search {"query": "na\u00efve"}"#
        );
    }

    #[test]
    fn python_json_numbers() {
        let cases = [
            (json!(1), "1"),
            (json!(-7), "-7"),
            (json!(u64::MAX), "18446744073709551615"),
            (json!(1.0), "1.0"),
            (json!(0.5), "0.5"),
            (json!(-0.0), "-0.0"),
            (json!(0.1), "0.1"),
            (json!(1e20), "1e+20"),
            (json!(1e16), "1e+16"),
            (json!(1e15), "1000000000000000.0"),
            (json!(123456789.125), "123456789.125"),
            (json!(1e-7), "1e-07"),
            (json!(0.0001), "0.0001"),
            (json!(0.00001), "1e-05"),
            (json!(1.5e300), "1.5e+300"),
            (json!(2.5e-300), "2.5e-300"),
            (json!(1.0 / 3.0), "0.3333333333333333"),
        ];
        for (v, want) in cases {
            assert_eq!(python_json(&v), want, "{v:?}");
        }
    }

    /// Wrappers are looked through for how two calls relate, never for the key.
    #[test]
    fn a_command_groups_subcommands_are_told_apart() {
        assert_eq!(
            kinship("docker compose up", "docker compose down -v"),
            Kinship::Unrelated
        );
        assert_eq!(
            kinship("docker compose up", "docker compose up -d"),
            Kinship::SameSubcommand
        );
        assert_eq!(
            kinship(
                "kubectl rollout status deploy/api",
                "kubectl rollout restart deploy/api"
            ),
            Kinship::SameFile
        );
        assert_eq!(kinship("git stash pop", "git stash drop"), Kinship::Unrelated);
        assert_eq!(
            kinship("go mod tidy", "go mod tidy -compat=1.21"),
            Kinship::SameSubcommand
        );
        assert_eq!(
            kinship("gh pr create --fill", "gh pr merge --squash"),
            Kinship::Unrelated
        );
        // Not a group: the subcommand is one word.
        assert_eq!(
            kinship("docker build .", "docker build --no-cache ."),
            Kinship::SameSubcommand
        );
        assert_eq!(
            Command::parse("docker compose -f ci.yml up --build")
                .subcommand
                .as_deref(),
            Some("compose up")
        );
    }

    /// A cloud CLI's command is a service and an operation, after global options that may
    /// come first: a profile or project is never the command.
    #[test]
    fn cloud_cli_commands_are_a_service_and_an_operation() {
        let sub = |c: &str| Command::parse(c).subcommand;
        assert_eq!(
            sub("aws --profile dev s3 sync build/ s3://docs/").as_deref(),
            Some("s3 sync")
        );
        assert_eq!(
            sub("aws --output table sts get-caller-identity").as_deref(),
            Some("sts get-caller-identity")
        );
        assert_eq!(
            sub("gcloud --project nw-data sql import csv warehouse").as_deref(),
            Some("sql import")
        );
        assert_eq!(
            sub("az --subscription prod account show").as_deref(),
            Some("account show")
        );
        assert_eq!(
            kinship(
                "aws --profile dev s3 sync build/ s3://docs/",
                "aws --profile dev sts get-caller-identity"
            ),
            Kinship::Unrelated
        );
        assert_eq!(
            kinship(
                "aws --profile dev s3 sync build/ s3://docs/",
                "aws s3 sync build/ s3://docs/ --profile deploy"
            ),
            Kinship::SameSubcommand
        );
    }

    /// A runner's own options before its subcommand (`npm -w PKG run SCRIPT`) are skipped,
    /// so the script is still what runs; a program asked only about itself is told apart.
    #[test]
    fn runner_options_come_before_the_script() {
        assert_eq!(
            kinship("npm run build", "npm -w @acme/ui run build"),
            Kinship::SameSubcommand
        );
        assert_eq!(program_run("pnpm --filter web exec tsc --noEmit").0, "tsc");
        assert!(Command::parse("dotnet --info").only_asks());
        assert!(Command::parse("node --version").only_asks());
        assert!(!Command::parse("dotnet build --no-restore").only_asks());
        assert!(!Command::parse("cargo -V build").only_asks());
    }

    #[test]
    fn kinship_looks_inside_wrappers() {
        let inside = |c: &str| {
            let (p, _, sub) = program_run(c);
            (p, sub.map(String::from))
        };
        let want = |p: &str, sub: Option<&str>| (p.to_string(), sub.map(String::from));
        assert_eq!(inside("cd web && CI=1 npm test"), want("npm", Some("test")));
        // A global option's value is not the subcommand.
        assert_eq!(inside("git -C web pull --rebase"), want("git", Some("pull")));
        assert_eq!(inside("kubectl -n prod get pods"), want("kubectl", Some("get")));
        assert_eq!(inside("make -C build test"), want("make", Some("test")));
        assert_eq!(inside("git --no-pager log -5"), want("git", Some("log")));
        assert_eq!(
            inside("bash -lc \"cargo clippy -- -D warnings\""),
            want("cargo", Some("clippy"))
        );
        assert_eq!(
            inside("sudo -u postgres psql -c 'select 1'"),
            want("psql", Some("select"))
        );
        assert_eq!(
            inside("timeout -s KILL 60 pytest tests"),
            want("pytest", Some("tests"))
        );
        assert_eq!(
            inside("uv run --with pandas python -m pytest -q"),
            want("pytest", None)
        );
        assert_eq!(inside("conda run -n ledger pytest"), want("pytest", None));
        assert_eq!(inside("npx -y jest src/cart"), want("jest", Some("src/cart")));
        assert_eq!(inside("npm run build"), want("build", None));
        assert_eq!(inside("cd build"), want("cd", Some("build")));
        assert_eq!(inside("sudo"), want("sudo", None));
        assert_eq!(inside("uv pip install -e ."), want("uv", Some("pip")));
        assert_eq!(
            kinship("uv run pytest -q", "uv run ruff check ."),
            Kinship::OtherProgram
        );
        assert_eq!(
            kinship("uv run pytest -q", "uv run pytest -q -x"),
            Kinship::SameSubcommand
        );
        assert_eq!(
            kinship("npx jest src/cart", "npx eslint src/cart"),
            Kinship::OtherProgram
        );
        assert_eq!(
            kinship("cd a && npm ci", "cd b && npm ci"),
            Kinship::SameSubcommand
        );
        assert_eq!(kinship("cargo clippy", "cargo test"), Kinship::Unrelated);
        // Two subcommands in one namespace are two subcommands, not one namespace.
        assert_eq!(
            kinship("kubectl -n prod get pods", "kubectl -n prod delete pods"),
            Kinship::Unrelated
        );
        assert_eq!(
            kinship("git -C web push", "git -C web push --force-with-lease"),
            Kinship::SameSubcommand
        );
        // The key stays the wrapper (DESIGN §3.3).
        assert_eq!(
            operation_key("Bash", &json!({"command": "uv run pytest -q"})),
            "Bash uv"
        );
    }
}
