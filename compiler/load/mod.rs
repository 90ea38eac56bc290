//! Load: experience records and lesson claims from files and stores (DESIGN §3).
//!
//! Bad input is a diagnostic with file and line, never an `Err`: `Err` is only for an input
//! path that cannot be read at all.

use std::path::PathBuf;

use crate::diagnostics::Sink;
use crate::model::Corpus;

/// Input formats; `None` in `LoadOptions::from` means recognise by content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Native,
    Omnimem,
    Gaia,
}

#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    pub from: Option<Format>,
    /// Directories never read as input (the output directory).
    pub exclude: Vec<PathBuf>,
}

#[derive(Debug)]
pub struct LoadError {
    pub path: PathBuf,
    pub message: String,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot read {}: {}", self.path.display(), self.message)
    }
}

/// Loads every input (a file, or a directory walked in sorted order). Duplicate ids keep the
/// first record in (path, line) order.
pub fn load(_inputs: &[PathBuf], _opts: &LoadOptions, _sink: &mut Sink) -> Result<Corpus, LoadError> {
    todo!("load helper")
}

/// Loads in-memory files (the built-in sample corpus, tests), as `(name, text)` in the
/// order given; the name's extension decides the format and is the file diagnostics report.
pub fn load_texts(_files: &[(&str, &str)], _opts: &LoadOptions, _sink: &mut Sink) -> Corpus {
    todo!("load helper")
}
