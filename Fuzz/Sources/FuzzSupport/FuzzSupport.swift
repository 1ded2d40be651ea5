import CFuzzerDriver
import DataFiles
import Foundation
import Tensor
import WeightsFormat

@testable import Models

/// Runs libFuzzer with this process's arguments (`-help=1` lists them), calling `test` with each input; returns
/// libFuzzer's exit status. A SwiftPM executable has its own `main`, so libFuzzer's is never linked in: the harness's
/// `main` calls this instead.
public func runFuzzer(_ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32 {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    return LLVMFuzzerRunDriver(&argc, &argv, test)
}

/// The fuzzer's input as a file: the readers take paths (as the CLI gives them), so each input is written to one
/// file per process, truncated and rewritten in place for every run. The file is unlinked as soon as it is
/// opened and named by its descriptor (`/proc/self/fd/N`), so a crashed or killed run leaves nothing behind.
public final class InputFile: @unchecked Sendable {
    /// The file's path.
    public let path: String
    private let descriptor: Int32

    /// A fresh, already unlinked file (in /dev/shm when there is one).
    public init(_ name: String) {
        let folder = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        let created = "\(folder)/fuzz-\(name)-\(getpid())"
        descriptor = open(created, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { fatalError("cannot create the fuzz input file \(created): errno \(errno)") }
        unlink(created)
        path = "/proc/self/fd/\(descriptor)"
    }

    /// Makes the file hold exactly `count` bytes from `data`; returns its path.
    public func write(_ data: UnsafePointer<UInt8>?, _ count: Int) -> String {
        guard ftruncate(descriptor, 0) == 0 else { fatalError("ftruncate \(path): errno \(errno)") }
        var written = 0
        while written < count, let data {
            let result = pwrite(descriptor, data + written, count - written, off_t(written))
            guard result > 0 else { fatalError("pwrite \(path): errno \(errno)") }
            written += result
        }
        return path
    }
}

/// The repository's `Weights/` folder: `FUZZ_WEIGHTS` when set, else found from this file's place in the tree.
public let weightsFolder: URL = {
    if let folder = ProcessInfo.processInfo.environment["FUZZ_WEIGHTS"] { return URL(fileURLWithPath: folder) }
    return URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Weights")
}()

/// A shipped weights file (`shape-classifier.int8`, …), loaded once; a harness cannot run without it.
public func shippedModel(_ variant: String) -> ModelFile {
    let url = weightsFolder.appendingPathComponent("\(variant).weights")
    do {
        return try ModelFile(contentsOf: url)
    } catch {
        fatalError("cannot load \(url.path) (set FUZZ_WEIGHTS to the Weights folder): \(error)")
    }
}

/// Stops the run (libFuzzer records the input as a crash) when `condition` is false: an oracle beyond "no trap".
public func require(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
    if !condition { fatalError("fuzz oracle failed: \(message())", file: file, line: line) }
}

/// A data error about the input file must name it and say something: exit 65 (`.invalid`) for a file that exists
/// and can be read.
public func requireInputError(_ error: DataError, path: String) {
    require(error.file == path, "the error names \(error.file), not the input \(path): \(error)")
    require(!error.message.isEmpty, "an empty error message: \(error)")
    require(error.kind == .invalid, "a readable input file gave a \(error.kind) error: \(error)")
}

/// A probability or confidence: finite and within 0…1 (a little slack for float rounding).
public func requireProbability(_ value: Double, _ what: @autoclosure () -> String) {
    require(value.isFinite && value >= -1e-6 && value <= 1 + 1e-6, "\(what()) is \(value), not a probability")
}

/// Checks one shape answer: a known label, a probability as confidence, probabilities over the model's labels.
public func requireSane(_ answer: ShapeAnswer, from recognizer: ShapeRecognizer) {
    require(recognizer.answerLabels.contains(answer.label), "label \(answer.label) is not one of \(recognizer.answerLabels)")
    requireProbability(answer.confidence, "\(recognizer.model): confidence of \(answer.label)")
    for (label, probability) in answer.probabilities { requireProbability(probability, "\(recognizer.model): p(\(label))") }
    if answer.uncertain || answer.label == "unknown" {
        require(answer.reason.map { !$0.isEmpty } ?? false, "\(recognizer.model): an uncertain answer without a reason")
    }
}

/// Checks one motion timeline: known labels, probabilities, windows in time order.
public func requireSane(_ timeline: MotionAnswer, labels: [String], model: String) {
    let allowed = labels + [DecisionRule.unknownLabel]
    require(allowed.contains(timeline.label), "\(model): label \(timeline.label) is not one of \(allowed)")
    requireProbability(timeline.confidence, "\(model): the recording's confidence")
    var previousStart = -Double.infinity
    for window in timeline.windows {
        require(allowed.contains(window.label), "\(model): window label \(window.label) is not one of \(allowed)")
        requireProbability(window.confidence, "\(model): confidence of a \(window.label) window at \(window.start) s")
        require(
            window.start.isFinite && window.end.isFinite && window.start < window.end && window.start >= previousStart,
            "\(model): window \(window.start)…\(window.end) s after one at \(previousStart) s")
        previousStart = window.start
    }
}

/// One fixed drawing (a circle of 32 points): what a weights file that loads as a shape classifier must answer.
public let fixedDrawing = Drawing(strokes: [
    (0...32).map { i in
        let angle = Double(i) / 32 * 2 * Double.pi
        return DrawingPoint(x: 100 + 50 * cos(angle), y: 100 + 50 * sin(angle), t: Double(i) * 16)
    }
])

/// A fixed walking-like recording of one window and one hop at the windowing's rate, read through the CSV reader
/// (a `MotionRecording` is only made by reading): what a weights file that loads as a motion classifier must label.
public func fixedRecording(_ windowing: MotionWindowing) throws(DataError) -> MotionRecording {
    let count = windowing.window + windowing.hop
    var text = "timestamp," + coreMotionColumns.joined(separator: ",") + "\n"
    for i in 0..<count {
        let t = Double(i) / windowing.rate, step = sin(2 * Double.pi * 1.8 * t)
        let row = [t, 0, 0, 0, 0, -1, 0, 0.2 * step, 0.1 * step, 0, 0.05 * step, 0.3 * step, 0.02]
        text += row.map { "\($0)" }.joined(separator: ",") + "\n"
    }
    let bytes = Array(text.utf8)
    let path = recordingFile.write(bytes, bytes.count)
    return try MotionRecordingReader.read(path, assumedRate: windowing.rate, rate: windowing.rate, window: windowing.window)
}

private let recordingFile = InputFile("fixed-recording")

/// A model that loaded, used as the CLI would: a `ShapeClassifier` classifies the fixed circle, a
/// `MotionClassifier` the fixed walking recording, any other model runs compiled on a fixed input. (FuzzWeights and
/// FuzzONNX: a file of either format that loads must answer.)
public func exercise(_ file: ModelFile, path: String) {
    if let classifier = try? ShapeClassifier(file: file) {
        let recognizer = ShapeRecognizer(engine: .model(classifier), model: "fuzzed shape classifier")
        do {
            requireSane(try recognizer.recognize(fixedDrawing), from: recognizer)
        } catch {
            require(false, "a loaded shape classifier refused the fixed drawing: \(error)")
        }
    } else if let classifier = try? MotionClassifier(file: file) {
        let recognizer = MotionRecognizer(engine: .model(classifier), model: "fuzzed motion classifier")
        do {
            var recording = try fixedRecording(classifier.windowing)
            recording.source = path
            requireSane(try recognizer.recognize(recording), labels: recognizer.answerLabels, model: recognizer.model)
        } catch {
            // A windowing whose rate the reader refuses, or a window the recording cannot fill, is a data error.
            require(!error.message.isEmpty, "an empty error message: \(error)")
        }
    } else {
        let compiled = file.makeCompiledModel()
        let plan = compiled.plan
        let input = (0..<plan.inputCount).map { Float($0 % 17) / 16 }
        var output = [Float](repeating: .nan, count: plan.outputCount)
        input.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { compiled.run(input, into: $0) }
        }
    }
}
