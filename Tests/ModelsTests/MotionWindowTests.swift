import DataFiles
import Foundation
import Tensor
import Testing
import WeightsFormat

@testable import Models

/// The largest difference between `actual` and `expected` and where it is, after checking their sizes; records
/// an issue at the caller when it exceeds `tolerance`.
func expectClose(
    _ actual: [Float], _ expected: [Float], tolerance: Float, _ context: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard actual.count == expected.count else {
        Issue.record("\(context): \(actual.count) values, expected \(expected.count)", sourceLocation: sourceLocation)
        return
    }
    var worst: Float = 0, first: Int?
    for i in actual.indices {
        let difference = abs(actual[i] - expected[i])
        if !(difference <= tolerance) && first == nil { first = i }
        if !(difference <= worst) { worst = difference }
    }
    if let first {
        let message =
            "\(context): largest difference \(worst) (tolerance \(tolerance)); first bad value \(first): "
            + "\(actual[first]) against \(expected[first])"
        Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
    }
}

/// Every window's input by the naive twin, row after row.
func referenceWindows(_ windowing: MotionWindowing, vertical: [Float], horizontal: [Float]) -> [Float] {
    var rows: [Float] = []
    for start in windowing.starts(count: vertical.count) {
        var row = [Float](repeating: .nan, count: windowing.inputSize)
        vertical[start..<(start + windowing.window)].withUnsafeBufferPointer { v in
            horizontal[start..<(start + windowing.window)].withUnsafeBufferPointer { h in
                row.withUnsafeMutableBufferPointer { windowing.referenceInput(vertical: v, horizontal: h, into: $0) }
            }
        }
        rows += row
    }
    return rows
}

/// Every window's input from the whole signal (`windows`) and one window at a time (`input`).
func fastWindows(_ windowing: MotionWindowing, vertical: [Float], horizontal: [Float]) -> (recording: [Float], direct: [Float]) {
    let count = windowing.windowCount(samples: vertical.count)
    var recording = [Float](repeating: .nan, count: count * windowing.inputSize)
    vertical.withUnsafeBufferPointer { v in
        horizontal.withUnsafeBufferPointer { h in recording.withUnsafeMutableBufferPointer { windowing.windows(vertical: v, horizontal: h, into: $0) }
        }
    }
    var direct: [Float] = []
    for start in windowing.starts(count: vertical.count) {
        var row = [Float](repeating: .nan, count: windowing.inputSize)
        row.withUnsafeMutableBufferPointer { out in
            windowing.input(
                vertical: vertical[start..<(start + windowing.window)], horizontal: horizontal[start..<(start + windowing.window)], into: out)
        }
        direct += row
    }
    return (recording, direct)
}

/// Both fast paths against the naive twin on one recording's signals.
func expectFastPathsMatchReference(
    _ windowing: MotionWindowing, vertical: [Float], horizontal: [Float], _ name: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let expected = referenceWindows(windowing, vertical: vertical, horizontal: horizontal)
    let (recording, direct) = fastWindows(windowing, vertical: vertical, horizontal: horizontal)
    let context = "\(name), window \(windowing.window), hop \(windowing.hop), lags \(windowing.lags), \(vertical.count) samples"
    expectClose(recording, expected, tolerance: MotionWindowing.autocorrelationTolerance, "windows: " + context, sourceLocation: sourceLocation)
    // A window's input depends on its own samples only: alone, it is the same bits as in the recording.
    #expect(direct.map(\.bitPattern) == recording.map(\.bitPattern), "input alone against windows: \(context)", sourceLocation: sourceLocation)
}

/// Gait-like signals with noise: a vertical bounce every `period` samples, a horizontal magnitude around `level`.
func noisySignals(count: Int, period: Double = 37, level: Double = 0.4, offset: Double = 0, seed: UInt64) -> (vertical: [Float], horizontal: [Float])
{
    var generator = SeededGenerator(seed: seed)
    var vertical: [Float] = [], horizontal: [Float] = []
    for t in 0..<count {
        let phase = 2 * Double.pi * Double(t) / period
        vertical.append(Float(0.8 * sin(phase) + 0.3 * sin(2 * phase + 1) + generator.nextNormal(standardDeviation: 0.2)))
        horizontal.append(Float(offset + abs(level + 0.2 * cos(phase) + generator.nextNormal(standardDeviation: 0.1))))
    }
    return (vertical, horizontal)
}

@Suite("Motion windows: whole recordings and single windows against the naive twin")
struct MotionWindowTests {
    @Test func recordingsFromTheGenerator() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        for name in ["walking", "running"] {
            let recording = try MotionRecordingReader.read(root.appendingPathComponent("Datasets/examples/\(name).csv").path, window: 256)
            for segment in recording.segments {
                let (vertical, horizontal) = MotionWindowing.signals(segment)
                #expect(vertical.count > 256 + 64 * 10)
                expectFastPathsMatchReference(MotionWindowing(), vertical: vertical, horizontal: horizontal, name)
            }
        }
    }

    @Test(arguments: [256, 257, 256 + 64, 256 + 2 * 64 + 3, 256 + 63, 1000])
    func recordingLengths(count: Int) {
        let (vertical, horizontal) = noisySignals(count: count, seed: UInt64(count))
        expectFastPathsMatchReference(MotionWindowing(), vertical: vertical, horizontal: horizontal, "noisy gait")
    }

    @Test(arguments: [
        (8, 1, 1), (8, 3, 7), (8, 8, 7), (9, 7, 4), (17, 17, 16), (33, 33, 1), (33, 1, 32), (50, 7, 49),
        (64, 17, 33), (100, 33, 99), (100, 30, 17), (128, 32, 64), (255, 64, 96), (256, 64, 1), (256, 64, 255),
        (256, 256, 96), (300, 1, 299), (300, 3, 150), (300, 17, 31), (500, 125, 200), (2000, 500, 150), (4200, 2000, 40),
    ])
    func awkwardWindowings(window: Int, hop: Int, lags: Int) {
        let windowing = MotionWindowing(window: window, hop: hop, lags: lags)
        for count in [window, window + 1, window + 2 * hop + 3, window + 5 * hop] {
            let (vertical, horizontal) = noisySignals(count: count, period: Double(window) / 3.3, seed: UInt64(window * 1000 + hop + count))
            expectFastPathsMatchReference(windowing, vertical: vertical, horizontal: horizontal, "noisy gait")
        }
    }

    @Test(arguments: [(256, 64, 96, 9), (256, 64, 96, 3), (256, 64, 96, 95), (64, 17, 33, 33), (50, 7, 9, 9), (300, 3, 150, 1), (17, 17, 1, 1)])
    func smoothedLagsMatchTheReference(window: Int, hop: Int, lags: Int, smoothing: Int) {
        // Each autocorrelation the mean of its neighbours (fewer at the ends, all of them when the smoothing spans
        // every lag), in both fast paths and the naive twin; and the header carries it.
        let windowing = MotionWindowing(window: window, hop: hop, lags: lags, lagSmoothing: smoothing)
        for count in [window, window + 2 * hop + 3] {
            let (vertical, horizontal) = noisySignals(count: count, period: Double(window) / 3.3, seed: UInt64(window + smoothing + count))
            expectFastPathsMatchReference(windowing, vertical: vertical, horizontal: horizontal, "smoothed \(smoothing)")
        }
        #expect((try? MotionWindowing(parameters: windowing.parameters)) == windowing)
        #expect((windowing.parameters["lagSmoothing"] != nil) == (smoothing > 1), "a header without smoothing is the one before issue 48")
    }

    @Test func aHeaderWithABadLagSmoothingIsRefused() {
        for bad: JSONValue in [.number(8), .number(-1), .number(97), .number(2.5), .string("9")] {
            var parameters = MotionWindowing().parameters
            parameters["lagSmoothing"] = bad
            #expect(
                throws: DataError(
                    file: "weights", message: "the preprocessing header's lagSmoothing must be 0, 1 or an odd number of lags up to lags (96)")
            ) { try MotionWindowing(parameters: parameters) }
        }
    }

    @Test(arguments: [(8, 1, 3), (17, 16, 5), (64, 33, 64), (100, 63, 7), (256, 96, 64), (256, 255, 100), (300, 129, 1)])
    func oneWindowAloneIsTheSameBitsAsInARecording(window: Int, lags: Int, hop: Int) {
        // Tile counts 1…4 and a partial last tile, hops that divide the window and hops that do not: every window of
        // a recording, computed alone, against its row of the whole recording, and both against the naive twin.
        let windowing = MotionWindowing(window: window, hop: hop, lags: lags)
        let count = window + 5 * hop + hop / 2
        let (vertical, horizontal) = noisySignals(count: count, period: Double(window) / 3.3, level: 0.8, seed: UInt64(window + lags))
        expectFastPathsMatchReference(windowing, vertical: vertical, horizontal: horizontal, "noisy gait")
    }

    @Test(arguments: [(256, 64, 96), (100, 30, 99), (300, 17, 31), (33, 1, 32), (64, 64, 63)])
    func everyKernelLevelGivesTheSameBits(window: Int, hop: Int, lags: Int) {
        // The C kernel's fused multiply-adds are explicit and its order of summation fixed: any instruction set
        // (vector width) gives the bits of any other, so a recording's answers do not depend on the machine.
        let windowing = MotionWindowing(window: window, hop: hop, lags: lags)
        let count = window + 3 * hop + 5
        let (vertical, horizontal) = noisySignals(count: count, period: Double(window) / 3.3, seed: UInt64(window * 7 + lags))
        var results: [[UInt32]] = []
        for level in Kernels.availableLevels {
            var out = [Float](repeating: .nan, count: windowing.windowCount(samples: count) * windowing.inputSize)
            vertical.withUnsafeBufferPointer { v in
                horizontal.withUnsafeBufferPointer { h in
                    out.withUnsafeMutableBufferPointer { windowing.windows(vertical: v, horizontal: h, into: $0, level: level) }
                }
            }
            results.append(out.map(\.bitPattern))
        }
        #expect(results.count == Kernels.availableLevels.count && Set(results).count == 1, "levels \(Kernels.availableLevels)")
    }

    @Test func aStillPhoneGivesZerosAndTheFloor() {
        let windowing = MotionWindowing()
        let zeros = [Float](repeating: 0, count: 256 + 64 * 3)
        let (recording, direct) = fastWindows(windowing, vertical: zeros, horizontal: zeros)
        var expected: [Float] = []
        for _ in 0..<4 {
            expected += [Float](repeating: 0, count: 2 * windowing.lags) + [Float](repeating: Float(log(MotionWindowing.intensityFloor)), count: 2)
        }
        #expect(recording == expected)
        #expect(direct == expected)
        // A constant offset is no motion either.
        let (offsetShared, offsetDirect) = fastWindows(windowing, vertical: zeros, horizontal: zeros.map { _ in 0.7 })
        for row in 0..<4 {
            let base = row * windowing.inputSize
            #expect(offsetShared[base..<(base + 2 * windowing.lags)].allSatisfy { $0 == 0 })
            #expect(offsetDirect[base..<(base + 2 * windowing.lags)].allSatisfy { $0 == 0 })
            #expect(abs(offsetShared[base + 2 * windowing.lags + 1] - Float(log(0.7))) < 1e-6)
        }
    }

    @Test(arguments: [1.0, 30.0, 1000.0])
    func aHugeOffsetOnTheHorizontalSignalDoesNotCancel(offset: Double) {
        // Motion of 0.05 g around `offset`: the raw products are up to 10⁸ times the window's energy.
        var (vertical, horizontal) = noisySignals(count: 256 + 64 * 6, level: 0.05, offset: offset, seed: 9)
        vertical = vertical.map { $0 * 0.1 }
        expectFastPathsMatchReference(MotionWindowing(), vertical: vertical, horizontal: horizontal, "offset \(offset)")
    }

    @Test func aMeanThatDriftsFarFromTheRecordingsMean() {
        // Quiet stretches (2 mg of noise, just above the noise floor) at 0.01 g and 3 g: at 3 g the window's mean is
        // about 1500 of its standard deviations, where float sums of uncentred values would cancel.
        var generator = SeededGenerator(seed: 4)
        let count = 256 * 12
        let horizontal = (0..<count).map { t in Float((t / 768) % 2 == 0 ? 0.01 : 3) + Float(generator.nextNormal(standardDeviation: 0.002)) }
        let vertical = (0..<count).map { _ in Float(generator.nextNormal(standardDeviation: 0.002)) }
        expectFastPathsMatchReference(MotionWindowing(), vertical: vertical, horizontal: horizontal, "drifting mean")
    }

    @Test(arguments: [0, 1, 2, 3, 7, 8, 9, 17, 33, 256, 257])
    func signalsAreTheFeaturesOfEachSample(count: Int) {
        // The naive twin is `features(of:)` one sample at a time; the bits must match (the windows' inputs, and so
        // the shipped answers, rest on them). Some samples have no gravity, some an acceleration along it only.
        var generator = SeededGenerator(seed: UInt64(count))
        let samples = (0..<count).map { i -> MotionSample in
            let g = i % 5 == 1 ? (0.0, 0.0, 0.0) : (generator.nextNormal(standardDeviation: 0.3), 0.2, -0.95)
            let a =
                i % 5 == 2
                ? (g.0 * 0.7, g.1 * 0.7, g.2 * 0.7)
                : (
                    generator.nextNormal(standardDeviation: 0.4), generator.nextNormal(standardDeviation: 0.4),
                    generator.nextNormal(standardDeviation: 0.4)
                )
            return MotionSample(gravity: g, rotationRate: (0.1, 0.2, 0.3), userAcceleration: a)
        }
        let (vertical, horizontal) = MotionWindowing.signals(samples)
        #expect(vertical.map(\.bitPattern) == samples.map { Float(MotionWindowing.features(of: $0).vertical).bitPattern })
        #expect(horizontal.map(\.bitPattern) == samples.map { Float(MotionWindowing.features(of: $0).horizontal).bitPattern })
        // Every level of the C kernel (eight samples at a time, then one by one), not only this CPU's best.
        for level in Kernels.availableLevels {
            var v = [Float](repeating: .nan, count: count), h = [Float](repeating: .nan, count: count)
            samples.withUnsafeBufferPointer { s in
                v.withUnsafeMutableBufferPointer { v in
                    h.withUnsafeMutableBufferPointer { h in MotionWindowing.signals(s, vertical: v, horizontal: h, level: level) }
                }
            }
            #expect(v.map(\.bitPattern) == vertical.map(\.bitPattern), "level \(level)")
            #expect(h.map(\.bitPattern) == horizontal.map(\.bitPattern), "level \(level)")
        }
    }

    @Test func windowsOfSamplesAreTheWindowsOfTheirSignals() {
        let samples = gaitSamples(count: 256 + 64 * 5 + 11, period: 40, amplitude: 0.6)
        let windowing = MotionWindowing()
        let (vertical, horizontal) = MotionWindowing.signals(samples)
        let tensor = windowing.windows(samples)
        #expect(tensor.shape == [6, windowing.inputSize])
        #expect(tensor.scalars == fastWindows(windowing, vertical: vertical, horizontal: horizontal).recording)
        #expect(windowing.windows(Array(samples.prefix(255))).shape == [0, windowing.inputSize])
    }
}
