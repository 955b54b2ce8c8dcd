#!/usr/bin/env bash
# Install code-server (VS Code 1.100.3 in a browser) into a cache outside the checkout, offline-safe:
# no post-install download (ripgrep comes from Debian), native modules built against the local Node.
# Prints the path of the code-server entry script. A second run with the cache in place is instant.
set -euo pipefail
VERSION=4.100.3
CACHE=${TRAINLINT_E2E_CACHE:-$HOME/.cache/trainlint-e2e}
PREFIX=$CACHE/code-server-$VERSION
ENTRY=$PREFIX/node_modules/code-server/out/node/entry.js
if [ -f "$PREFIX/.complete" ]; then echo "$ENTRY"; exit 0; fi
command -v rg >/dev/null || { echo "ripgrep (Debian's package) is required" >&2; exit 1; }
mkdir -p "$PREFIX"
# node-pty's build step runs `npx node-gyp`: let npx take it from the registry without asking.
export npm_config_yes=true
log=$CACHE/install-$VERSION.log
set +e
(
  set -e
  # Top level: no scripts (its postinstall runs npm in lib/vscode, which we do below without downloads).
  npm install --prefix "$PREFIX" --no-audit --no-fund --unsafe-perm --ignore-scripts "code-server@$VERSION"
  # argon2 (password hashing, loaded at start even with --auth none) is hoisted to the top level.
  (cd "$PREFIX" && npm rebuild argon2)
  cd "$PREFIX/node_modules/code-server"
  cd lib/vscode
  npm install --omit=dev --no-audit --no-fund --unsafe-perm --ignore-scripts
  # The native modules VS Code's server loads, built against this Node (headers from the system).
  npm rebuild kerberos node-pty @parcel/watcher @vscode/spdlog native-watchdog
  # @vscode/ripgrep's post-install downloads a binary; use Debian's instead.
  mkdir -p node_modules/@vscode/ripgrep/bin
  ln -sf "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
  # What code-server's postinstall.sh does besides installing.
  rm -rf node_modules.asar && ln -s node_modules node_modules.asar
  (cd bin/remote-cli && ln -sf code-linux.sh code-server)
  (cd bin/helpers && ln -sf browser-linux.sh browser.sh)
) >"$log" 2>&1
rc=$?
set -e
if [ $rc -ne 0 ]; then echo "code-server install failed; see $log" >&2; tail -20 "$log" >&2; exit 1; fi
touch "$PREFIX/.complete"
echo "$ENTRY"
