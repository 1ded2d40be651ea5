import ArgumentParser
import DataFiles
import Datasets
import Foundation
import Models
import Train
import WeightsFormat

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

    /// `count` drawings for training and a quarter as many for testing, by other people, and the examples. The
    /// datasets are written 10,000 drawings (500 people) at a time, so memory does not grow with `count`.
    private func generateShapes() throws {
        let root = URL(fileURLWithPath: out)
        let count = count ?? 3000
        let perPerson = 20
        let (trainingPeople, testPeople) = (count / perPerson, max(1, count / 4 / perPerson))
        var generator = ShapeGenerator(seed: seed)
        // The generator cycles the labels by person within one call; parts that start at a multiple of the label
        // count give the rows of one call for every person, bit for bit.
        let part = 100 * ShapeGenerator.labels.count
        let training = try writeInParts("shapes/train.csv", under: root, header: ShapeDatasetWriter.header, people: trainingPeople, part: part) {
            first, people in
            let samples = generator.samples(people: people, perPerson: perPerson, firstPerson: first)
            return (ShapeDatasetWriter.rows(samples, prefix: "train", firstIndex: first * perPerson), samples.count)
        }
        // Each class's example: the first one-stroke test drawing of it, else its first test drawing.
        var examples: [String: (oneStroke: Drawing?, first: Drawing?)] = [:]
        let test = try writeInParts("shapes/test.csv", under: root, header: ShapeDatasetWriter.header, people: testPeople, part: part) {
            first, people in
            let samples = generator.samples(people: people, perPerson: perPerson, firstPerson: trainingPeople + first)
            for sample in samples {
                var example = examples[sample.label] ?? (nil, nil)
                if example.first == nil { example.first = sample.drawing }
                if example.oneStroke == nil, sample.drawing.strokes.count == 1 { example.oneStroke = sample.drawing }
                examples[sample.label] = example
            }
            return (ShapeDatasetWriter.rows(samples, prefix: "test", firstIndex: first * perPerson), samples.count)
        }
        let files = ShapeGenerator.labels.compactMap { label in
            (examples[label]?.oneStroke ?? examples[label]?.first).map { ("examples/\(label).csv", ShapeDatasetWriter.drawingCSV($0)) }
        }
        try write(files, under: root)
        print(
            "wrote \(training) training drawings (\(trainingPeople) people) to \(out)/shapes/train.csv, "
                + "\(test) test drawings (\(testPeople) other people) to \(out)/shapes/test.csv, "
                + "and \(ShapeGenerator.labels.count) examples to \(out)/examples/")
    }
}

extension Generate {
    /// motion: OUT/motion/train.csv (COUNT people, a walking, a running and a still session each, about 30 s
    /// each), OUT/motion/test.csv (COUNT/4 other people) and OUT/examples/walking.csv, running.csv and still.csv.
    /// The datasets are written a few people at a time, so memory does not grow with COUNT.
    func generateMotion() throws {
        let root = URL(fileURLWithPath: out)
        let people = count ?? 24
        let testPeople = max(1, people / 4)
        let perPerson = MotionGenerator.labels.count
        var generator = MotionGenerator(seed: seed)
        let training = try writeInParts("motion/train.csv", under: root, header: MotionGenerator.csvHeader, people: people, part: 20) {
            first, count in
            let sessions = generator.sessions(people: count, seconds: 30, firstPerson: first)
            return (MotionGenerator.csvRows(sessions, prefix: "train", firstIndex: first * perPerson), sessions.count)
        }
        var examples: [String: MotionGenerator.Session] = [:]
        let test = try writeInParts("motion/test.csv", under: root, header: MotionGenerator.csvHeader, people: testPeople, part: 20) {
            first, count in
            let sessions = generator.sessions(people: count, seconds: 30, firstPerson: people + first)
            for session in sessions where examples[session.label] == nil { examples[session.label] = session }
            return (MotionGenerator.csvRows(sessions, prefix: "test", firstIndex: first * perPerson), sessions.count)
        }
        let files = MotionGenerator.labels.compactMap { label in
            examples[label].map { example in
                var lines = ["timestamp," + coreMotionColumns.joined(separator: ",")]
                for (time, row) in zip(example.times, example.rows) {
                    lines.append(String(format: "%.3f,", time) + row.map { String(format: "%.4f", $0) }.joined(separator: ","))
                }
                return ("examples/\(label).csv", lines.joined(separator: "\n") + "\n")
            }
        }
        try write(files, under: root)
        print(
            "wrote \(training) training sessions (\(people) \(people == 1 ? "person" : "people")) to \(out)/motion/train.csv, "
                + "\(test) test sessions (\(testPeople) other \(people / 4 <= 1 ? "person" : "people")) to \(out)/motion/test.csv, and "
                + MotionGenerator.labels.joined(separator: ", ") + " examples to \(out)/examples/")
    }

    /// Writes `path` under `root` atomically a part at a time: `header`, then the rows `rows(first, count)` gives
    /// for people `first..<first + count`, `part` people at a time. Returns how many items the rows held; a failure
    /// is one `error:` line and exit 74, with nothing left at the path but what was there. Interrupted, it removes
    /// its temporary file (`InterruptCleanup`).
    func writeInParts(
        _ path: String, under root: URL, header: String, people: Int, part: Int, rows: (_ first: Int, _ count: Int) -> (text: String, items: Int)
    ) throws -> Int {
        var items = 0
        defer { InterruptCleanup.clear() }
        try writing {
            try AtomicFile.write(to: try fileURL(path, under: root), temporary: InterruptCleanup.removeOnInterrupt) {
                emit throws(AtomicFile.WriteError) in
                try emit(Array((header + "\n").utf8))
                for first in stride(from: 0, to: people, by: part) {
                    let (text, count) = rows(first, min(part, people - first))
                    items += count
                    try emit(Array(text.utf8))
                }
            }
        }
        return items
    }

    /// Writes each (path under `root`, text) atomically, creating folders as needed; a failure is one `error:`
    /// line and exit 74.
    func write(_ files: [(path: String, text: String)], under root: URL) throws {
        try writing {
            for (path, text) in files { try AtomicFile.write(Array(text.utf8), to: try fileURL(path, under: root)) }
        }
    }

    /// `path` under `root`, its folder created.
    private func fileURL(_ path: String, under root: URL) throws -> URL {
        let url = root.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        return url
    }

    /// Runs `body`, which writes files: a failure is one `error:` line and exit 74.
    private func writing(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as AtomicFile.WriteError {
            throw failure(error)
        } catch {
            reportError("\(out): \(error.localizedDescription)")
            throw ExitCode(ExitStatus.ioError)
        }
    }
}
