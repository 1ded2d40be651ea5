import Foundation
import Tensor
import Testing

@testable import Models
@testable import WeightsFormat

/// Every kind of damage to a weights file is caught, each with its own error.
@Suite("Weights file corruption")
struct CorruptionTests {
    static let valid: [UInt8] = {
        // A small model (a few KB) so that every byte can be flipped quickly.
        var g = SeededGenerator(seed: 3)
        let model = Sequential([
            Conv1D(inChannels: 3, outChannels: 8, kernelSize: 3, padding: .same, generator: &g),
            BatchNorm(channels: 8), Activation(.relu), GlobalAveragePool(),
            Dense(inFeatures: 8, outFeatures: 40, generator: &g), Activation(.relu),
            Dense(inFeatures: 40, outFeatures: 2, generator: &g),
        ])
        // `try!` is fine in a test fixture: this model is valid by construction.
        return try! ModelFile(
            name: "tiny", model: model, labels: ["walking", "running"],
            input: InputSpec(shape: [16, 3], description: "16 steps x 3 channels"), format: .int8
        ).encoded()
    }()

    @Test func theFixtureIsValid() throws {
        #expect(problem(decoding: Self.valid) == nil)
        #expect(try ModelFile(bytes: Self.valid, path: "t").tensors["4.weight"]?.format == .int8)
    }

    @Test func wrongMagic() {
        var bytes = Self.valid
        bytes[1] = UInt8(ascii: "X")
        #expect(problem(decoding: bytes) == .wrongMagic(found: Array(bytes.prefix(8))))
        #expect(problem(decoding: Array("circle,triangle\n1,2\n".utf8)) == .wrongMagic(found: Array("circle,t".utf8)))
    }

    @Test func aVersionOneFileStillReadsWithTheLegacyDecision() throws {
        var bytes = Array(Self.valid.dropLast(4))
        bytes[8] = 1
        bytes += withUnsafeBytes(of: CRC32.checksum(bytes).littleEndian) { Array($0) }
        let file = try ModelFile(bytes: bytes, path: "old")
        #expect(file.version == 1 && file.decision == nil)
        #expect(try ModelFile(bytes: Self.valid, path: "new").version == 2)
    }

    @Test func aDecisionThatDoesNotFitTheLabelsIsRefused() throws {
        var file = try ModelFile(bytes: Self.valid, path: "t")
        file.decision = DecisionRule(rejectLabel: "other")
        #expect(
            problem(decoding: file.encoded())
                == .corruptHeader("the decision's reject class 'other' is not one of the labels [\"walking\", \"running\"]"))
        file.decision = DecisionRule(temperature: 1e6)
        #expect(problem(decoding: file.encoded()) == .corruptHeader("the decision's temperature 1000000.0 is outside 0.05…100"))
    }

    @Test func unknownVersion() {
        var bytes = Self.valid
        bytes[8] = 3
        #expect(problem(decoding: bytes) == .unsupportedVersion(found: 3, supported: 2))
    }

    @Test func badChecksum() {
        var bytes = Self.valid
        bytes[bytes.count - 20] ^= 0x01
        guard case .checksumMismatch = problem(decoding: bytes) else {
            Issue.record("expected a checksum mismatch, got \(String(describing: problem(decoding: bytes)))")
            return
        }
    }

    @Test func truncationAtEveryLength() {
        var seen: [String: Int] = [:]
        for length in 0..<Self.valid.count {
            switch problem(decoding: Array(Self.valid.prefix(length))) {
            case .truncated(let expected, let actual)?:
                #expect(actual == length && expected > length)
                seen["truncated", default: 0] += 1
            case let other:
                Issue.record("length \(length): expected truncated, got \(String(describing: other))")
            }
        }
        #expect(seen["truncated"] == Self.valid.count)
        #expect(Self.valid.count >= 100)
    }

    @Test func extraBytesAtTheEnd() {
        #expect(problem(decoding: Self.valid + [0]) == .trailingBytes(expectedBytes: Self.valid.count, actualBytes: Self.valid.count + 1))
    }

    @Test func sizeThatContradictsTheShape() throws {
        let bytes = try reassemble(Self.valid) { header in
            var tensors = header["tensors"] as? [[String: Any]] ?? []
            tensors[0]["shape"] = [8, 3, 4]  // 0.weight is [8, 3, 3] in f32: 288 bytes, the table says 288
            header["tensors"] = tensors
        }
        #expect(
            problem(decoding: bytes)
                == .tensorSizeMismatch(
                    tensor: "0.weight", shape: [8, 3, 4], format: .f32, expectedBytes: 384, actualBytes: 288))
    }

    @Test func tensorOutsideTheData() throws {
        let bytes = try reassemble(Self.valid) { header in
            var tensors = header["tensors"] as? [[String: Any]] ?? []
            tensors[tensors.count - 1]["offset"] = 1 << 20
            header["tensors"] = tensors
        }
        guard case .tensorOutOfBounds(let name, 1_048_576, _, _)? = problem(decoding: bytes) else {
            Issue.record("got \(String(describing: problem(decoding: bytes)))")
            return
        }
        #expect(name == "6.bias")
    }

    @Test func nanAndInfinityInTensors() throws {
        // 0.bias is f32 at data offset 288 (after 0.weight): make element 2 NaN.
        let nan = try reassemble(
            Self.valid, editHeader: { _ in },
            editData: { data in
                data.replaceSubrange((288 + 8)..<(288 + 12), with: withUnsafeBytes(of: Float.nan.bitPattern.littleEndian, Array.init))
            })
        #expect(problem(decoding: nan) == .invalidValue(tensor: "0.bias", element: 2, reason: "not finite"))
        // An int8 scale of +infinity (the first row scale of 4.weight).
        let file = try ModelFile(bytes: Self.valid, path: "t")
        let offset = try #require(Self.tableOffset(of: "4.weight"))
        let infinite = try reassemble(
            Self.valid, editHeader: { _ in },
            editData: { data in
                data.replaceSubrange(offset..<(offset + 4), with: withUnsafeBytes(of: Float.infinity.bitPattern.littleEndian, Array.init))
            })
        #expect(problem(decoding: infinite) == .invalidValue(tensor: "4.weight", element: 0, reason: "not finite"))
        #expect(file.tensors["4.weight"]?.format == .int8)
    }

    @Test func negativeVariance() throws {
        let offset = try #require(Self.tableOffset(of: "1.variance"))
        let bytes = try reassemble(
            Self.valid, editHeader: { _ in },
            editData: { data in
                data.replaceSubrange((offset + 4)..<(offset + 8), with: withUnsafeBytes(of: Float(-1).bitPattern.littleEndian, Array.init))
            })
        #expect(problem(decoding: bytes) == .invalidValue(tensor: "1.variance", element: 1, reason: "a negative variance"))
    }

    @Test func tensorTheArchitectureLacksOrNeeds() throws {
        var withExtra = try ModelFile(bytes: Self.valid, path: "t")
        withExtra.tensors["3.bias"] = QuantizedTensor(quantizing: Tensor(zeros: [8]), as: .f32)  // pooling has none
        #expect(problem(decoding: withExtra.encoded()) == .unexpectedTensor("3.bias"))
        var withoutBias = try ModelFile(bytes: Self.valid, path: "t")
        withoutBias.tensors["4.bias"] = nil
        #expect(problem(decoding: withoutBias.encoded()) == .missingTensor("4.bias"))
        let duplicate = try reassemble(Self.valid) { header in
            var tensors = header["tensors"] as? [[String: Any]] ?? []
            tensors.append(tensors[1])
            header["tensors"] = tensors
        }
        #expect(problem(decoding: duplicate) == .duplicateTensor("0.bias"))
    }

    @Test func architectureThatDoesNotChain() throws {
        let bytes = try reassemble(Self.valid) { header in
            var architecture = header["architecture"] as? [Any] ?? []
            architecture[4] = ["dense": ["inFeatures": 9, "outFeatures": 40]]
            header["architecture"] = architecture
        }
        #expect(problem(decoding: bytes) == .invalidArchitecture("layer 4 (Dense 9→40) needs input [N, 9], gets [1, 8]"))
        let badKernel = try reassemble(Self.valid) { header in
            var architecture = header["architecture"] as? [Any] ?? []
            architecture[0] = ["conv1D": ["inChannels": 3, "outChannels": 8, "kernelSize": 0, "stride": 1, "padding": "same"]]
            header["architecture"] = architecture
        }
        #expect(problem(decoding: badKernel) == .invalidArchitecture("Conv1D 3→8 k0 stride 1 same: kernelSize must be between 1 and 16777216, got 0"))
        let shapeMismatch = try reassemble(Self.valid) { header in
            var architecture = header["architecture"] as? [Any] ?? []
            architecture[6] = ["dense": ["inFeatures": 40, "outFeatures": 3]]
            header["architecture"] = architecture
        }
        #expect(problem(decoding: shapeMismatch) == .tensorShapeMismatch(tensor: "6.weight", expected: [3, 40], actual: [2, 40]))
    }

    @Test func headerThatIsNotTheDefinedJSON() throws {
        let bytes = try reassemble(Self.valid) { header in header["labels"] = "walking" }
        #expect(problem(decoding: bytes) == .corruptHeader(#"labels: expected an array, found "walking""#))
        let huge = try reassemble(Self.valid) { header in
            var tensors = header["tensors"] as? [[String: Any]] ?? []
            tensors[0]["shape"] = [Int.max, 2]
            header["tensors"] = tensors
        }
        #expect(problem(decoding: huge) == .corruptHeader("tensor 0.weight has an impossible shape [\(Int.max), 2]"))
    }

    /// A checksum-valid file whose header holds only `architecture` over `input`, with no tensors.
    static func hostile(architecture: [Any], input: [Int], labels: [String] = []) throws -> [UInt8] {
        try reassemble(
            valid,
            editHeader: { header in
                header["architecture"] = architecture
                header["input"] = ["shape": input, "description": ""]
                header["labels"] = labels
                header["tensors"] = [Any]()
            }, editData: { $0 = [] })
    }

    @Test func architecturesTooCostlyToRunAreRefusedBeforeAnythingIsBuilt() throws {
        // A 1024×1024 kernel over a 1024×1024 image: a 4 TB unrolled-patch matrix.
        let convolution = try Self.hostile(
            architecture: [
                [
                    "conv2D": [
                        "inChannels": 1, "outChannels": 1, "kernelHeight": 1024, "kernelWidth": 1024, "strideHeight": 1,
                        "strideWidth": 1, "padding": "same",
                    ]
                ]
            ], input: [1024, 1024, 1])
        #expect(
            problem(decoding: convolution)
                == .overLimit(
                    quantity: "layer 0 (Conv2D 1→1 1024x1024 stride 1x1 same): floats it allocates per input",
                    value: 1_099_511_627_776, limit: Double(WeightsLimits.maximumLayerElements)))
        // A 64×64 pooling window at every position of a 1024×1024 image: 2^32 comparisons, no tensors at all.
        let pooling = try Self.hostile(
            architecture: [
                [
                    "pool2D": [
                        "kind": "max", "height": 64, "width": 64, "strideHeight": 1, "strideWidth": 1, "padding": "same",
                    ]
                ]
            ],
            input: [1024, 1024, 1])
        #expect(
            problem(decoding: pooling)
                == .overLimit(
                    quantity: "layers 0…0: multiply-adds and comparisons per input", value: 4_294_967_296,
                    limit: Double(WeightsLimits.maximumOperations)))
    }

    @Test func labelsMustNameEachOutputOnce() throws {
        let flatten: [Any] = [["flatten": [String: Any]()]]
        #expect(problem(decoding: try Self.hostile(architecture: flatten, input: [3], labels: ["a", "b", "c"])) == nil)
        #expect(
            problem(decoding: try Self.hostile(architecture: flatten, input: [3], labels: ["a", "b"]))
                == .invalidArchitecture(
                    "the model's output [3] is not one score for each of its 2 labels"))
        #expect(
            problem(decoding: try Self.hostile(architecture: [], input: [2, 3], labels: ["a", "b", "c"]))
                == .invalidArchitecture(
                    "the model's output [2, 3] is not one score for each of its 3 labels"))
        #expect(
            problem(decoding: try Self.hostile(architecture: flatten, input: [2], labels: ["a", "a"]))
                == .invalidArchitecture(
                    "labels must be distinct: [\"a\", \"a\"]"))
        // A label that is not one printable line (before: printed raw by inspect and classify, a newline breaking
        // the one-answer-a-line output, an escape sequence driving the terminal).
        for label in ["", "a\nb", "\u{1B}[31mred", " padded", String(repeating: "x", count: 65)] {
            let found = problem(decoding: try Self.hostile(architecture: flatten, input: [2], labels: ["ok", label]))
            guard case let .corruptHeader(message) = found else {
                Issue.record("label \(label.debugDescription): \(String(describing: found))")
                continue
            }
            #expect(message.contains("is not one printable line of 1–64 characters") && !message.contains("\u{1B}") && !message.contains("\n"))
        }
    }

    @Test func batchNormNeedsAPositiveEpsilon() throws {
        let bytes = try reassemble(Self.valid) { header in
            var architecture = header["architecture"] as? [Any] ?? []
            architecture[1] = ["batchNorm": ["channels": 8, "epsilon": 0]]
            header["architecture"] = architecture
        }
        #expect(problem(decoding: bytes) == .invalidArchitecture("BatchNorm epsilon must be finite and > 0, got 0.0"))
    }

    @Test func bytesOutsideTensorsMustBeZeroPadding() throws {
        let headerLength = Int(Self.valid[12]) | Int(Self.valid[13]) << 8
        var inPadding = Self.valid
        let paddingStart = 24 + headerLength
        #expect(ModelFile.aligned(paddingStart) > paddingStart, "the fixture has header padding")
        inPadding[paddingStart] = 7
        let crc = CRC32.checksum(inPadding[0..<(inPadding.count - 4)])
        inPadding.replaceSubrange((inPadding.count - 4)..., with: withUnsafeBytes(of: crc.littleEndian, Array.init))
        #expect(problem(decoding: inPadding) == .strayBytes(offset: paddingStart))
        let trailing = try reassemble(Self.valid, editHeader: { _ in }, editData: { $0 += [0, 0, 0, 0] })
        #expect(problem(decoding: trailing) == .strayBytes(offset: trailing.count - 8))
    }

    @Test func aModelWithoutTensorsRoundTrips() throws {
        let file = try ModelFile(
            name: "no-tensors", model: Sequential([Flatten(), Activation(.softmax)]), labels: ["a", "b", "c", "d"],
            input: InputSpec(shape: [2, 2], description: ""))
        #expect(try ModelFile(bytes: file.encoded(), path: "t") == file)
    }

    @Test func nonFiniteMetadataIsRefusedWhenWriting() {
        #expect(throws: WeightsFileError.self) {
            try ModelFile(
                name: "n", model: Sequential([Flatten()]), labels: [], input: InputSpec(shape: [2], description: ""),
                training: TrainingMetadata(validationAccuracy: .nan))
        }
        #expect(throws: WeightsFileError.self) {
            try ModelFile(
                name: "n", model: Sequential([Flatten()]), labels: [], input: InputSpec(shape: [2], description: ""),
                preprocessing: ["size": .number(.infinity)])
        }
    }

    @Test func singleByteFlipsAtEveryPositionAreAllCaught() {
        #expect(Self.valid.count >= 1000)
        var generator = SeededGenerator(seed: 90)
        var caught = 0
        for position in Self.valid.indices {
            var bytes = Self.valid
            bytes[position] ^= UInt8(1 + generator.nextIndex(below: 255))
            if problem(decoding: bytes) != nil { caught += 1 } else { Issue.record("flip at \(position) was accepted") }
        }
        #expect(caught == Self.valid.count)
    }

    @Test func randomTruncationsOfAQuantizedFileAreAllCaught() throws {
        let big = try imageModelFile(format: .lut6).encoded()
        var generator = SeededGenerator(seed: 91)
        for _ in 0..<150 {
            let length = generator.nextIndex(below: big.count)
            #expect(problem(decoding: Array(big.prefix(length))) != nil, "length \(length)")
        }
    }

    /// The data-section offset of a tensor in the fixture.
    static func tableOffset(of name: String) -> Int? {
        let headerLength = Int(valid[12]) | Int(valid[13]) << 8
        guard let header = try? JSONSerialization.jsonObject(with: Data(valid[24..<(24 + headerLength)])) as? [String: Any],
            let tensors = header["tensors"] as? [[String: Any]]
        else { return nil }
        return tensors.first { $0["name"] as? String == name }?["offset"] as? Int
    }

    static var dataBytes: Int {
        let headerLength = Int(valid[12]) | Int(valid[13]) << 8
        return valid.count - 4 - ModelFile.aligned(24 + headerLength)
    }
}
