//! `crowdpatch-editor [FILE.patch.json]`: the crowdpatch editor.

use std::process::ExitCode;

const HELP: &str = "\
crowdpatch-editor: author crowd patches, bake them in the background, play and tile them.

Usage: crowdpatch-editor [FILE.patch.json]

Opens FILE (or a new document). Keyboard shortcuts are listed under Help (F1).
Recent files and autosaves are kept in $CROWDPATCH_EDITOR_HOME, else
$XDG_STATE_HOME/crowdpatch-editor, else ~/.local/state/crowdpatch-editor; after a
crash the editor offers to recover the autosaved document.

Options:
  -h, --help     Print this help
  -V, --version  Print the version

Exit codes: 0 success; 2 bad arguments or no window could be opened.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut file = None;
    for a in &args {
        match a.as_str() {
            "-h" | "--help" => {
                println!("{HELP}");
                return ExitCode::SUCCESS;
            }
            "-V" | "--version" => {
                println!("crowdpatch-editor {}", env!("CARGO_PKG_VERSION"));
                return ExitCode::SUCCESS;
            }
            s if s.starts_with('-') => {
                eprintln!("error: unknown option {s}\n\n{HELP}");
                return ExitCode::from(2);
            }
            s if file.is_none() => file = Some(std::path::PathBuf::from(s)),
            s => {
                eprintln!("error: one file at most (got a second one: {s})");
                return ExitCode::from(2);
            }
        }
    }
    if let Some(f) = &file
        && !f.is_file()
    {
        eprintln!("error: {}: no such file", f.display());
        return ExitCode::from(2);
    }
    match crowdpatch_editor::run(file) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: cannot open the editor window: {e}");
            ExitCode::from(2)
        }
    }
}
