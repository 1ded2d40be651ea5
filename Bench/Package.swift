// swift-tools-version:6.1
// The benchmarks (see README.md, "Benchmarks"): a package of its own, so the engine's package, and every app that
// depends on it, never resolves or builds malloc-interposer, a bench-only dependency. bench sees the engine as an
// app does, through its public API. Build and run with `make bench` from the root
// (= swift build --package-path Bench --scratch-path .build-bench -c release, then .build-bench/release/bench ...).
import Foundation
import PackageDescription

// A package found by path is named after its folder (`main`, a worktree's name, …), so its products are named so.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "Bench",
    dependencies: [
        // The ONNX trait for `bench onnx` beside the defaults (OpenBLAS, and the CLI for `bench cli`'s classify).
        .package(path: "..", traits: [.defaults, "ONNX"]),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Counts heap allocations per inference (see Sources/bench/AllocationCount.swift).
        .package(url: "https://github.com/ordo-one/malloc-interposer", exact: "1.6.1"),
    ],
    targets: [
        // The third task (Tests/SignalTask, a link to that folder): an app's own task, compiled here as an outside
        // package's code is, so it can use only the engine's public declarations.
        .target(
            name: "SignalTask",
            dependencies: [
                .product(name: "Tensor", package: root), .product(name: "DataFiles", package: root),
                .product(name: "WeightsFormat", package: root), .product(name: "Models", package: root),
                .product(name: "Train", package: root),
            ]
        ),
        .executableTarget(
            name: "bench",
            dependencies: [
                .product(name: "Tensor", package: root),
                .product(name: "DataFiles", package: root),
                .product(name: "WeightsFormat", package: root),
                .product(name: "Models", package: root),
                .product(name: "Train", package: root),
                .product(name: "ONNX", package: root),
                "SignalTask",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ]
        ),
    ]
)
