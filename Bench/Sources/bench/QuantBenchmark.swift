import Foundation
import Models
import Tensor
import WeightsFormat

/// `bench quant`: one model saved as f32 and in quantized formats, run two ways — dequantized once at load,
/// and compact (weights stay quantized, tiles dequantized per call) — for speed and resident memory.
struct QuantBenchmark {
    let plan: TimingPlan
    let formats: [StorageFormat] = [.int8, .q4, .lut4]

    /// A 784→1024→1024→10 MLP: 1.86M weights, 7.5 MB as f32, big enough for memory to show.
    static func model() -> Sequential {
        var g = SeededGenerator(seed: 21)
        return Sequential([
            Dense(inFeatures: 784, outFeatures: 1024, generator: &g), Activation(.relu),
            Dense(inFeatures: 1024, outFeatures: 1024, generator: &g), Activation(.relu),
            Dense(inFeatures: 1024, outFeatures: 10, generator: &g), Activation(.softmax),
        ])
    }

    struct Row {
        let format: StorageFormat
        let mode: String
        let fileBytes: Int
        let weightBytes: Int
        let residentBytes: Int
        let batch1: Measurement
        let batch64: Measurement
    }

    /// Writes the files to `folder`, measures each (format, mode) and returns the rows, f32 first.
    func run(folder: URL, executable: String) throws -> [Row] {
        var rows: [Row] = []
        var generator = SeededGenerator(seed: 22)
        let input1 = Tensor(randomUniform: [1, 784], in: 0..<1, generator: &generator)
        let input64 = Tensor(randomUniform: [64, 784], in: 0..<1, generator: &generator)
        for format in [StorageFormat.f32] + formats {
            let file = try ModelFile(
                name: "bench-mlp", model: Self.model(), labels: (0..<10).map(String.init),
                input: InputSpec(shape: [784], description: "28x28 pixels"), format: format)
            let url = folder.appendingPathComponent("bench-mlp.\(format).weights")
            try file.write(to: url)
            let fileBytes = file.encoded().count
            for compact in format == .f32 ? [false] : [false, true] {
                let mode = format == .f32 ? "float" : compact ? "compact" : "dequantized"
                let model = try ModelFile(contentsOf: url).makeModel(compact: compact)
                let name = "\(format) \(mode)"
                let batch1 = measure("mlp batch 1 \(name)", flops: nil, plan: plan, [Candidate(impl: "tensor") { model(input1).scalars[0] }])[0]
                let batch64 = measure("mlp batch 64 \(name)", flops: nil, plan: plan, [Candidate(impl: "tensor") { model(input64).scalars[0] }])[0]
                rows.append(
                    Row(
                        format: format, mode: mode, fileBytes: fileBytes, weightBytes: Self.weightBytes(of: model),
                        residentBytes: try Self.residentGrowth(executable: executable, file: url, compact: compact),
                        batch1: batch1, batch64: batch64))
            }
        }
        return rows
    }

    /// The bytes a built model keeps for its weights: float tensors at 4 bytes an element, quantized ones as stored.
    static func weightBytes(of model: Sequential) -> Int {
        model.layers.reduce(0) { total, layer in
            switch layer {
            case let dense as Dense: total + 4 * (dense.weight.count + dense.bias.count)
            case let dense as QuantizedDense: total + dense.weight.bytes.count + 4 * dense.bias.count
            default: total
            }
        }
    }

    /// Runs `bench quant-child` on `file` in a fresh process and returns how much its resident memory grew
    /// from before loading to after loading and one forward pass.
    static func residentGrowth(executable: String, file: URL, compact: Bool) throws -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["quant-child", file.path] + (compact ? ["--compact"] : [])
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let bytes = Int(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            throw BenchError.childFailed("quant-child \(file.lastPathComponent) exited \(process.terminationStatus)")
        }
        return bytes
    }
}

enum BenchError: Error, CustomStringConvertible {
    case childFailed(String)
    var description: String {
        switch self {
        case .childFailed(let message): message
        }
    }
}

/// The process's resident set size in bytes, from /proc/self/status (0 where that file does not exist).
func residentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
        return kilobytes * 1024
    }
    return 0
}

/// Hands freed heap memory back to the system (glibc's `malloc_trim`, looked up at run time since Swift's
/// Glibc module does not import `malloc.h`), so the resident size counts what is live.
func releaseFreedMemory() {
    #if canImport(Glibc)
    typealias Trim = @convention(c) (Int) -> Int32
    if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
    }
    #endif
}
