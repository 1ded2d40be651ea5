import Foundation
import Models
import Tensor
import Train

/// `bench train`: training throughput of each task's architecture at batch 64 (forward, backward and an Adam
/// update per step), and the share of that time spent inside BLAS products.
struct TrainBenchmark {
    struct Row {
        let task: RecognitionTask
        let parameters: Int
        let samplesPerSecond: Double
        let blasShare: Double
    }

    let steps: Int

    func run() -> [Row] {
        RecognitionTask.allCases.map { task in
            var generator = SeededGenerator(seed: 31)
            var network = Network(converting: task.layers(classes: task == .shape ? 4 : 2, seed: 32))
            let inputs = Tensor(randomUniform: [64] + task.inputShape(), in: 0..<1, generator: &generator)
            let labels = (0..<64).map { $0 % (task == .shape ? 4 : 2) }
            var optimizer = Optimizer(.adamDefault, learningRate: 1e-3)
            func step() {
                network.trainingStep(inputs, labels: labels, loss: SoftmaxCrossEntropy(), optimizer: &optimizer, generator: &generator)
            }
            for _ in 0..<3 { step() }  // warm-up
            let clock = ContinuousClock()
            let start = clock.now
            let (_, blasSeconds) = BLAS.measuringTime { for _ in 0..<steps { step() } }
            let elapsed = clock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            return Row(task: task, parameters: network.parameters.joined().reduce(0) { $0 + $1.count },
                       samplesPerSecond: Double(64 * steps) / seconds, blasShare: blasSeconds / seconds)
        }
    }
}
