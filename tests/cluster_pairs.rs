//! The labelled lesson pairs (`tests/data/pairs.jsonl`): every pair is compiled as its own
//! two-candidate block through `skillc::cluster::cluster`, and the merges are scored.

use std::collections::BTreeSet;

use skillc::cluster::{Lexicon, cluster};
use skillc::model::{Candidate, Kind, Origin, Source};
use unicode_segmentation::UnicodeSegmentation;

struct Pair {
    a: String,
    b: String,
    same: bool,
    note: String,
}

fn pairs() -> Vec<Pair> {
    let text = include_str!("data/pairs.jsonl");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("valid pair line");
            Pair {
                a: v["a"].as_str().unwrap().to_string(),
                b: v["b"].as_str().unwrap().to_string(),
                same: v["same"].as_bool().unwrap(),
                note: v["note"].as_str().unwrap_or("").to_string(),
            }
        })
        .collect()
}

fn candidate(i: u32, text: &str) -> Candidate {
    Candidate {
        source: Source::Experience(i),
        record_id: format!("exp-{i}").into(),
        domain: "python".into(),
        kind: Kind::Do,
        origin: Origin::Lesson,
        text: text.into(),
        key: None,
        working: None,
        recorded_at: 1_700_000_000_000 + i as i64,
        project: None,
        blessed: false,
        refusal: None,
        outcome_failed: false,
        narrative_score: 0,
        narrative_signals: 0,
        narrative: false,
        reasons: Vec::new(),
    }
}

fn lexicon() -> Lexicon {
    Lexicon::from_yaml(include_str!("../rules/lexicon.yaml")).expect("lexicon loads")
}

/// (precision, recall) of `merged` against the labels.
fn pr(pairs: &[Pair], merged: &[bool]) -> (f64, f64, usize, usize, usize) {
    let tp = pairs.iter().zip(merged).filter(|(p, m)| p.same && **m).count();
    let fp = pairs.iter().zip(merged).filter(|(p, m)| !p.same && **m).count();
    let fneg = pairs.iter().zip(merged).filter(|(p, m)| p.same && !**m).count();
    let precision = if tp + fp == 0 {
        1.0
    } else {
        tp as f64 / (tp + fp) as f64
    };
    let recall = tp as f64 / (tp + fneg) as f64;
    (precision, recall, tp, fp, fneg)
}

fn word_set(s: &str) -> BTreeSet<String> {
    s.unicode_words().map(|w| w.to_lowercase()).collect()
}

fn jaccard(a: &str, b: &str) -> f64 {
    let (a, b) = (word_set(a), word_set(b));
    let inter = a.intersection(&b).count() as f64;
    let union = a.union(&b).count() as f64;
    if union == 0.0 { 0.0 } else { inter / union }
}

#[test]
fn labelled_pairs_precision_and_recall() {
    let pairs = pairs();
    assert!(pairs.len() >= 80, "the labelled set has {} pairs", pairs.len());
    let lx = lexicon();
    let mut merged = Vec::new();
    for p in &pairs {
        let cands = vec![candidate(0, &p.a), candidate(1, &p.b)];
        let clusters = cluster(&cands, &lx);
        let m = clusters.len() == 1;
        if m != p.same {
            println!(
                "{} [{}] {:?} | {:?} ({:?})",
                if m { "FALSE MERGE" } else { "MISSED     " },
                p.note,
                p.a,
                p.b,
                skillc::cluster::verdict(&lx, &p.a, &p.b),
            );
        }
        merged.push(m);
    }
    let (precision, recall, tp, fp, fneg) = pr(&pairs, &merged);
    let same = pairs.iter().filter(|p| p.same).count();
    println!(
        "lexicon: {} pairs ({} same, {} near misses): precision {precision:.2} recall {recall:.2} (tp {tp}, fp {fp}, fn {fneg})",
        pairs.len(),
        same,
        pairs.len() - same
    );
    // Baseline: plain word-set Jaccard at a sweep of thresholds.
    for t in [0.3, 0.4, 0.5, 0.6, 0.7, 0.8] {
        let m: Vec<bool> = pairs.iter().map(|p| jaccard(&p.a, &p.b) >= t).collect();
        let (p, r, ..) = pr(&pairs, &m);
        println!("baseline word-set jaccard >= {t:.1}: precision {p:.2} recall {r:.2}");
    }
    assert!(precision >= 0.95, "precision {precision:.3} < 0.95");
    assert!(recall >= 0.85, "recall {recall:.3} < 0.85");
}
