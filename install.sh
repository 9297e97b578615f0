#!/bin/sh
# Installs the subagents executable. Picks the archive for this machine (uname), checks it against SHA256SUMS
# before anything is unpacked, and puts `subagents` in ~/.local/bin (or --prefix DIR).
#
#   curl -fsSL https://github.com/OWNER/subagents/releases/latest/download/install.sh | sh
#   sh install.sh --prefix /usr/local/bin
#   sh install.sh --from ./dist/release             a local folder with the archives and SHA256SUMS
#   sh install.sh --from http://127.0.0.1:8080      a mirror of that folder
#
# Options: --prefix DIR, --from URL|DIR (also $SUBAGENTS_RELEASES), --version V (default: the one in SHA256SUMS).
set -eu

BASE="${SUBAGENTS_RELEASES:-https://github.com/OWNER/subagents/releases/latest/download}"
PREFIX="${HOME:-}/.local/bin"
VERSION=""

say() { printf '%s\n' "$*"; }
die() {
  printf 'install.sh: %s\n' "$*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || die "--prefix needs a folder"; PREFIX=$2; shift 2 ;;
    --prefix=*) PREFIX=${1#*=}; shift ;;
    --from) [ $# -ge 2 ] || die "--from needs a URL or folder"; BASE=$2; shift 2 ;;
    --from=*) BASE=${1#*=}; shift ;;
    --version) [ $# -ge 2 ] || die "--version needs a version"; VERSION=$2; shift 2 ;;
    --version=*) VERSION=${1#*=}; shift ;;
    -h | --help)
      say "Usage: install.sh [--prefix DIR] [--from URL|DIR] [--version V]"
      say "Installs subagents into DIR (default ~/.local/bin) from URL|DIR (default $BASE),"
      say "after checking the archive against SHA256SUMS."
      exit 0
      ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done
[ -n "$PREFIX" ] || die "no HOME: pass --prefix DIR"

os=$(uname -s)
arch=$(uname -m)
case "$os" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  MINGW* | MSYS* | CYGWIN*) die "on Windows, download subagents-<version>-windows-x64.zip from $BASE and put subagents.exe on your PATH" ;;
  *) die "no subagents executable for $os (there are Linux, macOS and Windows ones)" ;;
esac
case "$arch" in
  x86_64 | amd64) arch=x64 ;;
  arm64 | aarch64) arch=arm64 ;;
  *) die "no subagents executable for $arch (there are x64 and arm64 ones)" ;;
esac
# An x64 shell under Rosetta on Apple silicon still gets the native executable.
if [ "$os-$arch" = darwin-x64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || true)" = 1 ]; then arch=arm64; fi
platform="$os-$arch"

tmp=$(mktemp -d 2>/dev/null || mktemp -d -t subagents)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# fetch NAME: $BASE/NAME into $tmp/NAME, from a URL or a folder.
fetch() {
  case "$BASE" in
    http://* | https://*)
      if command -v curl >/dev/null 2>&1; then
        curl -fsSL "$BASE/$1" -o "$tmp/$1" || die "cannot download $BASE/$1"
      elif command -v wget >/dev/null 2>&1; then
        wget -q -O "$tmp/$1" "$BASE/$1" || die "cannot download $BASE/$1"
      else
        die "need curl or wget to download $BASE/$1"
      fi
      ;;
    file://*) cp "${BASE#file://}/$1" "$tmp/$1" 2>/dev/null || die "cannot read ${BASE#file://}/$1" ;;
    *) cp "$BASE/$1" "$tmp/$1" 2>/dev/null || die "cannot read $BASE/$1" ;;
  esac
}

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  elif command -v openssl >/dev/null 2>&1; then
    openssl dgst -sha256 "$1" | sed 's/^.*= *//'
  else
    die "need sha256sum, shasum or openssl to verify the download"
  fi
}

fetch SHA256SUMS
if [ -n "$VERSION" ]; then
  name="subagents-$VERSION-$platform.tar.gz"
else
  name=$(awk -v suffix="-$platform.tar.gz" 'length($2) > length(suffix) && substr($2, length($2) - length(suffix) + 1) == suffix { print $2; exit }' "$tmp/SHA256SUMS")
  [ -n "$name" ] || die "SHA256SUMS at $BASE lists no archive for $platform"
fi
expected=$(awk -v n="$name" '$2 == n { print $1; exit }' "$tmp/SHA256SUMS")
[ -n "$expected" ] || die "SHA256SUMS at $BASE does not list $name"

say "Downloading $name"
fetch "$name"
actual=$(sha256 "$tmp/$name")
if [ "$actual" != "$expected" ]; then
  die "checksum mismatch for $name (expected $expected, got $actual): refusing to install it. Nothing was installed."
fi

mkdir "$tmp/unpacked"
tar -xzf "$tmp/$name" -C "$tmp/unpacked" || die "cannot unpack $name"
exe="$tmp/unpacked/${name%.tar.gz}/subagents"
[ -f "$exe" ] || die "$name holds no ${name%.tar.gz}/subagents"

mkdir -p "$PREFIX" || die "cannot create $PREFIX"
# Copy next to the target, then rename: a subagents running from there keeps working.
cp "$exe" "$PREFIX/.subagents.$$" || die "cannot write to $PREFIX"
chmod 755 "$PREFIX/.subagents.$$"
mv -f "$PREFIX/.subagents.$$" "$PREFIX/subagents" || die "cannot write $PREFIX/subagents"
say "Installed $PREFIX/subagents ($("$PREFIX/subagents" --version 2>/dev/null || echo "$name"))"

case ":${PATH:-}:" in
  *":$PREFIX:"*) ;;
  *) say "$PREFIX is not on your PATH. Add this line to your shell profile (~/.profile, ~/.zshrc, …):" && say "  export PATH=\"$PREFIX:\$PATH\"" ;;
esac
say "Next: 'subagents install' adds the pi extension; 'subagents doctor' checks the setup."
