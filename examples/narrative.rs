//! How the default narrative gate classifies texts: verdict, score and the signals that fired.
//!
//! `cargo run --example narrative -- "In CI use cargo build --locked" "Fixed the flaky test"`

fn main() {
    let texts: Vec<String> = std::env::args().skip(1).collect();
    if texts.is_empty() {
        eprintln!("usage: narrative TEXT...");
        std::process::exit(2);
    }
    let rules = skillc::policy::Rules::builtin();
    for t in &texts {
        let c = rules.narrative.classify(t);
        let verdict = if c.narrative { "narrative" } else { "rule" };
        println!("{verdict} {:>3} {:?}  {t}", c.score, c.signals);
    }
}
