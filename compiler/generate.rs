//! `skillc gen`: a deterministic, realistic synthetic corpus (own PRNG, so stable).
