#!/usr/bin/env python3
"""Rebuild corpus/debian-handbook/ from Debian's debian-handbook package.

Converts seven sections of The Debian Administrator's Handbook (Raphaël
Hertzog and Roland Mas; GPL-2+ or CC-BY-SA-3.0) from the English Publican
HTML shipped in the `debian-handbook` package into Markdown with pandoc,
stripping the page chrome (banner, logos, previous/next/up/home navigation
bars), index anchors, images and links (replaced by their text), and turning
the book's boxed asides ("BACK TO BASICS", "GOING FURTHER", "TIP", ...),
example titles and figure captions into bold paragraphs. The prose is not
edited.

Finds the package's files in $GROUNDCITE_REAL_DOCS/debian-handbook or
~/.cache/groundcite/real-docs/debian-handbook (an unpacked .deb: the HTML
under usr/share/doc/debian-handbook/html/en-US/), else in
/usr/share/doc/debian-handbook (the package installed), else downloads the
.deb with `apt-get download` and unpacks it with `dpkg-deb -x` into a
temporary directory. Installs pandoc with apt-get if missing. Idempotent:
rewrites every output file, and the same package and pandoc versions give
byte-identical files. Needs only the Python standard library.

Usage: scripts/corpus/debian-handbook.py   (run from anywhere; writes into the repo)
"""
import os
import re

from corpus_text import (LUA_ATTR_HELPERS, LUA_FENCED_CODE, convert_package,
                          pandoc_version, warn_versions)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(REPO, "corpus", "debian-handbook")
DOC_SUBDIR = os.path.join("usr", "share", "doc", "debian-handbook")
HTML_SUBDIR = os.path.join("html", "en-US")

# (source page in html/en-US/, output file)
PAGES = [
    ("sect.apt-get.html", "apt.md"),
    ("sect.network-config.html", "network-config.md"),
    ("sect.config-misc.html", "other-config.md"),
    ("sect.remote-login.html", "remote-login.md"),
    ("sect.rights-management.html", "permissions.md"),
    ("sect.http-web-server.html", "web-server.md"),
    ("sect.firewall-packet-filtering.html", "firewall.md"),
]

LUA_FILTER = LUA_FENCED_CODE + LUA_ATTR_HELPERS + r'''
-- 1. keep only the page's content (the first top-level
--    <div class="section">): drops the "Download the ebook" banner, the
--    logos and the navigation bars at top and bottom
local keep_body = {
  Pandoc = function(doc)
    local body = nil
    for _, b in ipairs(doc.blocks) do
      if b.t == "Div" and (has_class(b, "section") or has_class(b, "chapter")) then
        body = b
        break
      end
    end
    if not body then error("no <div class=\"section\"> in page") end
    doc.blocks = body.content
    doc.meta = {}
    return doc
  end,
}

-- 2. non-breaking spaces (after the section numbers in headings, in
--    "Example 9.1." and "Figure 9.3." labels, in some cross-references)
--    become ordinary spaces
local nbsp = {
  Str = function(el)
    if el.text:find("\u{a0}") then
      return pandoc.Str((el.text:gsub("\u{a0}", " ")))
    end
  end,
}

-- 3. titled blocks. A Publican title page (<div class="titlepage">) holds
--    either a heading (kept) or the title of an aside box
--    (<div class="sidebar">: "BACK TO BASICS ...", "GOING FURTHER ...",
--    "TIP ...", whose label is emphasised); an aside's title becomes a bold
--    paragraph, its label no longer emphasised. Example titles and figure
--    captions (<p class="title"><strong>) already read as a bold paragraph;
--    a figure loses its image.
local function unemph(inlines)
  return pandoc.walk_inline(pandoc.Span(inlines), {
    Emph = function(e) return e.content end,
  }).content
end

local function title_blocks(blocks)
  local out = {}
  pandoc.walk_block(pandoc.Div(blocks), {
    Header = function(h) table.insert(out, h) end,
    Para = function(p) table.insert(out, p) end,
    Plain = function(p) table.insert(out, p) end,
  })
  return out
end

local titles = {
  Div = function(el)
    if has_class(el, "titlepage") then
      local out = {}
      for _, b in ipairs(title_blocks(el.content)) do
        if b.t == "Header" then
          table.insert(out, b)
        else
          local inl = b.content
          if #inl == 1 and inl[1].t == "Strong" then inl = inl[1].content end
          table.insert(out, pandoc.Para({ pandoc.Strong(unemph(inl)) }))
        end
      end
      return out
    end
    if has_class(el, "mediaobject") then return {} end
    return nil
  end,
}

-- 4. cleanup
local function is_empty(inlines)
  for _, i in ipairs(inlines) do
    if i.t ~= "Space" and i.t ~= "SoftBreak" and i.t ~= "LineBreak" then
      return false
    end
  end
  return true
end

-- leading and trailing blanks of a paragraph (the HTML indents the text
-- inside every <div class="para">)
local function trim(inlines)
  while #inlines > 0 and (inlines[1].t == "Space" or inlines[1].t == "SoftBreak") do
    table.remove(inlines, 1)
  end
  while #inlines > 0 and (inlines[#inlines].t == "Space" or inlines[#inlines].t == "SoftBreak") do
    table.remove(inlines)
  end
  return inlines
end

local clean = {
  -- links (cross-references, URLs, e-mail addresses) become their text;
  -- index anchors (empty spans) vanish
  Link = function(el) return el.content end,
  Span = function(el) return el.content end,
  Image = function(el) return {} end,
  Note = function(el) return {} end,
  RawInline = function(el)
    if el.format ~= "markdown" then return {} end
  end,
  RawBlock = function(el)
    if el.format ~= "markdown" then return {} end
  end,
  Plain = function(el)
    if is_empty(el.content) then return {} end
    el.content = trim(el.content)
    return el
  end,
  Para = function(el)
    if is_empty(el.content) then return {} end
    el.content = trim(el.content)
    return el
  end,
  -- headings: no ids, no anchors; the page title (an <h2>) is the only
  -- "#", its subsections "##" and "###"
  Header = function(el)
    el = bare(el)
    el.level = math.max(1, el.level - 1)
    el.content = trim(el.content)
    return el
  end,
  CodeBlock = bare,
  BlockQuote = function(el) return el.content end,
  -- variable lists: each term a bold paragraph, its definition below it
  DefinitionList = function(el)
    local out = {}
    for _, item in ipairs(el.content) do
      table.insert(out, pandoc.Para({ pandoc.Strong(item[1]) }))
      for _, def in ipairs(item[2]) do
        for _, b in ipairs(def) do table.insert(out, b) end
      end
    end
    return out
  end,
}

-- 5. <div class="para"> (and every other wrapper) is unwrapped; the text of
--    a para div becomes a paragraph of its own
local function unwrap_divs(blocks)
  local out = {}
  for _, b in ipairs(blocks) do
    if b.t == "Div" then
      local para = has_class(b, "para")
      for _, c in ipairs(unwrap_divs(b.content)) do
        if para and c.t == "Plain" then c = pandoc.Para(c.content) end
        table.insert(out, c)
      end
    else
      table.insert(out, b)
    end
  end
  return out
end

local divs = {
  Pandoc = function(doc)
    doc.blocks = unwrap_divs(doc.blocks)
    return doc
  end,
  BulletList = function(el)
    for i, item in ipairs(el.content) do el.content[i] = unwrap_divs(item) end
    return el
  end,
  OrderedList = function(el)
    for i, item in ipairs(el.content) do el.content[i] = unwrap_divs(item) end
    return el
  end,
}

-- 6. fenced code blocks (the gfm writer would indent them); code blocks
--    that follow each other directly (two <pre> in one example) are joined
--    into one run of fenced blocks separated by a blank line, which the gfm
--    writer would not put between two raw blocks
local fence = {
  Blocks = function(blocks)
    local out = {}
    local prev_code = false
    for _, b in ipairs(blocks) do
      if b.t == "CodeBlock" then
        local raw = fenced_code(b)
        if prev_code then
          out[#out] = pandoc.RawBlock("markdown", out[#out].text .. "\n\n" .. raw.text)
        else
          table.insert(out, raw)
        end
        prev_code = true
      else
        table.insert(out, b)
        prev_code = false
      end
    end
    return out
  end,
}

return { keep_body, nbsp, titles, clean, divs, fence }
'''


# The versions the committed corpus was made with. Other versions still work
# but may give a slightly different corpus (and break the eval suite's
# verbatim evidence sentences), so say so.
EXPECTED = {"debian-handbook": "11-en-US-1.0-1", "pandoc": "2.17.1.1"}


def check_versions(doc_dir):
    # Every page names the book's Publican build in a <meta name="package">
    # ("Debian-debian-handbook-11-en-US-1.0-1"), whichever way the package
    # was found.
    with open(os.path.join(doc_dir, HTML_SUBDIR, PAGES[0][0]), encoding="utf-8") as f:
        m = re.search(r'name="package" content="Debian-debian-handbook-([^"]*)"', f.read())
    warn_versions(EXPECTED, {"debian-handbook": m.group(1) if m else "",
                             "pandoc": pandoc_version()})


def main():
    convert_package("debian-handbook", DOC_SUBDIR, HTML_SUBDIR, PAGES, LUA_FILTER, OUT, check_versions)


if __name__ == "__main__":
    main()
