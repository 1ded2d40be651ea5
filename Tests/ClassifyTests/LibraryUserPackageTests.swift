import Foundation
import Testing

/// An app that uses only `Models`, as the README's "Use it from Swift" sets it up (`traits: []`), resolves no other
/// package: not swift-argument-parser, not swift-protobuf (issue 33, item 3), not Hummingbird (issue 36). Checked with a fresh package outside
/// the repository, by `swift package show-dependencies` (no build, no network: a path dependency).
@Suite("A library user's package")
struct LibraryUserPackageTests {
    /// The `swift` driver beside the running toolchain, or the one on `PATH`.
    static let swift: URL? = {
        let candidates = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map {
            URL(fileURLWithPath: String($0)).appendingPathComponent("swift")
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    @Test(.enabled(if: swift != nil, "needs the swift driver on PATH"))
    func anAppOfModelsOnlyResolvesNothingElse() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        func dependencies(traits: String) throws -> String {
            let app = folder.appendingPathComponent("app-\(traits.isEmpty ? "none" : "default")")
            try FileManager.default.createDirectory(at: app.appendingPathComponent("Sources/App"), withIntermediateDirectories: true)
            let manifest = """
                // swift-tools-version:6.1
                import PackageDescription
                let package = Package(
                    name: "App",
                    dependencies: [.package(path: "\(packageRoot.path)"\(traits))],
                    targets: [.executableTarget(name: "App", dependencies: [.product(name: "Models", package: "\(packageRoot.lastPathComponent)")])]
                )
                """
            try manifest.write(to: app.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
            try "import Models\nprint(ShapeRecognizer.self)\n".write(
                to: app.appendingPathComponent("Sources/App/main.swift"), atomically: true, encoding: .utf8)
            let run = try CommandRun.run(
                try #require(Self.swift), ["package", "show-dependencies", "--format", "json"], directory: app)
            #expect(run.status == 0, "\(run.standardError)")
            return run.standardOutput
        }
        let bare = try dependencies(traits: ", traits: []")
        #expect(
            bare.contains("\"name\"") && !bare.contains("swift-argument-parser") && !bare.contains("swift-protobuf")
                && !bare.contains("hummingbird"), "\(bare)")
        // With the default traits (the CLI and ONNX), the three come back: the check above can fail.
        let full = try dependencies(traits: "")
        #expect(full.contains("swift-argument-parser") && full.contains("swift-protobuf") && full.contains("hummingbird"), "\(full)")
    }
}
