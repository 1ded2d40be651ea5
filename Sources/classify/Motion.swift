import ArgumentParser
import DataFiles
import Datasets
import Foundation
import Models
import Tensor

/// `classify motion RECORDING.csv|- ...`
struct Motion: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "motion",
        abstract: "Label motion recordings' windows walking, running or still, and each recording by majority.",
        discussion: """
            A recording is a CSV file with the Core Motion columns (gravity.*, userAcceleration.* and \
            rotationRate.* are read; attitude.* may be absent), or raw accelerometer columns acc.x,acc.y,acc.z (g, \
            gravity included) with optional gyro.x,gyro.y,gyro.z; an optional timestamp column (seconds), else \
            --rate (then a note: line on standard error says so). - reads standard input. Accelerations in m/s² are \
            detected and converted (with a warning), any rate is resampled to the model's 50 Hz, and a gap longer \
            than a window splits the recording. A recording slower than 10 Hz (median spacing of its timestamps, or \
            --rate) cannot resolve a running stride of up to 3.5 steps a second and is refused (exit 65); \
            timestamps that look like milliseconds get a hint.

            Each window (5.12 s, every 1.28 s with the shipped model) gets a label and a confidence: walking, \
            running, or still (sitting, standing, fidgeting, the phone on a table: a class of the shipped model; \
            a model of only walking and running says still when the phone moves under 0.05 g). A window spanning a gap of \
            more than 0.25 s between samples is flagged uncertain. The recording's label is the majority of the \
            windows that are not uncertain (still included), or unknown when every window is uncertain; the \
            summary line counts those votes and the uncertain windows apart. Several files, a folder or \
            --dataset (a motion dataset CSV with session and label columns: one result per session) make a \
            batch: one line per recording with its majority label, in input order, on every core; a bad \
            recording reports its error in its place and the batch goes on.

            Models are tried in turn: motion-state.int8, motion-state.f32 (or only --weights), then the built-in \
            cadence recognizer (stride rate and intensity), which needs no weights. A transient failure is \
            retried (--retries); a missing, corrupt or incompatible weights file moves on at once.

            --follow reads one recording line by line as it grows (a file, followed by name until interrupted, as \
            tail -F does: waited for when it does not exist yet, and read again from its start as a new recording \
            when truncated, rewritten or replaced; -, /dev/stdin or a FIFO until its writer closes it) and prints \
            each change of state as soon as --confirm windows in a row agree on it (the time, the new state, the \
            windows' mean confidence, and since when): a live run, not a summary. Units and a raw accelerometer's \
            gravity are then judged from the first second of samples; no sample for more than a window is a pause \
            (paused, then resumed). Exit 65 when the input ends before one window or a row cannot be read.

            Examples: classify motion Datasets/examples/running.csv --json
                      classify motion --dataset Datasets/motion/test.csv
                      phone-sensor-logger | classify motion --follow -
            """
    )

    @Argument(help: "Recordings (CSV files or folders), or - for standard input.")
    var recordings: [String] = []

    @Option(help: "A motion dataset CSV (session,label and a recording's columns): classify each session.")
    var dataset: String?

    @OptionGroup var chain: ChainOptions

    @Option(help: "Samples per second when a recording has no timestamp column.")
    var rate = 50.0

    @Option(help: "Average each window's probabilities with this many neighbours on each side.")
    var smooth = 0

    @Flag(help: "Follow one recording as it grows (a file, or - for standard input) and print each change of state as it happens.")
    var follow = false

    @Option(help: "With --follow: how many windows in a row must agree before a new state is printed (1–20).")
    var confirm = 2

    func validate() throws {
        if dataset != nil && !recordings.isEmpty { throw ValidationError("give recordings or --dataset FILE, not both") }
        guard !recordings.isEmpty || dataset != nil else { throw ValidationError("give a recording (a CSV file, a folder or -) or --dataset FILE") }
        guard rate > 0 && rate <= 10_000 else { throw ValidationError("--rate must be between 0 and 10000 Hz, got \(rate)") }
        guard smooth >= 0 && smooth <= 1000 else { throw ValidationError("--smooth must be between 0 and 1000, got \(smooth)") }
        guard confirm >= 1 && confirm <= 20 else { throw ValidationError("--confirm must be between 1 and 20, got \(confirm)") }
        if follow {
            guard dataset == nil, recordings.count == 1 else {
                throw ValidationError("--follow takes one recording (a file or -), not a batch or --dataset")
            }
            guard smooth == 0 else { throw ValidationError("--smooth averages with later windows, which --follow has not seen yet; leave it out") }
        } else if confirm != 2 {
            throw ValidationError("--confirm applies to --follow only")
        }
    }

    func run() throws {
        if follow { return try followRecording() }
        let (files, problems) = expandInputs(recordings)
        let single = dataset == nil && files.count == 1 && files == recordings
        // A missing recording fails before any model is tried (as in `shape`): no model can fix it. It is read
        // later, at the answering model's rate and window.
        if single {
            do {
                if let problem = problems[files[0]] { throw problem }
                try requireExisting(files[0])
            } catch {
                throw inputFailure(error, input: files[0], json: chain.json)
            }
        }
        var loaded = try chain.load(MotionRecognizer.self, for: dataset.map { [$0] } ?? files)
        loaded.smoothing = smooth
        let recognizer = loaded
        let source = chain.describe(recognizer.model, among: chain.variants(of: .motion))
        if single { return try recognizeOne(files[0], recognizer: recognizer, source: source) }
        // A batch: each item is a recording (or a dataset's session) read at the answering model's rate.
        let status = recognizeBatch(
            try batchItems(files, problems: problems, windowing: recognizer.windowing), recognizer: recognizer, source: source)
        if status != 0 { throw ExitCode(status) }
    }

    /// `--follow`: one recording read as it grows; a file that does not exist yet is waited for (MotionFollower),
    /// as `tail -F` does.
    private func followRecording() throws {
        let recognizer = try chain.load(MotionRecognizer.self, for: recordings)
        let source = chain.describe(recognizer.model, among: chain.variants(of: .motion))
        do {
            let status = try MotionFollower(
                path: recordings[0], recognizer: recognizer, confirmations: confirm, assumedRate: rate,
                json: chain.json, weights: source.weights
            ).run()
            if status != 0 { throw ExitCode(status) }
        } catch let error as DataError {
            throw inputFailure(error, input: recordings[0], json: chain.json)
        }
    }

    /// One recording, read at the model's rate and window: its notes, then its answer with the segments and every
    /// window (or its JSON).
    private func recognizeOne(_ file: String, recognizer: MotionRecognizer, source: (text: String, weights: String?)) throws {
        let windowing = recognizer.windowing
        let input: MotionSignals, timeline: MotionAnswer
        do {
            input = try MotionRecordingReader.readSignals(file, assumedRate: rate, rate: windowing.rate, window: windowing.window)
            timeline = try recognizer.recognize(input)
        } catch {
            throw inputFailure(error, input: file, json: chain.json)
        }
        // Assumptions are notes; a gap that splits the recording changes its windows: a warning.
        for note in input.notes {
            MotionRecordingReader.isGapNote(note) ? reportWarning("\(file): \(note)") : reportNote("\(file): \(note)")
        }
        if let note = rateNote(input, name: file) { reportNote(note) }
        if chain.json {
            let json = MotionJSON(
                timeline: timeline, model: recognizer.model, weights: source.weights, attempts: recognizer.attempts, notes: input.notes)
            return print(json.text)
        }
        print(motionHeadline(timeline, model: source.text))
        // The timeline as segments (a state and its span), then every window.
        if timeline.segments.count > 1 || timeline.uncertain {
            for segment in timeline.segments {
                print(
                    "  " + segment.label.padding(toLength: 10, withPad: " ", startingAt: 0)
                        + String(format: "%.2f–%.2f s", segment.start, segment.end)
                        + "  (\(segment.windows) window\(segment.windows == 1 ? "" : "s"), \(percentText(segment.confidence)))")
            }
        }
        for window in timeline.windows {
            let span = String(format: "%7.2f–%7.2f s", window.start, window.end)
            print(
                "  \(span)  " + window.label.padding(toLength: 8, withPad: " ", startingAt: 0) + percentText(window.confidence)
                    + (window.uncertain ? "  uncertain: \(window.reason ?? "")" : ""))
        }
        if timeline.uncertain { print("uncertain: \(timeline.reason ?? "")") }
    }

    /// A batch's items: each recording (or each session of `--dataset`), named, and how to read it at the
    /// answering model's rate and window.
    private func batchItems(
        _ files: [String], problems: [String: DataError], windowing: MotionWindowing
    ) throws -> [(name: String, recording: @Sendable () throws(DataError) -> MotionSignals)] {
        let (rate, json) = (rate, chain.json)
        guard let dataset else {
            return files.map { path in
                (
                    path,
                    { () throws(DataError) in
                        if let problem = problems[path] { throw problem }
                        return try MotionRecordingReader.readSignals(path, assumedRate: rate, rate: windowing.rate, window: windowing.window)
                    }
                )
            }
        }
        do {
            return try MotionDataset.sessions(dataset, rate: windowing.rate, window: windowing.window).map { session in
                (
                    "\(dataset)#\(json ? session.id : DataError.terminalSafe(session.id))",
                    { () throws(DataError) in MotionSignals(try session.recording.get()) }
                )
            }
        } catch {
            throw inputFailure(error, input: dataset, json: json)
        }
    }

    /// One line per item, in input order, read and answered on every core. Returns the first failure's status, or 0.
    private func recognizeBatch(
        _ items: [(name: String, recording: @Sendable () throws(DataError) -> MotionSignals)], recognizer: MotionRecognizer,
        source: (text: String, weights: String?)
    ) -> Int32 {
        let json = chain.json
        return runBatch(count: items.count, threads: chain.jobs ?? Parallel.defaultThreads) { index in
            let (name, read) = items[index]
            do {
                let recording = try read()
                let timeline = try recognizer.recognize(recording)
                if let note = rateNote(recording, name: name) { reportNote(note) }
                guard json else { return ItemOutcome(line: "\(name)  " + motionHeadline(timeline, model: source.text), status: 0) }
                let line = MotionJSON(
                    timeline: timeline, model: recognizer.model, weights: source.weights, attempts: recognizer.attempts, notes: recording.notes,
                    input: name)
                return ItemOutcome(line: line.text, status: 0)
            } catch {
                return errorOutcome(error, input: name, json: json)
            }
        }
    }
}

/// `LABEL  (K of N windows[, U uncertain], model M)[  uncertain]`: one recording's line, the same for one file (then
/// its windows) and for each of a batch (which puts the input's name and two spaces before it).
func motionHeadline(_ timeline: MotionAnswer, model: String) -> String {
    let share = timeline.votes.first { $0.label == timeline.label }?.count ?? 0
    let uncertainCount = timeline.windows.filter(\.uncertain).count
    return "\(timeline.label)  (\(share) of \(timeline.windows.count) window\(timeline.windows.count == 1 ? "" : "s")"
        + (uncertainCount > 0 ? ", \(uncertainCount) uncertain" : "") + ", model \(model))" + (timeline.uncertain ? "  uncertain" : "")
}

/// The note for a recording read without timestamps: which rate was assumed; `nil` when it had timestamps.
func rateNote(_ recording: MotionSignals, name: String) -> String? {
    recording.assumedRate.map { "\(name): no timestamp column; assumed --rate " + String(format: "%g Hz", $0) }
}

/// Prints `message` as one `note:` line on standard error (never on standard output, so JSON stays clean), unless
/// `--quiet`.
func reportNote(_ message: String) {
    guard !quietOutput.load(ordering: .relaxed) else { return }
    StandardStreams.writeError("note: \(DataError.terminalSafe(message))\n")
}

/// The stable JSON of `classify motion`.
struct MotionJSON: Encodable {
    struct Window: Encodable {
        let start: Double
        let end: Double
        let label: String
        let confidence: Double
        let uncertain: Bool
        let reason: String?
    }

    let label: String
    let uncertain: Bool
    let reason: String?
    let windows: [Window]
    /// The timeline: consecutive windows of one state as one segment.
    let segments: [MotionSegment]
    let model: String
    /// The weights file's path, or `built-in`; absent for the rule that needs none.
    let weights: String?
    let attempts: [ChainAttempt]
    let notes: [String]
    let input: String?

    init(timeline: MotionAnswer, model: String, weights: String?, attempts: [ChainAttempt], notes: [String], input: String? = nil) {
        self.weights = weights
        self.input = input
        label = timeline.label
        uncertain = timeline.uncertain
        reason = timeline.reason
        windows = timeline.windows.map {
            Window(
                start: ($0.start * 1000).rounded() / 1000, end: ($0.end * 1000).rounded() / 1000, label: $0.label,
                confidence: $0.confidence, uncertain: $0.uncertain, reason: $0.reason)
        }
        segments = timeline.segments.map { segment in
            var rounded = segment
            (rounded.start, rounded.end) = ((segment.start * 1000).rounded() / 1000, (segment.end * 1000).rounded() / 1000)
            return rounded
        }
        self.model = modelName(model)
        self.attempts = attempts
        self.notes = notes
    }

    var text: String { jsonText(self) }
}
