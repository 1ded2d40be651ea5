#if ONNX
import Foundation
import Tensor

// The graph's constants: `Constant`, what an initializer or a node of constants is once read, and the reading of
// initializers, their sizes checked against `ONNXLimits` before anything is allocated.

/// A constant of the graph: an initializer or what constant nodes computed from them.
struct Constant {
    var shape: [Int]
    /// The values (dequantized, for `quantized`).
    var values: [Float]
    /// `INT8` values with one scale per index of `axis` (all of them when `axis` is nil): what our int8 stores.
    var quantized: (values: [Int8], scales: [Float], axis: Int?)?
    /// Integer values, for shapes and zero points.
    var integers: [Int64]?
    /// The element type.
    var type: Onnx_TensorProto.DataType

    /// The elements of `shape`, when its sizes are not negative and multiply to at most
    /// `ONNXLimits.maximumElements` with each counted as at least 1 — so that no product of its sizes, in any
    /// order, overflows (an empty axis does not make `[0, 2^31, 2^31, 2^31]` small); nil otherwise.
    static func elementCount(_ shape: [Int]) -> Int? {
        shape.count <= ONNXLimits.maximumRank ? checkedElementCount(shape, limit: ONNXLimits.maximumElements) : nil
    }

    /// Bytes each element takes in memory: a float, an integer when there are integers, an int8 when quantized.
    var bytesPerElement: Int { 4 + (integers == nil ? 0 : 8) + (quantized == nil ? 0 : 1) }
}

extension GraphConverter {
    /// An initializer's values, its size checked before anything is allocated.
    static func constant(_ tensor: Onnx_TensorProto) throws(ONNXImportError) -> Constant {
        let name = tensor.name
        guard tensor.dataLocation != .external else { throw ONNXImportError("initializer \(name) keeps its data in an external file") }
        guard tensor.dims.count <= ONNXLimits.maximumRank else {
            throw ONNXImportError("initializer \(name) has \(tensor.dims.count) axes, more than \(ONNXLimits.maximumRank)")
        }
        for dimension in tensor.dims where dimension < 0 || dimension > Int64(ONNXLimits.maximumElements) {
            throw ONNXImportError("initializer \(name) has an axis of \(dimension)")
        }
        let shape = tensor.dims.map { Int($0) }
        guard let count = Constant.elementCount(shape) else {
            throw ONNXImportError("initializer \(name) \(shape) has more than \(ONNXLimits.maximumElements) elements")
        }
        guard let type = Onnx_TensorProto.DataType(rawValue: Int(tensor.dataType)) else {
            throw ONNXImportError("initializer \(name) has element type \(tensor.dataType)")
        }
        let stored = StoredValues(tensor: tensor, name: name, shape: shape, count: count)
        switch type {
        case .float:
            return Constant(shape: shape, values: try stored.floats(), type: type)
        case .int8, .uint8:
            let integers = try stored.bytes(type)
            return Constant(shape: shape, values: integers.map(Float.init), integers: integers, type: type)
        case .int64, .int32:
            let integers = try stored.integers(type)
            return Constant(shape: shape, values: integers.map(Float.init), integers: integers, type: type)
        default:
            throw ONNXImportError("initializer \(name) has element type \(type), which is not read (FLOAT, INT8, UINT8, INT32, INT64 are)")
        }
    }
}

/// An initializer's values as its file holds them: little-endian in `raw_data`, or in the field of its element
/// type; either way exactly as many as its shape has elements.
private struct StoredValues {
    let tensor: Onnx_TensorProto
    /// The initializer's name, and its shape and element count (checked against the limits).
    let name: String
    let shape: [Int]
    let count: Int

    /// The raw data, when there is some: `size` bytes per element.
    func raw(_ size: Int) throws(ONNXImportError) -> Data? {
        guard tensor.hasRawData else { return nil }
        guard tensor.rawData.count == size * count else {
            throw ONNXImportError("initializer \(name) \(shape) holds \(tensor.rawData.count) bytes, needs \(size * count)")
        }
        return tensor.rawData
    }

    /// `values` (a typed field), when they are as many as the elements.
    func checked<T>(_ values: [T]) throws(ONNXImportError) -> [T] {
        guard values.count == count else {
            throw ONNXImportError("initializer \(name) \(shape) holds \(values.count) values, needs \(count)")
        }
        return values
    }

    /// The values of a `FLOAT` initializer.
    func floats() throws(ONNXImportError) -> [Float] {
        if let data = try raw(4) {
            return data.withUnsafeBytes { bytes in
                (0..<count).map { Float(bitPattern: bytes.loadUnaligned(fromByteOffset: 4 * $0, as: UInt32.self).littleEndian) }
            }
        }
        return try checked(tensor.floatData)
    }

    /// The values of an `INT8` or `UINT8` initializer (`type`); in `int32_data`, each must be in the type's range.
    func bytes(_ type: Onnx_TensorProto.DataType) throws(ONNXImportError) -> [Int64] {
        if let data = try raw(1) {
            return data.map { type == .int8 ? Int64(Int8(bitPattern: $0)) : Int64($0) }
        }
        let integers = try checked(tensor.int32Data).map(Int64.init)
        let range: ClosedRange<Int64> = type == .int8 ? -128...127 : 0...255
        guard integers.allSatisfy({ range.contains($0) }) else {
            throw ONNXImportError("initializer \(name) holds a value outside \(range) for \(type)")
        }
        return integers
    }

    /// The values of an `INT32` or `INT64` initializer (`type`).
    func integers(_ type: Onnx_TensorProto.DataType) throws(ONNXImportError) -> [Int64] {
        if let data = try raw(type == .int64 ? 8 : 4) {
            return data.withUnsafeBytes { bytes in
                (0..<count).map { index in
                    type == .int64
                        ? Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 8 * index, as: Int64.self))
                        : Int64(Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: 4 * index, as: Int32.self)))
                }
            }
        }
        return try checked(type == .int64 ? tensor.int64Data : tensor.int32Data.map(Int64.init))
    }
}
#endif
