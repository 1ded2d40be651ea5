import ArgumentParser
import Foundation
import Models
import Tensor

/// `classify motion RECORDING.csv|-`
struct Motion: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Label a motion recording's windows walking or running, and the whole recording by majority.",
        discussion: """
            The recording is a CSV file with the twelve Core Motion columns (gravity.*, userAcceleration.* and \
            rotationRate.* are read; attitude.* may be absent), or raw accelerometer columns acc.x,acc.y,acc.z (g, \
            gravity included) with optional gyro.x,gyro.y,gyro.z; an optional timestamp column (seconds), else \
            --rate. - reads standard input. Accelerations in m/s² are detected and converted (with a note), any \
            rate is resampled to the model's 50 Hz, and a gap longer than a window splits the recording.

            Each window (5.12 s, every 1.28 s with the shipped model) gets a label and a confidence; a window in \
            which the phone barely moves is flagged uncertain and does not vote. Models are tried in turn: \
            Weights/motion-state.int8.weights, then Weights/motion-state.f32.weights (or only --weights when \
            given), then the built-in cadence recognizer (stride rate and intensity), which needs no weights.

            Example: classify motion Datasets/examples/running.csv --json
            """
    )

    @Argument(help: "The recording (CSV), or - for standard input.")
    var recording: String

    @Option(help: "A weights file to use instead of the shipped ones.")
    var weights: String?

    @Option(help: "Samples per second when the recording has no timestamp column.")
    var rate = 50.0

    @Option(help: "Average each window's probabilities with this many neighbours on each side.")
    var smooth = 0

    @Flag(help: "Print one JSON object: label, uncertain, windows (start, end, label, confidence, uncertain), model, attempts, notes.")
    var json = false

    func validate() throws {
        guard rate > 0 && rate <= 10_000 else { throw ValidationError("--rate must be between 0 and 10000 Hz, got \(rate)") }
        guard smooth >= 0 && smooth <= 1000 else { throw ValidationError("--smooth must be between 0 and 1000, got \(smooth)") }
    }

    func run() throws {
        let windowing = MotionWindowing()
        let input: MotionRecording
        do {
            input = try MotionRecordingReader.read(recording, assumedRate: rate, rate: windowing.rate, window: windowing.window)
            // Checked before any model runs: no model can label a recording shorter than its window.
            try windowing.requireWindow(in: input, source: recording)
        } catch {
            throw failure(error)
        }
        let candidates = weights.map { [$0] } ?? ["Weights/motion-state.int8.weights", "Weights/motion-state.f32.weights"]
        var links = candidates.map { path in
            Link<MotionTimeline>(name: modelName(ofWeights: path)) {
                let classifier = try MotionClassifier(file: try ModelFile(contentsOf: URL(fileURLWithPath: path)))
                let samples = classifier.windowing.rate == windowing.rate ? input
                    : try MotionRecordingReader.read(recording, assumedRate: rate, rate: classifier.windowing.rate, window: classifier.windowing.window)
                return try classifier.classify(samples, smoothing: smooth, source: recording)
            }
        }
        links.append(Link(name: "cadence") { try CadenceRecognizer(windowing: windowing).classify(input, smoothing: smooth, source: recording) })
        let (timeline, model, attempts) = try firstAnswer(links)
        for note in input.notes { reportWarning("\(recording): \(note)") }
        if json {
            print(MotionJSON(timeline: timeline, model: model, attempts: attempts, notes: input.notes).text)
            return
        }
        let counts = Dictionary(grouping: timeline.windows, by: \.label).mapValues(\.count)
        print("\(timeline.label)  (\(timeline.windows.count) window\(timeline.windows.count == 1 ? "" : "s"): "
              + counts.sorted { $0.value > $1.value }.map { "\($0.value) \($0.key)" }.joined(separator: ", ") + "; model \(model))")
        for window in timeline.windows {
            let span = String(format: "%7.2f–%7.2f s", window.start, window.end)
            print("  \(span)  " + window.label.padding(toLength: 8, withPad: " ", startingAt: 0) + percentText(window.confidence)
                  + (window.uncertain.map { "  uncertain: \($0)" } ?? ""))
        }
        if let uncertain = timeline.uncertain { print("uncertain: \(uncertain)") }
    }
}

/// The stable JSON of `classify motion`.
struct MotionJSON: Encodable {
    struct Window: Encodable {
        let start: Double
        let end: Double
        let label: String
        let confidence: Double
        let uncertain: String?
    }

    let label: String
    let uncertain: String?
    let windows: [Window]
    let model: String
    let attempts: [Attempt]
    let notes: [String]

    init(timeline: MotionTimeline, model: String, attempts: [Attempt], notes: [String]) {
        label = timeline.label
        uncertain = timeline.uncertain
        windows = timeline.windows.map {
            Window(start: ($0.start * 1000).rounded() / 1000, end: ($0.end * 1000).rounded() / 1000, label: $0.label,
                   confidence: $0.confidence, uncertain: $0.uncertain)
        }
        self.model = model
        self.attempts = attempts
        self.notes = notes
    }

    var text: String { jsonText(self) }
}
