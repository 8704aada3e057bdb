"""What the corpus converters share: pandoc's Markdown tidied the same way."""

import re


def postprocess(md):
    # Trailing double spaces outside code are hard line breaks: keep them.
    # Inside fenced code (also inside block quotes), trailing blanks are
    # noise from the HTML: drop them. Blank-only lines become empty.
    out, fence = [], None
    for line in md.split("\n"):
        m = re.match(r"^\s*(?:> )*(`{3,})", line)
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None and m and m.group(1) == fence:
            fence = None
        elif fence is not None:
            line = line.rstrip()
        if not line.strip():
            line = ""
        out.append(line)
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"
