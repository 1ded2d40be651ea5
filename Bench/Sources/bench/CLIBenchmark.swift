import DataFiles
import Foundation
import Models
import Train

/// `bench cli`: `classify shape --dataset` on generated drawings (100,000 unless told), on every core and on one,
/// as drawings per second of the whole command (start, weights, reading, classifying, printing).
struct CLIBenchmark {
    let drawings: Int
    let rounds: Int

    /// Issue 13: 100,000 drawings at 40,000 a second or more on every core, the whole command.
    static let targetPerSecond = 40_000.0
    /// Drawings generated and written at a time (the whole file is never one string).
    static let writeBlock = 5_000

    func run() throws -> [(jobs: Int, medianSeconds: Double, results: Int)] {
        let executable = URL(fileURLWithPath: Bundle.main.executablePath ?? CommandLine.arguments[0]).resolvingSymlinksInPath()
        let classify = executable.deletingLastPathComponent().appendingPathComponent("classify")
        guard FileManager.default.isExecutableFile(atPath: classify.path) else {
            throw DataError(
                file: classify.path,
                message:
                    "no classify binary beside bench; build it from the package root: swift build --package-path Bench --scratch-path .build-bench -c release --product classify",
                kind: .missingFile)
        }
        var generator = ShapeGenerator(seed: 79)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let dataset = folder.appendingPathComponent("drawings.csv")
        // Written a block of people at a time: 100,000 drawings are 320 MB of CSV.
        guard FileManager.default.createFile(atPath: dataset.path, contents: nil), let file = FileHandle(forWritingAtPath: dataset.path) else {
            throw DataError(file: dataset.path, message: "cannot be created", kind: .unreadable)
        }
        let people = drawings / 20, peoplePerBlock = Self.writeBlock / 20
        for (block, firstPerson) in stride(from: 0, to: people, by: peoplePerBlock).enumerated() {
            let samples = generator.samples(people: min(peoplePerBlock, people - firstPerson), perPerson: 20, firstPerson: firstPerson)
            var text = ShapeDatasetWriter.csv(samples, prefix: "d\(block)-")
            if block > 0 { text = String(text.drop { $0 != "\n" }.dropFirst()) }  // one header
            try file.write(contentsOf: Data(text.utf8))
        }
        // On disk before timing: writing back 320 MB of fresh pages would otherwise run during the first runs.
        try file.synchronize()
        try file.close()
        let all = ProcessInfo.processInfo.activeProcessorCount
        var times: [Int: [Double]] = [1: [], all: []]
        var counts: [Int: Int] = [:]
        // One untimed run first (the file's pages and the binary in memory), then the two settings alternated so
        // that a noisy moment on a shared machine lands on both.
        _ = try runClassify(classify, ["shape", "--dataset", dataset.path, "--jobs", "\(all)"])
        for _ in 0..<rounds {
            for jobs in Set([1, all]).sorted() {
                let start = DispatchTime.now().uptimeNanoseconds
                let lines = try runClassify(classify, ["shape", "--dataset", dataset.path, "--jobs", "\(jobs)"])
                times[jobs, default: []].append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                counts[jobs] = lines
            }
        }
        return Set([1, all]).sorted().map { jobs in
            let sorted = (times[jobs] ?? []).sorted()
            return (jobs, sorted.isEmpty ? 0 : sorted[sorted.count / 2], counts[jobs] ?? 0)
        }
    }

    /// Runs classify and returns how many result lines it printed.
    func runClassify(_ binary: URL, _ arguments: [String]) throws -> Int {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return data.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
    }
}
