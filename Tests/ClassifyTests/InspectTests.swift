import Foundation
import Models
import Tensor
import Testing
import WeightsFormat

@Suite("classify inspect")
struct InspectTests {
    /// A q4 weights file of a small model in a fresh folder.
    static func fixture() throws -> (folder: URL, file: URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("inspect-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var g = SeededGenerator(seed: 5)
        let model = Sequential([
            Dense(inFeatures: 64, outFeatures: 32, generator: &g), Activation(.relu),
            Dense(inFeatures: 32, outFeatures: 3, generator: &g), Activation(.softmax),
        ])
        let file = try ModelFile(
            name: "tiny-mlp", model: model, labels: ["a", "b", "c"], input: InputSpec(shape: [64], description: "64 features"),
            training: TrainingMetadata(seed: 11, epochs: 2), format: .q4)
        let url = folder.appendingPathComponent("tiny.q4.weights")
        try file.write(to: url)
        return (folder, url)
    }

    @Test func showsWhatTheFileHolds() throws {
        let (folder, url) = try Self.fixture()
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try CommandRun.classify(["inspect", url.path])
        #expect(run.status == 0)
        #expect(run.standardError == "")
        let lines = run.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("\(url.path): tiny-mlp, weights format version 2, checksum ok (CRC-32 0x") == true)
        #expect(lines.contains("labels          a, b, c"))
        #expect(lines.contains("input           [64]  64 features"))
        #expect(lines.contains("training        seed 11, best epoch 2"), "a file without epochsTrained")
        #expect(lines.contains("architecture    4 layers, 2,179 parameters"))
        #expect(lines.contains { $0.hasPrefix("  0.weight      [32, 64]          q4") })
        #expect(lines.contains { $0.hasPrefix("  2.weight      [3, 32]           f32") }, "96 weights stay f32")
        #expect(lines.last?.hasPrefix("size ") == true && lines.last?.contains("as f32") == true)
    }

    @Test func jsonHasTheDocumentedKeys() throws {
        let (folder, url) = try Self.fixture()
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try CommandRun.classify(["inspect", url.path, "--json"])
        #expect(run.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        for key in [
            "formatVersion", "name", "checksum", "labels", "input", "training", "architecture", "tensors",
            "fileBytes", "float32FileBytes", "compression", "parameters",
        ] {
            #expect(object[key] != nil, "missing \(key)")
        }
        #expect(object["formatVersion"] as? Int == 2)
        #expect((object["checksum"] as? [String: Any])?["valid"] as? Bool == true)
        let tensors = try #require(object["tensors"] as? [[String: Any]])
        #expect(tensors.map { $0["name"] as? String } == ["0.weight", "0.bias", "2.weight", "2.bias"])
        let fileBytes = try #require(object["fileBytes"] as? Int)
        #expect(fileBytes == (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int))
        let compression = try #require(object["compression"] as? Double)
        #expect(compression > 0.1 && compression < 0.5)
    }

    @Test func missingFileExits66WithOneLine() throws {
        let run = try CommandRun.classify(["inspect", "/nonexistent/model.weights"])
        #expect(run.status == 66)
        #expect(run.standardOutput == "")
        #expect(run.standardError == "error: /nonexistent/model.weights: no such weights file\n")
    }

    @Test func corruptFileExits65WithOneLine() throws {
        let (folder, url) = try Self.fixture()
        defer { try? FileManager.default.removeItem(at: folder) }
        var bytes = [UInt8](try Data(contentsOf: url))
        bytes[bytes.count / 2] ^= 0x40
        try Data(bytes).write(to: url)
        let run = try CommandRun.classify(["inspect", url.path])
        #expect(run.status == 65)
        #expect(run.standardOutput == "")
        #expect(run.standardError.hasPrefix("error: \(url.path): checksum mismatch (stored CRC-32 0x"))
        #expect(run.standardError.hasSuffix("re-run `classify train` to write it again\n"))
        #expect(run.standardError.filter { $0 == "\n" }.count == 1)

        try Data("drawing,label\n".utf8).write(to: url)
        let csv = try CommandRun.classify(["inspect", url.path])
        #expect(csv.status == 65)
        #expect(csv.standardError.hasPrefix("error: \(url.path): not a weights file (first bytes"))
    }

    /// A checksum-valid file whose header is not the format: one line with where and what, exit 65.
    @Test func corruptHeaderExits65WithThePlaceAndTheProblem() throws {
        let (folder, url) = try Self.fixture()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bytes = [UInt8](try Data(contentsOf: url))
        let headerLength = (12..<16).reduce(0) { $0 | Int(bytes[$1]) << (8 * ($1 - 12)) }
        let header = String(decoding: bytes[24..<(24 + headerLength)], as: UTF8.self)
        let comma = try #require(header.range(of: #""labels":["a","b","c"]"#)).lowerBound.utf16Offset(in: header) + 22
        let cases = [
            (
                #""labels":["a","b","c"]"#, #""labels":["a","b","c",]"#,
                "line 1, column \(comma + 1) (byte \(comma) of the header): expected a value after ',', found ']'"
            ),
            (#""epochs":2"#, #""epochs":2.5"#, "training.epochs: expected an integer, found 2.5"),
        ]
        for (old, new, problem) in cases {
            let edited = Array(header.replacingOccurrences(of: old, with: new).utf8)
            #expect(edited.count != headerLength, "\(old) is in the header")
            // The file again around the edited header: lengths, zero padding to 32 bytes, the same data, the CRC.
            let dataStart = (24 + headerLength + 31) / 32 * 32, newStart = (24 + edited.count + 31) / 32 * 32
            var file = Array(bytes[0..<12]) + withUnsafeBytes(of: UInt32(edited.count).littleEndian, Array.init)
            file += withUnsafeBytes(of: UInt64(newStart + bytes.count - 4 - dataStart + 4).littleEndian, Array.init) + edited
            file += [UInt8](repeating: 0, count: newStart - file.count) + bytes[dataStart..<(bytes.count - 4)]
            file += withUnsafeBytes(of: CRC32.checksum(file).littleEndian, Array.init)
            try Data(file).write(to: url)
            let run = try CommandRun.classify(["inspect", url.path])
            #expect(run.status == 65)
            #expect(run.standardOutput == "")
            #expect(run.standardError == "error: \(url.path): corrupt header: \(problem); re-run `classify train` to write it again\n")
        }
    }

    @Test func directoryExits74() throws {
        let run = try CommandRun.classify(["inspect", FileManager.default.temporaryDirectory.path])
        #expect(run.status == 74)
        #expect(run.standardError == "error: \(FileManager.default.temporaryDirectory.path): is a directory, not a weights file (a regular file)\n")
    }

    @Test func missingArgumentIsUsageError() throws {
        let run = try CommandRun.classify(["inspect"])
        #expect(run.status == 64)
        #expect(run.standardError.contains("Missing expected argument '<weights>'"))
    }
}
