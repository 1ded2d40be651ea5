import Foundation
import Synchronization

/// Readers of model files in formats other than ours, by file extension (`onnx`), so that every path that loads a
/// weights file — `ShapeRecognizer(contentsOf:)`, `--weights`, `$CLASSIFY_WEIGHTS`, `evaluate` — takes them through
/// `ModelFile(contentsOf:)`. The ONNX library registers its reader (`ONNXFormat.register()`); Models itself links no
/// protobuf code.
public enum ForeignModelReaders {
    /// A reader: the file at a URL, converted into our model, or why it cannot be.
    public typealias Reader = @Sendable (URL) throws(WeightsFileError) -> ModelFile

    private static let readers = Mutex<[String: Reader]>([:])

    /// Makes `ModelFile(contentsOf:)` read files whose extension is `fileExtension` (any case) with `reader`.
    public static func register(fileExtension: String, _ reader: @escaping Reader) {
        readers.withLock { $0[fileExtension.lowercased()] = reader }
    }

    /// The reader of `url`'s extension, if one is registered; a file named `.onnx` with none registered is an
    /// error that says what to link.
    static func reader(for url: URL) throws(WeightsFileError) -> Reader? {
        let suffix = url.pathExtension.lowercased()
        if let reader = readers.withLock({ $0[suffix] }) { return reader }
        guard suffix == "onnx" else { return nil }
        throw WeightsFileError(
            path: url.path,
            problem: .importFailed(
                format: "ONNX", reason: "this program reads ONNX files only with the ONNX library linked and ONNXFormat.register() called"))
    }
}
