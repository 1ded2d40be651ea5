import Foundation
import Tensor
import Testing

/// Mismatched shapes are programmer errors: the process stops, and its message names both shapes.
@Suite("Shape preconditions")
struct ShapePreconditionTests {
    func standardError(_ result: ExitTest.Result?) -> String {
        String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    }

    @Test func matmulNamesBothShapes() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Tensor.matmul(Tensor(zeros: [2, 3]), Tensor(zeros: [4, 5]))
        }
        let message = standardError(result)
        #expect(message.contains("[2, 3]") && message.contains("[4, 5]"), "stderr: \(message)")
    }

    @Test func denseNamesInputAndWeightShapes() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let layer = Dense(weight: Tensor(zeros: [128, 576]), bias: Tensor(zeros: [128]))
            _ = layer(Tensor(zeros: [1, 575]))
        }
        let message = standardError(result)
        #expect(message.contains("[1, 575]") && message.contains("[128, 576]"), "stderr: \(message)")
    }

    @Test func convolutionNamesInputAndWeightShapes() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let layer = Conv2D(weight: Tensor(zeros: [16, 3, 3, 1]), bias: Tensor(zeros: [16]))
            _ = layer(Tensor(zeros: [1, 28, 28, 3]))
        }
        let message = standardError(result)
        #expect(message.contains("[1, 28, 28, 3]") && message.contains("[16, 3, 3, 1]"), "stderr: \(message)")
    }

    @Test func broadcastingNamesBothShapes() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Tensor(zeros: [4, 3]) + Tensor(zeros: [4])
        }
        let message = standardError(result)
        #expect(message.contains("[4, 3]") && message.contains("[4]"), "stderr: \(message)")
    }

    @Test func reshapeNamesBothShapes() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Tensor(zeros: [2, 3]).reshaped([4, 2])
        }
        let message = standardError(result)
        #expect(message.contains("[2, 3]") && message.contains("[4, 2]"), "stderr: \(message)")
    }
}
