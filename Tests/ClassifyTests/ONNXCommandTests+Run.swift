#if ONNX
import Foundation
import Testing

/// `classify run --input`: hostile `.npy` headers, CSV read as every CSV here is read, inputs streamed (from a pipe,
/// each answer printed before the next row is written; a row refused as soon as it has too many values), and outputs
/// that are not finite refused (issue 31).
extension ONNXCommandTests {
    /// The shipped motion model: 194 inputs, in which finite inputs of 3.4e38 overflow to NaN.
    static let motionModel = packageRoot.appendingPathComponent("Weights/motion-state.f32.weights").path
    static let motionInputs = 194

    /// A row of `count` values, `value` each (a CSV line without its line end).
    static func row(_ value: String, count: Int = motionInputs) -> String {
        [String](repeating: value, count: count).joined(separator: ",")
    }

    /// A `.npy` file (version 1) of `header`, padded as numpy pads it, and `data`.
    static func npy(header: String, data: [UInt8]) -> Data {
        let padding = (64 - (10 + header.utf8.count + 1) % 64) % 64
        let text = header + String(repeating: " ", count: padding) + "\n"
        return Data([0x93] + Array("NUMPY".utf8) + [1, 0, UInt8(text.utf8.count & 0xFF), UInt8(text.utf8.count >> 8)] + Array(text.utf8) + data)
    }

    /// The 128-byte file of issue 31, whose shape multiplies past `Int.max` though one of its sizes is 0 (it crashed
    /// `run`), and the same sizes in another order: exit 65, naming the shape.
    @Test(arguments: ["(0, 2147483648, 2147483648, 2147483648)", "(2147483648, 2147483648, 2147483648, 0)"])
    func aShapeThatOverflowsIsRefused(shape: String) throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("overflow.npy")
        let bytes = Self.npy(header: "{'descr': '<f4', 'fortran_order': False, 'shape': \(shape), }", data: [])
        #expect(bytes.count == 128)
        try bytes.write(to: file)
        let run = try CommandRun.classify(["run", Self.motionModel, "--input", file.path])
        #expect(run.status == 65, "\(run.standardError)")
        let sizes = shape.dropFirst().dropLast()
        #expect(
            run.standardError
                == "error: \(file.path): its shape [\(sizes)] holds more values than can be counted (the product of its sizes overflows)\n")
    }

    /// A `.npy` header is parsed as the dict it is, not searched for the text it should hold: big-endian data with
    /// `'descr': '<f4'` hidden in another key (issue 31's decoy), big-endian data plainly, a repeated key, text after
    /// the dict, Fortran order and a missing key are each refused with exit 65, naming what is wrong; the same data
    /// under numpy's own header runs.
    @Test func npyHeadersAreParsedNotSearched() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let values = [Float](repeating: 0.25, count: Self.motionInputs)
        let little = values.flatMap { withUnsafeBytes(of: $0.bitPattern.littleEndian, Array.init) }
        let big = values.flatMap { withUnsafeBytes(of: $0.bitPattern.bigEndian, Array.init) }
        let good = folder.appendingPathComponent("good.npy")
        try Self.npy(header: "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 194), }", data: little).write(to: good)
        let ran = try CommandRun.classify(["run", Self.motionModel, "--input", good.path])
        #expect(ran.status == 0 && Self.rows(ran.standardOutput).map(\.count) == [3], "\(ran.standardError)")
        let shape = "'shape': (1, 194)"
        for (header, data, message) in [
            (
                "{'descr': '>f4', 'fortran_order': False, \(shape), 'x': \"'descr': '<f4'\"}", big,
                "its header at character 61: unknown key 'x'; a .npy header has 'descr', 'fortran_order' and 'shape'"
            ),
            ("{'descr': '>f4', 'fortran_order': False, \(shape), }", big, "holds '>f4' data; only little-endian float32 ('descr': '<f4') is read"),
            (
                "{'descr': '<f4', 'fortran_order': False, \(shape), 'descr': '<f4'}", little,
                "its header at character 61: the key 'descr' appears twice"
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, \(shape)} {'descr': '>f4'}", little,
                "its header at character 61: expected nothing but spaces after the closing '}', found '{'"
            ),
            ("{'descr': '<f4', 'fortran_order': True, \(shape), }", little, "is in Fortran order ('fortran_order': True); only C order is read"),
            ("{'descr': '<f4', \(shape), }", little, "its header has no 'fortran_order'"),
        ] {
            let file = folder.appendingPathComponent("bad.npy")
            try Self.npy(header: header, data: data).write(to: file)
            let run = try CommandRun.classify(["run", Self.motionModel, "--input", file.path])
            #expect(run.status == 65 && run.standardOutput.isEmpty, "\(header): \(run.standardError)")
            #expect(run.standardError.hasPrefix("error: \(file.path): \(message)"), "\(run.standardError)")
        }
    }

    /// A CSV input with CRLF line ends, or with a UTF-8 byte-order mark, gives the outputs of the same rows without
    /// them.
    @Test func crlfAndByteOrderMarkAreReadAsEveryCSVHere() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let rows = [Self.row("0.5"), Self.row("-1.25"), Self.row("3")]
        func outputs(_ text: String, _ name: String) throws -> CommandRun {
            let file = folder.appendingPathComponent(name)
            try Data(text.utf8).write(to: file)
            return try CommandRun.classify(["run", Self.motionModel, "--input", file.path])
        }
        let plain = try outputs(rows.joined(separator: "\n") + "\n", "plain.csv")
        #expect(plain.status == 0 && Self.rows(plain.standardOutput).count == 3, "\(plain.standardError)")
        for (text, name) in [
            (rows.joined(separator: "\r\n") + "\r\n", "crlf.csv"), ("\u{FEFF}" + rows.joined(separator: "\n"), "bom.csv"),
            ("\u{FEFF}" + rows.joined(separator: "\r\n"), "both.csv"),
        ] {
            let run = try outputs(text, name)
            #expect(run.status == 0, "\(name): \(run.standardError)")
            #expect(run.standardOutput == plain.standardOutput, "\(name)")
        }
    }

    /// `--input -` and `--input /dev/stdin` read standard input (a pipe), as `classify shape -` does.
    @Test(arguments: ["-", "/dev/stdin"])
    func standardInputIsAnInput(path: String) throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let text = Self.row("0.5") + "\n" + Self.row("2") + "\n"
        let file = folder.appendingPathComponent("inputs.csv")
        try Data(text.utf8).write(to: file)
        let fromFile = try CommandRun.classify(["run", Self.motionModel, "--input", file.path])
        let piped = try CommandRun.run(CommandRun.builtClassify, ["run", Self.motionModel, "--input", path], input: text)
        #expect(piped.status == 0, "\(piped.standardError)")
        #expect(Self.rows(piped.standardOutput).count == 2 && piped.standardOutput == fromFile.standardOutput)
    }

    /// A command reading `--input -`, its standard input and output pipes, and its standard error.
    struct PipedRun {
        let process = Process()
        let input = Pipe(), output = Pipe(), error = Pipe()

        init(_ arguments: [String]) throws {
            process.executableURL = CommandRun.builtClassify
            process.arguments = arguments
            (process.standardInput, process.standardOutput, process.standardError) = (input, output, error)
            _ = CommandRun.ignoreBrokenPipes
            try process.run()
        }

        /// The next line of standard output (without its end), or what is left at its end.
        func outputLine() -> String {
            var bytes: [UInt8] = []
            while !bytes.contains(UInt8(ascii: "\n")) {
                // Blocks until the command writes or exits: bounded by what it is given, not by a clock.
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                bytes += chunk
            }
            return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .newlines)
        }
    }

    /// The inputs are a stream: the answer to the first row is printed while standard input is still open (the
    /// test reads it before writing the second row), and the second's after it; then the end of the input ends
    /// the run.
    @Test func eachRowIsAnsweredBeforeTheNextIsRead() throws {
        let run = try PipedRun(["run", Self.motionModel, "--input", "-"])
        defer { run.process.stopAndWait() }
        let expected = try CommandRun.run(
            CommandRun.builtClassify, ["run", Self.motionModel, "--input", "-"], input: Self.row("0.5") + "\n" + Self.row("2") + "\n")
        let lines = expected.standardOutput.split(separator: "\n").map(String.init)
        try #require(lines.count == 2)
        try run.input.fileHandleForWriting.write(contentsOf: Data((Self.row("0.5") + "\n").utf8))
        #expect(run.outputLine() == lines[0])
        try run.input.fileHandleForWriting.write(contentsOf: Data((Self.row("2") + "\r\n").utf8))
        #expect(run.outputLine() == lines[1])
        try run.input.fileHandleForWriting.close()
        #expect(run.outputLine().isEmpty)
        run.process.waitUntilExit()
        #expect(run.process.terminationStatus == 0)
    }

    /// A row is refused as soon as it has more values than the model's input, without reading the rest of its line:
    /// a line of 16 MiB without a line end, written to the command's standard input, stops the command within the
    /// first MiB or two (what a pipe and one read hold), with exit 65 naming line 1.
    @Test func aRowOfTooManyValuesIsRefusedBeforeItsEnd() throws {
        let run = try PipedRun(["run", Self.motionModel, "--input", "-"])
        defer { run.process.stopAndWait() }
        let chunk = Data(String(repeating: "0.5,", count: 1 << 14).utf8)
        var written = 0
        do {
            while written < 1 << 24 {
                try run.input.fileHandleForWriting.write(contentsOf: chunk)
                written += chunk.count
            }
        } catch {
            // The command has exited: the pipe is broken.
        }
        try? run.input.fileHandleForWriting.close()
        let standardError = String(decoding: run.error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        run.process.waitUntilExit()
        #expect(run.process.terminationStatus == 65)
        #expect(standardError == "error: -:1: more than 194 values, but the model's input has 194\n")
        #expect(written < 1 << 22, "\(written) bytes written before the command stopped")
    }

    /// Finite inputs whose outputs overflow inside the model are an error naming the input and its line (exit 65),
    /// in text and in JSON (never `{}`); the answers printed before it stay printed.
    @Test(arguments: [false, true])
    func outputsThatAreNotFiniteAreAnError(json: Bool) throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("inputs.csv")
        try Data((Self.row("0.5") + "\n\n" + Self.row("3.4e38") + "\n" + Self.row("0.5") + "\n").utf8).write(to: file)
        let run = try CommandRun.classify(["run", Self.motionModel, "--input", file.path] + (json ? ["--json"] : []))
        #expect(run.status == 65)
        #expect(run.standardError == "error: \(file.path):3: input 2: the model's outputs are not finite (nan) for this input\n")
        let lines = run.standardOutput.split(separator: "\n")
        #expect(lines.count == 1)
        if json {
            #expect(lines.allSatisfy { $0.hasPrefix("{\"outputs\":[") }, "\(run.standardOutput)")
        } else {
            #expect(Self.rows(run.standardOutput).map(\.count) == [3], "\(run.standardOutput)")
        }
    }

    /// `--save-inputs` writes drawings in the layout `export onnx` declares, `[N, 1, 16, 16]` (it wrote `[N, 16, 16, 1]`,
    /// which ONNX Runtime refused for the exported model: issue 33, item 4), and windows as `[N, F]`; `--input` runs
    /// either file back to the outputs the dataset gave.
    @Test func savedInputsHaveTheExportedLayoutAndRunBack() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cases = [
            ("shape-classifier.int8", "Datasets/shapes/test.csv", "(740, 1, 16, 16)"),
            ("motion-state.int8", "Datasets/motion/test.csv", "(370, 194)"),
        ]
        for (model, dataset, shape) in cases {
            let weights = packageRoot.appendingPathComponent("Weights/\(model).weights").path
            let saved = folder.appendingPathComponent("\(model).npy").path
            let made = try CommandRun.classify([
                "run", weights, "--dataset", packageRoot.appendingPathComponent(dataset).path, "--save-inputs", saved,
            ])
            #expect(made.status == 0, "\(made.standardError)")
            let bytes = try Data(contentsOf: URL(fileURLWithPath: saved))
            let header = String(decoding: bytes.prefix(128), as: UTF8.self)
            #expect(header.contains("'shape': \(shape), }"), "\(model): \(header)")
            let again = try CommandRun.classify(["run", weights, "--input", saved])
            #expect(again.status == 0 && again.standardOutput == made.standardOutput, "\(model): \(again.standardError)")
        }
    }
}
#endif
