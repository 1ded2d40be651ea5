import Foundation
import FuzzSupport
import Tensor

@testable import Models
@testable import WeightsFormat

// One weights file through everything loading does (`classify … --weights FILE`): `ModelFile(bytes:path:)`, then
// the classifier it describes, compiled (`makeCompiledModel()`), and one classification of a fixed input — the
// circle drawing for a shape classifier, a walking recording for a motion classifier, a ramp for any other model.
//
// A mutated file almost never keeps its checksum, so each input is tried three ways:
//   1. as it is (the checks on magic, version, lengths and checksum);
//   2. with its file length and CRC-32 set to match its bytes (so mutations reach the header and the tensors);
//   3. when it does not start with the magic bytes: as a header's JSON, a NUL byte, then the data section, put
//      together into a well-formed file (so the JSON can grow and shrink without breaking the header length).

private let magic: [UInt8] = [0x89, 0x4F, 0x44, 0x4D, 0x4C, 0x0D, 0x0A, 0x1A]
private let preambleBytes = 24, alignment = 32

@main
enum FuzzWeights {
    static func main() { exit(runFuzzer(fuzzWeights)) }
}

/// libFuzzer's test function: one input, any bytes.
func fuzzWeights(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    load(bytes)
    load(repaired(bytes))
    if !bytes.starts(with: magic), let assembled = assembled(bytes) { load(assembled) }
    return 0
}

/// Decodes `bytes`; a file that decodes is loaded and used as the CLI would.
private func load(_ bytes: [UInt8]) {
    let path = "fuzz.weights"
    let file: ModelFile
    do {
        file = try ModelFile(bytes: bytes, path: path)
    } catch {
        require(error.path == path && !error.description.isEmpty, "a weights error without the file or a message: \(error)")
        require(!error.isTransient, "a decoding error that would be retried: \(error)")
        return
    }
    exercise(file, path: path)
}

/// `bytes` with the file length (offset 16) and the CRC-32 (the last 4 bytes) matching its contents.
private func repaired(_ bytes: [UInt8]) -> [UInt8] {
    guard bytes.count >= preambleBytes + 4 else { return bytes }
    var copy = bytes
    for i in 0..<8 { copy[16 + i] = UInt8(truncatingIfNeeded: UInt64(bytes.count) >> (8 * i)) }
    let crc = CRC32.checksum(copy, range: 0..<(copy.count - 4))
    for i in 0..<4 { copy[copy.count - 4 + i] = UInt8(truncatingIfNeeded: crc >> (8 * i)) }
    return copy
}

/// A well-formed file (version 2) from `JSON header, NUL, data section`, or `nil` without a NUL.
private func assembled(_ bytes: [UInt8]) -> [UInt8]? {
    guard let nul = bytes.firstIndex(of: 0) else { return nil }
    let header = bytes[..<nul], tensorData = bytes[(nul + 1)...]
    var file = magic
    for value in [UInt32(2), UInt32(truncatingIfNeeded: header.count)] {
        for i in 0..<4 { file.append(UInt8(truncatingIfNeeded: value >> (8 * i))) }
    }
    file += [UInt8](repeating: 0, count: 8)  // the file length, set by `repaired`
    file += header
    file += [UInt8](repeating: 0, count: (alignment - file.count % alignment) % alignment)
    file += tensorData
    file += [0, 0, 0, 0]  // the checksum, set by `repaired`
    return repaired(file)
}
