import Foundation
import Tensor

/// How the learning rate changes with the step.
public enum LearningRateSchedule: Sendable, Equatable {
    /// The base rate throughout.
    case constant
    /// Half a cosine from the base rate down to `minimumFactor` × base over `totalSteps`, then flat.
    case cosine(totalSteps: Int, minimumFactor: Float)
    /// The base rate times `factor` after every `every` steps.
    case step(every: Int, factor: Float)

    /// The rate at `step` (0-based) for a base rate.
    public func rate(base: Float, step: Int) -> Float {
        switch self {
        case .constant:
            return base
        case let .cosine(totalSteps, minimumFactor):
            let progress: Double = min(Double(step) / Double(max(totalSteps, 1)), 1)
            let floor = Double(minimumFactor)
            let wave: Double = 0.5 * (1 + Foundation.cos(Double.pi * progress))
            return base * Float(floor + (1 - floor) * wave)
        case let .step(every, factor):
            return base * pow(factor, Float(step / max(every, 1)))
        }
    }
}

/// The update rule.
public enum OptimizerKind: Sendable, Equatable {
    /// SGD with momentum: `v ← μ·v + g`, `θ ← θ − lr·v` (Nesterov: `θ ← θ − lr·(g + μ·v)`).
    case sgd(momentum: Float, nesterov: Bool)
    /// Adam (Kingma & Ba), bias-corrected moments; weight decay is added to the gradient (L2).
    case adam(beta1: Float, beta2: Float, epsilon: Float)
    /// AdamW (Loshchilov & Hutter): Adam with weight decay applied to the weights directly.
    case adamW(beta1: Float, beta2: Float, epsilon: Float)

    /// Adam with the usual constants.
    public static let adamDefault = OptimizerKind.adam(beta1: 0.9, beta2: 0.999, epsilon: 1e-8)
}

/// Updates a network's parameters from their gradients, keeping the optimizer's moments.
///
/// Weight decay applies to weights (rank ≥ 2), not to biases or normalization parameters. Gradients are clipped
/// to `gradientClipNorm` by their global L2 norm before anything else.
public struct Optimizer: Sendable {
    /// The update rule.
    public var kind: OptimizerKind
    /// The base learning rate.
    public var learningRate: Float
    /// How the rate changes with the step.
    public var schedule: LearningRateSchedule
    /// The decay coefficient (0: none).
    public var weightDecay: Float
    /// The largest global gradient norm let through, or `nil` for no clipping.
    public var gradientClipNorm: Float?
    /// Steps taken so far.
    public private(set) var step = 0

    private var first: [[Tensor]] = []
    private var second: [[Tensor]] = []

    /// Creates an optimizer.
    public init(
        _ kind: OptimizerKind, learningRate: Float, schedule: LearningRateSchedule = .constant, weightDecay: Float = 0,
        gradientClipNorm: Float? = nil
    ) {
        self.kind = kind
        self.learningRate = learningRate
        self.schedule = schedule
        self.weightDecay = weightDecay
        self.gradientClipNorm = gradientClipNorm
    }

    /// The learning rate of the next step.
    public var currentRate: Float { schedule.rate(base: learningRate, step: step) }

    /// Applies one update to `parameters` (per layer, per parameter) from `gradients` of the same shapes.
    public mutating func update(_ parameters: inout [[Tensor]], gradients: [[Tensor]]) {
        shapePrecondition(
            parameters.map { $0.map(\.shape) } == gradients.map { $0.map(\.shape) },
            "optimizer: gradient shapes \(gradients.map { $0.map(\.shape) }) differ from parameter shapes "
                + "\(parameters.map { $0.map(\.shape) })")
        if first.isEmpty {
            first = parameters.map { $0.map { Tensor(zeros: $0.shape) } }
            second = first
        }
        var clip: Float = 1
        if let limit = gradientClipNorm {
            let norm = gradients.joined().reduce(0.0) { total, g in
                total + g.scalars.reduce(0.0) { $0 + Double($1) * Double($1) }
            }.squareRoot()
            if norm > Double(limit) { clip = Float(Double(limit) / norm) }
        }
        let rate = currentRate
        step += 1
        for layer in parameters.indices {
            for index in parameters[layer].indices {
                let decays = parameters[layer][index].rank >= 2 && weightDecay > 0
                update(
                    &parameters[layer][index], gradient: gradients[layer][index] * clip,
                    first: &first[layer][index], second: &second[layer][index], rate: rate, decays: decays)
            }
        }
    }

    private func update(
        _ theta: inout Tensor, gradient: Tensor, first m: inout Tensor, second v: inout Tensor, rate: Float, decays: Bool
    ) {
        switch kind {
        case let .sgd(momentum, nesterov):
            let g = decays ? gradient + theta * weightDecay : gradient
            m = m * momentum + g
            theta = theta - (nesterov ? g + m * momentum : m) * rate
        case let .adam(beta1, beta2, epsilon), let .adamW(beta1, beta2, epsilon):
            let decoupled: Bool
            if case .adamW = kind { decoupled = true } else { decoupled = false }
            let g = decays && !decoupled ? gradient + theta * weightDecay : gradient
            m = m * beta1 + g * (1 - beta1)
            v = v * beta2 + g * g * (1 - beta2)
            let t = Float(step)
            let correction1 = 1 - pow(beta1, t), correction2 = 1 - pow(beta2, t)
            let update = Tensor.broadcasting(m, v) { m, v in (m / correction1) / ((v / correction2).squareRoot() + epsilon) }
            if decays && decoupled { theta = theta * (1 - rate * weightDecay) }
            theta = theta - update * rate
        }
    }
}
