#!/usr/bin/env python3
"""Rebuild corpus/debian-policy/ from Debian's debian-policy package.

Converts seven chapters of the Debian Policy Manual (GPL-2+) from the Sphinx
HTML shipped in the `debian-policy` package into Markdown with pandoc,
stripping the Sphinx chrome (navigation bars, sidebar with its table of
contents and search box, "¶" header links, footer, previous/next links),
replacing links by their text and moving each chapter's footnotes to a final
"Footnotes" section. The prose is not edited.

Finds the package's files in $GROUNDCITE_REAL_DOCS/debian-policy or
~/.cache/groundcite/real-docs/debian-policy (an unpacked .deb: the HTML under
usr/share/doc/debian-policy/policy.html/), else in /usr/share/doc/debian-policy
(the package installed), else downloads the .deb with `apt-get download` and
unpacks it with `dpkg-deb -x` into a temporary directory. Installs pandoc with
apt-get if missing. Idempotent: rewrites every output file, and the same
package and pandoc versions give byte-identical files. Needs only the Python
standard library.

Usage: scripts/corpus/debian-policy.py   (run from anywhere; writes into the repo)
"""
import os
import re

from corpus_text import (LUA_ATTR_HELPERS, LUA_FENCED_CODE, convert_package,
                          pandoc_version, warn_versions)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(REPO, "corpus", "debian-policy")
DOC_SUBDIR = os.path.join("usr", "share", "doc", "debian-policy")

# (source page in policy.html/, output file)
PAGES = [
    ("ch-archive.html", "archive.md"),
    ("ch-binary.html", "binary.md"),
    ("ch-docs.html", "docs.md"),
    ("ch-files.html", "files.md"),
    ("ch-maintainerscripts.html", "maintainer-scripts.md"),
    ("ch-opersys.html", "operating-system.md"),
    ("ch-customized-programs.html", "customized-programs.md"),
]

LUA_FILTER = LUA_FENCED_CODE + LUA_ATTR_HELPERS + r'''
-- 1. keep only the page body (<div class="body" role="main">): drops the
--    navigation bars, the sidebar (table of contents, previous/next topic,
--    "Show Source", search box) and the footer
local function find_body(blocks)
  for _, b in ipairs(blocks) do
    if b.t == "Div" then
      if has_class(b, "body") then return b end
      local found = find_body(b.content)
      if found then return found end
    end
  end
  return nil
end

local keep_body = {
  Pandoc = function(doc)
    local body = find_body(doc.blocks)
    if not body then error("no <div class=\"body\"> in page") end
    doc.blocks = body.content
    doc.meta = {}
    return doc
  end,
}

-- rST line blocks (the lists of maintainer script invocations): pandoc
-- reads <div class="line-block"> as a run of <div class="line">, one per
-- line; each run becomes a bullet list, one bullet per line
local function group_lines(blocks)
  local out, run = {}, nil
  for _, b in ipairs(blocks) do
    if b.t == "Div" and has_class(b, "line") then
      run = run or {}
      local inl = {}
      for _, c in ipairs(b.content) do
        if c.t == "Plain" or c.t == "Para" then
          for _, i in ipairs(c.content) do table.insert(inl, i) end
        end
      end
      table.insert(run, { pandoc.Plain(inl) })
    else
      if run then table.insert(out, pandoc.BulletList(run)); run = nil end
      table.insert(out, b)
    end
  end
  if run then table.insert(out, pandoc.BulletList(run)) end
  return out
end

local line_blocks = {
  Div = function(el)
    el.content = group_lines(el.content)
    return el
  end,
  BlockQuote = function(el)
    el.content = group_lines(el.content)
    return el
  end,
}

-- 2. footnotes. A reference (<a class="footnote-reference">N</a>) becomes
--    the text "[N]"; the footnote list (a <dl class="footnote"> whose labels
--    hold back-reference links) is taken out of the text and written at the
--    end of the page under "## Footnotes", each note starting with "[N]".
local function is_footnote_list(dl)
  local found = false
  for _, item in ipairs(dl.content) do
    pandoc.walk_inline(pandoc.Span(item[1]), {
      Link = function(l) if has_class(l, "fn-backref") then found = true end end,
    })
  end
  return found
end

local function footnote_label(term)
  local label = nil
  pandoc.walk_inline(pandoc.Span(term), {
    Span = function(s)
      if has_class(s, "brackets") and not label then
        label = pandoc.utils.stringify(s)
      end
    end,
  })
  return label or pandoc.utils.stringify(term)
end

local footnotes = {
  Link = function(el)
    if has_class(el, "footnote-reference") then
      return pandoc.RawInline("markdown", "[" .. pandoc.utils.stringify(el.content) .. "]")
    end
    return nil
  end,
  Pandoc = function(doc)
    local notes = {}
    local blocks = pandoc.walk_block(pandoc.Div(doc.blocks), {
      DefinitionList = function(dl)
        if not is_footnote_list(dl) then return nil end
        for _, item in ipairs(dl.content) do
          local mark = pandoc.RawInline("markdown", "[" .. footnote_label(item[1]) .. "]")
          local first = true
          for _, def in ipairs(item[2]) do
            for _, b in ipairs(def) do
              if first then
                if b.t == "Para" or b.t == "Plain" then
                  table.insert(b.content, 1, pandoc.Space())
                  table.insert(b.content, 1, mark)
                  b = pandoc.Para(b.content)
                else
                  table.insert(notes, pandoc.Para({ mark }))
                end
                first = false
              end
              table.insert(notes, b)
            end
          end
        end
        return {}
      end,
    }).content
    if #notes > 0 then
      table.insert(blocks, pandoc.Header(2, "Footnotes"))
      for _, b in ipairs(notes) do table.insert(blocks, b) end
    end
    doc.blocks = blocks
    return doc
  end,
}

-- 3. cleanup
-- Headings and code blocks lose Sphinx's ids, classes and attributes.
local clean = {
  Link = function(el)
    if has_class(el, "headerlink") then return {} end   -- the "¶"
    return el.content
  end,
  Span = function(el) return el.content end,
  Image = function(el) return {} end,
  RawInline = function(el)
    if el.format ~= "markdown" then return {} end
  end,
  RawBlock = function(el)
    if el.format ~= "markdown" then return {} end
  end,
  -- <section>, highlight wrappers and the like
  Div = function(el) return el.content end,
  -- rST indentation, not quotation
  BlockQuote = function(el) return el.content end,
  -- the same for a line block that pandoc reads as such
  LineBlock = function(el)
    local items = {}
    for _, line in ipairs(el.content) do
      table.insert(items, { pandoc.Plain(line) })
    end
    return pandoc.BulletList(items)
  end,
  -- definition lists (the DFSG, priorities, uid ranges, init script
  -- actions...): the term as a bold paragraph, its definition below it. A
  -- term holding an emphasised placeholder is a maintainer script
  -- invocation ("`postinst` configure *most-recently-configured-version*"):
  -- it becomes a one-bullet list, like the line blocks of invocations
  -- around it.
  DefinitionList = function(el)
    local out = {}
    for _, item in ipairs(el.content) do
      local synopsis = false
      pandoc.walk_inline(pandoc.Span(item[1]), {
        Emph = function() synopsis = true end,
      })
      if synopsis then
        table.insert(out, pandoc.BulletList({ { pandoc.Plain(item[1]) } }))
      else
        table.insert(out, pandoc.Para({ pandoc.Strong(item[1]) }))
      end
      for _, def in ipairs(item[2]) do
        for _, b in ipairs(def) do table.insert(out, b) end
      end
    end
    return out
  end,
  Header = bare,
  CodeBlock = bare,
}

-- 4. fenced code blocks (the gfm writer would indent them)
local fence = {
  CodeBlock = fenced_code,
}

return { keep_body, line_blocks, footnotes, clean, fence }
'''


# The versions the committed corpus was made with. Other versions still work
# but may give a slightly different corpus (and break the eval suite's
# verbatim evidence sentences), so say so.
EXPECTED = {"debian-policy": "4.6.2.0", "pandoc": "2.17.1.1"}


def check_versions(doc_dir):
    # The HTML's <title> names the manual's version ("Debian Policy Manual
    # v4.6.2.0"), whichever way the package was found.
    with open(os.path.join(doc_dir, "policy.html", PAGES[0][0]), encoding="utf-8") as f:
        m = re.search(r"Debian Policy Manual v([0-9][0-9.]*)", f.read())
    warn_versions(EXPECTED, {"debian-policy": m.group(1) if m else "",
                             "pandoc": pandoc_version()})


def main():
    convert_package("debian-policy", DOC_SUBDIR, "policy.html", PAGES, LUA_FILTER, OUT, check_versions)


if __name__ == "__main__":
    main()
