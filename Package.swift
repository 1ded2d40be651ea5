// swift-tools-version:6.1
// The on-device ML engine: tensor library on OpenBLAS, models, training harness and CLI. The benchmarks are a package
// of their own (Bench/), so that depending on this one never resolves their dependencies.
// Dependencies run one way, a module per concern: CBLAS, CKernels ← Tensor ← DataFiles (the CSV engine, DataError,
// file helpers) ← WeightsFormat (the weights file) ← Models (the recognizers, with CPreprocessing) ← Datasets ←
// Train ← classify (see docs/architecture.md);
// ONNX (import and export, on swift-protobuf) depends on Models and WeightsFormat and is a product of its own.
// Traits keep what an app does not need out of its resolution and its build (README, "Use it from Swift"):
// the defaults are `OpenBLAS` (Linux's BLAS; Apple platforms use Accelerate whatever the trait says, and with
// neither the engine runs its own kernels) and `CLI` (the classify command: swift-argument-parser only). `ONNX`
// brings swift-protobuf, `Serve` (classify serve) Hummingbird, SwiftNIO and swift-nio-ssl; both are off by
// default, so an app that adds the package with no `traits:` argument resolves no protobuf, server or TLS
// package. `make install` and `make test` build every trait.
import PackageDescription

/// Where the OpenBLAS trait links OpenBLAS; Apple platforms use Accelerate.
let openBLASPlatforms: [Platform] = [.linux, .android, .windows, .openbsd, .wasi]

let package = Package(
    name: "OnDeviceML",
    // Apple platforms from the versions whose Synchronization module (Mutex, Atomic) the engine uses.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Tensor", targets: ["Tensor"]),
        .library(name: "DataFiles", targets: ["DataFiles"]),
        .library(name: "WeightsFormat", targets: ["WeightsFormat"]),
        .library(name: "Models", targets: ["Models"]),
        .library(name: "Datasets", targets: ["Datasets"]),
        .library(name: "Train", targets: ["Train"]),
        .library(name: "ONNX", targets: ["ONNX"]),
        .executable(name: "classify", targets: ["classify"]),
    ],
    traits: [
        .trait(
            name: "OpenBLAS",
            description: "Matrix products on OpenBLAS (libopenblas-dev) on Linux; without it, the engine's own kernels."),
        .trait(name: "CLI", description: "The classify command: resolves swift-argument-parser."),
        .trait(name: "ONNX", description: "ONNX import and export (the ONNX library, classify's ONNX commands): resolves swift-protobuf."),
        .trait(
            name: "Serve", description: "classify serve: resolves Hummingbird, SwiftNIO and swift-nio-ssl; needs CLI.",
            enabledTraits: ["CLI"]),
        .default(enabledTraits: ["OpenBLAS", "CLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-protobuf", exact: "1.39.0"),
        // `classify serve` only (the Serve trait): HTTP on SwiftNIO, with TLS (swift-nio-ssl) for the motion page's
        // phone sensors, which browsers give only to secure pages.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.14.0"),
        // Hummingbird's own transport, types and TLS: `classify serve` adds one handler between its HTTP/1 parts, names
        // header fields, and checks a certificate against its key before it starts (ServeGate.swift, Serve.swift).
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.29.0"),
    ],
    targets: [
        // OpenBLAS's C interface, with the OpenBLAS trait and not on Apple platforms (Accelerate has the same calls).
        // Only `Tensor` imports it; every cblas_* call is in Sources/Tensor/BLAS.swift.
        .systemLibrary(
            name: "CBLAS",
            path: "Sources/CBLAS",
            pkgConfig: "openblas",
            providers: [.apt(["libopenblas-dev"])]
        ),
        // The hand-written tensor kernels (direct convolution, 8-bit dot products, training), compiled per instruction set
        // with target attributes and chosen at run time. Only `Tensor` imports it, through Sources/Tensor/Plan/Kernels.swift.
        .target(name: "CKernels", path: "Sources/CKernels"),
        // LINK_OPENBLAS, the one condition Sources/Tensor/BLAS.swift tests, holds exactly where CBLAS is a dependency.
        .target(
            name: "Tensor",
            dependencies: [
                .target(name: "CBLAS", condition: .when(platforms: openBLASPlatforms, traits: ["OpenBLAS"])),
                "CKernels",
            ],
            swiftSettings: [.define("LINK_OPENBLAS", .when(platforms: openBLASPlatforms, traits: ["OpenBLAS"]))]),
        // The files and text every reader and writer shares: the one CSV engine (`CSVReader`, its record grammar and
        // limits), `DataError`, atomic writes, opening inputs, label and decimal text. Foundation only.
        .target(name: "DataFiles"),
        // The weights file format: `ModelFile` (header, layers, tensors, CRC; encoding, decoding and validation at
        // load), the header's own JSON reader, the limits a file must keep, the header fields `DecisionRule` and
        // `PreprocessingKind`, and `RecognitionTask`, the one typed task every module above it uses. It knows no recognizer.
        .target(name: "WeightsFormat", dependencies: ["DataFiles", "Tensor"]),
        // The recognizers' preprocessing kernels (stroke rasterizing, hull and rectangle, motion signals), built
        // like CKernels with its shared header. Only `Models` imports it, through
        // Sources/Models/PreprocessingKernels.swift.
        .target(name: "CPreprocessing", dependencies: ["CKernels"], path: "Sources/CPreprocessing"),
        // The shipped weights are built into the library as byte arrays (`PackageResources`, read by
        // Sources/Models/Shipped/ShippedWeights.swift). Sources/Models/Shipped/Weights holds only symlinks to the
        // files in Weights/, which stay the one copy: retraining updates the built-in weights with no other step.
        .target(
            name: "Models", dependencies: ["WeightsFormat", "DataFiles", "Tensor", "CPreprocessing"], resources: [.embedInCode("Shipped/Weights")]),
        // Dataset files (shape and motion CSV datasets, read in place on every core): for training, evaluation and
        // batches; an app that recognizes drawings or recordings does not link it.
        .target(name: "Datasets", dependencies: ["Models", "WeightsFormat", "DataFiles", "Tensor"]),
        .target(name: "Train", dependencies: ["Datasets", "Models", "WeightsFormat", "DataFiles", "Tensor"]),
        // ONNX models in and out. Sources/ONNX/Generated/onnx.pb.swift is generated from onnx.proto by
        // scripts/onnx/generate-swift.sh (protoc and swift-protobuf's plugin) and committed: no build runs protoc.
        .target(
            name: "ONNX",
            dependencies: [
                "Models", "WeightsFormat", "DataFiles", "Tensor",
                .product(name: "SwiftProtobuf", package: "swift-protobuf", condition: .when(traits: ["ONNX"])),
            ]
        ),
        .executableTarget(
            name: "classify",
            dependencies: [
                "Train", "Datasets", "Models", "WeightsFormat", "DataFiles", "Tensor", "ONNX",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["CLI"])),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Serve"])),
                .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: ["Serve"])),
                .product(name: "HummingbirdTLS", package: "hummingbird", condition: .when(traits: ["Serve"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Serve"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Serve"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Serve"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Serve"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["Serve"])),
            ],
            // The pages of `classify serve` (HTML, CSS, JavaScript), built into the binary as byte arrays.
            resources: [.embedInCode("Pages")]
        ),
        .testTarget(name: "TensorTests", dependencies: ["Tensor"]),
        // The Apple example's app logic (Examples/AppleApp: touches → strokes, Core Motion → MotionStream), SwiftUI-free,
        // compiled and tested here as the app compiles it; its SwiftUI views build only on Apple platforms.
        .target(name: "AppleExampleLogic", dependencies: ["Models"], path: "Examples/AppleApp/Sources/ShapesAndMotion"),
        .testTarget(
            name: "ModelsTests", dependencies: ["Datasets", "Models", "WeightsFormat", "DataFiles", "Tensor", "AppleExampleLogic"]),
        .testTarget(name: "TrainTests", dependencies: ["Train", "Datasets", "Models", "WeightsFormat", "DataFiles", "Tensor"]),
        .testTarget(
            name: "ClassifyTests",
            dependencies: [
                "classify", "Models", "WeightsFormat", "DataFiles", "Tensor", "Train", "SignalTask",
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Serve"])),
            ]),
        // A third task, the way an app writes its own (public declarations only): a one-dimensional signal classified
        // window by window. The tests take it through every path (ONNXTests, ClassifyTests) and so does Bench.
        .target(name: "SignalTask", dependencies: ["Train", "Models", "WeightsFormat", "DataFiles", "Tensor"], path: "Tests/SignalTask"),
        .testTarget(
            name: "ONNXTests", dependencies: ["ONNX", "Train", "Datasets", "Models", "WeightsFormat", "DataFiles", "Tensor", "SignalTask"]),
    ]
)
