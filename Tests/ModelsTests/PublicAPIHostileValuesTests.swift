import Foundation
import Tensor
import Testing

@testable import Models

/// The package root, for the bundled examples.
private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Values a caller can pass to the public API that trapped (SIGILL, "precondition failure" and no message in a
/// release build) before issue 23: each is now clamped as documented or refused with a `DataError`.
@Suite("Public API: hostile values are clamped or refused, never a trap")
struct PublicAPIHostileValuesTests {
    let walking = root.appendingPathComponent("Datasets/examples/walking.csv").path

    @Test(arguments: [0, -1, Int.min])
    func batchesWithFewerThanOneThreadRunOnOne(threads: Int) throws {
        let shapes = try ShapeRecognizer.shipped()
        #expect(shapes.recognize(batch: [], threads: threads).count == 0)
        let star = try DrawingReader.read(root.appendingPathComponent("Datasets/examples/star.csv").path)
        let one = shapes.recognize(batch: [star], threads: threads)
        #expect(try one.answer(at: 0).get().label == shapes.recognize(star).label)
        let motion = try MotionRecognizer.shipped()
        #expect(motion.recognize(batch: [], threads: threads).count == 0)
        let recording = try MotionRecordingReader.read(walking)
        #expect(try motion.recognize(batch: [recording], threads: threads).answer(at: 0).get().label == "walking")
    }

    @Test(arguments: [0, -1, Int.min])
    func aStreamWithFewerThanOneConfirmationConfirmsWithOne(confirmations: Int) throws {
        let recognizer = try MotionRecognizer.shipped()
        var stream = MotionStream(recognizer: recognizer, confirmations: confirmations)
        var single = MotionStream(recognizer: recognizer, confirmations: 1)
        let lines = try String(contentsOfFile: walking, encoding: .utf8).split(separator: "\n").dropFirst()
        var changes: [String] = [], expected: [String] = []
        for line in lines {
            let v = line.split(separator: ",").compactMap { Double($0) }
            let sample = MotionStreamSample(time: v[0], gravity: (v[4], v[5], v[6]), userAcceleration: (v[10], v[11], v[12]))
            for case let .change(change) in try stream.append(sample) { changes.append(change.to) }
            for case let .change(change) in try single.append(sample) { expected.append(change.to) }
        }
        #expect(changes == expected && changes.first == "walking", "\(changes)")
    }

    @Test(arguments: [Int.max, Int.min, -5, 1_000_000])
    func anySmoothingIsAnAnswer(smoothing: Int) throws {
        var recognizer = try MotionRecognizer.shipped()
        let recording = try MotionRecordingReader.read(walking)
        let plain = try recognizer.recognize(recording)
        recognizer.smoothing = smoothing
        let smoothed = try recognizer.recognize(recording)
        #expect(smoothed.windows.count == plain.windows.count && smoothed.label == "walking")
        if smoothing < 0 { #expect(smoothed.windows.map(\.confidence) == plain.windows.map(\.confidence)) }
        if smoothing > plain.windows.count {
            // Wider than the recording: every window averages all of them, so all have one answer.
            #expect(Set(smoothed.windows.map(\.confidence)).count == 1, "\(smoothed.windows.map(\.confidence))")
        }
    }

    @Test func smoothingWithRunningSumsIsTheAverageOfTheNeighbours() throws {
        let recognizer = try MotionRecognizer.shipped()
        guard case let .model(classifier) = recognizer.engine else {
            Issue.record("the shipped motion recognizer is not a model")
            return
        }
        var generator = SeededGenerator(seed: 23)
        let (rows, columns) = (40, 3)
        let scalars = (0..<(rows * columns)).map { _ in Float(generator.nextUniform(in: 0..<1)) }
        let smoothed = classifier.smoothed(Tensor(shape: [rows, columns], scalars: scalars), over: 4).scalars
        for row in 0..<rows {
            let range = max(0, row - 4)...min(rows - 1, row + 4)
            for column in 0..<columns {
                let average = range.reduce(0.0) { $0 + Double(scalars[$1 * columns + column]) } / Double(range.count)
                #expect(abs(Double(smoothed[row * columns + column]) - average) < 1e-6)
            }
        }
    }

    @Test func assembleRefusesWhatItCannotUse() throws {
        let row = [0, 0, -1, 0, 0, 0, 0, 0, 0.0]
        let times = (0..<600).map { Double($0) / 50 }
        let rows = [[Double]](repeating: row, count: 600)
        func refusal(_ values: [[Double]], _ times: [Double], rate: Double = 50, window: Int = 256) -> String? {
            do {
                _ = try MotionRecordingReader.assemble(values, times: times, coreMotion: true, rate: rate, window: window)
                return nil
            } catch {
                return error.message
            }
        }
        #expect(refusal(rows, times) == nil)
        #expect(refusal(rows, Array(times.prefix(10)))?.contains("600 rows of values but 10 times") == true)
        #expect(refusal(rows + [[1, 2]], times + [13])?.contains("row 600 has 2 values, expected 9") == true)
        #expect(refusal(rows, [.nan] + times.dropFirst())?.contains("row 0: time nan is not a finite number") == true)
        #expect(refusal(rows, times.reversed())?.contains("does not come after") == true)
        #expect(refusal(rows, times, rate: 0)?.contains("rate 0.0 Hz") == true)
        #expect(refusal(rows, times, rate: .infinity)?.contains("rate inf Hz") == true)
        #expect(refusal(rows, times, window: 0)?.contains("window 0") == true)
        #expect(refusal([[0, 0, .nan, 0, 0, 0, 0, 0, 0]] + rows.dropFirst(), times)?.contains("row 0: nan") == true)
        let span = refusal(rows, times.map { $0 * 12 })  // 4.2 Hz: 12 resampled samples a sample
        #expect(span?.contains("are they in seconds?") == true || span?.contains("resampling to 50 Hz would make") == true, "\(span ?? "accepted")")
    }

    @Test func retryPoliciesAreClamped() {
        #expect(RetryPolicy(retries: -1).retries == 0)
        #expect(RetryPolicy(retries: Int.max).retries == RetryPolicy.maximumRetries)
        #expect(RetryPolicy(backoff: .nan).backoff == 0.02 && RetryPolicy(backoff: -1).backoff == 0)
        var policy = RetryPolicy()
        policy.retries = Int.min
        policy.backoff = .infinity
        #expect(policy.retries == 0 && policy.backoff == 0.02)
    }

    /// A real recording too long for one call (56 hours at 50 Hz) is told to be classified in parts; timestamps in
    /// a larger unit still get the "are they in seconds?" hint (before: the hint for both).
    @Test func aRecordingTooLongForOneCallIsToldSo() {
        let rate = MotionWindowing().rate
        let long = (0..<10_100_000).map { Double($0) / rate }
        let sparse = (0..<1_000_000).map { Double($0) * 0.24 }  // 12M samples at 50 Hz from 1M
        func message(_ times: [Double]) -> String {
            do {
                try MotionRecordingReader.checkSpan(times, rate: rate, file: "r")
                return "accepted"
            } catch {
                return error.message
            }
        }
        #expect(message(long).contains("(56.1 hours), more than 10000000 samples at 50 Hz") && message(long).contains("classify it in parts"))
        #expect(message(sparse).hasSuffix("are they in seconds?"), "\(message(sparse))")
    }
}
