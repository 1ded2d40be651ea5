import DataFiles
import Foundation
import Tensor
import Testing
import WeightsFormat

@testable import Models

/// The package root: the shipped Weights/ are found relative to it.
private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

@Suite("Shipped weights built in, and the one-call API")
struct ShippedWeightsTests {
    /// Every file in Weights/ is built in under its name, byte for byte, and loads as the file on disk does; nothing
    /// else is built in. (SwiftPM embeds them through the symlinks in Sources/Models/Shipped/Weights/: a missing
    /// symlink or a dangling one, or a file missing from `ShippedWeights.files`, fails here.)
    @Test func everyBuiltInVariantIsItsFileInWeightsAndLoads() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Weights").path)
            .filter { $0.hasSuffix(".weights") }.sorted()
        #expect(files.count == 4, "\(files)")
        #expect(files.map { String($0.dropLast(".weights".count)) } == ShippedWeights.variants)
        for variant in ShippedWeights.variants {
            let url = root.appendingPathComponent("Weights/\(variant).weights")
            let onDisk = try [UInt8](Data(contentsOf: url))
            let builtIn = try #require(ShippedWeights.bytes(of: variant))
            #expect(builtIn.count == onDisk.count, "\(variant): \(builtIn.count) bytes built in, \(onDisk.count) in Weights/")
            #expect(builtIn == onDisk, "\(variant): the built-in bytes differ from Weights/\(variant).weights")
            let loaded = try ShippedWeights().load(variant)
            #expect(loaded == (try ModelFile(contentsOf: url)), "\(variant): the built-in file loads differently")
            #expect(variant.hasPrefix(loaded.name + "."), "\(variant) holds the model \(loaded.name)")
        }
        #expect(ShippedWeights.bytes(of: "shape-classifier.q4") == nil)
        #expect(throws: WeightsNotFound.self) { try ShippedWeights().load("shape-classifier.q4") }
    }

    /// `shipped()` answers what the files answer, and says which model did.
    @Test func shippedRecognizersAnswerAsTheFilesDo() throws {
        let shapes = try ShapeRecognizer.shipped()
        #expect(shapes.model == "shape-classifier.int8" && shapes.attempts.isEmpty)
        let fromFile = try ShapeRecognizer(contentsOf: root.appendingPathComponent("Weights/shape-classifier.int8.weights"))
        #expect(fromFile.model == "shape-classifier.int8")
        for name in ["circle", "triangle", "square", "star", "other"] {
            let drawing = try DrawingReader.read(root.appendingPathComponent("Datasets/examples/\(name).csv").path)
            let (a, b) = (try shapes.recognize(drawing), try fromFile.recognize(drawing))
            #expect(a.label == b.label && a.confidence == b.confidence, "\(name): \(a.label) vs \(b.label)")
        }
        let square = try shapes.recognize(points: [(0, 0), (100, 0), (100, 100), (0, 100), (0, 0)])
        #expect(square.label == "square" && !square.uncertain, "\(square.label) \(square.confidence)")
        #expect(throws: DataError.self) { try shapes.recognize(points: [(1, 1)]) }

        let motion = try MotionRecognizer.shipped()
        #expect(motion.model == "motion-state.int8")
        let path = root.appendingPathComponent("Datasets/examples/running.csv").path
        let timeline = try motion.recognize(MotionRecordingReader.read(path))
        #expect(timeline.label == "running" && timeline.model == "motion-state.int8")
        // Every window's calibrated probabilities, in the model's class order; the best is the window's label and
        // its confidence.
        #expect(timeline.classes == ["walking", "running", "still"])
        #expect(timeline.windowProbabilities.count == 3 * timeline.windows.count)
        for (index, window) in timeline.windows.enumerated() {
            let ranked = timeline.probabilities(ofWindow: index)
            #expect(ranked.first?.label == window.label && abs(ranked.map(\.probability).reduce(0, +) - 1) < 1e-4)
            #expect(ranked.first.map { abs($0.probability - window.confidence) < 1e-12 } == true)
        }
        #expect(timeline.probabilities(ofWindow: timeline.windows.count).isEmpty)
        let bytes = try [UInt8](Data(contentsOf: root.appendingPathComponent("Weights/motion-state.f32.weights")))
        #expect(try MotionRecognizer(weights: bytes).recognize(MotionRecordingReader.read(path)).label == "running")
        #expect(throws: (any Error).self) { try MotionRecognizer(weights: Array(bytes.prefix(100))) }
        #expect(throws: (any Error).self) {
            try ShapeRecognizer(contentsOf: root.appendingPathComponent("Weights/motion-state.int8.weights"))
        }
    }

    /// `recognize(samples:)` is `recognize` of the recording the samples make.
    @Test func samplesClassifyAsTheirRecording() throws {
        let motion = try MotionRecognizer.shipped()
        let path = root.appendingPathComponent("Datasets/examples/walking.csv").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let rows = text.split(separator: "\n").map { $0.split(separator: ",").map(String.init) }
        let header = rows[0]
        func column(_ name: String) throws -> Int { try #require(header.firstIndex(of: name)) }
        let (t, g, u, r) = (try column("timestamp"), try column("gravity.x"), try column("userAcceleration.x"), try column("rotationRate.x"))
        let samples = rows.dropFirst().map { row in
            let v = row.map { Double($0) ?? 0 }
            return MotionStreamSample(
                time: v[t], gravity: (v[g], v[g + 1], v[g + 2]), userAcceleration: (v[u], v[u + 1], v[u + 2]),
                rotationRate: (v[r], v[r + 1], v[r + 2]))
        }
        let fromSamples = try motion.recognize(samples: samples)
        let fromFile = try motion.recognize(MotionRecordingReader.read(path))
        #expect(fromSamples.label == fromFile.label && fromSamples.windows.count == fromFile.windows.count)
        #expect(zip(fromSamples.windows, fromFile.windows).allSatisfy { $0.label == $1.label && abs($0.confidence - $1.confidence) < 1e-6 })
        #expect(throws: DataError.self) { try motion.recognize(samples: Array(samples.prefix(100))) }
        #expect(throws: DataError.self) { try motion.recognize(samples: [samples[1], samples[0]]) }
        #expect(throws: DataError.self) { try motion.recognize(samples: []) }
    }
}
