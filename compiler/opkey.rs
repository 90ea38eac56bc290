//! Operation keys (DESIGN §3.3): what an operation is about, derived exactly as GAIA does so
//! keys join across both systems.

use serde_json::Value;

/// `"<tool> <program>"`, `"<tool> <path-like value>"` or `"<tool> <python json.dumps(args)>"`.
pub fn operation_key(_tool: &str, _args: &Value) -> String {
    todo!("candidates helper")
}

/// The program a shell command runs: skips `env` and `NAME=value`, basename, lower-case;
/// `python… -m X` gives `X`.
pub fn program(_command: &str) -> Option<String> {
    todo!("candidates helper")
}

/// Byte-for-byte `json.dumps(v, sort_keys=True)` (separators `", "`, `": "`, ASCII only).
pub fn python_json(_v: &Value) -> String {
    todo!("candidates helper")
}
