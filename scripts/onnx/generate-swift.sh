#!/bin/sh
# Regenerates Sources/ONNX/Generated/onnx.pb.swift from onnx.proto. Run by hand, never by a build: the generated
# file is committed.
#
# Needs: protoc (Debian's protobuf-compiler), swift-protobuf's plugin at the version Package.swift names (built
# here from its tag), and onnx.proto (the onnx wheel on PyPI ships it: pass its path, or have `python3 -c "import
# onnx"` work). The proto's comments are left out: the code is generated from a descriptor set without source info.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
proto=${1:-$(python3 -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "onnx.proto"))')}
version=1.39.0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v protoc >/dev/null || { echo "error: protoc not found (apt-get install protobuf-compiler)" >&2; exit 1; }
git clone -q --depth 1 --branch "$version" https://github.com/apple/swift-protobuf "$work/swift-protobuf"
swift build -c release --package-path "$work/swift-protobuf" --product protoc-gen-swift
cp "$proto" "$work/onnx.proto"
(cd "$work" && protoc --descriptor_set_out=onnx.desc onnx.proto)
(cd "$work" && protoc --descriptor_set_in=onnx.desc --plugin=protoc-gen-swift="$work/swift-protobuf/.build/release/protoc-gen-swift" \
    --swift_opt=Visibility=Package --swift_out=. onnx.proto)
# Inside `#if ONNX`, like every file of the target: without the ONNX trait the package resolves no swift-protobuf.
# `#if ONNX` goes after the header comments, which hold `swift-format-ignore-file`.
awk 'BEGIN { done = 0 } { if (!done && $0 !~ /^\/\// && $0 !~ /^$/) { print "#if ONNX"; done = 1 } print } END { print "#endif" }' \
    "$work/onnx.pb.swift" > "$root/Sources/ONNX/Generated/onnx.pb.swift"
echo "wrote Sources/ONNX/Generated/onnx.pb.swift from $proto (onnx.proto's package onnx, swift-protobuf $version)"
