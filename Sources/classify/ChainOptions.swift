import ArgumentParser
import DataFiles
import Foundation
import Models
import Tensor
import Train
import WeightsFormat

/// The options `classify shape` and `classify motion` share: where weights come from, retries, fallback.
struct ChainOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "A weights file to use instead of the shipped int8 and f32 files: that model or an error (exit 70), unless --fallback.",
            discussion:
                "Without it, each variant is looked for in $CLASSIFY_WEIGHTS (then only there, unless --fallback), then ./Weights, then the installed Weights folder, then the weights built into the tool. A $CLASSIFY_WEIGHTS folder without the shipped file names (shape-classifier.*, motion-state.*) serves its one model of the task, whatever its name (any *.weights file; a folder of at most \(WeightsLocator.maximumFolderCandidates) weights files, whose headers are read)."
        ))
    var weights: String?

    @Option(
        help: "How often to retry a transient failure (an I/O error while reading weights), per model, waiting 20 ms, 40 ms, 80 ms, … between tries.")
    var retries = 3

    @Flag(help: "Stop after the first model: no f32 weights and no non-ML recognizer.")
    var noFallback = false

    @Flag(
        help: ArgumentHelp(
            "With --weights or $CLASSIFY_WEIGHTS: when the model you named cannot answer, go on through the chain.",
            discussion:
                "A named model is explicit: without this flag, a file or folder that cannot serve the task (missing, corrupt, another task's model, labels the task cannot use) is an error, exit 70."
        ))
    var fallback = false

    @Flag(help: "Print JSON: one object, or one object per line for several inputs.")
    var json = false

    @Flag(help: "Leave out notes and warnings (units converted, rate assumed, a model that failed before another answered); errors still print.")
    var quiet = false

    @Option(help: "Batches: how many inputs to work on at once (default: every core, \(Self.coreCount) here).")
    var jobs: Int?

    /// The core count the help text shows, read once per process (ArgumentParser builds the help text on every parse).
    static let coreCount = Parallel.defaultThreads

    func validate() throws {
        guard (0...10).contains(retries) else { throw ValidationError("--retries must be between 0 and 10, got \(retries)") }
        if fallback && noFallback { throw ValidationError("--fallback and --no-fallback exclude each other") }
        // Parsed once per process, before the command runs: the switch every note and warning reads.
        if quiet { quietOutput.store(true, ordering: .relaxed) }
        if let jobs, !(1...1024).contains(jobs) { throw ValidationError("--jobs must be between 1 and 1024, got \(jobs)") }
    }

    /// The shipped location: `Weights/` beside the executable, or `share/classify/Weights` of its install
    /// prefix, or the `Weights/` of the package whose build folder holds the executable (walking up from it to
    /// the folder with `Package.swift`). `nil` when none exists.
    static let shippedWeights: String? = {
        let executable = URL(fileURLWithPath: Bundle.main.executablePath ?? CommandLine.arguments[0]).resolvingSymlinksInPath()
        let folder = executable.deletingLastPathComponent()
        let fileManager = FileManager.default
        for candidate in [
            folder.appendingPathComponent("Weights"),
            folder.deletingLastPathComponent().appendingPathComponent("share/classify/Weights"),
        ]
        where fileManager.fileExists(atPath: candidate.path) {
            return candidate.path
        }
        var directory = folder
        while directory.path != "/" && !directory.path.isEmpty {
            if fileManager.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
                let weights = directory.appendingPathComponent("Weights")
                return fileManager.fileExists(atPath: weights.path) ? weights.path : nil
            }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }()

    /// The model the user named, as the error for it says it: `--weights FILE`, or the folder `$CLASSIFY_WEIGHTS`
    /// names; `nil` when the weights are looked up as shipped.
    var explicitSource: String? {
        if let weights { return weights }
        return WeightsLocator.environmentFolder(ProcessInfo.processInfo.environment).map { "$\(WeightsLocator.environmentVariable) (\($0))" }
    }

    /// Where weights are looked for: the folders, then the weights built into the binary. A folder named by
    /// `$CLASSIFY_WEIGHTS` is the only place looked in unless `--fallback`.
    var locator: WeightsLocator {
        WeightsLocator(
            explicitFile: weights, shippedFolder: Self.shippedWeights, builtIn: ShippedWeights(),
            environmentFolderOnly: explicitSource != nil && !fallback)
    }

    /// The weights variants of `task`'s model: the given file; or int8 then f32 from the folders, then (unless the
    /// user named a folder) the same built in, so a corrupt installed file falls back to the same model, not the
    /// rule. A `$CLASSIFY_WEIGHTS` folder without the model's files but with one model of the task (`train … --out
    /// my-models/doodles`) serves that model's variants.
    func variants(of task: RecognitionTask) -> [String] {
        if let weights { return [modelName(ofWeights: weights)] }
        if case let .success(found)? = folderModel(for: task) { return found }
        let shipped = task.shippedVariants
        return explicitSource == nil ? shipped + shipped.map(WeightsLocator.builtIn) : shipped
    }

    /// For a `$CLASSIFY_WEIGHTS` folder (and no `--weights`) that holds no `MODEL.*.weights` of `task`'s model: the
    /// variants of its one model of the task, whatever its name (`WeightsLocator.folderModel`), or an error when it holds several,
    /// or none (then, with `--fallback`, `nil`: the chain goes on to the other places); `nil` when the folder lookup
    /// applies as it is.
    func folderModel(for task: RecognitionTask) -> Result<[String], DataError>? {
        guard weights == nil, let folder = WeightsLocator.environmentFolder(ProcessInfo.processInfo.environment),
            let names = try? FileManager.default.contentsOfDirectory(atPath: folder)
        else { return nil }
        switch WeightsLocator.folderModel(in: folder, names: names, task: task) {
        case nil: return nil
        case .found(let variants)?: return .success(variants)
        case .several(let error)?: return .failure(error)
        case .notFound(let error)?: return fallback ? nil : .failure(error)
        }
    }

    /// Loads `R`'s recognizer (`ShapeRecognizer`, `MotionRecognizer`) through the chain: each failed attempt is one
    /// `warning:` line; when every link fails, one `error:` line listing the attempts (with `--json`, also one error
    /// line per input on standard output) and exit 70.
    func load<R: TaskRecognizer>(_: R.Type, for inputs: [String]) throws -> R {
        do {
            try locator.checkEnvironmentFolder()
        } catch {
            throw inputsFailure(error, inputs: inputs)
        }
        if case let .failure(error)? = folderModel(for: R.task) { throw softwareFailure(error.description, inputs: inputs) }
        do {
            return try R.load(variants: variants(of: R.task), source: locator, policy: policy, report: warn)
        } catch {
            throw exit(for: error, inputs: inputs)
        }
    }

    /// Where `model` (the link that loaded) read its weights, as every answer names it: the file's path, or
    /// `built-in`; `nil` for the rule that needs no weights. A file from `$CLASSIFY_WEIGHTS`, or from a `./Weights`
    /// that is not the shipped folder, overrides the installed model: one note says so (call this once a run).
    func weightsSource(of model: String, among variants: [String]) -> String? {
        guard variants.contains(model), let location = try? locator.locate(model) else { return nil }
        switch location {
        case .builtIn:
            return "built-in"
        case let .file(path, origin):
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().resolvingSymlinksInPath().path
            let shipped = Self.shippedWeights.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path }
            // A file of the current folder's Weights/ is named as the user would type it.
            let shown = origin == "./Weights" ? "./Weights/" + URL(fileURLWithPath: path).lastPathComponent : path
            if origin == "$\(WeightsLocator.environmentVariable)" || (origin == "./Weights" && folder != shipped) {
                reportNote("\(model): using \(shown) from \(origin), not the installed model (--weights FILE names one file)")
            }
            return shown
        }
    }

    /// `model`, and where its weights came from when it has any: `shape-classifier.int8, built-in`.
    func describe(_ model: String, among variants: [String]) -> (text: String, weights: String?) {
        let source = weightsSource(of: model, among: variants)
        let name = modelName(model)
        return (source.map { "\(name), \($0)" } ?? name, source)
    }

    /// A named model answers alone — the named file, or the named folder's variants (int8, then f32) — unless
    /// `--fallback`; the shipped lookup goes on through the chain unless `--no-fallback`.
    var policy: RetryPolicy {
        guard explicitSource != nil, !fallback else { return RetryPolicy(retries: retries, fallback: !noFallback) }
        var policy = RetryPolicy(retries: retries, fallback: !noFallback)
        policy.ruleFallback = false
        return policy
    }

    /// One `warning:` line for a failed attempt that something comes after (a retry or the next model); the last
    /// attempt's failure is told by the `error:` line that follows it.
    func warn(_ event: ChainEvent) {
        guard let next = event.next.map({ $0.hasPrefix("retry") ? $0 : "trying \($0)" }) else { return }
        reportWarning("\(event.attempt.model): \(event.attempt.error); \(next)")
    }

    /// The exit for a chain that gave no answer: bad input's own message and code, or one `error:` line listing
    /// every attempt and 70; with `--json`, each input's error line on standard output first.
    func exit(for error: ChainFailure, inputs: [String]) -> ExitCode {
        let message: String
        switch error {
        case let .badInput(data, _):
            return inputsFailure(data, inputs: inputs)
        case let .allFailed(attempts) where explicitSource != nil && !fallback:
            message =
                "\(explicitSource ?? ""): the model you named cannot answer: "
                + attempts.map { "\($0.model): \($0.error)" }.joined(separator: "; ")
                + (weights != nil
                    ? " (--fallback goes on to the non-ML recognizer instead)"
                    : " (--fallback goes on to ./Weights, the installed and the built-in models, and the non-ML recognizer instead)")
        case let .allFailed(attempts):
            message =
                "every model failed (\(attempts.count) attempt\(attempts.count == 1 ? "" : "s")): "
                + attempts.map { "\($0.model): \($0.error)" }.joined(separator: "; ")
        }
        return softwareFailure(message, inputs: inputs)
    }

    /// One `error:` line (with `--json`, each input's error line on standard output first) and exit 70: no model
    /// could answer.
    func softwareFailure(_ message: String, inputs: [String]) -> ExitCode {
        if json {
            for input in inputs { print(jsonText(ErrorLineJSON(input: input, error: message, exit: ExitStatus.software))) }
        }
        reportError(message)
        return ExitCode(ExitStatus.software)
    }

    /// A failure before any input was read (a `$CLASSIFY_WEIGHTS` that is no folder, bad input a probe found): with
    /// `--json`, each input's error line on standard output, then what `failure` does.
    func inputsFailure(_ error: any Error, inputs: [String]) -> ExitCode {
        if json { for input in inputs { print(errorOutcome(error, input: input, json: true).line) } }
        return failure(error)
    }
}

/// A recognizer of one of the tasks the command line has commands for: the chain's variants and the weights folder's
/// search are the task's.
protocol TaskRecognizer: Recognizer {
    /// Its task.
    static var task: RecognitionTask { get }
}

extension ShapeRecognizer: TaskRecognizer {}
extension MotionRecognizer: TaskRecognizer {}
