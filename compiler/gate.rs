//! Gate: evidence checks for claims (before clustering), then per-cluster admission
//! (DESIGN §5.4). Every failing reason is recorded, not only the first, so `why` can count
//! reasons honestly.

use std::collections::{BTreeMap, BTreeSet};

use crate::cluster::fx::{FxMap as HashMap, FxSet};

use rayon::prelude::*;

use crate::diagnostics::{Diagnostic, Sink, codes, short_list};
use crate::model::{Candidate, Cluster, Corpus, Kind, Operation, Refusal, Source, SourceLoc};
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
pub fn check_claims(corpus: &Corpus, verdicts: &[Verdict], candidates: &mut [Candidate], sink: &mut Sink) {
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
                        "claim cites {} id(s) that name no experience in the input: {}{which}",
                        fabricated.len(),
                        short_list(&fabricated, 3)
                    ),
                )
                .subject(&*claim.id)
                .at(&claim.loc)
                .domain(&*c.domain)
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
                let in_domain = exp.domains.iter().any(|d| **d == *c.domain);
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
                        "claim cites {} experience(s) that are not {what}: {}",
                        unsupported.len(),
                        short_list(&unsupported, 3)
                    ),
                )
                .subject(&*claim.id)
                .at(&claim.loc)
                .domain(&*c.domain)
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
    match (c.outcome_failed, c.narrative) {
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
/// `locations` (from `held_locations`, one per group) is where each diagnostic points.
pub fn held_diagnostics(
    gate: &GateResult,
    locations: &[Option<SourceLoc>],
    verdicts: &[Verdict],
    candidates: &[Candidate],
    clusters: &[Cluster],
    rules: &Rules,
    sink: &mut Sink,
) {
    let made = gate.held.par_iter().zip(locations);
    sink.par_extend(made.map(|(h, at)| {
        let d = held_diagnostic(h, &clusters[h.cluster as usize], verdicts, candidates, rules);
        match at {
            Some(at) => d.at(at),
            None => d,
        }
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
fn each_id_once(mut pairs: Vec<(&str, Option<String>)>) -> Vec<(&str, Option<String>)> {
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

fn held_diagnostic(
    held: &Held,
    cl: &Cluster,
    verdicts: &[Verdict],
    candidates: &[Candidate],
    rules: &Rules,
) -> Diagnostic {
    let (code, members, whole_cluster) = (held.code, &held.members, held.whole_cluster);
    // Each member's record id, and for the outcome gate why that experience did not pass.
    let pairs = (members.iter())
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
    // Owned, so that `outcomes` takes them as they are rather than copies.
    let failures: Vec<String> = pairs.into_iter().filter_map(|p| p.1).collect();
    let anchor = &candidates[cl.anchor as usize];
    let n = members.len();
    let what = match code {
        codes::OUTCOME_GATE if ids.len() == 1 => "from an experience that did not pass",
        codes::OUTCOME_GATE => "from experiences that did not pass",
        codes::NARRATIVE_CANDIDATE => "that read as the story of one incident",
        _ => "held back",
    };
    // Why they did not pass. A few ids each beside its own reason ("w-b: outcome abandoned;
    // w-c: outcome failed"); more, each reason once with its count, since a list of reasons
    // after a list of ids would read as pairs.
    let aligned = failures.len() == ids.len();
    let listed = if aligned && ids.len() <= 3 {
        let mut listed = String::new();
        for (id, why) in ids.iter().zip(&failures) {
            if !listed.is_empty() {
                listed.push_str("; ");
            }
            listed.push_str(id);
            listed.push_str(": ");
            listed.push_str(why);
        }
        listed
    } else {
        let mut distinct: BTreeMap<&str, usize> = BTreeMap::new();
        for f in &failures {
            *distinct.entry(f.as_str()).or_default() += 1;
        }
        let why = (distinct.into_iter()).map(|(f, k)| {
            if aligned {
                format!("{f} ({k})")
            } else {
                f.to_string()
            }
        });
        match Vec::from_iter(why).join("; ") {
            why if why.is_empty() => short_list(&ids, 3),
            why => format!("{}: {why}", short_list(&ids, 3)),
        }
    };
    let scope = if whole_cluster {
        "cluster held back"
    } else {
        "members held back from an admitted lesson"
    };
    let message = if n == 1 {
        format!("{scope}: 1 {} candidate {what} ({listed})", anchor.kind.as_str())
    } else {
        format!(
            "{scope}: {n} {} candidates {what} ({listed})",
            anchor.kind.as_str()
        )
    };
    let d = Diagnostic::new(code, message)
        .subject(&cl.id)
        .domain(&cl.domain)
        .with("cluster", cl.id.clone())
        .with("text", &*anchor.text)
        .with("candidates", n);
    // Beside `experiences`, in the same order (every outcome-gated member has a reason).
    let d = if failures.len() == ids.len() {
        d.with("outcomes", failures)
    } else {
        d
    };
    let d = d.experiences(ids);
    match (code, members.first()) {
        (codes::NARRATIVE_CANDIDATE, Some(&m)) => {
            let first = &candidates[m as usize];
            let signals: Vec<&str> = rules.narrative.names(first.narrative_signals).collect();
            let d = d.with("signals", signals).with("score", first.narrative_score);
            if first.text != anchor.text {
                d.with("held_text", &*first.text)
            } else {
                d
            }
        }
        _ => d,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
