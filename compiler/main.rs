//! The `skillc` binary: parse the command line, run, exit with the documented code.

// The pipeline allocates millions of small strings and vectors from several threads; mimalloc
// does that markedly faster than the system allocator (see ARCHITECTURE.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(skillc::cli::main());
}
