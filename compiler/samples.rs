//! The sample corpus, built into the binary as the fallback when `samples/` is not found.
//!
//! Eight projects, eight domains, ten weeks of 2026: agent logs (`agent-*.jsonl`), hand-written
//! team notes (YAML), lesson claims (valid, unevidenced, fabricated and unsupported) and a file of
//! deliberately bad records, so a first compile shows rules, lessons, held-back candidates and
//! diagnostics side by side.

/// `(file name, contents)` of every sample file, in path order.
pub const FILES: &[(&str, &str)] = &[
    ("samples/agent-a.jsonl", include_str!("../samples/agent-a.jsonl")),
    ("samples/agent-b.jsonl", include_str!("../samples/agent-b.jsonl")),
    ("samples/agent-c.jsonl", include_str!("../samples/agent-c.jsonl")),
    (
        "samples/bad-records.jsonl",
        include_str!("../samples/bad-records.jsonl"),
    ),
    ("samples/claims.jsonl", include_str!("../samples/claims.jsonl")),
    (
        "samples/team-notes.yaml",
        include_str!("../samples/team-notes.yaml"),
    ),
];

#[cfg(test)]
mod tests {
    use super::FILES;

    #[test]
    fn files_are_in_path_order_and_non_empty() {
        let names: Vec<&str> = FILES.iter().map(|(n, _)| *n).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert!(
            FILES
                .iter()
                .all(|(n, t)| n.starts_with("samples/") && !t.is_empty())
        );
    }

    #[test]
    fn every_sample_file_is_listed() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| format!("samples/{}", e.unwrap().file_name().to_string_lossy()))
            .collect();
        on_disk.sort();
        let listed: Vec<String> = FILES.iter().map(|(n, _)| n.to_string()).collect();
        assert_eq!(listed, on_disk);
    }
}
