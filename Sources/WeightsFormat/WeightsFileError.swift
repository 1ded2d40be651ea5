import DataFiles
import Tensor

/// Why a weights file could not be read or written: the path and the problem, precise enough to act on.
public struct WeightsFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file.
    public let path: String
    /// What is wrong with it.
    public let problem: Problem

    /// Creates the error.
    package init(path: String, problem: Problem) {
        self.path = path
        self.problem = problem
    }

    /// What is wrong with a weights file. Each kind of corruption has its own case.
    public enum Problem: Equatable, Sendable {
        /// No file at the path.
        case fileNotFound
        /// The operating system failed to read it (an I/O error such as EIO: may succeed on a retry).
        case unreadable(String)
        /// The path names something that is not a regular file (a directory, FIFO, device or socket): `kind` says
        /// which. Permanent: reading it again gives the same answer, and a FIFO or device may never end.
        case notRegularFile(kind: String)
        /// The path cannot be opened for a reason a retry does not change (permission denied, a symbolic-link loop,
        /// a name too long, a path component that is not a folder).
        case cannotOpen(String)
        /// The file is larger than any weights file this build loads (`WeightsLimits.maximumFileBytes`); refused
        /// before it is read.
        case fileTooLarge(bytes: Int, limit: Int)
        /// Running the model would cost more than `WeightsLimits` allows for one input: `quantity` names what
        /// (e.g. "multiply-adds per input", "motion hop"), with its value and the limit.
        case overLimit(quantity: String, value: Double, limit: Double)
        /// The weights' magnitudes let layer `layer`'s outputs exceed `WeightsLimits.largestSafeMagnitude` (a quarter of
        /// the float range) for some input the preprocessing can produce (`bound` is the proven bound on their
        /// magnitude): the scores could be infinite or NaN.
        case mayOverflow(layer: Int, summary: String, bound: Double)
        /// The file could not be written (the previous file, if any, is untouched).
        case unwritable(String)
        /// The first 8 bytes are not the weights-file magic.
        case wrongMagic(found: [UInt8])
        /// A format version this build cannot read.
        case unsupportedVersion(found: UInt32, supported: UInt32)
        /// Shorter than its preamble says (or than a preamble).
        case truncated(expectedBytes: Int, actualBytes: Int)
        /// Longer than its preamble says.
        case trailingBytes(expectedBytes: Int, actualBytes: Int)
        /// The CRC-32 stored at the end does not match the bytes.
        case checksumMismatch(stored: UInt32, computed: UInt32)
        /// The header is not the JSON this version defines, or its lengths do not fit the file.
        case corruptHeader(String)
        /// A tensor's stored byte count contradicts its shape and format.
        case tensorSizeMismatch(tensor: String, shape: [Int], format: StorageFormat, expectedBytes: Int, actualBytes: Int)
        /// A tensor's bytes lie outside the data section, overlap another's, or are misaligned.
        case tensorOutOfBounds(tensor: String, offset: Int, length: Int, dataBytes: Int)
        /// A tensor holds NaN or an infinity (a variance, a negative value where none may be).
        case invalidValue(tensor: String, element: Int, reason: String)
        /// The architecture needs a tensor the file lacks.
        case missingTensor(String)
        /// The file has a tensor the architecture does not use.
        case unexpectedTensor(String)
        /// Two tensors share a name.
        case duplicateTensor(String)
        /// Bytes outside every tensor that are not zero padding.
        case strayBytes(offset: Int)
        /// A tensor's shape is not the one its layer needs.
        case tensorShapeMismatch(tensor: String, expected: [Int], actual: [Int])
        /// The layers cannot be chained from the input shape, or a layer's hyperparameters are invalid.
        case invalidArchitecture(String)
        /// A layer type the file format cannot record.
        case unsupportedLayer(String)
        /// A model in another format (`format`, e.g. ONNX) that cannot be converted into ours: `reason` names the
        /// operator, node and opset, the limit, or the information that is missing.
        case importFailed(format: String, reason: String)
    }

    /// Whether trying again may succeed (an I/O error while reading), as opposed to a file that is wrong.
    public var isTransient: Bool {
        if case .unreadable = problem { return true }
        return false
    }

    /// What `description` says after the path, without the advice to retrain: for a converter (the ONNX import)
    /// whose model our reader refused, where retraining is not the remedy. Safe to print on a terminal, as
    /// `description`.
    package var problemText: String { DataError.terminalSafe(problemText(retrain: "")) }

    /// One line: the path, the problem, and what to do about it. Safe to print on a terminal: a control character
    /// from the file (an escape sequence or a line break in an operator, node, tensor or label name, in a sidecar's
    /// field, in the path) is shown as `?` (`DataError.terminalSafe`), so an error never drives the terminal or
    /// forges a line.
    public var description: String {
        DataError.terminalSafe("\(path): " + problemText(retrain: "; re-run `classify train` to write it again"))
    }

    /// The problem alone, without the path or a remedy, safe to print.
    package var problemSentence: String { DataError.terminalSafe(problemText(retrain: "")) }

    /// The problem and, where a new file is the remedy, `retrain`.
    private func problemText(retrain: String) -> String {
        let shape = { (s: [Int]) in "[" + s.map(String.init).joined(separator: ", ") + "]" }
        switch problem {
        case .fileNotFound:
            return "no such weights file"
        case let .unreadable(reason):
            return "could not be read: \(reason)"
        case let .notRegularFile(kind):
            return "is \(kind), not a weights file (a regular file)"
        case let .cannotOpen(reason):
            return "cannot be opened: \(reason)"
        case let .fileTooLarge(bytes, limit):
            return "\(bytes) bytes is larger than a weights file can be (at most \(limit) bytes); not read"
        case let .overLimit(quantity, value, limit):
            return "\(quantity) is \(limitText(value)), over the limit of \(limitText(limit)) (see Weights/FORMAT.md, Limits)\(retrain)"
        case let .mayOverflow(layer, summary, bound):
            return
                "layer \(layer) (\(summary)) can give values up to \(String(format: "%.3g", bound)), over \(String(format: "%.3g", WeightsLimits.largestSafeMagnitude)), "
                + "the most any layer may reach (a quarter of the float range ±3.4e38, kept for rounding and softmax): "
                + "its weights or parameters are too large for its scores to be sure to stay finite\(retrain)"
        case let .unwritable(reason):
            return "could not be written: \(reason) (any previous file there is unchanged)"
        case let .wrongMagic(found):
            let hex = found.map { String($0, radix: 16, uppercase: true) }.joined(separator: " ")
            return "not a weights file (first bytes \(hex), expected 89 4F 44 4D 4C 0D 0A 1A)"
        case let .unsupportedVersion(found, supported):
            return "weights format version \(found) is not supported (this build reads versions 1 to \(supported))"
        case let .truncated(expected, actual):
            return "truncated: \(actual) bytes, expected \(expected)\(retrain)"
        case let .trailingBytes(expected, actual):
            return "\(actual) bytes, but its preamble says \(expected)\(retrain)"
        case let .checksumMismatch(stored, computed):
            return "checksum mismatch (stored CRC-32 \(hex32(stored)), computed \(hex32(computed))): "
                + "the file is corrupt\(retrain)"
        case let .corruptHeader(reason):
            return "corrupt header: \(reason)\(retrain)"
        case let .tensorSizeMismatch(tensor, s, format, expected, actual):
            return "tensor \(tensor) \(shape(s)) in \(format) needs \(expected) bytes, the table says \(actual)\(retrain)"
        case let .tensorOutOfBounds(tensor, offset, length, dataBytes):
            return "tensor \(tensor) at offset \(offset), \(length) bytes, does not fit the \(dataBytes)-byte "
                + "data section without overlap at 32-byte alignment\(retrain)"
        case let .invalidValue(tensor, element, reason):
            return "tensor \(tensor) element \(element) is \(reason)\(retrain)"
        case let .missingTensor(name):
            return "the architecture needs tensor \(name), which the file lacks\(retrain)"
        case let .unexpectedTensor(name):
            return "tensor \(name) is not used by the architecture\(retrain)"
        case let .duplicateTensor(name):
            return "tensor \(name) appears twice\(retrain)"
        case let .strayBytes(offset):
            return "byte \(offset) belongs to no tensor and is not zero padding\(retrain)"
        case let .tensorShapeMismatch(tensor, expected, actual):
            return "tensor \(tensor) has shape \(shape(actual)), its layer needs \(shape(expected))\(retrain)"
        case let .invalidArchitecture(reason):
            return "invalid architecture: \(reason)"
        case let .unsupportedLayer(name):
            return "layer type \(name) cannot be saved in a weights file"
        case let .importFailed(format, reason):
            return "cannot be read as an \(format) model: \(reason)"
        }
    }
}

/// A limit's number for people: whole numbers without a fraction, others to 4 significant digits.
func limitText(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(format: "%.4g", value)
}

func hex32(_ value: UInt32) -> String {
    let digits = String(value, radix: 16, uppercase: false)
    return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
}
