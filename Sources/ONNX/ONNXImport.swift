import Foundation
import Models
import SwiftProtobuf
import Tensor

/// ONNX models converted into ours, once, at load: the result is a `ModelFile` like any weights file, checked by
/// the same reader (its encoding is read back with `ModelFile(bytes:path:)`), run by the same compiled plan.
///
/// What is read: a graph that is one chain of layers from one float input to one output, in the default domain at
/// opsets 7–23. `Conv` (1-D and 2-D, group 1, dilation 1, pads our `same` or `valid` make), `Gemm`, `MatMul` (and
/// an `Add` of a constant after it or after a `Conv`: the bias), `Relu`, `LeakyRelu`, `Sigmoid`, `Tanh`,
/// `Softmax`, `LogSoftmax`, `MaxPool`, `AveragePool`, `GlobalAveragePool`, `BatchNormalization` (folded into the
/// convolution or dense layer before it, else a layer of its own), `Flatten`, `Reshape` to `[N, -1]`, `Transpose`
/// between channel-first and channel-last, `Identity`, `Dropout`. Constants may be computed by `Constant`,
/// `Identity`, `Transpose`, `QuantizeLinear` and `DequantizeLinear`: `INT8` weights with one scale per output
/// channel (or one in all) and zero points of 0 stay `int8`; a `QuantizeLinear` / `DequantizeLinear` pair on the
/// way into a convolution or dense layer becomes that layer's input quantization, so our integer kernels run it.
///
/// Feature maps run channel-last here (ONNX's are channel-first): convolution weights are transposed at load, and
/// a dense layer after a channel-first `Flatten` gets its columns reordered, once. A graph that does not end in
/// `Softmax` gets one (the recognizers decide on probabilities). Anything else is an error naming the operator,
/// the node and the opset.
public enum ONNXImport {
    /// The model in the `.onnx` file at `url`, with the labels and preprocessing from its metadata and from the
    /// sidecar `url.json` beside it, when there is one (`ONNXModelInfo`: its fields replace the metadata's).
    public static func modelFile(contentsOf url: URL) throws(WeightsFileError) -> ModelFile {
        let bytes = try readFile(url.path, limit: ONNXLimits.maximumFileBytes, what: "an ONNX model")
        let sidecarPath = ONNXModelInfo.sidecarPath(ofModel: url.path)
        var entry = stat()
        // A sidecar that is there but cannot be read is an error, never one that is not there.
        guard lstat(sidecarPath, &entry) == 0 else { return try modelFile(bytes: bytes, path: url.path, sidecarJSON: nil) }
        let sidecar = try readFile(sidecarPath, limit: ONNXLimits.maximumMetadataBytes, what: "a JSON sidecar")
        return try modelFile(bytes: bytes, path: url.path, sidecarJSON: (sidecar, sidecarPath))
    }

    /// The model in `bytes` (an `.onnx` file's contents); `path` names it in errors, and its last part without
    /// the extension names the model when neither the metadata nor `sidecar` does. The fields `sidecar` has
    /// replace the metadata's (its `task` or `preprocessing` replaces both of the metadata's).
    public static func modelFile(bytes: Data, path: String, sidecar: ONNXModelInfo? = nil) throws(WeightsFileError) -> ModelFile {
        let encoder = JSONEncoder()
        let json = sidecar.flatMap { try? encoder.encode($0) }
        return try modelFile(bytes: bytes, path: path, sidecarJSON: json.map { ($0, "the sidecar") })
    }

    private static func modelFile(bytes: Data, path: String, sidecarJSON: (data: Data, path: String)?) throws(WeightsFileError) -> ModelFile {
        let file: ModelFile
        do throws(ONNXImportError) {
            let model = try decode(bytes)
            // An image input (4 axes) is most likely a drawing model: the missing-labels error shows a shape sidecar.
            let imageInput = model.graph.input.first.map { $0.type.tensorType.shape.dim.count == 4 } ?? false
            let info = try ONNXModelInfo.merged(
                metadata: model.metadataProps.map { ($0.key, $0.value) }, sidecar: sidecarJSON, modelPath: path,
                exampleTask: imageInput ? "shape" : "motion")
            var converter = try GraphConverter(model: model)
            try converter.run()
            let outputs = converter.outputCount
            guard outputs == info.labels.count else {
                throw ONNXImportError(
                    "the model has \(outputs) outputs, and the labels name \(info.labels.count) (\(info.labels.joined(separator: ", ")))")
            }
            let preprocessing = try info.checkedPreprocessing(for: converter.inputShape)
            let name = info.name ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            file = ModelFile(
                name: name, architecture: converter.layers, labels: info.labels,
                input: InputSpec(shape: converter.inputShape, description: info.description ?? "imported from ONNX"),
                preprocessing: preprocessing, training: info.training, decision: info.decision ?? DecisionRule.default(labels: info.labels),
                activationQuantization: converter.activationQuantization.isEmpty ? nil : converter.activationQuantization,
                tensors: converter.tensors)
        } catch {
            throw WeightsFileError(path: path, problem: .importFailed(format: "ONNX", reason: error.reason))
        }
        // Every check a weights file gets: labels, decision, preprocessing, shapes, values, limits — reported as
        // what the ONNX model cannot be.
        do {
            return try ModelFile(bytes: file.encoded(), path: path)
        } catch {
            throw WeightsFileError(path: path, problem: .importFailed(format: "ONNX", reason: error.problemText))
        }
    }

    /// The bytes of `path` (`what` it is, for errors): a regular file of at most `limit` bytes, checked before it
    /// is read, as weights files are (`ModelFile.openRegularFile`); a symbolic link to nothing is there, but cannot
    /// be opened.
    static func readFile(_ path: String, limit: Int, what: String) throws(WeightsFileError) -> Data {
        let opened: (descriptor: Int32, size: Int)
        do {
            opened = try ModelFile.openRegularFile(path)
        } catch {
            // A folder or FIFO is named for what it is and what was expected there, not as a weights file.
            if case let .notRegularFile(kind) = error.problem {
                throw WeightsFileError(path: path, problem: .cannotOpen("it is \(kind), not \(what) (a regular file)"))
            }
            var link = stat()
            guard error.problem == .fileNotFound, lstat(path, &link) == 0 else { throw error }
            throw WeightsFileError(path: path, problem: .cannotOpen("a symbolic link to nothing"))
        }
        defer { close(opened.descriptor) }
        guard opened.size <= limit else {
            throw WeightsFileError(
                path: path,
                problem: .importFailed(
                    format: "ONNX", reason: "\(opened.size) bytes is larger than \(what) read here can be (at most \(limit) bytes); not read"))
        }
        var bytes = [UInt8](repeating: 0, count: opened.size)
        let count = try ModelFile.readFully(opened.descriptor, into: &bytes, path: path)
        guard count == opened.size else {
            throw WeightsFileError(path: path, problem: .truncated(expectedBytes: opened.size, actualBytes: count))
        }
        return Data(bytes)
    }

    /// The protobuf message, with the nesting bounded; then the counts and opsets checked.
    static func decode(_ bytes: Data) throws(ONNXImportError) -> Onnx_ModelProto {
        guard bytes.count <= ONNXLimits.maximumFileBytes else {
            throw ONNXImportError("\(bytes.count) bytes, more than an ONNX file may be (\(ONNXLimits.maximumFileBytes))")
        }
        // Counted on the wire first: decoding a small file of many empty messages costs far more than its size.
        let counts = ONNXWireScan.counts(bytes, limits: .init(nodes: ONNXLimits.maximumNodes, messages: ONNXLimits.maximumMessages))
        guard counts.nodes <= ONNXLimits.maximumNodes else {
            throw ONNXImportError("more than \(ONNXLimits.maximumNodes) nodes (counted before decoding)")
        }
        guard counts.messages <= ONNXLimits.maximumMessages else {
            throw ONNXImportError(
                "more than \(ONNXLimits.maximumMessages) nodes, attributes, initializers, values and metadata entries (counted before decoding)")
        }
        var options = BinaryDecodingOptions()
        options.messageDepthLimit = ONNXLimits.maximumMessageDepth
        options.discardUnknownFields = true
        let model: Onnx_ModelProto
        do {
            model = try Onnx_ModelProto(serializedBytes: bytes, options: options)
        } catch {
            throw ONNXImportError("not an ONNX model (the protobuf does not decode: \(error))")
        }
        guard model.hasGraph else { throw ONNXImportError("not an ONNX model (it has no graph)") }
        let graph = model.graph
        guard graph.node.count <= ONNXLimits.maximumNodes else {
            throw ONNXImportError("\(graph.node.count) nodes, more than \(ONNXLimits.maximumNodes)")
        }
        guard graph.initializer.count <= ONNXLimits.maximumInitializers else {
            throw ONNXImportError("\(graph.initializer.count) initializers, more than \(ONNXLimits.maximumInitializers)")
        }
        return model
    }
}

/// A constant of the graph: an initializer or what constant nodes computed from them.
struct Constant {
    var shape: [Int]
    /// The values (dequantized, for `quantized`).
    var values: [Float]
    /// `INT8` values with one scale per index of `axis` (all of them when `axis` is nil): what our int8 stores.
    var quantized: (values: [Int8], scales: [Float], axis: Int?)?
    /// Integer values, for shapes and zero points.
    var integers: [Int64]?
    /// The element type.
    var type: Onnx_TensorProto.DataType

    /// The elements of `shape`, when its sizes are not negative and multiply to at most
    /// `ONNXLimits.maximumElements` with each counted as at least 1 — so that no product of its sizes, in any
    /// order, overflows (an empty axis does not make `[0, 2^31, 2^31, 2^31]` small); nil otherwise.
    static func elementCount(_ shape: [Int]) -> Int? {
        shape.count <= ONNXLimits.maximumRank ? checkedElementCount(shape, limit: ONNXLimits.maximumElements) : nil
    }

    /// Bytes each element takes in memory: a float, an integer when there are integers, an int8 when quantized.
    var bytesPerElement: Int { 4 + (integers == nil ? 0 : 8) + (quantized == nil ? 0 : 1) }
}

/// The graph walked as a chain, layer by layer.
struct GraphConverter {
    let model: Onnx_ModelProto
    let opset: Int64
    private(set) var layers: [LayerSpec] = []
    private(set) var tensors: [String: QuantizedTensor] = [:]
    private(set) var activationQuantization: [ActivationQuantization] = []
    private(set) var inputShape: [Int] = []
    /// The outputs of the chain's last value (after `run`).
    var outputCount: Int { shape.dropFirst().reduce(1, *) }

    private var constants: [String: Constant] = [:]
    /// What computing constants has allocated so far, against `ONNXLimits.maximumFoldedElements` and
    /// `maximumFoldedBytes`.
    private var folded = (elements: 0, bytes: 0)
    /// The ONNX shape (batch 1) of every value of the chain so far, for `Shape` nodes.
    private var valueShapes: [String: [Int]] = [:]
    /// The value flowing through the chain now, its ONNX shape (batch 1), and whether its ONNX axes are channel
    /// first (feature maps as ONNX lays them out; ours are channel-last).
    private var current = ""
    private var shape: [Int] = []
    private var channelFirst = false
    /// After a `GlobalAveragePool`: ONNX still has `[N, C, 1, 1]`, ours is already `[N, C]`.
    private var pooledToVector: Bool { pooledChannels != nil }
    /// After a global average pool that kept its axes: the channels (ONNX has them with axes of 1 around).
    private var pooledChannels: Int?
    /// After a `Flatten` of channel-first maps: `(channels, spatial size)`, for the next dense layer's columns.
    private var pendingColumnOrder: (channels: Int, spatial: Int)?
    /// A `QuantizeLinear` on the chain waiting for its `DequantizeLinear`, and the quantization waiting for the
    /// next convolution or dense layer.
    private var quantizedOnChain: (scale: Float, zeroPoint: Int, signed: Bool)?
    private var pendingActivation: (scale: Float, zeroPoint: Int)?

    init(model: Onnx_ModelProto) throws(ONNXImportError) {
        self.model = model
        let defaults = model.opsetImport.filter { $0.domain.isEmpty || $0.domain == "ai.onnx" }
        guard defaults.count <= 1 else {
            throw ONNXImportError(
                "the default ONNX domain is imported \(defaults.count) times (opsets \(defaults.map { String($0.version) }.joined(separator: ", "))); once is read"
            )
        }
        guard let version = defaults.first?.version else { throw ONNXImportError("no opset of the default ONNX domain is imported") }
        guard ONNXLimits.readableOpsets.contains(version) else {
            throw ONNXImportError(
                "opset \(version) is not read here (opsets \(ONNXLimits.readableOpsets.lowerBound)–\(ONNXLimits.readableOpsets.upperBound))")
        }
        opset = version
    }

    mutating func run() throws(ONNXImportError) {
        let graph = model.graph
        for initializer in graph.initializer {
            guard constants[initializer.name] == nil else { throw ONNXImportError("initializer \(initializer.name) appears twice") }
            constants[initializer.name] = try Self.constant(initializer)
        }
        let inputs = graph.input.filter { constants[$0.name] == nil }
        guard inputs.count == 1, let input = inputs.first else {
            throw ONNXImportError("\(inputs.count) graph inputs besides the initializers; one is read (\(inputs.map(\.name)))")
        }
        guard graph.output.count == 1, let output = graph.output.first else {
            throw ONNXImportError("\(graph.output.count) graph outputs; one is read")
        }
        let sources = Set([input.name]).union(constants.keys)
        let order = try topologicalOrder(Self.nodes(graph.node, neededFor: output.name, sources: sources), inputs: sources)
        try start(input, firstUse: order.first { node in node.input.contains(input.name) })
        for node in order { try convert(node) }
        guard current == output.name else {
            throw ONNXImportError("the graph's output \(output.name) is not the end of its chain of layers (\(current))")
        }
        guard pendingColumnOrder == nil else {
            throw ONNXImportError("the graph ends with flattened channel-first feature maps, whose order ours does not keep")
        }
        guard quantizedOnChain == nil else { throw ONNXImportError("the graph ends with a QuantizeLinear") }
        if case .activation(.softmax)? = layers.last {
        } else {
            layers.append(.activation(function: .softmax))
        }
    }

    // MARK: Graph order

    /// The nodes that `output` depends on, in their order in the file: the others are never computed or checked
    /// (as ONNX Runtime prunes them), so unused nodes cost nothing whatever they would compute. A value made
    /// twice is an error wherever it is.
    static func nodes(_ nodes: [Onnx_NodeProto], neededFor output: String, sources: Set<String>) throws(ONNXImportError) -> [Onnx_NodeProto] {
        let producer = try producers(nodes, sources: sources)
        var needed = [Bool](repeating: false, count: nodes.count)
        var waiting = producer[output].map { [$0] } ?? []
        while let index = waiting.popLast() {
            guard !needed[index] else { continue }
            needed[index] = true
            for input in nodes[index].input { if let source = producer[input], !needed[source] { waiting.append(source) } }
        }
        return nodes.indices.filter { needed[$0] }.map { nodes[$0] }
    }

    /// The index of the node that makes each value; a value made twice, or made and also an input or initializer
    /// (`sources`), is an error.
    static func producers(_ nodes: [Onnx_NodeProto], sources: Set<String>) throws(ONNXImportError) -> [String: Int] {
        var producer: [String: Int] = [:]
        for (index, node) in nodes.enumerated() {
            for made in node.output where !made.isEmpty {
                guard producer[made] == nil, !sources.contains(made) else {
                    throw ONNXImportError("value \(made) is made twice (node \(describe(node)))")
                }
                producer[made] = index
            }
        }
        return producer
    }

    /// The nodes in an order where every input comes first; a dangling input, a value made twice or a cycle is an
    /// error.
    private func topologicalOrder(_ nodes: [Onnx_NodeProto], inputs: Set<String>) throws(ONNXImportError) -> [Onnx_NodeProto] {
        let producer = try Self.producers(nodes, sources: inputs)
        var waiting = [Int](repeating: 0, count: nodes.count)
        var consumers: [Int: [Int]] = [:]
        for (index, node) in nodes.enumerated() {
            for input in node.input where !input.isEmpty {
                if let source = producer[input] {
                    waiting[index] += 1
                    consumers[source, default: []].append(index)
                } else if !inputs.contains(input) {
                    throw ONNXImportError("node \(Self.describe(node)) reads \(input), which no node, input or initializer makes")
                }
            }
        }
        var ready = nodes.indices.filter { waiting[$0] == 0 }
        var order: [Onnx_NodeProto] = []
        order.reserveCapacity(nodes.count)
        var next = 0
        while next < ready.count {
            let index = ready[next]
            next += 1
            order.append(nodes[index])
            for consumer in consumers[index] ?? [] {
                waiting[consumer] -= 1
                if waiting[consumer] == 0 { ready.append(consumer) }
            }
        }
        guard order.count == nodes.count else {
            let stuck = nodes.indices.first { waiting[$0] > 0 }.map { Self.describe(nodes[$0]) } ?? "?"
            throw ONNXImportError("the graph has a cycle: \(nodes.count - order.count) nodes wait on one another, node \(stuck) among them")
        }
        return order
    }

    static func describe(_ node: Onnx_NodeProto) -> String {
        "\(node.name.isEmpty ? "(unnamed)" : node.name) (\(node.opType))"
    }

    // MARK: Constants

    /// An initializer's values, its size checked before anything is allocated.
    static func constant(_ tensor: Onnx_TensorProto) throws(ONNXImportError) -> Constant {
        let name = tensor.name
        guard tensor.dataLocation != .external else { throw ONNXImportError("initializer \(name) keeps its data in an external file") }
        guard tensor.dims.count <= ONNXLimits.maximumRank else {
            throw ONNXImportError("initializer \(name) has \(tensor.dims.count) axes, more than \(ONNXLimits.maximumRank)")
        }
        for dimension in tensor.dims where dimension < 0 || dimension > Int64(ONNXLimits.maximumElements) {
            throw ONNXImportError("initializer \(name) has an axis of \(dimension)")
        }
        let shape = tensor.dims.map { Int($0) }
        guard let count = Constant.elementCount(shape) else {
            throw ONNXImportError("initializer \(name) \(shape) has more than \(ONNXLimits.maximumElements) elements")
        }
        guard let type = Onnx_TensorProto.DataType(rawValue: Int(tensor.dataType)) else {
            throw ONNXImportError("initializer \(name) has element type \(tensor.dataType)")
        }
        func raw(_ size: Int) throws(ONNXImportError) -> Data? {
            guard tensor.hasRawData else { return nil }
            guard tensor.rawData.count == size * count else {
                throw ONNXImportError("initializer \(name) \(shape) holds \(tensor.rawData.count) bytes, needs \(size * count)")
            }
            return tensor.rawData
        }
        func checked<T>(_ values: [T]) throws(ONNXImportError) -> [T] {
            guard values.count == count else {
                throw ONNXImportError("initializer \(name) \(shape) holds \(values.count) values, needs \(count)")
            }
            return values
        }
        switch type {
        case .float:
            let values: [Float]
            if let data = try raw(4) {
                values = data.withUnsafeBytes { bytes in
                    (0..<count).map { Float(bitPattern: bytes.loadUnaligned(fromByteOffset: 4 * $0, as: UInt32.self).littleEndian) }
                }
            } else {
                values = try checked(tensor.floatData)
            }
            return Constant(shape: shape, values: values, type: type)
        case .int8, .uint8:
            let integers: [Int64]
            if let data = try raw(1) {
                integers = data.map { type == .int8 ? Int64(Int8(bitPattern: $0)) : Int64($0) }
            } else {
                integers = try checked(tensor.int32Data).map(Int64.init)
                let range: ClosedRange<Int64> = type == .int8 ? -128...127 : 0...255
                guard integers.allSatisfy({ range.contains($0) }) else {
                    throw ONNXImportError("initializer \(name) holds a value outside \(range) for \(type)")
                }
            }
            return Constant(shape: shape, values: integers.map(Float.init), integers: integers, type: type)
        case .int64, .int32:
            let integers: [Int64]
            if let data = try raw(type == .int64 ? 8 : 4) {
                integers = data.withUnsafeBytes { bytes in
                    (0..<count).map { index in
                        type == .int64
                            ? Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 8 * index, as: Int64.self))
                            : Int64(Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: 4 * index, as: Int32.self)))
                    }
                }
            } else {
                integers = try checked(type == .int64 ? tensor.int64Data : tensor.int32Data.map(Int64.init))
            }
            return Constant(shape: shape, values: integers.map(Float.init), integers: integers, type: type)
        default:
            throw ONNXImportError("initializer \(name) has element type \(type), which is not read (FLOAT, INT8, UINT8, INT32, INT64 are)")
        }
    }

    /// A node whose inputs are all constants, computed now.
    private mutating func computeConstant(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        func input(_ index: Int) throws(ONNXImportError) -> Constant {
            guard index < node.input.count, let value = constants[node.input[index]] else {
                throw ONNXImportError("node \(Self.describe(node)) lacks input \(index + 1)")
            }
            return value
        }
        let result: Constant
        switch node.opType {
        case "Constant":
            guard let attribute = node.attribute.first(where: { $0.name == "value" }), attribute.type == .tensor else {
                throw ONNXImportError("node \(Self.describe(node)): only a Constant with a tensor value is read")
            }
            let dims = attribute.t.dims
            if let count = Constant.elementCount(dims.map { Int($0) }) {
                try spend(count, bytesPerElement: 12, node)
            }
            result = try Self.constant(attribute.t)
        case "Identity":
            result = try input(0)
        case "Transpose":
            let value = try input(0)
            let permutation = try ints(node, "perm") ?? Array((0..<value.shape.count).reversed())
            guard permutation.sorted() == Array(value.shape.indices) else {
                throw ONNXImportError("node \(Self.describe(node)): perm \(permutation) for \(value.shape.count) axes")
            }
            try spend(value.values.count, bytesPerElement: value.bytesPerElement, node)
            var moved = Constant(
                shape: permutation.map { value.shape[$0] }, values: permute(value.values, shape: value.shape, permutation),
                integers: value.integers.map { permute($0, shape: value.shape, permutation) }, type: value.type)
            if let quantized = value.quantized {
                moved.quantized = (
                    permute(quantized.values, shape: value.shape, permutation), quantized.scales,
                    quantized.axis.flatMap { axis in permutation.firstIndex(of: axis) }
                )
            }
            result = moved
        case "Cast":
            let value = try input(0)
            guard let to = try int(node, "to"), let type = Onnx_TensorProto.DataType(rawValue: to), [.float, .int32, .int64].contains(type) else {
                throw unsupported(node, "to other than FLOAT, INT32 or INT64")
            }
            guard type == .float || value.values.allSatisfy({ $0.isFinite && abs($0) < 9e18 }) else {
                throw ONNXImportError("node \(Self.describe(node)): casts a value that is not a finite integer to \(type)")
            }
            try spend(value.values.count, bytesPerElement: 12, node)
            let integers = type == .float ? nil : value.values.map { Int64($0.rounded(.towardZero)) }
            result = Constant(shape: value.shape, values: integers.map { $0.map(Float.init) } ?? value.values, integers: integers, type: type)
        case "Gather":
            let data = try input(0), indices = try input(1)
            guard data.shape.count == 1, (try int(node, "axis") ?? 0) == 0, let picks = indices.integers,
                picks.allSatisfy({ $0 >= -Int64(data.values.count) && $0 < Int64(data.values.count) })
            else { throw unsupported(node, "except of a 1-D constant at valid indices") }
            try spend(picks.count, bytesPerElement: data.bytesPerElement, node)
            let positions = picks.map { Int($0 < 0 ? $0 + Int64(data.values.count) : $0) }
            result = Constant(
                shape: indices.shape, values: positions.map { data.values[$0] }, integers: data.integers.map { all in positions.map { all[$0] } },
                type: data.type)
        case "Slice":
            let data = try input(0)
            let axes = node.input.count > 3 ? try input(3).integers : [0]
            let steps = node.input.count > 4 ? try input(4).integers : [1]
            guard data.shape.count == 1, let starts = try input(1).integers?.first, let ends = try input(2).integers?.first, axes == [0], steps == [1]
            else { throw unsupported(node, "except of a 1-D constant with step 1") }
            let count = Int64(data.values.count)
            func clamp(_ bound: Int64) -> Int { Int(min(max(bound < 0 ? bound + count : bound, 0), count)) }
            let range = clamp(starts)..<max(clamp(starts), clamp(ends))
            try spend(range.count, bytesPerElement: data.bytesPerElement, node)
            result = Constant(
                shape: [range.count], values: Array(data.values[range]), integers: data.integers.map { Array($0[range]) }, type: data.type)
        case "Concat":
            let parts = try (0..<node.input.count).map { index throws(ONNXImportError) in try input(index) }
            guard parts.allSatisfy({ $0.shape.count == 1 }), parts.count <= ONNXLimits.maximumRank * 2 else {
                throw unsupported(node, "except of 1-D constants")
            }
            let types = Set(parts.map(\.type))
            guard types.count <= 1 else {
                throw ONNXImportError(
                    "node \(Self.describe(node)): its inputs have different element types (\(parts.map { "\($0.type)" }.joined(separator: ", ")))")
            }
            // At most 16 parts of 2^22 each: the sum cannot overflow.
            let total = parts.reduce(0) { $0 + $1.values.count }
            guard total <= ONNXLimits.maximumElements else {
                throw ONNXImportError("node \(Self.describe(node)): \(total) elements, more than \(ONNXLimits.maximumElements)")
            }
            try spend(total, bytesPerElement: parts.map(\.bytesPerElement).max() ?? 4, node)
            let integers = parts.allSatisfy({ $0.integers != nil }) ? parts.flatMap { $0.integers ?? [] } : nil
            result = Constant(
                shape: [parts.reduce(0) { $0 + $1.values.count }], values: parts.flatMap(\.values), integers: integers,
                type: parts.first?.type ?? .float)
        case "Unsqueeze", "Squeeze",
            "Reshape" where node.input.count <= 2:
            var value = try input(0)
            if node.opType == "Reshape" {
                guard let target = try input(1).integers, target.allSatisfy({ $0 >= -1 }), target.filter({ $0 == -1 }).count <= 1 else {
                    throw unsupported(node, "with a shape that is not constant")
                }
                guard target.count <= ONNXLimits.maximumRank, target.allSatisfy({ $0 <= Int64(ONNXLimits.maximumElements) }),
                    (try int(node, "allowzero") ?? 0) == 0 || !target.contains(0)
                else {
                    throw unsupported(node, "to \(target)")
                }
                let known = target.enumerated().reduce(1) { total, entry in
                    min(
                        ONNXLimits.maximumElements + 1,
                        entry.element > 0
                            ? total * Int(entry.element)
                            : (entry.element == 0 ? total * (entry.offset < value.shape.count ? value.shape[entry.offset] : 1) : total))
                }
                let shape = target.enumerated().map { offset, size in
                    size == -1 ? value.values.count / max(known, 1) : (size == 0 ? (offset < value.shape.count ? value.shape[offset] : 1) : Int(size))
                }
                guard let count = Constant.elementCount(shape) else {
                    throw ONNXImportError(
                        "node \(Self.describe(node)): a reshape to \(shape), more than \(ONNXLimits.maximumElements) elements (its axes counted as at least 1)"
                    )
                }
                guard count == value.values.count else {
                    throw ONNXImportError("node \(Self.describe(node)): reshape of \(value.shape) to \(target)")
                }
                value.shape = shape
            } else {
                // Only the axes of size 1 change: the values stay.
                var axes = try ints(node, "axes") ?? []
                if node.input.count > 1 { axes = try input(1).integers?.map { Int($0) } ?? [] }
                if node.opType == "Squeeze" {
                    let rank = value.shape.count
                    guard axes.allSatisfy({ (-rank..<rank).contains($0) && value.shape[$0 < 0 ? $0 + rank : $0] == 1 }) else {
                        throw unsupported(node, "of axes \(axes) of \(value.shape) (only axes of size 1 can go)")
                    }
                    value.shape = value.shape.enumerated().filter {
                        !(axes.isEmpty ? $0.element == 1 : axes.contains($0.offset) || axes.contains($0.offset - value.shape.count))
                    }.map(\.element)
                } else {
                    guard axes.count <= ONNXLimits.maximumRank else { throw unsupported(node, "with \(axes.count) axes") }
                    var shape = value.shape
                    for axis in axes.sorted() { shape.insert(1, at: min(max(axis < 0 ? axis + shape.count + 1 : axis, 0), shape.count)) }
                    value.shape = shape
                }
            }
            value.quantized = nil
            result = value
        case "DequantizeLinear", "QuantizeLinear":
            try spend(try input(0).values.count, bytesPerElement: 13, node)
            result = try quantization(node, input(0), scale: input(1), zeroPoint: node.input.count > 2 && !node.input[2].isEmpty ? input(2) : nil)
        default:
            throw unsupported(node, "with constant inputs")
        }
        guard Constant.elementCount(result.shape) != nil else {
            throw ONNXImportError(
                "node \(Self.describe(node)) makes a constant of shape \(result.shape): more than \(ONNXLimits.maximumRank) axes or \(ONNXLimits.maximumElements) elements (each axis counted as at least 1)"
            )
        }
        guard let output = node.output.first else { return }
        constants[output] = result
    }

    /// Accounts for a constant of `elements` values of `bytesPerElement` that `node` is about to allocate: an error
    /// naming the node when computing constants would pass `ONNXLimits.maximumFoldedElements` or
    /// `maximumFoldedBytes` in all.
    private mutating func spend(_ elements: Int, bytesPerElement: Int, _ node: Onnx_NodeProto) throws(ONNXImportError) {
        // Each term is at most 2^22 · 13 and the totals stay under the limits: no sum or product can overflow.
        let elementsAfter = folded.elements + elements, bytesAfter = folded.bytes + elements * bytesPerElement
        guard elementsAfter <= ONNXLimits.maximumFoldedElements, bytesAfter <= ONNXLimits.maximumFoldedBytes else {
            throw ONNXImportError(
                "node \(Self.describe(node)) would make \(elements) more elements of constants (\(folded.elements) so far): computing constants may make at most \(ONNXLimits.maximumFoldedElements) elements, \(ONNXLimits.maximumFoldedBytes >> 20) MiB, in all"
            )
        }
        folded = (elementsAfter, bytesAfter)
    }

    /// `QuantizeLinear` or `DequantizeLinear` of constants: `INT8` weights dequantized keep their integers and
    /// scales when our int8 can hold them (zero points 0, one scale per row or one in all).
    private func quantization(_ node: Onnx_NodeProto, _ x: Constant, scale: Constant, zeroPoint: Constant?) throws(ONNXImportError) -> Constant {
        let axisAttribute = try int(node, "axis") ?? 1
        let axis = axisAttribute < 0 ? axisAttribute + x.shape.count : axisAttribute
        guard !scale.values.isEmpty, zeroPoint.map({ !$0.values.isEmpty }) ?? true else {
            throw ONNXImportError("node \(Self.describe(node)): an empty scale or zero point")
        }
        guard x.values.allSatisfy(\.isFinite), zeroPoint?.values.allSatisfy(\.isFinite) ?? true else {
            throw ONNXImportError("node \(Self.describe(node)): a value that is not finite")
        }
        let perAxis = scale.values.count > 1
        guard !perAxis || (axis >= 0 && axis < x.shape.count && scale.values.count == x.shape[axis]) else {
            throw ONNXImportError("node \(Self.describe(node)): \(scale.values.count) scales for axis \(axisAttribute) of \(x.shape)")
        }
        guard scale.values.allSatisfy({ $0.isFinite && $0 > 0 }) else {
            throw ONNXImportError("node \(Self.describe(node)): a scale is not finite and positive")
        }
        let zeros = zeroPoint?.values ?? [0]
        guard zeros.count == 1 || zeros.count == scale.values.count else {
            throw ONNXImportError("node \(Self.describe(node)): \(zeros.count) zero points for \(scale.values.count) scales")
        }
        var strides = 1
        if perAxis { for later in (axis + 1)..<x.shape.count { strides *= x.shape[later] } }
        func channel(_ index: Int) -> Int { perAxis ? (index / strides) % scale.values.count : 0 }
        if node.opType == "QuantizeLinear" {
            let signed = try Self.quantizesToSigned(node, zeroPoint: zeroPoint, int: int)
            let (low, high): (Float, Float) = signed ? (-128, 127) : (0, 255)
            let integers = x.values.indices.map { index -> Int64 in
                let c = channel(index)
                let q = (x.values[index] / scale.values[c]).rounded(.toNearestOrEven) + zeros[zeros.count == 1 ? 0 : c]
                return Int64(min(max(q, low), high))
            }
            return Constant(shape: x.shape, values: integers.map(Float.init), integers: integers, type: signed ? .int8 : .uint8)
        }
        guard let integers = x.integers else { throw ONNXImportError("node \(Self.describe(node)): dequantizes a float tensor") }
        let values = integers.indices.map { index in
            let c = channel(index)
            return (Float(integers[index]) - zeros[zeros.count == 1 ? 0 : c]) * scale.values[c]
        }
        var result = Constant(shape: x.shape, values: values, type: .float)
        if x.type == .int8, zeros.allSatisfy({ $0 == 0 }) {
            let narrow = integers.compactMap { Int8(exactly: $0) }
            guard narrow.count == integers.count else {
                throw ONNXImportError("node \(Self.describe(node)): an INT8 input holds a value outside -128...127")
            }
            result.quantized = (narrow, scale.values, perAxis ? axis : nil)
        }
        return result
    }

    /// Whether a `QuantizeLinear` makes `INT8` (its zero point's type, or without one, `output_dtype`), not `UINT8`.
    static func quantizesToSigned(
        _ node: Onnx_NodeProto, zeroPoint: Constant?, int: (Onnx_NodeProto, String) throws(ONNXImportError) -> Int?
    ) throws(ONNXImportError) -> Bool {
        if let zeroPoint { return zeroPoint.type == .int8 }
        return try int(node, "output_dtype") == Int(Onnx_TensorProto.DataType.int8.rawValue)
    }

    // MARK: Attributes

    private func attribute(_ node: Onnx_NodeProto, _ name: String) -> Onnx_AttributeProto? {
        node.attribute.first { $0.name == name }
    }

    private func int(_ node: Onnx_NodeProto, _ name: String) throws(ONNXImportError) -> Int? {
        guard let value = attribute(node, name) else { return nil }
        guard value.type == .int || value.type == .undefined, (-(Int64(1) << 30)...(Int64(1) << 30)).contains(value.i) else {
            throw ONNXImportError("node \(Self.describe(node)): attribute \(name) is not a small integer")
        }
        return Int(value.i)
    }

    private func ints(_ node: Onnx_NodeProto, _ name: String) throws(ONNXImportError) -> [Int]? {
        guard let value = attribute(node, name) else { return nil }
        guard value.type == .ints || value.type == .undefined, value.ints.count <= ONNXLimits.maximumRank * 2,
            value.ints.allSatisfy({ (-(Int64(1) << 30)...(Int64(1) << 30)).contains($0) })
        else {
            throw ONNXImportError("node \(Self.describe(node)): attribute \(name) is not a short list of small integers")
        }
        return value.ints.map { Int($0) }
    }

    private func float(_ node: Onnx_NodeProto, _ name: String) throws(ONNXImportError) -> Float? {
        guard let value = attribute(node, name) else { return nil }
        guard value.type == .float || value.type == .undefined, value.f.isFinite else {
            throw ONNXImportError("node \(Self.describe(node)): attribute \(name) is not a finite float")
        }
        return value.f
    }

    private func string(_ node: Onnx_NodeProto, _ name: String) -> String? {
        attribute(node, name).map { String(decoding: $0.s, as: UTF8.self) }
    }

    func unsupported(_ node: Onnx_NodeProto, _ detail: String = "") -> ONNXImportError {
        ONNXImportError(
            "operator \(node.domain.isEmpty ? "" : node.domain + ".")\(node.opType) (node \(node.name.isEmpty ? "(unnamed)" : node.name), opset \(opset))"
                + " is not supported\(detail.isEmpty ? "" : " " + detail)")
    }

    // MARK: The chain

    /// The graph's input: its ONNX shape, and ours (channel-last).
    private mutating func start(_ input: Onnx_ValueInfoProto, firstUse: Onnx_NodeProto?) throws(ONNXImportError) {
        guard input.type.tensorType.elemType == Int32(Onnx_TensorProto.DataType.float.rawValue) else {
            throw ONNXImportError("input \(input.name) is not a FLOAT tensor")
        }
        let dimensions = input.type.tensorType.shape.dim
        guard (2...4).contains(dimensions.count) else {
            throw ONNXImportError(
                "input \(input.name) has \(dimensions.count) axes; 2 ([N, F]), 3 ([N, C, L]) or 4 ([N, C, H, W] or [N, H, W, C]) are read")
        }
        var sizes: [Int] = [1]
        for dimension in dimensions.dropFirst() {
            guard case .dimValue(let size)? = dimension.value, size >= 1, size <= 1 << 24 else {
                throw ONNXImportError("input \(input.name) needs a fixed size on every axis but the first")
            }
            sizes.append(Int(size))
        }
        guard sizes.reduce(1, { min($0 * $1, ONNXLimits.maximumElements + 1) }) <= ONNXLimits.maximumElements else {
            throw ONNXImportError("input \(input.name) \(sizes) has more than \(ONNXLimits.maximumElements) values")
        }
        current = input.name
        shape = sizes
        valueShapes[input.name] = sizes
        // A channel-last input (Keras through tf2onnx) is made channel-first by its first node: a Transpose, or a
        // Reshape when it has one channel.
        let toFirst = [0, sizes.count - 1] + Array(1..<max(1, sizes.count - 1))
        var transposedFirst = false
        if let firstUse, sizes.count > 2 {
            // Flattened before any layer that knows channels, the bytes are read in the order ONNX declares them
            // (channel-last here, whatever the axes mean); with one channel first, that is the same order.
            let flattenedFirst = sizes[1] != 1
            switch firstUse.opType {
            case "Transpose":
                transposedFirst = (try? ints(firstUse, "perm")) == toFirst
            case "Reshape":
                if firstUse.input.count > 1, let target = constants[firstUse.input[1]]?.integers, target.count == sizes.count {
                    transposedFirst = sizes.last == 1 && target.dropFirst().map { Int($0) } == toFirst.dropFirst().map { sizes[$0] }
                } else {
                    transposedFirst = flattenedFirst
                }
            case "Flatten", "Gemm", "MatMul":
                transposedFirst = flattenedFirst
            case "ReduceMean":
                // A mean over the middle axes first: they are the spatial ones, the channels last.
                var axes = try? ints(firstUse, "axes")
                if axes == nil, firstUse.input.count > 1 { axes = constants[firstUse.input[1]]?.integers?.map { Int($0) } }
                transposedFirst = axes?.map { $0 < 0 ? $0 + sizes.count : $0 }.sorted() == Array(1..<(sizes.count - 1))
            default:
                break
            }
        }
        switch sizes.count {
        case 2: inputShape = [sizes[1]]
        default:
            channelFirst = !transposedFirst
            inputShape = channelFirst ? Array(sizes.dropFirst(2)) + [sizes[1]] : Array(sizes.dropFirst())
        }
    }

    /// One node: a constant computed, or the chain's next step.
    private mutating func convert(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        guard node.domain.isEmpty || node.domain == "ai.onnx" else { throw unsupported(node) }
        let inputs = node.input.filter { !$0.isEmpty }
        if inputs.allSatisfy({ constants[$0] != nil }) {
            return try computeConstant(node)
        }
        // The shape of a value of the chain is a constant (the batch axis 1): converters compute reshapes from it.
        if node.opType == "Shape", inputs.count == 1, let known = valueShapes[inputs[0]], let output = node.output.first {
            guard attribute(node, "start") == nil && attribute(node, "end") == nil else { throw unsupported(node, "with start or end") }
            constants[output] = Constant(shape: [known.count], values: known.map(Float.init), integers: known.map(Int64.init), type: .int64)
            return
        }
        let data = inputs.filter { constants[$0] == nil }
        guard data.count == 1, data[0] == current, node.input.first == current || node.opType == "Add" || node.opType == "Mul" else {
            throw ONNXImportError(
                "node \(Self.describe(node)) reads \(data.joined(separator: ", ")); only a chain of layers, each reading the one before, is read (the chain is at \(current))"
            )
        }
        guard let output = node.output.first, !output.isEmpty else { throw ONNXImportError("node \(Self.describe(node)) has no output") }
        if node.output.dropFirst().contains(where: { !$0.isEmpty }) && node.opType != "Dropout" {
            throw unsupported(node, "with more than one output")
        }
        if quantizedOnChain != nil && node.opType != "DequantizeLinear" {
            throw unsupported(node, "on a quantized value (QDQ models are read: QuantizeLinear and DequantizeLinear around float operators)")
        }
        if pooledToVector && !["Flatten", "Reshape", "Squeeze", "Identity", "Dropout"].contains(node.opType) {
            throw unsupported(node, "after GlobalAveragePool (a Flatten comes first)")
        }
        func constant(_ index: Int) throws(ONNXImportError) -> Constant? {
            guard index < node.input.count, !node.input[index].isEmpty else { return nil }
            guard let value = constants[node.input[index]] else {
                throw ONNXImportError("node \(Self.describe(node)): input \(index + 1) must be a constant")
            }
            return value
        }
        switch node.opType {
        case "Identity", "Dropout":
            if node.opType == "Dropout", node.input.count > 2, !node.input[2].isEmpty, try constant(2)?.values.first != 0 {
                throw unsupported(node, "in training mode")
            }
        case "Transpose":
            let permutation = try ints(node, "perm") ?? Array((0..<shape.count).reversed())
            let rank = shape.count
            let toFirst = [0, rank - 1] + Array(1..<max(1, rank - 1))
            let toLast = [0] + Array(2..<max(2, rank)) + [1]
            if rank > 2 && channelFirst && permutation == toLast {
                channelFirst = false
                shape = permutation.map { shape[$0] }
            } else if rank > 2 && !channelFirst && permutation == toFirst {
                channelFirst = true
                shape = permutation.map { shape[$0] }
            } else {
                throw unsupported(node, "with perm \(permutation) on a value of shape \(shape) (only channel-first ↔ channel-last is read)")
            }
        case "Conv":
            try convolution(node, weight: constant(1), bias: constant(2))
        case "Gemm":
            try gemm(node, b: constant(1), c: constant(2))
        case "MatMul":
            guard let b = try constant(1), shape.count == 2, b.shape.count == 2, b.shape[0] == shape[1] else {
                throw unsupported(node, "except of [N, K] and a constant [K, M]")
            }
            try dense(weight: b, transposed: false, bias: nil, node: node)
        case "Add", "Mul":
            try foldConstant(node)
        case "Relu": append(.activation(function: .relu))
        case "LeakyRelu": append(.activation(function: .leakyRelu(alpha: try float(node, "alpha") ?? 0.01)))
        case "Sigmoid": append(.activation(function: .sigmoid))
        case "Tanh": append(.activation(function: .tanh))
        case "Softmax", "LogSoftmax":
            let axis = try int(node, "axis") ?? (opset >= 13 ? -1 : 1)
            let resolved = axis < 0 ? axis + shape.count : axis
            guard shape.indices.contains(resolved) else { throw unsupported(node, "over axis \(axis) of \(shape)") }
            if opset < 13, shape.count > 2, shape.dropFirst(resolved + 1).contains(where: { $0 != 1 }) {
                // Before opset 13, a softmax runs over every axis from `axis` on, flattened together.
                throw unsupported(node, "over axes \(resolved)… of \(shape) together (before opset 13 a softmax flattens them)")
            }
            guard shape.count == 2 ? resolved == 1 : (channelFirst && resolved == 1) || (!channelFirst && resolved == shape.count - 1) else {
                throw unsupported(node, "over axis \(axis) of \(shape) (over the channels or the features is read)")
            }
            append(.activation(function: node.opType == "Softmax" ? .softmax : .logSoftmax))
        case "MaxPool", "AveragePool":
            try pool(node)
        case "GlobalAveragePool":
            guard shape.count > 2, channelFirst else { throw unsupported(node, "on \(shape)") }
            append(.globalAveragePool)
            pooledChannels = shape[1]
            shape = [1, shape[1]] + [Int](repeating: 1, count: shape.count - 2)
        case "ReduceMean":
            // A mean over every spatial axis (dynamo's and Keras's global average pooling) is a global average pool.
            var axes = try ints(node, "axes")
            if axes == nil, node.input.count > 1 { axes = try constant(1)?.integers?.map { Int($0) } }
            let rank = shape.count
            let spatial = channelFirst ? Array(2..<max(2, rank)) : Array(1..<max(1, rank - 1))
            guard rank > 2, let axes, axes.map({ $0 < 0 ? $0 + rank : $0 }).sorted() == spatial else {
                throw unsupported(node, "except over every spatial axis of feature maps (a global average pool)")
            }
            let channels = channelFirst ? shape[1] : shape[rank - 1]
            append(.globalAveragePool)
            if (try int(node, "keepdims") ?? 1) != 0 {
                pooledChannels = channels
                shape = shape.enumerated().map { axis, size in axis == 0 || size == channels && !spatial.contains(axis) ? size : 1 }
            } else {
                shape = [1, channels]
                channelFirst = false
            }
        case "Flatten":
            let axis = try int(node, "axis") ?? 1
            guard axis == 1 || (axis == -1 && shape.count == 2) else { throw unsupported(node, "with axis \(axis)") }
            flatten()
        case "Reshape" where try isOneChannelToChannelFirst(constant(1)):
            // One channel: channel-last and channel-first hold the same bytes.
            channelFirst = true
            shape = [shape[0], 1] + shape.dropFirst().dropLast()
        case "Reshape", "Squeeze":
            var target = try constant(1)?.integers
            if target == nil, let axes = try ints(node, "axes") { target = axes.map(Int64.init) }
            let total = shape.dropFirst().reduce(1, *)
            let flat: Bool
            if node.opType == "Reshape", let target {
                flat = target.count == 2 && [0, 1, -1].contains(target[0]) && (target[1] == -1 || target[1] == Int64(total))
            } else {
                flat = pooledToVector && shape.count > 2
            }
            guard flat else { throw unsupported(node, "except to [N, -1] (a flatten)") }
            flatten()
        case "BatchNormalization":
            try batchNorm(node, constants: [constant(1), constant(2), constant(3), constant(4)])
        case "QuantizeLinear":
            guard let scale = try constant(1), scale.values.count == 1 else { throw unsupported(node, "with a scale per channel on the chain") }
            let zero = try constant(2)
            let signed = try Self.quantizesToSigned(node, zeroPoint: zero, int: int)
            let zeroValue = zero?.values.first ?? 0
            guard scale.values[0].isFinite && scale.values[0] > 0, zero?.values.count ?? 1 == 1,
                (signed ? -128...127 : 0...255).contains(zeroValue) && zeroValue == zeroValue.rounded()
            else {
                throw unsupported(
                    node, "with scale \(scale.values[0]) and zero point \(zeroValue) (a positive scale, one zero point in its type's range)")
            }
            pendingActivation = (scale.values[0], Int(zeroValue) + (signed ? 128 : 0))
            quantizedOnChain = (scale.values[0], Int(zeroValue), signed)
        case "DequantizeLinear":
            guard let quantized = quantizedOnChain else { throw unsupported(node, "on a value no QuantizeLinear made") }
            quantizedOnChain = nil
            // It must undo its QuantizeLinear: the same scale and zero point.
            let zero = try constant(2)
            guard let scale = try constant(1), scale.values == [quantized.scale], zero?.values.count ?? 1 == 1,
                (zero?.values.first ?? 0) == Float(quantized.zeroPoint), zero.map({ ($0.type == .int8) == quantized.signed }) ?? true
            else {
                throw unsupported(node, "with another scale or zero point than its QuantizeLinear's")
            }
            // The pair clamps to [(qmin − zero point) · scale, (qmax − zero point) · scale]. A clamp at 0 (a zero
            // point at the bottom of the range) is a ReLU a quantizer folded into it (ONNX Runtime's QDQ
            // quantization does so); a ReLU already there makes it a no-op. The other bounds are the calibrated
            // range, left to the next layer's input quantization.
            if let activation = pendingActivation, activation.zeroPoint == 0, !valueIsNonNegative {
                layers.append(.activation(function: .relu))
                pendingActivation = activation
            }
        default:
            throw unsupported(node)
        }
        current = output
        valueShapes[output] = shape
    }

    /// Whether the chain's value cannot be negative: the last layer that can change a sign is a ReLU, sigmoid or
    /// softmax (pools and flattens keep it), or the clamp of a ReLU is already there.
    private var valueIsNonNegative: Bool {
        for spec in layers.reversed() {
            switch spec {
            case .pool1D, .pool2D, .globalAveragePool, .flatten: continue
            case .activation(.relu), .activation(.sigmoid), .activation(.softmax): return true
            default: return false
            }
        }
        return false
    }

    /// Whether a reshape to `target` makes the channel-last value with one channel channel-first (the same bytes).
    private func isOneChannelToChannelFirst(_ target: Constant?) -> Bool {
        guard shape.count > 2, !channelFirst, shape.last == 1, let sizes = target?.integers else { return false }
        let toFirst = [shape.count - 1] + Array(1..<(shape.count - 1))
        return sizes.dropFirst().map { Int($0) } == toFirst.map { shape[$0] }
    }

    private mutating func append(_ spec: LayerSpec, _ layerTensors: [String: QuantizedTensor] = [:]) {
        let index = layers.count
        // A quantization of the input of a layer with int8 weights is what our integer kernels run; before any
        // other layer it only rounds, and is left out.
        if let activation = pendingActivation, layerTensors["weight"]?.format == .int8 {
            activationQuantization.append(ActivationQuantization(layer: index, scale: activation.scale, zeroPoint: activation.zeroPoint))
        }
        pendingActivation = nil
        layers.append(spec)
        for (role, tensor) in layerTensors { tensors["\(index).\(role)"] = tensor }
    }

    private mutating func flatten() {
        if let channels = pooledChannels {
            pooledChannels = nil
            shape = [1, channels]
            channelFirst = false
            return
        }
        guard shape.count > 2 else { return }
        if channelFirst { pendingColumnOrder = (shape[1], shape.dropFirst(2).reduce(1, *)) }
        append(.flatten)
        shape = [1, shape.dropFirst().reduce(1, *)]
        channelFirst = false
    }

    /// A weight as our layer stores it: `values` laid out in our order, int8 kept when it was, its scales are per
    /// output row (`rowsAxis` of the ONNX tensor) or one for all, and it has `ModelFile.smallTensorLimit` values.
    private func weightTensor(_ weight: Constant, ourShape: [Int], permutation: [Int]?, rowsAxis: Int) -> QuantizedTensor {
        let rows = ourShape[0]
        // int8 as our models keep it: a weight of fewer than `smallTensorLimit` values stays float, as in our own
        // files (the float kernels are faster there), and so runs without the input quantization.
        if let quantized = weight.quantized, quantized.axis == nil || quantized.axis == rowsAxis,
            quantized.values.count >= ModelFile.smallTensorLimit
        {
            let integers = permutation.map { permute(quantized.values, shape: weight.shape, $0) } ?? quantized.values
            let scales = quantized.axis == nil ? [Float](repeating: quantized.scales[0], count: rows) : quantized.scales
            return QuantizedTensor(int8Scales: scales, values: integers, shape: ourShape)
        }
        let values = permutation.map { permute(weight.values, shape: weight.shape, $0) } ?? weight.values
        return QuantizedTensor(quantizing: Tensor(shape: ourShape, scalars: values), as: .f32)
    }

    private mutating func convolution(_ node: Onnx_NodeProto, weight: Constant?, bias: Constant?) throws(ONNXImportError) {
        guard let weight, channelFirst, (3...4).contains(shape.count), weight.shape.count == shape.count else {
            throw unsupported(node, "except on channel-first feature maps with a constant weight")
        }
        guard (try int(node, "group") ?? 1) == 1 else { throw unsupported(node, "with groups") }
        let spatial = shape.count - 2
        guard (try ints(node, "dilations") ?? [Int](repeating: 1, count: spatial)).allSatisfy({ $0 == 1 }) else {
            throw unsupported(node, "with dilation")
        }
        let outChannels = weight.shape[0], inChannels = weight.shape[1]
        guard inChannels == shape[1] else {
            throw ONNXImportError("node \(Self.describe(node)): a weight \(weight.shape) for \(shape[1]) input channels")
        }
        let kernel = Array(weight.shape.dropFirst(2))
        if let declared = try ints(node, "kernel_shape"), declared != kernel {
            throw ONNXImportError("node \(Self.describe(node)): kernel_shape \(declared), weight \(weight.shape)")
        }
        let strides = try ints(node, "strides") ?? [Int](repeating: 1, count: spatial)
        guard strides.count == spatial, strides.allSatisfy({ $0 >= 1 }) else { throw unsupported(node, "with strides \(strides)") }
        let padding = try windowPadding(node, kernel: kernel, strides: strides)
        let biasValues = bias?.values ?? [Float](repeating: 0, count: outChannels)
        guard biasValues.count == outChannels else {
            throw ONNXImportError("node \(Self.describe(node)): \(biasValues.count) biases for \(outChannels) channels")
        }
        let biasTensor = QuantizedTensor(quantizing: Tensor(shape: [outChannels], scalars: biasValues), as: .f32)
        if spatial == 2 {
            let ours = [outChannels, kernel[0], kernel[1], inChannels]
            append(
                .conv2D(
                    inChannels: inChannels, outChannels: outChannels, kernelHeight: kernel[0], kernelWidth: kernel[1],
                    strideHeight: strides[0], strideWidth: strides[1], padding: padding),
                ["weight": weightTensor(weight, ourShape: ours, permutation: [0, 2, 3, 1], rowsAxis: 0), "bias": biasTensor])
        } else {
            let ours = [outChannels, kernel[0], inChannels]
            append(
                .conv1D(inChannels: inChannels, outChannels: outChannels, kernelSize: kernel[0], stride: strides[0], padding: padding),
                ["weight": weightTensor(weight, ourShape: ours, permutation: [0, 2, 1], rowsAxis: 0), "bias": biasTensor])
        }
        let geometry = zip(zip(shape.dropFirst(2), kernel), strides).map {
            WindowGeometry(inputLength: $0.0, window: $0.1, stride: $1, padding: padding)
        }
        shape = [1, outChannels] + geometry.map(\.outputLength)
    }

    /// Our padding for a window's `pads` / `auto_pad` over the current shape: `valid` (no pads) or `same` (the pads
    /// `same` makes, extra after); anything else is an error.
    private func windowPadding(_ node: Onnx_NodeProto, kernel: [Int], strides: [Int]) throws(ONNXImportError) -> Padding {
        let spatial = Array(shape.dropFirst(2))
        guard kernel.allSatisfy({ $0 >= 1 }), spatial.allSatisfy({ $0 >= 1 }) else { throw unsupported(node, "with kernel \(kernel)") }
        func samePads() -> [Int] {
            let geometry = zip(zip(spatial, kernel), strides).map { WindowGeometry(inputLength: $0.0, window: $0.1, stride: $1, padding: .same) }
            let before = geometry.map(\.padBefore)
            let after = geometry.indices.map { axis in
                max((geometry[axis].outputLength - 1) * strides[axis] + kernel[axis] - spatial[axis] - before[axis], 0)
            }
            return before + after
        }
        if (try int(node, "ceil_mode") ?? 0) != 0 { throw unsupported(node, "with ceil_mode") }
        switch string(node, "auto_pad") ?? "NOTSET" {
        case "VALID":
            guard zip(spatial, kernel).allSatisfy({ $0 >= $1 }) else { throw unsupported(node, "with a window larger than its input") }
            return .valid
        case "SAME_UPPER": return .same
        case "SAME_LOWER":
            let pads = samePads()
            guard pads.prefix(spatial.count) == pads.suffix(spatial.count) else {
                throw unsupported(node, "with SAME_LOWER padding that is not symmetric")
            }
            return .same
        case "NOTSET", "":
            let pads = try ints(node, "pads") ?? [Int](repeating: 0, count: 2 * spatial.count)
            if pads.allSatisfy({ $0 == 0 }), zip(spatial, kernel).allSatisfy({ $0 >= $1 }) { return .valid }
            guard pads == samePads() else { throw unsupported(node, "with pads \(pads) (ours are none, or \(samePads()) for this input)") }
            return .same
        case let other:
            throw unsupported(node, "with auto_pad \(other)")
        }
    }

    private mutating func pool(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        guard channelFirst, (3...4).contains(shape.count) else { throw unsupported(node, "except on channel-first feature maps") }
        let spatial = shape.count - 2
        guard let kernel = try ints(node, "kernel_shape"), kernel.count == spatial else { throw unsupported(node, "without kernel_shape") }
        let strides = try ints(node, "strides") ?? [Int](repeating: 1, count: spatial)
        guard strides.count == spatial, strides.allSatisfy({ $0 >= 1 }) else { throw unsupported(node, "with strides \(strides)") }
        guard (try ints(node, "dilations") ?? [Int](repeating: 1, count: spatial)).allSatisfy({ $0 == 1 }) else {
            throw unsupported(node, "with dilation")
        }
        guard (try int(node, "storage_order") ?? 0) == 0 else { throw unsupported(node, "with storage_order") }
        let padding = try windowPadding(node, kernel: kernel, strides: strides)
        let kind: PoolingKind = node.opType == "MaxPool" ? .max : .average
        if kind == .average, (try int(node, "count_include_pad") ?? 0) != 0, padding == .same,
            zip(zip(shape.dropFirst(2), kernel), strides).contains(where: {
                WindowGeometry(inputLength: $0.0, window: $0.1, stride: $1, padding: .same).padBefore > 0
                    || ($0.0 + $1 - 1) / $1 * $1 - $1 + $0.1 > $0.0
            })
        {
            throw unsupported(node, "with count_include_pad (ours leaves the padding out)")
        }
        if spatial == 2 {
            append(.pool2D(kind: kind, height: kernel[0], width: kernel[1], strideHeight: strides[0], strideWidth: strides[1], padding: padding))
        } else {
            append(.pool1D(kind: kind, size: kernel[0], stride: strides[0], padding: padding))
        }
        let geometry = zip(zip(shape.dropFirst(2), kernel), strides).map {
            WindowGeometry(inputLength: $0.0, window: $0.1, stride: $1, padding: padding)
        }
        shape = [shape[0], shape[1]] + geometry.map(\.outputLength)
    }

    private mutating func gemm(_ node: Onnx_NodeProto, b: Constant?, c: Constant?) throws(ONNXImportError) {
        guard let b, b.shape.count == 2, shape.count == 2 else { throw unsupported(node, "except of [N, K] and a constant 2-D B") }
        guard (try int(node, "transA") ?? 0) == 0 else { throw unsupported(node, "with transA") }
        let transposed = (try int(node, "transB") ?? 0) != 0
        let alpha = try float(node, "alpha") ?? 1, beta = try float(node, "beta") ?? 1
        var weight = b
        if alpha != 1 {
            weight = Constant(shape: b.shape, values: b.values.map { $0 * alpha }, type: .float)
        }
        let bias = c.map { Constant(shape: $0.shape, values: $0.values.map { $0 * beta }, type: .float) }
        try dense(weight: weight, transposed: transposed, bias: bias, node: node)
    }

    /// A dense layer from a `[K, M]` weight (`[M, K]` when `transposed`): ours is `[M, K]`, its columns in our order
    /// after a channel-first flatten.
    private mutating func dense(weight: Constant, transposed: Bool, bias: Constant?, node: Onnx_NodeProto) throws(ONNXImportError) {
        let (outputs, inputs) = transposed ? (weight.shape[0], weight.shape[1]) : (weight.shape[1], weight.shape[0])
        guard inputs == shape[1] else {
            throw ONNXImportError("node \(Self.describe(node)): a weight \(weight.shape) for \(shape[1]) features")
        }
        var tensor = weightTensor(weight, ourShape: [outputs, inputs], permutation: transposed ? nil : [1, 0], rowsAxis: transposed ? 0 : 1)
        if let order = pendingColumnOrder {
            // ONNX's feature c·S + s is our s·C + c.
            let columns = (0..<inputs).map { ours in (ours % order.channels) * order.spatial + ours / order.channels }
            tensor = reorderColumns(tensor, columns)
            pendingColumnOrder = nil
        }
        let biasValues =
            bias.map { bias in bias.values.count == 1 ? [Float](repeating: bias.values[0], count: outputs) : bias.values }
            ?? [Float](repeating: 0, count: outputs)
        guard biasValues.count == outputs else {
            throw ONNXImportError("node \(Self.describe(node)): \(biasValues.count) biases for \(outputs) outputs")
        }
        append(
            .dense(inFeatures: inputs, outFeatures: outputs),
            ["weight": tensor, "bias": QuantizedTensor(quantizing: Tensor(shape: [outputs], scalars: biasValues), as: .f32)])
        shape = [1, outputs]
    }

    /// `tensor` (a matrix) with column `j` taken from column `columns[j]`.
    private func reorderColumns(_ tensor: QuantizedTensor, _ columns: [Int]) -> QuantizedTensor {
        let rows = tensor.rows, count = tensor.columns
        if let (scales, values) = tensor.int8Parts {
            let moved = (0..<rows).flatMap { row in columns.map { values[row * count + $0] } }
            return QuantizedTensor(int8Scales: scales, values: moved, shape: tensor.shape)
        }
        let values = tensor.dequantized().scalars
        let moved = (0..<rows).flatMap { row in columns.map { values[row * count + $0] } }
        return QuantizedTensor(quantizing: Tensor(shape: tensor.shape, scalars: moved), as: .f32)
    }

    /// An `Add` or `Mul` of a constant (one value, or one per channel) right after a convolution or dense layer:
    /// folded into its bias, or its weights and bias.
    private mutating func foldConstant(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        let other = node.input.first { $0 != current }.flatMap { constants[$0] }
        let index = layers.count - 1
        guard let other, index >= 0, let channels = biasChannels(layers[index]) else {
            throw unsupported(node, "except of a constant right after a convolution or dense layer")
        }
        let values: [Float]
        let channelAxis = other.shape.count - shape.count + 1
        if other.values.count == 1 {
            values = [Float](repeating: other.values[0], count: channels)
        } else if other.values.count == channels, other.shape.filter({ $0 != 1 }).count == 1,
            other.shape.firstIndex(where: { $0 != 1 }) == (shape.count == 2 || channelFirst ? channelAxis : other.shape.count - 1)
        {
            values = other.values
        } else {
            throw unsupported(node, "of a constant \(other.shape) that is not one value per channel of \(shape)")
        }
        if node.opType == "Add" {
            fold(into: index, factors: [Float](repeating: 1, count: channels), shifts: values)
        } else {
            fold(into: index, factors: values, shifts: [Float](repeating: 0, count: channels))
        }
    }

    /// Layer `index`'s outputs become `output · factor + shift` per channel: its weight rows scaled (an int8
    /// weight keeps its integers when every factor is positive) and its bias scaled and shifted.
    private mutating func fold(into index: Int, factors: [Float], shifts: [Float]) {
        // A quantization waiting for the next int8 layer was made for the value before this change: a product by
        // one positive factor scales it the same way; anything else leaves it out (its clamp with it).
        if let activation = pendingActivation, let factor = factors.first, factor > 0,
            factors.allSatisfy({ $0 == factor }), shifts.allSatisfy({ $0 == 0 })
        {
            pendingActivation = (activation.scale * factor, activation.zeroPoint)
        } else {
            pendingActivation = nil
        }
        guard let weight = tensors["\(index).weight"], let bias = tensors["\(index).bias"] else { return }
        if factors.contains(where: { $0 != 1 }) {
            if let (scales, values) = weight.int8Parts, factors.allSatisfy({ $0 > 0 }) {
                let scaled = zip(scales, factors).map { $0 * $1 }
                tensors["\(index).weight"] = QuantizedTensor(int8Scales: scaled, values: values, shape: weight.shape)
            } else {
                let columns = weight.columns
                var scaled = weight.dequantized().scalars
                for row in 0..<weight.rows { for column in 0..<columns { scaled[row * columns + column] *= factors[row] } }
                tensors["\(index).weight"] = QuantizedTensor(quantizing: Tensor(shape: weight.shape, scalars: scaled), as: .f32)
            }
        }
        let moved = bias.dequantized().scalars.enumerated().map { channel, b in b * factors[channel] + shifts[channel] }
        tensors["\(index).bias"] = QuantizedTensor(quantizing: Tensor(shape: bias.shape, scalars: moved), as: .f32)
    }

    private func biasChannels(_ spec: LayerSpec) -> Int? {
        switch spec {
        case let .dense(_, outputs): outputs
        case let .conv2D(_, outputs, _, _, _, _, _), let .conv1D(_, outputs, _, _, _): outputs
        default: nil
        }
    }

    /// `BatchNormalization`: folded into the convolution or dense layer right before it, else a layer.
    private mutating func batchNorm(_ node: Onnx_NodeProto, constants values: [Constant?]) throws(ONNXImportError) {
        let parts = values.compactMap { $0 }
        guard parts.count == 4 else { throw unsupported(node, "without constant scale, bias, mean and variance") }
        guard (try int(node, "training_mode") ?? 0) == 0, node.output.dropFirst().allSatisfy(\.isEmpty) else {
            throw unsupported(node, "in training mode")
        }
        let epsilon = try float(node, "epsilon") ?? 1e-5
        // ONNX normalizes axis 1: our channels only on a vector or channel-first maps.
        guard shape.count == 2 || channelFirst else { throw unsupported(node, "on channel-last feature maps (its axis 1 is not their channels)") }
        let channels = shape[1]
        guard parts.allSatisfy({ $0.values.count == channels }) else {
            throw ONNXImportError("node \(Self.describe(node)): parameters for other than \(channels) channels")
        }
        var (gamma, beta, mean, variance) = (parts[0].values, parts[1].values, parts[2].values, parts[3].values)
        if let order = pendingColumnOrder {
            // After a flatten of channel-first maps: ONNX's feature c·S + s is our s·C + c.
            let onnxIndex = (0..<channels).map { ours in (ours % order.channels) * order.spatial + ours / order.channels }
            (gamma, beta, mean, variance) = (
                onnxIndex.map { gamma[$0] }, onnxIndex.map { beta[$0] }, onnxIndex.map { mean[$0] }, onnxIndex.map { variance[$0] }
            )
        }
        guard variance.allSatisfy({ $0 >= 0 && $0.isFinite }), epsilon > 0 else {
            throw ONNXImportError("node \(Self.describe(node)): a variance below 0, or epsilon not above 0")
        }
        let index = layers.count - 1
        if index >= 0, biasChannels(layers[index]) == channels {
            let factors = (0..<channels).map { gamma[$0] / (variance[$0] + epsilon).squareRoot() }
            fold(into: index, factors: factors, shifts: (0..<channels).map { beta[$0] - mean[$0] * factors[$0] })
            return
        }
        func stored(_ values: [Float]) -> QuantizedTensor { QuantizedTensor(quantizing: Tensor(shape: [channels], scalars: values), as: .f32) }
        append(
            .batchNorm(channels: channels, epsilon: epsilon),
            ["gamma": stored(gamma), "beta": stored(beta), "mean": stored(mean), "variance": stored(variance)])
    }
}
