#!/usr/bin/env bash
# Builds the controller image as an OCI layout in dist/image, without a Docker daemon and
# without a base image: one layer holding the Node 24 binary of the pinned `node` npm package,
# the Debian shared libraries it links (copied from the installed Debian packages, with their
# copyright files), the compiled dist/src, package.json and the production node_modules.
# umoci (Debian) writes the layout. Every timestamp is the last commit's time and every file
# is owned by root and readable, so two builds of one commit give one digest.
#
#   MDS_IMAGE_DIR      where to write the layout (default dist/image)
#   MDS_IMAGE_COMMIT   the commit to build (default HEAD)
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"
out="${MDS_IMAGE_DIR:-$root/dist/image}"
commit="$(git rev-parse "${MDS_IMAGE_COMMIT:-HEAD}^{commit}")"

for tool in umoci git tar ldd dpkg-query; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "image: $tool is missing; run bash tools/setup.sh" >&2
    exit 1
  }
done
node_bin="$root/node_modules/node/bin/node"
[[ -x "$node_bin" ]] || {
  echo "image: $node_bin is missing; run bash tools/setup.sh (npm ci brings the pinned Node 24)" >&2
  exit 1
}
if [[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]]; then
  echo "image: note: uncommitted changes are not in the image: it is built from ${MDS_IMAGE_COMMIT:-HEAD}" >&2
fi

version="$(git show "$commit:package.json" | node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).version')"
node_version="$("$node_bin" --version)"
revision="$commit"
epoch="$(git log -1 --format=%ct "$commit")"
created="$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)"
export SOURCE_DATE_EPOCH="$epoch"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"
mkdir -p "$rootfs"/{app,etc,tmp,usr/local/bin,usr/lib/x86_64-linux-gnu,usr/lib64,usr/share/doc}
ln -s usr/lib "$rootfs/lib"
ln -s usr/lib64 "$rootfs/lib64"

echo "image: compiling TypeScript from $revision"
# The commit's files, not the working tree's: one commit, one image.
mkdir -p "$work/src"
git archive --format=tar "$commit" | tar -x -C "$work/src"
ln -s "$root/node_modules" "$work/src/node_modules"
"$root/node_modules/.bin/tsc" -p "$work/src/tsconfig.json" --outDir "$work/build"
mkdir -p "$rootfs/app/dist"
cp -r "$work/build/src" "$rootfs/app/dist/src"
cp "$work/src/package.json" "$work/src/package-lock.json" "$rootfs/app/"

echo "image: production node_modules (npm ci --omit=dev)"
(cd "$rootfs/app" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --prefer-offline --loglevel=error >/dev/null)
# npm's own bookkeeping; it records nothing the image needs.
rm -f "$rootfs/app/node_modules/.package-lock.json"

echo "image: Node $node_version and the Debian libraries it links"
cp "$node_bin" "$rootfs/usr/local/bin/node"
packages=()
while read -r lib; do
  real="$(readlink -f "$lib")"
  # Debian merges /lib into /usr/lib: keep the files under /usr, reachable by every name ldd gave.
  dest="/usr${real#/usr}"
  [[ "$real" == /usr/* ]] || dest="/usr$real"
  mkdir -p "$rootfs$(dirname "$dest")"
  cp "$real" "$rootfs$dest"
  name_dest="/usr${lib#/usr}"
  [[ "$lib" == /usr/* ]] || name_dest="/usr$lib"
  [[ "$name_dest" == "$dest" ]] || ln -sf "$dest" "$rootfs$name_dest"
  pkg="$(dpkg-query -S "$real" 2>/dev/null | head -1 | cut -d: -f1 || true)"
  [[ -n "$pkg" ]] || pkg="$(dpkg-query -S "$lib" 2>/dev/null | head -1 | cut -d: -f1 || true)"
  [[ -n "$pkg" ]] && packages+=("$pkg")
done < <(ldd "$node_bin" | awk '/=>/ { print $3 } /^[ \t]*\/lib/ { print $1 }' | sort -u)
debian=""
for pkg in $(printf '%s\n' "${packages[@]}" | sort -u); do
  debian+="${debian:+ }$pkg=$(dpkg-query -W -f='${Version}' "$pkg")"
  if [[ -f "/usr/share/doc/$pkg/copyright" ]]; then
    mkdir -p "$rootfs/usr/share/doc/$pkg"
    cp "/usr/share/doc/$pkg/copyright" "$rootfs/usr/share/doc/$pkg/copyright"
  fi
done

# The image's user: no shell, no home; uid 65532 as distroless images use, so a runAsNonRoot pod accepts it.
printf 'root:x:0:0:root:/root:/sbin/nologin\nmds-scaler:x:65532:65532:mds-scaler:/nonexistent:/sbin/nologin\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nmds-scaler:x:65532:\n' >"$rootfs/etc/group"
chmod -R u=rwX,go=rX "$rootfs"
chmod 1777 "$rootfs/tmp"
find "$rootfs" -exec touch -h -d "@$epoch" {} +

echo "image: assembling the OCI layout"
tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner --format=posix \
  --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
  -C "$rootfs" -cf "$work/layer.tar" .
rm -rf "$out"
mkdir -p "$(dirname "$out")"
umoci init --layout "$out"
umoci new --image "$out:$version"
umoci raw add-layer --image "$out:$version" --history.created "$created" \
  --history.created_by "tools/image/build.sh" --history.comment "Node $node_version, dist/src, production node_modules" \
  "$work/layer.tar"
labels=(
  "org.opencontainers.image.title=mds-scaler"
  "org.opencontainers.image.description=Token-aware autoscaler for vLLM and SGLang ModelDeployments, driven by Prometheus"
  "org.opencontainers.image.version=$version"
  "org.opencontainers.image.revision=$revision"
  "org.opencontainers.image.created=$created"
  "org.opencontainers.image.licenses=Apache-2.0"
  "org.opencontainers.image.source=https://github.com/gpustack/mds-scaler"
)
config_args=()
for label in "${labels[@]}"; do config_args+=(--config.label "$label" --manifest.annotation "$label"); done
umoci config --image "$out:$version" --no-history --created "$created" --author "mds-scaler" \
  --architecture amd64 --os linux \
  --config.user 65532:65532 --config.workingdir /app \
  --config.env NODE_ENV=production --config.env PATH=/usr/local/bin \
  --config.entrypoint /usr/local/bin/node --config.entrypoint /app/dist/src/cli/main.js --config.cmd controller \
  --config.label "io.mds-scaler.node=$node_version" --config.label "io.mds-scaler.debian-packages=$debian" \
  "${config_args[@]}"
umoci gc --layout "$out"

manifest="$(node -e '
const fs = require("fs");
const index = JSON.parse(fs.readFileSync(process.argv[1] + "/index.json", "utf8"));
const m = index.manifests[0];
const manifest = JSON.parse(fs.readFileSync(process.argv[1] + "/blobs/" + m.digest.replace(":", "/"), "utf8"));
const layers = manifest.layers.reduce((n, l) => n + l.size, 0);
console.log(`${m.digest} ${layers}`);
' "$out")"
digest="${manifest% *}"
compressed="${manifest#* }"
unpacked="$(du -sb "$rootfs" | cut -f1)"
echo "image: $out:$version"
echo "image: digest $digest"
echo "image: size $((compressed / 1024 / 1024)) MiB compressed ($compressed bytes), $((unpacked / 1024 / 1024)) MiB unpacked"
echo "image: push with: skopeo copy oci:$out:$version docker://REGISTRY/mds-scaler:$version"
