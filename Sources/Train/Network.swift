import Tensor

/// A network being trained: trainable layers from input to logits. `exportedModel()` gives the inference
/// `Sequential` (dropout removed, softmax appended) that weights files store.
public struct Network: Sendable {
    /// The layers, first to last; the last gives logits.
    public var layers: [any TrainableLayer]

    /// Creates the network.
    public init(_ layers: [any TrainableLayer]) { self.layers = layers }

    /// Creates the network from inference layers, every one of which must have a backward pass (all the engine's
    /// layers do); a layer without one is a programmer error.
    public init(converting layers: [any Layer]) {
        self.layers = layers.map { layer in
            guard let trainable = layer as? any TrainableLayer else {
                fatalError("\(type(of: layer)) has no backward pass; it cannot be trained")
            }
            return trainable
        }
    }

    /// Every layer's forward pass, recorded for `backward`.
    public func forward(_ input: Tensor, mode: Mode, generator: inout SeededGenerator) -> (logits: Tensor, records: [ForwardRecord]) {
        var records: [ForwardRecord] = []
        records.reserveCapacity(layers.count)
        var x = input
        for layer in layers {
            let record = layer.trainingForward(x, mode: mode, generator: &generator)
            x = record.output
            records.append(record)
        }
        return (x, records)
    }

    /// The gradients of every layer's parameters (per layer, in `parameters` order), from the loss's gradient with
    /// respect to the logits.
    public func backward(_ dLogits: Tensor, records: [ForwardRecord]) -> [[Tensor]] {
        var gradients = [[Tensor]](repeating: [], count: layers.count)
        var dOutput = dLogits
        for index in layers.indices.reversed() {
            let (dInput, layerGradients) = layers[index].backward(dOutput, record: records[index])
            gradients[index] = layerGradients
            dOutput = dInput
        }
        return gradients
    }

    /// Every layer's parameters.
    public var parameters: [[Tensor]] {
        get { layers.map(\.parameters) }
        set {
            shapePrecondition(newValue.count == layers.count, "\(newValue.count) parameter lists for \(layers.count) layers")
            for index in layers.indices { layers[index].parameters = newValue[index] }
        }
    }

    /// One training step on a batch: forward in training mode, the loss, backward, one optimizer update, and the
    /// layers' running statistics. Returns the batch loss and the logits (before the update).
    @discardableResult
    public mutating func trainingStep(
        _ inputs: Tensor, labels: [Int], loss: SoftmaxCrossEntropy, optimizer: inout Optimizer,
        generator: inout SeededGenerator
    ) -> (loss: Float, logits: Tensor) {
        let (logits, records) = forward(inputs, mode: .training, generator: &generator)
        let (batchLoss, dLogits) = loss(logits: logits, labels: labels)
        var updated = parameters
        optimizer.update(&updated, gradients: backward(dLogits, records: records))
        parameters = updated
        absorb(records)
        return (batchLoss, logits)
    }

    /// Lets each layer take in what its training forward pass measured.
    public mutating func absorb(_ records: [ForwardRecord]) {
        for index in layers.indices { layers[index].absorb(records[index]) }
    }

    /// The logits for `inputs` at inference, `batchSize` rows at a time.
    public func logits(_ inputs: Tensor, batchSize: Int = 256) -> Tensor {
        let count = inputs.shape[0]
        if count == 0 { return Tensor(zeros: [0, outputWidth(for: inputs.shape)]) }
        var generator = SeededGenerator(seed: 0)
        var parts: [Tensor] = []
        for start in stride(from: 0, to: count, by: batchSize) {
            let batch = inputs.rows(start..<min(start + batchSize, count))
            parts.append(forward(batch, mode: .inference, generator: &generator).logits)
        }
        return parts.count == 1 ? parts[0] : Tensor.concatenate(parts, axis: 0)
    }

    private func outputWidth(for inputShape: [Int]) -> Int {
        layers.reduce([1] + inputShape.dropFirst()) { $1.outputShape(for: $0) }.last ?? 0
    }

    /// The inference model: exported layers (dropout removed), then softmax, so it outputs probabilities.
    public func exportedModel() -> Sequential {
        Sequential(layers.compactMap(\.exported) + [Activation(.softmax)])
    }
}

extension Tensor {
    /// Rows `range` of the first axis, as a tensor.
    public func rows(_ range: Range<Int>) -> Tensor {
        shapePrecondition(
            rank >= 1 && range.lowerBound >= 0 && range.upperBound <= shape[0],
            "rows \(range) are outside a tensor of shape \(describeShape(shape))")
        let width = count / Swift.max(shape[0], 1)
        var rowShape = shape
        rowShape[0] = range.count
        return Tensor(shape: rowShape, scalars: Array(scalars[(range.lowerBound * width)..<(range.upperBound * width)]))
    }

    /// The rows at `indices` of the first axis, in that order.
    public func gathering(rows indices: [Int]) -> Tensor {
        let width = count / Swift.max(shape[0], 1)
        var rowShape = shape
        rowShape[0] = indices.count
        var values = [Float]()
        values.reserveCapacity(indices.count * width)
        for index in indices {
            shapePrecondition(index >= 0 && index < shape[0], "row \(index) is outside a tensor of shape \(describeShape(shape))")
            values.append(contentsOf: scalars[(index * width)..<((index + 1) * width)])
        }
        return Tensor(shape: rowShape, scalars: values)
    }
}
