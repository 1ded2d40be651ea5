// swift-tools-version:6.1
// libFuzzer targets for the readers (see README.md): a package of its own, so the main package's `swift build`,
// `swift build --build-tests` and `make test` never see `-sanitize=fuzzer`. Build with `make fuzz` from the root.
import Foundation
import PackageDescription

// A package found by path is named after its folder (`main`, a worktree's name, …), so its products are named so.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent
let models = Target.Dependency.product(name: "Models", package: root)
let weightsFormat = Target.Dependency.product(name: "WeightsFormat", package: root)
let dataFiles = Target.Dependency.product(name: "DataFiles", package: root)
let tensor = Target.Dependency.product(name: "Tensor", package: root)
let onnx = Target.Dependency.product(name: "ONNX", package: root)

let package = Package(
    name: "Fuzz",
    dependencies: [
        .package(path: "..", traits: [.defaults, "ONNX"])
    ],
    targets: [
        // libFuzzer's LLVMFuzzerRunDriver, declared for Swift.
        .target(name: "CFuzzerDriver"),
        // What the three harnesses share: running libFuzzer, the input as a file, the shipped weights, the checks.
        .target(name: "FuzzSupport", dependencies: ["CFuzzerDriver", models, weightsFormat, dataFiles, tensor]),
        // Each executable's `main` hands its test function to libFuzzer (built with `-sanitize=fuzzer`).
        .executableTarget(name: "FuzzDrawing", dependencies: ["FuzzSupport", models, dataFiles]),
        .executableTarget(name: "FuzzMotion", dependencies: ["FuzzSupport", models, dataFiles]),
        .executableTarget(name: "FuzzWeights", dependencies: ["FuzzSupport", models, weightsFormat, tensor]),
        // The public library API with hostile values (recognizers, batches, streams, assemble, retry policies).
        .executableTarget(name: "FuzzAPI", dependencies: ["FuzzSupport", models, dataFiles]),
        // An .onnx file through the ONNX import, and the model it makes through a classification.
        .executableTarget(name: "FuzzONNX", dependencies: ["FuzzSupport", models, weightsFormat, onnx]),
    ]
)
