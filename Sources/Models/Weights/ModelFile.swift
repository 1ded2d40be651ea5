import Foundation
import Tensor

/// The input a model takes, as its weights file records it.
public struct InputSpec: Codable, Equatable, Sendable {
    /// One sample's shape, without the batch axis (e.g. `[28, 28, 1]`).
    public var shape: [Int]
    /// What the input is, for people (e.g. "28x28 grayscale rendering of the strokes").
    public var description: String

    /// Creates the spec.
    public init(shape: [Int], description: String) {
        self.shape = shape
        self.description = description
    }
}

/// How a model was trained, as its weights file records it. Every field is optional.
public struct TrainingMetadata: Codable, Equatable, Sendable {
    /// The training data's path as given to `classify train`.
    public var dataset: String?
    /// A checksum of the training data (e.g. `crc32:1a2b3c4d`).
    public var datasetChecksum: String?
    /// The seed of the run.
    public var seed: UInt64?
    /// Epochs trained.
    public var epochs: Int?
    /// Accuracy on the validation data, 0…1.
    public var validationAccuracy: Double?

    /// Creates the metadata.
    public init(
        dataset: String? = nil, datasetChecksum: String? = nil, seed: UInt64? = nil, epochs: Int? = nil,
        validationAccuracy: Double? = nil
    ) {
        self.dataset = dataset
        self.datasetChecksum = datasetChecksum
        self.seed = seed
        self.epochs = epochs
        self.validationAccuracy = validationAccuracy
    }
}

/// One row of a weights file's tensor table.
public struct TensorEntry: Codable, Equatable, Sendable {
    /// `<layer index>.<role>`, e.g. `0.weight`.
    public var name: String
    /// The tensor's shape.
    public var shape: [Int]
    /// How its bytes are laid out.
    public var format: StorageFormat
    /// Where its bytes start, from the start of the data section (a multiple of 32).
    public var offset: Int
    /// How many bytes it takes (`format.byteCount(for: shape)`).
    public var length: Int
}

/// The JSON header of a weights file.
struct WeightsHeader: Codable, Equatable {
    var name: String
    var architecture: [LayerSpec]
    var labels: [String]
    var input: InputSpec
    var preprocessing: [String: JSONValue]
    var training: TrainingMetadata?
    var decision: DecisionRule?
    var activationQuantization: [ActivationQuantization]?
    var tensors: [TensorEntry]
}

/// What a weights file holds: a model's architecture and tensors with everything needed to use it, in memory.
///
/// `write(to:)` saves it atomically; `ModelFile(contentsOf:)` reads and validates every byte;
/// `makeModel(compact:)` builds the layers. The byte layout is in `Weights/FORMAT.md`.
public struct ModelFile: Equatable, Sendable {
    /// The format version this build writes. Version 2 added the optional `decision` header and the shape
    /// rasterizer's `orientation` and `maxStretch` preprocessing keys: a version-1 reader would ignore them and
    /// answer wrongly, so it must refuse such files.
    public static let formatVersion: UInt32 = 2
    /// The format versions this build reads: version-1 files get `DecisionRule.legacy` and their plain rasterizer.
    public static let readableVersions: ClosedRange<UInt32> = 1...2
    /// The first 8 bytes of every weights file: `\x89ODML\r\n\x1A` (binary marker, name, line-ending and
    /// end-of-file guards, as PNG does).
    public static let magic: [UInt8] = [0x89, 0x4F, 0x44, 0x4D, 0x4C, 0x0D, 0x0A, 0x1A]
    /// Bytes before the header: magic, version, header length, file length.
    public static let preambleBytes = 24
    /// Tensor data starts at multiples of this many bytes.
    public static let alignment = 32
    /// Weight tensors with fewer elements than this stay `f32` whatever format is asked for; biases and
    /// normalization statistics always do.
    public static let smallTensorLimit = 256

    /// The model's name, e.g. `shape-classifier`.
    public var name: String
    /// The layers, first to last.
    public var architecture: [LayerSpec]
    /// The class names, in output order.
    public var labels: [String]
    /// The input one sample must have.
    public var input: InputSpec
    /// Parameters of the preprocessing that turns raw data into the input.
    public var preprocessing: [String: JSONValue]
    /// How it was trained.
    public var training: TrainingMetadata?
    /// The format version of the file it was read from (`formatVersion` for a model built in memory).
    public internal(set) var version: UInt32 = ModelFile.formatVersion
    /// How its outputs become an answer (calibration, reject class, uncertainty floor); `nil` in files written
    /// before it existed, which then get `DecisionRule.legacy`.
    public var decision: DecisionRule?
    /// How the input of each int8 layer is quantized for integer arithmetic (calibrated at export); `nil` or
    /// empty runs int8 weights dequantized in float.
    public var activationQuantization: [ActivationQuantization]?
    /// The tensors by name (`<layer index>.<role>`).
    public var tensors: [String: QuantizedTensor]

    /// Describes `model` for saving, its weights stored in `format` (small tensors stay `f32`). Nested
    /// `Sequential`s are flattened: the saved model computes the same function.
    public init(
        name: String, model: Sequential, labels: [String], input: InputSpec,
        preprocessing: [String: JSONValue] = [:], training: TrainingMetadata? = nil, decision: DecisionRule? = nil,
        format: StorageFormat = .f32
    ) throws(WeightsFileError) {
        self.name = name
        self.decision = decision
        self.labels = labels
        self.input = input
        self.preprocessing = preprocessing
        self.training = training
        architecture = []
        tensors = [:]
        for layer in Self.flatten(model.layers) {
            guard let (spec, layerTensors) = LayerSpec.describe(layer) else {
                throw WeightsFileError(path: name, problem: .unsupportedLayer(String(describing: type(of: layer))))
            }
            let index = architecture.count
            architecture.append(spec)
            for (role, stored) in layerTensors {
                let tensorName = "\(index).\(role)"
                if let bad = stored.firstNonFiniteElement() {
                    throw WeightsFileError(path: name, problem: .invalidValue(tensor: tensorName, element: bad, reason: "not finite"))
                }
                let quantize = role == "weight" && format.isQuantized && !stored.format.isQuantized
                    && elementCount(stored.shape) >= Self.smallTensorLimit
                tensors[tensorName] = quantize ? QuantizedTensor(quantizing: stored.dequantized(), as: format) : stored
            }
        }
        try validate(path: name)
    }

    private static func flatten(_ layers: [any Layer]) -> [any Layer] {
        layers.flatMap { layer -> [any Layer] in
            if let nested = layer as? Sequential { return flatten(nested.layers) }
            return [layer]
        }
    }

    /// Checks that the architecture chains from the input and that every tensor it needs is there with its
    /// shape, finite, and that no other tensor is.
    func validate(path: String) throws(WeightsFileError) {
        var shape = [1] + input.shape
        let axisLimit = 1 << 24
        guard input.shape.allSatisfy({ $0 >= 1 && $0 <= axisLimit }),
              input.shape.reduce(1, { $0 * $1 > Int(Int32.max) ? Int(Int32.max) + 1 : $0 * $1 }) <= Int(Int32.max)
        else {
            throw WeightsFileError(path: path, problem: .invalidArchitecture(
                "input shape \(input.shape) needs axes of 1…\(axisLimit) and at most \(Int32.max) elements"))
        }
        var needed = Set<String>()
        var operations = 0
        for (index, spec) in architecture.enumerated() {
            let input = shape
            switch spec.outputShape(for: shape) {
            case .success(let next): shape = next
            case .failure(let mismatch):
                throw WeightsFileError(path: path, problem: .invalidArchitecture(
                    "layer \(index) (\(mismatch.layer)) needs input \(mismatch.expected), gets \(mismatch.actual)"))
            }
            let cost = spec.cost(input: input, output: shape)
            operations = operations > Int.max - cost.operations ? Int.max : operations + cost.operations
            guard cost.elements <= Self.elementBudget else {
                throw WeightsFileError(path: path, problem: .invalidArchitecture(
                    "layer \(index) (\(spec.summary)) needs \(cost.elements) floats of memory per sample; the limit is \(Self.elementBudget)"))
            }
            guard operations <= Self.operationBudget else {
                throw WeightsFileError(path: path, problem: .invalidArchitecture(
                    "the layers up to \(index) (\(spec.summary)) need \(operations) operations per sample; the limit is \(Self.operationBudget)"))
            }
            for (role, expected) in spec.tensorShapes {
                let name = "\(index).\(role)"
                needed.insert(name)
                guard let tensor = tensors[name] else { throw WeightsFileError(path: path, problem: .missingTensor(name)) }
                guard tensor.shape == expected else {
                    throw WeightsFileError(path: path, problem: .tensorShapeMismatch(tensor: name, expected: expected, actual: tensor.shape))
                }
                if let bad = tensor.firstNonFiniteElement() {
                    throw WeightsFileError(path: path, problem: .invalidValue(tensor: name, element: bad, reason: "not finite"))
                }
                if role == "variance", let bad = tensor.dequantized().scalars.firstIndex(where: { $0 < 0 }) {
                    throw WeightsFileError(path: path, problem: .invalidValue(tensor: name, element: bad, reason: "a negative variance"))
                }
            }
        }
        if let extra = tensors.keys.sorted().first(where: { !needed.contains($0) }) {
            throw WeightsFileError(path: path, problem: .unexpectedTensor(extra))
        }
        if !labels.isEmpty {
            guard shape.count == 2 && shape[1] == labels.count else {
                throw WeightsFileError(path: path, problem: .invalidArchitecture(
                    "the model's output \(Array(shape.dropFirst())) is not one score for each of its \(labels.count) labels"))
            }
            guard Set(labels).count == labels.count, !labels.contains("") else {
                throw WeightsFileError(path: path, problem: .invalidArchitecture("labels must be distinct and not empty: \(labels)"))
            }
        }
        let numbers = [training?.validationAccuracy].compactMap { $0 } + preprocessing.values.flatMap(\.numbers)
        if let bad = numbers.first(where: { !$0.isFinite }) {
            throw WeightsFileError(path: path, problem: .corruptHeader("metadata holds the non-finite number \(bad)"))
        }
        if let problem = decision?.problem(labels: labels) {
            throw WeightsFileError(path: path, problem: .corruptHeader(problem))
        }
        if let problem = activationQuantizationProblem {
            throw WeightsFileError(path: path, problem: .corruptHeader(problem))
        }
    }

    /// The most floats one layer may allocate for one sample (256 MiB): more means a crafted or mistaken file.
    public static let elementBudget = 1 << 26
    /// The most multiply-adds (or comparisons) the whole model may take for one sample (about 17 billion).
    public static let operationBudget = 1 << 34

    /// The layers, ready to run. `compact: false` dequantizes every weight once here (fastest: plain sgemm);
    /// `compact: true` keeps quantized weights quantized and dequantizes tiles per call (smallest memory).
    public func makeModel(compact: Bool = false) -> Sequential {
        Sequential(architecture.enumerated().map { index, spec in
            var layerTensors: [String: QuantizedTensor] = [:]
            for (role, _) in spec.tensorShapes { layerTensors[role] = tensors["\(index).\(role)"] }
            return spec.makeLayer(layerTensors, compact: compact)
        })
    }

    /// The model's output shape for a batch of one.
    public var outputShape: [Int] {
        architecture.reduce([1] + input.shape) { shape, spec in (try? spec.outputShape(for: shape).get()) ?? shape }
    }

    /// The bytes the tensors take in their formats.
    public var tensorBytes: Int { tensors.values.reduce(0) { $0 + $1.bytes.count } }
    /// The bytes the tensors would take in `f32`.
    public var float32Bytes: Int { tensors.values.reduce(0) { $0 + 4 * elementCount($1.shape) } }
}

// MARK: - Encoding

extension ModelFile {
    /// The file's bytes: preamble, JSON header, aligned tensor data, CRC-32.
    public func encoded() -> [UInt8] {
        var entries: [TensorEntry] = []
        var offset = 0
        for name in tensors.keys.sorted(by: Self.tensorOrder) {
            guard let tensor = tensors[name] else { continue }
            entries.append(TensorEntry(name: name, shape: tensor.shape, format: tensor.format, offset: offset, length: tensor.bytes.count))
            offset = Self.aligned(offset + tensor.bytes.count)
        }
        let header = WeightsHeader(
            name: name, architecture: architecture, labels: labels, input: input, preprocessing: preprocessing,
            training: training, decision: decision, activationQuantization: activationQuantization, tensors: entries)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding these plain structs cannot fail; an empty header would be caught on reading.
        let headerBytes = (try? encoder.encode(header)).map { [UInt8]($0) } ?? []
        let dataStart = Self.aligned(Self.preambleBytes + headerBytes.count)
        let dataBytes = entries.last.map { $0.offset + $0.length } ?? 0
        let fileLength = dataStart + dataBytes + 4

        var bytes = Self.magic
        bytes.reserveCapacity(fileLength)
        appendLittleEndian(Self.formatVersion, to: &bytes)
        appendLittleEndian(UInt32(headerBytes.count), to: &bytes)
        appendLittleEndian(UInt64(fileLength), to: &bytes)
        bytes += headerBytes
        bytes += [UInt8](repeating: 0, count: dataStart - bytes.count)
        for entry in entries {
            bytes += [UInt8](repeating: 0, count: dataStart + entry.offset - bytes.count)
            bytes += tensors[entry.name]?.bytes ?? []
        }
        appendLittleEndian(CRC32.checksum(bytes), to: &bytes)
        return bytes
    }

    /// Writes the file atomically: to a temporary file beside `url`, flushed to disk, then renamed over it, so an
    /// interrupted write never leaves a half-written file where a good one was.
    public func write(to url: URL) throws(WeightsFileError) {
        try Self.writeAtomically(encoded(), to: url)
    }

    static func writeAtomically(_ bytes: [UInt8], to url: URL) throws(WeightsFileError) {
        do {
            try AtomicFile.write(bytes, to: url)
        } catch {
            throw WeightsFileError(path: url.path, problem: .unwritable(error.reason))
        }
    }

    /// Layer order, then role order within a layer: `0.weight`, `0.bias`, `1.weight`, …
    public static func tensorOrder(_ a: String, _ b: String) -> Bool {
        let roles = ["weight", "bias", "gamma", "beta", "mean", "variance"]
        func key(_ name: String) -> (Int, Int, String) {
            let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
            return (Int(parts.first ?? "") ?? Int.max, roles.firstIndex(of: parts.last ?? "") ?? roles.count, name)
        }
        return key(a) < key(b)
    }

    static func aligned(_ offset: Int) -> Int { (offset + alignment - 1) / alignment * alignment }
}

private func appendLittleEndian<Value: FixedWidthInteger>(_ value: Value, to bytes: inout [UInt8]) {
    withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
}

// MARK: - Decoding

extension ModelFile {
    /// Reads and validates the weights file at `url`: every byte is checked before anything is built.
    public init(contentsOf url: URL) throws(WeightsFileError) {
        self = try Self.load(url).file
    }

    /// Reads and validates the weights file at `url`, and returns its bytes too (for tools that show them).
    public static func load(_ url: URL) throws(WeightsFileError) -> (file: ModelFile, bytes: [UInt8]) {
        let path = url.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw WeightsFileError(path: path, problem: .fileNotFound)
        }
        if isDirectory.boolValue { throw WeightsFileError(path: path, problem: .unreadable("it is a directory")) }
        let bytes: [UInt8]
        do {
            bytes = [UInt8](try Data(contentsOf: url))
        } catch {
            throw WeightsFileError(path: path, problem: .unreadable(error.localizedDescription))
        }
        return (try ModelFile(bytes: bytes, path: path), bytes)
    }

    /// The CRC-32 stored in the last 4 bytes of an encoded file.
    public static func storedChecksum(of bytes: [UInt8]) -> UInt32? {
        guard bytes.count >= 4 else { return nil }
        return bytes.suffix(4).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The same model with every tensor stored as `f32`: what the file would be without quantization.
    public var float32Equivalent: ModelFile {
        var copy = self
        copy.tensors = tensors.mapValues { $0.format == .f32 ? $0 : QuantizedTensor(quantizing: $0.dequantized(), as: .f32) }
        copy.activationQuantization = nil  // it names int8 layers, and an f32 file has none
        return copy
    }

    /// Decodes and validates a weights file's bytes; `path` names the file in errors.
    public init(bytes: [UInt8], path: String) throws(WeightsFileError) {
        func fail(_ problem: WeightsFileError.Problem) -> WeightsFileError { WeightsFileError(path: path, problem: problem) }
        func readInteger<Value: FixedWidthInteger>(_: Value.Type, at offset: Int) -> Value {
            var value: Value = 0
            for i in 0..<MemoryLayout<Value>.size { value |= Value(bytes[offset + i]) << (8 * i) }
            return value
        }

        let prefix = Array(bytes.prefix(Self.magic.count))
        guard prefix == Array(Self.magic.prefix(prefix.count)) else { throw fail(.wrongMagic(found: prefix)) }
        guard bytes.count >= Self.preambleBytes + 4 else {
            throw fail(.truncated(expectedBytes: Self.preambleBytes + 4, actualBytes: bytes.count))
        }
        let version = readInteger(UInt32.self, at: 8)
        guard Self.readableVersions.contains(version) else {
            throw fail(.unsupportedVersion(found: version, supported: Self.formatVersion))
        }
        let headerLength = Int(readInteger(UInt32.self, at: 12))
        let declaredLength = readInteger(UInt64.self, at: 16)
        guard declaredLength <= UInt64(Int.max), Int(declaredLength) == bytes.count else {
            let expected = declaredLength > UInt64(Int.max) ? Int.max : Int(declaredLength)
            throw fail(expected > bytes.count
                ? .truncated(expectedBytes: expected, actualBytes: bytes.count)
                : .trailingBytes(expectedBytes: expected, actualBytes: bytes.count))
        }
        let stored = readInteger(UInt32.self, at: bytes.count - 4)
        let computed = CRC32.checksum(bytes, range: 0..<(bytes.count - 4))
        guard stored == computed else { throw fail(.checksumMismatch(stored: stored, computed: computed)) }

        let dataStart = Self.aligned(Self.preambleBytes + headerLength)
        guard dataStart <= bytes.count - 4 else {
            throw fail(.corruptHeader("a header of \(headerLength) bytes does not fit a file of \(bytes.count) bytes"))
        }
        let header: WeightsHeader
        do {
            header = try JSONDecoder().decode(
                WeightsHeader.self, from: Data(bytes[Self.preambleBytes..<(Self.preambleBytes + headerLength)]))
        } catch {
            throw fail(.corruptHeader(Self.describe(decodingError: error)))
        }

        let dataBytes = bytes.count - 4 - dataStart
        var tensors: [String: QuantizedTensor] = [:]
        var end = 0
        for entry in header.tensors.sorted(by: { $0.offset < $1.offset }) {
            guard Self.isPlausible(entry.shape, fileBytes: bytes.count) else {
                throw fail(.corruptHeader("tensor \(entry.name) has an impossible shape \(entry.shape)"))
            }
            let expected = entry.format.byteCount(for: entry.shape)
            guard entry.length == expected else {
                throw fail(.tensorSizeMismatch(
                    tensor: entry.name, shape: entry.shape, format: entry.format, expectedBytes: expected, actualBytes: entry.length))
            }
            guard tensors[entry.name] == nil else { throw fail(.duplicateTensor(entry.name)) }
            guard entry.offset >= end, entry.offset % Self.alignment == 0, entry.length <= dataBytes - entry.offset else {
                throw fail(.tensorOutOfBounds(tensor: entry.name, offset: entry.offset, length: entry.length, dataBytes: dataBytes))
            }
            if let stray = (dataStart + end..<dataStart + entry.offset).first(where: { bytes[$0] != 0 }) {
                throw fail(.strayBytes(offset: stray))
            }
            let start = dataStart + entry.offset
            tensors[entry.name] = QuantizedTensor(
                shape: entry.shape, format: entry.format, bytes: Array(bytes[start..<(start + entry.length)]))
            end = entry.offset + entry.length
        }
        if let stray = (Self.preambleBytes + headerLength..<dataStart).first(where: { bytes[$0] != 0 }) {
            throw fail(.strayBytes(offset: stray))
        }
        if end != dataBytes {
            throw fail(.strayBytes(offset: dataStart + end))
        }
        name = header.name
        architecture = header.architecture
        labels = header.labels
        input = header.input
        preprocessing = header.preprocessing
        training = header.training
        decision = header.decision
        activationQuantization = header.activationQuantization
        self.version = version
        self.tensors = tensors
        if let reason = architecture.lazy.compactMap(\.invalidReason).first {
            throw fail(.invalidArchitecture(reason))
        }
        try validate(path: path)
    }

    /// Whether a shape could fit a file of `fileBytes` bytes: no negative axis, and no axis or element count
    /// beyond 8 per byte (no format packs more than 4 elements per byte). It keeps byte-count arithmetic on
    /// a crafted header from overflowing.
    static func isPlausible(_ shape: [Int], fileBytes: Int) -> Bool {
        let limit = 8 * fileBytes + 8
        var count = 1
        for axis in shape {
            guard axis >= 0, axis <= limit else { return false }
            let (product, overflow) = count.multipliedReportingOverflow(by: axis)
            guard !overflow, product <= limit else { return false }
            count = product
        }
        return true
    }

    /// A decoding error as one line: what was wrong and where in the header.
    static func describe(decodingError error: any Error) -> String {
        func location(_ context: DecodingError.Context) -> String {
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        }
        switch error {
        case DecodingError.dataCorrupted(let context): return location(context)
        case DecodingError.keyNotFound(let key, let context): return "missing \(key.stringValue) at \(location(context))"
        case DecodingError.typeMismatch(_, let context): return location(context)
        case DecodingError.valueNotFound(_, let context): return location(context)
        default: return "\(error)"
        }
    }
}
