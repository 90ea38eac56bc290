//! `skillc explain CODE` and `skillc codes`: the diagnostic documentation.
