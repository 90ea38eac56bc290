//! `skillc gen`: a deterministic, realistic synthetic corpus (own PRNG, so stable).
//!
//! `generate(n, seed, out)` writes `n` native JSONL experience records (DESIGN §3.1). The same
//! `n` and `seed` give a byte-identical file on every platform and thread count: the only source
//! of randomness is a xoshiro256** generator seeded through SplitMix64, every distribution uses
//! integer arithmetic (no floating point, no hash-map order), and writing is single-threaded
//! into a reused buffer that is flushed to `out` in 1 MiB chunks.
//!
//! # Distributions
//!
//! * **Domains**: 142 names, real ones first (python, typescript, javascript, rust, go, java,
//!   docker, kubernetes, git, postgres, terraform, react, …) then a long tail (grpc, redis, kafka,
//!   airflow, …). Domain rank `r` has Zipf weight `1 / (r + 1)`. A record has one domain (70%),
//!   two (25%) or three (5%); about 90% come from its project's stack, 10% are drawn fresh.
//!   Around 2% of python / typescript / kubernetes tags are written as aliases (`py`, `TS`,
//!   `k8s`); 30% of single-domain records write `domains` as a string instead of a list.
//! * **Projects**: 1 500 remote URLs (`git@github.com:org/repo.git`, `https://…`, GitLab,
//!   Bitbucket, a self-hosted host) and local roots, unique by construction. 85% of records draw
//!   the project from a Zipf weight `1 / (r + 5)`, 15% uniformly; 3% of records name no project.
//!   Each project has a stack of 1–3 Zipf-drawn domains and a root (`/workspace` for 30%, so
//!   sandboxed agents share working directories across projects, as real ones do).
//! * **Time**: from 2025-03-01T00:00:00Z over 365 days, monotonic in file order, uniform gaps.
//!   85% of stamps are `Z`; the rest carry offsets (+02:00, -05:00, +05:30, +09:00); 10% have
//!   milliseconds.
//! * **Outcome**: succeeded 60%, pivoted 14%, abandoned 13%, failed 13%. `effort` 1–5 on 85%.
//! * **Lesson** (45% of records): 65% from paraphrase families (24 generic families whose slots —
//!   the domain's test command, build command, manifest, main dependency, config file — are
//!   fixed per domain, plus 1–4 hand-written families for each of the 13 most common domains;
//!   every family has 3 wordings), so the same rule recurs in different words across projects;
//!   35% are specific one-off rules (module × function × condition), which mostly stay single.
//! * **Breakthrough** (30%): incident stories (file names, PR numbers, commit hashes, numbers),
//!   which the narrative gate holds back when no lesson is present.
//! * **Gotchas** (30%, one or two): 55% from 10 families of wordings, 45% specific.
//! * **Typography**: in 30% of the lessons, breakthroughs and gotchas that have a "; ", the
//!   first is written as an em dash (" — "), as model-written text often is (about 13% of all
//!   texts): non-ASCII text takes other paths through the regex engine than ASCII text.
//! * **Dead ends**: 35% of unsuccessful records, 8% of successful ones; 12 recurring names (with
//!   the domain's dependency or module filled in) and 8 reasons.
//! * **Operations** (75% of records have some; about 1.9 per record overall): `read_file` (70%),
//!   `edit_file` (60%), `git grep` (15%), a doc `web_fetch` (8%) and the domain's test command
//!   with a `tests` check (60%), which passes in 97% of successes (the other 3% are successes
//!   their own checks contradict) and 40% of other outcomes; 6% of passing runs are followed by
//!   an edit that is never re-run (a stale check). 7% carry a failed-then-fixed pair on one
//!   operation key (a flag added, a different form, or the same command moved from `tests/` to
//!   the project root); 3% a transient failure (timeout, 429, connection reset, temporarily
//!   unavailable, cancelled) retried identically; 1% a refused operation.
//! * **Blessed**: 1%. **in_play**: 30% of records name 1–3 lessons a compile had live for them
//!   (below); 3% also list 1–3 random ids `L` + 12 hex, which rarely resolve — unresolved
//!   references are a warning, and real agents copy stale ids too.
//!
//!   The lessons are real ones: the records are generated, compiled in memory (built-in rules, up
//!   to the score stage), and each chosen record lists lessons that compile had active in one of
//!   its domains, globally or in its project, at its time, from the five most recently admitted
//!   per (domain, scope) — what a plan-time block would have shown the agent. Listing them
//!   changes what the compile attributes (confirmed lessons stop decaying, so some later lessons
//!   never form), so the records are compiled once more and references that no longer name a
//!   lesson are dropped. A compile of the corpus therefore confirms and contradicts lessons at
//!   scale. Generating costs about three times a compile of the same size (two compiles and
//!   three writes: ~37 s and 4.4 GB at a million records).
//! * **Bad records**: 0.2% — a third each: a malformed line (the JSON cut off), a record
//!   missing `outcome` or `recorded_at`, an unknown outcome (`done`, `success`, `completed`).
//!
//! Ids are `g` + 6 hex of the seed + `-` + the record's index (8 digits), unique in one corpus
//! and across corpora generated with different seeds.

use std::fmt::Write as _;
use std::io::{self, Write};

/// Writes `experiences` records generated from `seed` to `out` as JSONL.
pub fn generate(experiences: usize, seed: u64, out: &mut dyn Write) -> io::Result<()> {
    let plan = in_play_plan(experiences, seed);
    write_records(experiences, seed, &plan, out)
}

/// The records, each listing in `in_play` its random ids and the lessons `plan` gives it.
fn write_records(experiences: usize, seed: u64, plan: &[Vec<String>], out: &mut dyn Write) -> io::Result<()> {
    let mut g = Generator::new(seed, experiences);
    let mut buf: Vec<u8> = Vec::with_capacity(FLUSH_AT + 64 * 1024);
    for i in 0..experiences {
        let planned = plan.get(i).map_or(&[][..], Vec::as_slice);
        g.record(i, planned, &mut buf);
        if buf.len() >= FLUSH_AT {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)?;
    out.flush()
}

const FLUSH_AT: usize = 1 << 20;

/// Per mille of records that list lessons a compile had active for them.
const IN_PLAY_PER_MILLE: usize = 300;
/// Lessons a plan-time block shows per (domain, scope), and the most a record lists.
const BLOCK_LINES: usize = 5;
const MOST_IN_PLAY: usize = 3;
/// How far back through a (domain, scope)'s admissions the plan looks for live lessons.
const WALK_BACK: usize = 256;

/// Which lessons each record had in play, by record index: what an agent served by skillc's
/// plan-time blocks would list. The records are generated without them and compiled once (with
/// the built-in rules, up to the score stage); a share of records then name 1–3 of the lessons
/// that compile had active in one of their domains, globally or in their project, at their
/// time — from the five most recently admitted, as a block would show. Listing them changes
/// what the compile attributes (confirmed lessons stop decaying, so some later lessons never
/// form), so the records are compiled once more with the plan and the references that no longer
/// name a lesson are dropped: an agent is only ever shown lessons that exist, and a reference
/// that names none changes nothing but a diagnostic.
fn in_play_plan(experiences: usize, seed: u64) -> Vec<Vec<String>> {
    let mut plan = {
        let comp = compiled(experiences, seed, &[]);
        plan_from(&comp, experiences, seed)
    };
    let comp = compiled(experiences, seed, &plan);
    let known: std::collections::HashSet<&str> = comp.lessons.iter().map(|l| l.id.as_str()).collect();
    for ids in &mut plan {
        ids.retain(|id| known.contains(id.as_str()));
    }
    plan
}

/// The records with `plan`'s references, compiled up to the score stage with the built-in rules.
fn compiled(experiences: usize, seed: u64, plan: &[Vec<String>]) -> crate::pipeline::Compilation {
    use crate::pipeline::{Options, Stage, compile};
    let mut text = Vec::new();
    write_records(experiences, seed, plan, &mut text).expect("writing to memory");
    let text = String::from_utf8(text).expect("the generator writes UTF-8");
    let mut sink = crate::diagnostics::Sink::new();
    let rules = crate::policy::Rules::builtin();
    let files = [("gen.jsonl", text.as_str())];
    let corpus = crate::load::load_texts_with_rules(&files, &Default::default(), &rules, &mut sink);
    drop(text);
    let opts = Options {
        stop_after: Some(Stage::Score),
        ..Default::default()
    };
    compile(corpus, sink, &rules, &opts)
}

/// Picks each record's references from the lessons `comp` had live at its time.
fn plan_from(comp: &crate::pipeline::Compilation, experiences: usize, seed: u64) -> Vec<Vec<String>> {
    // Each (domain, scope)'s lessons as (admitted, until, id), by admission time.
    type Window<'a> = (i64, i64, &'a str);
    let mut windows: std::collections::HashMap<(&str, &str), Vec<Window>> = Default::default();
    for l in &comp.lessons {
        let until = (l.history.iter())
            .find(|h| {
                matches!(
                    h.event,
                    crate::model::Event::Superseded | crate::model::Event::Retired
                )
            })
            .map_or(i64::MAX, |h| h.at);
        let w = windows.entry((&l.domain, &l.scope)).or_default();
        w.push((l.admitted_at, until, &l.id));
    }
    windows.values_mut().for_each(|w| w.sort_unstable());

    let mut rng = Rng::new(seed ^ 0x1_0000_0000_1ABE);
    let mut plan = vec![Vec::new(); experiences];
    let mut shown: Vec<&str> = Vec::new();
    for e in &comp.corpus.experiences {
        let Some(index) = e.id.rsplit('-').next().and_then(|i| i.parse::<usize>().ok()) else {
            continue;
        };
        if index >= experiences || !rng.chance(IN_PLAY_PER_MILLE) {
            continue;
        }
        let project = e.project.as_ref().map(|p| format!("project:{p}"));
        shown.clear();
        for domain in &e.domains {
            for scope in std::iter::once("global").chain(project.as_deref()) {
                let Some(w) = windows.get(&(domain.as_str(), scope)) else {
                    continue;
                };
                let before = w.partition_point(|&(admitted, _, _)| admitted < e.recorded_at);
                // Bounded: a busy domain's list is mostly lessons superseded long ago.
                let recent = w[..before].iter().rev().take(WALK_BACK);
                let live = recent.filter(|&&(_, until, _)| until > e.recorded_at);
                shown.extend(live.take(BLOCK_LINES).map(|&(_, _, id)| id));
            }
        }
        shown.sort_unstable();
        shown.dedup();
        let n = shown.len().min(1 + rng.below(MOST_IN_PLAY));
        for _ in 0..n {
            let id = shown.swap_remove(rng.below(shown.len()));
            plan[index].push(id.to_string());
        }
    }
    plan
}

// ------------------------------------------------------------------------------------ PRNG

/// xoshiro256** seeded through SplitMix64.
struct Rng {
    s: [u64; 4],
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    fn new(seed: u64) -> Rng {
        let mut sm = seed;
        Rng {
            s: [
                splitmix(&mut sm),
                splitmix(&mut sm),
                splitmix(&mut sm),
                splitmix(&mut sm),
            ],
        }
    }

    fn next(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `0..n` (multiply-shift; the bias is below 2^-40 for our `n`).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }

    /// True with probability `per_mille / 1000`.
    fn chance(&mut self, per_mille: usize) -> bool {
        self.below(1000) < per_mille
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }

    /// Index into `weights` (per mille, summing to 1000).
    fn weighted(&mut self, weights: &[usize]) -> usize {
        let mut x = self.below(1000);
        for (i, &w) in weights.iter().enumerate() {
            if x < w {
                return i;
            }
            x -= w;
        }
        weights.len() - 1
    }
}

/// Zipf-like sampling with integer weights `SCALE / (rank + q)`.
struct Zipf {
    cdf: Vec<u64>,
}

impl Zipf {
    fn new(n: usize, q: u64) -> Zipf {
        const SCALE: u64 = 1 << 40;
        let mut acc = 0u64;
        let cdf = (0..n as u64)
            .map(|r| {
                acc += SCALE / (r + q);
                acc
            })
            .collect();
        Zipf { cdf }
    }

    fn sample(&self, rng: &mut Rng) -> usize {
        let total = *self.cdf.last().unwrap_or(&1);
        let x = ((u128::from(rng.next()) * u128::from(total)) >> 64) as u64;
        self.cdf.partition_point(|&c| c <= x)
    }
}

// ------------------------------------------------------------------------------- vocabulary

const DOMAINS: &[&str] = &[
    "python",
    "typescript",
    "javascript",
    "rust",
    "go",
    "java",
    "docker",
    "kubernetes",
    "git",
    "postgres",
    "terraform",
    "react",
    "bash",
    "aws",
    "github-actions",
    "node-js",
    "css",
    "kotlin",
    "swift",
    "csharp",
    "cpp",
    "ruby",
    "php",
    "mysql",
    "sqlite",
    "redis",
    "kafka",
    "grpc",
    "graphql",
    "nginx",
    "ansible",
    "helm",
    "vue",
    "angular",
    "svelte",
    "nextjs",
    "django",
    "flask",
    "fastapi",
    "rails",
    "spring",
    "express",
    "webpack",
    "vite",
    "jest",
    "pytest",
    "pandas",
    "numpy",
    "pytorch",
    "tensorflow",
    "airflow",
    "spark",
    "dbt",
    "snowflake",
    "bigquery",
    "elasticsearch",
    "mongodb",
    "dynamodb",
    "cassandra",
    "rabbitmq",
    "celery",
    "prometheus",
    "grafana",
    "opentelemetry",
    "linux",
    "systemd",
    "make",
    "cmake",
    "bazel",
    "gradle",
    "maven",
    "npm",
    "pnpm",
    "poetry",
    "cargo",
    "wasm",
    "electron",
    "react-native",
    "flutter",
    "ios",
    "android",
    "scala",
    "elixir",
    "haskell",
    "clojure",
    "openapi",
    "oauth",
    "jwt",
    "tls",
    "ssh",
    "nix",
    "gcp",
    "azure",
    "aws-lambda",
    "cloudflare",
    "vercel",
    "sentry",
    "datadog",
    "vault",
    "consul",
    "istio",
    "envoy",
    "argo-cd",
    "flux",
    "pulumi",
    "packer",
    "selenium",
    "playwright",
    "cypress",
    "storybook",
    "tailwind",
    "sass",
    "llm",
    "langchain",
    "protobuf",
    "avro",
    "parquet",
    "duckdb",
    "clickhouse",
    "timescaledb",
    "supabase",
    "firebase",
    "stripe",
    "twilio",
    "sendgrid",
    "s3",
    "cloudfront",
    "route53",
    "iam",
    "eks",
    "gke",
    "lambda-layers",
    "powershell",
    "zsh",
    "tmux",
    "neovim",
    "vscode",
    "jupyter",
    "mlflow",
    "ray",
    "dask",
    "polars",
];

/// What a domain's operations and lessons talk about.
struct Vocab {
    test: String,
    build: String,
    manifest: String,
    dep: String,
    config: String,
    ext: &'static str,
    mechs: &'static [Mech],
}

/// A failed-then-fixed pair: `fail` errors with `error`; `fix` works. An empty `fix` means the
/// same command works from the project root after failing in `tests/`.
struct Mech {
    fail: &'static str,
    error: &'static str,
    fix: &'static str,
}

const M_PYTHON: &[Mech] = &[
    Mech {
        fail: "pytest -q",
        error: "ImportError while importing test module. ModuleNotFoundError: No module named 'app'",
        fix: "",
    },
    Mech {
        fail: "pip install -r requirements.txt",
        error: "error: externally-managed-environment",
        fix: ".venv/bin/pip install -r requirements.txt",
    },
    Mech {
        fail: "mypy src",
        error: "error: Library stubs not installed for \"requests\"",
        fix: "mypy --install-types --non-interactive src",
    },
];
const M_TS: &[Mech] = &[
    Mech {
        fail: "npx tsc --noEmit",
        error: "error TS5083: Cannot read file 'tsconfig.base.json'.",
        fix: "npx tsc -p tsconfig.app.json --noEmit",
    },
    Mech {
        fail: "npm ci",
        error: "npm ERR! `npm ci` can only install packages when your package.json and package-lock.json are in sync",
        fix: "npm install --no-audit",
    },
];
const M_JS: &[Mech] = &[Mech {
    fail: "npm run build",
    error: "Error: Cannot find module 'webpack-cli'",
    fix: "npx webpack --mode production",
}];
const M_RUST: &[Mech] = &[
    Mech {
        fail: "cargo build",
        error: "error: package `tokio v1.44.1` cannot be built because it requires rustc 1.80 or newer",
        fix: "cargo build --locked",
    },
    Mech {
        fail: "cargo test",
        error: "error[E0432]: unresolved import `proptest`",
        fix: "cargo test --all-features",
    },
];
const M_GO: &[Mech] = &[
    Mech {
        fail: "go test ./...",
        error: "build constraints exclude all Go files in ./internal/integration",
        fix: "go test -tags integration ./...",
    },
    Mech {
        fail: "go vet ./...",
        error: "go: cannot find main module, but found go.work in a parent directory",
        fix: "",
    },
];
const M_JAVA: &[Mech] = &[Mech {
    fail: "mvn test",
    error: "[ERROR] Source option 8 is no longer supported. Use 11 or later.",
    fix: "mvn test -Dmaven.compiler.release=17",
}];
const M_DOCKER: &[Mech] = &[Mech {
    fail: "docker build -t app:dev .",
    error: "ERROR: failed to solve: failed to read dockerfile: open Dockerfile: no such file or directory",
    fix: "docker build -t app:dev -f docker/Dockerfile .",
}];
const M_K8S: &[Mech] = &[Mech {
    fail: "kubectl apply -f deploy/overlays/staging",
    error: "error: unable to recognize \"deploy/overlays/staging/kustomization.yaml\": no matches for kind \"Kustomization\"",
    fix: "kubectl apply -k deploy/overlays/staging",
}];
const M_GIT: &[Mech] = &[Mech {
    fail: "git push origin HEAD",
    error: "! [rejected] HEAD -> feature (non-fast-forward)",
    fix: "git push --force-with-lease origin HEAD",
}];
const M_PG: &[Mech] = &[Mech {
    fail: "psql -d app_test -c '\\dt'",
    error: "psql: error: connection to server on socket \"/var/run/postgresql/.s.PGSQL.5432\" failed: No such file or directory",
    fix: "psql -h localhost -U app -d app_test -c '\\dt'",
}];
const M_TF: &[Mech] = &[Mech {
    fail: "terraform plan",
    error: "Error: Inconsistent dependency lock file",
    fix: "terraform plan -lock=false -refresh=false",
}];
const M_GENERIC: &[Mech] = &[Mech {
    fail: "make test",
    error: "make: *** No rule to make target 'test'.  Stop.",
    fix: "",
}];

fn vocab(domain: &str, index: usize) -> Vocab {
    let v = |test: &str,
             build: &str,
             manifest: &str,
             dep: &str,
             config: &str,
             ext: &'static str,
             mechs: &'static [Mech]| Vocab {
        test: test.to_string(),
        build: build.to_string(),
        manifest: manifest.to_string(),
        dep: dep.to_string(),
        config: config.to_string(),
        ext,
        mechs,
    };
    match domain {
        "python" => v(
            "pytest -q",
            "pip install -e .",
            "requirements.txt",
            "requests",
            "pyproject.toml",
            "py",
            M_PYTHON,
        ),
        "typescript" => v(
            "npm test",
            "npx tsc --noEmit",
            "package.json",
            "axios",
            "tsconfig.json",
            "ts",
            M_TS,
        ),
        "javascript" | "node-js" => v(
            "npm test",
            "npm run build",
            "package.json",
            "lodash",
            ".eslintrc.json",
            "js",
            M_JS,
        ),
        "rust" => v(
            "cargo test",
            "cargo build",
            "Cargo.toml",
            "serde",
            ".cargo/config.toml",
            "rs",
            M_RUST,
        ),
        "go" => v(
            "go test ./...",
            "go build ./...",
            "go.mod",
            "pgx",
            "config.yaml",
            "go",
            M_GO,
        ),
        "java" => v(
            "mvn test",
            "mvn package",
            "pom.xml",
            "jackson-databind",
            "application.yml",
            "java",
            M_JAVA,
        ),
        "docker" => v(
            "docker compose run --rm app make test",
            "docker build -t app:dev .",
            "Dockerfile",
            "the base image",
            "docker-compose.yml",
            "sh",
            M_DOCKER,
        ),
        "kubernetes" => v(
            "kubectl apply --dry-run=server -k deploy/overlays/staging",
            "kubectl apply -k deploy/overlays/staging",
            "kustomization.yaml",
            "the ingress controller",
            "values.yaml",
            "yaml",
            M_K8S,
        ),
        "git" => v(
            "git diff --check",
            "git rebase origin/main",
            ".gitattributes",
            "the pre-commit hooks",
            ".gitconfig",
            "md",
            M_GIT,
        ),
        "postgres" => v(
            "psql -v ON_ERROR_STOP=1 -f migrations/check.sql",
            "psql -v ON_ERROR_STOP=1 -f migrations/latest.sql",
            "the migrations folder",
            "pgbouncer",
            "postgresql.conf",
            "sql",
            M_PG,
        ),
        "terraform" => v(
            "terraform validate",
            "terraform plan",
            ".terraform.lock.hcl",
            "the aws provider",
            "terraform.tfvars",
            "tf",
            M_TF,
        ),
        "react" => v(
            "npm test",
            "npx vite build",
            "package.json",
            "react-query",
            "vite.config.ts",
            "tsx",
            M_TS,
        ),
        d => {
            const EXTS: &[&str] = &["py", "ts", "go", "rs", "java", "yaml", "sh", "rb"];
            Vocab {
                test: "make test".to_string(),
                build: "make build".to_string(),
                manifest: "the lockfile".to_string(),
                dep: format!("the {d} client"),
                config: format!("config/{d}.yaml"),
                ext: EXTS[index % EXTS.len()],
                mechs: M_GENERIC,
            }
        }
    }
}

/// Families of paraphrases: each inner slice is one rule in three wordings.
const GENERIC_LESSONS: &[&[&str]] = &[
    &[
        "Pin {dep} to an exact version in {manifest}; floating ranges let upgrades break the build.",
        "Always pin {dep} exactly in {manifest} so upgrades of it happen on purpose, not by accident.",
        "Lock {dep} to a fixed version in {manifest} instead of a version range, or an upgrade breaks the build.",
    ],
    &[
        "Run {test} locally before pushing; CI takes far longer to report the same failure.",
        "Always run {test} before every push, because CI is much slower at reporting the same failure.",
        "Before pushing, run {test} locally instead of waiting on CI to report the same failure.",
    ],
    &[
        "Read {config} before changing {d} settings in code; values there override the code defaults.",
        "Check {config} first when {d} ignores a setting, since it overrides the defaults in code.",
        "When a {d} setting seems ignored, look in {config}: it overrides the code defaults.",
    ],
    &[
        "Write a failing test that reproduces a {d} bug before changing any code to fix it.",
        "Reproduce the {d} bug in a failing test first, then fix it, so the fix is proven.",
        "Always start a {d} bug fix with a test that fails for the reported reason.",
    ],
    &[
        "Set an explicit timeout on every call through {dep}; the default waits forever.",
        "Give each {dep} call an explicit timeout, because by default it never gives up.",
        "Never rely on the default timeout of {dep}: it waits forever, so set one on every call.",
    ],
    &[
        "Make {d} jobs idempotent before adding retries, otherwise a retry duplicates the work.",
        "Only add retries to a {d} job once it is idempotent; retrying a non-idempotent job duplicates work.",
        "Retries on {d} jobs need idempotency first, or each retry repeats side effects.",
    ],
    &[
        "Read credentials for {dep} from the environment, never from a file committed to the repo.",
        "Keep {dep} credentials in environment variables rather than in a committed config file.",
        "Never commit credentials for {dep}; load them from the environment at startup.",
    ],
    &[
        "When {build} fails right after a dependency bump, clear the build cache before debugging further.",
        "After a dependency bump breaks {build}, clear the build cache first; stale artifacts are the usual cause.",
        "If {build} breaks after bumping dependencies, wipe the build cache before digging deeper.",
    ],
    &[
        "Commit {manifest} changes together with the code that needs them, never in a separate PR.",
        "Keep {manifest} changes in the same commit as the code that depends on them.",
        "Changes to {manifest} belong in the same commit as the code that requires them.",
    ],
    &[
        "Ship risky {d} changes behind a feature flag so they can be switched off without a deploy.",
        "Put risky {d} changes behind a feature flag; turning a flag off is faster than a rollback.",
        "Guard risky {d} changes with a feature flag so they can be disabled without redeploying.",
    ],
    &[
        "Check the installed version of {dep} before trusting its docs; the API changed between majors.",
        "Confirm which major version of {dep} is installed before following its documentation.",
        "Docs for {dep} differ between major versions, so check the installed version first.",
    ],
    &[
        "Validate inputs at the {d} boundary and fail fast with a clear message.",
        "Fail fast at the {d} boundary: validate inputs there and say clearly what is wrong.",
        "Validate every input where it enters the {d} code and reject bad ones with a clear error.",
    ],
    &[
        "Profile {d} code before optimising it; the slow part is rarely where you expect.",
        "Measure with a profiler before optimising any {d} code, because the hot spot is rarely the obvious one.",
        "Always profile first when {d} code is slow; guessing the hot spot is usually wrong.",
    ],
    &[
        "Give each parallel test its own temporary directory; shared files make {test} flaky.",
        "Tests that run in parallel under {test} need separate temporary directories, or they become flaky.",
        "Isolate temporary files per test so {test} stays stable when tests run in parallel.",
    ],
    &[
        "Read the first error {build} prints, not the last; later errors are usually fallout.",
        "Fix the first error from {build} first, since the later ones are mostly consequences of it.",
        "Start from the first error {build} reports; the rest are usually knock-on errors.",
    ],
    &[
        "Take a backup or snapshot before running a destructive {d} migration.",
        "Always snapshot the data before a destructive {d} migration runs.",
        "Before any destructive {d} migration, take a snapshot you can restore from.",
    ],
    &[
        "Log the request id with every {d} log line so failures can be traced across services.",
        "Include the request id in each {d} log line; without it failures can't be traced across services.",
        "Every {d} log line should carry the request id so a failure can be followed across services.",
    ],
    &[
        "Keep {d} pull requests small and single-purpose; big ones hide bugs in review.",
        "Split {d} changes into small, single-purpose pull requests so reviewers catch the bugs.",
        "Small single-purpose {d} PRs get real review; large ones let bugs through.",
    ],
    &[
        "Upgrade {dep} one major version at a time and run {test} after each step.",
        "Never jump several majors of {dep} at once; go one major at a time with {test} after each.",
        "Move {dep} forward one major version per step, running {test} between steps.",
    ],
    &[
        "Add a regression test for every {d} incident before closing it.",
        "Close a {d} incident only once a regression test covers it.",
        "Every {d} incident gets a regression test before the ticket is closed.",
    ],
    &[
        "Use structured logging in {d} services instead of formatting values into message strings.",
        "Log {d} events as structured fields rather than interpolating values into the message text.",
        "Prefer structured log fields over string formatting in {d} logs so they can be queried.",
    ],
    &[
        "Run {build} in CI with the same flags as locally so both fail for the same reasons.",
        "Keep the {build} flags identical in CI and locally, or the two disagree about failures.",
        "Use the same {build} invocation locally and in CI so failures reproduce.",
    ],
    &[
        "Document every new {config} key in the README in the same change that adds it.",
        "When adding a key to {config}, document it in the README in the same PR.",
        "New {config} keys need a README entry in the change that introduces them.",
    ],
    &[
        "Delete dead {d} code instead of commenting it out; version control keeps the history.",
        "Remove unused {d} code rather than commenting it out, since git keeps it anyway.",
        "Don't leave commented-out {d} code behind; delete it and let history keep it.",
    ],
];

/// Hand-written families for the most common domains (index into `DOMAINS`).
fn specific_lessons(domain: &str) -> &'static [&'static [&'static str]] {
    match domain {
        "python" => &[
            &[
                "Run pytest from the repository root; invoking it inside tests/ breaks the package import.",
                "pytest has to be started at the repo root, otherwise the package isn't importable from tests/.",
                "Always run pytest from the repository root, never from inside tests/, so the package import resolves.",
            ],
            &[
                "Never use a mutable default argument such as [] or {}; default to None and build the list inside.",
                "Don't use mutable default arguments ([] or {}) in a signature; use None and create the list in the body.",
                "Mutable defaults like [] or {} are shared between calls; default to None and build the list inside.",
            ],
            &[
                "Use datetime.now(timezone.utc) instead of datetime.utcnow(), which returns a naive value.",
                "Prefer datetime.now(timezone.utc) over datetime.utcnow(); the naive value compares wrongly with aware ones.",
                "Always create aware datetimes with datetime.now(timezone.utc); datetime.utcnow() returns naive values.",
            ],
            &[
                "Create a virtualenv per project before pip install; the system Python is shared with other tools.",
                "Install dependencies inside a project virtualenv, never into the system Python.",
                "Use a per-project virtualenv for every pip install instead of the system Python.",
            ],
        ],
        "typescript" | "react" => &[
            &[
                "Await every promise in async tests; a missing await lets the test pass before its assertion runs.",
                "In async tests always await the promise, otherwise the test finishes before the assertion runs.",
                "A missing await in an async test makes it pass vacuously, so await every promise in tests.",
            ],
            &[
                "Turn on strict in tsconfig.json at the start; enabling it later surfaces hundreds of errors at once.",
                "Enable strict in tsconfig.json early; switching it on late means fixing hundreds of errors at once.",
                "Set strict in tsconfig.json from day one, since turning it on later surfaces hundreds of errors.",
            ],
            &[
                "Validate API responses at the boundary with zod instead of casting them with as.",
                "Parse external payloads with a zod schema at the boundary rather than casting with as.",
                "Don't cast fetch results with as; validate them with a zod schema where they enter the app.",
            ],
        ],
        "rust" => &[
            &[
                "Build with cargo build --locked in CI so Cargo.lock pins the versions.",
                "Pass --locked to cargo build in CI; without it cargo may resolve newer crates than Cargo.lock pins.",
                "In CI always use cargo build --locked so Cargo.lock decides the versions.",
            ],
            &[
                "Run cargo clippy --all-targets -- -D warnings before pushing; CI fails on any warning.",
                "Before pushing, run cargo clippy --all-targets -- -D warnings, because CI rejects warnings.",
                "CI treats clippy warnings as errors, so run cargo clippy --all-targets -- -D warnings first.",
            ],
            &[
                "Don't run blocking I/O in a tokio task; move it into tokio::task::spawn_blocking.",
                "Blocking calls inside async tokio code stall the runtime; run them in tokio::task::spawn_blocking.",
                "Wrap blocking file or network I/O in tokio::task::spawn_blocking instead of calling it from async code.",
            ],
        ],
        "go" => &[
            &[
                "Run go test -race for any package that starts goroutines; races rarely show up without it.",
                "Always run go test -race when goroutines are involved; races don't surface in normal runs.",
                "Packages with goroutines need go test -race in CI, since plain runs miss data races.",
            ],
            &[
                "Wrap errors with fmt.Errorf and %w so callers can still match them with errors.Is.",
                "Use %w in fmt.Errorf when wrapping, otherwise errors.Is can no longer match the cause.",
                "Always wrap with %w in fmt.Errorf so errors.Is keeps working up the stack.",
            ],
            &[
                "Pass context.Context as the first parameter and check ctx.Done() in long loops.",
                "Take a context.Context as the first argument and honour ctx.Done() inside long-running loops.",
                "Long loops must watch ctx.Done(), with context.Context passed as the first parameter.",
            ],
        ],
        "docker" => &[
            &[
                "Copy only the dependency manifest and install before copying the source, so the install layer stays cached.",
                "Install dependencies from the manifest before copying the rest of the source; otherwise every change busts the cache.",
                "Order the build so the dependency install comes before copying source code, keeping the install layer cached.",
            ],
            &[
                "Pin base images to an explicit version tag instead of latest so builds are reproducible.",
                "Never build from a latest tag; pin the base image to an explicit version so rebuilds are reproducible.",
                "Pin every base image to an explicit version tag rather than latest for reproducible builds.",
            ],
            &[
                "Add a .dockerignore that excludes node_modules and .git, or the build context balloons.",
                "Keep .git and node_modules out of the build context with a .dockerignore.",
                "Always add a .dockerignore for node_modules and .git; a huge build context makes every build slow.",
            ],
        ],
        "kubernetes" => &[
            &[
                "Set resource requests and limits on every container; pods without them are evicted first.",
                "Give every container memory and CPU requests and limits, or its pod is the first evicted.",
                "Always declare resource requests and limits per container so pods are not evicted first under pressure.",
            ],
            &[
                "Check kubectl config current-context before applying manifests so you never hit the wrong cluster.",
                "Run kubectl config current-context before any kubectl apply; the wrong cluster is too easy to hit.",
                "Before every kubectl apply, confirm kubectl config current-context points at the intended cluster.",
            ],
            &[
                "Point readiness probes at a cheap local endpoint, not one that checks downstream dependencies.",
                "Readiness probes should hit a lightweight endpoint; probing dependencies makes all pods unready together.",
                "Keep downstream checks out of readiness probes; use a cheap local endpoint instead.",
            ],
        ],
        "git" => &[
            &[
                "Use git push --force-with-lease, not --force, when pushing a rebased branch.",
                "After a rebase, push with git push --force-with-lease rather than --force.",
                "Push rebased branches with git push --force-with-lease instead of --force so others' commits survive.",
            ],
            &[
                "Rebase the feature branch onto origin/main before opening the PR instead of merging main into it.",
                "Before opening a PR, rebase onto origin/main rather than merging main into the branch.",
                "Prefer rebasing onto origin/main over merging main in before a PR; history stays linear.",
            ],
        ],
        "postgres" => &[
            &[
                "Create indexes on large tables with CREATE INDEX CONCURRENTLY so writes are not blocked.",
                "On big tables use CREATE INDEX CONCURRENTLY; a plain CREATE INDEX blocks writes.",
                "Build indexes with CREATE INDEX CONCURRENTLY on busy tables to avoid blocking writes.",
            ],
            &[
                "SET lock_timeout in migration sessions so a blocked ALTER TABLE fails fast.",
                "Always SET lock_timeout before ALTER TABLE in migrations so a blocked one fails fast.",
                "Set a short lock_timeout before ALTER TABLE so the migration fails fast instead of queueing traffic.",
            ],
            &[
                "Add a NOT NULL column in three steps: add it nullable, backfill, then set NOT NULL.",
                "For a new NOT NULL column, add it nullable first, backfill in batches, then set NOT NULL.",
                "Never add a NOT NULL column in one step; add nullable, backfill, then set NOT NULL.",
            ],
        ],
        "terraform" => &[
            &[
                "Always read terraform plan output before apply; a renamed resource shows up as destroy and create.",
                "Review the terraform plan before every apply, because renames appear as destroy plus create.",
                "Never apply without reading terraform plan; renamed resources are destroyed and recreated.",
            ],
            &[
                "Keep terraform state in a remote backend with locking, never in a local file.",
                "Use a remote terraform backend with state locking instead of a local state file.",
                "Store terraform state remotely with locking enabled; local state files get lost or clobbered.",
            ],
        ],
        "java" => &[&[
            "Close streams and connections with try-with-resources instead of finally blocks.",
            "Use try-with-resources for streams and connections rather than closing them in finally.",
            "Prefer try-with-resources over finally blocks to close streams and connections.",
        ]],
        "javascript" | "node-js" => &[&[
            "Handle promise rejections explicitly; an unhandled rejection crashes the node process.",
            "Always attach a catch to promises in node, since an unhandled rejection kills the process.",
            "Unhandled promise rejections crash node, so handle every rejection explicitly.",
        ]],
        _ => &[],
    }
}

const SPECIFIC_LESSONS: &[&str] = &[
    "In {module}, call {fn1}() only after {fn2}() has run, otherwise the {thing} is empty.",
    "Pass the {thing} into {fn1}() explicitly instead of reading it from a global in {module}.",
    "Keep {fn1}() in {module} free of I/O so it can be tested without mocks.",
    "Cache the result of {fn1}() per request in {module}; calling it per row is what made it slow.",
    "Always go through {fn2}() when touching the {thing} in {module}; direct writes skip validation.",
    "When {module} changes the {thing} format, bump the version field and keep {fn1}() reading both.",
];

const NARRATIVES: &[&str] = &[
    "Fixed the flaky test in {test_file} by {fix}; it only failed when {cond}.",
    "Found that PR #{pr} dropped the {thing} check in {file}; restored it and p95 went from {n1}s to {n2}ms.",
    "I bisected the regression to commit {sha} in {file} and reverted it; {test_file} passes again.",
    "Tracked the {err} down to {file}:{line}; {fix} and the job recovered.",
    "Community PR #{pr} merged cleanly despite significant changes to {file} on main.",
    "Leveraged existing {fn1}() and _{fn2}() helpers from {file} instead of writing new ones.",
    "Reverted {sha}, which changed {fn1}() in {file}; downstream consumers worked again.",
    "Discovered {fn1}() in {file} ran twice per request since PR #{pr}; removed the duplicate call and latency halved.",
    "Worked out that {module} read the {thing} before {fn2}() filled it; moved the call in {file} and {test_file} went green.",
];

const FIXES: &[&str] = &[
    "freezing time around the cutoff",
    "waiting for the query to resolve",
    "isolating the temp directory",
    "seeding the random generator",
    "adding the missing await",
    "resetting the global cache between tests",
    "pinning the timezone to UTC",
    "closing the connection pool in teardown",
];
const CONDS: &[&str] = &[
    "CI ran near midnight UTC",
    "tests ran in parallel",
    "the cache was warm",
    "the runner was slow",
    "two workers shared the database",
    "the locale was not en_US",
];
const ERRS: &[&str] = &[
    "502s",
    "OOM kills",
    "deadlock",
    "connection leak",
    "duplicate emails",
    "NullPointerException",
    "timeouts on checkout",
    "stale cache reads",
];

const GENERIC_GOTCHAS: &[&[&str]] = &[
    &[
        "{dep} retries timed-out calls silently, so a slow call takes three times the configured limit.",
        "With default settings {dep} silently retries timeouts, tripling the effective timeout.",
        "Timeouts on {dep} are per attempt; its silent retries multiply the real wait.",
    ],
    &[
        "{config} is read only at startup; edits need a restart to take effect.",
        "Changes to {config} only apply after a restart, since it is read once at startup.",
        "Editing {config} does nothing until the process restarts.",
    ],
    &[
        "{test} runs tests in parallel by default, so tests sharing files interfere.",
        "By default {test} runs in parallel; tests touching the same files step on each other.",
        "Parallel runs under {test} make tests that share files interfere with each other.",
    ],
    &[
        "The CI cache key ignores {manifest}, so dependency changes are not picked up without a bump.",
        "CI keeps serving cached dependencies after {manifest} changes unless the cache key is bumped.",
        "Changing {manifest} does not invalidate the CI dependency cache by itself.",
    ],
    &[
        "{build} behaves differently on macOS because the file system is case-insensitive.",
        "Case-insensitive paths on macOS let {build} pass locally and fail on Linux CI.",
        "A wrong-case import passes {build} on macOS but fails on Linux runners.",
    ],
    &[
        "Timestamps from {dep} are local time, not UTC.",
        "{dep} returns local-time timestamps rather than UTC.",
        "Watch out: {dep} hands back local time, not UTC.",
    ],
    &[
        "{dep} swallows errors raised in callbacks unless a handler is attached explicitly.",
        "Errors inside {dep} callbacks vanish unless you register an error handler.",
        "Exceptions thrown in {dep} callbacks are silently dropped without an explicit handler.",
    ],
    &[
        "Error messages from {dep} hide the root cause; debug logging shows it.",
        "{dep} reports a generic error; the real cause only appears with debug logging on.",
        "The real failure behind {dep} errors is only visible with debug logging.",
    ],
    &[
        "{test} exits 0 when no tests are collected, so a wrong path looks green.",
        "If {test} collects no tests it still exits 0, hiding a wrong path.",
        "A typo in the test path makes {test} pass with zero tests run.",
    ],
    &[
        "Default connection pool size in {dep} is tiny; under load requests queue behind it.",
        "{dep} ships with a very small default pool, and requests queue under load.",
        "Requests queue behind the small default connection pool of {dep} under load.",
    ],
];

const SPECIFIC_GOTCHAS: &[&str] = &[
    "{fn1}() in {module} is not thread-safe; two workers calling it corrupt the {thing}.",
    "{module} caches the {thing} for an hour, so edits seem to have no effect.",
    "{fn2}() returns an empty {thing} instead of an error when {module} is misconfigured.",
    "The {thing} in {module} is mutated by {fn1}(), so callers see changed values.",
];

const DEAD_ENDS: &[&str] = &[
    "increase the timeout",
    "retry loop around the flaky call",
    "pin {dep} to an older version",
    "rewrite {module} from scratch",
    "disable the failing check",
    "mock {dep} entirely",
    "switch to a different {d} library",
    "clear all caches and rebuild",
    "upgrade {dep} to the next major",
    "run the tests serially",
    "add a sleep before {fn1}()",
    "vendor {dep}",
];
const DEAD_END_TYPES: &[&str] = &["approach", "workaround", "dependency", "tool"];
const REASONS: &[&str] = &[
    "only hid the underlying race",
    "broke three other call sites",
    "made CI twice as slow",
    "the bug came back a day later",
    "upstream dropped support for it",
    "reviewers rejected it as too risky",
    "the real cause was elsewhere",
    "too slow on the full data set",
];

const TASKS: &[&str] = &[
    "Fix {issue} in {module}",
    "Add {feature} to {module}",
    "Upgrade {dep} in {module}",
    "Investigate {issue} in {module}",
    "Refactor {module} for {feature}",
    "Review PR #{pr} touching {module}",
    "Write tests for {module}",
];
const ISSUES: &[&str] = &[
    "flaky tests",
    "a memory leak",
    "slow queries",
    "a race condition",
    "wrong totals",
    "a crash on startup",
    "timeouts",
    "broken pagination",
    "duplicate events",
];
const FEATURES: &[&str] = &[
    "retries",
    "pagination",
    "CSV export",
    "audit logging",
    "rate limiting",
    "caching",
    "Prometheus metrics",
    "dark mode",
    "bulk import",
];
const MODULES: &[&str] = &[
    "billing",
    "auth",
    "orders",
    "invoices",
    "users",
    "search",
    "ingest",
    "export",
    "reports",
    "scheduler",
    "cache",
    "payments",
    "notifications",
    "sessions",
    "catalog",
    "pricing",
    "webhooks",
    "sync",
    "metrics",
    "settings",
    "storage",
    "queue",
    "importer",
    "parser",
    "client",
    "handlers",
    "models",
    "routes",
    "ledger",
    "accounts",
];
const FUNCTIONS: &[&str] = &[
    "parse_rows",
    "load_config",
    "retry_request",
    "build_index",
    "flush",
    "apply_discount",
    "resolve_user",
    "render_invoice",
    "refresh_token",
    "compute_totals",
    "validate_payload",
    "open_session",
    "enqueue",
    "dedupe",
    "normalize_email",
    "fetch_page",
    "merge_records",
    "encode_cursor",
    "schedule_run",
    "close_period",
    "sign_request",
    "hydrate",
    "reconcile",
    "warm_cache",
    "emit_event",
];
const THINGS: &[&str] = &[
    "tenant id",
    "cursor",
    "session map",
    "price table",
    "schema version",
    "retry budget",
    "currency code",
    "feature set",
    "batch buffer",
    "user cache",
];
/// The page an agent would fetch while working in `domain`.
fn doc_url(domain: &str) -> String {
    let url = match domain {
        "python" => "https://docs.python.org/3/library/datetime.html",
        "rust" => "https://doc.rust-lang.org/cargo/commands/cargo-build.html",
        "kubernetes" => "https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/",
        "postgres" => "https://www.postgresql.org/docs/current/sql-createindex.html",
        "go" => "https://go.dev/doc/effective_go",
        "docker" => "https://docs.docker.com/build/cache/",
        "typescript" | "react" => "https://www.typescriptlang.org/tsconfig#strict",
        "git" => "https://git-scm.com/docs/git-push",
        "terraform" => "https://developer.hashicorp.com/terraform/language/state/backends",
        "javascript" | "node-js" => "https://nodejs.org/api/process.html",
        "java" => "https://docs.oracle.com/en/java/javase/21/docs/api/",
        d => return format!("https://stackoverflow.com/questions/tagged/{d}"),
    };
    url.to_string()
}
const TRANSIENT: &[&str] = &[
    "error: operation timed out after 120s",
    "HTTP 429 Too Many Requests",
    "read ECONNRESET: connection reset by peer",
    "503 Service Unavailable: temporarily unavailable, retry later",
    "request cancelled: context deadline exceeded (Client.Timeout exceeded)",
];
const REFUSED: &[(&str, &str)] = &[
    (
        "git push --force origin main",
        "blocked by permission policy: force-push to a protected branch",
    ),
    ("rm -rf node_modules .venv target", "user declined"),
    (
        "kubectl delete namespace staging",
        "blocked by permission policy: destructive cluster operation",
    ),
    ("curl -X DELETE https://api.internal/v1/cache", "user declined"),
];

const ORGS: &[&str] = &[
    "acme",
    "globex",
    "initech",
    "umbrella-corp",
    "hooli",
    "piedpiper",
    "stark-labs",
    "wayne-ent",
    "tyrell",
    "cyberdyne",
    "soylent",
    "wonka-io",
    "aperture",
    "blackmesa",
    "vandelay",
    "massive-dynamic",
    "oscorp",
    "gringotts",
    "monsters-inc",
    "dunder-mifflin",
    "prestige-worldwide",
    "bluth-co",
    "krusty-krab",
    "nakatomi",
    "octan",
    "weyland",
    "zorg-ind",
    "los-pollos",
    "sterling-cooper",
    "wernham-hogg",
    "northwind",
    "contoso",
    "fabrikam",
    "tailspin",
    "adventure-works",
    "litware",
    "oss-tools",
    "data-guild",
    "platform-team",
    "mobile-squad",
];
const REPO_BASES: &[&str] = &[
    "billing",
    "payments",
    "search",
    "ingest",
    "auth",
    "notify",
    "catalog",
    "checkout",
    "ledger",
    "reports",
    "gateway",
    "scheduler",
    "inventory",
    "pricing",
    "profile",
    "analytics",
    "media",
    "export",
    "onboarding",
    "support-desk",
    "warehouse",
    "fleet",
    "booking",
    "identity",
    "feature-flags",
    "audit",
    "mailer",
    "crawler",
    "recommender",
    "dashboard",
    "admin",
    "mobile-app",
    "docs-site",
    "infra",
    "terraform-live",
    "helm-charts",
    "ml-pipeline",
    "etl",
    "data-lake",
    "cli",
    "sdk",
    "chat",
    "forms",
    "maps",
    "tickets",
    "invoicing",
    "subscriptions",
    "shipping",
    "returns",
    "loyalty",
];
const REPO_SUFFIXES: &[&str] = &[
    "", "-api", "-svc", "-worker", "-web", "-cli", "-rs", "-go", "-py", "-ui",
];
const USERS: &[&str] = &["dev", "maya", "sam", "lee", "ops", "jo"];

struct Project {
    identity: String,
    root: String,
    repo: String,
    stack: Vec<usize>,
}

fn projects(rng: &mut Rng, domain_zipf: &Zipf) -> Vec<Project> {
    const N: usize = 1500;
    let combos = ORGS.len() * REPO_BASES.len() * REPO_SUFFIXES.len();
    // A fixed stride permutation of the combination space: unique names, no set needed.
    let stride = 7919; // prime, coprime with `combos`
    let start = rng.below(combos);
    (0..N)
        .map(|i| {
            let c = (start + i * stride) % combos;
            let org = ORGS[c % ORGS.len()];
            let base = REPO_BASES[c / ORGS.len() % REPO_BASES.len()];
            let suffix = REPO_SUFFIXES[c / ORGS.len() / REPO_BASES.len()];
            let repo = format!("{base}{suffix}");
            let identity = match rng.weighted(&[550, 150, 120, 60, 60, 60]) {
                0 => format!("git@github.com:{org}/{repo}.git"),
                1 => format!("https://github.com/{org}/{repo}.git"),
                2 => format!("git@gitlab.com:{org}/{repo}.git"),
                3 => format!("git@bitbucket.org:{org}/{repo}.git"),
                4 => format!("ssh://git@git.{org}.internal:2222/{repo}.git"),
                _ => format!("/home/{}/src/{org}/{repo}", rng.pick(USERS)),
            };
            let root = match rng.weighted(&[300, 250, 250, 200]) {
                0 => "/workspace".to_string(),
                1 => format!("/srv/{repo}"),
                2 => format!("/home/{}/src/{repo}", rng.pick(USERS)),
                _ => format!("/home/runner/work/{repo}/{repo}"),
            };
            let k = 1 + rng.weighted(&[350, 450, 200]);
            let mut stack: Vec<usize> = Vec::with_capacity(k);
            while stack.len() < k {
                let d = domain_zipf.sample(rng);
                if !stack.contains(&d) {
                    stack.push(d);
                }
            }
            Project {
                identity,
                root,
                repo,
                stack,
            }
        })
        .collect()
}

// ------------------------------------------------------------------------------- generator

struct Generator {
    rng: Rng,
    tag: String,
    domain_zipf: Zipf,
    project_zipf: Zipf,
    generic_zipf: Zipf,
    gotcha_zipf: Zipf,
    vocabs: Vec<Vocab>,
    projects: Vec<Project>,
    /// The running clock (ms since the epoch) and the mean gap between records.
    clock: i64,
    mean_gap: i64,
    text: String,
    slots: Slots,
}

/// Per-record slot values for templates.
#[derive(Default)]
struct Slots {
    domain: usize,
    module: &'static str,
    fn1: &'static str,
    fn2: &'static str,
    thing: &'static str,
    fix: &'static str,
    cond: &'static str,
    err: &'static str,
    issue: &'static str,
    feature: &'static str,
    pr: usize,
    sha: u64,
    line: usize,
    n1: usize,
    n2: usize,
}

const START_MS: i64 = 1_740_787_200_000; // 2025-03-01T00:00:00Z
const SPAN_MS: i64 = 365 * 86_400_000;

impl Generator {
    fn new(seed: u64, experiences: usize) -> Generator {
        let mut rng = Rng::new(seed);
        let domain_zipf = Zipf::new(DOMAINS.len(), 1);
        let projects = projects(&mut rng, &domain_zipf);
        let mut sm = seed ^ 0x5EED;
        let tag = format!("{:06x}", splitmix(&mut sm) & 0xff_ffff);
        Generator {
            rng,
            tag,
            project_zipf: Zipf::new(projects.len(), 5),
            generic_zipf: Zipf::new(GENERIC_LESSONS.len(), 2),
            gotcha_zipf: Zipf::new(GENERIC_GOTCHAS.len(), 2),
            domain_zipf,
            vocabs: DOMAINS.iter().enumerate().map(|(i, d)| vocab(d, i)).collect(),
            projects,
            clock: START_MS,
            mean_gap: (SPAN_MS / experiences.max(1) as i64).max(1),
            text: String::with_capacity(512),
            slots: Slots::default(),
        }
    }

    fn record(&mut self, index: usize, planned: &[String], buf: &mut Vec<u8>) {
        let line_start = buf.len();
        let bad = if self.rng.chance(2) {
            1 + self.rng.below(3)
        } else {
            0
        };
        // A record with a missing field lacks `recorded_at` or `outcome`, half and half.
        let drop_time = bad == 2 && self.rng.chance(500);
        let drop_outcome = bad == 2 && !drop_time;
        let r = &mut self.rng;

        // Who, where, when.
        let project = if r.chance(30) {
            None
        } else if r.chance(850) {
            Some(self.project_zipf.sample(r))
        } else {
            Some(r.below(self.projects.len()))
        };
        let ndom = 1 + r.weighted(&[700, 250, 50]);
        let mut domains: [usize; 3] = [0; 3];
        let mut nd = 0;
        while nd < ndom {
            let d = match project {
                Some(p) if !r.chance(100) => r.pick(&self.projects[p].stack),
                _ => self.domain_zipf.sample(r),
            };
            if !domains[..nd].contains(&d) {
                domains[nd] = d;
                nd += 1;
            } else if project.is_some_and(|p| self.projects[p].stack.len() <= nd) {
                // The stack is exhausted; take one more domain from the global distribution.
                let d = self.domain_zipf.sample(r);
                if !domains[..nd].contains(&d) {
                    domains[nd] = d;
                    nd += 1;
                }
            }
        }
        self.clock += r.below(2 * self.mean_gap as usize + 1) as i64;

        let s = &mut self.slots;
        s.domain = domains[0];
        s.module = r.pick(MODULES);
        s.fn1 = r.pick(FUNCTIONS);
        s.fn2 = r.pick(FUNCTIONS);
        s.thing = r.pick(THINGS);
        s.fix = r.pick(FIXES);
        s.cond = r.pick(CONDS);
        s.err = r.pick(ERRS);
        s.issue = r.pick(ISSUES);
        s.feature = r.pick(FEATURES);
        s.pr = 12 + r.below(4000);
        s.sha = r.next();
        s.line = 10 + r.below(900);
        s.n1 = 2 + r.below(30);
        s.n2 = 20 + r.below(400);

        let outcome = match r.weighted(&[600, 140, 130, 130]) {
            0 => "succeeded",
            1 => "pivoted",
            2 => "abandoned",
            _ => "failed",
        };
        let succeeded = outcome == "succeeded";

        // id, recorded_at
        buf.extend_from_slice(b"{\"id\": \"g");
        buf.extend_from_slice(self.tag.as_bytes());
        let _ = write!(Bytes(buf), "-{index:08}\"");
        if !drop_time {
            buf.extend_from_slice(b", \"recorded_at\": \"");
            write_time(buf, self.clock, &mut self.rng);
            buf.push(b'"');
        }
        // domains
        buf.extend_from_slice(b", \"domains\": ");
        let r = &mut self.rng;
        let as_string = nd == 1 && r.chance(300);
        if !as_string {
            buf.push(b'[');
        }
        for (k, &d) in domains[..nd].iter().enumerate() {
            if k > 0 {
                buf.extend_from_slice(b", ");
            }
            let name = match DOMAINS[d] {
                "python" if r.chance(20) => "py",
                "typescript" if r.chance(20) => "TS",
                "kubernetes" if r.chance(20) => "k8s",
                other => other,
            };
            json_str(buf, name);
        }
        if !as_string {
            buf.push(b']');
        }
        if let Some(p) = project {
            buf.extend_from_slice(b", \"project\": ");
            json_str(buf, &self.projects[p].identity);
        }
        if self.rng.chance(950) {
            let tpl = self.rng.pick(TASKS);
            self.fill(tpl);
            buf.extend_from_slice(b", \"task\": ");
            json_str(buf, &self.text);
        }
        let r = &mut self.rng;
        match bad {
            3 => {
                buf.extend_from_slice(b", \"outcome\": ");
                json_str(buf, r.pick(&["done", "success", "completed"]));
            }
            _ if drop_outcome => {}
            _ => {
                buf.extend_from_slice(b", \"outcome\": \"");
                buf.extend_from_slice(outcome.as_bytes());
                buf.push(b'"');
            }
        }
        if r.chance(850) {
            let _ = write!(
                Bytes(buf),
                ", \"effort\": {}",
                1 + r.weighted(&[150, 300, 300, 170, 80])
            );
        }

        // lesson
        if self.rng.chance(450) {
            let tpl = self.lesson_template();
            self.fill(tpl);
            self.typeset();
            buf.extend_from_slice(b", \"lesson\": ");
            json_str(buf, &self.text);
        }
        // breakthrough
        if self.rng.chance(300) {
            let tpl = self.rng.pick(NARRATIVES);
            self.fill(tpl);
            self.typeset();
            buf.extend_from_slice(b", \"breakthrough\": ");
            json_str(buf, &self.text);
        }
        // gotchas
        if self.rng.chance(300) {
            let n = 1 + usize::from(self.rng.chance(200));
            buf.extend_from_slice(b", \"gotchas\": [");
            for k in 0..n {
                if k > 0 {
                    buf.extend_from_slice(b", ");
                }
                let tpl = if self.rng.chance(550) {
                    let family = GENERIC_GOTCHAS[self.gotcha_zipf.sample(&mut self.rng)];
                    self.rng.pick(family)
                } else {
                    self.rng.pick(SPECIFIC_GOTCHAS)
                };
                self.fill(tpl);
                self.typeset();
                json_str(buf, &self.text);
            }
            buf.push(b']');
        }
        // dead ends
        if self.rng.chance(if succeeded { 80 } else { 350 }) {
            let n = 1 + usize::from(self.rng.chance(250));
            buf.extend_from_slice(b", \"dead_ends\": [");
            for k in 0..n {
                if k > 0 {
                    buf.extend_from_slice(b", ");
                }
                let tpl = self.rng.pick(DEAD_ENDS);
                self.fill(tpl);
                buf.extend_from_slice(b"{\"name\": ");
                json_str(buf, &self.text);
                if self.rng.chance(800) {
                    buf.extend_from_slice(b", \"type\": ");
                    json_str(buf, self.rng.pick(DEAD_END_TYPES));
                }
                if self.rng.chance(850) {
                    buf.extend_from_slice(b", \"reason\": ");
                    json_str(buf, self.rng.pick(REASONS));
                }
                buf.push(b'}');
            }
            buf.push(b']');
        }

        // operations
        if self.rng.chance(750) {
            self.operations(buf, project, succeeded);
        }
        let r = &mut self.rng;
        let random = if r.chance(30) { 1 + r.below(3) } else { 0 };
        if random + planned.len() > 0 {
            buf.extend_from_slice(b", \"in_play\": [");
            for k in 0..random {
                if k > 0 {
                    buf.extend_from_slice(b", ");
                }
                let _ = write!(Bytes(buf), "\"L{:012x}\"", r.next() >> 16);
            }
            for (k, id) in planned.iter().enumerate() {
                if random + k > 0 {
                    buf.extend_from_slice(b", ");
                }
                json_str(buf, id);
            }
            buf.push(b']');
        }
        if r.chance(10) {
            buf.extend_from_slice(b", \"blessed\": true");
        }
        buf.push(b'}');
        if bad == 1 {
            // A malformed line: the record cut off mid-way.
            let len = buf.len() - line_start;
            buf.truncate(line_start + len / 2);
        }
        buf.push(b'\n');
    }

    /// Picks a lesson template: a family wording (domain-specific or generic) or a one-off.
    fn lesson_template(&mut self) -> &'static str {
        let r = &mut self.rng;
        if r.chance(350) {
            return r.pick(SPECIFIC_LESSONS);
        }
        let specific = specific_lessons(DOMAINS[self.slots.domain]);
        let family: &'static [&'static str] = if !specific.is_empty() && r.chance(500) {
            r.pick(specific)
        } else {
            GENERIC_LESSONS[self.generic_zipf.sample(r)]
        };
        r.pick(family)
    }

    fn operations(&mut self, buf: &mut Vec<u8>, project: Option<usize>, succeeded: bool) {
        let (root, repo) = match project {
            Some(p) => (self.projects[p].root.as_str(), self.projects[p].repo.as_str()),
            None => ("/workspace", "scratch"),
        };
        let v = &self.vocabs[self.slots.domain];
        let r = &mut self.rng;
        let file = format!("{root}/{}", source_file(v.ext, self.slots.module));
        let mut ops = Ops { buf, n: 0 };
        if r.chance(10) {
            let (cmd, err) = r.pick(REFUSED);
            ops.shell(cmd, root, "refused", Some(err), None);
        }
        if r.chance(150) {
            ops.shell(&format!("git grep -n {}", self.slots.fn1), root, "ok", None, None);
        }
        if r.chance(700) {
            ops.path("read_file", &file);
        }
        if r.chance(80) {
            let url = doc_url(DOMAINS[self.slots.domain]);
            ops.fetch(&url, None);
        }
        if r.chance(30) {
            let err = r.pick(TRANSIENT);
            let cmd = v.build.as_str();
            if r.chance(500) {
                ops.shell(cmd, root, "error", Some(err), None);
                ops.shell(cmd, root, "ok", None, None);
            } else {
                let url = doc_url(DOMAINS[self.slots.domain]);
                ops.fetch(&url, Some(err));
                ops.fetch(&url, None);
            }
        }
        if r.chance(70) {
            // Failed, then fixed: a different form of the same operation key.
            let m = &v.mechs[r.below(v.mechs.len())];
            if m.fix.is_empty() {
                let sub = format!("{root}/tests");
                ops.shell(m.fail, &sub, "error", Some(m.error), None);
                ops.shell(m.fail, root, "ok", None, None);
            } else {
                ops.shell(m.fail, root, "error", Some(m.error), None);
                ops.shell(m.fix, root, "ok", None, None);
            }
        }
        if r.chance(600) {
            ops.path("edit_file", &file);
        }
        if r.chance(600) {
            let passed = if succeeded { !r.chance(30) } else { r.chance(400) };
            let check = Some(("tests", repo, passed));
            if passed {
                ops.shell(&v.test, root, "ok", None, check);
            } else {
                let err = format!("FAILED {} - AssertionError", test_file(v.ext, self.slots.module));
                ops.shell(&v.test, root, "error", Some(&err), check);
            }
            if passed && r.chance(60) {
                // Stale: an edit after the last passing check, never re-run.
                let other = format!("{root}/{}", source_file(v.ext, r.pick(MODULES)));
                ops.path("edit_file", &other);
            }
        }
        ops.close();
    }

    /// Writes the filled text's first "; " as an em dash in 30% of the texts that have one, as
    /// model-written text often does: the same clause break for the narrative gate and for
    /// clustering, but non-ASCII, which sends regexes with a Unicode `\b` off the lazy DFA
    /// (`patterns`) and so must be in the benchmark.
    fn typeset(&mut self) {
        if let Some(at) = self.text.find("; ")
            && self.rng.chance(300)
        {
            self.text.replace_range(at..at + 2, " — ");
        }
    }

    /// Fills `tpl` into `self.text` from the current slots.
    fn fill(&mut self, tpl: &str) {
        self.text.clear();
        let s = &self.slots;
        let v = &self.vocabs[s.domain];
        let mut rest = tpl;
        while let Some(open) = rest.find('{') {
            self.text.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            let Some(close) = after.find('}') else {
                self.text.push_str(&rest[open..]);
                return;
            };
            let name = &after[..close];
            let t = &mut self.text;
            match name {
                "d" => t.push_str(DOMAINS[s.domain]),
                "test" => t.push_str(&v.test),
                "build" => t.push_str(&v.build),
                "manifest" => t.push_str(&v.manifest),
                "dep" => t.push_str(&v.dep),
                "config" => t.push_str(&v.config),
                "module" => t.push_str(s.module),
                "fn1" => t.push_str(s.fn1),
                "fn2" => t.push_str(s.fn2),
                "thing" => t.push_str(s.thing),
                "fix" => t.push_str(s.fix),
                "cond" => t.push_str(s.cond),
                "err" => t.push_str(s.err),
                "issue" => t.push_str(s.issue),
                "feature" => t.push_str(s.feature),
                "file" => t.push_str(&source_file(v.ext, s.module)),
                "test_file" => t.push_str(&test_file(v.ext, s.module)),
                "pr" => {
                    let _ = write!(t, "{}", s.pr);
                }
                "sha" => {
                    let _ = write!(t, "{:07x}", s.sha >> 36);
                }
                "line" => {
                    let _ = write!(t, "{}", s.line);
                }
                "n1" => {
                    let _ = write!(t, "{}", s.n1);
                }
                "n2" => {
                    let _ = write!(t, "{}", s.n2);
                }
                // Not a slot (`{}` in a lesson about Python defaults): keep it verbatim.
                _ => {
                    t.push('{');
                    t.push_str(name);
                    t.push('}');
                }
            }
            rest = &after[close + 1..];
        }
        self.text.push_str(rest);
    }
}

fn source_file(ext: &str, module: &str) -> String {
    match ext {
        "py" => format!("src/app/{module}.py"),
        "go" => format!("internal/{module}/{module}.go"),
        "rs" => format!("src/{module}.rs"),
        "java" => format!("src/main/java/com/app/{module}/Service.java"),
        "yaml" => format!("deploy/base/{module}.yaml"),
        "sql" => format!("migrations/{module}.sql"),
        "tf" => format!("modules/{module}/main.tf"),
        "md" => format!("docs/{module}.md"),
        e => format!("src/{module}.{e}"),
    }
}

fn test_file(ext: &str, module: &str) -> String {
    match ext {
        "py" => format!("tests/test_{module}.py"),
        "go" => format!("internal/{module}/{module}_test.go"),
        "rs" => format!("tests/{module}.rs"),
        "ts" | "tsx" | "js" => format!("src/__tests__/{module}.test.{ext}"),
        "java" => format!("src/test/java/com/app/{module}/ServiceTest.java"),
        e => format!("tests/{module}_test.{e}"),
    }
}

/// Writes the `"operations": [...]` member; omitted when no operation was written.
struct Ops<'a> {
    buf: &'a mut Vec<u8>,
    n: usize,
}

impl Ops<'_> {
    fn sep(&mut self) {
        if self.n == 0 {
            self.buf.extend_from_slice(b", \"operations\": [");
        } else {
            self.buf.extend_from_slice(b", ");
        }
        self.n += 1;
    }

    fn shell(
        &mut self,
        cmd: &str,
        cwd: &str,
        status: &str,
        error: Option<&str>,
        check: Option<(&str, &str, bool)>,
    ) {
        self.sep();
        let b = &mut *self.buf;
        b.extend_from_slice(b"{\"tool\": \"run_shell_command\", \"args\": {\"command\": ");
        json_str(b, cmd);
        b.extend_from_slice(b", \"cwd\": ");
        json_str(b, cwd);
        b.extend_from_slice(b"}, \"status\": ");
        json_str(b, status);
        if let Some(e) = error {
            b.extend_from_slice(b", \"error\": ");
            json_str(b, e);
        }
        if let Some((label, target, passed)) = check {
            b.extend_from_slice(b", \"check\": {\"label\": ");
            json_str(b, label);
            b.extend_from_slice(b", \"target\": ");
            json_str(b, target);
            b.extend_from_slice(if passed {
                b", \"passed\": true}"
            } else {
                b", \"passed\": false}"
            });
        }
        b.push(b'}');
    }

    fn path(&mut self, tool: &str, path: &str) {
        self.sep();
        let b = &mut *self.buf;
        b.extend_from_slice(b"{\"tool\": ");
        json_str(b, tool);
        b.extend_from_slice(b", \"args\": {\"file_path\": ");
        json_str(b, path);
        b.extend_from_slice(b"}, \"status\": \"ok\"}");
    }

    fn fetch(&mut self, url: &str, error: Option<&str>) {
        self.sep();
        let b = &mut *self.buf;
        b.extend_from_slice(b"{\"tool\": \"web_fetch\", \"args\": {\"url\": ");
        json_str(b, url);
        match error {
            Some(e) => {
                b.extend_from_slice(b"}, \"status\": \"error\", \"error\": ");
                json_str(b, e);
                b.push(b'}');
            }
            None => b.extend_from_slice(b"}, \"status\": \"ok\"}"),
        }
    }

    fn close(&mut self) {
        if self.n > 0 {
            self.buf.push(b']');
        }
    }
}

/// `std::fmt::Write` over a byte buffer, for `write!` of numbers.
struct Bytes<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Bytes<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// A JSON string literal.
fn json_str(buf: &mut Vec<u8>, s: &str) {
    buf.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &c) in bytes.iter().enumerate() {
        let esc: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\t' => b"\\t",
            b'\r' => b"\\r",
            0..=0x1f => b"",
            _ => continue,
        };
        buf.extend_from_slice(&bytes[start..i]);
        if esc.is_empty() {
            let _ = write!(Bytes(buf), "\\u{c:04x}");
        } else {
            buf.extend_from_slice(esc);
        }
        start = i + 1;
    }
    buf.extend_from_slice(&bytes[start..]);
    buf.push(b'"');
}

/// RFC 3339: mostly `Z`, some with offsets (the same instant in local time), some with millis.
fn write_time(buf: &mut Vec<u8>, ms: i64, rng: &mut Rng) {
    let offset_min: i64 = match rng.weighted(&[850, 50, 40, 30, 30]) {
        0 => 0,
        1 => 120,
        2 => -300,
        3 => 330,
        _ => 540,
    };
    let millis = rng.chance(100);
    let local = ms + offset_min * 60_000;
    let day = local.div_euclid(86_400_000);
    let rem = local.rem_euclid(86_400_000);
    let (y, m, d) = crate::time::civil_from_days(day);
    let _ = write!(
        Bytes(buf),
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60
    );
    if millis {
        let _ = write!(Bytes(buf), ".{:03}", rem % 1000);
    }
    if offset_min == 0 {
        buf.push(b'Z');
    } else {
        let sign = if offset_min < 0 { '-' } else { '+' };
        let a = offset_min.abs();
        let _ = write!(Bytes(buf), "{sign}{:02}:{:02}", a / 60, a % 60);
    }
}

/// A generated corpus for tests, loaded afresh on each call (compiling consumes a corpus,
/// and tests compile one several times).
#[cfg(test)]
pub(crate) fn loader(
    experiences: usize,
    seed: u64,
) -> impl Fn() -> (crate::model::Corpus, crate::diagnostics::Sink) {
    let mut text = Vec::new();
    generate(experiences, seed, &mut text).expect("writing to memory");
    let text = String::from_utf8(text).expect("the generator writes UTF-8");
    move || {
        let mut sink = crate::diagnostics::Sink::new();
        let options = crate::load::LoadOptions::default();
        let corpus = crate::load::load_texts(&[("gen.jsonl", &text)], &options, &mut sink);
        (corpus, sink)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn gen_bytes(n: usize, seed: u64) -> Vec<u8> {
        let mut out = Vec::new();
        generate(n, seed, &mut out).unwrap();
        out
    }

    #[test]
    fn same_seed_same_bytes() {
        assert_eq!(gen_bytes(3000, 7), gen_bytes(3000, 7));
    }

    #[test]
    fn different_seed_different_bytes() {
        assert_ne!(gen_bytes(500, 7), gen_bytes(500, 8));
    }

    #[test]
    fn civil_dates() {
        assert_eq!(crate::time::civil_from_days(0), (1970, 1, 1));
        assert_eq!(crate::time::civil_from_days(START_MS / 86_400_000), (2025, 3, 1));
        assert_eq!(crate::time::civil_from_days(20_513), (2026, 3, 1));
    }

    #[test]
    fn json_escaping() {
        let mut b = Vec::new();
        json_str(&mut b, "a\"b\\c\nd\u{1}é");
        let s = String::from_utf8(b).unwrap();
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(v, "a\"b\\c\nd\u{1}é");
    }

    #[test]
    fn lines_parse_with_required_fields_and_coverage() {
        let n = 20_000;
        let out = gen_bytes(n, 42);
        let text = String::from_utf8(out).unwrap();
        let mut good = 0usize;
        let mut malformed = 0usize;
        let mut missing = 0usize;
        let mut bad_outcome = 0usize;
        let mut domains = BTreeSet::new();
        let mut projects = BTreeSet::new();
        let mut ids = BTreeSet::new();
        let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
        let (mut with_ops, mut ops, mut lessons, mut in_play, mut blessed) = (0, 0, 0, 0, 0);
        let (mut texts, mut dashed) = (0usize, 0usize);
        let mut last_time = i64::MIN;
        let mut lines = 0;
        for line in text.lines() {
            lines += 1;
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                malformed += 1;
                continue;
            };
            let o = v.as_object().expect("a record is an object");
            assert!(ids.insert(o["id"].as_str().unwrap().to_string()), "unique ids");
            let (Some(at), Some(outcome)) = (o.get("recorded_at"), o.get("outcome")) else {
                missing += 1;
                continue;
            };
            let outcome = outcome.as_str().unwrap();
            if !["succeeded", "pivoted", "abandoned", "failed"].contains(&outcome) {
                bad_outcome += 1;
                continue;
            }
            good += 1;
            *outcomes.entry(outcome.to_string()).or_default() += 1;
            let t = crate::time::parse_rfc3339(at.as_str().unwrap()).expect("RFC 3339");
            assert!(t >= last_time, "monotonic time");
            last_time = t;
            match &o["domains"] {
                serde_json::Value::String(d) => {
                    domains.insert(d.clone());
                }
                serde_json::Value::Array(ds) => {
                    assert!(!ds.is_empty());
                    for d in ds {
                        domains.insert(d.as_str().unwrap().to_string());
                    }
                }
                other => panic!("domains: {other}"),
            }
            if let Some(p) = o.get("project") {
                projects.insert(p.as_str().unwrap().to_string());
            }
            for key in ["lesson", "breakthrough", "task"] {
                if let Some(s) = o.get(key) {
                    assert!(s.as_str().unwrap().chars().count() <= 240, "{s}");
                }
            }
            if o.contains_key("lesson") {
                lessons += 1;
            }
            let gotchas = o.get("gotchas").and_then(|g| g.as_array());
            let said = (o.get("lesson").into_iter().chain(o.get("breakthrough")))
                .chain(gotchas.into_iter().flatten())
                .filter_map(|t| t.as_str());
            for t in said {
                texts += 1;
                dashed += usize::from(t.contains(" — "));
            }
            if let Some(list) = o.get("operations") {
                let list = list.as_array().unwrap();
                assert!(!list.is_empty());
                with_ops += 1;
                ops += list.len();
                for op in list {
                    assert!(op["tool"].is_string() && op["args"].is_object());
                    let st = op["status"].as_str().unwrap();
                    assert!(["ok", "error", "refused"].contains(&st));
                }
            }
            in_play += usize::from(o.contains_key("in_play"));
            blessed += usize::from(o.contains_key("blessed"));
        }
        assert_eq!(lines, n);
        let bad = malformed + missing + bad_outcome;
        assert!(
            malformed > 0 && missing > 0 && bad_outcome > 0,
            "{malformed} {missing} {bad_outcome}"
        );
        assert!(bad < n / 100, "bad records {bad}");
        assert_eq!(good + bad, n);
        assert!(domains.len() >= 100, "domains {}", domains.len());
        assert!(projects.len() >= 1000, "projects {}", projects.len());
        let share = |k: &str| outcomes.get(k).copied().unwrap_or(0) * 100 / good;
        assert!((55..=65).contains(&share("succeeded")), "{outcomes:?}");
        assert!(
            ops * 10 / good >= 15,
            "ops per record {}",
            ops as f64 / good as f64
        );
        assert!(with_ops * 100 / good >= 65);
        assert!((40..=50).contains(&(lessons * 100 / good)));
        assert!(in_play > 0 && blessed > 0);
        // Model-written punctuation: an em dash in about 13% of the texts (`typeset`).
        assert!((8..=18).contains(&(dashed * 100 / texts)), "{dashed} of {texts}");
    }

    #[test]
    fn in_play_names_lessons_the_compile_attributes() {
        // Agents list the lessons their plan-time blocks showed: most references resolve, and
        // the compile confirms some lessons and holds contradictions against others.
        let (corpus, sink) = loader(4000, 3)();
        let listed: Vec<String> = corpus
            .experiences
            .iter()
            .flat_map(|e| e.in_play.clone())
            .collect();
        let with = corpus
            .experiences
            .iter()
            .filter(|e| !e.in_play.is_empty())
            .count();
        let share = with * 100 / corpus.experiences.len();
        assert!(
            (20..=40).contains(&share),
            "records with lessons in play: {share}%"
        );
        let rules = crate::policy::Rules::builtin();
        let comp = crate::pipeline::compile(corpus, sink, &rules, &Default::default());
        let ids: BTreeSet<&str> = comp.lessons.iter().map(|l| l.id.as_str()).collect();
        let resolved = listed.iter().filter(|id| ids.contains(id.as_str())).count();
        assert!(
            resolved * 100 >= listed.len() * 80,
            "{resolved} of {} references resolve",
            listed.len()
        );
        use crate::model::Event;
        let events = |event: Event| {
            let named = |h: &&crate::model::HistoryEntry| h.event == event;
            comp.lessons
                .iter()
                .map(|l| l.history.iter().filter(named).count())
                .sum::<usize>()
        };
        assert!(
            events(Event::Confirmed) >= 100,
            "confirmed {}",
            events(Event::Confirmed)
        );
        assert!(
            events(Event::Contradicted) >= 20,
            "contradicted {}",
            events(Event::Contradicted)
        );
    }

    #[test]
    fn families_recur_across_projects() {
        // The same lesson text shows up in several projects: clusters can form.
        let text = String::from_utf8(gen_bytes(5000, 1)).unwrap();
        let mut by_text = std::collections::BTreeMap::<String, BTreeSet<String>>::new();
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if let (Some(l), Some(p)) = (v.get("lesson"), v.get("project")) {
                by_text
                    .entry(l.as_str().unwrap().to_string())
                    .or_default()
                    .insert(p.as_str().unwrap().to_string());
            }
        }
        let recurring = by_text.values().filter(|ps| ps.len() >= 2).count();
        assert!(recurring >= 50, "recurring lesson texts {recurring}");
    }
}
