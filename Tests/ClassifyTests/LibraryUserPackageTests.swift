import Foundation
import Testing

/// An app that uses only `Models` and adds the package as SwiftPM's documentation shows (no `traits:` argument)
/// resolves no protobuf, server or TLS package (issue 52); with `traits: []` it resolves no other package at all
/// (issue 33, item 3; issue 36). Checked with a fresh package outside the repository, by `swift package
/// show-dependencies` (no build, no network: a path dependency).
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
            let app = folder.appendingPathComponent("app-\(traits.count)")
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
        let heavy = ["swift-protobuf", "hummingbird", "swift-nio", "swift-nio-ssl"]
        let plain = try dependencies(traits: "")
        #expect(plain.contains("\"name\"") && !heavy.contains { plain.contains("\"\($0)\"") }, "\(plain)")
        let bare = try dependencies(traits: ", traits: []")
        #expect(bare.contains("\"name\"") && !bare.contains("swift-argument-parser") && !heavy.contains { bare.contains("\"\($0)\"") }, "\(bare)")
        // With the ONNX and Serve traits, they come back: the checks above can fail.
        let full = try dependencies(traits: ", traits: [\"ONNX\", \"Serve\"]")
        #expect(heavy.allSatisfy { full.contains("\"\($0)\"") }, "\(full)")
    }
}
