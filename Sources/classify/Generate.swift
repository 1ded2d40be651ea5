import ArgumentParser
import DataFiles
import Datasets
import Foundation
import Models
import Train

/// `classify generate shape --out Datasets [--count N] [--seed S]`
struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Generate a synthetic training dataset that imitates people's drawings or phone motion.",
        discussion: """
            shape: writes OUT/shapes/train.csv (COUNT drawings), OUT/shapes/test.csv (COUNT/4 drawings by other \
            simulated people) and one example drawing per class in OUT/examples/.

            motion: writes OUT/motion/train.csv (COUNT simulated people, each walking, running and still — sitting, \
            standing or the phone on a table — for about 30 s with a phone in a pocket), OUT/motion/test.csv \
            (COUNT/4 other people) and OUT/examples/walking.csv, running.csv and still.csv, in Core Motion's columns.

            The same seed always writes the same bytes; each file is written atomically.

            Examples: classify generate shape --out Datasets --count 3000 --seed 1
                      classify generate motion --out Datasets --count 24 --seed 1
            """
    )

    @Argument(help: "What to generate: shape or motion.")
    var task: RecognitionTask

    @Option(help: "The dataset folder (shapes/ or motion/, and examples/, are written inside it).")
    var out: String

    @Option(
        help:
            "shape: training drawings (default 3000); motion: training people, a walking, a running and a still session of about 30 s each (default 24). Test gets a quarter as many, by other people."
    )
    var count: Int?

    @Option(help: "Seed of the generator.")
    var seed: UInt64 = 1

    func validate() throws {
        let (range, unit) = task.generatedCount
        if let count, !range.contains(count) {
            throw ValidationError("--count must be between \(range.lowerBound) and \(range.upperBound) \(unit), got \(count)")
        }
    }

    func run() throws {
        switch task {
        case .shape: try generateShapes()
        case .motion: try generateMotion()
        }
    }

    /// `count` drawings for training and a quarter as many for testing, by other people, and the examples.
    private func generateShapes() throws {
        let root = URL(fileURLWithPath: out)
        let count = count ?? 3000
        let perPerson = 20
        var generator = ShapeGenerator(seed: seed)
        let training = generator.samples(people: count / perPerson, perPerson: perPerson)
        let test = generator.samples(people: max(1, count / 4 / perPerson), perPerson: perPerson, firstPerson: count / perPerson)
        var files = [
            ("shapes/train.csv", ShapeDatasetWriter.csv(training, prefix: "train")),
            ("shapes/test.csv", ShapeDatasetWriter.csv(test, prefix: "test")),
        ]
        for label in ShapeGenerator.labels {
            guard let example = test.first(where: { $0.label == label && $0.drawing.strokes.count == 1 }) ?? test.first(where: { $0.label == label })
            else { continue }
            files.append(("examples/\(label).csv", ShapeDatasetWriter.drawingCSV(example.drawing)))
        }
        try write(files, under: root)
        print(
            "wrote \(training.count) training drawings (\(count / perPerson) people) to \(out)/shapes/train.csv, "
                + "\(test.count) test drawings (\(max(1, count / 4 / perPerson)) other people) to \(out)/shapes/test.csv, "
                + "and \(ShapeGenerator.labels.count) examples to \(out)/examples/")
    }
}

extension Generate {
    /// motion: OUT/motion/train.csv (COUNT people, a walking, a running and a still session each, about 30 s
    /// each), OUT/motion/test.csv (COUNT/4 other people) and OUT/examples/walking.csv, running.csv and still.csv.
    func generateMotion() throws {
        let root = URL(fileURLWithPath: out)
        let people = count ?? 24
        var generator = MotionGenerator(seed: seed)
        let training = generator.sessions(people: people, seconds: 30)
        let test = generator.sessions(people: max(1, people / 4), seconds: 30, firstPerson: people)
        var files = [
            ("motion/train.csv", MotionGenerator.csv(training, prefix: "train")),
            ("motion/test.csv", MotionGenerator.csv(test, prefix: "test")),
        ]
        for label in MotionGenerator.labels {
            guard let example = test.first(where: { $0.label == label }) else { continue }
            var lines = ["timestamp," + coreMotionColumns.joined(separator: ",")]
            for (time, row) in zip(example.times, example.rows) {
                lines.append(String(format: "%.3f,", time) + row.map { String(format: "%.4f", $0) }.joined(separator: ","))
            }
            files.append(("examples/\(label).csv", lines.joined(separator: "\n") + "\n"))
        }
        try write(files, under: root)
        print(
            "wrote \(training.count) training sessions (\(people) \(people == 1 ? "person" : "people")) to \(out)/motion/train.csv, "
                + "\(test.count) test sessions (\(max(1, people / 4)) other \(people / 4 <= 1 ? "person" : "people")) to \(out)/motion/test.csv, and "
                + MotionGenerator.labels.joined(separator: ", ") + " examples to \(out)/examples/")
    }

    /// Writes each (path under `root`, text) atomically, creating folders as needed; a failure is one `error:`
    /// line and exit 74.
    func write(_ files: [(path: String, text: String)], under root: URL) throws {
        do {
            for (path, text) in files {
                let url = root.appendingPathComponent(path)
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try AtomicFile.write(Array(text.utf8), to: url)
            }
        } catch let error as AtomicFile.WriteError {
            throw failure(error)
        } catch {
            reportError("\(out): \(error.localizedDescription)")
            throw ExitCode(ExitStatus.ioError)
        }
    }
}
