"""What the corpus converters share: pandoc's Markdown tidied the same way."""

import os
import re

# A pandoc Lua function both filters use: a code block as a fenced block
# (the gfm writer would indent it), with a fence longer than any run of
# backticks inside.
LUA_FENCED_CODE = r'''
local function fenced_code(el)
  local text = el.text:gsub("^\n+", ""):gsub("%s+$", "")
  local ticks = "```"
  while text:find(ticks, 1, true) do ticks = ticks .. "`" end
  return pandoc.RawBlock("markdown", ticks .. "\n" .. text .. "\n" .. ticks)
end
'''


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


def write_pages(out_dir, pages):
    """Writes each (name, markdown) of `pages` into `out_dir` and removes the
    Markdown files no longer produced, so a rerun leaves exactly the corpus."""
    wanted = set()
    for name, md in pages:
        with open(os.path.join(out_dir, name), "w", encoding="utf-8", newline="\n") as f:
            f.write(md)
        wanted.add(name)
        print(f"{name}: {len(md.encode())} bytes")
    for name in os.listdir(out_dir):
        if name.endswith(".md") and name not in wanted:
            os.remove(os.path.join(out_dir, name))
