import DataFiles
import Foundation
import Tensor
import Testing

@testable import Datasets
@testable import Models
@testable import WeightsFormat

func randomTensor(_ shape: [Int], seed: UInt64) -> Tensor {
    var generator = SeededGenerator(seed: seed)
    return Tensor(randomNormal: shape, generator: &generator)
}

/// A model with every kind of 2-D layer, 28×28×1 → 4 classes; about 54.5k weights.
func imageModel(seed: UInt64 = 1) -> Sequential {
    var g = SeededGenerator(seed: seed)
    let norm = BatchNorm(
        gamma: Tensor(randomUniform: [16], in: 0.5..<1.5, generator: &g), beta: Tensor(randomNormal: [16], generator: &g),
        mean: Tensor(randomNormal: [16], generator: &g), variance: Tensor(randomUniform: [16], in: 0.5..<2, generator: &g))
    return Sequential([
        Conv2D(inChannels: 1, outChannels: 16, kernel: (3, 3), padding: .same, generator: &g),
        norm,
        Activation(.relu),
        Pool2D(.max, size: (2, 2)),
        Sequential([
            Conv2D(inChannels: 16, outChannels: 32, kernel: (3, 3), stride: (2, 2), padding: .same, generator: &g),
            Activation(.leakyRelu(alpha: 0.05)),
        ]),
        Pool2D(.average, size: (3, 3), stride: (2, 2), padding: .same),
        Flatten(),
        Dense(inFeatures: 4 * 4 * 32, outFeatures: 96, generator: &g),
        Activation(.tanh),
        Dense(inFeatures: 96, outFeatures: 4, generator: &g),
        Activation(.softmax),
    ])
}

/// A 1-D model, 128 steps × 12 channels → 2 classes.
func sequenceModel(seed: UInt64 = 2) -> Sequential {
    var g = SeededGenerator(seed: seed)
    return Sequential([
        Conv1D(inChannels: 12, outChannels: 32, kernelSize: 5, padding: .same, generator: &g),
        Activation(.relu),
        Pool1D(.max, size: 2),
        Conv1D(inChannels: 32, outChannels: 32, kernelSize: 3, stride: 2, padding: .valid, generator: &g),
        Activation(.sigmoid),
        Pool1D(.average, size: 3, stride: 1, padding: .same),
        GlobalAveragePool(),
        Dense(inFeatures: 32, outFeatures: 2, generator: &g),
        Activation(.logSoftmax),
    ])
}

func imageModelFile(format: StorageFormat = .f32) throws -> ModelFile {
    try ModelFile(
        name: "test-image", model: imageModel(), labels: ["circle", "triangle", "square", "star"],
        input: InputSpec(shape: [28, 28, 1], description: "28x28 test image"),
        preprocessing: ["lineWidth": .number(2.5), "antialias": .bool(true)],
        training: TrainingMetadata(dataset: "Datasets/x.csv", datasetChecksum: "crc32:00000000", seed: 7, epochs: 3, validationAccuracy: 0.75),
        format: format)
}

/// A fresh temporary directory, removed by the caller.
func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("weights-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Rebuilds a weights file around an edited header, with a correct preamble and checksum — so the reader's
/// later checks (table, shapes, architecture) can be reached with crafted content.
func reassemble(_ bytes: [UInt8], editHeader: (inout [String: Any]) -> Void, editData: (inout [UInt8]) -> Void = { _ in }) throws -> [UInt8] {
    let headerLength = Int(bytes[12]) | Int(bytes[13]) << 8 | Int(bytes[14]) << 16 | Int(bytes[15]) << 24
    var header = try #require(try JSONSerialization.jsonObject(with: Data(bytes[24..<(24 + headerLength)])) as? [String: Any])
    editHeader(&header)
    return reassemble(bytes, header: [UInt8](try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])), editData: editData)
}

/// Rebuilds a weights file around `header`, any bytes, with a correct preamble and checksum.
func reassemble(_ bytes: [UInt8], header newHeader: [UInt8], editData: (inout [UInt8]) -> Void = { _ in }) -> [UInt8] {
    let headerLength = Int(bytes[12]) | Int(bytes[13]) << 8 | Int(bytes[14]) << 16 | Int(bytes[15]) << 24
    let dataStart = ModelFile.aligned(24 + headerLength)
    var data = Array(bytes[dataStart..<(bytes.count - 4)])
    editData(&data)
    let newStart = ModelFile.aligned(24 + newHeader.count)
    var out = Array(bytes[0..<12])
    let length = newStart + data.count + 4
    out += withUnsafeBytes(of: UInt32(newHeader.count).littleEndian, Array.init)
    out += withUnsafeBytes(of: UInt64(length).littleEndian, Array.init)
    out += newHeader
    out += [UInt8](repeating: 0, count: newStart - out.count)
    out += data
    out += withUnsafeBytes(of: CRC32.checksum(out).littleEndian, Array.init)
    return out
}

/// The problem a decode reports, or `nil` when it succeeds.
func problem(decoding bytes: [UInt8]) -> WeightsFileError.Problem? {
    do {
        _ = try ModelFile(bytes: bytes, path: "test.weights")
        return nil
    } catch {
        return error.problem
    }
}

/// The bundled shapes dataset `name` (`Datasets/shapes/<name>.csv`): real drawings of every class, `other`
/// included, the classes in turn, with times. Tests here take drawings from it where the tests of Train use the
/// generator (ShapeGenerator is Train's, and this target does not depend on Train).
func bundledShapesURL(_ name: String) -> URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Datasets/shapes/\(name).csv")
}

/// The header and the rows of the first `drawings` drawings of the bundled shapes dataset `name`, as CSV text.
func bundledShapesText(_ name: String = "test", drawings: Int) throws -> String {
    let text = try String(contentsOf: bundledShapesURL(name), encoding: .utf8)
    let lines = text.split(separator: "\n")
    var kept = [lines[0]]
    var ids: [Substring] = []
    for line in lines.dropFirst() {
        let id = line.prefix { $0 != "," }
        if ids.last != id {
            if ids.count == drawings { break }
            ids.append(id)
        }
        kept.append(line)
    }
    return kept.joined(separator: "\n") + "\n"
}

/// The first `count` drawings of the bundled shapes dataset `name`.
func bundledDrawings(_ name: String = "test", count: Int) throws -> [Drawing] {
    let items = try datasetRecords(bundledShapesURL(name).path, threads: 2)
    #expect(items.count >= count, "\(name).csv holds \(items.count) drawings, not \(count)")
    return try items.prefix(count).map { try $0.drawing.get() }
}

/// Every drawing of a shape dataset as `ShapeDataset.drawings` reads it, in file order.
func datasetRecords(_ path: String, threads: Int = 1, checkLabels: Bool = false) throws(DataError) -> [DatasetDrawingRecord] {
    try ShapeDataset.drawings(path, threads: threads, checkLabels: checkLabels) { { $0 } }.map(\.value)
}

/// The whole answers `recognize(batch:threads:)` gives for `drawings`, in order; a drawing it could not see throws.
func batchAnswers(_ recognizer: ShapeRecognizer, _ drawings: [Drawing], threads: Int) throws -> [ShapeAnswer] {
    let batch = recognizer.recognize(batch: drawings, threads: threads)
    return try (0..<batch.count).map { try batch.answer(at: $0).get() }
}
