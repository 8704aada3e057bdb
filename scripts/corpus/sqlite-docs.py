#!/usr/bin/env python3
"""Rebuild corpus/sqlite-docs/ from Debian's sqlite3-doc package.

Converts a chosen subset of the official SQLite documentation (public domain)
from the HTML installed by `sqlite3-doc` into Markdown with pandoc, stripping
site navigation, tables of contents, syntax diagrams, scripts, links and
leftover HTML, and cutting some very long pages to their main sections (the
cuts are listed in PAGES below and in corpus/sqlite-docs.SOURCE.md).

Idempotent: installs sqlite3-doc and pandoc with apt-get if missing, then
rewrites every output file. Needs only the Python standard library.

Usage: scripts/corpus/sqlite-docs.py   (run from anywhere; writes into the repo)
"""
import os
import shutil
import subprocess
import sys
import tempfile

from corpus_text import (LUA_FENCED_CODE, apt_install, convert_html, pandoc_version,
                         warn_versions, write_pages)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(REPO, "corpus", "sqlite-docs")
DOC_DIRS = ["/usr/share/doc/sqlite3", "/usr/share/doc/sqlite3-doc"]

# (source page, output file, options). Options: "drop": heading ids (from the
# HTML) of sections to leave out, with their subsections; "bold_sections": turn
# paragraphs that are wholly bold (FAQ questions, the items of the limits list
# and of the when-to-use lists) into headings one level below the heading
# above them, and unwrap the block quote or list item under them;
# "drop_index": drop the page's first numbered list (the FAQ's list of
# questions, a table of contents).
PAGES = [
    ("cli.html", "cli.md", {"drop": [
        "accessing_zip_archives_as_database_files",
        "recover_data_from_a_corrupted_database",
        "cryptographic_hashes_of_database_content",
        "database_content_self_tests",
        "sqlite_archive_support",
        "index_recommendations_sqlite_expert_",
        "miscellaneous_extension_features",
        "compiling_the_sqlite3_program_from_sources",
    ]}),
    ("datatype3.html", "datatypes.md", {}),
    ("autoinc.html", "autoincrement.md", {}),
    ("wal.html", "wal.md", {"drop": [
        "implementation_of_shared_memory_for_the_wal_index",
        "use_of_wal_without_shared_memory",
    ]}),
    ("foreignkeys.html", "foreign-keys.md", {}),
    ("limits.html", "limits.md", {"bold_sections": True}),
    ("whentouse.html", "when-to-use.md", {"bold_sections": True}),
    ("faq.html", "faq.md", {"bold_sections": True, "drop_index": True}),
    ("lang_altertable.html", "alter-table.md", {}),
    ("lang_datefunc.html", "date-time-functions.md", {}),
    ("stricttables.html", "strict-tables.md", {}),
    ("json1.html", "json-functions.md", {}),
    ("withoutrowid.html", "without-rowid.md", {}),
    ("isolation.html", "isolation.md", {}),
]

LUA_FILTER = LUA_FENCED_CODE + r'''
local function has_class(el, names)
  for _, c in ipairs(el.classes) do
    if names[c] then return true end
  end
  return false
end
local remove_div = { nosearch = true, fancy_toc = true, imgcontainer = true,
  pikchr = true, menu = true, searchmenu = true, tagline = true }

-- page footer ("This page last modified on ...") and the label line of a
-- syntax diagram ("alter-table-stmt: hide")
local function drop_para(el)
  local s = pandoc.utils.stringify(el)
  if s:match("^%s*This page last modified on") then return {} end
  if s:match("^[%w%-]+:%s*hide$") or s:match("^[%w%-]+:%s*show$") then return {} end
  return nil
end

local clean = {
  Div = function(el)
    if has_class(el, remove_div) then return {} end
    return el.content
  end,
  Link = function(el) return el.content end,
  Image = function(el) return {} end,
  Span = function(el) return el.content end,
  RawBlock = function(el) return {} end,
  RawInline = function(el) return {} end,
  Para = function(el) return drop_para(el) end,
  Plain = function(el) return drop_para(el) end,
  -- <blockquote> used only to indent a code example or a table
  BlockQuote = function(el)
    for _, b in ipairs(el.content) do
      if b.t ~= "CodeBlock" and b.t ~= "Table" then return nil end
    end
    return el.content
  end,
}

-- Tables. A line break inside a cell cannot be written in a pipe table: it
-- becomes ", " in body cells (lists of type names) and a space in header
-- cells. A table whose cells hold code blocks or lists (side-by-side
-- comparisons) cannot be a pipe table at all: it is written out column by
-- column, each cell's content in turn.
local function table_rows(tbl)
  local rows = {}
  for _, r in ipairs(tbl.head.rows) do table.insert(rows, {r, true}) end
  for _, b in ipairs(tbl.bodies) do
    for _, r in ipairs(b.head) do table.insert(rows, {r, true}) end
    for _, r in ipairs(b.body) do table.insert(rows, {r, false}) end
  end
  for _, r in ipairs(tbl.foot.rows) do table.insert(rows, {r, false}) end
  return rows
end

local function fix_table(tbl)
  local rows = table_rows(tbl)
  local complex = false
  for _, rr in ipairs(rows) do
    for _, c in ipairs(rr[1].cells) do
      if #c.contents > 1 then complex = true end
      for _, b in ipairs(c.contents) do
        if b.t ~= "Plain" and b.t ~= "Para" then complex = true end
      end
    end
  end
  if complex then
    local out = {}
    local ncol = 0
    for _, rr in ipairs(rows) do ncol = math.max(ncol, #rr[1].cells) end
    for j = 1, ncol do
      for _, rr in ipairs(rows) do
        local c = rr[1].cells[j]
        if c then
          local blocks = pandoc.walk_block(pandoc.Div(c.contents),
            { LineBreak = function() return pandoc.Space() end }).content
          for _, b in ipairs(blocks) do
            if b.t == "Plain" then b = pandoc.Para(b.content) end
            table.insert(out, b)
          end
        end
      end
    end
    return out
  end
  for _, rr in ipairs(rows) do
    local is_head = rr[2]
    for _, c in ipairs(rr[1].cells) do
      c.contents = pandoc.walk_block(pandoc.Div(c.contents), {
        LineBreak = function()
          if is_head then return pandoc.Space() end
          return { pandoc.Str(","), pandoc.Space() }
        end }).content
    end
  end
  return tbl
end

-- drop the empty spacer columns that the HTML tables use for layout
local function drop_empty_columns(tbl)
  local rows = {}
  for _, r in ipairs(tbl.head.rows) do table.insert(rows, r) end
  for _, b in ipairs(tbl.bodies) do
    for _, r in ipairs(b.head) do table.insert(rows, r) end
    for _, r in ipairs(b.body) do table.insert(rows, r) end
  end
  for _, r in ipairs(tbl.foot.rows) do table.insert(rows, r) end
  local ncol = #tbl.colspecs
  for _, r in ipairs(rows) do
    if #r.cells ~= ncol then return nil end
    for _, c in ipairs(r.cells) do
      if c.row_span ~= 1 or c.col_span ~= 1 then return nil end
    end
  end
  local keep, nkeep = {}, 0
  for j = 1, ncol do
    keep[j] = false
    for _, r in ipairs(rows) do
      if pandoc.utils.stringify(r.cells[j].contents):match("%S") then keep[j] = true end
    end
    if keep[j] then nkeep = nkeep + 1 end
  end
  if nkeep == ncol or nkeep == 0 then return nil end
  local function filter(list)
    local out = {}
    for j, x in ipairs(list) do if keep[j] then table.insert(out, x) end end
    return out
  end
  tbl.colspecs = filter(tbl.colspecs)
  for _, r in ipairs(rows) do r.cells = filter(r.cells) end
  return tbl
end

-- fenced code blocks (the gfm writer would indent them)
local fence = {
  Table = drop_empty_columns,
  CodeBlock = fenced_code,
}

local function only_strong(blk)
  -- a paragraph whose whole text is bold: the page's way of titling a
  -- section (FAQ questions, the items of the limits list)
  if blk.t ~= "Para" and blk.t ~= "Plain" then return nil end
  local strong = nil
  for _, i in ipairs(blk.content) do
    if i.t == "Strong" and not strong then strong = i
    elseif i.t ~= "Space" and i.t ~= "SoftBreak" and i.t ~= "LineBreak" then return nil end
  end
  return strong
end

local function restructure(doc)
  local meta = doc.meta
  local drop_ids = {}
  if meta.drop_ids then
    for id in pandoc.utils.stringify(meta.drop_ids):gmatch("[^,]+") do
      drop_ids[id] = true
    end
  end
  local bold_sections = meta.bold_sections ~= nil
  local drop_index = meta.drop_index ~= nil

  local min_level = 6
  for _, b in ipairs(doc.blocks) do
    if b.t == "Header" and b.level < min_level then min_level = b.level end
  end

  -- 1. bold titles -> headings one level below the page's top level
  local blocks = {}
  local seen_list = false
  local last_level = min_level
  local i = 1
  while i <= #doc.blocks do
    local b = doc.blocks[i]
    local strong = bold_sections and only_strong(b)
    if b.t == "Header" then last_level = b.level end
    if strong then
      table.insert(blocks, pandoc.Header(last_level + 1, strong.content))
      local nxt = doc.blocks[i + 1]
      if nxt and nxt.t == "BlockQuote" then
        for _, c in ipairs(nxt.content) do table.insert(blocks, c) end
        i = i + 1
      end
    elseif b.t == "OrderedList" and drop_index and not seen_list then
      seen_list = true   -- the FAQ's list of questions (a table of contents)
    elseif (b.t == "OrderedList" or b.t == "BulletList") and bold_sections then
      local all = #b.content > 0
      for _, item in ipairs(b.content) do
        if not (item[1] and only_strong(item[1])) then all = false end
      end
      if all then
        for _, item in ipairs(b.content) do
          table.insert(blocks, pandoc.Header(last_level + 1, only_strong(item[1]).content))
          for k = 2, #item do table.insert(blocks, item[k]) end
        end
      else
        table.insert(blocks, b)
      end
    else
      table.insert(blocks, b)
    end
    i = i + 1
  end

  -- 2. drop the sections named in drop_ids (with their subsections)
  local kept = {}
  local skipping = nil
  for _, b in ipairs(blocks) do
    if b.t == "Header" then
      if skipping and b.level <= skipping then skipping = nil end
      if not skipping and drop_ids[b.identifier] then skipping = b.level end
    end
    if not skipping then table.insert(kept, b) end
  end

  -- 3. shift headings so that the page body's top level is ##, and put the
  --    page title on top as the only #
  local shift = 2 - min_level
  local out = {}
  local title = meta.title and pandoc.utils.stringify(meta.title) or ""
  table.insert(out, pandoc.Header(1, title))
  for _, b in ipairs(kept) do
    if b.t == "Header" then
      b.level = math.min(b.level + shift, 6)
      b.identifier = ""
    end
    table.insert(out, b)
  end
  doc.blocks = out
  doc.meta = {}
  return doc
end

return { clean, { Table = fix_table }, { Pandoc = restructure }, fence }
'''


def ensure_tools():
    need = []
    if not any(os.path.exists(os.path.join(d, "cli.html")) for d in DOC_DIRS):
        need.append("sqlite3-doc")
    if shutil.which("pandoc") is None:
        need.append("pandoc")
    if need:
        apt_install(*need)


# The versions the committed corpus was made with. Other versions still work
# but may give a slightly different corpus (and break the eval suites'
# verbatim evidence sentences), so say so.
EXPECTED = {"sqlite3-doc": "3.40.1-2+deb12u2", "pandoc": "2.17.1.1"}


def check_versions():
    doc = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "sqlite3-doc"],
                         capture_output=True, text=True).stdout.strip()
    warn_versions(EXPECTED, {"sqlite3-doc": doc, "pandoc": pandoc_version()},
                  verb="installed")


def doc_dir():
    for d in DOC_DIRS:
        if os.path.exists(os.path.join(d, "cli.html")):
            return d
    sys.exit("sqlite3-doc HTML not found in " + ", ".join(DOC_DIRS))


def convert(src, opts, lua_path):
    meta = []
    for flag in ("bold_sections", "drop_index"):
        if opts.get(flag):
            meta += ["-M", flag + "=true"]
    if opts.get("drop"):
        meta += ["-M", "drop_ids=" + ",".join(opts["drop"])]
    return convert_html(src, lua_path, *meta)


def main():
    ensure_tools()
    check_versions()
    src_dir = doc_dir()
    os.makedirs(OUT, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        lua_path = os.path.join(tmp, "clean.lua")
        with open(lua_path, "w", encoding="utf-8") as f:
            f.write(LUA_FILTER)
        write_pages(OUT, ((name, convert(os.path.join(src_dir, page), opts, lua_path))
                          for page, name, opts in PAGES))


if __name__ == "__main__":
    main()
