#if ONNX
import Foundation
import Models
import SwiftProtobuf
import Tensor
import WeightsFormat

/// ONNX models converted into ours, once, at load: the result is a `ModelFile` like any weights file, checked by
/// the same reader (its encoding is read back with `ModelFile(bytes:path:)`), run by the same compiled plan.
///
/// What is read: a graph that is one chain of layers from one float input to one output, in the default domain at
/// opsets 6–23. `Conv` and `ConvTranspose` (1-D, 2-D and 3-D, grouped, dilated, any pads), `Gemm`, `MatMul` (and an `Add` of a constant
/// after it or after a `Conv`: the bias), arithmetic with a constant (`Add`, `Sub`, `Mul`, `Div`, `PRelu`, `Max`,
/// `Min`, `Sum`, `Neg`, `Clip`), `Relu`, `LeakyRelu`, `Sigmoid`, `Tanh`, `Elu`, `Selu`, `Softplus`, `Softsign`,
/// `Softmax` and `LogSoftmax` over any axis, `MaxPool` and `AveragePool` (1-D to 3-D, any pads, `ceil_mode`),
/// `GlobalAveragePool`, `ReduceMean`, `ReduceSum`, `Pad`, `BatchNormalization` (folded into the convolution or
/// dense layer before it, else a layer of its own), `Flatten`, `Reshape`, `Squeeze`, `Unsqueeze`, `Transpose`,
/// `Identity`, `Dropout` (docs/onnx.md has each operator's limits). Constants may be computed by `Constant`,
/// `Identity`, `Transpose`, `QuantizeLinear` and `DequantizeLinear`: `INT8` weights with one scale per output
/// channel (or one in all) and zero points of 0 stay `int8`; a `QuantizeLinear` / `DequantizeLinear` pair on the
/// way into a convolution or dense layer becomes that layer's input quantization, so our integer kernels run it.
///
/// Feature maps run channel-last here (ONNX's are channel-first): convolution weights are transposed at load, and
/// a dense layer after a channel-first `Flatten` gets its columns reordered, once. A recognizer's graph that does
/// not end in `Softmax` gets one (the recognizers decide on probabilities); a raw model (no labels, no task) keeps
/// its own outputs, and its input and output keep the layout ONNX declares (ONNXImport+Layout.swift). Anything else
/// is an error naming the operator (or the attribute value), the node and the opset.
public enum ONNXImport {
    /// The model in the `.onnx` file at `url`, with the labels and preprocessing from its metadata and from the
    /// sidecar `url.json` beside it, when there is one (`ONNXModelInfo`: its fields replace the metadata's). A
    /// preprocessing is checked against the model's input by its type: a built-in task's, or one of `preprocessings`
    /// (an app's own task's).
    public static func modelFile(contentsOf url: URL, preprocessings: [any ModelPreprocessing.Type] = []) throws(WeightsFileError) -> ModelFile {
        let bytes = try readFile(url.path, limit: ONNXLimits.maximumFileBytes, what: "an ONNX model")
        let sidecarPath = ONNXModelInfo.sidecarPath(ofModel: url.path)
        var entry = stat()
        // A sidecar that is there but cannot be read is an error, never one that is not there.
        guard lstat(sidecarPath, &entry) == 0 else {
            return try modelFile(bytes: bytes, path: url.path, sidecarJSON: nil, preprocessings: preprocessings)
        }
        let sidecar = try readFile(sidecarPath, limit: ONNXLimits.maximumMetadataBytes, what: "a JSON sidecar")
        return try modelFile(bytes: bytes, path: url.path, sidecarJSON: (sidecar, sidecarPath), preprocessings: preprocessings)
    }

    /// The model in `bytes` (an `.onnx` file's contents); `path` names it in errors, and its last part without
    /// the extension names the model when neither the metadata nor `sidecar` does. The fields `sidecar` has
    /// replace the metadata's (its `task` or `preprocessing` replaces both of the metadata's); `preprocessings` as
    /// `modelFile(contentsOf:preprocessings:)`.
    public static func modelFile(
        bytes: Data, path: String, sidecar: ONNXModelInfo? = nil, preprocessings: [any ModelPreprocessing.Type] = []
    ) throws(WeightsFileError) -> ModelFile {
        let encoder = JSONEncoder()
        let json = sidecar.flatMap { try? encoder.encode($0) }
        return try modelFile(bytes: bytes, path: path, sidecarJSON: json.map { ($0, "the sidecar") }, preprocessings: preprocessings)
    }

    private static func modelFile(
        bytes: Data, path: String, sidecarJSON: (data: Data, path: String)?, preprocessings: [any ModelPreprocessing.Type]
    ) throws(WeightsFileError) -> ModelFile {
        let file: ModelFile
        do throws(ONNXImportError) {
            let model = try decode(bytes)
            // An image input (4 axes) is most likely a drawing model: the missing-labels error shows a shape sidecar.
            let imageInput = model.graph.input.first.map { $0.type.tensorType.shape.dim.count == 4 } ?? false
            let info = try ONNXModelInfo.merged(
                metadata: model.metadataProps.map { ($0.key, $0.value) }, sidecar: sidecarJSON, modelPath: path,
                exampleTask: imageInput ? .shape : .motion)
            // A raw model (no labels, no task) keeps no preprocessing and no decision: its outputs are the graph's own.
            let raw = info.labels.isEmpty && info.task == nil && info.preprocessing == nil
            var converter = try GraphConverter(model: model, raw: raw, fileBytes: bytes.count)
            try converter.run()
            let outputs = converter.outputCount
            guard raw || outputs == info.labels.count else {
                throw ONNXImportError(
                    "the model has \(outputs) outputs, and the labels name \(info.labels.count) (\(info.labels.joined(separator: ", ")))")
            }
            let preprocessing = raw ? [:] : try info.checkedPreprocessing(for: converter.inputShape, others: preprocessings)
            let name = info.name ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            file = ModelFile(
                name: name, architecture: converter.layers, labels: info.labels,
                input: InputSpec(shape: converter.inputShape, description: info.description ?? "imported from ONNX"),
                preprocessing: preprocessing, training: info.training,
                decision: raw ? nil : info.decision ?? DecisionRule.default(labels: info.labels),
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

/// Where the walk is on the chain: the value flowing through it now, how ONNX lays that value out against ours,
/// and what one node leaves for a later one (a column order, a quantization). Every step of the walk reads it and
/// moves it on.
struct ChainState {
    /// The value flowing through the chain now.
    var value = ""
    /// Its ONNX shape (batch 1).
    var shape: [Int] = []
    /// Whether its ONNX axes are channel first (feature maps as ONNX lays them out; ours are channel-last).
    var channelFirst = false
    /// After a global average pool that kept its axes: the channels (ONNX has them with axes of 1 around).
    var pooledChannels: Int?
    /// After a `Flatten` of channel-first maps: `(channels, spatial size)`, for the next dense layer's columns.
    var pendingColumnOrder: (channels: Int, spatial: Int)?
    /// A `QuantizeLinear` on the chain waiting for its `DequantizeLinear`.
    var quantizedOnChain: (scale: Float, zeroPoint: Int, signed: Bool)?
    /// The quantization waiting for the next convolution or dense layer.
    var pendingActivation: (scale: Float, zeroPoint: Int)?

    /// After a `GlobalAveragePool`: ONNX still has `[N, C, 1, 1]`, ours is already `[N, C]`.
    var pooledToVector: Bool { pooledChannels != nil }
}

/// The graph walked as a chain, layer by layer. The walk is here; each operator family's conversion is in a file
/// of its own (ONNXImport+Convolution.swift, +ConvTranspose, +Dense, +Activations, +Elementwise, +Normalization, +ScaleAndShift,
/// +Padding, +Reduction, +Shape, +Quantization), as are the layout of the chain's value (+Layout), the constants
/// computed at load (+ComputedConstants), the initializers (+Initializers), the graph's input (+Input), the order of
/// its nodes (+GraphOrder), the nodes' attributes (+Attributes), the layers made (+Layers) and what they may cost
/// (+Budget).
struct GraphConverter {
    let model: Onnx_ModelProto
    let opset: Int64
    /// Whether the model is raw (no labels, no task): its input and output keep the layout and rank ONNX declares,
    /// and no softmax is added.
    let raw: Bool
    /// Our layers so far.
    var layers: [LayerSpec] = []
    /// Their tensors, by `"layer index.role"`.
    var tensors: [String: QuantizedTensor] = [:]
    /// The input quantization of the layers with int8 weights.
    var activationQuantization: [ActivationQuantization] = []
    /// Our input's shape (channel-last, without the batch axis).
    var inputShape: [Int] = []
    /// The outputs of the chain's last value (after `run`).
    var outputCount: Int { chain.shape.dropFirst().reduce(1, *) }

    /// The initializers, and what nodes of constants computed from them.
    var constants: [String: Constant] = [:]
    /// What the import has made so far (computed constants, the layers' values), against its limits.
    var budget: ImportBudget
    /// The ONNX shape (batch 1) of every value of the chain so far, for `Shape` nodes.
    var valueShapes: [String: [Int]] = [:]
    /// The value flowing through the chain now, its layout, and what a node left for a later one.
    var chain = ChainState()
    /// The batch size the graph's input declares, when it declares one: a `Reshape` to it keeps the batch axis.
    var declaredBatch: Int?

    /// A converter for `model`, which imports the default domain once, at an opset read here; `raw` as the property
    /// says; `fileBytes`, the size of the file it was read from, sets how many values its layers may hold.
    init(model: Onnx_ModelProto, raw: Bool = false, fileBytes: Int) throws(ONNXImportError) {
        self.model = model
        self.raw = raw
        budget = ImportBudget(fileBytes: fileBytes)
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

    /// Converts the graph: its initializers read, the nodes its output needs walked in order; then a raw model's
    /// value put back in ONNX's order, or, for a recognizer, a softmax added when it does not end in one.
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
        guard chain.value == output.name else {
            throw ONNXImportError("the graph's output \(output.name) is not the end of its chain of layers (\(chain.value))")
        }
        if raw, let last = order.last { try inONNXOrder(last) }
        guard chain.pendingColumnOrder == nil else {
            throw ONNXImportError("the graph ends with flattened channel-first feature maps, whose order ours does not keep")
        }
        guard chain.quantizedOnChain == nil else { throw ONNXImportError("the graph ends with a QuantizeLinear") }
        if case .activation(.softmax)? = layers.last {
        } else if !raw {
            layers.append(.activation(function: .softmax))
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
        if try shapeOfChainValue(node, inputs: inputs) { return }
        let output = try chainStepOutput(node, inputs: inputs)
        try step(node)
        try checkChainSize(node)
        chain.value = output
        valueShapes[output] = chain.shape
    }

    /// The output of `node` as the chain's next step, after the checks every step gets: it reads the chain's value
    /// (its other inputs are constants), makes one value, and can follow what the steps before it left.
    private func chainStepOutput(_ node: Onnx_NodeProto, inputs: [String]) throws(ONNXImportError) -> String {
        let data = inputs.filter { constants[$0] == nil }
        guard data.count == 1, data[0] == chain.value,
            node.input.first == chain.value || ["Add", "Mul", "Sub", "Div", "Max", "Min", "Sum"].contains(node.opType)
        else {
            throw ONNXImportError(
                "node \(Self.describe(node)) reads \(data.joined(separator: ", ")); only a chain of layers, each reading the one before, is read (the chain is at \(chain.value))"
            )
        }
        guard let output = node.output.first, !output.isEmpty else { throw ONNXImportError("node \(Self.describe(node)) has no output") }
        if node.output.dropFirst().contains(where: { !$0.isEmpty }) && node.opType != "Dropout" {
            throw unsupported(node, "with more than one output")
        }
        if chain.quantizedOnChain != nil && node.opType != "DequantizeLinear" {
            throw unsupported(node, "on a quantized value (QDQ models are read: QuantizeLinear and DequantizeLinear around float operators)")
        }
        return output
    }

    /// The chain's next step: `node` converted by its operator's family.
    private mutating func step(_ node: Onnx_NodeProto) throws(ONNXImportError) {
        switch node.opType {
        case "Identity", "Dropout": try passThrough(node)
        case "Transpose": try transpose(node)
        case "Conv": try convolution(node, weight: constantInput(1, of: node), bias: constantInput(2, of: node))
        case "ConvTranspose": try convTranspose(node, weight: constantInput(1, of: node), bias: constantInput(2, of: node))
        case "Gemm": try gemm(node, b: constantInput(1, of: node), c: constantInput(2, of: node))
        case "MatMul": try matMul(node)
        case "Add", "Mul", "Sub", "Div", "PRelu", "Max", "Min", "Sum": try elementwise(node)
        case "Neg": try negate(node)
        case "Clip": try clip(node)
        case "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Elu", "Selu", "Softplus", "Softsign": try activation(node)
        case "Softmax", "LogSoftmax": try softmax(node)
        case "MaxPool", "AveragePool": try pool(node)
        case "GlobalAveragePool": try globalAveragePool(node)
        case "ReduceMean", "ReduceSum": try reduce(node)
        case "Pad": try pad(node)
        case "Flatten": try flatten(node)
        case "Reshape", "Squeeze": try reshape(node)
        case "Unsqueeze": try reshapeLayer(node)
        case "BatchNormalization": try batchNorm(node)
        case "QuantizeLinear": try quantizeOnChain(node)
        case "DequantizeLinear": try dequantizeOnChain(node)
        default: throw unsupported(node)
        }
    }
}
#endif
