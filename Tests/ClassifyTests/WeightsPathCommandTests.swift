import Foundation
import Testing

/// `--weights` naming something that is not a weights file, or a file the engine refuses to run: one permanent
/// warning, no retries, and the fallback answers (or exit 70 without it).
@Suite("classify: weights paths and refused files")
struct WeightsPathCommandTests {
    let star = packageRoot.appendingPathComponent("Datasets/examples/star.csv").path

    @Test func aDirectoryFIFOOrSymlinkLoopIsNotRetried() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let directory = folder.appendingPathComponent("dir.weights").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let fifo = folder.appendingPathComponent("fifo.weights").path
        #expect(mkfifo(fifo, 0o644) == 0)
        let loop = folder.appendingPathComponent("loop.weights").path
        try FileManager.default.createSymbolicLink(atPath: loop, withDestinationPath: loop)
        let expected = [
            (directory, "dir", "is a directory, not a weights file (a regular file)"),
            (fifo, "fifo", "is a FIFO (named pipe), not a weights file (a regular file)"),
            (loop, "loop", "cannot be opened: Too many levels of symbolic links (a symbolic-link loop)"),
        ]
        for (path, link, message) in expected {
            let run = try CommandRun.classify(["shape", star, "--weights", path, "--retries", "10"])
            #expect(run.status == 0, "\(run.standardError)")
            #expect(run.standardOutput.hasPrefix("star  (confidence 100.0%, model geometric)"))
            #expect(run.standardError == "warning: \(link): \(path): \(message); trying geometric\n")
        }
    }

    @Test func weightsThatCouldOverflowFallBackAndWithoutFallbackExit70() throws {
        let folder = try testFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // The shipped f32 shape model with every weight of the first two convolutions at ±1e30 (checksum recomputed).
        var bytes = [UInt8](try Data(contentsOf: packageRoot.appendingPathComponent("Weights/shape-classifier.f32.weights")))
        let headerLength = Int(bytes[12]) | Int(bytes[13]) << 8 | Int(bytes[14]) << 16 | Int(bytes[15]) << 24
        let header = try #require(try JSONSerialization.jsonObject(with: Data(bytes[24..<(24 + headerLength)])) as? [String: Any])
        let tensors = try #require(header["tensors"] as? [[String: Any]])
        for entry in tensors where entry["name"] as? String == "0.weight" || entry["name"] as? String == "3.weight" {
            let start = (24 + headerLength + 31) / 32 * 32 + (try #require(entry["offset"] as? Int))
            for offset in stride(from: start, to: start + (try #require(entry["length"] as? Int)), by: 4) {
                let value: Float = bytes[offset + 3] & 0x80 == 0 ? 1e30 : -1e30
                bytes.replaceSubrange(offset..<(offset + 4), with: withUnsafeBytes(of: value.bitPattern.littleEndian, Array.init))
            }
        }
        var crc = UInt32(0xFFFF_FFFF)
        for byte in bytes.dropLast(4) {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        bytes.replaceSubrange((bytes.count - 4)..., with: withUnsafeBytes(of: (~crc).littleEndian, Array.init))
        let path = folder.appendingPathComponent("extreme.weights").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let refusal = "warning: extreme: \(path): layer 3 (Conv2D 12→24 3x3 stride 1x1 same) can give values up to"
        let fallback = try CommandRun.classify(["shape", star, "--weights", path, "--json"])
        #expect(fallback.status == 0)
        #expect(fallback.standardError.hasPrefix(refusal), "\(fallback.standardError)")
        #expect(!fallback.standardOutput.contains("nan"))
        #expect(fallback.standardOutput.contains("\"model\":\"geometric\""))
        let alone = try CommandRun.classify(["shape", star, "--weights", path, "--no-fallback"])
        #expect(alone.status == 70)
        #expect(alone.standardOutput.isEmpty)
        #expect(alone.standardError.contains("beyond the float range (±3.4e38): its weights are too large to give finite scores"))
    }
}
