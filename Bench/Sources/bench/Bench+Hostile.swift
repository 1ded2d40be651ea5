import ArgumentParser
import Foundation
import Models
import Tensor

extension Bench {
    /// `bench hostile`: the public library API driven with generated hostile values, as an app could pass them —
    /// thread counts and confirmations of any `Int`, points and samples that are NaN, infinite or huge, any
    /// smoothing, `assemble` of mismatched or broken rows. It prints, per operation, how many calls answered and how
    /// many were refused with an error, and the mean time of a call; a trap would end it, and an answer that breaks
    /// the API's promise (a batch answer unlike the single one, a confidence outside 0…1) exits 1.
    struct Hostile: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Drives the public library API with generated hostile values; prints answers, refusals and time per call.",
            discussion: "Example: .build-bench/release/bench hostile --rounds 200")

        @Option(help: "How many rounds of generated values (1…100000).")
        var rounds = 100

        @Option(help: "The generator's seed.")
        var seed: UInt64 = 23

        func validate() throws {
            guard (1...100_000).contains(rounds) else { throw ValidationError("--rounds must be between 1 and 100000, got \(rounds)") }
        }

        func run() throws {
            let shapes = try ShapeRecognizer.shipped()
            let motion = try MotionRecognizer.shipped()
            var generator = SeededGenerator(seed: seed)
            let hostileInts = [Int.min, -1, 0, 1, 2, 7, 10_000, Int.max]
            /// A plain value, or (one time in `odds`) NaN, an infinity, 1e308 or the least subnormal.
            func hostileDouble(odds: Int = 2) -> Double {
                guard generator.nextIndex(below: odds) == 0 else { return generator.nextUniform(in: -500..<500) }
                switch generator.nextIndex(below: 8) {
                case 0: return .nan
                case 1: return .infinity
                case 2: return -.infinity
                case 3: return 1e308
                case 4: return .leastNonzeroMagnitude
                default: return generator.nextUniform(in: -500..<500)
                }
            }
            var rows: [(name: String, answered: Int, refused: Int, seconds: Double)] = []
            var broken: [String] = []
            func measure(_ name: String, _ body: () -> Bool?) {
                var answered = 0, refused = 0
                let clock = ContinuousClock(), start = clock.now
                for _ in 0..<rounds {
                    switch body() {
                    case .some(true): answered += 1
                    case .some(false): broken.append(name)
                    case .none: refused += 1
                    }
                }
                let elapsed = clock.now - start
                rows.append((name, answered, refused, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
            }
            measure("ShapeRecognizer.recognize(batch:threads:)") {
                let drawings = (0..<3).map { _ in
                    // Half the drawings plain, half with a hostile value here and there.
                    let odds = generator.nextIndex(below: 2) == 0 ? Int.max : 20
                    return Drawing(strokes: [
                        (0..<(4 + generator.nextIndex(below: 30))).map { _ in DrawingPoint(x: hostileDouble(odds: odds), y: hostileDouble(odds: odds))
                        }
                    ])
                }
                let batch = shapes.recognize(batch: drawings, threads: hostileInts[generator.nextIndex(below: hostileInts.count)])
                var anyAnswer = false
                for (index, drawing) in drawings.enumerated() {
                    let single = try? shapes.recognize(drawing), together = try? batch.answer(at: index).get()
                    if single?.label != together?.label || !(0...1).contains(single?.confidence ?? 0) { return false }
                    anyAnswer = anyAnswer || single != nil
                }
                return anyAnswer ? true : nil
            }
            measure("MotionStream.append (any confirmations, samples)") {
                var stream = MotionStream(recognizer: motion, confirmations: hostileInts[generator.nextIndex(below: hostileInts.count)])
                var time = 0.0, appended = 0
                for _ in 0..<300 {
                    time += generator.nextIndex(below: 20) == 0 ? abs(hostileDouble()) : 0.02
                    let sample = MotionStreamSample(
                        time: time, gravity: (hostileDouble(), hostileDouble(), -1), userAcceleration: (hostileDouble(), 0, hostileDouble()))
                    if (try? stream.append(sample)) != nil { appended += 1 }
                }
                return appended > 0 ? true : nil
            }
            let recording = try MotionRecordingReader.read("Datasets/examples/walking.csv")
            measure("MotionRecognizer.smoothing (any Int)") {
                var recognizer = motion
                recognizer.smoothing = hostileInts[generator.nextIndex(below: hostileInts.count)]
                guard let answer = try? recognizer.recognize(recording) else { return false }
                return (0...1).contains(answer.confidence)
            }
            measure("MotionRecordingReader.assemble (any rows, times)") {
                let count = generator.nextIndex(below: 600)
                let odds = generator.nextIndex(below: 2) == 0 ? Int.max : 200
                // One call in ten has a row of 8 values.
                let short = generator.nextIndex(below: 10) == 0 ? generator.nextIndex(below: max(1, count)) : -1
                let values = (0..<count).map { row in (0..<(row == short ? 8 : 9)).map { _ in hostileDouble(odds: odds) / 100 } }
                var time = 0.0
                let times = (0..<(count + (generator.nextIndex(below: 20) == 0 ? 1 : 0))).map { _ in
                    time += generator.nextIndex(below: odds == Int.max ? Int.max : 50) == 0 ? hostileDouble() : 0.02
                    return time
                }
                return (try? MotionRecordingReader.assemble(values, times: times, coreMotion: true, rate: 50, window: 256)) != nil ? true : nil
            }
            print("operation                                          calls    answered  refused  per call")
            for row in rows {
                print(
                    padded(row.name, 50) + " " + padded("\(rounds)", 8) + " " + padded("\(row.answered)", 9) + " " + padded("\(row.refused)", 8) + " "
                        + humanSeconds(row.seconds / Double(rounds)))
            }
            if !broken.isEmpty {
                print("FAIL  \(broken.count) answers broke the API's promise: \(Set(broken).sorted().joined(separator: ", "))")
                throw ExitCode(1)
            }
            print("PASS  no trap, every answer sane, \(rows.count) operations × \(rounds) rounds")
        }
    }
}
