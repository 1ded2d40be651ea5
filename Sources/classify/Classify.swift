import ArgumentParser

/// The `classify` command-line tool: classifies drawings and motion recordings, trains, evaluates and
/// inspects models.
@main
struct Classify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "classify",
        abstract: "On-device drawing and activity recognition.",
        discussion: """
            shape labels a drawing (circle, triangle, square, star); motion labels a phone's motion recording \
            (walking, running) window by window. Both try the shipped int8 weights, then f32, then a non-ML \
            recognizer. train, evaluate, generate and inspect retrain and examine the models.

            Exit codes: 0 success, 64 usage, 65 bad input data or corrupt weights, 66 a file is missing, \
            70 every model failed, 74 I/O error.

            Example: classify motion Datasets/examples/running.csv
            """,
        version: "0.1.0",
        subcommands: [Shape.self, Motion.self, TrainCommand.self, Evaluate.self, Generate.self, Inspect.self]
    )
}
