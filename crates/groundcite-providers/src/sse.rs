//! An incremental Server-Sent Events decoder (the framing of OpenAI and
//! Anthropic streams): bytes in any fragmentation, events out.

/// One event: its `event:` name (if any) and its `data:` lines joined by `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    buf: Vec<u8>,
    event: Option<String>,
    data: Vec<String>,
    /// Bytes in `data`.
    data_bytes: usize,
    has_data: bool,
}

impl SseDecoder {
    /// Feeds bytes; returns the events completed by them. A line is only
    /// decoded once complete, so UTF-8 split across fragments is fine.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut start = 0;
        while let Some(pos) = self.buf[start..].iter().position(|&b| b == b'\n') {
            let end = start + pos;
            let mut line = &self.buf[start..end];
            if let Some(l) = line.strip_suffix(b"\r") {
                line = l;
            }
            let line = String::from_utf8_lossy(line).into_owned();
            start = end + 1;
            self.line(&line, &mut out);
        }
        self.buf.drain(..start);
        out
    }

    /// Bytes held for an event not yet complete: its data lines so far
    /// and the line not yet ended.
    pub fn pending(&self) -> usize {
        self.buf.len() + self.data_bytes
    }

    /// Ends the stream: a last event without its blank line still counts.
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let mut out = Vec::new();
        if !self.buf.is_empty() {
            let rest = std::mem::take(&mut self.buf);
            let line = String::from_utf8_lossy(&rest)
                .trim_end_matches('\r')
                .to_string();
            self.line(&line, &mut out);
        }
        self.dispatch(&mut out);
        out
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => {
                self.data_bytes += value.len();
                self.data.push(value.to_string());
                self.has_data = true;
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if self.has_data {
            out.push(SseEvent {
                event: self.event.take(),
                data: self.data.join("\n"),
            });
        }
        self.event = None;
        self.data.clear();
        self.data_bytes = 0;
        self.has_data = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_split() {
        let text =
            "event: a\r\ndata: {\"x\":\"é\"}\r\n\r\n: comment\ndata: 1\ndata: 2\n\ndata: [DONE]";
        let bytes = text.as_bytes();
        for cut in 0..bytes.len() {
            let mut d = SseDecoder::default();
            let mut ev = d.feed(&bytes[..cut]);
            ev.extend(d.feed(&bytes[cut..]));
            ev.extend(d.finish());
            assert_eq!(ev.len(), 3, "cut {cut}");
            assert_eq!(ev[0].event.as_deref(), Some("a"));
            assert_eq!(ev[0].data, "{\"x\":\"é\"}");
            assert_eq!(ev[1].data, "1\n2");
            assert_eq!(ev[2].data, "[DONE]");
        }
    }

    #[test]
    fn pending_counts_what_an_unfinished_event_holds() {
        let mut d = SseDecoder::default();
        assert!(d.feed(b"data: abc\ndata: de\nevent: x\npartial").is_empty());
        // "abc" and "de" wait for the blank line; "partial" for its newline.
        assert_eq!(d.pending(), 3 + 2 + "partial".len());
        assert_eq!(d.feed(b"\n\n").len(), 1);
        assert_eq!(d.pending(), 0);
        // Endless data lines without a blank line keep growing it.
        for _ in 0..100 {
            assert!(d.feed(b"data: 0123456789\n").is_empty());
        }
        assert_eq!(d.pending(), 1000);
    }
}
