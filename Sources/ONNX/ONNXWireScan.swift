#if ONNX
import Foundation

/// A count of an `.onnx` file's messages read from its protobuf wire format before it is decoded, so that a
/// small file of many empty messages (2 million empty nodes fit in 4 MB, and cost ~150 bytes each once decoded)
/// is refused for what it declares, not after its decoding has taken hundreds of megabytes.
///
/// Only the repeated message fields that a file can fill cheaply are followed: a model's graph, opsets, metadata,
/// training records, functions and configurations; a graph's nodes, initializers, inputs, outputs, value infos,
/// annotations, sparse initializers and metadata; a node's attributes and metadata; an attribute's graphs; a
/// function's nodes. Bytes that are not well-formed protobuf end the scan: the decoder reports them.
enum ONNXWireScan {
    /// What the scan counted.
    struct Counts: Equatable {
        /// Nodes, in every graph and function of the file.
        var nodes = 0
        /// Messages of the followed repeated fields, nodes among them.
        var messages = 0
    }

    /// The message kinds the scan follows, each with the fields it counts and the ones it enters.
    private enum Kind {
        case model, graph, node, attribute, function

        /// The kind of message field `field` holds, to be entered; nil for a field only counted or skipped.
        func entered(_ field: UInt64) -> Kind? {
            switch (self, field) {
            case (.model, 7): .graph
            case (.model, 25): .function
            case (.graph, 1), (.function, 7): .node
            case (.node, 5): .attribute
            case (.attribute, 6), (.attribute, 11): .graph
            default: nil
            }
        }

        /// Whether field `field` is a repeated message field counted without being entered.
        func counts(_ field: UInt64) -> Bool {
            switch self {
            case .model: [8, 14, 20, 26].contains(field)
            case .graph: [5, 11, 12, 13, 14, 15, 16].contains(field)
            case .node: [9, 10].contains(field)
            case .attribute: [10, 15, 23].contains(field)
            case .function: [11, 14].contains(field)
            }
        }
    }

    /// The counts of `bytes`, an `.onnx` file; the scan stops early once `limits` are passed (the counts then
    /// exceed them), or at the first malformed byte.
    static func counts(_ bytes: Data, limits: Counts) -> Counts {
        var counts = Counts()
        bytes.withUnsafeBytes { raw in
            var reader = Reader(bytes: raw, limits: limits)
            reader.scan(.model, from: 0, to: raw.count, depth: 0, into: &counts)
        }
        return counts
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        let limits: Counts

        /// Reads a varint at `position`, moving it past; nil when it runs past `end` or over 10 bytes.
        func varint(_ position: inout Int, end: Int) -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while position < end, shift < 64 {
                let byte = bytes[position]
                position += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            return nil
        }

        /// Scans the message of `kind` in `start..<end`; false when the bytes are malformed or a limit is passed.
        @discardableResult
        mutating func scan(_ kind: Kind, from start: Int, to end: Int, depth: Int, into counts: inout Counts) -> Bool {
            guard depth <= ONNXLimits.maximumMessageDepth else { return false }
            var position = start
            while position < end {
                guard let tag = varint(&position, end: end) else { return false }
                let field = tag >> 3
                switch tag & 7 {
                case 0:
                    guard varint(&position, end: end) != nil else { return false }
                case 1:
                    position += 8
                case 5:
                    position += 4
                case 2:
                    guard let length = varint(&position, end: end), length <= UInt64(end - position) else { return false }
                    let contentEnd = position + Int(length)
                    if let inner = kind.entered(field) {
                        if inner == .node { counts.nodes += 1 }
                        counts.messages += 1
                        guard counts.nodes <= limits.nodes, counts.messages <= limits.messages else { return false }
                        guard scan(inner, from: position, to: contentEnd, depth: depth + 1, into: &counts) else { return false }
                    } else if kind.counts(field) {
                        counts.messages += 1
                        guard counts.messages <= limits.messages else { return false }
                    }
                    position = contentEnd
                default:
                    // Groups (deprecated) and invalid wire types: the decoder says what is wrong.
                    return false
                }
            }
            return position == end
        }
    }
}
#endif
