//! Skill deltas over authored skills written in styles skillc's own fixtures do not use:
//! YAML spellings of `name` (quoted, commented, quoted keys), a name that is not its folder's,
//! frontmatter that is not valid YAML or is missing, numbered steps, do/don't tables,
//! admonitions, nested bullets, headings in German and code fences whose comments read like
//! rules. Each skill must be matched as the spec's readers would, each spec problem must be an
//! E007 with file and line, and a dead end the skill recommends must be an E006.

use std::path::PathBuf;

use serde_json::Value;
use skillc::deltas::{self, BaseSkill};
use skillc::diagnostics::Diagnostic;
use skillc::model::{HistoryEntry, Kind, Lesson, Status};
use skillc::policy::Rules;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/authored-skills")
}

fn base() -> Vec<BaseSkill> {
    let (skills, unreadable) = deltas::read_base_skills(&fixtures()).expect("fixtures read");
    assert!(unreadable.is_empty(), "{unreadable:?}");
    skills
}

fn skill(name: &str) -> BaseSkill {
    base().into_iter().find(|b| b.name == name).unwrap()
}

fn authored(folder: &str, text: &str) -> BaseSkill {
    BaseSkill {
        name: folder.into(),
        path: format!("skills/{folder}/SKILL.md"),
        text: text.into(),
    }
}

fn lesson(id: &str, domain: &str, kind: Kind, text: &str, evidence: &[&str]) -> Lesson {
    Lesson {
        id: id.into(),
        kind,
        text: text.into(),
        domain: domain.into(),
        scope: "global".into(),
        operation_key: None,
        status: Status::Active,
        reason: None,
        confidence: 650,
        reinforcement: evidence.len() as u32,
        rule: true,
        pinned: false,
        blessed: false,
        evidence: evidence.iter().map(|&s| s.into()).collect(),
        projects: vec!["3c9d1e0f7a2b".into(), "e41f0a9b6c3d".into()],
        superseded_by: None,
        supersedes: None,
        founder: evidence[0].into(),
        cluster: format!("C{}", &id[1..]),
        admitted_at: 1_764_547_200_000,
        last_used_day: 20_400,
        working: None,
        reasons: Vec::new(),
        history: vec![HistoryEntry {
            at: 1_764_547_200_000,
            event: skillc::model::Event::Admitted,
            confidence: 500,
            experiences: evidence.iter().map(|&s| s.into()).collect(),
            detail: None,
            idle_days: 0,
            idle_confidence: 0,
        }],
    }
}

/// What agents learned, one or two rules per fixture's domain.
fn lessons() -> Vec<Lesson> {
    vec![
        lesson(
            "L0a11ce5e0001",
            "terraform",
            Kind::Do,
            "Run terraform validate before terraform plan so syntax errors fail fast in CI.",
            &["tf-ci-0412", "tf-ci-0419"],
        ),
        lesson(
            "L0a11ce5e0002",
            "kubernetes",
            Kind::Watch,
            "kubectl rollout restart keeps the old ReplicaSet until the new pods pass readiness.",
            &["k8s-gke-1101", "k8s-gke-1107"],
        ),
        lesson(
            "L0a11ce5e0003",
            "npm",
            Kind::Do,
            "Run npm ci with --ignore-scripts when installing untrusted lockfile changes.",
            &["web-3301", "web-3318"],
        ),
    ]
}

fn codes_for<'a>(diags: &'a [Diagnostic], code: &str, subject: &str) -> Vec<&'a Diagnostic> {
    (diags.iter())
        .filter(|d| d.code == code && d.subject == subject)
        .collect()
}

fn line_of(d: &Diagnostic) -> (String, u32) {
    let loc = d.location.as_ref().expect("a location");
    (loc.file.to_string(), loc.line)
}

fn rows(files: &[skillc::emit::OutFile], folder: &str) -> Vec<Value> {
    let f = (files.iter())
        .find(|f| f.path == format!("deltas/{folder}.json"))
        .unwrap_or_else(|| panic!("no delta for {folder}"));
    deltas::parse_delta(&f.text()).unwrap()
}

/// `name` as YAML spells it: quoted, with a trailing comment, as a quoted key. A folder that
/// is no domain leaves the frontmatter name to match the skill, and an unmatched skill's E005
/// points at the name's line however it is spelled.
#[test]
fn yaml_spellings_of_the_name_match_the_skill() {
    let rules = Rules::builtin();
    let domains = ["terraform", "kubernetes"].into_iter().collect();
    for front in [
        "name: \"terraform\"",
        "name: 'terraform'",
        "name: terraform   # must match the folder",
        "name: \"terraform\"  # quoted, and a comment",
        "\"name\": terraform",
        "name:   terraform",
    ] {
        let s = authored(
            "infra",
            &format!(
                "---\n{front}\ndescription: Plan and apply Terraform.\n---\n\n# Infra\n\n- Run `terraform plan` first.\n"
            ),
        );
        assert_eq!(
            deltas::matched_domain(&s, &domains, &rules.aliases).as_deref(),
            Some("terraform"),
            "{front}"
        );
    }
    // An alias through a quoted name: `k8s` is the kubernetes skill.
    let s = authored(
        "cluster-ops",
        "---\ndescription: Our clusters.\n'name': 'k8s' # short\n---\n\n- Use kubectl.\n",
    );
    assert_eq!(
        deltas::matched_domain(&s, &domains, &rules.aliases).as_deref(),
        Some("kubernetes")
    );
    // Unmatched, with a quoted key: E005 at the name's line (3), not line 1.
    let s = authored(
        "pdf-tools",
        "---\ndescription: Fill and merge PDF forms.\n\"name\": \"pdf-tools\"\n---\n\n- Use qpdf.\n",
    );
    let (_, diags) = deltas::compute(&[s], &lessons(), &Default::default(), &rules);
    let e005 = codes_for(&diags, "E005", "pdf-tools");
    assert_eq!(e005.len(), 1, "{diags:?}");
    assert_eq!(line_of(e005[0]), ("skills/pdf-tools/SKILL.md".into(), 3));
    assert!(codes_for(&diags, "E007", "pdf-tools").is_empty(), "{diags:?}");
}

/// A skill whose frontmatter `name` is not its folder's name is matched (folder first, then
/// name) and gets its delta under the folder's name, and an E007 at the name's line says the
/// specification requires the two to match. A skill whose quoted, commented name matches its
/// folder raises none.
#[test]
fn a_name_that_is_not_the_folder_name_is_an_e007_at_its_line() {
    let (files, diags) = deltas::compute(&base(), &lessons(), &Default::default(), &Rules::builtin());
    let rows = rows(&files, "kubectl-playbook");
    assert_eq!(rows[0]["base_name"], "kubectl-playbook");
    assert_eq!(rows[0]["provenance"]["lessons"][0], "L0a11ce5e0002");
    let e007 = codes_for(&diags, "E007", "kubectl-playbook");
    assert_eq!(e007.len(), 1, "{diags:?}");
    let d = e007[0];
    assert_eq!(
        line_of(d),
        (skill("kubectl-playbook").path, 2),
        "at the frontmatter's name"
    );
    assert!(
        d.message.contains("kubectl-playbook is named kubernetes"),
        "{}",
        d.message
    );
    assert_eq!(d.evidence["name"], "kubernetes");
    assert_eq!(d.severity.as_str(), "warning");
    assert!(codes_for(&diags, "E007", "terraform").is_empty(), "{diags:?}");
}

/// Frontmatter that is not valid YAML (a description with a second `: `), a skill with no
/// frontmatter, a name the spec forbids and a description past 1024 characters: each an E007
/// at the line to fix. The broken YAML still matches by its plain `name:` line and gets its
/// delta; the run goes on.
#[test]
fn frontmatter_the_spec_rejects_is_an_e007_with_file_and_line() {
    let (files, diags) = deltas::compute(&base(), &lessons(), &Default::default(), &Rules::builtin());
    let npm = codes_for(&diags, "E007", "npm");
    assert_eq!(npm.len(), 1, "{diags:?}");
    assert_eq!(line_of(npm[0]), (skill("npm").path, 3), "the description's line");
    assert!(
        npm[0]
            .message
            .contains("not valid YAML: mapping values are not allowed"),
        "{}",
        npm[0].message
    );
    assert!(!npm[0].message.contains("at line"), "{}", npm[0].message);
    assert_eq!(
        rows(&files, "npm")[0]["provenance"]["lessons"][0],
        "L0a11ce5e0003"
    );

    let ruff = codes_for(&diags, "E007", "ruff");
    assert_eq!(ruff.len(), 1, "{diags:?}");
    assert_eq!(line_of(ruff[0]), (skill("ruff").path, 1));
    assert!(
        ruff[0].message.contains("has no frontmatter"),
        "{}",
        ruff[0].message
    );

    let long = "x".repeat(1030);
    let cases = [
        (
            "pdf-tools",
            "---\nname: PDF_Tools\ndescription: Fill PDF forms.\n---\n\n- Use qpdf.\n".to_string(),
            2,
            "is not 1 to 64 lower-case letters",
        ),
        (
            "pdf-tools",
            format!("---\nname: pdf-tools\nlicense: MIT\ndescription: {long}\n---\n\n- Use qpdf.\n"),
            4,
            "of 1030 characters",
        ),
        (
            "pdf-tools",
            "---\nname: pdf-tools\ndescription:\n---\n\n- Use qpdf.\n".to_string(),
            3,
            "has an empty `description`",
        ),
        (
            "pdf-tools",
            "---\ndescription: Fill PDF forms.\n---\n\n- Use qpdf.\n".to_string(),
            1,
            "has no `name`",
        ),
        (
            "pdf-tools",
            "---\nname: pdf-tools\ndescription: Fill PDF forms.\n\n# Usage\n\n- Use qpdf.\n".to_string(),
            1,
            "no `---` line closes",
        ),
    ];
    for (folder, text, line, says) in cases {
        let s = authored(folder, &text);
        let e007 = deltas::spec_problems(&s);
        assert_eq!(e007.len(), 1, "{text}: {e007:?}");
        assert_eq!(line_of(&e007[0]).1, line, "{text}");
        assert!(e007[0].message.contains(says), "{}", e007[0].message);
    }
    // A skill as the spec wants it raises nothing.
    assert!(deltas::spec_problems(&skill("terraform")).is_empty());
}

/// An avoid rule ("Never run `terraform apply` without a plan file", or a dead end named
/// "terraform apply without a saved plan") against an authored step that recommends the very
/// thing ("Run `terraform apply` directly in CI …") is an E006 at that step; an avoid rule the
/// skill already warns about is stated (not proposed, no E006), and one about something else
/// raises nothing.
#[test]
fn an_avoid_rule_against_an_authored_step_is_an_e006() {
    let tf = skill("terraform");
    let step = tf
        .text
        .lines()
        .position(|l| l.contains("Run `terraform apply` directly in CI"))
        .unwrap() as u32
        + 1;
    let rules = Rules::builtin();
    for text in [
        "Never run `terraform apply` without a plan file.",
        "running terraform apply without a saved plan",
        "Don't run terraform apply without reviewing the plan",
    ] {
        let mut ls = lessons();
        ls.push(lesson(
            "L0a11ce5e0009",
            "terraform",
            Kind::Avoid,
            text,
            &["tf-ci-0420", "tf-ci-0433"],
        ));
        let (files, diags) = deltas::compute(std::slice::from_ref(&tf), &ls, &Default::default(), &rules);
        let e006 = codes_for(&diags, "E006", "terraform");
        assert_eq!(e006.len(), 1, "{text}: {diags:?}");
        assert_eq!(line_of(e006[0]), (tf.path.clone(), step), "{text}");
        assert_eq!(e006[0].evidence["lesson"], "L0a11ce5e0009");
        let lessons_of_row = &rows(&files, "terraform")[0]["provenance"]["lessons"];
        assert!(
            lessons_of_row
                .as_array()
                .unwrap()
                .iter()
                .any(|v| v == "L0a11ce5e0009"),
            "still proposed: {lessons_of_row}"
        );
    }

    // A step that does what the avoid rule asks is no contradiction.
    let agreeing = BaseSkill {
        text: tf.text.replace(
            "Run `terraform apply` directly in CI once the plan job is green.",
            "Apply the saved plan file from the plan job: `terraform apply tfplan`.",
        ),
        ..tf.clone()
    };
    let mut ls = lessons();
    ls.push(lesson(
        "L0a11ce5e0009",
        "terraform",
        Kind::Avoid,
        "Never run `terraform apply` without a plan file.",
        &["tf-ci-0420", "tf-ci-0433"],
    ));
    let (_, diags) = deltas::compute(std::slice::from_ref(&agreeing), &ls, &Default::default(), &rules);
    assert!(codes_for(&diags, "E006", "terraform").is_empty(), "{diags:?}");

    let k8s = skill("kubectl-playbook");
    for (text, proposed) in [
        // The nested bullet already warns against it.
        ("Never edit live objects with `kubectl edit`.", false),
        // Nothing in the skill says otherwise.
        (
            "Never delete a namespace with `kubectl delete ns` to clean up a failed rollout.",
            true,
        ),
    ] {
        let mut ls = lessons();
        ls.push(lesson(
            "L0a11ce5e000a",
            "kubernetes",
            Kind::Avoid,
            text,
            &["k8s-gke-1120", "k8s-gke-1131"],
        ));
        let (files, diags) = deltas::compute(std::slice::from_ref(&k8s), &ls, &Default::default(), &rules);
        assert!(
            codes_for(&diags, "E006", "kubectl-playbook").is_empty(),
            "{text}: {diags:?}"
        );
        let row = &rows(&files, "kubectl-playbook")[0];
        let has = (row["provenance"]["lessons"].as_array().unwrap())
            .iter()
            .any(|v| v == "L0a11ce5e000a");
        assert_eq!(has, proposed, "{text}");
    }
}

/// Every row resolves over its authored skill: the authored text is kept byte for byte
/// (frontmatter, table, admonition, fence comments, nested bullets), the resolved skill's
/// frontmatter has the problems the authored one had and no others, and a second compute is
/// byte-identical.
#[test]
fn resolved_skills_keep_the_authored_text_and_stay_as_valid_as_they_were() {
    let rules = Rules::builtin();
    let (files, diags) = deltas::compute(&base(), &lessons(), &Default::default(), &rules);
    let (again, diags_again) = deltas::compute(&base(), &lessons(), &Default::default(), &rules);
    assert_eq!(files, again);
    assert_eq!(format!("{diags:?}"), format!("{diags_again:?}"));
    let mut resolved_any = 0;
    for s in base() {
        let Some(f) = files.iter().find(|f| f.path == format!("deltas/{}.json", s.name)) else {
            continue;
        };
        let rows = deltas::parse_delta(&f.text()).unwrap();
        let resolved = deltas::resolve(&s.text, &rows).unwrap();
        assert!(
            resolved.starts_with(s.text.trim_end_matches('\n')),
            "{}: authored text kept:\n{resolved}",
            s.name
        );
        let messages = |t: &str| -> Vec<String> {
            deltas::spec_problems(&authored(&s.name, t))
                .into_iter()
                .map(|d| d.message)
                .collect()
        };
        assert_eq!(messages(&resolved), messages(&s.text), "{}", s.name);
        resolved_any += 1;
    }
    assert_eq!(resolved_any, 3, "terraform, kubectl-playbook and npm get deltas");
    // The fence's `# never commit .terraform/` is code, not a rule the skill states.
    let tf = rows(&files, "terraform");
    assert_eq!(tf[0]["anchor_section"], "do-and-don-t");
}

/// A warning in an admonition (`> **Warning**` then `> Never run …`, or GitHub's
/// `> [!CAUTION]`) and a cell of a table's "Don't" column state a dead end as a bullet would,
/// so the avoid rule is not proposed again; a do rule that a "Don't" cell forbids is an E006
/// at the table row's line; a cell under "Do" is advice, not a warning.
#[test]
fn admonitions_and_do_dont_tables_state_what_they_say() {
    let rules = Rules::builtin();
    let text = "---\nname: docker\ndescription: Building the team's images. Use when editing Dockerfiles.\n---\n\n# Docker\n\n> **Warning**\n> Never run `docker system prune -a` on the shared CI runners.\n\n> [!CAUTION]\n> Don't push images tagged `latest` from a laptop.\n\n## Do and don't\n\n| ✅ Do | ❌ Don't |\n|:--|:--|\n| Pin base images by digest | Use `apt-get upgrade` in a Dockerfile |\n| Run `hadolint Dockerfile` in CI | Copy `.env` files into an image |\n";
    let s = authored("docker", text);
    let dead_end = |id: &str, t: &str| lesson(id, "docker", Kind::Avoid, t, &["ci-7101", "ci-7140"]);
    let ls = vec![
        dead_end("L0d0c0e000001", "docker system prune -a on the shared CI runners"),
        dead_end(
            "L0d0c0e000002",
            "Never push images tagged `latest` from a laptop.",
        ),
        dead_end("L0d0c0e000003", "copying .env files into an image"),
        lesson(
            "L0d0c0e000004",
            "docker",
            Kind::Do,
            "Use `apt-get upgrade` in a Dockerfile so images get security fixes.",
            &["ci-7102", "ci-7150"],
        ),
        lesson(
            "L0d0c0e000005",
            "docker",
            Kind::Do,
            "Pin base images by digest so rebuilds are reproducible.",
            &["ci-7103", "ci-7160"],
        ),
    ];
    let (files, diags) = deltas::compute(std::slice::from_ref(&s), &ls, &Default::default(), &rules);
    let proposed = rows(&files, "docker")[0]["provenance"]["lessons"].clone();
    assert_eq!(proposed, serde_json::json!(["L0d0c0e000004"]), "{diags:?}");
    let e006 = codes_for(&diags, "E006", "docker");
    assert_eq!(e006.len(), 1, "{diags:?}");
    let row_line = text.lines().position(|l| l.contains("apt-get upgrade")).unwrap() as u32 + 1;
    assert_eq!(line_of(e006[0]), ("skills/docker/SKILL.md".into(), row_line));
    assert!(
        (e006[0].message).contains("its line \"Never use `apt-get upgrade` in a Dockerfile\""),
        "{}",
        e006[0].message
    );
}

/// `deltas show` takes the skill's directory name (its delta file's); asked for by the
/// frontmatter `name` of a skill whose directory is named otherwise, or by the domain a skill's
/// directory is an alias of (`tf` for the `terraform` directory, `k8s` for a skill named
/// `kubernetes`), it says which directory to ask for instead of only "no such file".
#[test]
fn deltas_show_by_the_frontmatter_name_or_domain_points_at_the_directory() {
    let out = std::env::temp_dir().join(format!("skillc-h3-show-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let aliases = &Rules::builtin().aliases;
    let shown = deltas::show(&fixtures(), &out, "kubectl-playbook", aliases).unwrap();
    assert_eq!(
        shown,
        skill("kubectl-playbook").text,
        "no delta: the authored text"
    );
    let err = deltas::show(&fixtures(), &out, "kubernetes", aliases).unwrap_err();
    assert!(
        err.contains("the skill named kubernetes in its frontmatter is in the directory kubectl-playbook: `skillc deltas show kubectl-playbook`"),
        "{err}"
    );
    let err = deltas::show(&fixtures(), &out, "k8s", aliases).unwrap_err();
    assert!(
        err.contains("; the skill for the kubernetes domain is in the directory kubectl-playbook: `skillc deltas show kubectl-playbook`"),
        "{err}"
    );
    let err = deltas::show(&fixtures(), &out, "tf", aliases).unwrap_err();
    assert!(
        err.contains("; the skill for the terraform domain is in the directory terraform: `skillc deltas show terraform`"),
        "{err}"
    );
    let err = deltas::show(&fixtures(), &out, "helm", aliases).unwrap_err();
    assert!(!err.contains("frontmatter") && !err.contains("domain"), "{err}");
    std::fs::remove_dir_all(&out).unwrap();
}

/// A line that forbids a step before another ("Never run terraform apply before the plan is
/// reviewed") is contradicted by a rule that takes the step at that point ("Run terraform
/// apply before the plan is reviewed …"), not by one that takes it after ("Deploy … after
/// the migrations have run") or puts the other step first ("Run the migrations before
/// deploying …"). A line that waits ("Don't push the release tag until the changelog PR is
/// merged") is contradicted by a rule that does not wait ("… before the changelog PR is
/// merged"), not by one that does ("… once the changelog PR is merged").
#[test]
fn a_rule_against_an_authored_order_is_an_e006_and_one_that_keeps_it_is_not() {
    let text = "---\nname: release\ndescription: How the platform team cuts, tags and ships a release. Use when preparing or deploying one.\n---\n\n# Release\n\n\
                - Don't push the release tag until the changelog PR is merged.\n\
                - Never run terraform apply before the plan is reviewed by a second engineer.\n\
                - Never deploy to production before the migrations have run.\n\
                - Never rebase a shared branch before opening a PR.\n";
    let skill = authored("release", text);
    let cases = [
        (
            "Push the release tag before the changelog PR is merged so the build picks up the version.",
            Some("Don't push the release tag"),
        ),
        (
            "Run terraform apply before the plan is reviewed by a second engineer when the change is a hotfix.",
            Some("Never run terraform apply"),
        ),
        (
            "Rebase the shared branch before opening a PR so the review sees one linear history.",
            Some("Never rebase"),
        ),
        ("Push the release tag once the changelog PR is merged.", None),
        (
            "Deploy to production after the migrations have run in the release job.",
            None,
        ),
        ("Run the migrations before deploying to production.", None),
        // The line forbids it for a shared branch only; the rule names no shared branch.
        ("Rebase onto main before opening a PR.", None),
    ];
    let wrong = e006_mismatches(&skill, text, &cases, "L0a11ce5e000b");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// For each (rule text, the skill line it should contradict or `None`), the cases where the
/// `release` skill written as `text` gets E006 at other lines than that, when the rule joins
/// the ledger as a do lesson with id `id`.
fn e006_mismatches(skill: &BaseSkill, text: &str, cases: &[(&str, Option<&str>)], id: &str) -> Vec<String> {
    let line = |needle: &str| text.lines().position(|l| l.contains(needle)).unwrap() as u32 + 1;
    let rules = Rules::builtin();
    let mut wrong = Vec::new();
    for &(rule, contradicts) in cases {
        let mut ls = lessons();
        ls.push(lesson(id, "release", Kind::Do, rule, &["rel-2201", "rel-2214"]));
        let (_, diags) = deltas::compute(std::slice::from_ref(skill), &ls, &Default::default(), &rules);
        let got: Vec<u32> = codes_for(&diags, "E006", "release")
            .iter()
            .map(|d| line_of(d).1)
            .collect();
        let want: Vec<u32> = contradicts.into_iter().map(line).collect();
        if got != want {
            wrong.push(format!("{rule}: E006 at lines {got:?}, want {want:?}"));
        }
    }
    wrong
}

/// A line that tells two steps in one order with no negation ("Deploy the API only after the
/// migration job ran", "Run kubectl diff before kubectl apply") is contradicted by a rule
/// that tells them in the other order ("Deploy the API before running the migration job"),
/// worded as a plain instruction too: "only after" is the reverse of "before". A rule that
/// keeps the order in other words ("Run the migration job first, then deploy the API") or
/// says nothing about it is no E006.
#[test]
fn a_rule_that_reverses_an_authored_order_without_a_negation_is_an_e006() {
    let text = "---\nname: release\ndescription: How the platform team cuts, tags and ships a release. Use when preparing or deploying one.\n---\n\n# Release\n\n\
                - Deploy the API only after the migration job ran.\n\
                - Run kubectl diff before kubectl apply on the prod cluster.\n\
                - Merge the Renovate PR only after CI is green.\n\
                - Tag the release after the changelog is published.\n";
    let skill = authored("release", text);
    let cases = [
        (
            "Deploy the API before running the migration job so the rollout is not blocked.",
            Some("Deploy the API only after"),
        ),
        (
            "Run kubectl apply before kubectl diff on the prod cluster.",
            Some("Run kubectl diff"),
        ),
        (
            "Merge the Renovate PR before CI finishes.",
            Some("Merge the Renovate PR"),
        ),
        (
            "Tag the release before the changelog is published.",
            Some("Tag the release"),
        ),
        ("Run the migration job first, then deploy the API.", None),
        ("Deploy the API after running the migration job.", None),
        (
            "Run kubectl apply only after kubectl diff on the prod cluster.",
            None,
        ),
        ("Tag the release once the changelog is published.", None),
        ("Never deploy the API before the migration job ran.", None),
    ];
    let wrong = e006_mismatches(&skill, text, &cases, "L0a11ce5e000c");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
