/// The recognition tasks this engine knows, below every module that differs by task (Models, Datasets, Train, ONNX,
/// the CLI and its server): the one place a task's name, its model's name and its preprocessing kind are written.
/// Code that differs by task switches on this enum, exhaustively, so a new task is a compile error wherever it needs
/// a decision; the names are compared only where they are read (a weights file, an ONNX sidecar, a command line) and
/// written. (Named so that it does not hide Swift Concurrency's `Task`.)
public enum RecognitionTask: String, Sendable, CaseIterable, Codable {
    /// A drawing → circle, triangle, square or star.
    case shape
    /// A motion recording → walking or running, per window.
    case motion

    /// The task a name gives (`shape`, `motion`), or `nil` when it names none this build knows.
    public init?(name: String) { self.init(rawValue: name) }

    /// A task decoded from its name, with an error that lists the tasks there are.
    public init(from decoder: any Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        guard let task = RecognitionTask(name: name) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "task '\(name)' is not \(Self.namesText)"))
        }
        self = task
    }

    /// The tasks' names as a sentence lists them: `shape or motion`.
    public static var namesText: String { allCases.map(\.rawValue).joined(separator: " or ") }

    /// The model name weights files carry, and the stem of the shipped weights files: `shape-classifier`,
    /// `motion-state`.
    public var modelName: String {
        switch self {
        case .shape: "shape-classifier"
        case .motion: "motion-state"
        }
    }

    /// The shipped model's variants, most compact first: `MODEL.int8`, `MODEL.f32` (the chain's link names and the
    /// weights files' stems).
    public var shippedVariants: [String] { Self.variants(ofModel: modelName) }

    /// A model's variants, most compact first: `MODEL.int8`, `MODEL.f32` (any model's: a built-in task's or an app's).
    public static func variants(ofModel modelName: String) -> [String] { ["\(modelName).int8", "\(modelName).f32"] }

    /// The task whose model is named `name` (`modelName`), or `nil`.
    public init?(modelName name: String) {
        guard let task = Self.allCases.first(where: { $0.modelName == name }) else { return nil }
        self = task
    }

    /// The preprocessing kind that makes this task's inputs: `raster` for drawings, `motion-autocorrelation` for
    /// recordings (`PreprocessingKind.task` is the way back).
    package var kind: PreprocessingKind {
        switch self {
        case .shape: .raster
        case .motion: .motionAutocorrelation
        }
    }

    /// What one input is, as a weights file's `input.description` says it.
    public var inputDescription: String {
        switch self {
        case .shape: "rasterized drawing"
        case .motion: "windows of motion features"
        }
    }

    /// What the task's data is counted in when it is split or checked: `drawings` or `sessions` (each the unit
    /// kept whole on one side of a validation split).
    public var dataUnit: String {
        switch self {
        case .shape: "drawings"
        case .motion: "sessions"
        }
    }
}
