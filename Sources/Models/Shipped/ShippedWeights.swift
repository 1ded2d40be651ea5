import Foundation

/// The weights this package ships (`Weights/*.weights` in its repository), built into the library, so that an app
/// that depends on the package loads them without a path, a bundle or a copy step: `ShapeRecognizer.shipped()`
/// and `MotionRecognizer.shipped()` read them from here.
///
/// The built-in copy is generated from `Weights/` by `scripts/embed-weights.sh`; a test fails while the two differ.
public struct ShippedWeights: WeightsSource {
    /// The built-in weights.
    public init() {}

    /// The variants built in: `shape-classifier.int8`, `shape-classifier.f32`, `motion-state.int8`,
    /// `motion-state.f32`.
    public static var variants: [String] { files.keys.sorted() }

    /// The bytes of `variant`'s weights file, or `nil` when it is not built in.
    public static func bytes(of variant: String) -> [UInt8]? {
        guard let text = files[variant] else { return nil }
        return Data(base64Encoded: text).map { Array($0) }
    }

    /// The validated weights file of `variant`; a variant that is not built in is `WeightsNotFound`.
    public func load(_ variant: String) throws -> ModelFile {
        guard let bytes = Self.bytes(of: variant) else {
            throw WeightsNotFound(variant: variant, places: ["built in (\(Self.variants.joined(separator: ", ")))"])
        }
        return try ModelFile(bytes: bytes, path: "built-in \(variant).weights")
    }
}

extension ShapeRecognizer {
    /// The shipped shape recognizer in one call: the built-in 8-bit weights, then the float ones, then the
    /// geometric recognizer; `model` says which answered. It fails only when no link works (with
    /// `policy.fallback` off, when the 8-bit weights do not load).
    public static func shipped(policy: RetryPolicy = RetryPolicy()) throws(ChainFailure) -> ShapeRecognizer {
        try load(source: ShippedWeights(), policy: policy)
    }

    /// A recognizer from one weights file (no fallback): `file.weights` names the model `file`. Throws a
    /// `WeightsFileError` for a file that cannot be read or is corrupt, a `DataError` for another model's file.
    public init(contentsOf url: URL) throws {
        let file = try ModelFile(contentsOf: url)
        self.init(engine: .model(try ShapeClassifier(file: file)), model: url.deletingPathExtension().lastPathComponent)
    }

    /// A recognizer from the bytes of a weights file (no fallback), named `model`; throws as `init(contentsOf:)`.
    public init(weights bytes: [UInt8], model: String = "shape-classifier") throws {
        self.init(engine: .model(try ShapeClassifier(file: ModelFile(bytes: bytes, path: model))), model: model)
    }

    /// The answer for a drawing given as strokes of `(x, y)` points (any units, any size, y up or down).
    public func recognize(strokes: [[(x: Double, y: Double)]]) throws(DataError) -> ShapeAnswer {
        try recognize(Drawing(strokes: strokes.map { $0.map { DrawingPoint(x: $0.x, y: $0.y) } }))
    }

    /// The answer for a drawing of one stroke.
    public func recognize(points: [(x: Double, y: Double)]) throws(DataError) -> ShapeAnswer {
        try recognize(strokes: [points])
    }
}

extension MotionRecognizer {
    /// The shipped motion recognizer in one call: the built-in 8-bit weights, then the float ones, then the
    /// cadence recognizer; `model` says which answered.
    public static func shipped(policy: RetryPolicy = RetryPolicy()) throws(ChainFailure) -> MotionRecognizer {
        try load(source: ShippedWeights(), policy: policy)
    }

    /// A recognizer from one weights file (no fallback): `file.weights` names the model `file`. Throws a
    /// `WeightsFileError` for a file that cannot be read or is corrupt, a `DataError` for another model's file.
    public init(contentsOf url: URL) throws {
        let file = try ModelFile(contentsOf: url)
        self.init(classifier: try MotionClassifier(file: file), model: url.deletingPathExtension().lastPathComponent)
    }

    /// A recognizer from the bytes of a weights file (no fallback), named `model`; throws as `init(contentsOf:)`.
    public init(weights bytes: [UInt8], model: String = "motion-state") throws {
        self.init(classifier: try MotionClassifier(file: ModelFile(bytes: bytes, path: model)), model: model)
    }

    /// Every window of a recording given as samples (Core Motion or raw accelerometer, one kind, times
    /// increasing, any rate), and the majority label: `classify(_:)` of the recording they make.
    public func classify(samples: [MotionStreamSample]) throws(DataError) -> MotionTimeline {
        let source = "samples"
        guard let first = samples.first else { throw DataError(file: source, message: "no samples") }
        var rows: [[Double]] = [], times: [Double] = []
        rows.reserveCapacity(samples.count)
        times.reserveCapacity(samples.count)
        for (index, sample) in samples.enumerated() {
            guard sample.isCoreMotion == first.isCoreMotion else {
                throw DataError(file: source, message: "sample \(index) is of another kind than sample 0 (Core Motion and raw accelerometer mixed)")
            }
            if let previous = times.last, !(sample.time > previous) {
                throw DataError(file: source, message: "sample \(index): time \(sample.time) does not come after \(previous); times must increase")
            }
            guard sample.time.isFinite else { throw DataError(file: source, message: "sample \(index): time \(sample.time) is not a finite number") }
            if let bad = sample.valueOutOfRange {
                throw DataError(file: source, message: "sample \(index): \(bad) is not a finite value within a phone sensor's range "
                                + "(at most \(Int(MotionRecordingReader.maximumSensorMagnitude)) in magnitude)")
            }
            rows.append(sample.row)
            times.append(sample.time)
        }
        if let problem = MotionRecordingReader.rateProblem(sourceRate: MotionRecordingReader.medianRate(times)) {
            throw DataError(file: source, message: problem)
        }
        try MotionRecordingReader.checkSpan(times, rate: windowing.rate, window: windowing.window, file: source)
        let recording = MotionRecordingReader.assemble(rows, times: times, coreMotion: first.isCoreMotion, rate: windowing.rate,
                                                       window: windowing.window)
        return try classify(recording, source: source)
    }
}
