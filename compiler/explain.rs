//! `skillc explain CODE` and `skillc codes`: the diagnostic documentation.

// Placeholder until the pages land (helper branch h-pages replaces this file).
pub fn explain_text(_code: &str, _rules: &crate::policy::Rules) -> Option<String> {
    None
}
pub fn explain_json(_code: &str, _rules: &crate::policy::Rules) -> Option<serde_json::Value> {
    None
}
pub fn codes_text() -> String {
    String::new()
}
pub fn codes_json() -> serde_json::Value {
    serde_json::Value::Null
}
