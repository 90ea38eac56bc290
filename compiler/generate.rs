//! `skillc gen`: a deterministic, realistic synthetic corpus (own PRNG, so stable).

// Placeholder until the generator lands (helper branch h-samples replaces this file).
pub fn generate(_experiences: usize, _seed: u64, _out: &mut dyn std::io::Write) -> std::io::Result<()> {
    Ok(())
}
