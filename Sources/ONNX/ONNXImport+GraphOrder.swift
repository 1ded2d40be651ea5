#if ONNX
// Which nodes the walk converts, and in which order: only those the graph's output needs, each after the nodes that
// make its inputs; and how errors name a node.

extension GraphConverter {
    /// The nodes that `output` depends on, in their order in the file: the others are never computed or checked
    /// (as ONNX Runtime prunes them), so unused nodes cost nothing whatever they would compute. A value made
    /// twice is an error wherever it is.
    static func nodes(_ nodes: [Onnx_NodeProto], neededFor output: String, sources: Set<String>) throws(ONNXImportError) -> [Onnx_NodeProto] {
        let producer = try producers(nodes, sources: sources)
        var needed = [Bool](repeating: false, count: nodes.count)
        var waiting = producer[output].map { [$0] } ?? []
        while let index = waiting.popLast() {
            guard !needed[index] else { continue }
            needed[index] = true
            for input in nodes[index].input { if let source = producer[input], !needed[source] { waiting.append(source) } }
        }
        return nodes.indices.filter { needed[$0] }.map { nodes[$0] }
    }

    /// The index of the node that makes each value; a value made twice, or made and also an input or initializer
    /// (`sources`), is an error.
    static func producers(_ nodes: [Onnx_NodeProto], sources: Set<String>) throws(ONNXImportError) -> [String: Int] {
        var producer: [String: Int] = [:]
        for (index, node) in nodes.enumerated() {
            for made in node.output where !made.isEmpty {
                guard producer[made] == nil, !sources.contains(made) else {
                    throw ONNXImportError("value \(made) is made twice (node \(describe(node)))")
                }
                producer[made] = index
            }
        }
        return producer
    }

    /// The nodes in an order where every input comes first; a dangling input, a value made twice or a cycle is an
    /// error.
    func topologicalOrder(_ nodes: [Onnx_NodeProto], inputs: Set<String>) throws(ONNXImportError) -> [Onnx_NodeProto] {
        let producer = try Self.producers(nodes, sources: inputs)
        var waiting = [Int](repeating: 0, count: nodes.count)
        var consumers: [Int: [Int]] = [:]
        for (index, node) in nodes.enumerated() {
            for input in node.input where !input.isEmpty {
                if let source = producer[input] {
                    waiting[index] += 1
                    consumers[source, default: []].append(index)
                } else if !inputs.contains(input) {
                    throw ONNXImportError("node \(Self.describe(node)) reads \(input), which no node, input or initializer makes")
                }
            }
        }
        var ready = nodes.indices.filter { waiting[$0] == 0 }
        var order: [Onnx_NodeProto] = []
        order.reserveCapacity(nodes.count)
        var next = 0
        while next < ready.count {
            let index = ready[next]
            next += 1
            order.append(nodes[index])
            for consumer in consumers[index] ?? [] {
                waiting[consumer] -= 1
                if waiting[consumer] == 0 { ready.append(consumer) }
            }
        }
        guard order.count == nodes.count else {
            let stuck = nodes.indices.first { waiting[$0] > 0 }.map { Self.describe(nodes[$0]) } ?? "?"
            throw ONNXImportError("the graph has a cycle: \(nodes.count - order.count) nodes wait on one another, node \(stuck) among them")
        }
        return order
    }

    /// `node` as errors name it: its name (or `(unnamed)`) and its operator.
    static func describe(_ node: Onnx_NodeProto) -> String {
        "\(node.name.isEmpty ? "(unnamed)" : node.name) (\(node.opType))"
    }
}
#endif
