#!/usr/bin/env bash
# Builds the HS2 kit: one tarball that runs the documents' load (40,000 req/s, HS2) on a big
# machine that has no Go, no Docker and no redis-server, and no network out. It holds:
#
#   bin/harness, bin/replica, bin/noop   static (CGO_ENABLED=0, -trimpath, -s -w), the commit
#                                        stamped with -ldflags -X (harness --version says it)
#   libexec/redis-server, redis-cli      this host's, with every library ldd lists in lib/ and
#   lib/ld-linux-x86-64.so.2             the dynamic loader they were linked against
#   bin/redis-server, bin/redis-cli      wrappers: lib/ld-linux-x86-64.so.2 --library-path lib
#                                        libexec/<program>, so no library of the target machine
#                                        is used
#   run-hs2.sh                           the load test (4 generator shards) and the bench with
#                                        --provider local --bin-dir bin; make loadtest-hs2 runs it
#
# Usage: scripts/hs2-kit.sh [OUT]   (default dist/rlharness-hs2.tar.gz; dist/ is ignored by git)
# Env: GO (default go), REDIS_SERVER, REDIS_CLI (default: found on PATH; apt-get install -y
# redis-server redis-tools). Prints the tarball's path and size; fails over 64 MiB, the most a
# device run carries.
set -euo pipefail

GO=${GO:-go}
REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO_ROOT"
OUT=${1:-dist/rlharness-hs2.tar.gz}
MAX_BYTES=$((64 * 1024 * 1024))

log() { printf 'hs2-kit: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v "$GO" >/dev/null || die "go not found: install Go or set GO"
REDIS_SERVER=${REDIS_SERVER:-$(command -v redis-server || true)}
REDIS_CLI=${REDIS_CLI:-$(command -v redis-cli || true)}
[ -n "$REDIS_SERVER" ] || die "redis-server not found: apt-get install -y redis-server, or set REDIS_SERVER"
[ -n "$REDIS_CLI" ] || die "redis-cli not found: apt-get install -y redis-tools, or set REDIS_CLI"
command -v ldd >/dev/null || die "ldd not found: it lists the libraries redis-server needs"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rlharness-hs2-kit.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
KIT=$WORK/rlharness-hs2
mkdir -p "$KIT/bin" "$KIT/libexec" "$KIT/lib"

# The commit: git's, with +dirty for uncommitted changes; the binaries carry it since a
# tarball has no .git for go build to read.
COMMIT=$(git rev-parse HEAD 2>/dev/null || echo unknown)
if [ "$COMMIT" != unknown ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	COMMIT=$COMMIT+dirty
fi
for cmd in harness/cmd/harness targets/cmd/replica targets/cmd/noop; do
	name=$(basename "$cmd")
	log "building bin/$name (static)"
	CGO_ENABLED=0 "$GO" build -trimpath -buildvcs=false -ldflags "-s -w -X main.stamped=$COMMIT" -o "$KIT/bin/$name" "./$cmd"
done

# redis-server and redis-cli with their libraries and loader. cp -L: Debian's redis-server
# is a link to redis-check-rdb, and the libraries are links to versioned files. The copy is
# named redis-server, which is what Redis reads argv[0] for (a redis-check-rdb argv[0] would
# run the RDB checker instead).
LOADER=
copy_program() { # path name
	local path=$1 name=$2 lib
	log "copying $name from $path with its libraries"
	cp -L "$path" "$KIT/libexec/$name"
	while read -r lib; do
		[ -n "$lib" ] || continue
		case $lib in
		*/ld-linux*) LOADER=$lib ;;
		esac
		cp -L "$lib" "$KIT/lib/$(basename "$lib")"
	done < <(ldd "$path" | awk '/=>/ { if ($3 ~ /^\//) print $3; next } $1 ~ /^\// { print $1 }')
}
copy_program "$REDIS_SERVER" redis-server
copy_program "$REDIS_CLI" redis-cli
[ -n "$LOADER" ] || die "ldd named no dynamic loader (ld-linux) for $REDIS_SERVER: is it a dynamic x86-64 binary?"
LOADER_NAME=$(basename "$LOADER")

for name in redis-server redis-cli; do
	cat >"$KIT/bin/$name" <<EOF
#!/bin/sh
# $name of the HS2 kit, run by the kit's own loader with the kit's libraries, so that the
# target machine needs neither Redis nor the libraries it was built against.
kit=\$(cd "\$(dirname "\$0")/.." && pwd -P)
exec "\$kit/lib/$LOADER_NAME" --library-path "\$kit/lib" "\$kit/libexec/$name" "\$@"
EOF
	chmod +x "$KIT/bin/$name"
done

cp scripts/run-hs2.sh "$KIT/run-hs2.sh"
chmod +x "$KIT/run-hs2.sh"
printf '%s\n' "$COMMIT" >"$KIT/COMMIT"
cat >"$KIT/README" <<EOF
rlharness HS2 kit, commit $COMMIT, built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m).
  ./run-hs2.sh OUT        the documents' load: summary.json, report.html, bench.json, bench.html in OUT
  bin/harness --help      every command; --provider local --bin-dir bin runs its fleets from bin/
See docs/hs2.md in the repository.
EOF

# The kit works here before it travels: the loader starts redis-server and redis-cli.
"$KIT/bin/redis-server" --version >/dev/null || die "the kit's redis-server does not start through $LOADER_NAME"
"$KIT/bin/redis-cli" --version >/dev/null || die "the kit's redis-cli does not start through $LOADER_NAME"
"$KIT/bin/harness" --version >/dev/null || die "the kit's harness does not run"

mkdir -p "$(dirname "$OUT")"
tar -C "$WORK" -czf "$OUT" rlharness-hs2
size=$(stat -c %s "$OUT")
log "wrote $OUT: $((size / 1024 / 1024)) MiB ($size bytes), commit $COMMIT"
[ "$size" -lt "$MAX_BYTES" ] || die "$OUT is $size bytes, over the 64 MiB a device run carries"
printf '%s\n' "$OUT"
