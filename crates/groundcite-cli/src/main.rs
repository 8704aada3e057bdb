//! The `groundcite` command.
fn main() {}
