//! Prints the paragraphs each document's reader extracts, one per line
//! (`FILE<TAB>PARAGRAPH`, line breaks as `\n`), to look for what a reader
//! keeps that is not text (navigation, labels, captions) across a real
//! folder.
//!
//! ```sh
//! cargo run --release -p groundcite-index --example dump_text -- DIR/*.html
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)]

fn main() {
    for path in std::env::args().skip(1) {
        let name = path.rsplit('/').next().unwrap_or(&path).to_string();
        let extracted = std::fs::read(&path)
            .map_err(|e| e.to_string())
            .and_then(|bytes| groundcite_index::extract(&path, &bytes).map_err(|e| e.to_string()));
        match extracted {
            Ok(e) => {
                for para in e.text.split("\n\n") {
                    println!("{name}\t{}", para.replace('\n', "\\n"));
                }
            }
            Err(e) => eprintln!("{path}: {e}"),
        }
    }
}
