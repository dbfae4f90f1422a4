//! Exit codes, as the README documents them.

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: baked, but collisions remain in at least one patch.
pub const EXIT_COLLISIONS: u8 = 1;
/// Exit code: bad input or another error.
pub const EXIT_ERROR: u8 = 2;

/// The exit codes, for `--help`.
pub const EXIT_CODES: &str = "Exit codes: 0 success; 1 baked, but collisions remain; 2 bad input or error (nothing \
                              written); 130 interrupted by Ctrl-C or SIGTERM (temporary files removed).";

/// Whether an error comes from writing to a closed pipe (`crowdpatch … | head`),
/// which is not a failure.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}
