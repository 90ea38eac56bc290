//! Would the default lexicon cluster two lesson texts together, and if not, why?
//!
//! `cargo run --example similar -- "Run pytest from the repo root" "Invoke pytest from the repository root"`

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [a, b] = args.as_slice() else {
        eprintln!("usage: similar TEXT_A TEXT_B");
        std::process::exit(2);
    };
    let rules = skillc::policy::Rules::builtin();
    println!("{:?}", skillc::cluster::verdict(&rules.lexicon, a, b));
}
