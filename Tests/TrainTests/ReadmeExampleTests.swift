import Foundation
import Models
import Testing

/// The package root: the README is found relative to it.
private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The README's Swift example, compiled and run here, so it cannot rot: the code between the two marker comments
/// must be the README's block (after the `<!-- the example ReadmeExampleTests compiles -->` line) line for line,
/// less its imports, and what it prints must be the README's block after "It prints".
@Suite("The README's Swift example")
struct ReadmeExampleTests {
    /// The example as the README prints it (a whole main.swift), indented into a function whose `print` parameter
    /// catches what it prints. It reads no file, so it runs from any folder.
    func example(print: (String) -> Void) throws {
        // README example begins
        // A drawing: strokes of (x, y) points, in any units, at any size or angle.
        let shapes = try ShapeRecognizer.shipped()
        let square = try shapes.recognize(points: [(0, 0), (100, 0), (100, 100), (0, 100), (0, 0)])
        print("square: \(square.label), \(Int(square.confidence * 100))% (model \(square.model))")
        let zigzag = try shapes.recognize(points: [(0, 0), (30, 80), (60, 10), (90, 70), (120, 5)])
        print("zigzag: \(zigzag.label)\(zigzag.uncertain ? " (uncertain)" : "")")
        // Several strokes (a triangle drawn as three lines), and the safe way to read any answer: its verdict.
        let strokes = try shapes.recognize(strokes: [[(0, 100), (50, 0)], [(50, 0), (100, 100)], [(100, 100), (0, 100)]])
        switch strokes.verdict {
        case .recognized(let shape): print("strokes: \(shape)")
        case .unknown(let nearest): print("strokes: none of the shapes (nearest: \(nearest ?? "none"))")
        case .notSure(let first, let second): print("strokes: not sure, \(first) or \(second)")
        }
        // Input no model can see is an error that says why (never a crash): `DataError` comes with `import Models`.
        do {
            _ = try shapes.recognize(points: [(5, 5)])
        } catch {
            let problem: DataError = error
            print("one point: \(problem.message)")
        }

        // Motion: samples as Core Motion delivers them (gravity and user acceleration, in g). Made up here:
        // 20 s at 50 Hz of a phone in a trouser pocket that bobs twice a stride, at `strides` strides a second.
        func pocket(strides: Double) -> [MotionStreamSample] {
            (0..<1000).map { tick in
                let time = Double(tick) / 50, phase = 2 * Double.pi * strides * time
                return MotionStreamSample(
                    time: time, gravity: (0, -1, 0),
                    userAcceleration: (0.1 * sin(phase), 0.25 * sin(2 * phase) + 0.12 * sin(phase + 0.5), 0))
            }
        }
        let motion = try MotionRecognizer.shipped()
        let walk = try motion.recognize(samples: pocket(strides: 1))
        print("walk: \(walk.label), \(walk.windows.count) windows")

        // Live: append each sample as the sensors deliver it; a change is reported once two windows agree.
        // The same walk, then 12 s of the phone lying on a table.
        let table = (1000..<1600).map { tick in
            MotionStreamSample(time: Double(tick) / 50, gravity: (0, 0, -1), userAcceleration: (0, 0, 0))
        }
        var stream = MotionStream(recognizer: motion)
        for sample in pocket(strides: 1) + table {
            for case let .change(change) in try stream.append(sample) {
                print("live: \(change.to) at \(String(format: "%.2f", change.time)) s")
            }
        }
        // README example ends
    }

    /// The example's code after the README's marker comment, and the block after it that shows its output.
    private func readmeBlocks() throws -> (code: Substring, output: Substring) {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let marker = "<!-- the example ReadmeExampleTests compiles -->"
        let afterMarker = try #require(readme.range(of: marker).map { readme[$0.upperBound...] }, "the README lost its marker")
        func block(after opening: String, in text: Substring) -> (Substring, Substring)? {
            guard let start = text.range(of: opening), let end = text[start.upperBound...].range(of: "```") else { return nil }
            return (text[start.upperBound..<end.lowerBound], text[end.upperBound...])
        }
        let (code, rest) = try #require(block(after: "```swift\n", in: afterMarker), "no swift block after the marker")
        let (output, _) = try #require(block(after: "```\n", in: rest), "no output block after the example")
        return (code, output)
    }

    /// The README's block and the code above are the same lines.
    @Test func theReadmeShowsThisCode() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let begin = try #require(source.range(of: "// README example begins\n")),
            end = try #require(source.range(of: "        // README example ends"))
        let code = source[begin.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("        ") ? String($0.dropFirst(8)) : String($0) }.joined(separator: "\n")
        // The README's block is a whole main.swift: the imports, a blank line, then the code.
        #expect(
            String(try readmeBlocks().code) == "import Foundation\nimport Models\n\n" + code,
            "the README's example and ReadmeExampleTests.example() differ")
    }

    /// The README stays a newcomer's guide: at most 400 lines; the internals live in docs/.
    @Test func theReadmeStaysShort() throws {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).count - (readme.hasSuffix("\n") ? 1 : 0)
        #expect(lines <= 400, "README.md has \(lines) lines; move details to docs/")
    }

    /// It runs without any file of the repository (no working directory needed), gives the real answers, and
    /// prints exactly what the README shows.
    @Test func itRunsAndAnswers() throws {
        var lines: [String] = []
        try example { lines.append($0) }
        #expect(lines.count == 7, "\(lines)")
        #expect(lines.first?.hasPrefix("square: square, ") == true, "\(lines)")
        #expect(lines.dropFirst().first == "zigzag: unknown", "\(lines)")
        #expect(lines.dropFirst(2).first == "strokes: triangle", "\(lines)")
        #expect(lines.dropFirst(3).first?.hasPrefix("one point: ") == true, "\(lines)")
        #expect(lines.dropFirst(4).first?.hasPrefix("walk: walking, ") == true, "\(lines)")
        #expect(lines.dropFirst(5).map { $0.split(separator: " ").prefix(2).joined(separator: " ") } == ["live: walking", "live: still"], "\(lines)")
        #expect(
            String(try readmeBlocks().output) == lines.joined(separator: "\n") + "\n",
            "the README's output block is not what the example prints:\n\(lines.joined(separator: "\n"))")
    }
}
