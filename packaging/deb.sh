#!/usr/bin/env bash
# Builds the Debian package (docs/packaging.md): the release binary, then
# the man pages and shell completions generated from it, then `cargo deb`.
# Needs cargo-deb (`cargo install cargo-deb --locked`) and dpkg.
#   bash packaging/deb.sh            -> target/debian/porfiry_<version>-1_<arch>.deb
#   PORFIRY_DEB_NO_BUILD=1 ...       -> packages $CARGO_TARGET_DIR/release/porfiry as it is
# Further arguments go to cargo deb (e.g. --output DIR). `--compress-system`
# (the system's xz) is much faster than cargo-deb's own compressor.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${CARGO_TARGET_DIR:-target}"
if [ "${PORFIRY_DEB_NO_BUILD:-}" != "1" ]; then
  cargo build --release --locked -p porfiry-node
fi
bin="$target/release/porfiry"
rm -rf "$target/release/man"
"$bin" manpage "$target/release/man"
gzip -9n "$target/release/man/"*.1
mkdir -p "$target/release/completions"
"$bin" completions bash > "$target/release/completions/porfiry.bash"
"$bin" completions zsh > "$target/release/completions/_porfiry"
"$bin" completions fish > "$target/release/completions/porfiry.fish"
cargo deb -p porfiry-node --no-build --compress-system "$@"
