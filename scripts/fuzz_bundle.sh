#!/usr/bin/env bash
# Packs the libFuzzer targets of build-fuzz (scripts/test.sh builds them), the shared libraries they load that a
# machine without roofplan's Debian packages lacks (libonnx, libprotobuf, ...), and the seed corpora into one folder,
# for a long fuzzing run on another machine (scripts/fuzz_long.sh; docs/fuzzing.md).  Debug sections are stripped
# (symbols stay, so reports still name functions) to keep the bundle small.
# Usage: scripts/fuzz_bundle.sh [build-fuzz] [bundle-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-fuzz}
bundle=${2:-$build/bundle}
rm -rf "$bundle" && mkdir -p "$bundle/lib" "$bundle/corpus"
for target in ${TARGETS:-model-json onnx files cli}; do  # TARGETS (environment): a subset
    binary=$build/tests/fuzz/roofplan-fuzz-$target
    [[ -x $binary ]] || { echo "fuzz_bundle: $binary is missing (build $build first)" >&2; exit 2; }
    strip --strip-debug -o "$bundle/roofplan-fuzz-$target" "$binary"
    # Everything ldd resolves but the C library's own parts, which the other machine has in a newer version.
    ldd "$binary" | awk '/=> \// {print $3}' | while read -r lib; do
        case $(basename "$lib") in
            libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libresolv.so*) ;;
            *) cp -Ln "$lib" "$bundle/lib/" ;;
        esac
    done
    mkdir -p "$bundle/corpus/$target"
    cp tests/fuzz/corpus/${target#model-}/* "$bundle/corpus/$target/"
done
cp scripts/fuzz_long.sh "$bundle/"
echo "fuzz_bundle: $bundle ($(du -sh "$bundle" | cut -f1))"
