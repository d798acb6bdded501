#!/usr/bin/env bash
# Builds the harness's container images without any registry: every image is
# FROM scratch, filled with binaries built or found on this host.
#
#   rlharness/replica:dev  static ./targets/cmd/replica (skipped, with a message, while it does not exist)
#   rlharness/noop:dev     static ./targets/cmd/noop
#   rlharness/claimcheck:dev static ./targets/cmd/claimcheck (the claim-check producer/consumer)
#   rlharness/worker:dev   static ./targets/cmd/worker (the horizontal-scaling replica)
#   rlharness/fixedwindow:dev static ./targets/cmd/fixedwindow (a fixed-window limiter not ours, for --target tests)
#   rlharness/envoy-ratelimit:dev  envoyproxy/ratelimit's src/service_cmd at $ENVOY_RATELIMIT_VERSION, built
#                          static with `go install` into a temporary GOBIN, so its dependencies stay
#                          out of this module (not in the default set: it compiles for ~2 minutes)
#   rlharness/gubernator:dev  gubernator-io/gubernator's cmd/gubernator at $GUBERNATOR_VERSION, built
#                          the same way (not in the default set: it compiles for ~2 minutes)
#   rlharness/traefik:dev  traefik/traefik's cmd/traefik at $TRAEFIK_VERSION, built static with `go build`
#                          in a copy of its module (not in the default set: it compiles for ~8 minutes)
#   rlharness/harness:dev  static ./harness/cmd/harness: the load generator's shards (loadtest
#                          --shard-runner container, the Kubernetes Job under deploy/)
#   rlharness/redis:dev    $REDIS_IMAGE retagged when it exists locally, else the host's
#                          redis-server plus every library ldd lists and the dynamic loader
#
# Usage: scripts/build-images.sh [replica|noop|claimcheck|worker|fixedwindow|harness|envoy-ratelimit|gubernator|traefik|redis ...]
#        (default: all but envoy-ratelimit, gubernator and traefik)
# Idempotent: run it again after changing the code. Env: REDIS_IMAGE (optional),
# GO (go binary, default go), DOCKER (docker binary, default docker).
set -euo pipefail

GO=${GO:-go}
DOCKER=${DOCKER:-docker}
REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO_ROOT"

log() { printf 'build-images: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v "$DOCKER" >/dev/null || die "docker not found: install Docker Engine or set DOCKER"
"$DOCKER" info >/dev/null 2>&1 || die "cannot reach the Docker daemon: is it running, and may this user use it?"
command -v "$GO" >/dev/null || die "go not found: install Go or set GO"

# The legacy builder needs no frontend image; BuildKit without buildx is an error.
if ! "$DOCKER" buildx version >/dev/null 2>&1; then
	export DOCKER_BUILDKIT=0
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rlharness-images.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# context_hash ctx: the build context's every path, mode and content, hashed: an image built
# from the same context is the same image.
context_hash() {
	(cd "$1" && find . -printf '%p %m\n' | LC_ALL=C sort && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) |
		sha256sum | cut -d' ' -f1
}

docker_build() { # tag context
	local tag=$1 ctx=$2 sum
	# An image whose context is unchanged (the same binaries, built reproducibly with -trimpath)
	# is kept: make test builds the images on every run, seven docker builds of about 2.6 s each.
	# A fresh clone (CI's) stamps its commit into every Go binary, so there only the images of
	# a commit already built (and Redis's) are kept; a git worktree stamps none.
	sum=$(context_hash "$ctx")
	if [[ $("$DOCKER" image inspect -f '{{index .Config.Labels "rlharness.context"}}' "$tag" 2>/dev/null) == "$sum" ]]; then
		log "$tag is up to date (its context unchanged)"
		return 0
	fi
	log "building $tag"
	# The legacy builder's deprecation notice is noise here; show stderr only on failure.
	if ! "$DOCKER" build --quiet --label rlharness.image=1 --label "rlharness.context=$sum" -t "$tag" "$ctx" >/dev/null 2>"$WORK/build.err"; then
		cat "$WORK/build.err" >&2
		die "docker build of $tag failed"
	fi
	log "built $tag ($("$DOCKER" image inspect -f '{{.Size}}' "$tag") bytes)"
}

# go_image name: a static binary of ./targets/cmd/<name> in a scratch image.
go_image() {
	local name=$1 ctx="$WORK/$1"
	if [[ ! -d "./targets/cmd/$name" ]]; then
		log "skipping rlharness/$name:dev: ./targets/cmd/$name does not exist yet"
		return 0
	fi
	mkdir -p "$ctx"
	log "compiling ./targets/cmd/$name"
	CGO_ENABLED=0 GOOS=linux "$GO" build -trimpath -ldflags='-s -w' -o "$ctx/$name" "./targets/cmd/$name"
	cat >"$ctx/Dockerfile" <<DOCKERFILE
FROM scratch
COPY $name /$name
USER 65534:65534
EXPOSE 8080
ENTRYPOINT ["/$name"]
DOCKERFILE
	docker_build "rlharness/$name:dev" "$ctx"
}

# The module proxy serves envoyproxy/ratelimit as this pseudo-version only.
ENVOY_RATELIMIT_VERSION=${ENVOY_RATELIMIT_VERSION:-v1.4.1-0.20260122083618-3fb702589d36}

# envoy_image: envoyproxy/ratelimit's service in a scratch image, with the directory its
# runtime config is read from (RUNTIME_ROOT=/data, RUNTIME_SUBDIRECTORY=ratelimit: the
# harness writes /data/ratelimit/config/config.yaml from the target file).
envoy_image() {
	local ctx="$WORK/envoy-ratelimit"
	mkdir -p "$ctx/rootfs/data/ratelimit/config" "$ctx/rootfs/tmp"
	log "compiling github.com/envoyproxy/ratelimit/src/service_cmd@$ENVOY_RATELIMIT_VERSION (go install, outside this module)"
	(cd "$WORK" && CGO_ENABLED=0 GOOS=linux GOBIN="$ctx/bin" GOFLAGS=-mod=mod "$GO" install -trimpath -ldflags='-s -w' \
		"github.com/envoyproxy/ratelimit/src/service_cmd@$ENVOY_RATELIMIT_VERSION")
	cp "$ctx/bin/service_cmd" "$ctx/rootfs/ratelimit"
	chmod 1777 "$ctx/rootfs/tmp" "$ctx/rootfs/data/ratelimit/config"
	cat >"$ctx/Dockerfile" <<'DOCKERFILE'
FROM scratch
COPY rootfs/ /
USER 65534:65534
ENV RUNTIME_ROOT=/data RUNTIME_SUBDIRECTORY=ratelimit RUNTIME_WATCH_ROOT=false USE_STATSD=false REDIS_SOCKET_TYPE=tcp LOG_LEVEL=warn
EXPOSE 8080
ENTRYPOINT ["/ratelimit"]
DOCKERFILE
	docker_build "rlharness/envoy-ratelimit:dev" "$ctx"
}

GUBERNATOR_VERSION=${GUBERNATOR_VERSION:-v2.13.0}

# gubernator_image: gubernator's daemon in a scratch image. Every address comes from the
# target file's environment (GUBER_*); tracing is off, since nothing here collects it.
gubernator_image() {
	local ctx="$WORK/gubernator"
	mkdir -p "$ctx/rootfs/tmp"
	log "compiling github.com/gubernator-io/gubernator/v2/cmd/gubernator@$GUBERNATOR_VERSION (go install, outside this module)"
	(cd "$WORK" && CGO_ENABLED=0 GOOS=linux GOBIN="$ctx/bin" GOFLAGS=-mod=mod "$GO" install -trimpath -ldflags='-s -w' \
		"github.com/gubernator-io/gubernator/v2/cmd/gubernator@$GUBERNATOR_VERSION")
	cp "$ctx/bin/gubernator" "$ctx/rootfs/gubernator"
	chmod 1777 "$ctx/rootfs/tmp"
	cat >"$ctx/Dockerfile" <<'DOCKERFILE'
FROM scratch
COPY rootfs/ /
USER 65534:65534
ENV OTEL_TRACES_EXPORTER=none GUBER_LOG_LEVEL=warn
EXPOSE 1050
ENTRYPOINT ["/gubernator"]
DOCKERFILE
	docker_build "rlharness/gubernator:dev" "$ctx"
}

# v3.4.0 added the Redis store to the rateLimit middleware (traefik commit 550d96ea67). v3.6.12
# is the newest the module proxy serves that builds from the proxy alone: v3.7.x replaces
# github.com/traefik/traefik/dynamic/ext with ./pkg/config/dynamic/ext, a nested module that
# the module zip leaves out (and the proxy does not serve), and needs eight modules the proxy
# here answers 403 for (its go-http-auth fork's pseudo-version, seven of lego's DNS providers').
TRAEFIK_VERSION=${TRAEFIK_VERSION:-v3.6.12}

# traefik_image: Traefik in a scratch image. `go install pkg@version` refuses a module whose
# go.mod has replace directives (traefik replaces two modules with its forks), so the module
# is downloaded through the module proxy, copied to a writable directory and built there,
# outside this module. The binary is about 178 MB; the build is niced, it takes the machine.
# /etc/traefik is where the target files write its dynamic configuration.
traefik_image() {
	local ctx="$WORK/traefik" src
	mkdir -p "$ctx/rootfs/etc/traefik" "$ctx/rootfs/tmp"
	log "downloading github.com/traefik/traefik/v3@$TRAEFIK_VERSION (module proxy)"
	src=$(cd "$WORK" && "$GO" mod download -json "github.com/traefik/traefik/v3@$TRAEFIK_VERSION" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[[ -n "$src" && -d "$src" ]] || die "go mod download github.com/traefik/traefik/v3@$TRAEFIK_VERSION gave no directory"
	cp -r "$src" "$ctx/src"
	chmod -R u+w "$ctx/src"
	log "compiling github.com/traefik/traefik/v3/cmd/traefik@$TRAEFIK_VERSION (go build in its module, outside this one)"
	(cd "$ctx/src" && CGO_ENABLED=0 GOOS=linux GOFLAGS= nice -n 10 "$GO" build -trimpath \
		-ldflags="-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=$TRAEFIK_VERSION" \
		-o "$ctx/rootfs/traefik" ./cmd/traefik)
	rm -rf "$ctx/src"
	chmod 1777 "$ctx/rootfs/tmp" "$ctx/rootfs/etc/traefik"
	cat >"$ctx/Dockerfile" <<'DOCKERFILE'
FROM scratch
COPY rootfs/ /
USER 65534:65534
EXPOSE 8080
ENTRYPOINT ["/traefik"]
DOCKERFILE
	docker_build "rlharness/traefik:dev" "$ctx"
}

# harness_image: the harness itself in a scratch image, for the generator shards. It runs as
# nobody and writes only under the directory it is given (a bind mount or a volume).
harness_image() {
	local ctx="$WORK/harness"
	mkdir -p "$ctx"
	log "compiling ./harness/cmd/harness"
	CGO_ENABLED=0 GOOS=linux "$GO" build -trimpath -ldflags='-s -w' -o "$ctx/harness" ./harness/cmd/harness
	cat >"$ctx/Dockerfile" <<DOCKERFILE
FROM scratch
COPY harness /harness
USER 65534:65534
ENTRYPOINT ["/harness"]
DOCKERFILE
	docker_build "rlharness/harness:dev" "$ctx"
}

redis_image() {
	local tag=rlharness/redis:dev
	if [[ -n "${REDIS_IMAGE:-}" ]]; then
		if "$DOCKER" image inspect "$REDIS_IMAGE" >/dev/null 2>&1; then
			log "tagging local image $REDIS_IMAGE as $tag"
			"$DOCKER" tag "$REDIS_IMAGE" "$tag"
			return 0
		fi
		log "REDIS_IMAGE=$REDIS_IMAGE is not a local image (no registry here): packaging the host's redis-server instead"
	fi
	local server=/usr/bin/redis-server
	if [[ ! -x $server ]]; then
		log "redis-server missing: installing it with apt-get"
		local sudo=()
		[[ $(id -u) -eq 0 ]] || sudo=(sudo)
		"${sudo[@]}" apt-get install -y redis-server >&2 ||
			{ "${sudo[@]}" apt-get update >&2 && "${sudo[@]}" apt-get install -y redis-server >&2; } ||
			die "could not install redis-server: run 'apt-get install -y redis-server' yourself, or set REDIS_IMAGE to a local image"
	fi
	local ctx="$WORK/redis"
	mkdir -p "$ctx/rootfs/usr/bin" "$ctx/rootfs/tmp"
	# Debian links redis-server to redis-check-rdb; redis picks its role from
	# argv[0], so the copy must be named redis-server.
	cp -L "$server" "$ctx/rootfs/usr/bin/redis-server"
	# Every absolute path ldd prints (libraries and the loader), at the same path.
	local libs lib
	libs=$(ldd "$server") || die "ldd $server failed"
	if grep -q 'not found' <<<"$libs"; then
		die "redis-server needs libraries this host lacks:"$'\n'"$(grep 'not found' <<<"$libs")"
	fi
	while read -r lib; do
		mkdir -p "$ctx/rootfs$(dirname "$lib")"
		cp -L "$lib" "$ctx/rootfs$lib"
	done < <(grep -o '/[^ ]*' <<<"$libs" | sort -u)
	chmod 1777 "$ctx/rootfs/tmp"
	cat >"$ctx/Dockerfile" <<'DOCKERFILE'
FROM scratch
COPY rootfs/ /
WORKDIR /tmp
EXPOSE 6379
ENTRYPOINT ["/usr/bin/redis-server"]
CMD ["--save", "", "--appendonly", "no", "--protected-mode", "no", "--bind", "0.0.0.0"]
DOCKERFILE
	docker_build "$tag" "$ctx"
}

images=("$@")
[[ ${#images[@]} -gt 0 ]] || images=(replica noop claimcheck worker fixedwindow harness redis)
for image in "${images[@]}"; do
	case $image in
	replica | noop | claimcheck | worker | fixedwindow) go_image "$image" ;;
	harness) harness_image ;;
	envoy-ratelimit) envoy_image ;;
	gubernator) gubernator_image ;;
	traefik) traefik_image ;;
	redis) redis_image ;;
	*) die "unknown image '$image': use replica, noop, claimcheck, worker, fixedwindow, harness, envoy-ratelimit, gubernator, traefik or redis" ;;
	esac
done
log "done: $("$DOCKER" images --filter 'reference=rlharness/*' --format '{{.Repository}}:{{.Tag}}' | sort | tr '\n' ' ')"
