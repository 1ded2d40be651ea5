import DataFiles
import Foundation
import FuzzSupport
import Models

// The public library API driven with the values a caller can pass, read from the input as a little program: each
// operation a byte, its integers and doubles raw bit patterns (so NaN, ±inf, 1e308, Int.min and Int.max come up).
// Shape batches with any thread count and drawings of any points; motion streams with any confirmations, units,
// sample times and values; recognizers with any smoothing, batch and thread count; `MotionRecordingReader.assemble`
// with any rows, times, rate and window; retry policies with any retries and backoff. Every call must return an
// answer or throw its error: never trap, and every answer is sane.

private let shapes: ShapeRecognizer = {
    do {
        return ShapeRecognizer(engine: .model(try ShapeClassifier(file: shippedModel("shape-classifier.int8"))), model: "shape-classifier.int8")
    } catch {
        fatalError("the shipped shape-classifier.int8 is not a shape classifier: \(error)")
    }
}()
private let motion: MotionRecognizer = {
    do {
        return MotionRecognizer(engine: .model(try MotionClassifier(file: shippedModel("motion-state.int8"))), model: "motion-state.int8")
    } catch {
        fatalError("the shipped motion-state.int8 is not a motion classifier: \(error)")
    }
}()
private let recording: MotionRecording = {
    do {
        return try fixedRecording(motion.windowing)
    } catch {
        fatalError("the fixed recording does not read: \(error)")
    }
}()

/// The input as values: bytes taken in order, zeros once it is spent.
private struct Cursor {
    let bytes: UnsafeBufferPointer<UInt8>
    var at = 0

    mutating func byte() -> UInt8 {
        defer { at += 1 }
        return at < bytes.count ? bytes[at] : 0
    }

    mutating func int() -> Int {
        (0..<8).reduce(0) { value, shift in value | Int(byte()) << (8 * shift) }
    }

    /// A small count (0…`limit`), so that loops stay short.
    mutating func count(_ limit: Int) -> Int { Int(byte()) % (limit + 1) }

    /// Any double: one byte picks a plain value (most of the time) or raw bits (NaN, inf, huge, subnormal).
    mutating func double() -> Double {
        let kind = byte()
        if kind < 200 { return Double(Int8(bitPattern: byte())) / 16 }
        return Double(bitPattern: UInt64(bitPattern: Int64(int())))
    }
}

@main
enum FuzzAPI {
    static func main() { exit(runFuzzer(fuzzAPI)) }
}

/// libFuzzer's test function: one input, any bytes.
func fuzzAPI(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    var input = Cursor(bytes: UnsafeBufferPointer(start: data, count: size))
    for _ in 0..<8 where input.at < size {
        switch input.byte() % 6 {
        case 0: shapeBatch(&input)
        case 1: motionStream(&input)
        case 2: smoothing(&input)
        case 3: assemble(&input)
        case 4: motionBatch(&input)
        default: retryPolicy(&input)
        }
    }
    return 0
}

/// Drawings of any points (a few strokes), one by one and as a batch on any number of threads: the same answers.
private func shapeBatch(_ input: inout Cursor) {
    let drawings = (0..<input.count(3)).map { _ in
        Drawing(strokes: (0..<input.count(2)).map { _ in (0..<input.count(40)).map { _ in DrawingPoint(x: input.double(), y: input.double()) } })
    }
    let threads = input.int()
    let batch = shapes.recognize(batch: drawings, threads: threads)
    require(batch.count == drawings.count, "\(drawings.count) drawings, \(batch.count) answers at threads \(threads)")
    for (index, drawing) in drawings.enumerated() {
        let single = Result { () throws(DataError) in try shapes.recognize(drawing) }
        switch (single, batch.answer(at: index)) {
        case let (.success(alone), .success(together)):
            requireSane(alone, from: shapes)
            require(alone.label == together.label, "drawing \(index): \(alone.label) alone, \(together.label) in a batch")
        case (.failure, .failure): break
        default: require(false, "drawing \(index): answered one way and refused the other")
        }
    }
}

/// A stream with any confirmations and units, fed samples of any times and values: each append answers or throws.
private func motionStream(_ input: inout Cursor) {
    let units: MotionStream.Units = [.automatic, .g, .metersPerSecondSquared][input.count(2)]
    var stream = MotionStream(recognizer: motion, confirmations: input.int(), units: units)
    var time = input.double()
    for _ in 0..<input.count(200) {
        time += input.byte() < 240 ? 0.02 : input.double()
        let raw = input.byte() & 1 == 1
        let sample =
            raw
            ? MotionStreamSample(time: time, acceleration: (input.double(), input.double(), input.double()))
            : MotionStreamSample(
                time: time, gravity: (input.double(), input.double(), input.double()),
                userAcceleration: (input.double(), input.double(), input.double()))
        do {
            for case let .window(window) in try stream.append(sample) {
                requireProbability(window.confidence, "a stream window's confidence")
            }
        } catch {
            require(!error.message.isEmpty, "a stream error without a message")
        }
        if input.byte() == 255 { _ = stream.pause() }
        if input.byte() == 254 { stream.reset() }
    }
    require(stream.changes.count <= MotionStream.keptChanges, "\(stream.changes.count) changes kept")
}

/// Any smoothing of the fixed recording: an answer with its windows.
private func smoothing(_ input: inout Cursor) {
    var recognizer = motion
    recognizer.smoothing = input.int()
    do {
        requireSane(try recognizer.recognize(recording), labels: recognizer.answerLabels, model: recognizer.model)
    } catch {
        require(false, "smoothing \(recognizer.smoothing): the fixed recording was refused: \(error)")
    }
}

/// Rows, times, a rate and a window of any values: a recording or a `DataError`.
private func assemble(_ input: inout Cursor) {
    let rows = (0..<input.count(60)).map { _ in (0..<(input.byte() < 250 ? 9 : input.count(12))).map { _ in input.double() } }
    var time = 0.0
    let times = (0..<(input.byte() < 250 ? rows.count : input.count(60))).map { _ in
        time += input.byte() < 240 ? 0.02 : input.double()
        return time
    }
    let rate = input.byte() < 200 ? 50 : input.double(), window = input.byte() < 200 ? 256 : input.int()
    do {
        let recording = try MotionRecordingReader.assemble(rows, times: times, coreMotion: input.byte() & 1 == 1, rate: rate, window: window)
        require(recording.segments.count == recording.segmentStarts.count, "segments and their starts differ in number")
    } catch {
        require(!error.message.isEmpty, "an assemble error without a message")
    }
}

/// Batches of the fixed recording on any number of threads.
private func motionBatch(_ input: inout Cursor) {
    let count = input.count(3), threads = input.int()
    let batch = motion.recognize(batch: Array(repeating: recording, count: count), threads: threads)
    require(batch.count == count, "\(count) recordings, \(batch.count) answers at threads \(threads)")
}

/// Retry policies of any retries and backoff: clamped.
private func retryPolicy(_ input: inout Cursor) {
    var policy = RetryPolicy(retries: input.int(), backoff: input.double())
    policy.retries = input.int()
    policy.backoff = input.double()
    require(
        (0...RetryPolicy.maximumRetries).contains(policy.retries) && policy.backoff >= 0 && policy.backoff <= RetryPolicy.maximumBackoff,
        "policy \(policy.retries), \(policy.backoff)")
}
