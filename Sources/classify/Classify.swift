import ArgumentParser
import Foundation
import Tensor

#if ONNX
import ONNX
#endif

/// The `classify` command-line tool: classifies drawings and motion recordings, trains, evaluates and
/// inspects models.
@main
struct Classify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "classify",
        abstract: "On-device drawing and activity recognition.",
        discussion: """
            shape labels a drawing (circle, triangle, square, star, or unknown); motion labels a phone's motion \
            recording (walking, running or still) window by window. Both try the shipped int8 weights, then f32, \
            then a non-ML recognizer; a model you name with --weights (a weights file or an .onnx file) or \
            $CLASSIFY_WEIGHTS (a folder of weights files) is that model or an error, unless --fallback. train, evaluate, generate and inspect retrain \
            and examine the models; export, import and run move them to and from ONNX and print raw outputs.

            Exit codes: 0 success, 64 usage, 65 bad input data or corrupt weights, 66 a file is missing, \
            70 every model failed (or the model you named cannot answer), 74 I/O error.

            Example: classify motion Datasets/examples/running.csv
            """,
        version: "0.1.0",
        subcommands: [
            Shape.self, Motion.self, TrainCommand.self, Evaluate.self, Generate.self, Inspect.self, ExportCommand.self,
            ImportCommand.self, RunCommand.self, Serve.self,
        ]
    )

    /// Runs the command as ArgumentParser's `main()` does (help and usage errors print the same), then flushes
    /// standard output: output that could not be written is exit 74 with one `error:` line, never a silent 0.
    static func main() {
        unblockStopSignals()
        registerONNX()
        var status: Int32 = 0
        do {
            var command = try parseAsRoot()
            // After parsing, so that --quiet silences it like every note.
            if let note = Kernels.ignoredLevelNote { reportNote(note) }
            try command.run()
        } catch {
            let message = fullMessage(for: error)
            let code = exitCode(for: error)
            if !message.isEmpty {
                if code == .success { StandardStreams.write(message + "\n") } else { StandardStreams.writeError(message + "\n") }
            }
            status = code.rawValue
        }
        Foundation.exit(StandardStreams.finishStandardOutput(status: status))
    }
}

/// Unblocks the signals that stop a run (interrupt, terminate, hang-up). A process inherits its parent's blocked
/// signals: one started by a program that blocks them (Foundation's `Process` in a test runner hands down nearly all)
/// would ignore `kill` and, with `--follow`, follow a file forever.
func unblockStopSignals() {
    var signals = sigset_t()
    sigemptyset(&signals)
    for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&signals, signal) }
    pthread_sigmask(SIG_UNBLOCK, &signals, nil)
}
