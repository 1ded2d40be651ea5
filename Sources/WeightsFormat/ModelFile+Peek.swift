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
        peekedHeader(leadingBytes: read).map { $0.training }
    }

    /// The kind of preprocessing (and so the task) a weights file's header records, read from the file's first
    /// bytes only, as `recordedTraining(leadingBytes:)` reads them: `.some(nil)` when this build does not know the
    /// kind, `nil` when the bytes are no readable preamble and header. What a folder of models is sorted by without
    /// loading each one (`$CLASSIFY_WEIGHTS`).
    package static func recordedPreprocessingKind(leadingBytes read: (Int) -> [UInt8]?) -> PreprocessingKind?? {
        peekedHeader(leadingBytes: read).map { PreprocessingKind($0.preprocessing) }
    }

    /// The header of a weights file from its first bytes (`read(count)`: at most the first `count`), or `nil` when
    /// they are no readable preamble and header.
    private static func peekedHeader(leadingBytes read: (Int) -> [UInt8]?) -> WeightsHeader? {
        guard let start = read(preambleBytes), start.count == preambleBytes, start.prefix(magic.count).elementsEqual(magic)
        else { return nil }
        let headerLength = (12..<16).reduce(0) { $0 | Int(start[$1]) << (8 * ($1 - 12)) }
        guard headerLength <= maximumPeekedHeader, let bytes = read(preambleBytes + headerLength),
            bytes.count == preambleBytes + headerLength
        else { return nil }
        return try? WeightsHeader(jsonBytes: bytes[preambleBytes...])
    }
}
