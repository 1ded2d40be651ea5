import Tensor

extension ModelFile {
    /// Why `activationQuantization` cannot be used: an entry for a layer that does not exist, is listed twice, or
    /// has no int8 weight, or numbers out of range.
    var activationQuantizationProblem: String? {
        var seen = Set<Int>()
        for entry in activationQuantization ?? [] {
            if let problem = entry.problem { return problem }
            guard architecture.indices.contains(entry.layer), seen.insert(entry.layer).inserted else {
                return "activation quantization names layer \(entry.layer), which is not one of layers 0…\(architecture.count - 1) or is named twice"
            }
            guard tensors["\(entry.layer).weight"]?.format == .int8 else {
                return "activation quantization names layer \(entry.layer), which has no int8 weight"
            }
        }
        return nil
    }

    /// The model compiled for one sample at a time: int8 layers with an activation quantization run in 8-bit
    /// integers, everything else in float.
    public func makeCompiledModel() -> CompiledModel {
        let quantization = activationQuantization ?? []
        return CompiledModel(makeModel(compact: !quantization.isEmpty), inputShape: input.shape, quantization: quantization)
    }
}
