import ArgumentParser

/// The `classify` command-line tool: classifies drawings and motion recordings, trains, evaluates and
/// inspects models. Subcommands arrive with the issues that build them; until then it prints its help.
@main
struct Classify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "classify",
        abstract: "On-device drawing and activity recognition.",
        discussion: """
            The models and their subcommands (shape, motion, train, evaluate, generate, inspect) are not built \
            yet; this build contains the tensor engine only. Run `swift run -c release bench engine` to \
            measure it.
            """,
        version: "0.1.0"
    )
}
