//! Gate: evidence checks for claims (before clustering), then per-cluster admission
//! (DESIGN §5.4). Every failing reason is recorded, not only the first, so `why` can count
//! reasons honestly.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::cluster::fx::{FxMap as HashMap, FxSet};

use rayon::prelude::*;
use serde_json::Value;

use crate::diagnostics::{Diagnostic, Evidence, Sink, codes, counted, plural, short_list};
use crate::model::{Candidate, Cluster, Corpus, Kind, Names, Operation, Refusal, Source, SourceLoc};
use crate::outcome::Verdict;
use crate::policy::Rules;

/// A cluster that passed the gates, with its admissible members in time order.
#[derive(Clone, Debug, PartialEq)]
pub struct Admitted {
    pub cluster: u32,
    pub members: Vec<u32>,
}

/// Members of one cluster held back for one reason.
#[derive(Clone, Debug, PartialEq)]
pub struct Held {
    pub cluster: u32,
    pub code: &'static str,
    pub members: Vec<u32>,
    /// No member was admissible: the whole cluster is held back.
    pub whole_cluster: bool,
}

/// Diagnostic codes that explain a decision: a few fixed combinations, so static slices
/// rather than a vector for each of a million candidates.
pub type Codes = &'static [&'static str];

/// What the gates decided, per candidate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GateVerdict {
    /// Refused before clustering; the codes say why.
    Refused(Codes),
    /// Held back by a per-candidate flag travelling in its cluster.
    HeldBack(Codes),
    /// An admissible member of an admitted cluster; the lifecycle decides the rest.
    Admitted,
}

#[derive(Clone, Debug, Default)]
pub struct GateResult {
    pub admitted: Vec<Admitted>,
    /// Members held back, one group per (cluster, reason), in cluster order: each becomes a
    /// diagnostic (`held_diagnostics`).
    pub held: Vec<Held>,
    /// One per candidate, same order as the candidate list.
    pub verdicts: Vec<Option<GateVerdict>>,
    /// The cluster each clustered candidate belongs to (index into the cluster list).
    pub cluster_of: Vec<Option<u32>>,
}

/// Refuses claims whose evidence is fabricated (an id that exists nowhere) or unsupported
/// (an experience that does not back the claim). Runs before clustering so a refused claim
/// never joins a cluster.
pub fn check_claims(
    corpus: &Corpus,
    verdicts: &[Verdict],
    candidates: &mut [Candidate],
    names: &Names,
    sink: &mut Sink,
) {
    if corpus.claims.is_empty() {
        return;
    }
    let index: HashMap<&str, usize> = corpus
        .experiences
        .iter()
        .enumerate()
        .map(|(i, e)| (&*e.id, i))
        .collect();
    // The operation keys of every experience a keyed do-claim cites, once each: a claim may
    // cite thousands of experiences, many claims cite the same ones, and a key is computed from
    // the call's parsed arguments.
    let cited: BTreeSet<usize> = (candidates.iter())
        .filter(|c| c.refusal.is_none() && c.kind == Kind::Do && c.key().is_some())
        .filter_map(|c| match c.source {
            Source::Claim(ci) => Some(&corpus.claims[ci as usize].evidence),
            Source::Experience(_) => None,
        })
        .flat_map(|evidence| evidence.iter().filter_map(|id| index.get(&id[..]).copied()))
        .collect();
    let keys_of: HashMap<usize, FxSet<String>> = (cited.into_par_iter())
        .map(|i| {
            (
                i,
                corpus.experiences[i]
                    .operations
                    .iter()
                    .map(Operation::key)
                    .collect(),
            )
        })
        .collect();
    let claim_ids: FxSet<&str> = corpus.claims.iter().map(|c| &*c.id).collect();
    for c in candidates.iter_mut() {
        let Source::Claim(ci) = c.source else { continue };
        if c.refusal.is_some() {
            continue;
        }
        let claim = &corpus.claims[ci as usize];
        let fabricated: Vec<String> = claim
            .evidence
            .iter()
            .filter(|id| !index.contains_key(&id[..]))
            .map(|id| id.to_string())
            .collect();
        if !fabricated.is_empty() {
            // Evidence must be experiences: a claim citing another claim is told so.
            let claims: Vec<String> = (fabricated.iter())
                .filter(|id| claim_ids.contains(&id[..]))
                .cloned()
                .collect();
            let which = if claims.is_empty() {
                String::new()
            } else {
                format!(" ({} a claim, not an experience)", short_list(&claims, 3))
            };
            sink.push(
                Diagnostic::new(
                    codes::FABRICATED_EVIDENCE,
                    format!(
                        "claim cites {} that {} no experience in the input: {}{which}",
                        plural(fabricated.len(), "id", "ids"),
                        if fabricated.len() == 1 { "names" } else { "name" },
                        short_list(&fabricated, 3)
                    ),
                )
                .subject(&*claim.id)
                .at(&claim.loc)
                .domain(names.get(c.domain))
                .with("missing", fabricated.clone())
                .with("claim", &*claim.id)
                .experiences(claim.evidence.iter().filter(|id| index.contains_key(&id[..]))),
            );
            c.refusal = Some(Box::new(Refusal::FabricatedEvidence { ids: fabricated }));
            continue;
        }
        let unsupported: Vec<String> = claim
            .evidence
            .iter()
            .filter(|id| {
                let i = index[&id[..]];
                let exp = &corpus.experiences[i];
                let in_domain = exp.domains.iter().any(|d| **d == *names.get(c.domain));
                // Blessing never bypasses the evidence gate (DESIGN §5.4).
                let passed = verdicts[i].passed;
                let on_key = || match c.key() {
                    None => true,
                    Some(k) => keys_of.get(&i).is_some_and(|keys| keys.contains(k)),
                };
                let supports = match c.kind {
                    Kind::Do => in_domain && passed && on_key(),
                    Kind::Avoid | Kind::Watch => in_domain,
                };
                !supports
            })
            .map(|id| id.to_string())
            .collect();
        if !unsupported.is_empty() {
            let what = match c.kind {
                Kind::Do if c.key().is_some() => {
                    "passed experiences in its domain that ran its operation key"
                }
                Kind::Do => "passed experiences in its domain",
                _ => "experiences in its domain",
            };
            sink.push(
                Diagnostic::new(
                    codes::UNSUPPORTED_EVIDENCE,
                    format!(
                        "claim cites {} that {} not {what}: {}",
                        counted(unsupported.len(), "experience"),
                        if unsupported.len() == 1 { "is" } else { "are" },
                        short_list(&unsupported, 3)
                    ),
                )
                .subject(&*claim.id)
                .at(&claim.loc)
                .domain(names.get(c.domain))
                .with("claim", &*claim.id)
                .with("unsupported", unsupported.clone())
                .experiences(&unsupported),
            );
            c.refusal = Some(Box::new(Refusal::UnsupportedEvidence { ids: unsupported }));
        }
    }
}

/// The diagnostic codes of a refused candidate.
pub fn refusal_codes(r: &Refusal) -> Codes {
    match r {
        Refusal::Credential { .. } => &[codes::CREDENTIAL_REFUSED],
        Refusal::InvalidDomain { .. } => &[codes::INVALID_DOMAIN],
        Refusal::FabricatedEvidence { .. } => &[codes::FABRICATED_EVIDENCE],
        Refusal::UnsupportedEvidence { .. } => &[codes::UNSUPPORTED_EVIDENCE],
    }
}

/// Every per-candidate reason that keeps a clustered candidate out of its cluster's lesson.
pub fn hold_reasons(c: &Candidate) -> Codes {
    match (c.outcome_failed(), c.narrative()) {
        (false, false) => &[],
        (true, false) => &[codes::OUTCOME_GATE],
        (false, true) => &[codes::NARRATIVE_CANDIDATE],
        (true, true) => &[codes::OUTCOME_GATE, codes::NARRATIVE_CANDIDATE],
    }
}

/// Applies the per-cluster gates. A cluster with no admissible member is held back (one
/// `Held` group per reason, naming every member); otherwise it is admitted and its
/// non-admissible members are held back.
pub fn gate(candidates: &[Candidate], clusters: &[Cluster]) -> GateResult {
    let mut cluster_of = vec![None; candidates.len()];
    for (ci, cl) in clusters.iter().enumerate() {
        for &m in &cl.members {
            cluster_of[m as usize] = Some(ci as u32);
        }
    }
    // A clustered candidate's verdict depends on itself alone (its hold reasons), so every
    // verdict is made in one pass over the candidates, not gathered per cluster and scattered.
    let verdicts: Vec<Option<GateVerdict>> = (candidates.par_iter().zip(&cluster_of))
        .map(|(c, cluster)| match cluster {
            Some(_) => Some(match hold_reasons(c) {
                [] => GateVerdict::Admitted,
                reasons => GateVerdict::HeldBack(reasons),
            }),
            None => c.refusal.as_ref().map(|r| GateVerdict::Refused(refusal_codes(r))),
        })
        .collect();

    let per_cluster: Vec<ClusterDecision> = clusters
        .par_iter()
        .enumerate()
        .map(|(ci, cl)| {
            let mut held = Vec::new();
            let admissible: Vec<u32> = cl
                .members
                .iter()
                .copied()
                .filter(|&m| candidates[m as usize].admissible())
                .collect();
            // Members held back, grouped by reason: one diagnostic per (cluster, reason).
            let mut by_reason: BTreeMap<&'static str, Vec<u32>> = BTreeMap::new();
            for &m in &cl.members {
                for &r in hold_reasons(&candidates[m as usize]) {
                    by_reason.entry(r).or_default().push(m);
                }
            }
            let whole = admissible.is_empty();
            for (code, members) in by_reason {
                held.push(Held {
                    cluster: ci as u32,
                    code,
                    members,
                    whole_cluster: whole,
                });
            }
            let admitted = (!whole).then_some(Admitted {
                cluster: ci as u32,
                members: admissible,
            });
            ClusterDecision { admitted, held }
        })
        .collect();

    let mut admitted = Vec::new();
    let mut all_held = Vec::new();
    for ClusterDecision { admitted: a, held } in per_cluster {
        admitted.extend(a);
        all_held.extend(held);
    }
    GateResult {
        admitted,
        held: all_held,
        verdicts,
        cluster_of,
    }
}

/// What the gates decided for one cluster, computed in parallel and merged in cluster order.
struct ClusterDecision {
    admitted: Option<Admitted>,
    held: Vec<Held>,
}

/// One diagnostic per held-back group (DESIGN §7), made in parallel straight into `sink`.
/// The pipeline makes them after scoring: at a million records they are hundreds of
/// thousands, and the lifecycle fold does not read them.
/// A narrative group's diagnostic names the signals that fired for its first member, with
/// its score; when that member's text is not the anchor's (`text`), it is shown too, as
/// `held_text`.
/// `locations` (from `held_locations`, one per group) is where each diagnostic points; each
/// is moved into its diagnostic (a clone was an `Arc` count touched twice per diagnostic).
/// A cluster's groups (one per reason) are made together: they share its anchor's text and,
/// mostly, their members, whose ids are then read and sorted once.
pub fn held_diagnostics(
    gate: &GateResult,
    locations: Vec<Option<SourceLoc>>,
    verdicts: &[Verdict],
    candidates: &[Candidate],
    clusters: &[Cluster],
    rules: &Rules,
    sink: &mut Sink,
) {
    let mut groups: Vec<(&Held, Option<SourceLoc>)> = gate.held.iter().zip(locations).collect();
    let of_a_cluster = groups.par_chunk_by_mut(|a, b| a.0.cluster == b.0.cluster);
    sink.par_extend(of_a_cluster.flat_map_iter(|groups| {
        let cl = &clusters[groups[0].0.cluster as usize];
        let anchor = &candidates[cl.anchor as usize];
        let mut text = Value::from(&*anchor.text);
        // The group before, when it had the same members: its ids and their evidence value.
        let mut before: Option<(&[u32], Vec<&str>, Value)> = None;
        let mut made = [None, None];
        // One group per reason, and `hold_reasons` has two.
        assert!(groups.len() <= made.len(), "more held-back groups than reasons");
        let last = groups.len() - 1;
        for (k, ((h, at), slot)) in groups.iter_mut().zip(&mut made).enumerate() {
            let h: &Held = h;
            // The cluster's last group (most clusters have one) takes the text and the ids'
            // value; only a group with another after it leaves copies for that one.
            let later = k < last;
            let held = Group {
                held: h,
                cl,
                anchor,
                text: if later {
                    text.clone()
                } else {
                    std::mem::take(&mut text)
                },
            };
            let d = match before.take() {
                // Only the outcome gate's group names reasons, and it comes first.
                Some((members, ids, experiences))
                    if members == h.members && h.code != codes::OUTCOME_GATE =>
                {
                    let kept = later.then(|| experiences.clone());
                    let d = held.diagnostic(&ids, &[], experiences, candidates, rules);
                    before = kept.map(|experiences| (members, ids, experiences));
                    d
                }
                _ => {
                    let (ids, failures) = held.ids_and_failures(candidates, verdicts, rules);
                    let experiences = id_list(&ids);
                    let kept = later.then(|| experiences.clone());
                    let d = held.diagnostic(&ids, &failures, experiences, candidates, rules);
                    before = kept.map(|experiences| (&h.members[..], ids, experiences));
                    d
                }
            };
            *slot = Some(match at.take() {
                Some(at) => Diagnostic {
                    location: Some(at),
                    ..d
                },
                None => d,
            });
        }
        made.into_iter().flatten()
    }));
}

/// Where each held-back group's first record (by id, the first its diagnostic lists) was read,
/// so the diagnostic points at the text to rewrite or the run to look at. Taken while the
/// records are still there: the pipeline frees them before the diagnostics are made.
pub fn held_locations(
    gate: &GateResult,
    candidates: &[Candidate],
    corpus: &Corpus,
) -> Vec<Option<SourceLoc>> {
    (gate.held.par_iter())
        .map(|h| {
            let first = (h.members.iter())
                .map(|&m| &candidates[m as usize])
                .min_by(|a, b| a.record_id.cmp(&b.record_id))?;
            let at = match first.source {
                Source::Experience(e) => &corpus.experiences.get(e as usize)?.source,
                Source::Claim(c) => &corpus.claims.get(c as usize)?.loc,
            };
            Some(at.clone())
        })
        .collect()
}

/// (record id, reason) pairs by id, each id once: of two with one id, the later's reason, as
/// a map collected from them keeps. A sorted vector, not a tree map: almost every held-back
/// group has one member, and a map allocated a node of eleven slots for it, at each of the
/// half a million groups of a million records.
fn each_id_once<R>(mut pairs: Vec<(&str, Option<R>)>) -> Vec<(&str, Option<R>)> {
    pairs.sort_by(|a, b| a.0.cmp(b.0));
    pairs.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        if same {
            std::mem::swap(&mut later.1, &mut kept.1);
        }
        same
    });
    pairs
}

/// Ids sorted and each once, as the JSON list `Diagnostic::experiences` makes of them.
fn id_list(ids: &[&str]) -> Value {
    debug_assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids not sorted once each");
    Value::Array(ids.iter().map(|&id| Value::from(id)).collect())
}

/// One held-back group and what its diagnostic shares with the cluster's other group.
struct Group<'a> {
    held: &'a Held,
    cl: &'a Cluster,
    anchor: &'a Candidate,
    /// The anchor's text as an evidence value.
    text: Value,
}

impl<'a> Group<'a> {
    /// The members' record ids, sorted and each once, and for the outcome gate why each of
    /// those experiences did not pass (`None` when one is not an experience's).
    fn ids_and_failures(
        &self,
        candidates: &'a [Candidate],
        verdicts: &[Verdict],
        rules: &Rules,
    ) -> (Vec<&'a str>, Vec<&'static str>) {
        let code = self.held.code;
        let pairs = (self.held.members.iter())
            .map(|&m| {
                let c = &candidates[m as usize];
                let failure = match c.source {
                    Source::Experience(e) if code == codes::OUTCOME_GATE => {
                        verdicts[e as usize].failure(&rules.policy)
                    }
                    _ => None,
                };
                (&*c.record_id, failure)
            })
            .collect();
        let pairs = each_id_once(pairs);
        let ids: Vec<&str> = pairs.iter().map(|p| p.0).collect();
        let failures: Vec<&'static str> = pairs.into_iter().filter_map(|p| p.1).collect();
        (ids, failures)
    }

    /// The group's diagnostic, from its members' sorted `ids` (and `experiences`, their
    /// evidence value) and the `failures` among them.
    fn diagnostic(
        &self,
        ids: &[&str],
        failures: &[&'static str],
        experiences: Value,
        candidates: &[Candidate],
        rules: &Rules,
    ) -> Diagnostic {
        let (code, members, cl) = (self.held.code, &self.held.members, self.cl);
        let n = members.len();
        let what = match code {
            codes::OUTCOME_GATE if ids.len() == 1 => "from an experience that did not pass",
            codes::OUTCOME_GATE => "from experiences that did not pass",
            codes::NARRATIVE_CANDIDATE => "that read as the story of one incident",
            _ => "held back",
        };
        let scope = if self.held.whole_cluster {
            "cluster held back"
        } else {
            "members held back from an admitted lesson"
        };
        let kind = self.anchor.kind.as_str();
        let mut message = String::with_capacity(128);
        message.push_str(scope);
        message.push_str(": ");
        if n == 1 {
            message.push_str("1 ");
            message.push_str(kind);
            message.push_str(" candidate ");
        } else {
            write!(message, "{n} {kind} candidates ").expect("writing to a string");
        }
        message.push_str(what);
        message.push_str(" (");
        // Why they did not pass. A few ids each beside its own reason ("w-b: outcome abandoned;
        // w-c: outcome failed"); more, each reason once with its count, since a list of reasons
        // after a list of ids would read as pairs.
        let aligned = failures.len() == ids.len();
        if aligned && ids.len() <= 3 {
            for (i, (id, why)) in ids.iter().zip(failures).enumerate() {
                if i > 0 {
                    message.push_str("; ");
                }
                message.push_str(id);
                message.push_str(": ");
                message.push_str(why);
            }
        } else {
            message.push_str(&short_list(ids, 3));
            let mut distinct: BTreeMap<&str, usize> = BTreeMap::new();
            for &f in failures {
                *distinct.entry(f).or_default() += 1;
            }
            for (i, (f, k)) in distinct.into_iter().enumerate() {
                message.push_str(if i == 0 { ": " } else { "; " });
                message.push_str(f);
                if aligned {
                    write!(message, " ({k})").expect("writing to a string");
                }
            }
        }
        message.push(')');
        // In name order (`Evidence::sorted`).
        let mut evidence = Vec::with_capacity(7);
        evidence.push(("candidates", Value::from(n)));
        evidence.push(("cluster", Value::from(&*cl.id)));
        evidence.push(("experiences", experiences));
        let narrative = match (code, members.first()) {
            (codes::NARRATIVE_CANDIDATE, Some(&m)) => Some(&candidates[m as usize]),
            _ => None,
        };
        if let Some(first) = narrative
            && first.text != self.anchor.text
        {
            evidence.push(("held_text", Value::from(&*first.text)));
        }
        // Beside `experiences`, in the same order (every outcome-gated member has a reason).
        if aligned {
            let outcomes = failures.iter().map(|&f| Value::from(f)).collect();
            evidence.push(("outcomes", Value::Array(outcomes)));
        }
        if let Some(first) = narrative {
            let signals = rules.narrative.names(first.narrative_signals).map(Value::from);
            evidence.push(("score", Value::from(first.narrative_score)));
            evidence.push(("signals", Value::Array(signals.collect())));
        }
        evidence.push(("text", self.text.clone()));
        let mut d = Diagnostic::new(code, message)
            .subject(&*cl.id)
            .domain(&*cl.domain);
        d.evidence = Evidence::sorted(evidence);
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Origin, Outcome};

    fn cand(i: u32, id: &str, text: &str, outcome_failed: bool, narrative: bool) -> Candidate {
        Candidate {
            source: Source::Experience(i),
            record_id: id.into(),
            domain: crate::model::Name::at(0),
            kind: Kind::Do,
            origin: Origin::Lesson,
            text: text.into(),
            extra: None,
            recorded_at: i64::from(i),
            project: None,
            refusal: None,
            flags: crate::model::Flags::new(false, outcome_failed, narrative),
            narrative_score: 3 + i as i32,
            narrative_signals: 0b101 << (i % 3),
        }
    }

    #[test]
    fn a_clusters_groups_made_together_are_the_groups_made_alone() {
        let story = "I reverted 0ec36ba in queue.go and the tests passed again.";
        let candidates = vec![
            // Held back by both gates, with the same members (one id twice).
            cand(0, "g-0003", story, true, true),
            cand(1, "g-0001", "I pinned serde to 1.0.150 and it built.", true, true),
            cand(2, "g-0003", story, true, true),
            // Both gates again, the narrative group a part of the outcome gate's.
            cand(3, "g-0007", "Pin serde in Cargo.toml.", false, false),
            cand(4, "g-0004", "Pin serde in Cargo.toml.", true, false),
            cand(5, "g-0002", "We pinned serde after the outage.", true, true),
            cand(6, "g-0006", "Pin serde in Cargo.toml.", true, false),
            cand(7, "g-0005", "Pin serde in Cargo.toml.", true, false),
            // One reason only.
            cand(8, "g-0008", story, false, true),
        ];
        let cluster = |n: u32, anchor: u32, members: &[u32]| Cluster {
            id: format!("C00a9ff9a87e{n}"),
            domain: "git".into(),
            kind: Kind::Do,
            key: None,
            anchor,
            members: members.to_vec(),
        };
        let clusters = vec![
            cluster(0, 0, &[0, 1, 2]),
            cluster(1, 3, &[3, 4, 5, 6, 7]),
            cluster(2, 8, &[8]),
        ];
        let outcomes = [Outcome::Failed, Outcome::Abandoned, Outcome::Succeeded];
        let verdicts: Vec<Verdict> = (0..candidates.len())
            .map(|i| Verdict {
                passed: i == 3 || i == 8,
                contradicted: i % 2 == 0,
                outcome: outcomes[i % 3],
                ..Verdict::default()
            })
            .collect();
        let rules = Rules::builtin();
        let gate = gate(&candidates, &clusters);
        assert_eq!(gate.held.len(), 5);
        let at = |line| SourceLoc {
            file: "memory.jsonl".into(),
            line,
        };
        let locations: Vec<Option<SourceLoc>> = (0..gate.held.len() as u32)
            .map(|i| (i != 2).then(|| at(i + 1)))
            .collect();
        let mut together = Sink::new();
        held_diagnostics(
            &gate,
            locations.clone(),
            &verdicts,
            &candidates,
            &clusters,
            &rules,
            &mut together,
        );
        let mut alone = Sink::new();
        for (h, at) in gate.held.iter().zip(&locations) {
            let one = GateResult {
                held: vec![h.clone()],
                ..gate.clone()
            };
            held_diagnostics(
                &one,
                vec![at.clone()],
                &verdicts,
                &candidates,
                &clusters,
                &rules,
                &mut alone,
            );
        }
        assert_eq!(together, alone);
        let (g001, g002) = (&together[0], &together[1]);
        assert_eq!(
            (g001.code, g002.code),
            (codes::OUTCOME_GATE, codes::NARRATIVE_CANDIDATE)
        );
        assert_eq!(g001.experience_ids(), ["g-0001", "g-0003"]);
        assert_eq!(g002.experience_ids(), g001.experience_ids());
        assert_eq!(
            together[2].message,
            "members held back from an admitted lesson: 4 do candidates from experiences that \
             did not pass (g-0002, g-0004, g-0005 and 1 more: outcome abandoned (2); outcome \
             failed (1); outcome succeeded, but every check ran before the last change (1))"
        );
        assert_eq!(together[3].experience_ids(), ["g-0002"]);
        assert_eq!(
            together[3].evidence["held_text"],
            "We pinned serde after the outage."
        );
    }

    #[test]
    fn a_held_groups_ids_come_sorted_once_each_with_the_reason_a_map_kept() {
        // Two candidates of one pytest run (its lesson and a claim it backs), a cargo run
        // and a terraform run: the run named twice keeps its later reason.
        let pairs = || {
            vec![
                ("pytest-run-0042", Some("outcome failed".to_string())),
                ("cargo-run-0007", None),
                ("pytest-run-0042", Some("outcome abandoned".to_string())),
                ("terraform-apply-0013", Some("outcome failed".to_string())),
                (
                    "cargo-run-0007",
                    Some("outcome pivoted, and policy allow_pivoted is off".to_string()),
                ),
            ]
        };
        let map: BTreeMap<&str, Option<String>> = pairs().into_iter().collect();
        let once = each_id_once(pairs());
        assert_eq!(once, Vec::from_iter(map));
        assert_eq!(
            once[1],
            ("pytest-run-0042", Some("outcome abandoned".to_string()))
        );
    }
}
