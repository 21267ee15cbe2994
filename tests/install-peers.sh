#!/bin/sh
# install-peers.sh — install the Node test peers pinned in tests/package-lock.json
# into tests/node_modules. `npm ci` compiles better-sqlite3 (the interop
# relay's store) from source, which takes minutes, so a finished install is
# kept in a cache outside the tree, keyed by the lock file's hash, and later
# runs (a fresh CI clone on the same machine) copy it instead.
#   CACHEBOX_NPM_CACHE   cache directory (default /var/cache/cachebox/node-peers)
set -eu
cd "$(dirname "$0")"
cache=${CACHEBOX_NPM_CACHE:-/var/cache/cachebox/node-peers}
key=$(cat package.json package-lock.json | sha256sum | cut -c1-16)
saved=$cache/$key/node_modules

if [ -f node_modules/.installed-$key ]; then
	exit 0
fi
rm -rf node_modules
if [ -f "$saved/.installed-$key" ]; then
	echo "install-peers: copying the cached install $key"
	cp -a "$saved" node_modules
	exit 0
fi
# node-gyp builds against the installed Node headers instead of downloading them.
if [ -f /usr/include/node/common.gypi ]; then
	export npm_config_nodedir=/usr
fi
npm ci --no-audit --no-fund
touch node_modules/.installed-$key
if mkdir -p "$cache/$key.tmp" 2>/dev/null; then
	rm -rf "$cache/$key.tmp/node_modules"
	cp -a node_modules "$cache/$key.tmp/node_modules" &&
	    rm -rf "$cache/$key" && mv "$cache/$key.tmp" "$cache/$key" ||
	    echo "install-peers: could not save the cache (continuing)" >&2
fi
