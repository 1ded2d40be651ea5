// swift-tools-version:6.1
// An iOS and macOS app of the engine (docs/platforms.md): a pad that recognizes what is drawn on it
// with a finger, and the phone's motion state live from Core Motion. `ShapesAndMotion` is the app's logic,
// SwiftUI-free, and builds everywhere (the engine's tests compile and run it on Linux); `ShapesAndMotionApp`
// is the SwiftUI app around it, which builds only where SwiftUI and Core Motion exist.
// In Xcode: File › Add Package Dependencies › Add Local… (this repository), then add the two folders' files to an
// app target, or open this package and run the app on a Mac.
import Foundation
import PackageDescription

// A package found by path is named after its folder (`OnDeviceML` when cloned as the README says, `main`, …).
let engine = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "ShapesAndMotionApp",
    platforms: [.iOS(.v18), .macOS(.v15)],
    dependencies: [
        // No `traits:` argument, as SwiftPM's documentation adds a package: no server, TLS or protobuf package is
        // resolved, and on Apple platforms the products run on Accelerate.
        .package(path: "../..")
    ],
    targets: [
        .target(name: "ShapesAndMotion", dependencies: [.product(name: "Models", package: engine)]),
        .executableTarget(name: "ShapesAndMotionApp", dependencies: ["ShapesAndMotion"]),
    ]
)
