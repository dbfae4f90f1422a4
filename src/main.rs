//! The `crowdpatch` command-line tool.
fn main() {}
