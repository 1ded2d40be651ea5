import DataFiles
import Foundation
import Models

#if ONNX
import ONNX
#endif

/// Refuses, before anything is read, an output that is one of the command's inputs by any name (the same path, a
/// symbolic or hard link: `AtomicFile.checkNotAnyOf`): one `error:` line naming both, and exit 64 (usage: the
/// command line names one file for both; nothing is wrong with the data or the disk). `nil` outputs are options
/// not given.
func refuseOutputs(_ outputs: [String?], thatAreAnyOf inputs: [String]) throws {
    do {
        for output in outputs.compactMap({ $0 }) { try AtomicFile.checkNotAnyOf(inputs, output: URL(fileURLWithPath: output)) }
    } catch {
        throw failure(error)
    }
}

/// The files loading the model at `path` reads: the file, and for an `.onnx` file its sidecar (`MODEL.onnx.json`).
func filesRead(byModel path: String) -> [String] {
    #if ONNX
    URL(fileURLWithPath: path).pathExtension.lowercased() == "onnx" ? [path, ONNXModelInfo.sidecarPath(ofModel: path)] : [path]
    #else
    [path]
    #endif
}
