//! The narrative gate against a labelled set of realistic do-candidate texts
//! (`tests/data/narrative.jsonl`): at least 90% right per class, and the DESIGN §5.4 examples
//! exactly. Run with `--nocapture` to see the per-class accuracy and every miss.

use skillc::narrative::Narrative;

const RULES: &str = include_str!("../rules/narrative.yaml");
const DATA: &str = include_str!("data/narrative.jsonl");

fn classifier() -> Narrative {
    Narrative::from_yaml(RULES).expect("rules/narrative.yaml is valid")
}

fn labelled() -> Vec<(String, bool)> {
    DATA.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let v: serde_json::Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
            let text = v["text"].as_str().expect("text").to_string();
            let narrative = v["narrative"].as_bool().expect("narrative");
            (text, narrative)
        })
        .collect()
}

#[test]
fn accuracy_per_class_is_at_least_90_percent() {
    let n = classifier();
    let data = labelled();
    assert!(data.len() >= 100, "labelled set has {} sentences", data.len());
    let mut failures = Vec::new();
    for (label, class) in [(true, "narrative"), (false, "rule")] {
        let members: Vec<&(String, bool)> = data.iter().filter(|(_, l)| *l == label).collect();
        let mut right = 0usize;
        for (text, _) in &members {
            let c = n.classify(text);
            if c.narrative == label {
                right += 1;
            } else {
                println!("MISS [{class}] score {} {:?}: {text}", c.score, c.signals);
            }
        }
        let total = members.len();
        // integer per-mille, printed as a percentage with one decimal
        let permille = right * 1000 / total.max(1);
        println!("{class}: {right}/{total} = {}.{}%", permille / 10, permille % 10);
        assert!(total >= 40, "{class}: only {total} examples");
        if right * 10 < total * 9 {
            failures.push(format!("{class}: {right}/{total} below 90%"));
        }
    }
    assert!(failures.is_empty(), "{failures:?}");
}

#[test]
fn design_examples_exactly() {
    let n = classifier();
    for text in [
        "Community PR merged cleanly despite significant changes to maintenance.py on bot…",
        "Leveraged existing find_all_duplicates() and _has_negation_pair() functions from…",
    ] {
        let c = n.classify(text);
        assert!(c.narrative, "must be narrative: {text} {c:?}");
        assert!(!c.signals.is_empty());
    }
    let rule = "When a fake stands in for a component with known divergent behaviour, the fake must reproduce the divergence.";
    let c = n.classify(rule);
    assert!(!c.narrative, "must be a rule: {rule} {c:?}");
    assert!(c.signals.iter().any(|s| s == "condition"), "{c:?}");
    assert!(c.signals.iter().any(|s| s == "modal"), "{c:?}");
}

#[test]
fn builtin_rules_expose_the_threshold() {
    let n = classifier();
    let t = n.value_of("narrative_threshold").expect("narrative_threshold");
    // The value `rules/narrative.yaml` sets, read from the file itself.
    let yaml: serde_yaml::Value = serde_yaml::from_str(RULES).unwrap();
    let in_file = yaml["threshold"]
        .as_i64()
        .expect("narrative.yaml sets a threshold");
    assert_eq!(t, in_file.to_string());
    assert_eq!(n.threshold() as i64, in_file);
    // and through the policy, as `skillc explain` asks for it
    let rules = skillc::policy::Rules::builtin();
    assert_eq!(rules.policy.value_of("narrative_threshold", &rules), Some(t));
}

/// For tuning `rules/narrative.yaml`: every sentence with its label, score and signals.
/// `cargo test --test narrative_classifier print_every_score -- --ignored --nocapture`
#[test]
#[ignore]
fn print_every_score() {
    let n = classifier();
    for (t, l) in labelled() {
        let c = n.classify(&t);
        println!(
            "{} {:>3} {:?} | {}",
            if l { "N" } else { "R" },
            c.score,
            c.signals,
            t
        );
    }
}
