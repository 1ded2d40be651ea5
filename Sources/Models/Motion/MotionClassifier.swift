import DataFiles
import Foundation
import Tensor
import WeightsFormat

/// What a motion recognizer says about one window.
public struct MotionWindowPrediction: Sendable, Equatable {
    /// Seconds from the recording's start to the window's first sample.
    public var start: Double
    /// Seconds from the recording's start to the window's end.
    public var end: Double
    /// The most likely state: one of the model's labels, or `still` (`MotionStillness.label`) when the phone
    /// barely moves.
    public var label: String
    /// Its probability, 0…1.
    public var confidence: Double
    /// Whether the answer should not be trusted; an uncertain window does not vote for the recording's label.
    public var uncertain: Bool
    /// Why the window is uncertain, or `nil`.
    public var reason: String?

    /// Creates a window's prediction.
    public init(start: Double, end: Double, label: String, confidence: Double, uncertain: Bool = false, reason: String? = nil) {
        self.start = start
        self.end = end
        self.label = label
        self.confidence = confidence
        self.uncertain = uncertain
        self.reason = reason
    }
}

/// A stretch of a recording in one state: consecutive windows with the same label (`uncertain` for a run of
/// uncertain windows).
public struct MotionSegment: Sendable, Equatable, Encodable {
    /// The state, or `uncertain`.
    public var label: String
    /// Seconds from the recording's start: the segment's first window's start.
    public var start: Double
    /// Where the next segment starts (its first window's start), or the last window's end for the last segment, so
    /// that segments follow one another without overlap though windows overlap.
    public var end: Double
    /// How many windows it spans.
    public var windows: Int
    /// Their mean confidence.
    public var confidence: Double

    /// The label a segment gives runs of uncertain windows.
    public static let uncertainLabel = "uncertain"
}

/// What the motion recognizer answers for one recording: each window's state, and the state most windows have.
public struct MotionAnswer: RecognitionAnswer, Equatable {
    /// Every window, in time order.
    public var windows: [MotionWindowPrediction]
    /// The state most windows have, `still` included (ties go to the higher summed confidence); windows flagged
    /// uncertain do not vote, and when every window is uncertain the label is `unknown` (`DecisionRule.unknownLabel`).
    public var label: String
    /// The mean confidence of the windows that voted for `label` (0 when no window could vote).
    public var confidence: Double
    /// Whether the recording's label should not be trusted: no window could vote.
    public var uncertain: Bool
    /// Why the recording is uncertain, or `nil`.
    public var reason: String?
    /// Each state that got a vote and its share of the votes, most first.
    public var probabilities: [(label: String, probability: Double)] {
        let votes = votes, voters = Double(votes.reduce(0) { $0 + $1.count })
        return votes.map { ($0.label, Double($0.count) / voters) }
    }
    /// Which link labelled the windows: a weights variant (`motion-state.int8`, …) or `cadence`.
    public var model: String
    /// The model's classes, in the order of each window's probabilities. The shipped model has `still` among them;
    /// for a model of only walking and running, `still` is not one: it is judged from the motion's intensity.
    public var classes: [String] = []
    /// Every window's class probabilities, calibrated by the weights file's decision rule (a window answered by the
    /// model has its label's probability as its confidence; a `still` window of a model under the stillness rule
    /// has the rule's), `classes.count` per window in window order (empty for an answer made from windows alone).
    public var windowProbabilities: [Double] = []

    /// Window `index`'s probability of each class, most likely first.
    public func probabilities(ofWindow index: Int) -> [(label: String, probability: Double)] {
        let count = classes.count
        guard index >= 0, count > 0, (index + 1) * count <= windowProbabilities.count else { return [] }
        return zip(classes, windowProbabilities[(index * count)..<((index + 1) * count)]).map { ($0, $1) }.sorted { $0.1 > $1.1 }
    }
    /// The timeline: consecutive windows with the same label as one segment each (`walking 0.00–30.72 s`, `still
    /// 30.72–44.80 s`, …), what an activity API reports as transitions.
    public var segments: [MotionSegment] {
        var result: [MotionSegment] = []
        for window in windows {
            let label = window.uncertain ? MotionSegment.uncertainLabel : window.label
            if let last = result.last, last.label == label {
                let count = Double(last.windows)
                result[result.count - 1].confidence = (last.confidence * count + window.confidence) / (count + 1)
                result[result.count - 1].windows += 1
                result[result.count - 1].end = window.end
            } else {
                if !result.isEmpty { result[result.count - 1].end = window.start }
                result.append(MotionSegment(label: label, start: window.start, end: window.end, windows: 1, confidence: window.confidence))
            }
        }
        return result
    }

    /// The votes: each label of a window that is not uncertain and how many such windows have it, most first.
    public var votes: [(label: String, count: Int)] {
        var counts: [String: Int] = [:], order: [String] = []
        for window in windows where !window.uncertain {
            if counts[window.label] == nil { order.append(window.label) }
            counts[window.label, default: 0] += 1
        }
        return order.map { ($0, counts[$0] ?? 0) }.enumerated()
            .sorted { $0.element.1 != $1.element.1 ? $0.element.1 > $1.element.1 : $0.offset < $1.offset }.map(\.element)
    }

    /// The answer of `windows` labelled by `model`, with its majority label.
    package init(windows: [MotionWindowPrediction], model: String) {
        self.windows = windows
        self.model = model
        // The majority among the windows that are not uncertain: the label with the most of them, then the higher
        // total confidence, then the first to appear. Each label (a recording has a handful) is found at its first
        // window and counted in one pass, in scratch of one index per window (on the stack for up to 128 windows).
        var best: (label: String, count: Int, confidence: Double)?
        withUnsafeTemporaryAllocation(of: Int.self, capacity: max(windows.count, 1)) { firsts in
            var distinct = 0
            for (index, window) in windows.enumerated() where !window.uncertain {
                if (0..<distinct).contains(where: { windows[firsts[$0]].label == window.label }) { continue }
                firsts[distinct] = index
                distinct += 1
            }
            for first in firsts[0..<distinct] {
                let label = windows[first].label
                var count = 0, confidence = 0.0
                for other in windows[first...] where !other.uncertain && other.label == label {
                    count += 1
                    confidence += other.confidence
                }
                if best.map({ count > $0.count || (count == $0.count && confidence > $0.confidence) }) ?? true {
                    best = (label, count, confidence)
                }
            }
        }
        uncertain = best == nil
        reason =
            windows.isEmpty
            ? "the recording has no windows"
            : best == nil ? "every window is uncertain: " + (windows.first?.reason ?? "") : nil
        label = best?.label ?? DecisionRule.unknownLabel
        confidence = best.map { $0.confidence / Double($0.count) } ?? 0
    }

    /// Equal when every stored field is (the probabilities follow from the windows).
    public static func == (lhs: MotionAnswer, rhs: MotionAnswer) -> Bool {
        lhs.windows == rhs.windows && lhs.label == rhs.label && lhs.confidence == rhs.confidence && lhs.uncertain == rhs.uncertain
            && lhs.reason == rhs.reason && lhs.model == rhs.model && lhs.classes == rhs.classes
            && lhs.windowProbabilities == rhs.windowProbabilities
    }
}

/// Something that labels a motion window's input (see `MotionWindowing`) as walking or running: the trained
/// model or the cadence rule (the two cases of `MotionRecognizer.Engine`, a `RecognizerEngine`).
package protocol MotionWindowClassifier: Sendable {
    /// Its name in an answer when no recognizer named it: the weights file's model name, or `cadence`.
    var name: String { get }
    /// The preprocessing whose inputs it reads.
    var windowing: MotionWindowing { get }
    /// The classes, in output order.
    var labels: [String] { get }
    /// Each window's class probabilities: `rows` windows of `labels.count` values into `output`, for `rows`
    /// inputs of `windowing.inputSize` in `inputs`. Allocates nothing (after the first call on a thread).
    func probabilities(_ inputs: UnsafeBufferPointer<Float>, rows: Int, into output: UnsafeMutableBufferPointer<Float>)
    /// How a window's probabilities become its answer (calibration, reject class, uncertainty floor): the weights
    /// file's `decision`, or `DecisionRule.legacy`.
    var decision: DecisionRule { get }
    /// Where `decision`'s reject class stands among `labels`, or `nil` when there is none.
    var rejectIndex: Int? { get }
}

extension MotionWindowClassifier {
    /// Found among the labels on each call (a trained classifier keeps its own, read once).
    package var rejectIndex: Int? { decision.rejectLabel.flatMap { labels.firstIndex(of: $0) } }

    /// Whether a window in which the phone barely moves is answered `still` by the stillness rule
    /// (`MotionStillness`): only for a model of the built-in moving states — labels among `walking` and `running`
    /// (and the reject class). A model trained on labels of the user's own (`sitting`, `cycling`, `still`, …)
    /// answers with those labels alone: the rule must not take over a class of the user's that may be the still one.
    package var appliesStillRule: Bool {
        let rejectLabel = decision.rejectLabel
        return labels.allSatisfy { MotionStillness.movingLabels.contains($0) || $0 == rejectLabel }
    }

    /// Every window of `recording` labelled, optionally averaging each window's probabilities with `smoothing`
    /// neighbours on each side (within a segment), and the majority label, the answer naming `model` (by default
    /// `name`).
    ///
    /// A window in which the phone barely moves is `still` (see `MotionStillness`); a window that spans a gap
    /// longer than `MotionRecordingReader.maximumBridge` is uncertain; a window whose scores are not finite (a
    /// model that overflowed) is `unknown` and uncertain, with confidence 0 and the reason. A recording that arrived below
    /// `MotionRecordingReader.minimumSampleRate`, or without one whole window, is an error naming its rate or
    /// length and what is needed; a window whose own samples arrived slower than that (a stretch of a recording that
    /// is fast enough as a whole) is uncertain, as a stream's window is.
    package func classify(_ recording: MotionRecording, smoothing: Int = 0, model: String? = nil) throws(DataError) -> MotionAnswer {
        // Each segment's signals computed into the scratch when its windows are made: nothing allocated for them.
        try classify(
            MotionRecordingFacts(
                recording.source, recording.sourceRate, recording.assumedRate, recording.segmentStarts, recording.bridgedGaps, recording.arrivals),
            smoothing: smoothing, model: model, lengths: { recording.segments[$0].count },
            signals: { index, scratch, body in
                let segment = recording.segments[index]
                let (vertical, horizontal) = (scratch.floats(0, segment.count), scratch.floats(1, segment.count))
                segment.withUnsafeBufferPointer { MotionWindowing.signals($0, vertical: vertical, horizontal: horizontal) }
                body(UnsafeBufferPointer(vertical), UnsafeBufferPointer(horizontal))
            })
    }

    /// `classify(_:smoothing:model:)` of a recording's signals (`MotionRecordingReader.readSignals`).
    package func classify(_ recording: MotionSignals, smoothing: Int = 0, model: String? = nil) throws(DataError) -> MotionAnswer {
        try classify(
            MotionRecordingFacts(
                recording.source, recording.sourceRate, recording.assumedRate, recording.segmentStarts, recording.bridgedGaps, recording.arrivals),
            smoothing: smoothing, model: model, lengths: { recording.segments[$0].vertical.count },
            signals: { index, _, body in
                let segment = recording.segments[index]
                segment.vertical.withUnsafeBufferPointer { vertical in segment.horizontal.withUnsafeBufferPointer { body(vertical, $0) } }
            })
    }

    /// The one classification of both: segment `i` has `lengths(i)` samples (`recording.segmentStarts.count`
    /// segments), and `signals(i, scratch, body)` calls `body` with its vertical and horizontal signals (which it
    /// may compute into the scratch's float buffers 0 and 1).
    private func classify(
        _ recording: MotionRecordingFacts, smoothing: Int, model: String?, lengths: (Int) -> Int,
        signals: (Int, MotionScratch, (UnsafeBufferPointer<Float>, UnsafeBufferPointer<Float>) -> Void) -> Void
    ) throws(DataError) -> MotionAnswer {
        let windowing = windowing, source = recording.source
        if let problem = MotionRecordingReader.rateProblem(sourceRate: recording.sourceRate, assumedRate: recording.assumedRate) {
            throw DataError(file: source, message: problem)
        }
        let segmentCount = recording.segmentStarts.count
        var longest = 0, windowCount = 0
        for index in 0..<segmentCount {
            longest = max(longest, lengths(index))
            windowCount += windowing.windowCount(samples: lengths(index))
        }
        try windowing.requireWindow(longest: longest, source: source)
        let classes = labels.count, size = windowing.inputSize
        let (deviation, horizontal) = (windowing.logVerticalDeviationIndex, windowing.logHorizontalMeanIndex)
        // The answer's own storage: its windows and their calibrated probabilities, written in place. The inputs
        // (a block of windows at a time: each window's input and scores depend on its own samples alone, bit for
        // bit), the scores and the intensities live in a scratch kept for the next call.
        var windows: [MotionWindowPrediction] = []
        windows.reserveCapacity(windowCount)
        var all = [Double](repeating: 0, count: windowCount * classes)
        MotionScratch.pool.with(make: MotionScratch()) { scratch in
            for (segmentIndex, segmentStart) in recording.segmentStarts.enumerated() {
                let rows = windowing.windowCount(samples: lengths(segmentIndex))
                if rows == 0 { continue }
                let block = min(rows, MotionScratch.windowBlock)
                let inputs = scratch.floats(2, block * size), scores = scratch.floats(3, rows * classes)
                let intensities = scratch.floats(4, 2 * rows)
                signals(segmentIndex, scratch) { vertical, horizontalSignal in
                    var first = 0
                    while first < rows {
                        let count = min(block, rows - first)
                        let span = (first * windowing.hop)..<(first * windowing.hop + (count - 1) * windowing.hop + windowing.window)
                        let blockInputs = UnsafeMutableBufferPointer(rebasing: inputs[0..<(count * size)])
                        windowing.windows(
                            vertical: UnsafeBufferPointer(rebasing: vertical[span]),
                            horizontal: UnsafeBufferPointer(rebasing: horizontalSignal[span]), into: blockInputs)
                        probabilities(
                            UnsafeBufferPointer(blockInputs), rows: count,
                            into: UnsafeMutableBufferPointer(rebasing: scores[(first * classes)..<((first + count) * classes)]))
                        for index in 0..<count {
                            intensities[2 * (first + index)] = blockInputs[index * size + deviation]
                            intensities[2 * (first + index) + 1] = blockInputs[index * size + horizontal]
                        }
                        first += count
                    }
                }
                smooth(scores, rows: rows, columns: classes, over: smoothing, sums: scratch.doubles(0, (rows + 1) * classes))
                let row = scratch.doubles(1, classes)
                for index in 0..<rows {
                    for column in 0..<classes { row[column] = Double(scores[index * classes + column]) }
                    let from = segmentStart + Double(index * windowing.hop) / windowing.rate
                    let to = from + Double(windowing.window) / windowing.rate
                    let place = windows.count * classes
                    let window = all.withUnsafeMutableBufferPointer { all in
                        prediction(
                            scores: UnsafeBufferPointer(row), intensity: (intensities[2 * index], intensities[2 * index + 1]),
                            from: from, to: to, bridgedGaps: recording.bridgedGaps,
                            arrivalRate: recording.arrivals?.rate(segment: segmentIndex, window: index, windowing: windowing),
                            calibrated: UnsafeMutableBufferPointer(rebasing: all[place..<(place + classes)]))
                    }
                    windows.append(window)
                }
            }
        }
        var answer = MotionAnswer(windows: windows, model: model ?? name)
        (answer.classes, answer.windowProbabilities) = (labels, all)
        return answer
    }

    /// One window's answer from its class scores (`labels` order) and its two intensity inputs (the logarithms of
    /// its vertical standard deviation and horizontal mean), the window running `from`…`to` seconds. The scores are
    /// decided by `decision`, as a shape's are (calibration, the reject class as `unknown`, uncertain under the
    /// floor; `unknown` and uncertain when a score is not finite); then a window that spans one of `bridgedGaps` is
    /// uncertain, and one in which the phone barely moves is `still` (for a model of the built-in moving states,
    /// `appliesStillRule`; with the stillness rule's own confidence,
    /// uncertain under the rule's floor); a
    /// window whose samples arrived at `arrivalRate` (`MotionArrivals`: a file's and a stream's alike) below
    /// `MotionRecordingReader.minimumSampleRate` is uncertain, for that reason. `classify` and `MotionStream` label every window with it.
    package func prediction(
        scores row: UnsafeBufferPointer<Double>, intensity: (Float, Float), from: Double, to: Double,
        bridgedGaps: [ClosedRange<Double>], arrivalRate: Double? = nil
    ) -> MotionWindowPrediction {
        withUnsafeTemporaryAllocation(of: Double.self, capacity: row.count) { calibrated in
            prediction(
                scores: row, intensity: intensity, from: from, to: to, bridgedGaps: bridgedGaps, arrivalRate: arrivalRate,
                calibrated: calibrated)
        }
    }

    /// `prediction(scores:intensity:from:to:bridgedGaps:arrivalRate:)`, also leaving the calibrated probabilities
    /// (what the confidence is one of) in `calibrated`, which must have one place per label.
    package func prediction(
        scores row: UnsafeBufferPointer<Double>, intensity: (Float, Float), from: Double, to: Double,
        bridgedGaps: [ClosedRange<Double>], arrivalRate: Double? = nil, calibrated: UnsafeMutableBufferPointer<Double>
    ) -> MotionWindowPrediction {
        let labels = labels, rule = decision
        precondition(calibrated.count == row.count, "prediction: \(row.count) scores, \(calibrated.count) places for the calibrated ones")
        var window = { (raw: UnsafeBufferPointer<Double>) in
            let decided = Decision.decide(raw: raw, rejectIndex: rejectIndex, rule: rule, calibrated: calibrated)
            let reason =
                Decision.nonFiniteReason(labels: labels, scores: row)
                ?? Decision.reason(
                    labels: labels, calibrated: UnsafeBufferPointer(calibrated), best: decided.best,
                    unknown: decided.unknown, rule: rule)
            return MotionWindowPrediction(
                start: from, end: to, label: decided.unknown ? DecisionRule.unknownLabel : labels[decided.best],
                confidence: decided.confidence, uncertain: decided.uncertain, reason: reason)
        }(row)
        guard row.allSatisfy(\.isFinite) else { return window }
        if !bridgedGaps.isEmpty, let gap = bridgedGaps.first(where: { $0.overlaps(from...to) }) {
            window.uncertain = true
            window.reason = String(
                format: "no samples for %.2f s from %.2f s: too long a gap to resolve a stride "
                    + "(at most %.2f s is bridged)", gap.upperBound - gap.lowerBound, gap.lowerBound,
                MotionRecordingReader.maximumBridge)
        } else {
            if let still = MotionStillness.confidence(logDeviation: intensity.0, logHorizontal: intensity.1), appliesStillRule {
                // Stillness is judged from the motion's intensity, not by the model: its confidence is the rule's own,
                // held to the same floor as the model's answers.
                let model = window.label
                (window.label, window.confidence, window.uncertain, window.reason) = (MotionStillness.label, still, false, nil)
                if still < rule.uncertainBelow {
                    window.uncertain = true
                    window.reason = String(
                        format: "confidence %d%% is below %d%%: the phone barely moves, but about as much as when it is "
                            + "carried; the model says %@", Int((100 * still).rounded()), Int((100 * rule.uncertainBelow).rounded()),
                        model)
                }
            }
            if let arrivalRate, !MotionRecordingReader.resolvesStride(rate: arrivalRate) {
                window.uncertain = true
                window.reason = String(
                    format: "samples arrived at %.1f Hz in this window; resolving a stride of up to %.1f steps a "
                        + "second needs at least %.0f Hz", arrivalRate, MotionRecordingReader.fastestStepRate,
                    MotionRecordingReader.minimumSampleRate)
            }
        }
        return window
    }

    /// Each row averaged with up to `radius` rows on each side.
    func smoothed(_ probabilities: Tensor, over requested: Int) -> Tensor {
        let (rows, columns) = (probabilities.shape[0], probabilities.shape[1])
        var values = probabilities.scalars
        var sums = [Double](repeating: 0, count: (rows + 1) * columns)
        values.withUnsafeMutableBufferPointer { values in
            sums.withUnsafeMutableBufferPointer { smooth(values, rows: rows, columns: columns, over: requested, sums: $0) }
        }
        return Tensor(shape: [rows, columns], scalars: values)
    }

    /// Each of `rows` rows of `columns` values averaged in place with up to `requested` rows on each side, from
    /// running sums kept in `sums` (`(rows + 1) · columns` places): linear in the rows whatever the radius.
    func smooth(
        _ values: UnsafeMutableBufferPointer<Float>, rows: Int, columns: Int, over requested: Int, sums: UnsafeMutableBufferPointer<Double>
    ) {
        // Any radius a caller passes: wider than the rows is all of them (and never overflows `row ± radius`).
        let radius = min(requested, rows)
        guard radius > 0 else { return }
        precondition(
            values.count >= rows * columns && sums.count >= (rows + 1) * columns,
            "smooth: \(rows)×\(columns) values in \(values.count) places and \(sums.count) sums")
        for column in 0..<columns { sums[column] = 0 }
        for row in 0..<rows {
            for column in 0..<columns { sums[(row + 1) * columns + column] = sums[row * columns + column] + Double(values[row * columns + column]) }
        }
        for row in 0..<rows {
            let (low, high) = (max(0, row - radius), min(rows - 1, row + radius))
            for column in 0..<columns {
                values[row * columns + column] = Float((sums[(high + 1) * columns + column] - sums[low * columns + column]) / Double(high - low + 1))
            }
        }
    }
}

/// What the answer and its errors say of a recording besides its signals.
private struct MotionRecordingFacts {
    let source: String, sourceRate: Double?, assumedRate: Double?, segmentStarts: [Double], bridgedGaps: [ClosedRange<Double>]
    let arrivals: MotionArrivals?
    init(
        _ source: String, _ sourceRate: Double?, _ assumedRate: Double?, _ segmentStarts: [Double], _ bridgedGaps: [ClosedRange<Double>],
        _ arrivals: MotionArrivals?
    ) {
        (self.source, self.sourceRate, self.assumedRate, self.segmentStarts, self.bridgedGaps) =
            (source, sourceRate, assumedRate, segmentStarts, bridgedGaps)
        self.arrivals = arrivals
    }
}

/// What `classify` needs beside the answer, kept for the next call on any recording: growable buffers of
/// signals, inputs, scores, intensities and sums.
final class MotionScratch {
    /// The most windows whose inputs are held at once (3 MB for the shipped windowing's 194 inputs).
    static let windowBlock = 4096

    /// The scratches waiting for the next call.
    static let pool = ReusePool<MotionScratch>()
    private var floatBuffers = [UnsafeMutableBufferPointer<Float>](repeating: .init(start: nil, count: 0), count: 5)
    private var doubleBuffers = [UnsafeMutableBufferPointer<Double>](repeating: .init(start: nil, count: 0), count: 2)

    /// Float buffer `slot` (0…4: vertical and horizontal signals, inputs, scores, intensities) with `count` places (contents left from before), grown when needed.
    func floats(_ slot: Int, _ count: Int) -> UnsafeMutableBufferPointer<Float> { Self.prefix(&floatBuffers[slot], count) }

    /// Double buffer `slot` (0…1) with `count` places, grown when needed.
    func doubles(_ slot: Int, _ count: Int) -> UnsafeMutableBufferPointer<Double> { Self.prefix(&doubleBuffers[slot], count) }

    /// The first `count` places of `buffer`, which is replaced by a larger one (zeroed) when it holds fewer.
    private static func prefix<T: Numeric & BitwiseCopyable>(_ buffer: inout UnsafeMutableBufferPointer<T>, _ count: Int)
        -> UnsafeMutableBufferPointer<T>
    {
        if buffer.count < count {
            buffer.deallocate()
            buffer = .allocate(capacity: max(count, 2 * buffer.count))
            buffer.initialize(repeating: 0)
        }
        return UnsafeMutableBufferPointer(rebasing: buffer[0..<count])
    }

    deinit {
        for buffer in floatBuffers { buffer.deallocate() }
        for buffer in doubleBuffers { buffer.deallocate() }
    }
}

extension MotionWindowing: ModelPreprocessing {
    /// `motion-autocorrelation`.
    public static var kind: String { RecognitionTask.motion.kind.rawValue }
    /// `motion`.
    public static var taskName: String { RecognitionTask.motion.rawValue }
    /// "a motion classifier with this windowing".
    public static var classifierName: String { "a motion classifier with this windowing" }
    /// `[inputSize]`: one window's features.
    public var inputShape: [Int] { [inputSize] }
}

extension TrainedClassifier: MotionWindowClassifier where Preprocessing == MotionWindowing {
    /// The windowing the file describes.
    public var windowing: MotionWindowing { preprocessing }
}

/// The non-ML fallback: the stride rate from the vertical autocorrelation, and intensity when the signal does
/// not repeat. It needs no weights.
///
/// A gait whose vertical signal repeats at a stride rate of at least 1.17 Hz (140 steps a minute, about where
/// people switch from walking to running) is running. When the signal repeats only weakly (autocorrelation under
/// 0.3 at every stride period), the vertical standard deviation decides: 0.9 g and more is running. The
/// confidence grows with the distance from the threshold.
public struct CadenceRecognizer: MotionWindowClassifier, InputScoringRule {
    /// The preprocessing whose inputs it reads.
    public let windowing: MotionWindowing
    /// Stride rates (Hz) at and above this are running.
    package static let runningStrideRate = 1.17
    /// Below this autocorrelation at the stride period the gait is not periodic enough to trust its rate.
    package static let minimumRepetition = 0.3
    /// With no clear stride, vertical standard deviations (g) at and above this are running.
    package static let runningIntensity = 0.9

    /// Creates the recognizer for inputs made by `windowing`, whose lags must reach a 0.6 Hz stride's period.
    public init(windowing: MotionWindowing = MotionWindowing()) { self.windowing = windowing }

    /// walking, running.
    public var labels: [String] { ["walking", "running"] }

    /// `cadence`.
    public var name: String { "cadence" }

    /// `DecisionRule.legacy`: no calibration, no reject class, uncertain below 70% (as the geometric recognizer).
    public var decision: DecisionRule { .legacy }

    /// One window's walking and running probabilities.
    public func classify(_ input: UnsafeBufferPointer<Float>) -> (walking: Double, running: Double) {
        let running: Double
        if let stride = windowing.strideRate(input), stride.strength >= Self.minimumRepetition {
            running = 1 / (1 + exp(-(stride.frequency - Self.runningStrideRate) / 0.04))
        } else {
            let deviation = exp(Double(input[windowing.logVerticalDeviationIndex]))
            running = 1 / (1 + exp(-log(deviation / Self.runningIntensity) / 0.1))
        }
        return (1 - running, running)
    }

    /// Each window's probabilities.
    public func probabilities(_ inputs: Tensor) -> Tensor {
        let rows = inputs.shape.first ?? 0, size = windowing.inputSize
        shapePrecondition(inputs.shape == [rows, size], "CadenceRecognizer: inputs \(inputs.shape), expected [windows, \(size)]")
        return Tensor(uninitializedShape: [rows, 2]) { out in
            inputs.withUnsafeBufferPointer { probabilities($0, rows: rows, into: out) }
        }
    }

    /// `rows` windows' walking and running probabilities into `output` (2 per row).
    public func probabilities(_ inputs: UnsafeBufferPointer<Float>, rows: Int, into output: UnsafeMutableBufferPointer<Float>) {
        let size = windowing.inputSize
        shapePrecondition(
            inputs.count == rows * size && output.count == rows * 2,
            "CadenceRecognizer: \(rows) rows in \(inputs.count) inputs and \(output.count) outputs, expected \(rows * size) and \(rows * 2)")
        for row in 0..<rows {
            let p = classify(UnsafeBufferPointer(rebasing: inputs[(row * size)..<((row + 1) * size)]))
            (output[2 * row], output[2 * row + 1]) = (Float(p.walking), Float(p.running))
        }
    }
}

/// When a phone is still: it barely moves, so it is neither walking nor running (a running app pauses its run
/// on this).
public enum MotionStillness {
    /// The label of a still window.
    public static let label = "still"

    /// The moving states the stillness rule completes: a model whose labels are among these (and its reject class)
    /// answers `still` by the rule (see `MotionWindowClassifier.appliesStillRule`).
    public static let movingLabels: Set<String> = ["walking", "running"]

    /// Below this vertical standard deviation (g) and horizontal mean (g) the phone is still: walking in a pocket
    /// moves it far more (a vertical standard deviation of 0.3 g and more), a phone on a table or in a hand at
    /// rest far less (sensor noise of a few mg).
    package static let stillLevel = 0.05

    /// How fast the confidence grows as the motion falls below `stillLevel`: the scale of the logistic in the
    /// logarithm of the level. Just under the level (a person standing and fidgeting looks alike) it is near
    /// 50%; at half the level 80%; at a tenth (5 mg, a phone on a table) 99%.
    package static let confidenceScale = 0.5

    /// The confidence that window `row` of `inputs` is still, or `nil` when it is not: a logistic in
    /// log(`stillLevel` / level), with level the larger of the vertical standard deviation and horizontal mean.
    package static func confidence(_ inputs: Tensor, row: Int, windowing: MotionWindowing) -> Double? {
        confidence(logDeviation: inputs[row, windowing.logVerticalDeviationIndex], logHorizontal: inputs[row, windowing.logHorizontalMeanIndex])
    }

    /// `confidence(_:row:windowing:)` from a window's two intensity inputs: the logarithms of its vertical standard
    /// deviation and horizontal mean.
    package static func confidence(logDeviation: Float, logHorizontal: Float) -> Double? {
        let deviation = exp(Double(logDeviation)), horizontal = exp(Double(logHorizontal))
        let level = max(deviation, horizontal)
        guard level < stillLevel else { return nil }
        return 1 / (1 + exp(-log(stillLevel / level) / confidenceScale))
    }
}
