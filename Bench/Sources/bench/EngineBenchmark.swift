import Tensor

/// The workloads of `bench engine`: matrix products against raw `cblas_sgemm`, layers against their naive
/// references, all in one run, with the engine's speed targets checked from the ratios.
struct EngineBenchmark {
    let plan: TimingPlan
    /// Called with each group of measurements as soon as it is taken.
    let report: ([Measurement]) -> Void

    /// Runs every workload; returns every measurement and the targets checked from them.
    func run() -> (measurements: [Measurement], targets: [Target]) {
        var all: [Measurement] = []
        func record(_ group: [Measurement]) -> [Measurement] {
            report(group)
            all += group
            return group
        }

        var matmulRatios: [String: (tensor: Double, cblas: Double)] = [:]
        for (m, k, n) in [(1, 576, 128), (32, 256, 256), (256, 256, 256), (1024, 1024, 1024)] {
            let name = "matmul \(m)x\(k)x\(n)"
            let group = record(matmul(name: name, m: m, k: k, n: n))
            matmulRatios[name] = (group[0].medianSeconds, group[1].medianSeconds)
        }

        var denseBatch1: (tensor: Double, cblas: Double) = (0, 0)
        for batch in [1, 256] {
            let group = record(dense(batch: batch))
            if batch == 1 { denseBatch1 = (group[0].medianSeconds, group[1].medianSeconds) }
        }

        var convolutionSpeedups: [(String, Double)] = []
        let convolutions: [(String, () -> (layer: any Layer, input: Tensor, naive: (Tensor) -> Tensor))] = [
            ("Conv2D 28x28x1→16 3x3", { conv2d(height: 28, inChannels: 1, outChannels: 16) }),
            ("Conv2D 14x14x16→32 3x3", { conv2d(height: 14, inChannels: 16, outChannels: 32) }),
            ("Conv1D 128x12→32 k5", { conv1d() }),
        ]
        for (title, make) in convolutions {
            for batch in [1, 64] {
                let (layer, sample, naive) = make()
                let input = batchOf(sample, batch: batch)
                let outputCount = Double(elementCount(layer.outputShape(for: input.shape)))
                let macsPerOutput = Double(layer.parameterCount) / Double(layer.outputShape(for: sample.shape).last ?? 1)
                let group = record(
                    measure(
                        "\(title) batch \(batch)", flops: 2 * outputCount * macsPerOutput, plan: plan,
                        [
                            Candidate(impl: "tensor") { layer.forward(input).scalars[0] },
                            Candidate(impl: "naive") { naive(input).scalars[0] },
                        ]))
                if batch == 64 { convolutionSpeedups.append((title, group[1].medianSeconds / group[0].medianSeconds)) }
            }
        }

        var targets: [Target] = []
        for size in ["256x256x256", "1024x1024x1024"] {
            if let times = matmulRatios["matmul \(size)"] {
                targets.append(
                    Target(
                        description: "Tensor matmul \(size) throughput / raw cblas_sgemm", ratio: times.cblas / times.tensor,
                        limit: 0.97, atLeast: true))
            }
        }
        targets.append(
            Target(
                description: "Dense batch 1 (1x576x128) time / raw cblas_sgemm time",
                ratio: denseBatch1.tensor / denseBatch1.cblas, limit: 2, atLeast: false))
        for (title, speedup) in convolutionSpeedups {
            targets.append(Target(description: "\(title) batch 64 speed-up over naive", ratio: speedup, limit: 10, atLeast: true))
        }
        return (all, targets)
    }

    /// `Tensor.matmul` against `cblas_sgemm` on preallocated buffers: `[m, k] · [k, n]`.
    func matmul(name: String, m: Int, k: Int, n: Int) -> [Measurement] {
        let a = random([m, k], seed: 1), b = random([k, n], seed: 2)
        let raw = RawBuffers(a, b, outputCount: m * n)
        defer { raw.deallocate() }
        return measure(
            name, flops: 2 * Double(m * n * k), plan: plan,
            [
                Candidate(impl: "tensor") { Tensor.matmul(a, b).scalars[0] },
                Candidate(impl: "cblas") {
                    BLAS.sgemm(
                        transposeA: false, transposeB: false, m: m, n: n, k: k, alpha: 1,
                        a: raw.a, lda: k, b: raw.b, ldb: n, beta: 0, c: raw.output, ldc: n)
                    return raw.output[0]
                },
            ])
    }

    /// A 576→128 Dense layer against the same product as raw `cblas_sgemm` (`x · Wᵀ`) and the naive loops.
    func dense(batch: Int) -> [Measurement] {
        let layer = Dense(weight: random([128, 576], seed: 3), bias: random([128], seed: 4))
        let input = random([batch, 576], seed: 5)
        let raw = RawBuffers(input, layer.weight, outputCount: batch * 128)
        defer { raw.deallocate() }
        return measure(
            "Dense \(batch)x576→128", flops: 2 * Double(batch * 576 * 128), plan: plan,
            [
                Candidate(impl: "tensor") { layer.forward(input).scalars[0] },
                Candidate(impl: "cblas") {
                    BLAS.sgemm(
                        transposeA: false, transposeB: true, m: batch, n: 128, k: 576, alpha: 1,
                        a: raw.a, lda: 576, b: raw.b, ldb: 576, beta: 0, c: raw.output, ldc: 128)
                    return raw.output[0]
                },
                Candidate(impl: "naive") { Reference.dense(input, weight: layer.weight, bias: layer.bias).scalars[0] },
            ])
    }
}

/// Operands copied once into plain allocations, so the raw-BLAS baseline is the C call and nothing else.
private struct RawBuffers {
    let a: UnsafeMutablePointer<Float>
    let b: UnsafeMutablePointer<Float>
    let output: UnsafeMutablePointer<Float>

    init(_ a: Tensor, _ b: Tensor, outputCount: Int) {
        self.a = .allocate(capacity: a.count)
        self.a.initialize(from: a.scalars, count: a.count)
        self.b = .allocate(capacity: b.count)
        self.b.initialize(from: b.scalars, count: b.count)
        output = .allocate(capacity: outputCount)
        output.initialize(repeating: 0, count: outputCount)
    }

    func deallocate() {
        a.deallocate()
        b.deallocate()
        output.deallocate()
    }
}

private func random(_ shape: [Int], seed: UInt64) -> Tensor {
    var generator = SeededGenerator(seed: seed)
    return Tensor(randomNormal: shape, generator: &generator)
}

private func batchOf(_ sample: Tensor, batch: Int) -> Tensor {
    random([batch] + Array(sample.shape.dropFirst()), seed: 6)
}

private func conv2d(height: Int, inChannels: Int, outChannels: Int) -> (layer: any Layer, input: Tensor, naive: (Tensor) -> Tensor) {
    let layer = Conv2D(weight: random([outChannels, 3, 3, inChannels], seed: 7), bias: random([outChannels], seed: 8), padding: .same)
    let naive = { (x: Tensor) in
        Reference.conv2d(x, weight: layer.weight, bias: layer.bias, stride: (1, 1), padding: .same)
    }
    return (layer, Tensor(zeros: [1, height, height, inChannels]), naive)
}

private func conv1d() -> (layer: any Layer, input: Tensor, naive: (Tensor) -> Tensor) {
    let layer = Conv1D(weight: random([32, 5, 12], seed: 9), bias: random([32], seed: 10), padding: .same)
    let naive = { (x: Tensor) in Reference.conv1d(x, weight: layer.weight, bias: layer.bias, stride: 1, padding: .same) }
    return (layer, Tensor(zeros: [1, 128, 12]), naive)
}
