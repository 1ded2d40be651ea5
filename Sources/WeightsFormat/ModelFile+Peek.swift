// MARK: - The header alone

extension ModelFile {
    /// The largest header `recordedTraining(leadingBytes:)` reads (headers of real files are a few kilobytes).
    package static let maximumPeekedHeader = 1 << 20

    /// The training record in a weights file's header, read from the file's first bytes only, without its tensors
    /// or checksum: `read(count)` gives at most the first `count` bytes of the file, or `nil` when it cannot be
    /// read. `.some(nil)` when the header records no training, `nil` when the bytes are no readable preamble and
    /// header (the file's own load reports why). The header is read as loading reads it, by
    /// `WeightsHeader(jsonBytes:)`.
    package static func recordedTraining(leadingBytes read: (Int) -> [UInt8]?) -> TrainingMetadata?? {
        guard let start = read(preambleBytes), start.count == preambleBytes, start.prefix(magic.count).elementsEqual(magic)
        else { return nil }
        let headerLength = (12..<16).reduce(0) { $0 | Int(start[$1]) << (8 * ($1 - 12)) }
        guard headerLength <= maximumPeekedHeader, let bytes = read(preambleBytes + headerLength),
            bytes.count == preambleBytes + headerLength, let header = try? WeightsHeader(jsonBytes: bytes[preambleBytes...])
        else { return nil }
        return .some(header.training)
    }
}
