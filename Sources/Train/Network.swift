import Foundation
import Models
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
            if index == 0 {
                // The input is data: its gradient is never used.
                gradients[index] = layers[index].parameterGradients(dOutput, record: records[index])
                break
            }
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

    /// Parts a training step's batch is cut into when every layer trains sample by sample (see
    /// `TrainableLayer.trainsSampleBySample`): each part runs forward and backward on its own thread and the parts'
    /// gradients are added in part order. The count is fixed, not the machine's core count, so the same data and seed
    /// give the same weights on any machine.
    public static let trainingParts = 2

    /// Batches smaller than this run as one part: below it, handing work to a second thread costs more than it saves.
    public static let smallestSplitBatch = 16

    /// Steps of fewer forward multiply-adds than this (rows × `multiplyAddsPerSample`) run as one part on the calling
    /// thread: a step of the motion network (64 rows, 400k multiply-adds, about 100 µs) would spend more on waking a
    /// second thread twice than it saves. The shape network's step is 19M.
    public static let smallestSplitWork = 1 << 22

    /// The multiply-adds of one sample's forward pass through the dense and convolution layers, for an input of
    /// `sampleShape` (without the batch axis).
    public func multiplyAddsPerSample(sampleShape: [Int]) -> Int {
        var shape = [1] + sampleShape
        var total = 0
        for layer in layers {
            let output = layer.outputShape(for: shape)
            switch layer {
            case let dense as Dense: total += dense.weight.count
            case let conv as Conv2D: total += output.reduce(1, *) / max(conv.weight.shape[0], 1) * conv.weight.count
            case let conv as Conv1D: total += output.reduce(1, *) / max(conv.weight.shape[0], 1) * conv.weight.count
            default: break
            }
            shape = output
        }
        return total
    }

    /// The threads a training step uses by default: one per part, at most the machine's active cores.
    public static var defaultTrainingThreads: Int {
        min(trainingParts, Parallel.defaultThreads)
    }

    /// One training step on a batch: forward in training mode, the loss, backward, one optimizer update, and the
    /// layers' running statistics. Returns the batch loss and the logits (before the update).
    ///
    /// When every layer trains sample by sample, the batch has at least `smallestSplitBatch` rows and the step at
    /// least `smallestSplitWork` multiply-adds, the batch is cut into `trainingParts` parts that run forward and
    /// backward on up to `threads` threads at once (`Parallel`: BLAS runs one thread per product meanwhile); the loss is taken
    /// over the whole batch, and the gradients of the parts are added in part order. Whether to cut depends only on
    /// the network and the batch, never on `threads`, so the result does not depend on `threads`.
    @discardableResult
    public mutating func trainingStep(
        _ inputs: Tensor, labels: [Int], loss: SoftmaxCrossEntropy, optimizer: inout Optimizer,
        generator: inout SeededGenerator, threads: Int = Network.defaultTrainingThreads
    ) -> (loss: Float, logits: Tensor) {
        TrainingMemory.keepFreedMemory()
        let rows = inputs.shape.first ?? 0
        let cut =
            rows >= Network.smallestSplitBatch && layers.allSatisfy(\.trainsSampleBySample)
            && rows * multiplyAddsPerSample(sampleShape: Array(inputs.shape.dropFirst())) >= Network.smallestSplitWork
        let pass =
            cut
            ? partsPass(inputs, labels: labels, loss: loss, generator: generator, threads: threads)
            : wholePass(inputs, labels: labels, loss: loss, generator: &generator)
        var updated = parameters
        optimizer.update(&updated, gradients: pass.gradients)
        parameters = updated
        for records in pass.records { absorb(records) }
        return (pass.loss, pass.logits)
    }

    /// What one step's forward and backward passes give: the batch loss, the logits, the gradients, and the forward
    /// records of each part (one part when the batch is not cut).
    private typealias Pass = (loss: Float, logits: Tensor, gradients: [[Tensor]], records: [[ForwardRecord]])

    private func wholePass(
        _ inputs: Tensor, labels: [Int], loss: SoftmaxCrossEntropy, generator: inout SeededGenerator
    ) -> Pass {
        let (logits, records) = forward(inputs, mode: .training, generator: &generator)
        let (batchLoss, dLogits) = loss(logits: logits, labels: labels)
        return (batchLoss, logits, backward(dLogits, records: records), [records])
    }

    /// The batch in `trainingParts` parts on up to `threads` threads; the loss over the whole batch; the parts'
    /// gradients added in part order.
    private func partsPass(
        _ inputs: Tensor, labels: [Int], loss: SoftmaxCrossEntropy, generator: SeededGenerator, threads: Int
    ) -> Pass {
        let parts = splitRows(inputs.shape[0], into: Network.trainingParts)
        let workers = max(1, min(threads, parts.count))
        let network = self
        let forwards = Parallel.map(count: parts.count, threads: workers) { part in
            // Layers that train sample by sample draw no random numbers: each part gets a copy it leaves unused.
            var unused = generator
            return network.forward(inputs.rows(parts[part]), mode: .training, generator: &unused)
        }
        let logits = Tensor.concatenate(forwards.map(\.logits), axis: 0)
        let (batchLoss, dLogits) = loss(logits: logits, labels: labels)
        let partGradients = Parallel.map(count: parts.count, threads: workers) { part in
            network.backward(dLogits.rows(parts[part]), records: forwards[part].records)
        }
        var gradients = partGradients[0]
        for part in partGradients.dropFirst() {
            for layer in gradients.indices {
                for index in gradients[layer].indices { gradients[layer][index] = gradients[layer][index] + part[layer][index] }
            }
        }
        return (batchLoss, logits, gradients, forwards.map(\.records))
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

/// `count` rows cut into `parts` consecutive ranges whose lengths differ by at most one (the first ones longer).
func splitRows(_ count: Int, into parts: Int) -> [Range<Int>] {
    let parts = max(1, min(parts, count))
    let base = count / parts, extra = count % parts
    var start = 0
    return (0..<parts).map { part in
        let length = base + (part < extra ? 1 : 0)
        defer { start += length }
        return start..<(start + length)
    }
}
