import DataFiles
import Foundation
import Tensor
import Testing

@testable import Models

/// The window input computed the slow way, in Double: each signal less its mean, normalized autocorrelation at
/// lags 1…L, then ln(vertical SD) and ln(horizontal mean), floored at 1 mg.
func referenceInput(_ samples: ArraySlice<MotionSample>, lags: Int) -> [Double] {
    let features = samples.map(MotionWindowing.features)
    var result: [Double] = []
    var levels: [Double] = []
    for signal in [features.map(\.vertical), features.map(\.horizontal)] {
        let mean = signal.reduce(0, +) / Double(signal.count)
        let centered = signal.map { $0 - mean }
        let energy = centered.reduce(0) { $0 + $1 * $1 }
        for lag in 1...lags {
            var total = 0.0
            for i in 0..<(centered.count - lag) { total += centered[i] * centered[i + lag] }
            result.append(energy > Double(centered.count) * 1e-6 ? total / energy : 0)
        }
        levels.append(levels.isEmpty ? (energy / Double(signal.count)).squareRoot() : mean)
    }
    return result + levels.map { log(max($0, MotionWindowing.intensityFloor)) }
}

/// A gait-like recording: vertical user acceleration repeating every `period` samples, a horizontal sway, the
/// phone held at `rotation` (row-major 3×3, world → phone).
func gaitSamples(count: Int, period: Double, amplitude: Double, rotation: [Double] = [1, 0, 0, 0, 1, 0, 0, 0, 1]) -> [MotionSample] {
    func apply(_ v: (Double, Double, Double)) -> (Double, Double, Double) {
        (
            rotation[0] * v.0 + rotation[1] * v.1 + rotation[2] * v.2, rotation[3] * v.0 + rotation[4] * v.1 + rotation[5] * v.2,
            rotation[6] * v.0 + rotation[7] * v.1 + rotation[8] * v.2
        )
    }
    return (0..<count).map { i in
        let phase = 2 * Double.pi * Double(i) / period
        let up = amplitude * (sin(phase) + 0.4 * sin(2 * phase + 1) + (i % Int(period) == 0 ? 1.5 : 0))
        let forward = 0.3 * amplitude * cos(phase), side = 0.2 * amplitude * sin(phase / 2)
        // Gravity points down (−z in the world); "up" acceleration is along −gravity.
        return MotionSample(gravity: apply((0, 0, -1)), rotationRate: (0, 0, 0), userAcceleration: apply((forward, side, -up)))
    }
}

@Suite("Motion window input and the cadence recognizer")
struct MotionFeatureTests {
    @Test(arguments: [(64, 8, 5), (256, 64, 96), (100, 30, 99)])
    func inputMatchesTheDoubleReference(window: Int, hop: Int, lags: Int) {
        let windowing = MotionWindowing(window: window, hop: hop, lags: lags)
        var generator = SeededGenerator(seed: UInt64(window))
        let samples = (0..<(window + 2 * hop + 3)).map { _ in
            MotionSample(
                gravity: (generator.nextNormal(standardDeviation: 0.1), 0.3, -1), rotationRate: (0, 0, 0),
                userAcceleration: (
                    generator.nextNormal(standardDeviation: 0.5), generator.nextNormal(standardDeviation: 0.5),
                    generator.nextNormal(standardDeviation: 0.5)
                ))
        }
        let inputs = windowing.windows(samples)
        #expect(inputs.shape == [3, 2 * lags + 2])
        for (row, start) in windowing.starts(count: samples.count).enumerated() {
            let expected = referenceInput(samples[start..<(start + window)], lags: lags)
            let worst = expected.indices.map { abs(Double(inputs[row, $0]) - expected[$0]) }.max() ?? 0
            #expect(worst < 1e-4, "window \(row): largest difference \(worst)")
        }
    }

    @Test func inputDoesNotDependOnHowThePhoneSits() {
        let windowing = MotionWindowing()
        let upright = windowing.windows(gaitSamples(count: 300, period: 45, amplitude: 0.6))
        // 0.8 rad about an oblique axis.
        let (c, s) = (cos(0.8), sin(0.8)), (x, y, z) = (0.48, 0.6, 0.64)
        let rotation = [
            c + x * x * (1 - c), x * y * (1 - c) - z * s, x * z * (1 - c) + y * s,
            y * x * (1 - c) + z * s, c + y * y * (1 - c), y * z * (1 - c) - x * s,
            z * x * (1 - c) - y * s, z * y * (1 - c) + x * s, c + z * z * (1 - c),
        ]
        let tilted = windowing.windows(gaitSamples(count: 300, period: 45, amplitude: 0.6, rotation: rotation))
        let worst = zip(upright.scalars, tilted.scalars).map { abs($0 - $1) }.max() ?? 1
        #expect(worst < 1e-4, "largest difference \(worst)")
    }

    @Test(arguments: [(45.0, 50.0 / 45), (36.0, 50.0 / 36), (60.0, 50.0 / 60)])
    func strideRateIsTheRepetitionPeriod(period: Double, frequency: Double) throws {
        let windowing = MotionWindowing()
        let inputs = windowing.windows(gaitSamples(count: 256, period: period, amplitude: 0.7))
        let stride = try #require(
            inputs.scalars.withUnsafeBufferPointer { windowing.strideRate(UnsafeBufferPointer(rebasing: $0[0..<windowing.inputSize])) })
        #expect(abs(stride.frequency - frequency) < 1e-9)
        #expect(stride.strength > 0.5)
    }

    @Test func cadenceRecognizerSplitsAtTheWalkRunTransition() {
        let recognizer = CadenceRecognizer()
        // A stride every 50 samples (1.0 Hz) is walking; every 38 (1.32 Hz) is running; intensity alone does not
        // decide while the signal repeats.
        for (period, amplitude, expected) in [(50.0, 1.5, "walking"), (38.0, 0.3, "running"), (54.0, 0.5, "walking"), (34.0, 1.2, "running")] {
            let inputs = recognizer.windowing.windows(gaitSamples(count: 256, period: period, amplitude: amplitude))
            let p = recognizer.probabilities(inputs)
            #expect((p[0, 1] > 0.5 ? "running" : "walking") == expected, "period \(period), amplitude \(amplitude): \(p.scalars)")
        }
    }

    @Test func aSignalWithoutAStridePeakIsJudgedByIntensity() throws {
        // A slow 0.25 Hz sway: its autocorrelation falls steadily across the stride range, with no peak there.
        let windowing = MotionWindowing()
        let sway = (0..<256).map { i in
            MotionSample(gravity: (0, 0, -1), rotationRate: (0, 0, 0), userAcceleration: (0, 0, -0.3 * sin(2 * .pi * 0.25 * Double(i) / 50)))
        }
        let inputs = windowing.windows(sway)
        #expect(inputs.scalars.withUnsafeBufferPointer { windowing.strideRate(UnsafeBufferPointer(rebasing: $0[0..<windowing.inputSize])) } == nil)
        let p = CadenceRecognizer().probabilities(inputs)
        #expect(p[0, 0] > 0.99, "gentle (0.21 g SD) and aperiodic: walking, \(p.scalars)")
    }

    @Test func smoothingAveragesNeighbours() {
        let probabilities = Tensor(shape: [3, 2], scalars: [0.9, 0.1, 0.4, 0.6, 0.9, 0.1])
        let smoothed = CadenceRecognizer().smoothed(probabilities, over: 1)
        let expected: [Float] = [0.65, 0.35, 0.7333333, 0.2666667, 0.65, 0.35]
        #expect(zip(smoothed.scalars, expected).allSatisfy { abs($0 - $1) < 1e-6 }, "\(smoothed.scalars)")
    }

    @Test func aStillPhoneGivesZerosAndIsLabelledStill() throws {
        let windowing = MotionWindowing()
        let still = [MotionSample](repeating: MotionSample(gravity: (0, 0, -1), rotationRate: (0, 0, 0), userAcceleration: (0, 0, 0)), count: 300)
        let inputs = windowing.windows(still)
        #expect(inputs.scalars.allSatisfy { $0.isFinite })
        #expect(inputs[0, 0] == 0 && inputs[0, windowing.lags] == 0)
        #expect(abs(Double(inputs[0, 2 * windowing.lags]) - log(MotionWindowing.intensityFloor)) < 1e-6)
        let recording = MotionRecording(segments: [still], segmentStarts: [0], rate: 50, notes: [])
        let timeline = try CadenceRecognizer().classify(recording)
        #expect(timeline.windows.count == 1)
        #expect(timeline.windows[0].label == "still" && !timeline.windows[0].uncertain && timeline.windows[0].reason == nil)
        #expect(timeline.windows[0].confidence > 0.99, "no motion at all: \(timeline.windows[0].confidence)")
        #expect(timeline.label == "still" && !timeline.uncertain && timeline.reason == nil)
    }

    @Test func aRecordingShorterThanAWindowIsAPreciseError() {
        let recording = MotionRecording(
            segments: [gaitSamples(count: 200, period: 45, amplitude: 0.5), gaitSamples(count: 120, period: 45, amplitude: 0.5)],
            segmentStarts: [0, 10], rate: 50, notes: [])
        #expect(
            throws: DataError(
                file: "r.csv",
                message: "the recording is too short: its longest stretch without a gap has 200 samples "
                    + "(4.00 s at 50 Hz); one window needs 256 (5.12 s)")
        ) {
            var named = recording
            named.source = "r.csv"
            _ = try CadenceRecognizer().classify(named)
        }
    }

    @Test func timelineTimesSegmentsAndMajority() throws {
        let walk = gaitSamples(count: 256 + 64 * 2, period: 50, amplitude: 0.6), run = gaitSamples(count: 256, period: 36, amplitude: 1.2)
        let recording = MotionRecording(segments: [walk, run], segmentStarts: [0, 20], rate: 50, notes: [])
        let timeline = try CadenceRecognizer().classify(recording)
        #expect(timeline.windows.map(\.start) == [0, 1.28, 2.56, 20])
        #expect(timeline.windows.map(\.end) == [5.12, 6.4, 7.68, 25.12])
        #expect(timeline.windows.map(\.label) == ["walking", "walking", "walking", "running"])
        #expect(timeline.label == "walking")
        #expect(!timeline.uncertain && timeline.reason == nil)
        // Smoothing averages neighbours within a segment only: the lone running window keeps its label.
        let smoothed = try CadenceRecognizer().classify(recording, smoothing: 1)
        #expect(smoothed.windows.map(\.label) == ["walking", "walking", "walking", "running"])
    }

    @Test func majorityTiesGoToTheMoreConfidentLabel() {
        let windows = [
            MotionWindowPrediction(start: 0, end: 1, label: "walking", confidence: 0.6),
            MotionWindowPrediction(start: 1, end: 2, label: "running", confidence: 0.9),
            MotionWindowPrediction(start: 2, end: 3, label: "walking", confidence: 0.99, uncertain: true, reason: "a gap"),
        ]
        #expect(MotionAnswer(windows: windows, model: "test").label == "running", "the uncertain window does not vote")
    }

    @Test func weightsPreprocessingRoundTripsAndRejectsOtherKinds() throws {
        let windowing = MotionWindowing(window: 128, hop: 32, rate: 50, lags: 64)
        #expect(try MotionWindowing(parameters: windowing.parameters) == windowing)
        var old = windowing.parameters
        old["kind"] = .string("motion-windows")
        #expect(throws: DataError.self) { try MotionWindowing(parameters: old) }
        var wrong = windowing.parameters
        wrong["lags"] = .number(128)
        #expect(throws: DataError.self) { try MotionWindowing(parameters: wrong) }
    }
}
