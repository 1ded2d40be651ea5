import DataFiles
import Foundation
import Tensor
import Testing
import WeightsFormat

@testable import Models

/// Mutations a damaged or hostile CSV might carry: flipped, inserted and deleted bytes, cut files, repeated and
/// swapped lines, and tokens that break number parsing.
struct Mutator {
    var generator: SeededGenerator
    static let tokens = [
        "nan", "NaN", "inf", "-inf", "1e999", "-0", "", ",", ",,", "\n", "\r\n", "\"", "\u{0}", "x", "1e-320",
        "99999999999999999999", "0x10", " ", "\t", "é", "timestamp", "acc.x", "-1", "1.5.2",
    ]

    mutating func index(_ count: Int) -> Int { count <= 0 ? 0 : Int(generator.next() % UInt64(count)) }

    mutating func mutate(_ text: [UInt8]) -> [UInt8] {
        var bytes = text
        for _ in 0..<(1 + index(3)) {
            switch index(8) {
            case 0 where !bytes.isEmpty:  // flip a bit
                bytes[index(bytes.count)] ^= UInt8(1 << index(8))
            case 1:  // insert a random byte
                bytes.insert(UInt8(truncatingIfNeeded: generator.next()), at: index(bytes.count + 1))
            case 2 where !bytes.isEmpty:  // delete a run
                let start = index(bytes.count)
                bytes.removeSubrange(start..<min(bytes.count, start + 1 + index(40)))
            case 3:  // cut the file
                bytes = Array(bytes.prefix(index(bytes.count + 1)))
            case 4:  // insert a token
                bytes.insert(contentsOf: Array(Self.tokens[index(Self.tokens.count)].utf8), at: index(bytes.count + 1))
            default:  // replace a field or duplicate/swap lines
                var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
                guard lines.count > 2 else { continue }
                let (a, b) = (index(lines.count), index(lines.count))
                if index(2) == 0 {
                    lines.swapAt(a, b)
                } else {
                    var fields = lines[a].split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map(Array.init)
                    if !fields.isEmpty { fields[index(fields.count)] = Array(Self.tokens[index(Self.tokens.count)].utf8) }
                    lines[a] = Array(fields.joined(separator: [UInt8(ascii: ",")]))
                }
                bytes = Array(lines.joined(separator: [UInt8(ascii: "\n")]))
            }
        }
        return bytes
    }
}

@Suite("Fuzzing the readers and recognizers")
struct FuzzTests {
    /// Every mutated input must give an answer or a data error of kind `.invalid` (exit 65): never a crash, a
    /// non-finite answer or another kind of error.
    @Test func mutatedDrawingsAndRecordingsGiveAnAnswerOrAnInvalidDataError() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let shapes = ShapeRecognizer.Worker(try ShapeRecognizer(contentsOf: root.appendingPathComponent("Weights/shape-classifier.int8.weights")))
        let motion = try MotionClassifier(file: ModelFile(contentsOf: root.appendingPathComponent("Weights/motion-state.int8.weights")))
        let drawing = Array(
            (0..<24).map { i -> String in
                let angle = Double(i) / 24 * 2 * .pi
                return String(format: "%.2f,%.2f,%d,0", 50 + 40 * cos(angle), 50 + 40 * sin(angle), i * 16)
            }.reduce("x,y,t,stroke\n") { $0 + $1 + "\n" }.utf8)
        var recordingText = "timestamp," + coreMotionColumns.joined(separator: ",") + "\n"
        for k in 0..<270 {
            let v = 0.6 * sin(2 * .pi * Double(k) / 45)
            recordingText += String(format: "%.2f,0,0,0,0,0.3,-0.95,0.1,0,0,0.05,%.3f,%.3f\n", Double(k) / 50, v * 0.3, -v)
        }
        let recording = Array(recordingText.utf8)
        var mutator = Mutator(generator: SeededGenerator(seed: 2026))
        var answers = 0, errors = 0, wrongKinds: [String] = []
        let path = folder.appendingPathComponent("input.csv")
        for round in 0..<10_000 {
            let isDrawing = round % 5 != 4  // 8,000 drawings, 2,000 recordings
            try Data(mutator.mutate(isDrawing ? drawing : recording)).write(to: path)
            do {
                if isDrawing {
                    let input = try DrawingReader.read(path.path)
                    if let problem = ShapeRasterizer().problem(with: input) { throw DataError(file: path.path, message: problem) }
                    let prediction = try shapes.recognize(input)
                    let geometric = try GeometricRecognizer().classify(input)
                    guard prediction.confidence.isFinite, geometric.confidence.isFinite else {
                        throw DataError(file: "", message: "non-finite answer")
                    }
                } else {
                    let input = try MotionRecordingReader.read(path.path, window: motion.windowing.window)
                    try motion.windowing.requireWindow(longest: input.segments.map(\.count).max() ?? 0, source: path.path)
                    let timeline = try motion.classify(input)
                    let fallback = try CadenceRecognizer().classify(input)
                    guard timeline.windows.allSatisfy({ $0.confidence.isFinite }), fallback.windows.allSatisfy({ $0.confidence.isFinite }) else {
                        throw DataError(file: "", message: "non-finite answer")
                    }
                }
                answers += 1
            } catch let error as DataError where error.kind == .invalid && !error.message.hasPrefix("non-finite") {
                errors += 1
            } catch {
                wrongKinds.append(
                    "round \(round): \(error); input: \(String(decoding: (try? Data(contentsOf: path)) ?? Data(), as: UTF8.self).prefix(600))")
            }
        }
        #expect(wrongKinds.isEmpty, "\(wrongKinds.prefix(5))")
        #expect(answers + errors == 10_000)
        // The mutations must exercise both outcomes, or the test would prove nothing.
        #expect(answers > 1_000 && errors > 1_000, "answers \(answers), errors \(errors)")
    }
}
