/// The plain-record scan of `CSVReader.readPlainRecord`: a line's commas and end, eight bytes at a time.
extension CSVReader {
    /// The end of the line that starts at `start` in `bytes` (its LF, or a CR that no LF follows) with where its commas are (in
    /// `fieldEnds`, their count) and its bytes or-ed together; `nil` when the line holds a quote or a NUL, more
    /// commas than `fieldEnds` can take, or runs past the end of `bytes`.
    ///
    /// Eight bytes at a time: bytes below `-` (0x2D) — comma, newline, quote, NUL, but also space and carriage
    /// return — are flagged by the borrow of a subtraction (the lowest flag is exact), the rest skipped.
    package static func scanLine(
        _ bytes: UnsafeBufferPointer<UInt8>, from start: Int,
        fieldEnds: UnsafeMutableBufferPointer<Int>
    ) -> (newline: Int?, fields: Int, bits: UInt64) {
        guard let base = bytes.baseAddress else { return (nil, 0, 0) }
        let raw = UnsafeRawPointer(base)
        var i = start, fields = 0, bits: UInt64 = 0
        while true {
            if i + 8 <= bytes.count {
                let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                bits |= word
                let low = (word &- 0x2D2D_2D2D_2D2D_2D2D) & ~word & 0x8080_8080_8080_8080
                if low == 0 {
                    i += 8
                    continue
                }
                i += low.trailingZeroBitCount / 8
            } else if i < bytes.count {
                bits |= UInt64(bytes[i])
                if bytes[i] >= UInt8(ascii: "-") {
                    i += 1
                    continue
                }
            } else {
                return (nil, 0, 0)
            }
            switch bytes[i] {
            case UInt8(ascii: ","):
                guard fields + 1 < fieldEnds.count else { return (nil, 0, 0) }
                fieldEnds[fields] = i
                fields += 1
            case UInt8(ascii: "\n"):
                return (i, fields, bits)
            case UInt8(ascii: "\r"):
                // CRLF: the LF ends the line. A lone CR ends it here; at the end of `bytes` it is undecided.
                guard i + 1 < bytes.count else { return (nil, 0, 0) }
                if bytes[i + 1] != UInt8(ascii: "\n") { return (i, fields, bits) }
            case UInt8(ascii: "\""), 0:
                return (nil, 0, 0)
            default:
                break
            }
            i += 1
        }
    }
}
