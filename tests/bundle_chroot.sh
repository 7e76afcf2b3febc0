# Sourced by the device-bundle tests: bundle_chroot ROOT BUILD makes ROOT a
# root file system that holds glibc's libraries, a shell and the few tools
# the device scripts use, and the device bundle of BUILD
# (scripts/device_bundle.sh --no-build) at /b; the scripts at /src/scripts.
# Nothing else of the system is there, so a library the bundle lacks is not
# found. A tool that needs more than glibc gets its libraries in /toollib,
# through the loader's --library-path, where the bundle's programs never look.
# bundle_run ROOT CMD... runs CMD inside (chroot, or unshare -r chroot when
# not root). Both return 77 with the reason on stdout when this machine does
# not allow it.

BUNDLE_TOOLS="sh sed awk tr cut cat rm mkdir cp mv date tee dirname mktemp sort uniq head tail grep wc ls env timeout tar gzip uname"

bundle_is_glibc() {
    case "$1" in
    ld-linux*.so* | libc.so.* | libm.so.* | libmvec.so.* | libpthread.so.* | libdl.so.* | librt.so.* | \
        libutil.so.* | libresolv.so.* | libanl.so.*) return 0 ;;
    esac
    return 1
}

bundle_chroot() {
    R=$1
    BUILD=$2
    BUNDLE_CHROOT=$(command -v chroot) || { echo "skip: no chroot program"; return 77; }
    if grep -q '^PS_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null; then
        echo "skip: a sanitized build (ASan reads /proc, which the chroot does not have)"
        return 77
    fi
    BUNDLE_UNSHARE=$(command -v unshare) || BUNDLE_UNSHARE=unshare
    mkdir -p "$R/bin" "$R/toolbin" "$R/toollib" "$R/lib64" "$R/tmp" "$R/dev" "$R/src/scripts" || return 1
    chmod 1777 "$R/tmp"
    loader=$(ldd /bin/sh | awk '/ld-linux/ { print $1 }')
    multi=$(dirname "$(ldd /bin/sh | awk '$1 == "libc.so.6" { print $3 }')")
    mkdir -p "$R$multi" "$R$(dirname "$loader")"
    for t in $BUNDLE_TOOLS; do
        p=$(command -v "$t") || { echo "skip: no $t here"; return 77; }
        extra=""
        for l in $(ldd "$p" | awk '$2 == "=>" { print $1 "=" $3 }'); do
            name=${l%%=*}
            if bundle_is_glibc "$name"; then
                cp -L "${l#*=}" "$R$multi/$name"
            else
                cp -L "${l#*=}" "$R/toollib/$name"
                extra=1
            fi
        done
        if [ -n "$extra" ]; then
            cp -L "$p" "$R/toolbin/$t"
            printf '#!/bin/sh\nexec %s --library-path /toollib /toolbin/%s "$@"\n' "$loader" "$t" > "$R/bin/$t"
            chmod +x "$R/bin/$t"
        else
            cp -L "$p" "$R/bin/$t"
        fi
    done
    cp -L "$loader" "$R$loader"
    mkdir -p "$R/usr"
    ln -s ../bin "$R/usr/bin"
    # /dev/null: the device node where this process may make one, else an
    # ordinary file (what is written there is thrown away with ROOT).
    mknod -m 666 "$R/dev/null" c 1 3 2>/dev/null || : > "$R/dev/null"
    cp scripts/device_validate.sh scripts/device_lib.sh scripts/device_run.sh "$R/src/scripts/"
    sh scripts/device_bundle.sh --no-build --build "$BUILD" --out "$R/b" $BUNDLE_HOST_ONLY > "$R/bundle.log" 2>&1 || {
        cat "$R/bundle.log"
        return 1
    }
    # The glibc libraries the bundle's programs need (the loader finds them
    # in $multi, as on the GPU machine).
    for f in "$R"/b/bin/pairsight "$R"/b/lib/*.so* "$R"/b/lib/pairsight/*.so; do
        [ -e "$f" ] || continue
        ldd "$f" 2>/dev/null | awk '$2 == "=>" { print $1, $3 }'
    done | sort -u | while read -r name path; do
        bundle_is_glibc "$name" && cp -L "$path" "$R$multi/$name"
    done
    bundle_run "$R" /bin/sh -c 'exit 0' > "$R/probe.log" 2>&1 || {
        echo "skip: chroot is not permitted here (as uid $(id -u), with unshare -r when not root): $(cat "$R/probe.log")"
        return 77
    }
}

bundle_run() {
    R=$1
    shift
    if [ "$(id -u)" = 0 ]; then
        env -i PATH=/bin HOME=/tmp "$BUNDLE_CHROOT" "$R" "$@"
    else
        env -i PATH=/bin HOME=/tmp "$BUNDLE_UNSHARE" -r "$BUNDLE_CHROOT" "$R" "$@"
    fi
}

# Which BUILD was configured with PS_CUDA (its bundle carries the module).
BUNDLE_HOST_ONLY=""
bundle_host_only() {
    grep -q '^PS_CUDA:BOOL=ON' "$1/CMakeCache.txt" 2>/dev/null && [ -f "$1/libpairsight_cuda.so" ] || BUNDLE_HOST_ONLY=--host-only
}
