//! Skill deltas: staged overlay rows that add a domain's global rules to a skill a person wrote.
