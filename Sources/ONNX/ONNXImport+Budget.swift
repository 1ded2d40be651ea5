#if ONNX
import WeightsFormat

// The import's budget: what converting one file may make, counted before each allocation, so that a small file
// costs little whatever it declares. Three accounts, each checked before anything it counts is made and refused at
// the node that would pass it:
// - computed constants (`Constant`, `Transpose`, `Concat`, ... of constants): `ONNXLimits.maximumFoldedElements`
//   and `maximumFoldedBytes` in all;
// - the layers' values (weights, biases, statistics, constant operands), from each layer's shapes before its
//   tensors are made: `ONNXLimits.maximumLayerValues(fileBytes:)` in all. A value of the chain is free to grow (a
//   pad makes no tensor), but each operation with a constant on it (`Neg`, `Clip`, `Max` of a scalar) holds the
//   chain's whole size, and a grouped, dilated or 3-D convolution its expanded weight: without this account 60
//   `Neg`s in a 1 KB file held 2 GB before the weights reader's size check at the end refused them;
// - the values folds rewrite (a `Mul`, `Add` or `BatchNormalization` folded into the layer before it remakes that
//   layer's weight or bias): `ONNXLimits.maximumFoldedLayerValues` in all.

/// What the import has made so far, against its limits.
struct ImportBudget {
    /// Bytes of the ONNX file converted: they set how many values its layers may hold.
    let fileBytes: Int
    /// Elements and bytes computing constants has allocated.
    var constants = (elements: 0, bytes: 0)
    /// Values the layers made so far hold.
    var layerValues = 0
    /// Values folding scales and shifts into a layer has rewritten.
    var foldedLayerValues = 0

    /// The most values the layers may hold in all.
    var layerValueLimit: Int { ONNXLimits.maximumLayerValues(fileBytes: fileBytes) }
}

extension GraphConverter {
    /// Accounts for a constant of `elements` values of `bytesPerElement` that `node` is about to allocate: an error
    /// naming the node when computing constants would pass `ONNXLimits.maximumFoldedElements` or
    /// `maximumFoldedBytes` in all.
    mutating func spend(_ elements: Int, bytesPerElement: Int, _ node: Onnx_NodeProto) throws(ONNXImportError) {
        // Each term is at most 2^22 · 13 and the totals stay under the limits: no sum or product can overflow.
        let elementsAfter = budget.constants.elements + elements, bytesAfter = budget.constants.bytes + elements * bytesPerElement
        guard elementsAfter <= ONNXLimits.maximumFoldedElements, bytesAfter <= ONNXLimits.maximumFoldedBytes else {
            throw ONNXImportError(
                "node \(Self.describe(node)) would make \(elements) more elements of constants (\(budget.constants.elements) so far): computing constants may make at most \(ONNXLimits.maximumFoldedElements) elements, \(ONNXLimits.maximumFoldedBytes >> 20) MiB, in all"
            )
        }
        budget.constants = (elementsAfter, bytesAfter)
    }

    /// Accounts for folding `node` into layer `index`, before it is done: the layer's bias, and its weight when
    /// `rewritingWeight`; an error naming the node when folds would pass `ONNXLimits.maximumFoldedLayerValues`.
    mutating func spendOnFold(into index: Int, rewritingWeight: Bool, _ node: Onnx_NodeProto) throws(ONNXImportError) {
        let count = [rewritingWeight ? "weight" : nil, "bias"].compactMap { $0 }.reduce(0) { total, role in
            total + (tensors["\(index).\(role)"]?.shape.reduce(1, *) ?? 0)
        }
        // The layer holds at most 2^20 values, and what was rewritten is at most 2^22: no sum can overflow.
        guard budget.foldedLayerValues + count <= ONNXLimits.maximumFoldedLayerValues else {
            throw ONNXImportError(
                "node \(Self.describe(node)): folding it into layer \(index) would rewrite \(count) more values (\(budget.foldedLayerValues) so far); folds may rewrite at most \(ONNXLimits.maximumFoldedLayerValues) in all"
            )
        }
        budget.foldedLayerValues += count
    }

    /// Checks, before `node` makes them, that layers holding `values` more values (a layer's tensors, counted from
    /// its shapes) stay within `ImportBudget.layerValueLimit`: an error naming the node otherwise. `append` counts
    /// what each layer holds; every place that makes a layer's tensors calls this first with at least their count.
    func checkLayerValues(_ values: Int, _ node: Onnx_NodeProto) throws(ONNXImportError) {
        // `values` is at most 2^22 (one tensor, or one value of the chain) and what is held at most 2^20.
        let limit = budget.layerValueLimit
        guard values > limit - budget.layerValues else { return }
        // An unnamed node (exporters often leave them so) is found by the value it makes.
        let which = node.name.isEmpty ? "the \(node.opType) node making \(node.output.first ?? "")" : "node \(Self.describe(node))"
        throw ONNXImportError(
            "\(which): the model's layers would hold \(budget.layerValues + values) values (\(values) for this node); a file of \(budget.fileBytes) bytes may make at most \(limit) (\(ONNXLimits.layerValuesPerFileByte) a byte, at least \(ONNXLimits.minimumLayerValues), at most \(WeightsLimits.maximumParameters))"
        )
    }
}
#endif
