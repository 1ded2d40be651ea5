#if ONNX
import Foundation
import Models
import SwiftProtobuf
import Testing
import WeightsFormat

@testable import ONNX

/// Issue 31: crafted files that crashed every entry point or took gigabytes (overflowing shapes, mixed element
/// types, constant folding without a budget, unused nodes computed, millions of empty nodes decoded) are errors
/// or cheap imports. The files are made by `scripts/onnx/hostile_round4.py write`.
@Suite("ONNX import budgets")
struct ONNXBudgetTests {
    static let hostile = ONNXRoundTripTests.fixtures.deletingLastPathComponent().appendingPathComponent("Hostile")

    /// The import's error reason for the file `name` in Hostile/, or "imported: SUMMARY".
    static func outcome(_ name: String) -> String {
        do {
            let file = try ONNXImport.modelFile(contentsOf: hostile.appendingPathComponent("\(name).onnx"))
            return "imported: " + file.architecture.map(\.summary).joined(separator: ", ")
        } catch {
            guard case let .importFailed(_, reason) = error.problem else { return error.description }
            return reason
        }
    }

    /// The import's error reason for `bytes`, or "imported: SUMMARY".
    static func outcome(bytes: Data) -> String {
        let sidecar = ONNXModelInfo(labels: ["walking", "running", "still"], task: .motion)
        do {
            let file = try ONNXImport.modelFile(bytes: bytes, path: "m.onnx", sidecar: sidecar)
            return "imported: " + file.architecture.map(\.summary).joined(separator: ", ")
        } catch {
            guard case let .importFailed(_, reason) = error.problem else { return error.description }
            return reason
        }
    }

    /// Before: SIGILL in `shape.reduce(1, *)` (1), SIGILL in `Int8(1000)` (2), 2^32 floats allocated (4 used),
    /// the opset read depending on the order of two declarations (11).
    @Test(arguments: [
        (
            "reshape-2p66",
            "node huge_reshape (Reshape): a reshape to [4194304, 4194304, 4194304], more than 4194304 elements (its axes counted as at least 1)"
        ),
        ("concat-int8-int64", "node mixed_concat (Concat): its inputs have different element types (int8, int64)"),
        ("concat-2p32-used", "node concat5 (Concat): 16777216 elements, more than 4194304"),
        ("opset-twice-13-11", "the default ONNX domain is imported 2 times (opsets 13, 11); once is read"),
        ("opset-twice-11-13", "the default ONNX domain is imported 2 times (opsets 11, 13); once is read"),
    ])
    func craftedFilesArePreciseErrors(name: String, reason: String) {
        #expect(Self.outcome(name) == reason)
    }

    /// Eight unused Concats of 16 copies each (2^32 floats) are never computed: the model imports as the one layer
    /// its output needs.
    @Test func unusedNodesAreNotComputed() {
        #expect(Self.outcome("concat-2p32-unused") == "imported: Dense 194→3, Activation softmax")
    }

    /// The model of the fixtures (input → Gemm(w, b) → output) with `nodes` and `initializers` added.
    static func model(adding nodes: [Onnx_NodeProto], _ initializers: [Onnx_TensorProto]) throws -> Onnx_ModelProto {
        var model = try Onnx_ModelProto(serializedBytes: Data(contentsOf: hostile.appendingPathComponent("opset-twice-13-11.onnx")))
        model.opsetImport.removeLast()
        model.graph.node.insert(contentsOf: nodes, at: 0)
        model.graph.initializer += initializers
        return model
    }

    static func transpose(_ input: String, _ output: String) -> Onnx_NodeProto {
        var node = Onnx_NodeProto()
        (node.opType, node.name, node.input, node.output) = ("Transpose", output, [input], [output])
        var perm = Onnx_AttributeProto()
        (perm.name, perm.type, perm.ints) = ("perm", .ints, [1, 0])
        node.attribute = [perm]
        return node
    }

    /// A 1 MiB int8 initializer and 1,000 unused Transposes of it (before: SIGABRT at a 4 GB cap): imported
    /// without computing one. The same Transposes in a row on the way to a used value stop at the folding budget
    /// after four (2^22 elements), naming the node.
    @Test func transposesOfAMebibyteCostOnlyWhatTheOutputNeeds() throws {
        var mebibyte = Onnx_TensorProto()
        (mebibyte.name, mebibyte.dataType, mebibyte.dims, mebibyte.rawData) = ("mib", 3, [1024, 1024], Data(count: 1 << 20))
        let unused = (0..<1000).map { Self.transpose("mib", "t\($0)") }
        #expect(Self.outcome(bytes: try Self.model(adding: unused, [mebibyte]).serializedData()) == "imported: Dense 194→3, Activation softmax")

        var used = try Self.model(adding: (0..<150).map { Self.transpose($0 == 0 ? "mib" : "t\($0 - 1)", "t\($0)") }, [mebibyte])
        // The last transpose feeds the Gemm as its C (a bias): the import must compute it first.
        used.graph.node[used.graph.node.count - 1].input[2] = "t149"
        #expect(
            Self.outcome(bytes: try used.serializedData())
                == "node t4 (Transpose) would make 1048576 more elements of constants (4194304 so far): computing constants may make at most 4194304 elements, 48 MiB, in all"
        )
    }

    /// 2 million empty nodes in 4 MB (before: 311 MB decoded, then refused) are counted on the wire and refused
    /// before decoding; so are 300,000 empty metadata entries.
    @Test func manyEmptyMessagesAreRefusedBeforeDecoding() throws {
        let model = try Self.model(adding: [], [])
        var graph = try model.graph.serializedData()
        graph.append(contentsOf: [UInt8](repeating: 0, count: 4_000_000).enumerated().map { $0.offset % 2 == 0 ? 0x0A : 0 })
        var withoutGraph = model
        withoutGraph.clearGraph()
        var bytes = try withoutGraph.serializedData()
        bytes.append(0x3A)
        var length = graph.count
        repeat {
            bytes.append(UInt8(length & 0x7F) | (length > 0x7F ? 0x80 : 0))
            length >>= 7
        } while length > 0
        bytes.append(graph)
        #expect(Self.outcome(bytes: bytes) == "more than 10000 nodes (counted before decoding)")

        var metadata = model
        metadata.metadataProps += Array(repeating: Onnx_StringStringEntryProto(), count: 300_000)
        #expect(
            Self.outcome(bytes: try metadata.serializedData())
                == "more than 200000 nodes, attributes, initializers, values and metadata entries (counted before decoding)")
    }

    /// The wire count agrees with the decoded model's: its nodes, and its messages of the followed fields.
    @Test func theWireCountAgreesWithTheDecodedModel() throws {
        for variant in ShippedWeights.variants {
            let model = try ONNXExport.model(of: try ONNXRoundTripTests.shipped(variant))
            let counts = ONNXWireScan.counts(try model.serializedData(), limits: .init(nodes: .max, messages: .max))
            let graph = model.graph
            let messages =
                1 + model.opsetImport.count + model.metadataProps.count + graph.node.count
                + graph.node.reduce(0) { $0 + $1.attribute.count } + graph.initializer.count + graph.input.count + graph.output.count
                + graph.valueInfo.count
            #expect(counts == .init(nodes: graph.node.count, messages: messages), "\(variant)")
        }
    }

    /// A shape's element count is nil when any product of its sizes could overflow or pass the limit, an empty
    /// axis notwithstanding.
    @Test func elementCountsNeverOverflow() {
        #expect(Constant.elementCount([1 << 22]) == 1 << 22)
        #expect(Constant.elementCount([1 << 11, 1 << 11]) == 1 << 22)
        #expect(Constant.elementCount([0, 1 << 22]) == 0)
        #expect(Constant.elementCount([]) == 1)
        #expect(Constant.elementCount([1 << 11, 1 << 11, 2]) == nil)
        #expect(Constant.elementCount([0, 1 << 31, 1 << 31, 1 << 31]) == nil)
        #expect(Constant.elementCount([-1]) == nil)
        #expect(Constant.elementCount([Int](repeating: 1, count: 9)) == nil)
    }

    /// A sidecar that is a folder or a FIFO is named for what it is (before: "not a weights file"), and the FIFO
    /// is not waited on.
    @Test func aSidecarThatIsNotAFileSaysWhatItIs() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sidecar-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = Self.hostile.appendingPathComponent("concat-2p32-unused.onnx")
        for (name, kind) in [("dir", "a directory"), ("fifo", "a FIFO (named pipe)")] {
            let model = folder.appendingPathComponent("\(name).onnx")
            try FileManager.default.copyItem(at: source, to: model)
            if name == "dir" {
                try FileManager.default.createDirectory(at: folder.appendingPathComponent("\(name).onnx.json"), withIntermediateDirectories: false)
            } else {
                #expect(mkfifo(model.path + ".json", 0o600) == 0)
            }
            #expect(throws: WeightsFileError(path: model.path + ".json", problem: .cannotOpen("it is \(kind), not a JSON sidecar (a regular file)")))
            {
                _ = try ONNXImport.modelFile(contentsOf: model)
            }
        }
    }
}
#endif
