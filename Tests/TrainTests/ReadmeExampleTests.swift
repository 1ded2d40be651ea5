import Foundation
import Testing
import Models

/// The package root: the README and the examples are found relative to it.
private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The README's Swift example, compiled and run here, so it cannot rot: the code between the two marker comments
/// must be the README's block (after the `<!-- the example ReadmeExampleTests compiles -->` line) line for line,
/// less its `import Models`.
@Suite("The README's Swift example")
struct ReadmeExampleTests {
    /// The example as the README prints it (a whole main.swift), indented into a function.
    func example() throws {
        // README example begins
        // A drawing: strokes of (x, y) points, in any units, at any size or angle.
        let shapes = try ShapeRecognizer.shipped()
        let square = try shapes.recognize(points: [(0, 0), (100, 0), (100, 100), (0, 100), (0, 0)])
        print("square: \(square.label), \(Int(square.confidence * 100))% (model \(square.model))")
        let zigzag = try shapes.recognize(points: [(0, 0), (30, 80), (60, 10), (90, 70), (120, 5)])
        print("zigzag: \(zigzag.label)\(zigzag.uncertain ? " (uncertain)" : "")")

        // A recording: a CSV of Core Motion (or raw accelerometer) samples.
        let motion = try MotionRecognizer.shipped()
        let recording = try MotionRecordingReader.read("Datasets/examples/walking.csv")
        let timeline = try motion.classify(recording)
        print("recording: \(timeline.label), \(timeline.windows.count) windows")

        // Live: samples as the sensors deliver them; a change is reported once two windows agree.
        var stream = MotionStream(recognizer: motion)
        for tick in 0..<1000 {  // 20 s of a phone lying on a table, 50 samples a second
            let sample = MotionStreamSample(time: Double(tick) / 50, gravity: (0, 0, -1),
                                            userAcceleration: (0, 0, 0.002 * Double(tick % 3)))
            for case let .change(change) in try stream.append(sample) {
                print("live: \(change.to) at \(change.time) s")
            }
        }
        // README example ends
    }

    /// The README's block and the code above are the same lines.
    @Test func theReadmeShowsThisCode() throws {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let marker = "<!-- the example ReadmeExampleTests compiles -->"
        let afterMarker = try #require(readme.range(of: marker).map { readme[$0.upperBound...] }, "the README lost its marker")
        let block = try #require(afterMarker.range(of: "```swift\n").flatMap { start in
            afterMarker[start.upperBound...].range(of: "```").map { afterMarker[start.upperBound..<$0.lowerBound] }
        })
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let begin = try #require(source.range(of: "// README example begins\n")), end = try #require(source.range(of: "        // README example ends"))
        let code = source[begin.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("        ") ? String($0.dropFirst(8)) : String($0) }.joined(separator: "\n")
        // The README's block is a whole main.swift: `import Models`, a blank line, then the code.
        #expect(String(block) == "import Models\n\n" + code, "the README's example and ReadmeExampleTests.example() differ")
    }

    /// It runs from the package root (its recording path is relative), and says what the README says it says.
    @Test func itRunsAndAnswers() throws {
        let previous = FileManager.default.currentDirectoryPath
        _ = FileManager.default.changeCurrentDirectoryPath(root.path)
        defer { _ = FileManager.default.changeCurrentDirectoryPath(previous) }
        try example()
        let shapes = try ShapeRecognizer.shipped()
        #expect(try shapes.recognize(points: [(0, 0), (100, 0), (100, 100), (0, 100), (0, 0)]).label == "square")
        #expect(try shapes.recognize(points: [(0, 0), (30, 80), (60, 10), (90, 70), (120, 5)]).label == "unknown")
        #expect(try MotionRecognizer.shipped().classify(MotionRecordingReader.read("Datasets/examples/walking.csv")).label == "walking")
    }
}
