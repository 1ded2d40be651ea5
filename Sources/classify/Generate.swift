import ArgumentParser
import Foundation
import Models
import Train

/// `classify generate shape --out Datasets [--count N] [--seed S]`
struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Generate a synthetic training dataset that imitates people's drawings.",
        discussion: """
            shape: writes OUT/shapes/train.csv (COUNT drawings), OUT/shapes/test.csv (COUNT/4 drawings by other \
            simulated people) and one example drawing per class in OUT/examples/. The same seed always writes the \
            same bytes; each file is written atomically.

            Example: classify generate shape --out Datasets --count 3000 --seed 1
            """
    )

    @Argument(help: "What to generate: shape.")
    var task: Task

    @Option(help: "The dataset folder (shapes/ and examples/ are written inside it).")
    var out: String

    @Option(help: "shape: training drawings; motion: training people (two sessions each). Test gets a quarter as many, by other people.")
    var count = 3000

    @Option(help: "Seed of the generator.")
    var seed: UInt64 = 1

    func validate() throws {
        guard count >= 20 && count <= 1_000_000 else { throw ValidationError("--count must be between 20 and 1000000, got \(count)") }
    }

    func run() throws {
        if task == .motion { return try generateMotion() }
        let root = URL(fileURLWithPath: out)
        let perPerson = 20
        var generator = ShapeGenerator(seed: seed)
        let training = generator.samples(people: count / perPerson, perPerson: perPerson)
        let test = generator.samples(people: max(1, count / 4 / perPerson), perPerson: perPerson, firstPerson: count / perPerson)
        do {
            for folder in ["shapes", "examples"] {
                try FileManager.default.createDirectory(at: root.appendingPathComponent(folder), withIntermediateDirectories: true)
            }
            try AtomicFile.write(Array(ShapeDatasetWriter.csv(training, prefix: "train").utf8), to: root.appendingPathComponent("shapes/train.csv"))
            try AtomicFile.write(Array(ShapeDatasetWriter.csv(test, prefix: "test").utf8), to: root.appendingPathComponent("shapes/test.csv"))
            for label in ShapeGenerator.labels {
                guard let example = test.first(where: { $0.label == label && $0.drawing.strokes.count == 1 }) ?? test.first(where: { $0.label == label }) else { continue }
                try AtomicFile.write(Array(ShapeDatasetWriter.drawingCSV(example.drawing).utf8), to: root.appendingPathComponent("examples/\(label).csv"))
            }
        } catch let error as AtomicFile.WriteError {
            throw failure(error)
        } catch {
            reportError("\(out): \(error.localizedDescription)")
            throw ExitCode(ExitStatus.ioError)
        }
        print("wrote \(training.count) training drawings (\(count / perPerson) people) to \(out)/shapes/train.csv, "
              + "\(test.count) test drawings (\(max(1, count / 4 / perPerson)) other people) to \(out)/shapes/test.csv, "
              + "and \(ShapeGenerator.labels.count) examples to \(out)/examples/")
    }
}

extension Generate {
    /// motion: OUT/motion/train.csv (COUNT people, a walking and a running session each, about 30 s each),
    /// OUT/motion/test.csv (COUNT/4 other people) and OUT/examples/walking.csv and running.csv.
    func generateMotion() throws {
        let root = URL(fileURLWithPath: out)
        let people = count == 3000 ? 30 : count
        var generator = MotionGenerator(seed: seed)
        let training = generator.sessions(people: people, seconds: 30)
        let test = generator.sessions(people: max(1, people / 4), seconds: 30, firstPerson: people)
        do {
            for folder in ["motion", "examples"] {
                try FileManager.default.createDirectory(at: root.appendingPathComponent(folder), withIntermediateDirectories: true)
            }
            try AtomicFile.write(Array(MotionGenerator.csv(training, prefix: "train").utf8), to: root.appendingPathComponent("motion/train.csv"))
            try AtomicFile.write(Array(MotionGenerator.csv(test, prefix: "test").utf8), to: root.appendingPathComponent("motion/test.csv"))
            for label in MotionGenerator.labels {
                guard let example = test.first(where: { $0.label == label }) else { continue }
                var lines = ["timestamp," + coreMotionColumns.joined(separator: ",")]
                for (time, row) in zip(example.times, example.rows) {
                    lines.append(String(format: "%.3f,", time) + row.map { String(format: "%.4f", $0) }.joined(separator: ","))
                }
                try AtomicFile.write(Array((lines.joined(separator: "\n") + "\n").utf8), to: root.appendingPathComponent("examples/\(label).csv"))
            }
        } catch let error as AtomicFile.WriteError {
            throw failure(error)
        } catch {
            reportError("\(out): \(error.localizedDescription)")
            throw ExitCode(ExitStatus.ioError)
        }
        print("wrote \(training.count) training sessions (\(people) people) to \(out)/motion/train.csv, \(test.count) test sessions "
              + "(\(max(1, people / 4)) other people) to \(out)/motion/test.csv, and walking and running examples to \(out)/examples/")
    }
}
