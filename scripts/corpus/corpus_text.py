"""What the corpus converters share: pandoc's Markdown tidied the same way,
the Debian package a corpus comes from found or fetched the same way."""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

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


# Two more Lua helpers the HTML filters share: whether an element has a
# class, and an element stripped of its identifier, classes and attributes.
LUA_ATTR_HELPERS = r'''
local function has_class(el, name)
  for _, c in ipairs(el.classes or {}) do
    if c == name then return true end
  end
  return false
end

local function bare(el)
  el.identifier = ""
  el.classes = {}
  el.attributes = {}
  return el
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


def apt_install(*pkgs):
    """apt-get install, with one `apt-get update` and a retry when the
    package lists are missing or stale."""
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    if subprocess.call(["apt-get", "install", "-y", *pkgs], env=env) != 0:
        subprocess.check_call(["apt-get", "update"], env=env)
        subprocess.check_call(["apt-get", "install", "-y", *pkgs], env=env)


def ensure_pandoc():
    if shutil.which("pandoc") is None:
        apt_install("pandoc")


def pandoc_version():
    return subprocess.run(["pandoc", "--version"], capture_output=True,
                          text=True).stdout.split("\n")[0].split()[-1]


def warn_versions(expected, found, verb="found"):
    """Says which of `found` ({name: version}) differ from `expected`: other
    versions still convert, but may change the corpus (and break the eval
    suites' verbatim evidence sentences)."""
    for name, got in found.items():
        if got != expected[name]:
            print(f"warning: {name} {got or '(unknown)'} {verb}; the corpus "
                  f"was made with {expected[name]}", file=sys.stderr)


def package_doc_dir(package, doc_subdir, present, tmp):
    """The folder `doc_subdir` (e.g. usr/share/doc/PACKAGE) of a Debian
    package's files, where `present(folder)` holds: under
    $GROUNDCITE_REAL_DOCS/PACKAGE, ~/.cache/groundcite/real-docs/PACKAGE (the
    unpacked .deb, as scripts/fetch-real-docs leaves it), the installed
    package, else the .deb fetched with `apt-get download` and unpacked into
    `tmp`."""
    roots = []
    if os.environ.get("GROUNDCITE_REAL_DOCS"):
        roots.append(os.path.join(os.environ["GROUNDCITE_REAL_DOCS"], package))
    roots.append(os.path.join(os.path.expanduser("~"), ".cache", "groundcite",
                              "real-docs", package))
    roots.append("/")
    for root in roots:
        d = os.path.join(root, doc_subdir)
        if present(d):
            return d
    # apt-get may warn that the download is "performed unsandboxed as
    # root": harmless.
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    if subprocess.call(["apt-get", "download", package], cwd=tmp, env=env) != 0:
        subprocess.check_call(["apt-get", "update"], env=env)
        subprocess.check_call(["apt-get", "download", package], cwd=tmp, env=env)
    debs = sorted(glob.glob(os.path.join(tmp, f"{package}_*.deb")))
    if not debs:
        sys.exit(f"apt-get download {package} gave no .deb")
    root = os.path.join(tmp, "root")
    subprocess.check_call(["dpkg-deb", "-x", debs[-1], root])
    d = os.path.join(root, doc_subdir)
    if not present(d):
        sys.exit(f"{package}: the expected pages are not in {debs[-1]}")
    return d


def convert_html(src, lua_path, *opts):
    """One HTML page as GitHub Markdown (pandoc, the filter at `lua_path`),
    tidied by `postprocess`."""
    cmd = ["pandoc", "-f", "html", "-t", "gfm-raw_html", "--wrap=none", *opts,
           "--lua-filter", lua_path, src]
    md = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return postprocess(md)


def convert_package(package, doc_subdir, html_subdir, pages, lua_filter, out_dir,
                    check_versions):
    """The whole run of a converter whose corpus is HTML pages of one Debian
    package: pandoc present, the package's doc folder found or fetched,
    its version checked (`check_versions(doc_dir)`), each (page, name) of
    `pages` converted with `lua_filter` into `out_dir`."""
    ensure_pandoc()
    os.makedirs(out_dir, exist_ok=True)

    def has_pages(d):
        return os.path.exists(os.path.join(d, html_subdir, pages[0][0]))

    with tempfile.TemporaryDirectory() as tmp:
        doc_dir = package_doc_dir(package, doc_subdir, has_pages, tmp)
        check_versions(doc_dir)
        lua_path = os.path.join(tmp, "clean.lua")
        with open(lua_path, "w", encoding="utf-8") as f:
            f.write(lua_filter)
        write_pages(out_dir, ((name, convert_html(os.path.join(doc_dir, html_subdir, page),
                                                  lua_path))
                              for page, name in pages))
