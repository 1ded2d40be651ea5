import DataFiles
import Foundation
import FuzzSupport
import Models

// One motion recording CSV (`classify motion FILE`) through the whole recognition path: the CSV reader, the
// recording reader (units, gravity, resampling, gaps) at the model's rate and window, then windowing, features
// and each link of the shipped fallback chain (int8, f32, cadence), each timeline checked.

private let input = InputFile("motion")
private let recognizers: [MotionRecognizer] = {
    var chain = ["motion-state.int8", "motion-state.f32"].map { variant in
        do {
            return MotionRecognizer(engine: .model(try MotionClassifier(file: shippedModel(variant))), model: variant)
        } catch {
            fatalError("the shipped \(variant) is not a motion classifier: \(error)")
        }
    }
    chain.append(MotionRecognizer.ruleOnly)
    return chain
}()

@main
enum FuzzMotion {
    static func main() { exit(runFuzzer(fuzzMotion)) }
}

/// libFuzzer's test function: one input, any bytes.
func fuzzMotion(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let path = input.write(data, size)
    // The CLI reads at the answering model's windowing; the shipped models and the cadence fallback share one.
    var read: [(windowing: MotionWindowing, result: Result<MotionRecording, DataError>)] = []
    for recognizer in recognizers {
        let windowing = recognizer.windowing
        let result =
            read.first { $0.windowing == windowing }?.result
            ?? Result { () throws(DataError) in
                try MotionRecordingReader.read(path, assumedRate: 50, rate: windowing.rate, window: windowing.window)
            }
        read.append((windowing, result))
        let recording: MotionRecording
        switch result {
        case let .success(value): recording = value
        case let .failure(error):
            requireInputError(error, path: path)
            continue
        }
        require(
            recording.segments.count == recording.segmentStarts.count,
            "\(recording.segments.count) segments, "
                + "\(recording.segmentStarts.count) starts")
        for sample in recording.segments.joined() {
            let values = [
                sample.gravity.x, sample.gravity.y, sample.gravity.z, sample.rotationRate.x, sample.rotationRate.y,
                sample.rotationRate.z, sample.userAcceleration.x, sample.userAcceleration.y, sample.userAcceleration.z,
            ]
            require(values.allSatisfy(\.isFinite), "a resampled sample is not finite: \(sample)")
        }
        do {
            requireSane(try recognizer.recognize(recording), labels: recognizer.answerLabels, model: recognizer.model)
        } catch {
            requireInputError(error, path: path)
        }
    }
    return 0
}
