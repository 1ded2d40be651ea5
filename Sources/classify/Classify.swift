import ArgumentParser

/// The `classify` command-line tool: classifies drawings and motion recordings, trains, evaluates and
/// inspects models.
@main
struct Classify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "classify",
        abstract: "On-device drawing and activity recognition.",
        discussion: """
            Built so far: inspect (what a weights file holds). The models and the shape, motion, train, \
            evaluate and generate subcommands arrive with the issues that build them.

            Exit codes: 0 success, 64 usage, 65 bad input data or corrupt weights, 66 a file is missing, \
            70 every model failed, 74 I/O error.

            Example: classify inspect Weights/model.int8.weights
            """,
        version: "0.1.0",
        subcommands: [Inspect.self]
    )
}
