import Models
import Tensor
import WeightsFormat

/// What training needs of each task beyond its names (`RecognitionTask`, in WeightsFormat): its preprocessing header,
/// input, network (small, sized for on-device use) and generated data.
extension RecognitionTask {
    /// The preprocessing header of a model of this task: the rasterizer's or the windowing's parameters.
    package func preprocessing(rasterizer: ShapeRasterizer, windowing: MotionWindowing) -> [String: JSONValue] {
        switch self {
        case .shape: rasterizer.parameters
        case .motion: windowing.parameters
        }
    }

    /// How many `classify generate` makes (`--count`), and of what: drawings, or people (a few sessions each).
    public var generatedCount: (range: ClosedRange<Int>, unit: String) {
        switch self {
        case .shape: (20...1_000_000, "drawings")
        case .motion: (1...10_000, "people")
        }
    }

    /// The input one sample has.
    public func inputShape(rasterizer: ShapeRasterizer = ShapeRasterizer(), windowing: MotionWindowing = MotionWindowing()) -> [Int] {
        switch self {
        case .shape: [rasterizer.size, rasterizer.size, 1]
        case .motion: [windowing.inputSize]
        }
    }

    /// The layers from input to logits for `classes` classes, initialized from `seed`.
    ///
    /// - shape: three 3×3 convolutions (16, 32, 48 channels) with 2×2 max pooling, global average pooling, Dense.
    ///   (12, 24 and 32 until issue 47: the wider one turns fewer real shapes away and takes fewer letters for shapes,
    ///   in about the same int8 time on AVX-512 VNNI, whose int8 kernels sum 16 channels at a time; docs/shapes.md.)
    /// - motion: a perceptron over the window's autocorrelation input (`inputShape`, one vector): Dense to 32, ReLU,
    ///   Dense to the classes. Its position-bound weights read the stride period off the autocorrelation's lags.
    public func layers(classes: Int, seed: UInt64, inputShape: [Int]? = nil) -> [any Layer] {
        var g = SeededGenerator(seed: seed)
        switch self {
        case .shape:
            return [
                Conv2D(inChannels: 1, outChannels: 16, kernel: (3, 3), padding: .same, generator: &g), Activation(.relu),
                Pool2D(.max, size: (2, 2)),
                Conv2D(inChannels: 16, outChannels: 32, kernel: (3, 3), padding: .same, generator: &g), Activation(.relu),
                Pool2D(.max, size: (2, 2)),
                Conv2D(inChannels: 32, outChannels: 48, kernel: (3, 3), padding: .same, generator: &g), Activation(.relu),
                GlobalAveragePool(),
                Dense(inFeatures: 48, outFeatures: classes, generator: &g),
            ]
        case .motion:
            let inputs = (inputShape ?? self.inputShape()).reduce(1, *)
            return [
                Dense(inFeatures: inputs, outFeatures: 32, generator: &g), Activation(.relu),
                Dense(inFeatures: 32, outFeatures: classes, generator: &g),
            ]
        }
    }
}
