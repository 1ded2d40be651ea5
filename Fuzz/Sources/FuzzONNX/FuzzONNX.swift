import Foundation
import FuzzSupport
import WeightsFormat

@testable import Models
@testable import ONNX

// One `.onnx` file through everything `--weights model.onnx` does: `ONNXImport.modelFile(bytes:path:)` (the
// protobuf decoded with its nesting bounded, counts and sizes checked before allocation, the graph ordered and
// walked as a chain, constants computed, the result read back by `ModelFile(bytes:path:)`), then the model used as
// the CLI would (`exercise`). Each input is tried with its own metadata and with a sidecar naming five shape labels,
// so that mutated graphs without labels still reach the converter. An error must name the file, and never be one a
// retry could change.

@main
enum FuzzONNX {
    static func main() { exit(runFuzzer(fuzzONNX)) }
}

private let sidecar = ONNXModelInfo(labels: ["circle", "triangle", "square", "star", "other"], task: .shape)

/// libFuzzer's test function: one input, any bytes.
func fuzzONNX(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Data(UnsafeBufferPointer(start: $0, count: size)) } ?? Data()
    for info in [nil, sidecar] {
        let path = "fuzz.onnx"
        do {
            let file = try ONNXImport.modelFile(bytes: bytes, path: path, sidecar: info)
            exercise(file, path: path)
        } catch {
            require(error.path == path && !error.description.isEmpty, "an import error without the file or a message: \(error)")
            require(!error.isTransient, "an import error that would be retried: \(error)")
        }
    }
    return 0
}
