import Foundation
import Models
import Tensor
import Train

/// `bench motion`: one window's preprocessing (orientation-free signals, autocorrelations, intensities) and
/// inference, for each shipped weights file, on one thread.
struct MotionBenchmark {
    let plan: TimingPlan
    let weightsFolder: String

    func run() throws -> [Measurement] {
        BLAS.maxThreads = 1
        var generator = MotionGenerator(seed: 78)
        // Eight generated sessions (rows: attitude, gravity, rotation rate, user acceleration; `assemble` takes
        // gravity, user acceleration, rotation rate) of both gaits; each benchmark cuts one-window recordings from their start and end.
        let segments: [[MotionSample]] = generator.sessions(people: 4, seconds: 12).map { session in
            MotionRecordingReader.assemble(session.rows.map { Array($0[3..<6] + $0[9..<12] + $0[6..<9]) }, times: session.times, coreMotion: true,
                                           rate: 50, window: 256).segments[0]
        }
        func windows(of length: Int) -> [[MotionSample]] {
            segments.flatMap { [Array($0[0..<length]), Array($0[($0.count - length)...])] }
        }
        var measurements: [Measurement] = []
        var next = 0
        for (format, compact) in [("int8", false), ("int8", true), ("f32", false)] {
            let path = "\(weightsFolder)/motion-state.\(format).weights"
            let file = try ModelFile(contentsOf: URL(fileURLWithPath: path))
            let classifier = try MotionClassifier(file: file)
            let model = compact ? file.makeModel(compact: true) : classifier.model
            let variant = compact ? "\(format) compact" : format
            let windowing = classifier.windowing, windows = windows(of: windowing.window)
            measurements += measure("motion: preprocess + \(variant) inference", flops: nil, plan: plan, [
                Candidate(impl: "tensor") {
                    next = (next + 1) % windows.count
                    return model(windowing.windows(windows[next])).scalars[0]
                },
            ])
            let inputs = windows.map(windowing.windows)
            measurements += measure("motion: \(variant) inference only", flops: nil, plan: plan, [
                Candidate(impl: "tensor") {
                    next = (next + 1) % inputs.count
                    return model(inputs[next]).scalars[0]
                },
            ])
        }
        let windowing = MotionWindowing(), windows = windows(of: windowing.window)
        measurements += measure("motion: preprocess only", flops: nil, plan: plan, [
            Candidate(impl: "tensor") {
                next = (next + 1) % windows.count
                return windowing.windows(windows[next]).scalars[0]
            },
        ])
        let cadence = CadenceRecognizer(windowing: windowing)
        measurements += measure("motion: preprocess + cadence fallback", flops: nil, plan: plan, [
            Candidate(impl: "tensor") {
                next = (next + 1) % windows.count
                return cadence.probabilities(windowing.windows(windows[next])).scalars[0]
            },
        ])
        return measurements
    }
}
