#if Serve
import Foundation
import NIOCore

/// Reads the bytes of each request beside NIO's HTTP/1 decoder (which does not say a chunk's size) to find a chunk
/// that says it is larger than `--max-body`: the request's body then fails at once with `ChunkTooLarge`, answered
/// 413, instead of waiting `--timeout` for bytes that cannot all be read. It only watches: every byte goes on to the
/// decoder as it came until that point, and on anything it does not follow (an upgrade, a head or chunk line
/// longer than the decoder allows, framing the decoder will refuse anyway) it stops watching the connection.
final class ChunkSizeGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The error a request's body fails with: a chunk of `size` bytes (nil: more than 2^64 - 1) over `limit`.
    struct ChunkTooLarge: Error, CustomStringConvertible {
        let size: UInt64?, limit: Int
        var description: String {
            "a chunk of the body says it is \(size.map { "\($0) bytes" } ?? "over 2^64 bytes"); at most \(limit) are read (--max-body)"
        }
    }

    private enum State: Equatable {
        /// Reading a request head into `pending`.
        case head
        /// Skipping this many bytes of a body of known length, or of a chunk and its CRLF.
        case skip(UInt64, then: After)
        /// Reading a chunk-size line into `pending`.
        case chunkLine
        /// Reading the trailer section after the last chunk into `pending`.
        case trailers
        /// A chunk too large was found (nothing after it is read), or the framing is not followed (all passes).
        case tripped, off
    }

    private enum After { case head, chunkLine }

    /// The longest head or line followed (NIO's decoder refuses heads over 80 KiB by default).
    static let longestHead = 96 << 10
    static let longestLine = 4 << 10

    private let limit: Int
    private var state = State.head
    /// The head or line being read.
    private var pending: [UInt8] = []

    init(limit: Int) { self.limit = limit }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        let bytes = buffer.readableBytesView
        var index = bytes.startIndex
        while index < bytes.endIndex {
            switch state {
            case .off:
                return context.fireChannelRead(data)
            case .tripped:
                return
            case .skip(let count, let after):
                let step = Int(min(count, UInt64(bytes.endIndex - index)))
                index += step
                state = count > UInt64(step) ? .skip(count - UInt64(step), then: after) : after == .head ? .head : .chunkLine
            case .head, .chunkLine, .trailers:
                // A line at a time: the bytes up to the next line feed (or the buffer's end) join the ones kept.
                let feed = bytes[index...].firstIndex(of: 10)
                let end = feed.map { $0 + 1 } ?? bytes.endIndex
                pending.append(contentsOf: bytes[index..<end])
                index = end
                let longest = state == .chunkLine ? Self.longestLine : Self.longestHead
                guard feed != nil, !Self.endsInBareLF(pending), pending.count <= longest else {
                    // Lines ended by LF alone, and heads and lines longer than the decoder takes, are framing this
                    // guard does not follow.
                    if feed != nil || pending.count > longest { state = .off }
                    break
                }
                if state == .chunkLine {
                    guard let size = Self.chunkSize(pending) else {
                        state = .off
                        break
                    }
                    if size.map({ $0 > UInt64(limit) }) ?? true {
                        // The bytes before this line go on to the decoder, which has the head; the body then fails.
                        let before = index - pending.count - bytes.startIndex
                        if before > 0, let slice = buffer.getSlice(at: buffer.readerIndex, length: before) {
                            context.fireChannelRead(wrapInboundOut(slice))
                        }
                        state = .tripped
                        pending = []
                        context.fireErrorCaught(ChunkTooLarge(size: size, limit: limit))
                        return
                    }
                    pending = []
                    state = size == 0 ? .trailers : .skip((size ?? 0) + 2, then: .chunkLine)
                } else if pending == [13, 10] {
                    // A blank line before a request is skipped (RFC 9112 §2.2); one after the trailers ends them.
                    if state == .trailers { state = .head }
                    pending = []
                } else if pending.count >= 4 && pending.suffix(4).elementsEqual([13, 10, 13, 10]) {
                    state = state == .trailers ? .head : Self.afterHead(pending)
                    pending = []
                }
            }
        }
        context.fireChannelRead(data)
    }

    /// Whether `bytes` ends with a line feed that no carriage return comes before.
    private static func endsInBareLF(_ bytes: [UInt8]) -> Bool {
        bytes.last == 10 && (bytes.count < 2 || bytes[bytes.count - 2] != 13)
    }

    /// What follows the head `bytes` (through its blank line): its body's framing, or `.off` for a head whose
    /// framing is not followed here (an upgrade, CONNECT, a length that is not one number). Read as bytes: only the
    /// values of the three fields it needs become text.
    private static func afterHead(_ bytes: [UInt8]) -> State {
        // Lines split at CRLF, empty ones left out; the decoder skips carriage returns and line feeds before a request
        // line, as RFC 9112 §2.2 allows.
        var lines: [ArraySlice<UInt8>] = []
        var start = 0, index = 0
        while index + 1 < bytes.count {
            if bytes[index] == 13 && bytes[index + 1] == 10 {
                if index > start { lines.append(bytes[start..<index]) }
                index += 2
                start = index
            } else {
                index += 1
            }
        }
        if start < bytes.count { lines.append(bytes[start...]) }
        guard let requestLine = lines.first?.drop(while: { $0 == 13 || $0 == 10 }) else { return .off }
        if requestLine.starts(with: "CONNECT ".utf8) { return .off }
        var chunked = false, length: UInt64?, lengths = 0
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return .off }
            let name = line[..<colon]
            func value() -> String {
                String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingCharacters(in: .whitespaces)
            }
            if Self.isName(name, "upgrade") { return .off }
            if Self.isName(name, "transfer-encoding") {
                chunked = value().split(separator: ",").last?.trimmingCharacters(in: .whitespaces).lowercased() == "chunked"
                if !chunked { return .off }
            } else if Self.isName(name, "content-length") {
                lengths += 1
                guard let number = UInt64(value()) else { return .off }
                length = number
            }
        }
        if chunked { return lengths == 0 ? .chunkLine : .off }
        guard lengths <= 1 else { return .off }
        if let length, length > 0 { return .skip(length, then: .head) }
        return .head
    }

    /// Whether the field name `bytes` is `lowercase` (ASCII letters and `-`), in any case.
    private static func isName(_ bytes: ArraySlice<UInt8>, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        return lowercase.withUTF8Buffer { name in
            zip(bytes, name).allSatisfy { byte, letter in
                byte == letter || (letter >= UInt8(ascii: "a") && letter <= UInt8(ascii: "z") && byte == letter - 32)
            }
        }
    }

    /// The size a chunk-size line (through its LF) gives: `nil` inside for more than 2^64 - 1, and `nil` outside
    /// for a line that is not a chunk size.
    private static func chunkSize(_ line: [UInt8]) -> UInt64?? {
        var size: UInt64? = 0, digits = 0
        for byte in line {
            let digit: UInt64
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt64(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt64(byte - UInt8(ascii: "A") + 10)
            default:
                return digits == 0 ? .none : .some(size)
            }
            digits += 1
            if let current = size {
                let (times, over) = current.multipliedReportingOverflow(by: 16)
                let (sum, over2) = times.addingReportingOverflow(digit)
                size = over || over2 ? nil : sum
            }
        }
        return .none
    }
}
#endif
