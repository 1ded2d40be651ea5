import Tensor
import Testing

@Suite("Reductions, concatenation and padding")
struct ReductionAndShapeTests {
    static let shape = [3, 7, 2]

    /// Index arithmetic over a rank-3 tensor, reducing `axis` with `combine` in Double.
    func referenceReduce(_ t: Tensor, axis: Int, _ combine: ([Double]) -> Double) -> Tensor {
        let s = t.shape
        var outShape = s
        outShape.remove(at: axis)
        var out = [Float]()
        for i in 0..<outShape[0] {
            for j in 0..<outShape[1] {
                var line = [Double]()
                for l in 0..<s[axis] {
                    let index = axis == 0 ? [l, i, j] : axis == 1 ? [i, l, j] : [i, j, l]
                    line.append(Double(t[index[0], index[1], index[2]]))
                }
                out.append(Float(combine(line)))
            }
        }
        return Tensor(shape: outShape, scalars: out)
    }

    @Test(arguments: [0, 1, 2, -1])
    func reductionsMatchReference(axis: Int) {
        let t = randomTensor(Self.shape, seed: 20)
        let resolved = axis < 0 ? axis + 3 : axis
        let sum = { (line: [Double]) in line.reduce(0, +) }
        expectClose(t.sum(axis: axis), referenceReduce(t, axis: resolved, sum), relativeTolerance: Tolerance.kernelRelative)
        expectClose(
            t.mean(axis: axis), referenceReduce(t, axis: resolved) { sum($0) / Double($0.count) },
            relativeTolerance: Tolerance.kernelRelative)
        expectClose(
            t.max(axis: axis), referenceReduce(t, axis: resolved) { $0.max() ?? 0 },
            relativeTolerance: Tolerance.elementwiseRelative)
        let argmax = t.argmax(axis: axis)
        let expected = referenceReduce(t, axis: resolved) { line in
            Double(line.firstIndex(of: line.max() ?? 0) ?? -1)
        }
        #expect(argmax == expected.scalars.map { Int($0) })
    }

    @Test func argmaxPrefersTheFirstOfEqualValues() {
        #expect(Tensor([[1, 5, 5], [2, 2, 2]]).argmax(axis: 1) == [1, 0])
    }

    @Test func concatenationAlongEachAxis() {
        let a = Tensor([[1, 2], [3, 4]]), b = Tensor([[5, 6]]), c = Tensor([[7], [8]])
        #expect(Tensor.concatenate([a, b], axis: 0) == Tensor([[1, 2], [3, 4], [5, 6]]))
        #expect(Tensor.concatenate([a, c], axis: 1) == Tensor([[1, 2, 7], [3, 4, 8]]))
        #expect(Tensor.concatenate([c, a, c], axis: -1) == Tensor([[7, 1, 2, 7], [8, 3, 4, 8]]))
        let x = randomTensor([2, 3, 4]), y = randomTensor([2, 1, 4], seed: 1)
        let joined = Tensor.concatenate([x, y], axis: 1)
        #expect(joined.shape == [2, 4, 4])
        #expect(joined[1, 2, 3] == x[1, 2, 3])
        #expect(joined[1, 3, 0] == y[1, 0, 0])
    }

    @Test func paddingPlacesElementsAndFillsTheBorder() {
        let t = Tensor([[1, 2, 3], [4, 5, 6]])
        let p = t.padded([(1, 0), (2, 1)], value: -1)
        #expect(p.shape == [3, 6])
        #expect(
            p.scalars == [
                -1, -1, -1, -1, -1, -1,
                -1, -1, 1, 2, 3, -1,
                -1, -1, 4, 5, 6, -1,
            ])
        let cube = randomTensor([2, 3, 17])
        let padded = cube.padded([(0, 1), (2, 0), (1, 3)])
        #expect(padded.shape == [3, 5, 21])
        for i in 0..<2 {
            for j in 0..<3 {
                for k in 0..<17 where padded[i, j + 2, k + 1] != cube[i, j, k] {
                    Issue.record("padded[\(i), \(j + 2), \(k + 1)] should be cube[\(i), \(j), \(k)]")
                    return
                }
            }
        }
        #expect(padded.sum() == cube.sum() || abs(padded.sum() - cube.sum()) < 1e-4)
    }
}
