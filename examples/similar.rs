//! Would the default lexicon cluster two lesson texts together, and if not, why?
//!
//! `cargo run --example similar -- "Run pytest from the repo root" "Invoke pytest from the repository root"`
//!
//! With `-v` first, it also prints each text's content tokens and the role each plays.

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let verbose = args.first().is_some_and(|a| a == "-v");
    if verbose {
        args.remove(0);
    }
    let [a, b] = args.as_slice() else {
        eprintln!("usage: similar [-v] TEXT_A TEXT_B");
        std::process::exit(2);
    };
    let rules = skillc::policy::Rules::builtin();
    if verbose {
        for text in [a, b] {
            let analysis = rules.lexicon.analyze(text);
            println!("{text}");
            for t in &analysis.tokens {
                let kind = if t.technical { "tech" } else { "word" };
                println!("  {kind} {:<24} {:?}", t.text, t.role);
            }
        }
    }
    println!("{:?}", skillc::cluster::verdict(&rules.lexicon, a, b));
}
