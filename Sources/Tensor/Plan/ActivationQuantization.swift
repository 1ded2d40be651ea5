/// How the input of one 8-bit layer is quantized: `q = clamp(round(x / scale) + zeroPoint, 0, 255)`, one scale
/// for the whole tensor, calibrated when the weights are exported (from the range the input takes on training
/// data) and stored in the weights file beside the layer's int8 weights.
///
/// Non-negative inputs (after a ReLU) use zero point 0 and the whole 0…255 range; inputs of both signs use 128.
public struct ActivationQuantization: Codable, Equatable, Sendable {
    /// The index of the layer whose input this quantizes.
    public var layer: Int
    /// The real value of one step, > 0.
    public var scale: Float
    /// The byte that stands for 0.0, 0…255.
    public var zeroPoint: Int

    /// Creates the quantization of layer `layer`'s input.
    public init(layer: Int, scale: Float, zeroPoint: Int) {
        self.layer = layer
        self.scale = scale
        self.zeroPoint = zeroPoint
    }

    /// The quantization that covers `minimum…maximum`: zero point 0 and `maximum / 255` when nothing is negative,
    /// else zero point 128 and `max(|minimum|, maximum) / 127`. A range of only zeros gets scale 1.
    public init(layer: Int, minimum: Float, maximum: Float) {
        let signed = minimum < 0
        let reach = Swift.max(Swift.abs(minimum), Swift.abs(maximum))
        let scale = reach > 0 && reach.isFinite ? reach / (signed ? 127 : 255) : 1
        self.init(layer: layer, scale: scale, zeroPoint: signed ? 128 : 0)
    }

    /// Why these numbers cannot be used (a scale that is not finite and positive, a zero point outside 0…255),
    /// or `nil`.
    public var problem: String? {
        if !(scale.isFinite && scale > 0 && scale.isNormal) {
            return "activation scale of layer \(layer) is \(scale); it must be finite and positive"
        }
        if !(0...255).contains(zeroPoint) { return "activation zero point of layer \(layer) is \(zeroPoint); it must be 0…255" }
        return nil
    }

    /// `x` quantized: `clamp(round(x / scale) + zeroPoint, 0, 255)` (halves away from zero), as the kernels do it.
    public func quantize(_ x: Float) -> UInt8 {
        UInt8(Swift.min(Swift.max((x * (1 / scale)).rounded() + Float(zeroPoint), 0), 255))
    }
}
