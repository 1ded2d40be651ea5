#if ONNX
import Foundation
import Models
import WeightsFormat

/// ONNX files as a weights source: after `register()`, `ModelFile(contentsOf:)` — and so
/// `ShapeRecognizer(contentsOf:)`, `MotionRecognizer(contentsOf:)`, `classify … --weights model.onnx` — reads a
/// `.onnx` file by converting it (`ONNXImport`).
public enum ONNXFormat {
    /// Makes `ModelFile(contentsOf:)` read `.onnx` files. Calling it again changes nothing.
    public static func register() {
        ForeignModelReaders.register(fileExtension: "onnx") { url throws(WeightsFileError) in
            try ONNXImport.modelFile(contentsOf: url)
        }
    }
}

/// The limits of the ONNX import, checked before anything they bound is allocated: a file under 1 MB costs at
/// most a few times its size in memory, whatever it declares.
enum ONNXLimits {
    /// The largest `.onnx` file read (8 MiB: the largest model our weights files hold, 2^20 parameters, as float).
    static let maximumFileBytes = 8 << 20
    /// Nodes in the graph.
    static let maximumNodes = 10_000
    /// Initializers in the graph.
    static let maximumInitializers = 10_000
    /// Axes of a tensor.
    static let maximumRank = 8
    /// Elements of one tensor (2^22); a shape's axes, each counted as at least 1, multiply to at most this, so no
    /// product of a shape's sizes can overflow.
    static let maximumElements = 1 << 22
    /// Elements that computing constants may allocate in all (2^22: four times the largest model's parameters),
    /// checked before each allocation.
    static let maximumFoldedElements = 1 << 22
    /// Bytes that computing constants may allocate in all (a value takes 4 bytes as a float, 8 more as an integer,
    /// 1 more as int8), checked before each allocation.
    static let maximumFoldedBytes = 48 << 20
    /// Values the layers of a file of `fileBytes` bytes may hold in all (weights, biases, batch-norm statistics,
    /// constant operands), counted from each layer's shapes before its tensors are made: 16 per byte of the file,
    /// at least `minimumLayerValues`, at most `WeightsLimits.maximumParameters` (which the weights reader checks
    /// anyway). Without it each `Neg` of a 1 KB chain was a layer holding the chain's size: 2 GB for 60 of them.
    static func maximumLayerValues(fileBytes: Int) -> Int {
        min(max(layerValuesPerFileByte * max(fileBytes, 0), minimumLayerValues), WeightsLimits.maximumParameters)
    }
    /// Values that folding scales and shifts into the layer before (`Mul`, `Add`, `BatchNormalization` after a
    /// convolution or dense layer) may rewrite in all (2^22: four rewrites of the most parameters a model may have);
    /// without it 5,000 `Mul`s of one scalar after a 1 MB dense layer took 13 s.
    static let maximumFoldedLayerValues = 1 << 22
    /// Layer values per byte of the file: room for what the import makes of one weight (a grouped, dilated or 3-D
    /// convolution's expanded weight; a constant operation's operand broadcast to the chain's size).
    static let layerValuesPerFileByte = 16
    /// Layer values any file may make, however small (2^18, 1 MiB as float): a scalar `Neg`, `Clip` or `Max` is a
    /// layer holding the chain's whole size.
    static let minimumLayerValues = 1 << 18
    /// Messages of the file's repeated fields (nodes, attributes, initializers, value infos, metadata, ...),
    /// counted on the wire before the file is decoded.
    static let maximumMessages = 200_000
    /// Bytes of one metadata value or sidecar.
    static let maximumMetadataBytes = 1 << 16
    /// Nesting of protobuf messages (graphs in attributes).
    static let maximumMessageDepth = 32
    /// The default-domain opsets read.
    static let readableOpsets: ClosedRange<Int64> = 6...23
    /// The opset the export writes.
    static let exportOpset: Int64 = 13
}

/// Why an ONNX model cannot be imported: the operator, node and opset, the limit, or what is missing.
struct ONNXImportError: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
#endif
