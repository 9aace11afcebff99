#!/usr/bin/env bash
# Puts runner on the job's PATH, for the action (action.yml) and for
# workflows that run runner themselves (install/action.yml). In order:
#   1. a runner already on PATH;
#   2. the release binary of RUNNER_VERSION (a tag such as v0.2.0, or a
#      commit or branch, which have none) from
#      the GitHub repository RUNNER_REPOSITORY (OWNER/REPO), when its
#      SHA-256 checksum matches;
#   3. a build of the source in RUNNER_SOURCE (the action's own checkout);
#   4. a build of that repository at that tag, commit or branch (cargo
#      install).
# Nothing known to install from is an error that says what to set.
# Reads RUNNER_TEMP and GITHUB_PATH as GitHub sets them.
set -euo pipefail

if command -v runner >/dev/null 2>&1; then
  echo "runner on PATH: $(command -v runner)"
  exit 0
fi
repository=${RUNNER_REPOSITORY:-}
version=${RUNNER_VERSION:-}
source=${RUNNER_SOURCE:-}
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) target=x86_64-unknown-linux-musl ;;
  Linux-aarch64 | Linux-arm64) target=aarch64-unknown-linux-musl ;;
  Darwin-x86_64) target=x86_64-apple-darwin ;;
  Darwin-arm64) target=aarch64-apple-darwin ;;
  *) target="" ;;
esac
sha256() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1"; else shasum -a 256 "$1"; fi
}
bin_dir="$RUNNER_TEMP/runner-bin"
if [ -n "$target" ] && [ -n "$repository" ] && [[ "$version" =~ ^v[0-9] ]]; then
  archive="runner-$target.tar.gz"
  base="https://github.com/$repository/releases/download/$version"
  if curl -fsSL --retry 3 -o "$RUNNER_TEMP/$archive" "$base/$archive" &&
    curl -fsSL --retry 3 -o "$RUNNER_TEMP/$archive.sha256" "$base/$archive.sha256"; then
    want=$(cut -d ' ' -f 1 "$RUNNER_TEMP/$archive.sha256")
    got=$(sha256 "$RUNNER_TEMP/$archive" | cut -d ' ' -f 1)
    if [ -n "$want" ] && [ "$want" = "$got" ]; then
      mkdir -p "$bin_dir"
      tar -xzf "$RUNNER_TEMP/$archive" -C "$bin_dir"
      echo "$bin_dir" >> "$GITHUB_PATH"
      echo "runner $version ($target) from $repository's release, checksum $got"
      exit 0
    fi
    echo "::warning::the checksum of $archive does not match ($got, expected $want); building from source"
  else
    echo "no release binary $archive for $repository $version; building from source"
  fi
fi
# A binary built here knows where it came from (runner init writes
# workflows that install from there).
export RUNNER_HOME_REPOSITORY="$repository"
if [ -n "$source" ] && [ -f "$source/Cargo.toml" ]; then
  cargo build --release --locked --manifest-path "$source/Cargo.toml"
  echo "$source/target/release" >> "$GITHUB_PATH"
  exit 0
fi
if [ -n "$repository" ]; then
  ref=()
  if [[ "$version" =~ ^[0-9a-f]{40}$ ]]; then
    ref=(--rev "$version")
  elif [[ "$version" =~ ^v[0-9] ]]; then
    ref=(--tag "$version")
  elif [ -n "$version" ]; then
    ref=(--branch "$version")
  fi
  cargo install --locked --root "$RUNNER_TEMP/runner-cargo" \
    --git "https://github.com/$repository" "${ref[@]}" runner
  echo "$RUNNER_TEMP/runner-cargo/bin" >> "$GITHUB_PATH"
  exit 0
fi
echo "::error::runner is not on PATH, and nothing says where to get it: set the action's runner-repository (OWNER/REPO of runner on GitHub) and runner-version (a release tag), or install runner in an earlier step" >&2
exit 1
