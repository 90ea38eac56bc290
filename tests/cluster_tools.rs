//! Lessons that differ only in the tool they name are two lessons (DESIGN §5.3: technical
//! tokens must agree). A command's program is a tool name whether or not the lexicon lists it
//! and whether or not it is also an English word (`make`): "Run make build --locked in CI"
//! and "Run cargo build --locked in CI" used to be one cluster, one rule citing both tools'
//! evidence. Real paraphrases of one command still merge.

mod common;

use common::*;
use serde_json::{Value, json};

/// (domain, [(project, lesson)]): every entry one lesson, recorded by each of its experiences.
const LESSONS: &[(&str, &[(&str, &str)])] = &[
    (
        "ci",
        &[
            (
                "git@github.com:acme/ledger-rs.git",
                "Run cargo build --locked in CI so the build honours Cargo.lock",
            ),
            (
                "git@github.com:acme/geo-tiles.git",
                "In CI, run cargo build with --locked so Cargo.lock is honoured",
            ),
            (
                "https://gitlab.com/north/fleetd.git",
                "Use cargo build --locked in CI so the build honours Cargo.lock",
            ),
        ],
    ),
    (
        "ci",
        &[
            (
                "git@github.com:acme/firmware.git",
                "Run make build --locked in CI so the build honours Cargo.lock",
            ),
            (
                "git@github.com:acme/edge-agent.git",
                "Run make build --locked in CI so the build honours Cargo.lock",
            ),
            (
                "https://gitlab.com/north/sensor-hub.git",
                "In CI, run make build with --locked so Cargo.lock is honoured",
            ),
        ],
    ),
    (
        "ci",
        &[
            (
                "git@github.com:acme/ledger-rs.git",
                "Run cargo test before pushing to main",
            ),
            (
                "git@github.com:acme/geo-tiles.git",
                "Before pushing to main, run cargo test",
            ),
        ],
    ),
    (
        "ci",
        &[
            (
                "git@github.com:acme/firmware.git",
                "Run make test before pushing to main",
            ),
            (
                "https://gitlab.com/north/sensor-hub.git",
                "Before pushing to main, run make test",
            ),
        ],
    ),
    (
        "javascript",
        &[
            (
                "git@github.com:acme/storefront.git",
                "Use bun install --frozen-lockfile in CI so installs match the lockfile",
            ),
            (
                "git@github.com:acme/admin-ui.git",
                "In CI, install with bun install --frozen-lockfile so the lockfile is respected",
            ),
        ],
    ),
    (
        "javascript",
        &[
            (
                "git@github.com:acme/docs-site.git",
                "Use pnpm install --frozen-lockfile in CI so installs match the lockfile",
            ),
            (
                "https://gitlab.com/north/portal.git",
                "Use pnpm install --frozen-lockfile in CI so installs match the lockfile",
            ),
        ],
    ),
    (
        "javascript",
        &[
            (
                "git@github.com:acme/storefront.git",
                "Run npm ci --ignore-scripts in CI so a compromised postinstall cannot run",
            ),
            (
                "git@github.com:acme/admin-ui.git",
                "Run npm ci --ignore-scripts in CI so a compromised postinstall cannot run",
            ),
        ],
    ),
    (
        "javascript",
        &[
            (
                "git@github.com:acme/docs-site.git",
                "Run yarn install --ignore-scripts in CI so a compromised postinstall cannot run",
            ),
            (
                "https://gitlab.com/north/portal.git",
                "Run yarn install --ignore-scripts in CI so a compromised postinstall cannot run",
            ),
        ],
    ),
    (
        "python",
        &[
            (
                "git@github.com:acme/billing-api.git",
                "Run tox -e lint before opening a pull request",
            ),
            (
                "git@github.com:acme/etl-jobs.git",
                "Before opening a pull request, run tox -e lint",
            ),
        ],
    ),
    (
        "python",
        &[
            (
                "git@github.com:acme/ml-serving.git",
                "Run nox -e lint before opening a pull request",
            ),
            (
                "https://gitlab.com/north/scraper.git",
                "Run nox -e lint before opening a pull request",
            ),
        ],
    ),
    (
        "containers",
        &[
            (
                "git@github.com:acme/base-images.git",
                "Run podman build --pull=always so base image fixes are picked up",
            ),
            (
                "git@github.com:acme/ci-runners.git",
                "Run podman build --pull=always so base image fixes are picked up",
            ),
        ],
    ),
    (
        "containers",
        &[
            (
                "https://gitlab.com/north/builders.git",
                "Run buildah build --pull=always so base image fixes are picked up",
            ),
            (
                "git@github.com:acme/edge-agent.git",
                "Run buildah build --pull=always so base image fixes are picked up",
            ),
        ],
    ),
    (
        "containers",
        &[
            (
                "git@github.com:acme/base-images.git",
                "Run docker build --pull=always so base image fixes are picked up",
            ),
            (
                "https://gitlab.com/north/builders.git",
                "Run docker build --pull=always so base image fixes are picked up",
            ),
        ],
    ),
    (
        "java",
        &[
            (
                "git@github.com:acme/payments-jvm.git",
                "Run mvn test --offline on the air-gapped runners",
            ),
            (
                "git@github.com:acme/risk-engine.git",
                "On the air-gapped runners, run mvn test with --offline",
            ),
        ],
    ),
    (
        "java",
        &[
            (
                "https://gitlab.com/north/android-app.git",
                "Run gradle test --offline on the air-gapped runners",
            ),
            (
                "git@github.com:acme/risk-engine.git",
                "Run gradle test --offline on the air-gapped runners",
            ),
        ],
    ),
    (
        "go",
        &[
            (
                "git@github.com:acme/edge-agent.git",
                "Run go test ./... before tagging a release",
            ),
            (
                "git@github.com:acme/fleet-api.git",
                "Before tagging a release, run go test ./...",
            ),
        ],
    ),
    (
        "go",
        &[
            (
                "https://gitlab.com/north/fleetd-go.git",
                "Run go vet ./... before tagging a release",
            ),
            (
                "git@github.com:acme/fleet-api.git",
                "Run go vet ./... before tagging a release",
            ),
        ],
    ),
];

/// One passed experience per (lesson, project), ids `exp-001`… in order; the ids per lesson.
fn records() -> (Vec<Value>, Vec<Vec<String>>) {
    let (mut records, mut groups) = (Vec::new(), Vec::new());
    let mut n = 0;
    for (domain, experiences) in LESSONS {
        let mut ids = Vec::new();
        for (project, lesson) in *experiences {
            n += 1;
            let id = format!("exp-{n:03}");
            records.push(json!({
                "id": id,
                "recorded_at": format!("2026-11-{:02}T{:02}:15:00Z", 1 + n % 27, 8 + n % 10),
                "domains": [domain],
                "project": project,
                "task": "Keep the pipeline green",
                "outcome": "succeeded",
                "effort": 2,
                "lesson": lesson,
                "operations": [{
                    "tool": "run_shell_command",
                    "args": {"command": "ci/check.sh", "cwd": "/srv/checkout"},
                    "status": "ok",
                    "check": {"label": "ci", "target": "pipeline", "passed": true}
                }]
            }));
            ids.push(id);
        }
        groups.push(ids);
    }
    (records, groups)
}

#[test]
fn lessons_naming_different_tools_stay_apart_and_paraphrases_merge() {
    let (records, groups) = records();
    let r = Records::new("cluster-tools");
    r.add("fleet.jsonl", &records);
    let ledger = r.compile();
    let lessons = ledger["lessons"].as_array().unwrap();
    let mut wrong = Vec::new();
    for (group, (domain, experiences)) in groups.iter().zip(LESSONS) {
        // The lesson that cites this group's first experience cites exactly the group.
        let cited: Vec<&Value> = lessons
            .iter()
            .filter(|l| ids(&l["evidence"]).iter().any(|e| group.contains(e)))
            .collect();
        let evidence: Vec<Vec<String>> = cited.iter().map(|l| ids(&l["evidence"])).collect();
        if evidence != [group.clone()] {
            wrong.push(format!(
                "{domain}: {:?} should be one lesson citing {group:?}, got {:?}",
                experiences[0].1,
                cited
                    .iter()
                    .map(|l| (l["text"].as_str().unwrap_or(""), ids(&l["evidence"])))
                    .collect::<Vec<_>>()
            ));
        } else if cited[0]["rule"] != true || cited[0]["scope"] != "global" {
            wrong.push(format!("{domain}: {} is not a global rule", cited[0]["text"]));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(lessons.len(), LESSONS.len());
    // The SKILL.md of `ci` keeps a rule per tool.
    let skill = std::fs::read_to_string(r.s.path("out/ci/SKILL.md")).unwrap();
    for tool in ["cargo build", "make build", "cargo test", "make test"] {
        assert!(skill.contains(tool), "{tool} missing from ci/SKILL.md:\n{skill}");
    }
}
