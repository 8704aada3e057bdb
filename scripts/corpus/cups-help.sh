#!/usr/bin/env bash
# Rebuild corpus/cups-help/ from Debian's cups-server-common package: 23 of
# CUPS's own HTML help pages, copied unmodified (a real help centre in HTML;
# licence and provenance in corpus/cups-help.SOURCE.md).
#
# Reads the unpacked .deb from $GROUNDCITE_REAL_DOCS/cups-server-common or
# ~/.cache/groundcite/real-docs/cups-server-common when present, else
# downloads it with `apt-get download` into a temporary directory. Checks
# every page against the SHA-256 list below, so a different package version
# is named instead of silently changing the corpus. Idempotent.
#
# Usage: scripts/corpus/cups-help.sh   (from anywhere)
set -euo pipefail

VERSION=2.4.2-3+deb12u11
repo="$(cd "$(dirname "$0")/../.." && pwd)"
out="$repo/corpus/cups-help"
cache="${GROUNDCITE_REAL_DOCS:-$HOME/.cache/groundcite/real-docs}/cups-server-common"
help_dir=usr/share/cups/doc-root/help

if [ ! -d "$cache/$help_dir" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && { apt-get download "cups-server-common=$VERSION" \
    || { apt-get update -qq && apt-get download "cups-server-common=$VERSION"; } \
    || apt-get download cups-server-common; })
  mkdir -p "$cache"
  dpkg-deb -x "$tmp"/cups-server-common_*.deb "$cache"
fi

mkdir -p "$out"
sums="$(mktemp)"
cat > "$sums" <<'SUMS'
9dfa2c5e8dc85ffe00fef4152b87de499a2f0fc86175b375bb97b9787f3ef279  accounting.html
d18f44aff132a0252eddb7854eb71c7efb2ddfe371b476369653718c9f269ced  admin.html
3b6707ad21d29e30e82de34bf45d28aff178a0e6d66aaea90f427bd4000924f1  encryption.html
f2734107e9f762e6c388357a362491982757a5a3565fa77a10dad10ef82a6009  firewalls.html
87fac19d7b386ff621546c75f2897b804b25d470a43c4ffdeff25c6325b9e24c  glossary.html
afba6543d345f27e6ddddad408a46bf2e4517cf8157c29d76506f0f6f067fb35  kerberos.html
3b48958573d03374ad4a0b1fbc4154f3b73ff0758e1c4fa733cf535e9dcf9885  man-cancel.html
55ac7c9639f44d853560d42d772465abc9598d02d7525fe3a44068260a509bfe  man-client.conf.html
5253486fdd8ebb205ab1ebe3309e0db179760ff13495fc546d18a9d1e4c9193f  man-cupsaccept.html
2e28d1ebca05102814a8156c346d6fb1791898e952692877be7d4145384d9130  man-cupsenable.html
b88e335ed662cc89f38468e919f0df6145e7eb64d0289524d15725a296bf7dbd  man-lp.html
e8b96a33810793f63fad5acd5b6cc9da469a6eb7d69f86bd82e140e2f51e39e7  man-lpmove.html
c2542a37d6ea173ee461b0d5e14c50cd19d3766ec0a76902c36b7c79a44a8d8b  man-lpoptions.html
338c5d81f2bf6298fb1a814fe701c56bc2f38b1cb903e54dae81681fa97ed6cd  man-lpq.html
a17cb1bf22cba739a4caa880f77c432fb143a62722dc3c22bf89fa8f2c06a755  man-lpr.html
41e9323425674d3518b06cc7ce15cfd680aa09846e0174bab62ac028d4fda1a6  man-lprm.html
5b3012607d9bd1e46b4b9c1e26edeff07560fef52e270f35d4ce3684f0ac8ad5  man-lpstat.html
5e7b683b509fdb648ec287f38146faf4d00c417580cc001c745c25ef48deca7a  network.html
72e3f8a2c46fd8a604941df517095661de194f617c3694de856d6443ce6b7931  options.html
baf5e5ab0e96f7a29ae82633607ce981864101824cde61db42c278ea13559430  overview.html
bb1f1c991e1102bb29238fda3005ce2e067060cfeb0f12fc57c1fd2904b8884c  policies.html
f10cdab0cd6ed37d035a12f13121e243d03be31676f16f7f5df6ccc25043a1b1  security.html
c2c79cc5fc7dec1e412c9aba86c02f57c1b524b4d799d3a0ef74fc4ad1148821  sharing.html
SUMS
find "$out" -maxdepth 1 -name '*.html' -delete
while read -r _ name; do
  cp "$cache/$help_dir/$name" "$out/$name"
done < "$sums"
if ! (cd "$out" && sha256sum --quiet -c "$sums"); then
  echo "cups-help: the pages above differ from cups-server-common $VERSION's; the corpus changed" >&2
  rm -f "$sums"
  exit 1
fi
rm -f "$sums"
echo "corpus/cups-help: $(ls "$out" | wc -l) pages from cups-server-common $VERSION"
