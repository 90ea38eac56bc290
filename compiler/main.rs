//! The `skillc` binary: parse the command line, run, exit with the documented code.

fn main() {
    std::process::exit(skillc::cli::main());
}
