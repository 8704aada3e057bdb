//! Writes a benchmark corpus of N documents made from real text, spread over
//! the indexed formats (one subfolder each): Markdown, text, HTML, PDF and
//! DOCX. Paragraphs are taken in order from the reference texts given
//! (Debian's manuals, see `scripts/fetch-real-docs`), so the documents read
//! like documentation and no two are alike.
//!
//! ```sh
//! cargo run --release -p groundcite-index --example gen_corpus -- OUT N TEXT...
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::fs;
use std::io::Write;
use std::path::Path;

use lopdf::content::{Content, Operation};
use lopdf::{Document, Object, Stream, dictionary};

const FORMATS: [&str; 5] = ["md", "txt", "html", "pdf", "docx"];

fn paragraphs(texts: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for t in texts {
        for p in fs::read_to_string(t).unwrap().split("\n\n") {
            let p: String = p.split_whitespace().collect::<Vec<_>>().join(" ");
            // Prose only: WinAnsi-safe for the PDF font, long enough to say something.
            if p.len() >= 120
                && p.len() <= 1500
                && p.chars().all(|c| c.is_ascii() && !c.is_control())
            {
                out.push(p);
            }
        }
    }
    out
}

fn wrap(p: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for w in p.split(' ') {
        let last = lines.last_mut().unwrap();
        if !last.is_empty() && last.len() + 1 + w.len() > width {
            lines.push(w.to_string());
        } else {
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(w);
        }
    }
    lines
}

fn pdf(title: &str, paras: &[&String]) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! {"Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica", "Encoding" => "WinAnsiEncoding"});
    let resources = doc.add_object(dictionary! {"Font" => dictionary! {"F1" => font}});
    let mut kids = Vec::new();
    let mut ops = Vec::new();
    let mut y = 740.0;
    let mut flush = |ops: &mut Vec<Operation>, doc: &mut Document| {
        let mut all = vec![
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec!["F1".into(), 10.into()]),
        ];
        all.append(ops);
        all.push(Operation::new("ET", vec![]));
        let content = doc.add_object(Stream::new(
            dictionary! {},
            Content { operations: all }.encode().unwrap(),
        ));
        kids.push(Object::from(doc.add_object(
            dictionary! {"Type" => "Page", "Parent" => pages_id, "Contents" => content},
        )));
    };
    let line = |ops: &mut Vec<Operation>, y: f64, s: &str| {
        ops.push(Operation::new(
            "Tm",
            vec![1.into(), 0.into(), 0.into(), 1.into(), 72.into(), y.into()],
        ));
        ops.push(Operation::new("Tj", vec![Object::string_literal(s)]));
    };
    line(&mut ops, y, title);
    y -= 30.0;
    for p in paras {
        for l in wrap(p, 90) {
            if y < 60.0 {
                flush(&mut ops, &mut doc);
                y = 740.0;
            }
            line(&mut ops, y, &l);
            y -= 12.0;
        }
        y -= 12.0;
    }
    flush(&mut ops, &mut doc);
    let count = kids.len() as i64;
    doc.objects.insert(pages_id, Object::Dictionary(dictionary! {"Type" => "Pages", "Kids" => kids, "Count" => count, "Resources" => resources, "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()]}));
    let catalog = doc.add_object(dictionary! {"Type" => "Catalog", "Pages" => pages_id});
    doc.trailer.set("Root", catalog);
    let info = doc.add_object(dictionary! {"Title" => Object::string_literal(title)});
    doc.trailer.set("Info", info);
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn docx(title: &str, paras: &[&String]) -> Vec<u8> {
    let mut body = format!(
        r#"<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>{}</w:t></w:r></w:p>"#,
        escape(title)
    );
    for p in paras {
        body.push_str(&format!(
            r#"<w:p><w:r><w:t xml:space="preserve">{}</w:t></w:r></w:p>"#,
            escape(p)
        ));
    }
    let document = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{body}</w:body></w:document>"#
    );
    let mut out = std::io::Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut out);
    zip.start_file(
        "word/document.xml",
        zip::write::SimpleFileOptions::default(),
    )
    .unwrap();
    zip.write_all(document.as_bytes()).unwrap();
    zip.finish().unwrap();
    out.into_inner()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = Path::new(&args[0]);
    let n: usize = args[1].parse().unwrap();
    let paras = paragraphs(&args[2..]);
    assert!(paras.len() > 10, "too little text");
    for f in FORMATS {
        fs::create_dir_all(out.join(f)).unwrap();
    }
    let per_doc = 6;
    for i in 0..n {
        let format = FORMATS[i % FORMATS.len()];
        let picked: Vec<&String> = (0..per_doc)
            .map(|k| &paras[(i * per_doc + k * 7919) % paras.len()])
            .collect();
        let title = format!(
            "Document {i}: {}",
            picked[0].split(' ').take(6).collect::<Vec<_>>().join(" ")
        );
        let path = out.join(format).join(format!("doc-{i:05}.{format}"));
        let bytes = match format {
            "md" => {
                let mut s = format!("# {title}\n\n");
                for (k, p) in picked.iter().enumerate() {
                    if k == 3 {
                        s.push_str("## Details\n\n");
                    }
                    s.push_str(p);
                    s.push_str("\n\n");
                }
                s.into_bytes()
            }
            "txt" => picked
                .iter()
                .map(|p| p.as_str())
                .collect::<Vec<_>>()
                .join("\n\n")
                .into_bytes(),
            "html" => {
                let mut s = format!(
                    "<!doctype html><html><head><title>{}</title><script>var t=1;</script></head><body><nav><a href='/'>Home</a></nav><main><h1>{}</h1>",
                    escape(&title),
                    escape(&title)
                );
                for p in &picked {
                    s.push_str(&format!("<p>{}</p>", escape(p)));
                }
                s.push_str("</main><footer>Footer</footer></body></html>");
                s.into_bytes()
            }
            "pdf" => pdf(&title, &picked),
            _ => docx(&title, &picked),
        };
        fs::write(path, bytes).unwrap();
    }
    println!(
        "{n} documents from {} paragraphs in {}",
        paras.len(),
        out.display()
    );
}
