#if ONNX
// What a node says besides its operator: its attributes, checked as they are read, and its constant inputs; and
// the error for a node that is not read.

extension GraphConverter {
    /// The attribute `name` of `node`, if it has one.
    func attribute(_ node: Onnx_NodeProto, _ name: String) -> Onnx_AttributeProto? {
        node.attribute.first { $0.name == name }
    }

    /// An integer attribute within ±2^30.
    func int(_ node: Onnx_NodeProto, _ name: String) throws(ONNXImportError) -> Int? {
        guard let value = attribute(node, name) else { return nil }
        guard value.type == .int || value.type == .undefined, (-(Int64(1) << 30)...(Int64(1) << 30)).contains(value.i) else {
            throw ONNXImportError("node \(Self.describe(node)): attribute \(name) is not a small integer")
        }
        return Int(value.i)
    }

    /// A list attribute of at most twice `ONNXLimits.maximumRank` integers within ±2^30.
    func ints(_ node: Onnx_NodeProto, _ name: String) throws(ONNXImportError) -> [Int]? {
        guard let value = attribute(node, name) else { return nil }
        guard value.type == .ints || value.type == .undefined, value.ints.count <= ONNXLimits.maximumRank * 2,
            value.ints.allSatisfy({ (-(Int64(1) << 30)...(Int64(1) << 30)).contains($0) })
        else {
            throw ONNXImportError("node \(Self.describe(node)): attribute \(name) is not a short list of small integers")
        }
        return value.ints.map { Int($0) }
    }

    /// A finite float attribute.
    func float(_ node: Onnx_NodeProto, _ name: String) throws(ONNXImportError) -> Float? {
        guard let value = attribute(node, name) else { return nil }
        guard value.type == .float || value.type == .undefined, value.f.isFinite else {
            throw ONNXImportError("node \(Self.describe(node)): attribute \(name) is not a finite float")
        }
        return value.f
    }

    /// A string attribute, as UTF-8.
    func string(_ node: Onnx_NodeProto, _ name: String) -> String? {
        attribute(node, name).map { String(decoding: $0.s, as: UTF8.self) }
    }

    /// Input `index` of a chain step's `node`: nil when it has none there, an error when it is not a constant.
    func constantInput(_ index: Int, of node: Onnx_NodeProto) throws(ONNXImportError) -> Constant? {
        guard index < node.input.count, !node.input[index].isEmpty else { return nil }
        guard let value = constants[node.input[index]] else {
            throw ONNXImportError("node \(Self.describe(node)): input \(index + 1) must be a constant")
        }
        return value
    }

    /// The error for `node`, which is not read (`detail` says in which case).
    func unsupported(_ node: Onnx_NodeProto, _ detail: String = "") -> ONNXImportError {
        ONNXImportError(
            "operator \(node.domain.isEmpty ? "" : node.domain + ".")\(node.opType) (node \(node.name.isEmpty ? "(unnamed)" : node.name), opset \(opset))"
                + " is not supported\(detail.isEmpty ? "" : " " + detail)")
    }
}
#endif
