import ArgumentParser

/// The `classify` command-line tool: classifies drawings and motion recordings, trains, evaluates and
/// inspects models.
@main
struct Classify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "classify",
        abstract: "On-device drawing and activity recognition.",
        discussion: """
            Built so far: train (a model from a CSV dataset), evaluate (a weights file on a CSV dataset) and \
            inspect (what a weights file holds). The shipped models and the shape, motion and generate \
            subcommands arrive with the issues that build them.

            Exit codes: 0 success, 64 usage, 65 bad input data or corrupt weights, 66 a file is missing, \
            70 every model failed, 74 I/O error.

            Example: classify train shape --data shapes.csv --quantize int8 --out Weights/shape-classifier
            """,
        version: "0.1.0",
        subcommands: [Shape.self, TrainCommand.self, Evaluate.self, Generate.self, Inspect.self]
    )
}
