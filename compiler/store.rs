//! The state store (SQLite): the user's decision journal and the last ledger.
