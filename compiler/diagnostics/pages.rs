//! The `skillc explain` pages, one markdown file per diagnostic code (DESIGN §8).
//!
//! Each page starts `# CODE name` and has the sections *What it means*, *Why it blocks
//! compilation*, *Example* and *How to fix*. `tests/registry.rs` checks that every registered
//! code has one.

/// Every page, in registry order.
pub static PAGES: &[(&str, &str)] = &[
    ("L001", include_str!("pages/L001.md")),
    ("L002", include_str!("pages/L002.md")),
    ("L003", include_str!("pages/L003.md")),
    ("L004", include_str!("pages/L004.md")),
    ("L005", include_str!("pages/L005.md")),
    ("L006", include_str!("pages/L006.md")),
    ("L007", include_str!("pages/L007.md")),
    ("L008", include_str!("pages/L008.md")),
    ("L009", include_str!("pages/L009.md")),
    ("L010", include_str!("pages/L010.md")),
    ("L011", include_str!("pages/L011.md")),
    ("L012", include_str!("pages/L012.md")),
    ("L013", include_str!("pages/L013.md")),
    ("N001", include_str!("pages/N001.md")),
    ("N002", include_str!("pages/N002.md")),
    ("N003", include_str!("pages/N003.md")),
    ("O001", include_str!("pages/O001.md")),
    ("O002", include_str!("pages/O002.md")),
    ("O003", include_str!("pages/O003.md")),
    ("K001", include_str!("pages/K001.md")),
    ("G001", include_str!("pages/G001.md")),
    ("G002", include_str!("pages/G002.md")),
    ("G003", include_str!("pages/G003.md")),
    ("G004", include_str!("pages/G004.md")),
    ("G005", include_str!("pages/G005.md")),
    ("G006", include_str!("pages/G006.md")),
    ("G007", include_str!("pages/G007.md")),
    ("S001", include_str!("pages/S001.md")),
    ("S002", include_str!("pages/S002.md")),
    ("S003", include_str!("pages/S003.md")),
    ("S004", include_str!("pages/S004.md")),
    ("S005", include_str!("pages/S005.md")),
    ("S006", include_str!("pages/S006.md")),
    ("S007", include_str!("pages/S007.md")),
    ("S008", include_str!("pages/S008.md")),
    ("S009", include_str!("pages/S009.md")),
    ("S010", include_str!("pages/S010.md")),
    ("E001", include_str!("pages/E001.md")),
    ("E002", include_str!("pages/E002.md")),
    ("E003", include_str!("pages/E003.md")),
    ("E004", include_str!("pages/E004.md")),
    ("E005", include_str!("pages/E005.md")),
    ("E006", include_str!("pages/E006.md")),
    ("E007", include_str!("pages/E007.md")),
    ("U001", include_str!("pages/U001.md")),
    ("U002", include_str!("pages/U002.md")),
    ("W001", include_str!("pages/W001.md")),
    ("W002", include_str!("pages/W002.md")),
    ("W003", include_str!("pages/W003.md")),
];

/// The markdown page of a code (exact, upper-case code).
pub fn page(code: &str) -> Option<&'static str> {
    PAGES.iter().find(|(c, _)| *c == code).map(|(_, p)| *p)
}
