//! Outcome: derive `passed` from an experience's checks (DESIGN §5.2), never more optimistic
//! than the checks.
//!
//! Only the latest run of each (label, target) counts; a check whose operation was refused did
//! not run; a check that ran before the last mutating operation that actually ran (ok or error)
//! is stale and does not count either way. A mutating tool called with a read-only
//! sub-command (`str_replace_editor` `view`, `policy.read_only_commands`) is no mutation. A
//! success is verified when at least one fresh check exists and every fresh check passed; with
//! no check that ran, a self-reported success passes unverified.

use std::collections::BTreeMap;

use rayon::prelude::*;

use crate::diagnostics::{Diagnostic, Sink, codes, short_list};
use crate::model::{Corpus, Experience, OpStatus, Outcome};
use crate::normalize::subject_id;
use crate::policy::Policy;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// The experience passed the outcome gate's input condition.
    pub passed: bool,
    /// At least one fresh latest check decided it (false: a self-reported, unverified success).
    pub verified: bool,
    /// A self-reported success that its own checks contradict.
    pub contradicted: bool,
    /// Passing checks that ran before the last mutating operation.
    pub stale: u32,
    /// The self-reported outcome, to say why a run did not pass (`failure`).
    pub outcome: Outcome,
}

impl Verdict {
    /// Why the experience did not pass, in a few words (`None` when it passed): the outcome it
    /// reported, or the checks that overrule a reported success. A fixed text for each case:
    /// a held-back group's diagnostic names one for every member.
    pub fn failure(&self, policy: &Policy) -> Option<&'static str> {
        Some(match self.outcome {
            _ if self.passed => return None,
            Outcome::Pivoted if !policy.allow_pivoted => "outcome pivoted, and policy allow_pivoted is off",
            Outcome::Failed => "outcome failed",
            Outcome::Abandoned => "outcome abandoned",
            Outcome::Succeeded if self.contradicted => {
                "outcome succeeded, but a check failed after the last change"
            }
            Outcome::Pivoted if self.contradicted => {
                "outcome pivoted, but a check failed after the last change"
            }
            Outcome::Succeeded => "outcome succeeded, but every check ran before the last change",
            Outcome::Pivoted => "outcome pivoted, but every check ran before the last change",
        })
    }
}

/// The latest run of one (label, target) check.
struct Run<'a> {
    label: &'a str,
    index: usize,
    passed: bool,
}

/// Does the self-reported outcome claim success (under the policy)?
pub fn reports_success(exp: &Experience, policy: &Policy) -> bool {
    match exp.outcome() {
        Outcome::Succeeded => true,
        Outcome::Pivoted => policy.allow_pivoted,
        Outcome::Abandoned | Outcome::Failed => false,
    }
}

/// The latest runs that ran, split into (fresh, stale).
fn latest_runs<'a>(exp: &'a Experience, policy: &Policy) -> (Vec<Run<'a>>, Vec<Run<'a>>) {
    let mut latest: BTreeMap<(&str, Option<&str>), Run> = BTreeMap::new();
    for (index, op) in exp.operations.iter().enumerate() {
        let Some(check) = &op.check else { continue };
        if op.status == OpStatus::Refused {
            continue;
        }
        // A check whose call errored did not pass, whatever it recorded.
        let passed = check.passed && op.status == OpStatus::Ok;
        let key = (check.label.as_str(), check.target.as_deref());
        latest.insert(
            key,
            Run {
                label: &check.label,
                index,
                passed,
            },
        );
    }
    // A record that ran no check (about half) has nothing to split: no call to look at.
    if latest.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let mut runs: Vec<Run> = latest.into_values().collect();
    runs.sort_by_key(|r| r.index);
    // Only a mutating call after the first run can make a run stale, so the search for the
    // last one stops there: a record that checks after its last edit (most) asks no call
    // whether it mutates, where a search from the end asked every call back to that edit.
    let first = runs[0].index;
    let last_mutation = (exp.operations[first + 1..].iter())
        .rposition(|op| op.status != OpStatus::Refused && policy.is_mutating_call(&op.tool, &op.args))
        .map(|m| first + 1 + m);
    runs.into_iter()
        .partition(|r| last_mutation.is_none_or(|m| r.index >= m))
}

pub fn derive(exp: &Experience, policy: &Policy) -> Verdict {
    let success = reports_success(exp, policy);
    let (fresh, stale) = latest_runs(exp, policy);
    let stale_passing = stale.iter().filter(|r| r.passed).count() as u32;
    if fresh.is_empty() && stale.is_empty() {
        return Verdict {
            passed: success,
            verified: false,
            contradicted: false,
            stale: 0,
            outcome: exp.outcome(),
        };
    }
    let all_fresh_pass = fresh.iter().all(|r| r.passed);
    let contradicted = success && !all_fresh_pass;
    Verdict {
        passed: success && !fresh.is_empty() && all_fresh_pass,
        verified: !fresh.is_empty(),
        contradicted,
        stale: stale_passing,
        outcome: exp.outcome(),
    }
}

/// One verdict per experience (same order), with `success-contradicted`, `stale-checks` and
/// `unverified-success` diagnostics.
pub fn derive_all(corpus: &Corpus, policy: &Policy, sink: &mut Sink) -> Vec<Verdict> {
    let results: Vec<(Verdict, Sink)> = corpus
        .experiences
        .par_iter()
        .map(|exp| {
            let verdict = derive(exp, policy);
            let diags = diagnose(exp, &verdict, policy);
            (verdict, diags)
        })
        .collect();
    let mut verdicts = Vec::with_capacity(results.len());
    for (v, d) in results {
        verdicts.push(v);
        sink.extend(d);
    }
    sink.extend(unverified_notes(corpus, &verdicts, policy));
    verdicts
}

/// `unverified-success` notes, one per experience and domain. A large corpus has hundreds of
/// thousands of these; they fold per domain as they are made (`diagnostics::folding`).
fn unverified_notes(corpus: &Corpus, verdicts: &[Verdict], policy: &Policy) -> Sink {
    let unverified = (corpus.experiences.par_iter().zip(verdicts))
        .filter(|(exp, v)| reports_success(exp, policy) && v.passed && !v.verified)
        .map(|(exp, _)| exp);
    crate::diagnostics::folding(unverified.flat_map_iter(|exp| {
        // The id looked at once per record, not once per domain.
        let subject = subject_id(&exp.id);
        let note = |domain: Option<&str>| {
            let d = Diagnostic::new(
                codes::UNVERIFIED_SUCCESS,
                format!(
                    "experience reports {} with no check to verify it",
                    exp.outcome().as_str()
                ),
            )
            .subject(subject)
            .at(&exp.source)
            .experiences([&exp.id]);
            match domain {
                Some(domain) => d.domain(domain),
                None => d,
            }
        };
        // One per domain; a record with none still gets its note.
        if exp.domains.is_empty() {
            vec![note(None)]
        } else {
            exp.domains.iter().map(|d| note(Some(d))).collect()
        }
    }))
}

fn diagnose(exp: &Experience, verdict: &Verdict, policy: &Policy) -> Sink {
    let mut diags = Sink::new();
    let success = reports_success(exp, policy);
    if !success {
        return diags;
    }
    let outcome = exp.outcome().as_str();
    let subject = subject_id(&exp.id);
    if verdict.contradicted {
        let (fresh, _) = latest_runs(exp, policy);
        let mut failing: Vec<&str> = fresh.iter().filter(|r| !r.passed).map(|r| r.label).collect();
        failing.sort_unstable();
        failing.dedup();
        let message = format!(
            "experience reports {outcome} but its check {} failed",
            short_list(&failing, 3)
        );
        diags.push(
            Diagnostic::new(codes::SUCCESS_CONTRADICTED, message)
                .subject(subject)
                .at(&exp.source)
                .with("outcome", outcome)
                .with("failing", failing)
                .with("domains", exp.domains.clone())
                .experiences([&exp.id]),
        );
    } else if !verdict.passed && verdict.stale > 0 {
        let message = format!(
            "experience reports {outcome} but its {} passing check{} ran before the last change",
            verdict.stale,
            if verdict.stale == 1 { "" } else { "s" }
        );
        diags.push(
            Diagnostic::new(codes::STALE_CHECKS, message)
                .subject(subject)
                .at(&exp.source)
                .with("outcome", outcome)
                .with("stale", verdict.stale)
                .with("domains", exp.domains.clone())
                .experiences([&exp.id]),
        );
    }
    diags
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Check, Operation, SourceLoc};
    use crate::policy::Rules;
    use serde_json::json;

    fn policy() -> Policy {
        Rules::builtin().policy
    }

    #[test]
    fn a_failures_fixed_text_names_its_outcome_as_the_words_did() {
        // The texts as they were written from the outcome's name, for every case.
        let written = |v: &Verdict, policy: &Policy| -> Option<String> {
            let outcome = v.outcome.as_str();
            Some(match v.outcome {
                _ if v.passed => return None,
                Outcome::Pivoted if !policy.allow_pivoted => {
                    "outcome pivoted, and policy allow_pivoted is off".to_string()
                }
                Outcome::Failed | Outcome::Abandoned => format!("outcome {outcome}"),
                _ if v.contradicted => format!("outcome {outcome}, but a check failed after the last change"),
                _ => format!("outcome {outcome}, but every check ran before the last change"),
            })
        };
        for allow_pivoted in [false, true] {
            let mut policy = policy();
            policy.allow_pivoted = allow_pivoted;
            for outcome in [
                Outcome::Succeeded,
                Outcome::Pivoted,
                Outcome::Abandoned,
                Outcome::Failed,
            ] {
                for (passed, contradicted) in [(false, false), (false, true), (true, false)] {
                    let v = Verdict {
                        passed,
                        verified: false,
                        contradicted,
                        stale: 0,
                        outcome,
                    };
                    assert_eq!(
                        v.failure(&policy).map(str::to_string),
                        written(&v, &policy),
                        "{v:?}"
                    );
                }
            }
        }
    }

    fn op(tool: &str, args: serde_json::Value, status: OpStatus) -> Operation {
        Operation {
            tool: tool.into(),
            args: args.into(),
            status,
            error: (status == OpStatus::Error).then(|| "exit status 1".into()),
            secret_print: 0,
            check: None,
        }
    }

    fn edit(path: &str) -> Operation {
        op(
            "edit_file",
            json!({"file_path": path, "old_string": "a", "new_string": "b"}),
            OpStatus::Ok,
        )
    }

    fn check(label: &str, target: Option<&str>, passed: bool) -> Operation {
        let mut o = op(
            "run_shell_command",
            json!({"command": format!("{label} -q"), "cwd": "/srv/billing"}),
            if passed { OpStatus::Ok } else { OpStatus::Error },
        );
        o.check = Some(Box::new(Check {
            label: label.into(),
            target: target.map(String::from),
            passed,
        }));
        o
    }

    fn exp(outcome: Outcome, ops: Vec<Operation>) -> Experience {
        Experience {
            id: "exp-2024-05-02-a".into(),
            recorded_at: 1_714_600_000_000,
            domains: vec!["python".into(), "django".into()],
            outcome: Some(outcome),
            operations: ops,
            source: SourceLoc {
                file: "records/agent.jsonl".into(),
                line: 12,
            },
            ..Default::default()
        }
    }

    fn run(e: &Experience, policy: &Policy) -> (Verdict, Sink) {
        let corpus = Corpus {
            experiences: vec![e.clone()],
            claims: vec![],
        };
        let mut sink = Sink::new();
        let v = derive_all(&corpus, policy, &mut sink);
        (v[0].clone(), sink)
    }

    #[test]
    fn fresh_passing_checks_verify() {
        let e = exp(
            Outcome::Succeeded,
            vec![
                check("pytest", Some("tests/"), false),
                edit("billing/models.py"),
                check("pytest", Some("tests/"), true),
                check("ruff", None, true),
            ],
        );
        let (v, sink) = run(&e, &policy());
        assert_eq!(
            v,
            Verdict {
                passed: true,
                verified: true,
                contradicted: false,
                stale: 0,
                outcome: Outcome::Succeeded,
            }
        );
        assert!(sink.is_empty());
    }

    #[test]
    fn stale_check_does_not_count() {
        let e = exp(
            Outcome::Succeeded,
            vec![check("pytest", None, true), edit("billing/views.py")],
        );
        let (v, sink) = run(&e, &policy());
        assert!(!v.passed);
        assert!(!v.verified);
        assert_eq!(v.stale, 1);
        assert_eq!(sink.len(), 1);
        assert_eq!(sink[0].code, codes::STALE_CHECKS);
        assert_eq!(sink[0].subject, "exp-2024-05-02-a");
        assert_eq!(sink[0].experience_ids(), ["exp-2024-05-02-a"]);

        // A refused edit never ran, so it does not make the check stale.
        let mut refused_edit = edit("billing/views.py");
        refused_edit.status = OpStatus::Refused;
        let e = exp(
            Outcome::Succeeded,
            vec![check("pytest", None, true), refused_edit],
        );
        assert!(run(&e, &policy()).0.passed);

        // A failed edit did run (it may have written half a file).
        let mut failed_edit = edit("billing/views.py");
        failed_edit.status = OpStatus::Error;
        let e = exp(Outcome::Succeeded, vec![check("pytest", None, true), failed_edit]);
        assert!(!run(&e, &policy()).0.passed);

        // A stale failure does not contradict a fresh pass of another check.
        let e = exp(
            Outcome::Succeeded,
            vec![
                check("mypy", None, false),
                edit("billing/views.py"),
                check("pytest", None, true),
            ],
        );
        let (v, sink) = run(&e, &policy());
        assert!(v.passed && v.verified && !v.contradicted);
        assert!(sink.is_empty());
    }

    /// OpenHands' and Anthropic's editor tools are mutating, but their `view` only reads a
    /// file: the tests before it stay fresh. Any other sub-command is a change.
    #[test]
    fn an_editor_view_leaves_checks_fresh() {
        let editor = |tool: &str, command: &str| {
            op(
                tool,
                json!({"command": command, "path": "/workspace/app/models.py"}),
                OpStatus::Ok,
            )
        };
        for tool in ["str_replace_editor", "str_replace_based_edit_tool"] {
            let e = exp(
                Outcome::Succeeded,
                vec![check("pytest", None, true), editor(tool, "view")],
            );
            let (v, sink) = run(&e, &policy());
            assert!(v.passed && v.verified && v.stale == 0, "{tool}: {v:?}");
            assert!(sink.is_empty(), "{tool}: {sink:?}");
            let e = exp(
                Outcome::Succeeded,
                vec![
                    check("pytest", None, true),
                    editor(tool, "str_replace"),
                    editor(tool, "view"),
                ],
            );
            let (v, sink) = run(&e, &policy());
            assert!(!v.passed && v.stale == 1, "{tool}: {v:?}");
            assert_eq!(sink[0].code, codes::STALE_CHECKS);
        }
    }

    /// The search for the last mutating call stops at the first run: every session of up to
    /// four calls (edits, refused edits, editor views, two checks passing or failing) splits
    /// its runs as a search over the whole session does.
    #[test]
    fn runs_split_as_a_search_of_the_whole_session_splits_them() {
        let policy = policy();
        let mut refused_edit = edit("billing/views.py");
        refused_edit.status = OpStatus::Refused;
        let view = op(
            "str_replace_editor",
            json!({"command": "view", "path": "/workspace/app/models.py"}),
            OpStatus::Ok,
        );
        let calls = [
            edit("billing/models.py"),
            refused_edit,
            view,
            check("pytest", Some("tests/"), true),
            check("pytest", Some("tests/"), false),
            check("ruff", None, true),
        ];
        let whole = |e: &Experience| {
            let mut latest: BTreeMap<(&str, Option<&str>), usize> = BTreeMap::new();
            for (i, op) in e.operations.iter().enumerate() {
                if let Some(c) = op.check.as_ref().filter(|_| op.status != OpStatus::Refused) {
                    latest.insert((c.label.as_str(), c.target.as_deref()), i);
                }
            }
            let last = (e.operations.iter()).rposition(|op| {
                op.status != OpStatus::Refused && policy.is_mutating_call(&op.tool, &op.args)
            });
            let mut runs: Vec<usize> = latest.into_values().collect();
            runs.sort_unstable();
            runs.into_iter()
                .partition::<Vec<usize>, _>(|&r| last.is_none_or(|m| r >= m))
        };
        let mut sessions = 0;
        for len in 1..=4u32 {
            for code in 0..calls.len().pow(len) {
                let ops = (0..len)
                    .map(|k| calls[code / calls.len().pow(k) % calls.len()].clone())
                    .collect();
                let e = exp(Outcome::Succeeded, ops);
                let (fresh, stale) = latest_runs(&e, &policy);
                let split = |runs: Vec<Run>| runs.iter().map(|r| r.index).collect::<Vec<_>>();
                assert_eq!((split(fresh), split(stale)), whole(&e), "{:?}", e.operations);
                sessions += 1;
            }
        }
        assert_eq!(sessions, 6 + 36 + 216 + 1296);
    }

    #[test]
    fn refused_check_did_not_run() {
        let mut refused = check("pytest", None, true);
        refused.status = OpStatus::Refused;
        // The refused re-run does not replace the failing run before it.
        let e = exp(
            Outcome::Succeeded,
            vec![check("pytest", None, false), refused.clone()],
        );
        let (v, sink) = run(&e, &policy());
        assert!(!v.passed && v.contradicted);
        assert_eq!(sink[0].code, codes::SUCCESS_CONTRADICTED);

        // Only a refused check: nothing ran, so the success is unverified.
        let e = exp(Outcome::Succeeded, vec![refused]);
        let (v, sink) = run(&e, &policy());
        assert!(v.passed && !v.verified);
        assert_eq!(sink.len(), 2);
        assert!(sink.iter().all(|d| d.code == codes::UNVERIFIED_SUCCESS));
    }

    #[test]
    fn contradicted_success_names_the_failing_check() {
        let e = exp(
            Outcome::Succeeded,
            vec![
                edit("billing/tasks.py"),
                check("pytest", Some("tests/test_tasks.py"), false),
                check("ruff", None, true),
            ],
        );
        let (v, sink) = run(&e, &policy());
        assert!(!v.passed && v.verified && v.contradicted);
        assert_eq!(sink.len(), 1);
        let d = &sink[0];
        assert_eq!(d.code, codes::SUCCESS_CONTRADICTED);
        assert_eq!(
            d.message,
            "experience reports succeeded but its check pytest failed"
        );
        assert_eq!(d.evidence["failing"], json!(["pytest"]));
        assert_eq!(d.location.as_ref().unwrap().line, 12);

        // An error status is a failure even when the check recorded a pass.
        let mut lying = check("pytest", None, true);
        lying.status = OpStatus::Error;
        let e = exp(Outcome::Succeeded, vec![lying]);
        assert!(run(&e, &policy()).0.contradicted);
    }

    #[test]
    fn failed_outcome_never_passes() {
        let e = exp(Outcome::Failed, vec![check("pytest", None, true)]);
        let (v, sink) = run(&e, &policy());
        assert!(!v.passed && v.verified && !v.contradicted);
        assert!(sink.is_empty());
        let e = exp(Outcome::Abandoned, vec![]);
        let (v, sink) = run(&e, &policy());
        assert!(!v.passed);
        assert!(sink.is_empty());
    }

    #[test]
    fn pivoted_follows_policy() {
        let e = exp(Outcome::Pivoted, vec![edit("a.py"), check("pytest", None, true)]);
        let mut p = policy();
        assert!(!p.allow_pivoted);
        assert!(!run(&e, &p).0.passed);
        p.allow_pivoted = true;
        assert!(run(&e, &p).0.passed);
        let unchecked = exp(Outcome::Pivoted, vec![]);
        assert!(run(&unchecked, &p).0.passed);
        p.allow_pivoted = false;
        assert!(!run(&unchecked, &p).0.passed);
    }

    #[test]
    fn unverified_success_notes_per_domain() {
        let e = exp(Outcome::Succeeded, vec![edit("settings.py")]);
        let (v, sink) = run(&e, &policy());
        assert!(v.passed && !v.verified);
        let mut domains: Vec<_> = sink.iter().map(|d| d.domain.clone().unwrap()).collect();
        domains.sort();
        assert_eq!(domains, ["django", "python"]);
        assert!(
            sink.iter()
                .all(|d| d.code == codes::UNVERIFIED_SUCCESS && d.experience_ids() == ["exp-2024-05-02-a"])
        );
    }

    #[test]
    fn many_unverified_successes_fold_into_one_note_per_domain() {
        // Seven unchecked successes in python (one pivoted, allowed by policy), two of them
        // also in django, one also in flask: python and django fold (this note always
        // does), flask's single note stays as it is.
        let mut corpus = Corpus::default();
        for i in 0..7u32 {
            let mut e = exp(Outcome::Succeeded, vec![edit("app/models.py")]);
            e.id = format!("exp-2024-05-{:02}-b", 20 - i).into();
            e.source.line = 30 + i;
            e.domains = match i {
                0 | 1 => vec!["python".into(), "django".into()],
                6 => vec!["python".into(), "flask".into()],
                _ => vec!["python".into()],
            };
            if i == 0 {
                e.outcome = Some(Outcome::Pivoted);
            }
            corpus.experiences.push(e);
        }
        let mut p = policy();
        p.allow_pivoted = true;
        let mut sink = Sink::new();
        derive_all(&corpus, &p, &mut sink);
        let sink = crate::diagnostics::finalize(sink);
        let python: Vec<&Diagnostic> = sink
            .iter()
            .filter(|d| d.domain.as_deref() == Some("python"))
            .collect();
        assert_eq!(python.len(), 1);
        let d = python[0];
        // The first by location is line 30, the pivoted one; the other six succeeded, so the
        // folded note quotes it as the first, not as what all seven said.
        assert_eq!(
            d.message,
            "a success carries no checks and counts as unverified (7 times; the first, exp-2024-05-20-b: experience reports pivoted with no check to verify it)"
        );
        assert_eq!(d.subject, "python");
        assert!(d.location.is_none());
        assert_eq!(d.evidence["count"], json!(7));
        let mut ids: Vec<String> = corpus.experiences.iter().map(|e| e.id.to_string()).collect();
        ids.sort();
        assert_eq!(d.experience_ids(), ids);
        let in_domain = |name: &str| -> Vec<&Diagnostic> {
            sink.iter()
                .filter(|d| d.domain.as_deref() == Some(name))
                .collect()
        };
        let django = in_domain("django");
        assert_eq!(django.len(), 1);
        assert!(django[0].message.contains("(2 times; the first, "));
        assert_eq!(
            django[0].experience_ids(),
            ["exp-2024-05-19-b", "exp-2024-05-20-b"]
        );
        let flask = in_domain("flask");
        assert_eq!(flask.len(), 1);
        assert_eq!(flask[0].subject, "exp-2024-05-14-b");
        assert_eq!(flask[0].location.as_ref().map(|l| l.line), Some(36));
    }

    #[test]
    fn verdicts_keep_corpus_order() {
        let mut corpus = Corpus::default();
        for i in 0..64 {
            let outcome = if i % 3 == 0 {
                Outcome::Failed
            } else {
                Outcome::Succeeded
            };
            let mut e = exp(outcome, vec![check("pytest", None, i % 2 == 0)]);
            e.id = format!("exp-{i:03}").into();
            corpus.experiences.push(e);
        }
        let mut sink = Sink::new();
        let v = derive_all(&corpus, &policy(), &mut sink);
        assert_eq!(v.len(), 64);
        for (i, verdict) in v.iter().enumerate() {
            assert_eq!(verdict.passed, i % 3 != 0 && i % 2 == 0, "exp-{i:03}");
        }
        let subjects: Vec<_> = sink.iter().map(|d| d.subject.clone()).collect();
        let mut sorted = subjects.clone();
        sorted.sort();
        assert_eq!(subjects, sorted);
    }
}
